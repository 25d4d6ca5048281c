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
