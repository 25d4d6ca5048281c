//! Consolidation that keeps up (core `IsConsolidated`): after a search that found nothing, an
//! unchanged cluster is not searched again until 5 minutes pass or something changes; a search a
//! budget held back is searched again next pass; a claim that becomes a candidate re-arms it.

use jiff::{SignedDuration, Timestamp};
use karpenter_capi::controller::{Action, Config, ConsolidationMemo, Plan, plan, plan_with};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::model::snapshot::Snapshot;

use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{Machine, Node, NodeClaim, Object, Pod};
use serde_json::json;

use crate::controller_disruption::{NOW, ago, base};

fn snapshot(w: &World) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: w.text(),
    }])
    .unwrap()
}

fn at(secs: i64) -> Timestamp {
    NOW.parse::<Timestamp>()
        .unwrap()
        .checked_add(SignedDuration::from_secs(secs))
        .unwrap()
}

/// Consolidation of underutilized nodes on, with `budget`; c3-4 nodes (2 vCPU, 0.05/h), each
/// initialized the given seconds ago with one pod of the given CPU.
fn cluster(budget: &str, nodes: &[(i64, &str)]) -> World {
    let mut w = World::from_yaml(&base(nodes.len(), "")).with("NodePool", "default", |p| {
        p["spec"]["disruption"]["consolidationPolicy"] = json!("WhenEmptyOrUnderutilized");
        p["spec"]["disruption"]["budgets"] = json!([{ "nodes": budget }]);
    });
    for (i, (initialized_ago, cpu)) in nodes.iter().enumerate() {
        w = seed_node(w, i, *initialized_ago).add(
            Pod::new("default", &format!("p{i}"))
                .label("app", "web")
                .on(&format!("node-{i}"))
                .cpu(cpu),
        );
    }
    w
}

fn underutilized(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::TaintNode { node, reason, .. } if reason == "Underutilized" => {
                Some(node.as_str())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_unchanged_cluster_is_not_searched_again_until_five_minutes_or_a_change() {
    // Two well-used c3-4 nodes (1.5 vCPU of 2 taken on each): no consolidation.
    let s = snapshot(&cluster("100%", &[(600, "1400m"), (600, "1400m")]));
    let config = Config::default();
    let (first, memo) = plan_with(&s, at(0), &config, &ConsolidationMemo::default());
    assert!(underutilized(&first).is_empty());
    assert_eq!(memo.settled_at("default"), Some(at(0)));
    // A minute later, nothing changed: no search (the memo keeps the first search's time), and
    // the plan is the one a full search makes but for its clock: the forced search is due 5
    // minutes after the one that settled (a fresh process's would be 5 minutes from now).
    let (again, memo) = plan_with(&s, at(60), &config, &memo);
    assert_eq!(memo.settled_at("default"), Some(at(0)));
    let fresh = plan(&s, at(60), &config);
    assert_eq!(
        (again.next_due, fresh.next_due),
        (Some(at(300)), Some(at(360)))
    );
    assert_eq!(
        Plan {
            next_due: None,
            ..again
        },
        Plan {
            next_due: None,
            ..fresh
        }
    );
    // At 5 minutes a search is forced (core `ConsolidationState`).
    let (_, forced) = plan_with(&s, at(299), &config, &memo);
    assert_eq!(forced.settled_at("default"), Some(at(0)));
    let (_, forced) = plan_with(&s, at(300), &config, &memo);
    assert_eq!(forced.settled_at("default"), Some(at(300)));
    // A pod bound to a node is a change (core `MarkUnconsolidated` on a binding): searched.
    let changed = snapshot(
        &cluster("100%", &[(600, "1400m"), (600, "1400m")]).add(
            Pod::new("default", "late")
                .label("app", "web")
                .on("node-0")
                .cpu("100m"),
        ),
    );
    let (_, searched) = plan_with(&changed, at(60), &config, &memo);
    assert_eq!(searched.settled_at("default"), Some(at(60)));
}

#[test]
fn a_claim_becoming_consolidatable_re_arms_the_search() {
    // node-0's pod is pinned to it (a candidate that cannot go); node-1 initialized 10 s ago is
    // no candidate before its consolidateAfter (30 s).
    let pinned = Pod::new("default", "pinned")
        .on("node-0")
        .set(
            "/spec/nodeSelector",
            json!({"kubernetes.io/hostname": "node-0"}),
        )
        .cpu("900m");
    let s = snapshot(&cluster("100%", &[(600, "100m"), (10, "300m")]).add(pinned));
    let config = Config::default();
    let (first, memo) = plan_with(&s, at(0), &config, &ConsolidationMemo::default());
    assert!(underutilized(&first).is_empty(), "{:?}", first.actions);
    assert_eq!(memo.settled_at("default"), Some(at(0)));
    let (_, memo) = plan_with(&s, at(15), &config, &memo);
    assert_eq!(memo.settled_at("default"), Some(at(0)));
    // At 30 s node-1 is Consolidatable: its 300m fit on node-0, so it goes at once, not at the
    // next forced search (a deliberate difference: core waits for a cluster change or 5 min).
    let (p, memo) = plan_with(&s, at(30), &config, &memo);
    assert_eq!(underutilized(&p), vec!["node-1"]);
    assert_eq!(memo.settled_at("default"), None);
}

#[test]
fn a_budget_limited_search_is_searched_again_next_pass() {
    // Four c3-4 nodes with 1.2 vCPU each: no single node can go (its pod fits on no other node,
    // and nothing is cheaper than a c3-4), nor two (a c3-8 costs as much as two c3-4), but three
    // fit on one c3-8 (0.10/h < 0.15/h).
    let four = [
        (600, "1200m"),
        (600, "1200m"),
        (600, "1200m"),
        (600, "1200m"),
    ];
    let config = Config::default();
    let s = snapshot(&cluster("2", &four));
    let (p, memo) = plan_with(&s, at(0), &config, &ConsolidationMemo::default());
    assert!(underutilized(&p).is_empty(), "{:?}", p.actions);
    // The budget held candidates back: not settled, so the next pass searches again.
    assert_eq!(memo.settled_at("default"), None);
    let (p, memo) = plan_with(&s, at(10), &config, &memo);
    assert!(underutilized(&p).is_empty());
    assert_eq!(memo.settled_at("default"), None);
    // What the budget held back is found once it allows it.
    let s = snapshot(&cluster("100%", &four));
    let (p, _) = plan_with(&s, at(20), &config, &memo);
    assert_eq!(underutilized(&p), vec!["node-0", "node-1", "node-2"]);
    assert!(p.actions.iter().any(|a| matches!(a,
        Action::CreateNodeClaim { instance_type, .. } if instance_type == "c3-8")));
}

/// `w` with node `i`, as `controller_disruption::node` builds it: a registered c3-4 node
/// `node-<i>` initialized `initialized_ago` seconds ago, with its claim `default-<i>`, Machine
/// `m-<i>` and a cilium pod (tolerating every taint, so never evicted).
fn seed_node(w: World, i: usize, initialized_ago: i64) -> World {
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
