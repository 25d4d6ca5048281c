//! Rule 6: `cost` places affinity groups whole: a pod with required pod affinity is tried after
//! its targets, offered every node opened so far (the optimizer's too), its target's node keeps
//! room for it, and pods that fit nowhere are retried until a round places none (core
//! `scheduling/queue.go`), at every batch size.

use super::{flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::Cost;

fn follower(name: &str, group: &str, cpu: &str) -> String {
    pod(
        name,
        &format!("follow: {group}"),
        cpu,
        "",
        &format!(
            "\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{lead: {group}}}}}\n        topologyKey: kubernetes.io/hostname"
        ),
    )
}

fn catalog() -> String {
    flavor("c1", 1, "0.03", "") + &flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "")
}

#[test]
fn a_leader_and_its_followers_share_the_cheapest_node_that_holds_them_all() {
    // (what, leader cpu, follower cpu, followers, the node)
    let cases = [
        ("followers smaller than the leader", "1", "250m", 3, "c2"),
        (
            "a follower larger than the leader",
            "250m",
            "1500m",
            1,
            "c2",
        ),
        ("a group needing a c4", "1", "900m", 3, "c4"),
    ];
    for (what, lead_cpu, follow_cpu, count, want) in cases {
        let mut text = catalog() + &pod("lead", "lead: g", lead_cpu, "", "");
        let mut names = vec!["lead".to_string()];
        for i in 0..count {
            text += &follower(&format!("f{i}"), "g", follow_cpu);
            names.push(format!("f{i}"));
        }
        names.sort();
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert_eq!(
            nodes(&s, &p),
            vec![(want.to_string(), names.clone())],
            "{what}"
        );
    }
}

/// Above the greedy cross-check's 400 pods the optimizer packs the plain pods; every group is
/// still placed whole.
#[test]
fn groups_are_placed_whole_beside_a_large_optimized_batch() {
    let mut text = catalog();
    for i in 0..420 {
        text += &pod(&format!("plain-{i}"), "app: plain", "300m", "", "");
    }
    for g in 0..6 {
        text += &pod(&format!("lead-{g}"), &format!("lead: g{g}"), "1", "", "");
        for i in 0..3 {
            text += &follower(&format!("f{g}-{i}"), &format!("g{g}"), "250m");
        }
    }
    let s = snap(&text);
    {
        let strategy = Cost;
        let p = plan(&s, strategy);
        assert!(unschedulable(&s, &p).is_empty(), "{strategy:?}");
        for (_, pods) in nodes(&s, &p) {
            for f in pods.iter().filter(|n| n.starts_with('f')) {
                let group = &f[1..f.find('-').unwrap()];
                assert!(
                    pods.contains(&format!("lead-{group}")),
                    "{strategy:?}: {f} without its leader: {pods:?}"
                );
            }
        }
    }
}
