//! A claim with two Nodes (the same providerID registered twice, e.g. a Node object recreated
//! under a new name while the old one lingers): both Nodes leave with the claim, so provisioning
//! makes room for the pods of each (core `nodeclaim/lifecycle` finalize deletes every Node of
//! the claim, `nodeclaim.AllNodesForNodeClaim`).

use karpenter_capi::controller::{Action, Config, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi_testkit::objects::{Node, Object};
use karpenter_capi_testkit::world::{self, World};
use serde_json::json;

/// Claim `c-1` of `md-4` deleting, on `node-1` and on `node-1b` (same providerID), with a 3-CPU
/// pod on each; the claim's second Node is Ready too.
fn world() -> World {
    World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, true, true)
        .add(
            Node::new("node-1b")
                .label("kubernetes.io/arch", "amd64")
                .provider_id("openstack:///1")
                .capacity("4", "8G", "110")
                .ready(),
        )
        .pod("web-a", Some(1), "3")
        .add(
            karpenter_capi_testkit::objects::Pod::new("default", "web-b")
                .uid("uid-web-b")
                .label("app", "web")
                .created(&world::ago(600))
                .cpu("3")
                .on("node-1b"),
        )
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(world::ago(30));
        })
}

/// Both Nodes' pods are provisioned for; before, only the first Node of the claim counted as
/// leaving and the second's pod was left to be evicted with no room made for it.
#[test]
fn the_pods_of_a_deleting_claims_second_node_are_provisioned_for() {
    let snapshot = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: world().text(),
    }])
    .unwrap();
    let p = plan(&snapshot, world::NOW.parse().unwrap(), &Config::default());
    let mut pods: Vec<String> = p
        .actions
        .iter()
        .chain(&p.pending)
        .filter_map(|a| match a {
            Action::CreateNodeClaim { pods, .. } => Some(pods.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    pods.sort();
    assert_eq!(pods, ["default/web-a", "default/web-b"], "{:?}", p.notes);
    // Both Nodes drain with the claim.
    let tainted: Vec<&str> = p
        .actions
        .iter()
        .chain(&p.pending)
        .filter_map(|a| match a {
            Action::TaintNode { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tainted, ["node-1", "node-1b"]);
}
