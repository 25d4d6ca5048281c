//! Disruption across several NodePools, against Karpenter core v1.14.1 (`emptiness_test.go`
//! and `consolidation_test.go` Budgets): each pool's budget bounds its own nodes, whatever the
//! other pools allow. The plan is asserted exactly on clusters of three pools.

use crate::controller_disruption::{base, node, run, tainted_nodes};

/// `text` (a `base(..)`) with a copy of its NodePool named `name`.
fn with_pool(text: &str, name: &str) -> String {
    let start = text
        .find("apiVersion: karpenter.sh/v1\nkind: NodePool\n")
        .unwrap();
    let len = text[start..].find("\n---\n").unwrap();
    let pool =
        text[start..start + len].replacen("  name: default\n", &format!("  name: {name}\n"), 1);
    assert!(pool.contains(&format!("  name: {name}\n")));
    format!("{text}---\n{pool}\n")
}

/// Empty node `i` (its claim and Node) in pool `pool`.
fn empty_in(i: usize, pool: &str) -> String {
    node(i, 600, "", "").replace(
        "karpenter.sh/nodepool: default",
        &format!("karpenter.sh/nodepool: {pool}"),
    )
}

/// Three pools (default, a, b) of three empty nodes each, every pool with `budget`: the nodes
/// the pass takes, per pool.
fn taken_per_pool(budget: &str) -> Vec<(String, usize)> {
    let pools = ["default", "a", "b"];
    let mut text = base(9, &format!("    budgets: [{{nodes: '{budget}'}}]\n"));
    for p in &pools[1..] {
        text = with_pool(&text, p);
    }
    for (k, p) in pools.iter().enumerate() {
        for j in 1..=3 {
            text.push_str(&empty_in(k * 3 + j, p));
        }
    }
    let plan = run(&text);
    let taken = tainted_nodes(&plan);
    assert!(taken.iter().all(|(_, r)| *r == "Empty"), "{taken:?}");
    pools
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let n = taken
                .iter()
                .filter(|(node, _)| {
                    let i: usize = node.trim_start_matches("node-").parse().unwrap();
                    (k * 3 + 1..=k * 3 + 3).contains(&i)
                })
                .count();
            (p.to_string(), n)
        })
        .collect()
}

/// Core `BuildDisruptionBudgetMapping` per NodePool: with 50% budgets, two of each pool's three
/// empty nodes go (half of three rounds up); with 100% all of them; with 0 none; one pool's
/// allowance is never spent on another's nodes (D-EMPTY-005, D-EMPTY-006, D-CONS-022..024).
#[test]
fn each_pools_budget_bounds_its_own_empty_nodes() {
    let per = |n: usize| -> Vec<(String, usize)> {
        ["default", "a", "b"]
            .iter()
            .map(|p| (p.to_string(), n))
            .collect()
    };
    assert_eq!(taken_per_pool("50%"), per(2));
    assert_eq!(taken_per_pool("100%"), per(3));
    assert_eq!(taken_per_pool("0"), per(0));
    assert_eq!(taken_per_pool("1"), per(1));
}

/// Core consolidation (`consolidation_test.go` Delete): a NodePool whose disruption settings do
/// not parse is skipped with a warning, and the other pools still consolidate; a node of a pool
/// whose consolidateAfter is Never is never taken itself but is room for another pool's pods
/// (D-CONS-071, D-CONS-076).
#[test]
fn a_broken_or_frozen_pool_does_not_stop_the_others() {
    use crate::controller_disruption::sized_pod;
    let budget = "    budgets: [{nodes: '100%'}]\n";
    // "broken": a budget that does not parse. Its empty node stays, default's goes.
    let text = with_pool(&base(2, budget), "broken");
    let start = text.find("  name: broken\n").unwrap();
    let text = format!(
        "{}{}",
        &text[..start],
        text[start..].replacen(
            "budgets: [{nodes: '100%'}]",
            "budgets: [{nodes: 'lots'}]",
            1
        )
    );
    let p = run(&format!(
        "{text}{}{}",
        node(1, 600, "", ""),
        empty_in(2, "broken")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    assert!(
        p.actions.iter().any(|a| matches!(a,
            karpenter_capi::controller::Action::WarnNodePool { node_pool, .. } if node_pool == "broken")),
        "{:?}",
        p.actions
    );
    // "frozen" (consolidateAfter: Never) holds a 4-CPU node with room: default's underutilized
    // node-1 (a 1500m pod) is deleted onto it; the frozen node itself, empty, is never taken.
    let consolidating = base(2, budget).replacen(
        "    consolidationPolicy: WhenEmpty\n",
        "    consolidationPolicy: WhenEmptyOrUnderutilized\n",
        1,
    );
    let text = with_pool(&consolidating, "frozen");
    let start = text.find("  name: frozen\n").unwrap();
    let text = format!(
        "{}{}",
        &text[..start],
        text[start..].replacen("consolidateAfter: 30s", "consolidateAfter: Never", 1)
    );
    let roomy = empty_in(2, "frozen").replace(
        "capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}",
        "capacity: {cpu: '4', memory: 8G, pods: '110'}, allocatable: {cpu: '4', memory: 8G, pods: '110'}",
    );
    let one = node(1, 600, &sized_pod("a", 1, "", "1500m"), "");
    let p = run(&format!("{text}{one}{roomy}"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert!(
        !p.actions.iter().any(|a| a.name() == "createNodeClaim"),
        "{:?}",
        p.actions.iter().map(|a| a.name()).collect::<Vec<_>>()
    );
}
