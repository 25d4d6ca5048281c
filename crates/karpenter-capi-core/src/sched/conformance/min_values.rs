//! Rule 8: `minValues` under `cost` as Karpenter v1.14's default `Strict` policy: a new node
//! stands for a NodeClaim listing every flavor of its pool that can still hold its pods; a pod
//! does not join a node it would leave short of a key's `minValues`, a pool whose claim could
//! not hold the pod alone is passed over for the next, and with no pool left the pod stays
//! pending with the `minValues` reason. Cases after core's `instance_selection_test.go`
//! `MinValues` context, in our own inputs.

use super::{flavor, nodes, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::Unfit;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

/// A NodePool `name` of this weight with these requirement flow maps.
fn pool(name: &str, weight: u32, requirements: &[&str]) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  template:\n    spec:\n      requirements: [{}]\n",
        requirements.join(", ")
    )
}

const GEN: &str = "example.com/generation";

/// The NodePool each pod's new node comes from, by pod name.
fn pools_of(s: &Snapshot, p: &Placement) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = p
        .new_nodes
        .iter()
        .flat_map(|n| {
            n.pods
                .iter()
                .map(|&i| (s.pods[i].demand.name.clone(), n.offering.node_pool.clone()))
        })
        .collect();
    out.sort();
    out
}

/// The `minValues` reasons a pod was left pending with.
fn min_values_reasons(
    s: &Snapshot,
    p: &Placement,
    name: &str,
) -> Vec<(String, String, usize, usize)> {
    p.unschedulable
        .iter()
        .filter(|(i, _)| s.pods[*i].demand.name == name)
        .flat_map(|(_, rs)| rs.iter())
        .filter_map(|r| match &r.unfit {
            Unfit::MinValuesUnmet {
                node_pool,
                key,
                min,
                found,
            } => Some((node_pool.clone(), key.clone(), *min, *found)),
            _ => None,
        })
        .collect()
}

/// Two 0.9-core pods fit together only on the 4-core type: one claim for both would list one
/// type, so under `minValues: 2` each gets its own claim listing both types, launched as the
/// cheaper 1-core one. Without `minValues` they share the 4-core node.
#[test]
fn two_pods_split_so_each_claim_keeps_two_instance_types() {
    let flavors = flavor("it-1", 1, "0.52", "") + &flavor("it-2", 4, "1.00", "");
    let pods = pod("p1", "app: p", "900m", "", "") + &pod("p2", "app: p", "900m", "", "");
    let types = "{key: node.kubernetes.io/instance-type, operator: In, values: [it-1, it-2]";
    let free = snap(&(pool("default", 1, &[&format!("{types}}}")]) + &flavors + &pods));
    assert_eq!(
        nodes(&free, &plan(&free, Cost)),
        [("it-2".to_string(), vec!["p1".to_string(), "p2".to_string()])]
    );
    let s = snap(&(pool("default", 1, &[&format!("{types}, minValues: 2}}")]) + &flavors + &pods));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            nodes(&s, &p),
            [
                ("it-1".to_string(), vec!["p1".to_string()]),
                ("it-1".to_string(), vec!["p2".to_string()])
            ],
            "{strategy:?}"
        );
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
    }
}

