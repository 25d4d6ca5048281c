//! Conformance of disruption against Karpenter core v1.14.1's `pkg/controllers/disruption`
//! suites (`consolidation_test.go`, `drift_test.go`, `suite_test.go`), one test per upstream case
//! (its row id in `docs/conformance.md` named on the test), each on the typed test world with the
//! plan asserted exactly: budgets, destinations, topology, parallel commands and drift order.

use jiff::{SignedDuration, Timestamp};
use karpenter_capi::controller::{Action, Config, Plan, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi_testkit::objects::{MachineDeployment, Node, NodeClaim, NodePool, Object, Pod};
use karpenter_capi_testkit::world::{self, World, ago};
use serde_json::{Value, json};

use crate::controller_disruption::{names, tainted_nodes};

mod balanced;
mod candidates;
mod drift;
mod eviction_cost;

const NS: &str = world::NAMESPACE;

/// The plan of `w`, `secs` after [`world::NOW`].
fn plan_at(w: &World, secs: i64) -> Plan {
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    let now: Timestamp = world::NOW.parse().unwrap();
    plan(
        &s,
        now.checked_add(SignedDuration::from_secs(secs)).unwrap(),
        &Config::default(),
    )
}

fn plan_of(w: &World) -> Plan {
    plan_at(w, 0)
}

/// The instance type and pods of each `createNodeClaim`.
pub(crate) fn created(p: &Plan) -> Vec<(&str, Vec<&str>)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim {
                instance_type,
                pods,
                ..
            } => Some((
                instance_type.as_str(),
                pods.iter().map(String::as_str).collect(),
            )),
            _ => None,
        })
        .collect()
}

/// The default pool's budget set to one of `nodes`.
fn budget(w: World, nodes: &str) -> World {
    w.with("NodePool", "default", |p| {
        p["spec"]["disruption"]["budgets"] = json!([{ "nodes": nodes }]);
    })
}

/// The standard world consolidating underutilized nodes, with a budget of `nodes`.
fn underutilized(nodes: &str) -> World {
    budget(World::new("WhenEmptyOrUnderutilized"), nodes)
}

/// A pod `default/<name>` of `cpu` on `node-<i>` with the label `app: web` and `extra` set at
/// JSON pointers.
fn pod_on(name: &str, i: usize, cpu: &str, extra: &[(&str, Value)]) -> Pod {
    let mut p = Pod::new("default", name)
        .uid(&format!("uid-{name}"))
        .label("app", "web")
        .created(&ago(600))
        .cpu(cpu)
        .on(&format!("node-{i}"));
    for (path, v) in extra {
        p = p.set(path, v.clone());
    }
    p
}

/// `w` with the four nodes of the ratio-sort cases (D-BAL-040, D-BAL-052): a c-16 with two pods
/// (0.4/h over 3), a c-4 with one (0.1 over 2), a c-8 with one (0.2 over 2) and a c-16 with three
/// (0.4 over 4), as node-1 to node-4.
fn four_ratios(w: World) -> World {
    w.md(4, 1)
        .md(8, 1)
        .md(16, 2)
        .machine(16, 1, true, true)
        .machine(4, 2, true, true)
        .machine(8, 3, true, true)
        .machine(16, 4, true, true)
        .add(pod_on("p1", 1, "1", &[]))
        .add(pod_on("q1", 1, "1", &[]))
        .add(pod_on("p2", 2, "1", &[]))
        .add(pod_on("p3", 3, "1", &[]))
        .add(pod_on("p4", 4, "1", &[]))
        .add(pod_on("q4", 4, "1", &[]))
        .add(pod_on("r4", 4, "1", &[]))
}

/// Node `node-<i>` tainted `karpenter.sh/disrupted` and its claim `c-<i>` recording a command of
/// ours for `reason` started `started_ago` seconds before NOW.
fn under_way(w: World, i: usize, reason: &str, started_ago: i64) -> World {
    w.with("Node", &format!("node-{i}"), |n| {
        n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    })
    .with("NodeClaim", &format!("c-{i}"), |c| {
        c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(ago(started_ago));
        c["metadata"]["annotations"]["karpenter-capi/disruption-reason"] = json!(reason);
    })
}

/// Claim `c-<i>` initialized `secs` seconds before NOW (its node just came up).
fn initialized_ago(w: World, i: usize, secs: i64) -> World {
    w.with("NodeClaim", &format!("c-{i}"), |c| {
        for cond in c["status"]["conditions"].as_array_mut().unwrap() {
            if cond["type"] == "Initialized" {
                cond["lastTransitionTime"] = json!(ago(secs));
            }
        }
    })
}

