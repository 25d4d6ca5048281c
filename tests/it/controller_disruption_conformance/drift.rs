//! Drift cases of core's `drift_test.go`: each pool's budget, several replacements for one
//! node, and the earliest drifted node first.

use super::*;

/// D-DRIFT-004 (`drift_test.go` "should respect budgets for multiple nodepools"): three pools
/// with a budget of one node, three drifted nodes each (two with a pod), consolidation off.
/// Each pool's budget bounds its own nodes: with pool a's node under way, pool b's goes next;
/// with one under way in every pool, none.
#[test]
fn each_pools_budget_bounds_its_own_drift() {
    let mut w = World::empty()
        .add(karpenter_capi_testkit::objects::NodeClass::new("default").ready())
        .add(
            karpenter_capi_testkit::objects::DaemonSet::new("kube-system", "cilium", "100m")
                .tolerate_all(),
        )
        .md(4, 9);
    for pool in ["a", "b", "c"] {
        w = w.add(
            NodePool::new(pool)
                .requirement("kubernetes.io/arch", "In", &["amd64"])
                .expire_after("Never")
                .disruption("WhenEmpty", "Never", "1"),
        );
    }
    for i in 1..=9 {
        let pool = ["a", "b", "c"][(i - 1) / 3];
        w = stale(w.machine(4, i, true, true), i).with("NodeClaim", &format!("c-{i}"), |c| {
            c["metadata"]["labels"]["karpenter.sh/nodepool"] = json!(pool)
        });
        if i % 3 != 0 {
            w = w.add(pod_on(&format!("web-{i}"), i, "3", &[]));
        }
    }
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-3", "Drifted")]);
    let w = under_way(w, 3, "Drifted", 5);
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-6", "Drifted")]);
    let w = under_way(under_way(w, 6, "Drifted", 5), 9, "Drifted", 5);
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// D-DRIFT-022 (`drift_test.go` "can replace drifted nodes with multiple nodes"): node-1's
/// flavor (c-8) left the pool and the only flavor left, c-2, holds one of its three 1500m pods:
/// three replacements are created, then node-1 is tainted.
#[test]
fn a_drifted_node_may_need_several_replacements() {
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(8, 1)
        .md(2, 0)
        .machine(8, 1, true, true)
        .add(pod_on("web-1", 1, "1500m", &[]))
        .add(pod_on("web-2", 1, "1500m", &[]))
        .add(pod_on("web-3", 1, "1500m", &[]))
        .with("MachineDeployment", "md-8", |m| {
            m["metadata"]["labels"]
                .as_object_mut()
                .unwrap()
                .remove("node.cluster.x-k8s.io/karpenter-member");
        });
    let p = plan_of(&w);
    assert_eq!(
        names(&p),
        vec![
            "createNodeClaim",
            "createNodeClaim",
            "createNodeClaim",
            "taintNode"
        ]
    );
    assert_eq!(
        created(&p),
        vec![
            ("c-2", vec!["default/web-1"]),
            ("c-2", vec!["default/web-2"]),
            ("c-2", vec!["default/web-3"])
        ]
    );
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
}

/// D-DRIFT-023 (`drift_test.go` "should drift one non-empty node at a time, starting with the
/// earliest drift"): two drifted nodes whose pods each need a new node; the one that drifted
/// first (its Drifted condition's transition) goes, alone, whichever claim is older.
#[test]
fn drift_takes_the_earliest_drifted_node_first() {
    let drifted_since = |w: World, i: usize, secs: i64| {
        w.with("NodeClaim", &format!("c-{i}"), |c| {
            c["status"]["conditions"].as_array_mut().unwrap().push(
                json!({"type": "Drifted", "status": "True", "reason": "Drifted", "lastTransitionTime": ago(secs)}),
            );
        })
    };
    let two = |first: i64, second: i64| {
        let w = World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .add(pod_on("web-1", 1, "3", &[]))
            .add(pod_on("web-2", 2, "3", &[]));
        drifted_since(drifted_since(stale(stale(w, 1), 2), 1, first), 2, second)
    };
    let p = plan_of(&two(600, 3600));
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Drifted")]);
    assert_eq!(created(&p), vec![("c-4", vec!["default/web-2"])]);
    let p = plan_of(&two(3600, 600));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    assert_eq!(created(&p), vec![("c-4", vec!["default/web-1"])]);
}