/// `minValues` on a custom key under `Gt`: three generations, the pool keeps those above 2
/// with `minValues: 2`; the two pods split over the two small types' claims.
#[test]
fn min_values_on_a_gt_requirement_splits_the_pods() {
    let text = pool(
        "default",
        1,
        &[&format!(
            "{{key: {GEN}, operator: Gt, values: ['2'], minValues: 2}}"
        )],
    ) + &flavor("g2", 1, "0.30", &format!("{GEN}=2"))
        + &flavor("g3", 1, "0.52", &format!("{GEN}=3"))
        + &flavor("g4", 4, "1.00", &format!("{GEN}=4"))
        + &pod("p1", "app: p", "900m", "", "")
        + &pod("p2", "app: p", "900m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    // Each claim lists g3 and g4 (g2 is not a generation above 2); the cheaper g3 is bought.
    assert_eq!(
        nodes(&s, &p),
        [
            ("g3".to_string(), vec!["p1".to_string()]),
            ("g3".to_string(), vec!["p2".to_string()])
        ]
    );
}

/// Pods that themselves select one generation leave a claim one value of the key: with no
/// other NodePool they stay pending, with the `minValues` reason naming the key.
#[test]
fn a_pod_narrowing_below_min_values_stays_pending_with_the_reason() {
    let select = format!(
        "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {GEN}, operator: Gt, values: ['2']}}]}}]}}}}}}"
    );
    let text = pool(
        "default",
        1,
        &[&format!("{{key: {GEN}, operator: Exists, minValues: 2}}")],
    ) + &flavor("g2", 1, "0.52", &format!("{GEN}=2"))
        + &flavor("g3", 4, "1.00", &format!("{GEN}=3"))
        + &pod("p1", "app: p", "900m", "", &select)
        + &pod("p2", "app: p", "900m", "", &select)
        + &pod("free", "app: f", "900m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["p1", "p2"]);
    assert_eq!(
        min_values_reasons(&s, &p, "p1"),
        [("default".to_string(), GEN.to_string(), 2, 1)]
    );
    // The rest of the plan is unchanged: the unconstrained pod still gets its node.
    assert_eq!(
        nodes(&s, &p),
        [("g2".to_string(), vec!["free".to_string()])]
    );
    let text = p
        .unschedulable
        .iter()
        .find(|(i, _)| s.pods[*i].demand.name == "p1")
        .map(|(_, rs)| rs.iter().map(ToString::to_string).collect::<Vec<_>>())
        .unwrap_or_default();
    assert!(
        text.iter()
            .any(|t| t.contains("needs 2 distinct values of example.com/generation")),
        "{text:?}"
    );
    // A pool asking more instance types than it has flavors holds no pod at all.
    let text = pool(
        "default",
        1,
        &["{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 3}"],
    ) + &flavor("g2", 1, "0.52", &format!("{GEN}=2"))
        + &flavor("g3", 4, "1.00", &format!("{GEN}=3"))
        + &pod("free", "app: f", "900m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.new_nodes.is_empty());
    assert_eq!(
        min_values_reasons(&s, &p, "free"),
        [(
            "default".to_string(),
            "node.kubernetes.io/instance-type".to_string(),
            3,
            2
        )]
    );
}

/// A higher-weight pool whose claim would miss `minValues` for the pod is passed over for the
/// next pool; pods it can hold still go to it.
#[test]
fn a_pool_short_of_min_values_hands_the_pod_to_the_next_pool() {
    let select = format!("\n  nodeSelector: {{{GEN}: '3'}}");
    let text = pool(
        "flexible",
        10,
        &[&format!("{{key: {GEN}, operator: Exists, minValues: 2}}")],
    ) + &pool("fallback", 1, &[])
        + &flavor("g2", 2, "0.10", &format!("{GEN}=2"))
        + &flavor("g3", 2, "0.12", &format!("{GEN}=3"))
        + &pod("pinned", "app: a", "1", "", &select)
        + &pod("free", "app: b", "1", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
    assert_eq!(
        pools_of(&s, &p),
        [
            ("free".to_string(), "flexible".to_string()),
            ("pinned".to_string(), "fallback".to_string())
        ]
    );
}

/// The largest `minValues` of the requirements on one key applies (here `NotIn` with 3 over
/// `In` with 1): three types hold one 1.5-core pod, but only two hold both, so they split;
/// with the `In` requirement's 1 alone they share the cheapest node that holds both.
#[test]
fn the_largest_min_values_on_a_key_applies() {
    let flavors = flavor("a1", 1, "0.20", "")
        + &flavor("b2", 2, "0.30", "")
        + &flavor("c4", 4, "0.55", "")
        + &flavor("d8", 8, "1.20", "");
    let pods = pod("p1", "app: p", "1500m", "", "") + &pod("p2", "app: p", "1500m", "", "");
    let reqs = |n: u32| {
        pool(
            "default",
            1,
            &[
                "{key: node.kubernetes.io/instance-type, operator: In, values: [a1, b2, c4, d8], minValues: 1}",
                &format!(
                    "{{key: node.kubernetes.io/instance-type, operator: NotIn, values: [x], minValues: {n}}}"
                ),
            ],
        )
    };
    let s = snap(&(reqs(1) + &flavors + &pods));
    assert_eq!(
        nodes(&s, &plan(&s, Cost)),
        [("c4".to_string(), vec!["p1".to_string(), "p2".to_string()])]
    );
    let s = snap(&(reqs(3) + &flavors + &pods));
    assert_eq!(
        nodes(&s, &plan(&s, Cost)),
        [
            ("b2".to_string(), vec!["p1".to_string()]),
            ("b2".to_string(), vec!["p2".to_string()])
        ]
    );
}

/// `minValues` on two keys at once: each must hold for the claim.
#[test]
fn min_values_on_two_keys_both_hold() {
    let flavors = flavor("a1", 1, "0.20", &format!("{GEN}=2"))
        + &flavor("b2", 2, "0.30", &format!("{GEN}=3"))
        + &flavor("c2", 2, "0.32", &format!("{GEN}=3"));
    let pods = pod("p1", "app: p", "900m", "", "") + &pod("p2", "app: p", "900m", "", "");
    let reqs = |types: u32, gens: u32| {
        pool(
            "default",
            1,
            &[
                &format!(
                    "{{key: node.kubernetes.io/instance-type, operator: Exists, minValues: {types}}}"
                ),
                &format!("{{key: {GEN}, operator: Exists, minValues: {gens}}}"),
            ],
        )
    };
    // Two types hold both pods (b2, c2), but one generation: the generation key splits them.
    let s = snap(&(reqs(2, 2) + &flavors + &pods));
    assert_eq!(
        nodes(&s, &plan(&s, Cost)),
        [
            ("a1".to_string(), vec!["p1".to_string()]),
            ("a1".to_string(), vec!["p2".to_string()])
        ]
    );
    // With one generation enough, two types are: they share b2.
    let s = snap(&(reqs(2, 1) + &flavors + &pods));
    assert_eq!(
        nodes(&s, &plan(&s, Cost)),
        [("b2".to_string(), vec!["p1".to_string(), "p2".to_string()])]
    );
}

/// At batch sizes past the exact solver (the optimizer, then the greedy cross-check, then the
/// optimizer alone): every node bought still has two types that hold all its pods, and no pod
/// is left out.
#[test]
fn every_claim_keeps_min_values_at_every_batch_size() {
    let flavors = flavor("a1", 1, "0.20", "")
        + &flavor("b2", 2, "0.30", "")
        + &flavor("c4", 4, "0.55", "")
        + &flavor("d8", 8, "1.00", "");
    let min = "{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 2}";
    for count in [30, 450] {
        let pods: String = (0..count)
            .map(|i| {
                let cpu = ["300m", "700m", "1500m"][i % 3];
                pod(&format!("p{i}"), "app: p", cpu, "", "")
            })
            .collect();
        let s = snap(&(pool("default", 1, &[min]) + &flavors + &pods));
        let p = plan(&s, Cost);
        assert!(p.unschedulable.is_empty(), "{count}");
        let placed: usize = p.new_nodes.iter().map(|n| n.pods.len()).sum();
        assert_eq!(placed, count);
        for n in &p.new_nodes {
            let holding = s
                .machine_deployments
                .iter()
                .filter_map(|md| md.flavor.as_ref().ok())
                .filter(|f| n.requested.fits_in(&f.capacity))
                .count();
            assert!(
                holding >= 2,
                "{count}: {} holds {:?}, only {holding} type(s) can",
                n.offering.flavor.instance_type,
                n.requested
            );
        }
        // Without minValues the same batch fills 8-core nodes, which one type alone holds.
        let s = snap(&(pool("default", 1, &[]) + &flavors + &pods));
        let p = plan(&s, Cost);
        assert!(
            p.new_nodes
                .iter()
                .any(|n| n.offering.flavor.instance_type == "d8"),
            "{count}"
        );
    }
}

/// The controller provisions with `cost`: each NodeClaim of a pool with `minValues` lists the
/// instance types that hold its pods, cheapest first, with the pool's `minValues` on the
/// requirement, and is bound to the planned (cheapest) flavor's MachineDeployment.
#[test]
fn the_controllers_claims_list_their_options_with_min_values() {
    use crate::controller::{Config, action::Action, provision::provision};
    let flavors = flavor("it-1", 1, "0.52", "") + &flavor("it-2", 4, "1.00", "");
    let pods = pod("p1", "app: p", "900m", "", "") + &pod("p2", "app: p", "900m", "", "");
    let min = "{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 2}";
    let s = snap(&(pool("default", 1, &[min]) + &flavors + &pods));
    let now = jiff::Timestamp::now();
    let (actions, notes) = provision(&s, now, &Config::default());
    assert!(notes.is_empty(), "{notes:?}");
    let claims: Vec<(String, serde_json::Value)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim {
                machine_deployment,
                manifest,
                ..
            } => Some((machine_deployment.clone(), manifest.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(claims.len(), 2);
    for (md, manifest) in &claims {
        assert_eq!(md, "capi/it-1");
        let reqs = manifest["spec"]["requirements"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let types: Vec<&serde_json::Value> = reqs
            .iter()
            .filter(|r| r["key"] == "node.kubernetes.io/instance-type")
            .collect();
        assert_eq!(
            types,
            [
                &serde_json::json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["it-1", "it-2"], "minValues": 2})
            ]
        );
        assert_eq!(
            manifest["metadata"]["labels"]["node.kubernetes.io/instance-type"],
            "it-1"
        );
    }
    // Without minValues the claim names its one flavor, as before.
    let s = snap(&(pool("default", 1, &[]) + &flavors + &pods));
    let (actions, _) = provision(&s, now, &Config::default());
    let listed: Vec<serde_json::Value> = actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => manifest["spec"]["requirements"]
                .as_array()
                .and_then(|r| {
                    r.iter()
                        .find(|r| r["key"] == "node.kubernetes.io/instance-type")
                })
                .map(|r| r["values"].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(listed, [serde_json::json!(["it-2"])]);
}

/// `minValues` on `Lt`, and the larger of the `Gt` and `Lt` requirements' `minValues` on one
/// key: generations 2 and 3 are below 5, the pods split over their claims; pods requiring a
/// generation below 3 leave one value and stay pending.
#[test]
fn min_values_on_lt_and_the_larger_of_gt_and_lt() {
    let flavors = flavor("g2", 1, "0.52", &format!("{GEN}=2"))
        + &flavor("g3", 4, "1.00", &format!("{GEN}=3"))
        + &flavor("g6", 1, "0.10", &format!("{GEN}=6"));
    let pods = pod("p1", "app: p", "900m", "", "") + &pod("p2", "app: p", "900m", "", "");
    let split = [
        ("g2".to_string(), vec!["p1".to_string()]),
        ("g2".to_string(), vec!["p2".to_string()]),
    ];
    let lt = format!("{{key: {GEN}, operator: Lt, values: ['5'], minValues: 2}}");
    let s = snap(&(pool("default", 1, &[&lt]) + &flavors + &pods));
    assert_eq!(nodes(&s, &plan(&s, Cost)), split);
    // Gt 1 with minValues 1 and Lt 5 with 2: the 2 applies.
    let gt = format!("{{key: {GEN}, operator: Gt, values: ['1'], minValues: 1}}");
    let s = snap(&(pool("default", 1, &[&gt, &lt]) + &flavors + &pods));
    assert_eq!(nodes(&s, &plan(&s, Cost)), split);
    // Each of the two claims lists both generations' flavors, cheapest first.
    {
        use crate::controller::{Config, action::Action, provision::provision};
        let now: jiff::Timestamp = "2026-12-01T10:00:00Z".parse().unwrap_or_default();
        let listed: Vec<serde_json::Value> = provision(&s, now, &Config::default())
            .0
            .iter()
            .filter_map(|a| match a {
                Action::CreateNodeClaim { manifest, .. } => manifest["spec"]["requirements"]
                    .as_array()
                    .and_then(|r| {
                        r.iter()
                            .find(|r| r["key"] == "node.kubernetes.io/instance-type")
                    })
                    .map(|r| r["values"].clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            listed,
            [
                serde_json::json!(["g2", "g3"]),
                serde_json::json!(["g2", "g3"])
            ]
        );
    }
    // Pods requiring a generation below 3: one value left, pending with the reason.
    let below = format!(
        "\n  nodeSelector: {{}}\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {GEN}, operator: Lt, values: ['3']}}]}}]}}}}}}"
    );
    let s =
        snap(&(pool("default", 1, &[&lt]) + &flavors + &pod("p1", "app: p", "900m", "", &below)));
    let p = plan(&s, Cost);
    assert!(p.new_nodes.is_empty());
    assert_eq!(
        min_values_reasons(&s, &p, "p1"),
        [("default".to_string(), GEN.to_string(), 2, 1)]
    );
}

/// `minValues` on the zone: a pool needing two zones per claim cannot hold a pod that selects
/// one; an unconstrained pod's claim keeps both zones and is bought in the cheaper.
#[test]
fn zone_min_values_blocks_a_pod_pinned_to_one_zone() {
    let zone = crate::vocab::keys::ZONE;
    let text = pool(
        "default",
        1,
        &[&format!(
            "{{key: {zone}, operator: In, values: [z1, z2], minValues: 2}}"
        )],
    ) + &flavor("c2-z1", 2, "0.04", &format!("{zone}=z1"))
        + &flavor("c2-z2", 2, "0.05", &format!("{zone}=z2"))
        + &pod(
            "pinned",
            "app: a",
            "1",
            "",
            &format!("\n  nodeSelector: {{{zone}: z2}}"),
        )
        + &pod("free", "app: b", "1", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["pinned"]);
    assert_eq!(
        min_values_reasons(&s, &p, "pinned"),
        [("default".to_string(), zone.to_string(), 2, 1)]
    );
    assert_eq!(
        nodes(&s, &p),
        [("c2-z1".to_string(), vec!["free".to_string()])]
    );
}
