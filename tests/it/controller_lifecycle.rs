//! Registration and initialization in the reconcile core, against Karpenter core v1.14.1
//! `nodeclaim/lifecycle` (`registration.go` syncNode, `initialization.go`): which taints a Node
//! gets on registration, and what holds a registered claim's initialization. Each case is a
//! plan over one cluster state, its actions asserted exactly.

use crate::controller_disruption::{ago, base, names, run, tainted_nodes};

use karpenter_capi::controller::write::Write;
use karpenter_capi::controller::{Action, Plan};
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{Machine, Node, NodeClaim, Object, Pod};
use serde_json::{Value, json};

/// The seed scenario (controller_disruption's `base`: node class Ready, c3-4 at one replica)
/// with node `i` (see [`seed_node`]).
fn with_node(i: usize, initialized_ago: i64) -> World {
    seed_node(World::from_yaml(&base(1, "")), i, initialized_ago)
}

/// `w` with node `i`, as `controller_disruption::node` builds it: a registered c3-4 node
/// `node-<i>` initialized `initialized_ago` seconds ago, with its claim `default-<i>`, Machine
/// `m-<i>` and a cilium pod (tolerating every taint, so never evicted).
pub(crate) fn seed_node(w: World, i: usize, initialized_ago: i64) -> World {
    let pid = format!("openstack:///n{i}");
    let node = format!("node-{i}");
    w.add(
        NodeClaim::new(&format!("default-{i}"), "default")
            .created(&ago(3600))
            .instance_type("c3-4")
            .machine(&format!("capi-ovh/m-{i}"))
            .machine_deployment("capi-ovh/capi-ovh-karpenter-c3-4")
            .initialized(&pid, &node, &ago(initialized_ago)),
    )
    .add(
        Machine::new("capi-ovh", &format!("m-{i}"))
            .created(&ago(3600))
            .deployment("capi-ovh-karpenter-c3-4")
            .member()
            .provider_id(&pid),
    )
    .add(
        Node::new(&node)
            .label("karpenter.sh/nodepool", "default")
            .provider_id(&pid)
            .capacity("2", "4G", "110")
            .ready(),
    )
    .add(
        Pod::new("kube-system", &format!("cilium-{i}"))
            .daemon_set("cilium", "u")
            .on(&node)
            .tolerate_all()
            .cpu("100m")
            .memory("128Mi"),
    )
}

/// The plan of a world at controller_disruption's `NOW`.
fn plan_of(w: &World) -> Plan {
    run(&w.text())
}

/// node-1 with its claim carrying a taint and a startup taint; `registered` and `initialized`
/// set the claim's conditions; `node_labels` and `node_taints` (NoSchedule) are extra on the Node.
fn joining(
    registered: bool,
    initialized: bool,
    node_labels: &[(&str, &str)],
    node_taints: &[&str],
) -> World {
    let status = |b: bool| if b { "True" } else { "Unknown" };
    with_node(1, 600)
        .with("NodeClaim", "default-1", |c| {
            let conditions = &mut c["status"]["conditions"];
            conditions[1]["status"] = json!(status(registered));
            // Not registered yet: its Registered clock started a minute ago (no timeout).
            if !registered {
                conditions[1]["lastTransitionTime"] = json!(ago(60));
            }
            conditions[2]["status"] = json!(status(initialized));
            c["spec"]["taints"] =
                json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
            c["spec"]["startupTaints"] =
                json!([{"key": "example.com/agent", "effect": "NoSchedule"}]);
        })
        .with("Node", "node-1", |n| {
            for (k, v) in node_labels {
                n["metadata"]["labels"][*k] = json!(v);
            }
            if !node_taints.is_empty() {
                n["spec"]["taints"] = node_taints
                    .iter()
                    .map(|k| json!({"key": k, "effect": "NoSchedule"}))
                    .collect();
            }
        })
}

fn registered_taints(p: &Plan) -> Option<Vec<&str>> {
    p.actions.iter().find_map(|a| match a {
        Action::RegisterNode { taints, .. } => Some(taints.iter().map(String::as_str).collect()),
        _ => None,
    })
}

/// Core `registration.go` syncNode: the claim's taints and startup taints are put on the Node
/// unless it is labelled `karpenter.sh/do-not-sync-taints: "true"` (any other value syncs); a
/// registered claim is not registered again, so a startup taint removed is never put back
/// (L-REG-009..015).
#[test]
fn registration_syncs_taints_unless_the_node_opts_out() {
    let both = Some(vec![
        "dedicated=gpu:NoSchedule",
        "example.com/agent:NoSchedule",
    ]);
    let p = plan_of(&joining(false, false, &[], &[]));
    assert_eq!(names(&p), vec!["registerNode"]);
    assert_eq!(registered_taints(&p), both);
    let p = plan_of(&joining(
        false,
        false,
        &[("karpenter.sh/do-not-sync-taints", "false")],
        &[],
    ));
    assert_eq!(registered_taints(&p), both);
    let p = plan_of(&joining(
        false,
        false,
        &[("karpenter.sh/do-not-sync-taints", "true")],
        &[],
    ));
    assert_eq!(registered_taints(&p), Some(vec![]));
    // Registered, its Node Ready without the startup taint (removed by its agent): initialized,
    // and no taint is written back.
    let p = plan_of(&joining(true, false, &[], &[]));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
    assert_eq!(registered_taints(&p), None);
}

