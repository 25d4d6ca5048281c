//! Deprecated beta label keys, after core v1.14's scheduling `suite_test.go` (`Instance Type
//! Compatibility`): a requirement on `beta.kubernetes.io/instance-type`,
//! `failure-domain.beta.kubernetes.io/zone` and the other aliases of core's `NormalizedLabels`
//! is read as one on the stable key, in pods, NodePools and volumes, through every strategy.

use super::{ALL, flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// Two 2-core flavors in zones z1 and z2 and a 4-core one in z2.
fn flavors() -> String {
    flavor("small-z1", 2, "0.05", &format!("{ZONE}=z1"))
        + &flavor("small-z2", 2, "0.06", &format!("{ZONE}=z2"))
        + &flavor("big-z2", 4, "0.10", &format!("{ZONE}=z2"))
}

/// One pod selecting `big-z2` by the stable instance-type key and one selecting `small-z2` by
/// the beta key get two nodes of those flavors (S-SCHED-093), in every strategy; a pod
/// selecting zone z2 by `failure-domain.beta.kubernetes.io/zone` gets a z2 flavor (`cost`: the
/// cheapest).
#[test]
fn beta_instance_type_and_zone_selectors_read_as_the_stable_keys() {
    let text = POOL.to_string()
        + &flavors()
        + &pod(
            "stable",
            "app: a",
            "500m",
            "",
            "\n  nodeSelector: {node.kubernetes.io/instance-type: big-z2}",
        )
        + &pod(
            "beta",
            "app: b",
            "500m",
            "",
            "\n  nodeSelector: {beta.kubernetes.io/instance-type: small-z2}",
        );
    let s = snap(&text);
    for strategy in ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            nodes(&s, &p),
            [
                ("big-z2".to_string(), vec!["stable".to_string()]),
                ("small-z2".to_string(), vec!["beta".to_string()]),
            ],
            "{strategy:?}"
        );
    }
    let by_zone = pod(
        "zonal",
        "app: z",
        "500m",
        "",
        "\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [z2]}]}]}}}",
    );
    let s = snap(&(POOL.to_string() + &flavors() + &by_zone));
    for strategy in ALL {
        let p = plan(&s, strategy);
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}");
        let zone = p.new_nodes[0].offering.labels.get(ZONE);
        assert_eq!(zone.map(String::as_str), Some("z2"), "{strategy:?}");
    }
    let p = plan(&s, Cost);
    assert_eq!(
        nodes(&s, &p),
        [("small-z2".to_string(), vec!["zonal".to_string()])]
    );
}

/// A NodePool requiring `failure-domain.beta.kubernetes.io/zone In [z1]` offers only z1: a pod
/// gets `small-z1`, and a pod selecting z2 stays pending (`cost`, `karpenter-capi`). A flavor labelled only with the beta
/// arch key `beta.kubernetes.io/arch=arm64` serves a pod selecting `kubernetes.io/arch: arm64`.
#[test]
fn beta_keys_in_pools_and_flavor_labels() {
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: [{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [z1]}]\n";
    let text = pool.to_string()
        + &flavors()
        + &pod("any", "app: a", "500m", "", "")
        + &pod(
            "z2",
            "app: b",
            "500m",
            "",
            &format!("\n  nodeSelector: {{{ZONE}: z2}}"),
        );
    let s = snap(&text);
    // NodePools are Karpenter's (`least-waste` plans over node groups).
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            nodes(&s, &p),
            [("small-z1".to_string(), vec!["any".to_string()])],
            "{strategy:?}"
        );
        assert_eq!(unschedulable(&s, &p), ["z2"], "{strategy:?}");
    }
    let text = POOL.to_string()
        + &flavor("amd", 2, "0.05", "kubernetes.io/arch=amd64")
        + &flavor("arm", 4, "0.10", "beta.kubernetes.io/arch=arm64")
        + &pod(
            "arm-pod",
            "app: a",
            "500m",
            "",
            "\n  nodeSelector: {kubernetes.io/arch: arm64}",
        );
    let s = snap(&text);
    for strategy in ALL {
        let p = plan(&s, strategy);
        assert_eq!(
            nodes(&s, &p),
            [("arm".to_string(), vec!["arm-pod".to_string()])],
            "{strategy:?}"
        );
    }
}