/// Claim `c-<i>` drifted as this controller sees it: a NodePool hash of our version that does
/// not match.
fn stale(w: World, i: usize) -> World {
    w.with("NodeClaim", &format!("c-{i}"), |c| {
        c["metadata"]["annotations"]["karpenter.sh/nodepool-hash"] = json!("stale");
        c["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"] =
            json!(karpenter_capi::controller::drift::HASH_VERSION);
    })
}

// ---------------------------------------------------------------------------------------------
// Budgets.

/// D-CONS-020 (`consolidation_test.go` "should only allow 3 nodes to be deleted in multi node
/// consolidation delete"): ten c-32 nodes with a 100m pod each, all of which fit on one node;
/// the best multi-node delete takes nine, but a 30% budget caps it at three, with no replacement.
#[test]
fn a_percentage_budget_caps_a_multi_node_delete() {
    let ten = |budget: &str| {
        let mut w = underutilized(budget).md(32, 10);
        for i in 1..=10 {
            w = w
                .machine(32, i, true, true)
                .add(pod_on(&format!("p{i}"), i, "100m", &[]));
        }
        w
    };
    let p = plan_of(&ten("30%"));
    assert_eq!(
        tainted_nodes(&p),
        vec![
            ("node-1", "Underutilized"),
            ("node-10", "Underutilized"),
            ("node-2", "Underutilized")
        ]
    );
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    // The control: with 100%, nine go (the tenth holds every pod; replacing all ten by one node
    // of their own type is refused, core `filterOutSameType`).
    let p = plan_of(&ten("100%"));
    assert_eq!(tainted_nodes(&p).len(), 9, "{:?}", tainted_nodes(&p));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// D-CONS-021 (`consolidation_test.go` "should only allow 3 nodes to be deleted in single node
/// consolidation delete"): ten c-32 nodes with a 15-CPU pod each (two fit per node), budget
/// 30%: three nodes are disrupted, and while their commands are under way later passes disrupt
/// no more (upstream reconciles five times and three nodes go).
#[test]
fn a_percentage_budget_caps_deletes_across_passes() {
    let mut w = underutilized("30%").md(32, 10);
    for i in 1..=10 {
        w = w
            .machine(32, i, true, true)
            .add(pod_on(&format!("p{i}"), i, "15", &[]));
    }
    let p = plan_of(&w);
    let taken: Vec<&str> = tainted_nodes(&p).iter().map(|(n, _)| *n).collect();
    assert_eq!(taken, vec!["node-1", "node-10", "node-2"]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    // The next passes, those three under way (validated after 15 s, not yet): nothing more.
    let mut next = w.clone();
    for i in [1, 10, 2] {
        next = under_way(next, i, "Underutilized", 5);
    }
    for secs in [0, 5] {
        let p = plan_at(&next, secs);
        assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new(), "+{secs}s");
        assert!(created(&p).is_empty(), "+{secs}s: {:?}", created(&p));
    }
    // Two under way: one more goes.
    let two = under_way(under_way(w, 1, "Underutilized", 5), 10, "Underutilized", 5);
    let p = plan_of(&two);
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Underutilized")]);
}

/// Ten empty c-4 nodes of the default pool, WhenEmpty, budget `nodes`.
fn ten_empty(nodes: &str) -> World {
    let mut w = budget(World::new("WhenEmpty"), nodes).md(4, 10);
    for i in 1..=10 {
        w = w.machine(4, i, true, true);
    }
    w
}

/// D-SUITE-007 (`suite_test.go` BuildDisruptionBudgetMapping "should not consider nodes that
/// are not managed as part of disruption count"): Nodes without a NodeClaim do not raise a pool's
/// total, so a 10% budget over ten claims allows one, however many unmanaged Nodes there are.
#[test]
fn unmanaged_nodes_do_not_raise_a_budget() {
    let p = plan_of(&ten_empty("10%"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    let mut w = ten_empty("10%");
    for i in 1..=10 {
        w = w.add(
            Node::new(&format!("static-{i}"))
                .label("kubernetes.io/arch", "amd64")
                .provider_id(&format!("openstack:///static-{i}"))
                .capacity("4", "8G", "110")
                .ready(),
        );
    }
    let p = plan_of(&w);
    // Counted, the twenty nodes would allow two.
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    assert_eq!(names(&p), vec!["taintNode"]);
}

/// D-SUITE-009 (`suite_test.go` BuildDisruptionBudgetMapping "should not consider nodes that
/// have the terminating status condition as part of disruption count"): a claim whose instance
/// is terminating (`InstanceTerminating` True) is not in its pool's total. Two empty nodes and
/// a third, busy one whose claim reports InstanceTerminating, budget 50%: one node (half of two),
/// not two (half of three, rounded up).
#[test]
fn an_instance_terminating_claim_is_not_counted_in_a_budget() {
    let w = budget(World::new("WhenEmpty"), "50%")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .add(pod_on("busy", 3, "3", &[]));
    // The control: all three counted, two of the empty nodes go.
    let p = plan_of(&w);
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Empty"), ("node-2", "Empty")]
    );
    let terminating = w.with("NodeClaim", "c-3", |c| {
        c["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "InstanceTerminating", "status": "True"}));
    });
    let p = plan_of(&terminating);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
}

/// D-CONS-042, D-CONS-058 (`consolidation_test.go` "can replace nodes if another nodePool returns
/// no instance types", "can delete nodes if another nodePool has no node template"): a second
/// pool with no member MachineDeployment, or whose node class does not exist, does not stop the
/// default pool from replacing or deleting.
#[test]
fn a_pool_without_flavors_or_node_class_does_not_stop_another() {
    // node-1: a c-8 with one 1-CPU pod, c-2 available: replaced by a c-2.
    let replace = underutilized("100%")
        .md(8, 1)
        .md(2, 0)
        .machine(8, 1, true, true)
        .add(pod_on("web", 1, "1", &[]));
    // node-1 and node-2: c-4 with 500m each: node-1 deleted onto node-2.
    let delete = underutilized("100%")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .add(pod_on("a", 1, "500m", &[]))
        .add(pod_on("b", 2, "500m", &[]));
    let empty_pool = NodePool::new("other")
        .requirement("kubernetes.io/arch", "In", &["arm64"])
        .disruption("WhenEmptyOrUnderutilized", "30s", "100%");
    let classless = NodePool::new("classless")
        .set("/spec/template/spec/nodeClassRef/name", "missing")
        .disruption("WhenEmptyOrUnderutilized", "30s", "100%");
    for other in [empty_pool, classless] {
        let p = plan_of(&replace.clone().add(other.clone()));
        assert_eq!(created(&p), vec![("c-2", vec!["default/web"])]);
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
        let p = plan_of(&delete.clone().add(other));
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
        assert!(created(&p).is_empty(), "{:?}", created(&p));
    }
}

// ---------------------------------------------------------------------------------------------
// Destinations.

/// D-CONS-070 (`consolidation_test.go` "should not consolidate pods onto a destination node that
/// is under its consolidateAfter window"; core `scheduler.go` skips existing nodes for which
/// `IsUnderConsolidateAfter` holds when placing a candidate's pods): node-1 (quiet for an hour)
/// could move its pod onto node-2, but node-2 initialized 10 s ago and its pool's
/// consolidateAfter is 30 s: nothing is disrupted; 20 s later node-2's window has closed and
/// node-1 is deleted onto it.
#[test]
fn a_destination_inside_its_consolidate_after_takes_no_pods() {
    let w = initialized_ago(
        underutilized("100%")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .add(pod_on("a", 1, "500m", &[]))
            .add(pod_on("b", 2, "500m", &[])),
        2,
        10,
    );
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    let p = plan_at(&w, 20);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// D-CONS-072 (`consolidation_test.go` "should replace a node with a cheaper one even when
/// consolidateAfter has not expired"): the destination window holds back moves onto existing
/// nodes only; a cheaper replacement is still planned. node-1 (c-8, a 1-CPU pod) next to node-2
/// (c-4 with a 2-CPU pod, initialized 10 s ago, room for node-1's pod): node-1 is replaced by a
/// c-2.
#[test]
fn a_replacement_is_not_held_back_by_a_destination_window() {
    let w = initialized_ago(
        underutilized("100%")
            .md(8, 1)
            .md(4, 1)
            .md(2, 0)
            .machine(8, 1, true, true)
            .machine(4, 2, true, true)
            .add(pod_on("web", 1, "1", &[]))
            .add(pod_on("busy", 2, "2", &[])),
        2,
        10,
    );
    let p = plan_of(&w);
    assert_eq!(created(&p), vec![("c-2", vec!["default/web"])]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    // Once node-2's window closes, deleting node-1 onto it saves more than a c-2 would.
    let p = plan_at(&w, 20);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
}

/// D-CONS-073 (`consolidation_test.go` "should consider initialized nodes before uninitialized
/// nodes"): six c-4 nodes with a 3-CPU pod each, only node-3 initialized, and node-7 (a c-1)
/// with an 800m pod: node-7 is deleted, its pod going to the initialized node-3, not to the
/// uninitialized ones (which would hold the command back).
#[test]
fn pods_are_moved_onto_initialized_nodes_before_uninitialized_ones() {
    let mut w = underutilized("100%").md(4, 6).md(1, 1);
    for i in 1..=6 {
        w = w
            .machine(4, i, true, true)
            .add(pod_on(&format!("big-{i}"), i, "3", &[]));
        if i != 3 {
            w = w.with("NodeClaim", &format!("c-{i}"), |c| {
                c["status"]["conditions"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|k| k["type"] != "Initialized");
            });
        }
    }
    let w = w
        .machine(1, 7, true, true)
        .add(pod_on("small", 7, "800m", &[]));
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-7", "Underutilized")]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert!(
        !p.notes.iter().any(|n| n.contains("room is not ready yet")),
        "{:?}",
        p.notes
    );
}

// ---------------------------------------------------------------------------------------------
// Topology.

/// Required anti-affinity of `app: web` pods on the hostname.
fn hostname_anti_affinity() -> (&'static str, Value) {
    (
        "/spec/affinity",
        json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}),
    )
}

/// D-CONS-097 (`consolidation_test.go` "won't delete node if it would violate pod
/// anti-affinity"): three c-4 nodes (the cheapest flavor) with a 1-CPU pod each that must not
/// share a host with another: no node goes. Without the anti-affinity two of them go.
#[test]
fn no_delete_breaks_a_pods_anti_affinity() {
    let three = |extra: &[(&str, Value)]| {
        let mut w = underutilized("100%").md(4, 3).md(8, 0);
        for i in 1..=3 {
            w = w
                .machine(4, i, true, true)
                .add(pod_on(&format!("web-{i}"), i, "1", extra));
        }
        w
    };
    let p = plan_of(&three(&[hostname_anti_affinity()]));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    let p = plan_of(&three(&[]));
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Underutilized"), ("node-2", "Underutilized")]
    );
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// A member MachineDeployment `name` of `cpu` vCPU in `zone` at `price` per hour, flavor `type_`.
fn zonal_md(name: &str, type_: &str, cpu: u32, zone: &str, price: &str, replicas: i64) -> Value {
    MachineDeployment::new(NS, name)
        .member()
        .capacity(&cpu.to_string(), &format!("{}G", cpu * 2))
        .max_pods("110")
        .node_labels(&format!(
            "kubernetes.io/arch=amd64,node.kubernetes.io/instance-type={type_},topology.kubernetes.io/zone={zone}"
        ))
        .price(price)
        .replicas(replicas)
        .selecting()
        .version("v1.36.1")
        .observed("7", 1)
        .build()
}

/// D-CONS-096 (`consolidation_test.go` "can replace node maintaining zonal topology spread"):
/// three nodes in zones a, b and c with one pod each under a zone spread of skew 1; node-2 in
/// zone b is a dear c-8. Its pod cannot move to zone a or c (skew 2), so it is replaced by the
/// cheap c-4 of zone b, keeping the spread.
#[test]
fn a_replacement_keeps_the_zonal_spread() {
    let spread = (
        "/spec/topologySpreadConstraints",
        json!([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]),
    );
    let mut w = underutilized("100%")
        .add(zonal_md("md-a", "c-4", 4, "a", "0.1", 1))
        .add(zonal_md("md-b8", "c-8", 8, "b", "0.4", 1))
        .add(zonal_md("md-b", "c-4b", 4, "b", "0.1", 0))
        .add(zonal_md("md-c", "c-4c", 4, "c", "0.1", 1));
    for (i, md, cpu, zone, type_) in [
        (1usize, "md-a", "4", "a", "c-4"),
        (2, "md-b8", "8", "b", "c-8"),
        (3, "md-c", "4", "c", "c-4c"),
    ] {
        let pid = format!("openstack:///{i}");
        let node = format!("node-{i}");
        w = w
            .add(
                Node::new(&node)
                    .label("kubernetes.io/arch", "amd64")
                    .label("topology.kubernetes.io/zone", zone)
                    .provider_id(&pid)
                    .capacity(cpu, "8G", "110")
                    .ready(),
            )
            .add(
                karpenter_capi_testkit::objects::Machine::new(NS, &format!("m-{i}"))
                    .deployment(md)
                    .member()
                    .created(&ago(7200))
                    .provider_id(&pid)
                    .node(&node),
            )
            .add(
                NodeClaim::new(&format!("c-{i}"), "default")
                    .created(&ago(3600))
                    .finalizer("karpenter.sh/termination")
                    .instance_type(type_)
                    .machine(&format!("{NS}/m-{i}"))
                    .machine_deployment(&format!("{NS}/{md}"))
                    .initialized(&pid, &node, &ago(3600)),
            )
            .add(pod_on(
                &format!("web-{i}"),
                i,
                "1",
                std::slice::from_ref(&spread),
            ));
    }
    let p = plan_of(&w);
    assert_eq!(created(&p), vec![("c-4b", vec!["default/web-2"])]);
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Underutilized")]);
    // The control: without the spread the pod moves to another zone's node, no replacement.
    let free = w
        .retain(|o| o["kind"] != "Pod")
        .add(pod_on("web-1", 1, "1", &[]));
    let free = free
        .add(pod_on("web-2", 2, "1", &[]))
        .add(pod_on("web-3", 3, "1", &[]));
    let p = plan_of(&free);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert!(
        tainted_nodes(&p).contains(&("node-2", "Underutilized")),
        "{:?}",
        tainted_nodes(&p)
    );
}

// ---------------------------------------------------------------------------------------------
// Parallel commands.

/// D-CONS-098 (`consolidation_test.go` "should not schedule an additional node when receiving
/// pending pods while consolidating"): node-1's consolidation is under way, its replacement (a
/// c-4 claim) not launched yet; a new pending pod that fits the replacement gets no NodeClaim
/// of its own.
#[test]
fn a_pending_pod_uses_the_replacement_in_flight() {
    let replacement = NodeClaim::new("default-r", "default")
        .created(&ago(20))
        .finalizer("karpenter.sh/termination")
        .instance_type("c-4")
        .machine_deployment(&format!("{NS}/md-4"))
        .annotation("karpenter-capi/replaces", "node-1");
    let w = under_way(
        underutilized("100%")
            .md(8, 1)
            .md(4, 0)
            .machine(8, 1, true, true)
            .add(pod_on("web", 1, "1", &[])),
        1,
        "Underutilized",
        20,
    )
    .with("NodeClaim", "c-1", |c| {
        c["metadata"]["annotations"]["karpenter-capi/replacements"] = json!("1");
    })
    .add(replacement);
    let quiet = plan_of(&w);
    let p = plan_of(
        &w.add(
            Pod::new("default", "late")
                .uid("uid-late")
                .label("app", "web")
                .created(&ago(5))
                .cpu("1")
                .pending(),
        ),
    );
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(names(&p), names(&quiet));
}

/// D-CONS-099 (`consolidation_test.go` "should not consolidate a node that is launched for pods
/// on a deleting node"): node-2 (a c-8) came up for five 1-CPU pods of a deleting node; two are
/// bound to it, three still pending. Without them node-2 would be replaced by a c-4; with them
/// it is not consolidated, and no claim is made for them.
#[test]
fn a_node_launched_for_a_deleting_nodes_pods_is_not_consolidated() {
    let w = underutilized("100%")
        .md(8, 2)
        .md(4, 0)
        .machine(8, 1, true, true)
        .machine(8, 2, true, true)
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60));
        })
        .add(pod_on("web-1", 2, "1", &[]))
        .add(pod_on("web-2", 2, "1", &[]));
    // The control: without the pending pods, node-2 is replaced by a c-4.
    let p = plan_of(&w);
    assert_eq!(
        created(&p),
        vec![("c-4", vec!["default/web-1", "default/web-2"])]
    );
    // node-1 is tainted by its own termination, as the deleted claim's drain starts.
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-2", "Underutilized"), ("node-1", "Deleted")]
    );
    let mut w = w;
    for k in 3..=5 {
        w = w.add(
            Pod::new("default", &format!("web-{k}"))
                .uid(&format!("uid-web-{k}"))
                .label("app", "web")
                .created(&ago(60))
                .cpu("1")
                .pending(),
        );
    }
    let p = plan_of(&w);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Deleted")]);
}