/// Core `initialization.go`: only a registered claim initializes, once its Node is Ready with
/// no startup taint of the claim, no ephemeral taint (a `readiness.k8s.io/` one included) and
/// every extended resource the claim requested; initializing labels the Node
/// `karpenter.sh/initialized: "true"` (L-INIT-003, L-INIT-004, L-INIT-006..009, L-INIT-012).
#[test]
fn initialization_waits_for_registration_startup_taints_and_resources() {
    // Launched, not registered, Node Ready: registered this pass, not initialized.
    let p = plan_of(&joining(false, false, &[], &[]));
    assert_eq!(names(&p), vec!["registerNode"]);
    // Registered, Node Ready and clean: initialized, with the label on the Node.
    let p = plan_of(&joining(true, false, &[], &[]));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
    let labels = match &p.actions[0].steps().writes[0] {
        Write::EditNode { add_labels, .. } => add_labels.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        labels.get("karpenter.sh/initialized").map(String::as_str),
        Some("true")
    );
    // A startup taint of the claim still on the Node, or a readiness gate taint: waits.
    for taint in ["example.com/agent", "readiness.k8s.io/network"] {
        let p = plan_of(&joining(true, false, &[], &[taint]));
        assert_eq!(names(&p), Vec::<&str>::new(), "{taint}");
    }
    // A GPU requested and not yet on the Node: waits; once allocatable has it: initialized.
    let gpu = |on_node: bool| {
        joining(true, false, &[], &[])
            .with("NodeClaim", "default-1", |c| {
                c["spec"]["resources"] = json!({"requests": {"nvidia.com/gpu": "1"}})
            })
            .with("Node", "node-1", |n| {
                if on_node {
                    n["status"]["allocatable"]["nvidia.com/gpu"] = json!("1");
                }
            })
    };
    let p = plan_of(&gpu(false));
    assert_eq!(names(&p), Vec::<&str>::new());
    let p = plan_of(&gpu(true));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
}

/// node-1 (empty) whose claim is labelled `example.com/tier: '5'` under a pool whose first
/// requirement is `requirement`: how the pass disrupts it.
fn tier_node_under(requirement: Value) -> Vec<(String, String)> {
    let w = with_node(1, 600)
        .with("NodePool", "default", |p| {
            let list = &mut p["spec"]["template"]["spec"]["requirements"];
            if let Some(list) = list.as_array_mut() {
                list.insert(0, requirement);
            }
        })
        .with("NodeClaim", "default-1", |c| {
            c["metadata"]["labels"]["example.com/tier"] = json!("5")
        });
    tainted_nodes(&plan_of(&w))
        .into_iter()
        .map(|(n, r)| (n.to_string(), r.to_string()))
        .collect()
}

/// Core `nodeclaim/disruption/drift.go` areRequirementsDrifted: a claim is drifted when a pool
/// requirement no longer admits its label value (values reduced, `DoesNotExist`, a bound it
/// misses), not when the pool widens (values added, `Exists`, a bound it meets). The empty node
/// is taken as Drifted when drifted and as Empty otherwise (N-DRIFT-015..020).
#[test]
fn requirement_changes_drift_only_claims_they_exclude() {
    let req = |op: &str, values: Option<&[&str]>| match values {
        Some(v) => json!({"key": "example.com/tier", "operator": op, "values": v}),
        None => json!({"key": "example.com/tier", "operator": op}),
    };
    let vals = |v: &'static [&'static str]| Some(v);
    let drifted = vec![("node-1".to_string(), "Drifted".to_string())];
    let empty = vec![("node-1".to_string(), "Empty".to_string())];
    let cases = [
        ("In [5, 6] (expanded)", req("In", vals(&["5", "6"])), &empty),
        ("In [6] (reduced)", req("In", vals(&["6"])), &drifted),
        ("Exists", req("Exists", None), &empty),
        ("DoesNotExist", req("DoesNotExist", None), &drifted),
        ("Gt 3", req("Gt", vals(&["3"])), &empty),
        ("Lt 9", req("Lt", vals(&["9"])), &empty),
        ("Gt 7", req("Gt", vals(&["7"])), &drifted),
        ("Lt 2", req("Lt", vals(&["2"])), &drifted),
    ];
    for (what, requirement, want) in cases {
        assert_eq!(&tier_node_under(requirement), want, "{what}");
    }
}

/// Core `drift.go` areStaticFieldsDrifted: without a hash on the claim, or without its hash
/// version, there is no static drift; a claim without our version is stamped instead
/// (N-DRIFT-030, N-DRIFT-032).
#[test]
fn a_claim_without_our_hash_is_never_drifted_by_it() {
    let empty = vec![("node-1", "Empty")];
    let versioned = with_node(1, 600).with("NodeClaim", "default-1", |c| {
        c["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"] =
            json!("karpenter-capi-v1")
    });
    let p = plan_of(&versioned);
    assert_eq!(tainted_nodes(&p), empty);
    let p = plan_of(&with_node(1, 600));
    assert_eq!(tainted_nodes(&p), empty);
    assert!(
        p.status.iter().any(|a| matches!(a,
            Action::StampNodeClaimHash { node_claim, hash_version, previous_version, .. }
                if node_claim == "default-1" && hash_version == "karpenter-capi-v1" && previous_version.is_none())),
        "{:?}",
        p.status
    );
}
