//! Rule 2: Karpenter's relaxation order (`preferences.go` `Relax`): a pod's required node
//! affinity is its first term until the next is tried, then preferences are dropped, and a
//! PreferNoSchedule taint keeps it off until the last step, a toleration, which exists only
//! when some NodePool template has such a taint.

use super::{flavor, plan, pod, snap};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

use crate::vocab::keys::ZONE;

fn pool(name: &str, weight: i32, requirements: &str, taints: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  template:\n    spec:\n      requirements: [{requirements}]\n      taints: [{taints}]\n"
    )
}

const SOFT: &str = "{key: spot, value: 'true', effect: PreferNoSchedule}";

/// (NodePool, instance type) of the single new node, and the relaxation notes of pod 0.
fn outcome(s: &Snapshot, p: &Placement) -> ((String, String), Vec<String>) {
    assert_eq!(
        p.new_nodes.len(),
        1,
        "{:?}: {:?}",
        p.strategy,
        p.unschedulable
    );
    let o = &p.new_nodes[0].offering;
    let notes = p
        .relaxed
        .iter()
        .find(|(i, _)| s.pods[*i].demand.name == "p")
        .map(|(_, n)| n.clone())
        .unwrap_or_default();
    ((o.node_pool.clone(), o.flavor.instance_type.clone()), notes)
}

fn at(pool: &str, instance: &str) -> (String, String) {
    (pool.to_string(), instance.to_string())
}

#[test]
fn a_pool_without_the_taint_wins_over_a_heavier_one_with_it() {
    let catalog = pool("soft", 10, "", SOFT)
        + &pool("plain", 0, "", "")
        + &flavor("c2", 2, "0.05", "")
        + &flavor("c4", 4, "0.08", "");
    let cases = [
        ("no toleration", "", at("plain", "c2")),
        (
            "tolerates it",
            "\n  tolerations: [{key: spot, operator: Exists}]",
            at("soft", "c2"),
        ),
        (
            "tolerates another effect only",
            "\n  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]",
            at("plain", "c2"),
        ),
    ];
    for (what, spec, want) in cases {
        let s = snap(&(catalog.clone() + &pod("p", "app: p", "1", "", spec)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(
                outcome(&s, &p),
                (want.clone(), vec![]),
                "{what}, {strategy:?}"
            );
        }
    }
}

#[test]
fn the_taint_is_tolerated_only_after_every_preference_is_dropped() {
    let flavors = flavor("c2-z1", 2, "0.05", &format!("{ZONE}=z1"))
        + &flavor("c2-z2", 2, "0.05", &format!("{ZONE}=z2"));
    let prefers_z1 = format!(
        "\n  affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 50, preference: {{matchExpressions: [{{key: {ZONE}, operator: In, values: [z1]}}]}}}}]}}}}"
    );
    // Only the tainted pool: the last step tolerates it.
    let s = snap(&(pool("soft", 0, "", SOFT) + &flavors + &pod("p", "app: p", "1", "", "")));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            outcome(&s, &p),
            (
                at("soft", "c2-z1"),
                vec!["added a toleration for PreferNoSchedule taints".to_string()]
            ),
            "{strategy:?}"
        );
    }
    // z1 only in the tainted pool: the preference for z1 goes before the taint is tolerated.
    let text = pool(
        "soft",
        10,
        &format!("{{key: {ZONE}, operator: In, values: [z1]}}"),
        SOFT,
    ) + &pool(
        "plain",
        0,
        &format!("{{key: {ZONE}, operator: In, values: [z2]}}"),
        "",
    ) + &flavors
        + &pod("p", "app: p", "1", "", &prefers_z1);
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            outcome(&s, &p),
            (
                at("plain", "c2-z2"),
                vec![format!(
                    "dropped preferred node affinity (weight 50) {ZONE} In [z1]"
                )]
            ),
            "{strategy:?}"
        );
    }
}

/// Required node-affinity terms are tried in order: the first that fits wins even when a later
/// one would be cheaper; the next is tried only when the first fits nowhere.
#[test]
fn required_node_affinity_terms_are_tried_in_order() {
    let flavors = flavor("c4-z1", 4, "0.20", &format!("{ZONE}=z1"))
        + &flavor("c4-z2", 4, "0.08", &format!("{ZONE}=z2"))
        + &flavor("c8-z2", 8, "0.14", &format!("{ZONE}=z2"));
    let terms = format!(
        "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {ZONE}, operator: In, values: [z1]}}]}}, {{matchExpressions: [{{key: {ZONE}, operator: In, values: [z2]}}]}}]}}}}}}"
    );
    let cases = [
        ("fits the first term", "1", at("default", "c4-z1"), vec![]),
        (
            "too big for the first term's flavors",
            "6",
            at("default", "c8-z2"),
            vec![format!(
                "dropped required node affinity term {ZONE} In [z1]"
            )],
        ),
    ];
    for (what, cpu, want, notes) in cases {
        let s = snap(&(flavors.clone() + &pod("p", "app: p", cpu, "", &terms)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(
                outcome(&s, &p),
                (want.clone(), notes.clone()),
                "{what}, {strategy:?}"
            );
        }
    }
}

/// Two preferred node terms of equal weight no flavor meets (an unknown zone, an unknown
/// instance type): both are dropped, the zone first as listed, and the pod is placed
/// (P-PROV-091).
#[test]
fn every_impossible_preference_is_dropped() {
    let flavors = flavor("c2-z1", 2, "0.05", &format!("{ZONE}=z1"));
    let prefers = format!(
        "\n  affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{{key: {ZONE}, operator: In, values: [invalid]}}]}}}}, {{weight: 1, preference: {{matchExpressions: [{{key: node.kubernetes.io/instance-type, operator: In, values: [invalid]}}]}}}}]}}}}"
    );
    let s = snap(&(pool("plain", 0, "", "") + &flavors + &pod("p", "app: p", "1", "", &prefers)));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            outcome(&s, &p),
            (
                at("plain", "c2-z1"),
                vec![
                    format!("dropped preferred node affinity (weight 1) {ZONE} In [invalid]"),
                    "dropped preferred node affinity (weight 1) node.kubernetes.io/instance-type In [invalid]".to_string(),
                ]
            ),
            "{strategy:?}"
        );
    }
}
