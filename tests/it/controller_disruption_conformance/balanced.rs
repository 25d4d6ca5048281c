//! The `Balanced` consolidation policy on plans (Karpenter v1.14.1
//! `balanced_integration_test.go`): a `Balanced` pool consolidates underutilized nodes, but only
//! moves whose share of the pool's cost saved is at least half their share of its disruption;
//! budgets, emptiness first and the savings-ratio order as for any pool.

use super::*;

/// The standard world with its pool `Balanced`, budget `nodes`.
fn balanced(nodes: &str) -> World {
    budget(World::new("Balanced"), nodes)
}

/// A c-32 (0.8/h) with one 500m pod, and the c-2 flavor (0.05/h) it could be replaced by.
fn oversized(w: World) -> World {
    w.md(32, 1)
        .md(2, 0)
        .machine(32, 1, true, true)
        .add(pod_on("web", 1, "500m", &[]))
}

/// D-BAL-045 (`balanced_integration_test.go` Single-Node "should approve replacing an
/// oversized node") and D-BAL-016, D-BAL-037 (a `Balanced` pool's underutilized nodes are
/// consolidation candidates, not left alone as under `WhenEmpty`): the c-32 is replaced by a
/// c-2, saving 94% of the pool for all of its disruption (score 0.94, over 0.5).
#[test]
fn an_oversized_node_of_a_balanced_pool_is_replaced() {
    let p = plan_of(&oversized(balanced("100%")));
    assert_eq!(created(&p), vec![("c-2", vec!["default/web"])]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    // Under WhenEmpty, nothing.
    let p = plan_of(&oversized(budget(World::new("WhenEmpty"), "100%")));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
}

/// A c-8 holding seven 500m pods (a c-4 holds them: saves 0.1/h) and a c-8 full with one
/// 7-CPU pod (nothing to gain), with the c-4 flavor, under `policy`.
fn marginal(policy: &str) -> World {
    let mut w = budget(World::new(policy), "100%")
        .md(8, 2)
        .md(4, 0)
        .machine(8, 1, true, true)
        .machine(8, 2, true, true)
        .add(pod_on("big", 2, "7", &[]));
    for k in 1..=7 {
        w = w.add(pod_on(&format!("web{k}"), 1, "500m", &[]));
    }
    w
}

/// D-BAL-046 (`balanced_integration_test.go` Single-Node "should reject replacing a
/// well-packed node"): replacing node-1 by a c-4 saves a quarter of the pool's cost (0.1 of
/// 0.4) for 80% of its disruption (8 of 10): score 0.31, under 0.5, so nothing happens. The
/// same cluster under WhenEmptyOrUnderutilized makes that replacement.
#[test]
fn a_marginal_replacement_in_a_balanced_pool_is_refused() {
    let p = plan_of(&marginal("Balanced"));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    let p = plan_of(&marginal("WhenEmptyOrUnderutilized"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert_eq!(created(&p).len(), 1, "{:?}", created(&p));
    assert_eq!(created(&p)[0].0, "c-4");
}

/// Three c-32 with one 1-CPU pod each, and the c-4 flavor.
fn three_underused(w: World) -> World {
    let mut w = w.md(32, 3).md(4, 0);
    for i in 1..=3 {
        w = w
            .machine(32, i, true, true)
            .add(pod_on(&format!("p{i}"), i, "1", &[]));
    }
    w
}

/// D-BAL-047 (`balanced_integration_test.go` Multi-Node "should approve consolidating multiple
/// underutilized nodes"): the three c-32 go together for one c-4 (saving 2.3 of 2.4 for all
/// of the pool's disruption: score 0.96).
#[test]
fn underused_nodes_of_a_balanced_pool_go_together() {
    let p = plan_of(&three_underused(balanced("100%")));
    assert_eq!(
        tainted_nodes(&p),
        vec![
            ("node-1", "Underutilized"),
            ("node-2", "Underutilized"),
            ("node-3", "Underutilized")
        ]
    );
    assert_eq!(
        created(&p),
        vec![("c-4", vec!["default/p1", "default/p2", "default/p3"])]
    );
}

/// D-BAL-048 (`balanced_integration_test.go` Budgets "should block disruption when budget is
/// 0%"): the oversized node of D-BAL-045 stays under a 0% budget.
#[test]
fn a_zero_budget_blocks_balanced_consolidation() {
    let p = plan_of(&oversized(balanced("0%")));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
}

/// D-BAL-049 (`balanced_integration_test.go` Priority Ordering "should consolidate empty nodes
/// before non-empty nodes when budget is limited"): an empty c-32 and the oversized one, budget
/// one node: the empty one goes.
#[test]
fn an_empty_node_goes_before_an_underused_one_under_a_tight_budget() {
    let w = oversized(balanced("1"))
        .with("MachineDeployment", "md-32", |m| {
            m["spec"]["replicas"] = json!(2);
        })
        .machine(32, 2, true, true);
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Empty")]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// D-BAL-050 (`balanced_integration_test.go` Decision and Savings "should choose delete when
/// pods fit on existing nodes"): a c-8 with one 1-CPU pod next to a c-8 with six (room for
/// it): the first is deleted, no replacement (half the pool's cost for 2 of 9 of its
/// disruption).
#[test]
fn a_balanced_delete_when_the_pods_fit() {
    let mut w = balanced("100%")
        .md(8, 2)
        .machine(8, 1, true, true)
        .machine(8, 2, true, true)
        .add(pod_on("a", 1, "1", &[]));
    for k in 1..=6 {
        w = w.add(pod_on(&format!("b{k}"), 2, "1", &[]));
    }
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
}

/// D-BAL-051 (`balanced_integration_test.go` Decision and Savings "should choose replace when
/// a cheaper node is needed"): a lone c-16 with three 1-CPU pods has nowhere to send them: it
/// is replaced by a c-4 (0.3 of 0.4 saved for all the disruption: 0.75).
#[test]
fn a_balanced_replace_when_a_cheaper_node_is_needed() {
    let w = balanced("100%")
        .md(16, 1)
        .md(4, 0)
        .machine(16, 1, true, true)
        .add(pod_on("p1", 1, "1", &[]))
        .add(pod_on("p2", 1, "1", &[]))
        .add(pod_on("p3", 1, "1", &[]));
    let p = plan_of(&w);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert_eq!(
        created(&p),
        vec![("c-4", vec!["default/p1", "default/p2", "default/p3"])]
    );
}

/// D-BAL-052 (`balanced_integration_test.go` Ratio Sort in Multi-Node "should pick highest
/// ratio candidates first"): a c-16 with two pods (0.4 over 3), a c-4 with one (0.1 over 2), a
/// c-8 with one (0.2 over 2), a c-16 with three (0.4 over 4), budget two: the multi-node delete
/// takes the two best ratios, node-1 and node-3 (0.6 of 1.1 saved for 5 of 11: 1.2).
#[test]
fn balanced_multi_node_takes_the_best_ratios() {
    let p = plan_of(&four_ratios(balanced("2")));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Underutilized"), ("node-3", "Underutilized")]
    );
}

/// D-BAL-053 (`balanced_integration_test.go` Mixed-Policy NodePools "should apply balanced
/// scoring only to Balanced NodePools"): the marginal cluster of D-BAL-046 twice, nodes 1-2 in
/// the WhenEmptyOrUnderutilized pool `default` and nodes 3-4 in the Balanced pool `other`, each
/// pool's pods pinned to it: `default` replaces its node-1 by a c-4, `other` keeps its node-3
/// (score 0.31). With `other` WhenEmptyOrUnderutilized too, both are replaced.
#[test]
fn only_the_balanced_pool_is_gated() {
    let p = plan_of(&two_pools("Balanced"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert_eq!(created(&p).len(), 1, "{:?}", created(&p));
    assert_eq!(created(&p)[0].0, "c-4");
    assert!(
        created(&p)[0].1.iter().all(|pod| pod.ends_with("-default")),
        "{:?}",
        created(&p)
    );
    let p = plan_of(&two_pools("WhenEmptyOrUnderutilized"));
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Underutilized"), ("node-3", "Underutilized")]
    );
    assert_eq!(created(&p).len(), 2, "{:?}", created(&p));
}

/// The two-pool cluster of [`only_the_balanced_pool_is_gated`], pool `other` under `policy`.
fn two_pools(policy: &str) -> World {
    let pin = |pool: &str| {
        (
            "/spec/nodeSelector",
            json!({ "karpenter.sh/nodepool": pool }),
        )
    };
    let mut w = budget(World::new("WhenEmptyOrUnderutilized"), "100%")
        .add(
            NodePool::new("other")
                .requirement("kubernetes.io/arch", "In", &["amd64"])
                .expire_after("Never")
                .disruption(policy, "30s", "100%"),
        )
        .md(8, 4)
        .md(4, 0);
    for (first, pool) in [(1, "default"), (3, "other")] {
        for i in [first, first + 1] {
            w = w
                .machine(8, i, true, true)
                .with("NodeClaim", &format!("c-{i}"), |c| {
                    c["metadata"]["labels"]["karpenter.sh/nodepool"] = json!(pool);
                })
                .with("Node", &format!("node-{i}"), |n| {
                    n["metadata"]["labels"]["karpenter.sh/nodepool"] = json!(pool);
                });
        }
        w = w.add(pod_on(&format!("big-{pool}"), first + 1, "7", &[pin(pool)]));
        for k in 1..=7 {
            w = w.add(pod_on(
                &format!("web{k}-{pool}"),
                first,
                "500m",
                &[pin(pool)],
            ));
        }
    }
    w
}

/// `init --consolidation-policy Balanced` writes a Balanced NodePool (the bundled CRD is
/// Karpenter v1.14.1's, whose enum has it); a policy Karpenter does not know is refused.
#[test]
fn init_offers_the_balanced_policy() {
    use karpenter_capi::bundle::render::{Templates, render};
    let mut input = crate::support::input(
        karpenter_capi::bundle::CapiVersion::V1beta2,
        "openstack",
        &crate::support::OVH_FLAVORS,
    );
    input.consolidation_policy = "Balanced".to_string();
    let b = render(&input, &Templates::default()).unwrap();
    let np = b.workload.iter().find(|d| d.kind == "NodePool").unwrap();
    assert_eq!(
        np.value["spec"]["disruption"]["consolidationPolicy"],
        json!("Balanced")
    );
    input.consolidation_policy = "Sometimes".to_string();
    let e = render(&input, &Templates::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("\"Sometimes\" is not WhenEmpty, WhenEmptyOrUnderutilized or Balanced"),
        "{e}"
    );
}
