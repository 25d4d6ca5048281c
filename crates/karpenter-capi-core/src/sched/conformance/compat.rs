//! Flavors a NodePool's requirements exclude are never bought, whatever the pod asks for, and
//! a pool whose requirements exclude every flavor leaves its pods pending with a reason naming
//! the pool. After core v1.14's scheduling `suite_test.go` (`Instance Type Compatibility`, "requirements
//! filter out all instance types"; core `scheduler.go` `NewScheduler`/`addToNewNodeClaim`), in
//! our own inputs.

use super::{flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

/// A NodePool `default` with these requirement flow maps.
fn pool(requirements: &[&str]) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: [{}]\n",
        requirements.join(", ")
    )
}

/// A small amd64/linux flavor and a big arm64/ios one.
fn flavors() -> String {
    flavor(
        "amd-small",
        2,
        "0.05",
        "kubernetes.io/arch=amd64,kubernetes.io/os=linux",
    ) + &flavor(
        "arm-big",
        16,
        "0.40",
        "kubernetes.io/arch=arm64,kubernetes.io/os=ios",
    )
}

fn requiring(name: &str, key: &str, value: &str) -> String {
    pod(
        name,
        "app: x",
        "500m",
        "",
        &format!(
            "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {key}, operator: In, values: [{value}]}}]}}]}}}}}}"
        ),
    )
}

/// Under `arch In [amd64]`, a pod requiring the arm flavor's type, one requiring its OS and one
/// too big for the amd64 flavor stay pending; a plain pod gets the amd64 flavor.
#[test]
fn a_flavor_the_pool_excludes_is_never_bought() {
    let text = pool(&["{key: kubernetes.io/arch, operator: In, values: [amd64]}"])
        + &flavors()
        + &requiring("by-type", "node.kubernetes.io/instance-type", "arm-big")
        + &requiring("by-os", "kubernetes.io/os", "ios")
        + &pod("too-big", "app: x", "14", "", "")
        + &pod("plain", "app: x", "500m", "", "");
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            unschedulable(&s, &p),
            ["by-os", "by-type", "too-big"],
            "{strategy:?}"
        );
        assert_eq!(
            nodes(&s, &p),
            [("amd-small".to_string(), vec!["plain".to_string()])],
            "{strategy:?}"
        );
    }
}

/// A pool whose instance-type requirement names no flavor: every pod stays pending, each with
/// a reason naming the pool and its requirement.
#[test]
fn a_pool_excluding_every_flavor_says_so_for_each_pod() {
    let text =
        pool(&["{key: node.kubernetes.io/instance-type, operator: In, values: [nonexistent]}"])
            + &flavors()
            + &pod("a", "app: x", "500m", "", "")
            + &pod("b", "app: x", "500m", "", "")
            + &pod("c", "app: x", "500m", "", "");
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(unschedulable(&s, &p), ["a", "b", "c"], "{strategy:?}");
        for (_, reasons) in &p.unschedulable {
            let text: Vec<String> = reasons.iter().map(ToString::to_string).collect();
            assert_eq!(
                text,
                ["amd-small", "arm-big"].map(|t| format!(
                    "default/{t}: NodePool default requires node.kubernetes.io/instance-type In [nonexistent], default/{t} has {t}"
                )),
                "{strategy:?}"
            );
        }
    }
}
