//! Zonal and hostname spread cases of core v1.14's scheduling `topology_test.go` (core
//! `topologygroup.go` `nextDomainTopologySpread`, domains from the NodePools' requirements and
//! labels), in our own inputs through `cost`: selectors by expression, the pool's zones as the
//! domains (requirement, subset, template labels across pools), `minDomains`, a zone
//! `nodeSelector`, self affinity in one zone, unknown `matchLabelKeys`, and spreads of two apps
//! on different architectures.

use std::collections::BTreeMap;

use super::{flavor, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::Cost;
use crate::vocab::keys::ZONE;

/// A NodePool `name` with these requirement flow maps and extra `template` lines.
fn pool(name: &str, requirements: &[&str], template: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:{template}\n    spec:\n      requirements: [{}]\n",
        requirements.join(", ")
    )
}

/// 2-core flavors in zones z1..z3.
fn zonal() -> String {
    (1..=3)
        .map(|z| flavor(&format!("c2-z{z}"), 2, "0.05", &format!("{ZONE}=z{z}")))
        .collect()
}

/// `count` 1-core pods `app: s` with a zonal spread of maxSkew 1 (extra constraint fields
/// `extra`, e.g. a selector) and extra spec lines.
fn spread_pods(count: usize, extra: &str, spec: &str) -> String {
    (0..count)
        .map(|i| {
            pod(
                &format!("s{i:02}"),
                "app: s",
                "1",
                "",
                &format!(
                    "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule{extra}}}]{spec}"
                ),
            )
        })
        .collect()
}

const BY_LABELS: &str = ", labelSelector: {matchLabels: {app: s}}";

/// Placed pods per zone.
fn per_zone(p: &Placement) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for n in &p.new_nodes {
        *out.entry(n.offering.labels.get(ZONE).cloned().unwrap_or_default())
            .or_default() += n.pods.len();
    }
    out
}

fn counts(p: &Placement) -> Vec<usize> {
    let mut v: Vec<usize> = per_zone(p).into_values().collect();
    v.sort_unstable();
    v
}

fn run(text: &str) -> (Snapshot, Placement) {
    let s = snap(text);
    let p = plan(&s, Cost);
    (s, p)
}

/// A selector by expression balances like one by labels (S-TOPO-005); a pool allowing the three
/// zones balances over them (S-TOPO-006); a pool allowing two of three uses only those two
/// (S-TOPO-007).
#[test]
fn the_pools_zones_are_the_domains() {
    let expr = ", labelSelector: {matchExpressions: [{key: app, operator: In, values: [s]}]}";
    let (_, p) = run(&(pool("default", &[], "") + &zonal() + &spread_pods(6, expr, "")));
    assert_eq!(counts(&p), [2, 2, 2]);
    let all = format!("{{key: {ZONE}, operator: In, values: [z1, z2, z3]}}");
    let (_, p) = run(&(pool("default", &[&all], "") + &zonal() + &spread_pods(6, BY_LABELS, "")));
    assert_eq!(counts(&p), [2, 2, 2]);
    let two = format!("{{key: {ZONE}, operator: In, values: [z1, z2]}}");
    let (_, p) = run(&(pool("default", &[&two], "") + &zonal() + &spread_pods(4, BY_LABELS, "")));
    assert_eq!(
        per_zone(&p),
        BTreeMap::from([("z1".to_string(), 2), ("z2".to_string(), 2)])
    );
}

/// Two pools each labelling its nodes with one zone give two domains (S-TOPO-010).
#[test]
fn template_labels_across_two_pools_are_the_domains() {
    let text = pool(
        "a",
        &[],
        &format!("\n    metadata:\n      labels: {{{ZONE}: z1}}"),
    ) + &pool(
        "b",
        &[],
        &format!("\n    metadata:\n      labels: {{{ZONE}: z2}}"),
    ) + &zonal()
        + &spread_pods(4, BY_LABELS, "");
    let (_, p) = run(&text);
    assert_eq!(
        per_zone(&p),
        BTreeMap::from([("z1".to_string(), 2), ("z2".to_string(), 2)])
    );
}

/// One pool whose template label fixes the zone to z1, alone (S-TOPO-008) or with a zone
/// requirement allowing z1 and z2 (S-TOPO-009): z1 is the only domain, and all four spread
/// pods go there.
#[test]
fn a_zone_template_label_is_the_pools_one_domain() {
    let label = format!("\n    metadata:\n      labels: {{{ZONE}: z1}}");
    let two = format!("{{key: {ZONE}, operator: In, values: [z1, z2]}}");
    for requirements in [vec![], vec![two.as_str()]] {
        let text =
            pool("default", &requirements, &label) + &zonal() + &spread_pods(4, BY_LABELS, "");
        let (_, p) = run(&text);
        assert!(p.unschedulable.is_empty(), "{requirements:?}");
        assert_eq!(
            per_zone(&p),
            BTreeMap::from([("z1".to_string(), 4)]),
            "{requirements:?}"
        );
    }
}

/// `minDomains` 3 or 2 with three zones available: 11 pods spread 4, 4, 3 (S-TOPO-020,
/// S-TOPO-021).
#[test]
fn min_domains_met_spreads_as_usual() {
    for min in [3, 2] {
        let extra = format!("{BY_LABELS}, minDomains: {min}");
        let (_, p) = run(&(pool("default", &[], "") + &zonal() + &spread_pods(11, &extra, "")));
        assert_eq!(counts(&p), [3, 4, 4], "minDomains {min}");
    }
}

/// A zone `nodeSelector` leaves the other zones out of the pods' domains: all go to z2
/// (S-TOPO-051); self-affine pods restricted to z3 go there together (S-TOPO-064).
#[test]
fn a_zone_selector_limits_the_domains() {
    let spec = format!("\n  nodeSelector: {{{ZONE}: z2}}");
    let (s, p) = run(&(pool("default", &[], "") + &zonal() + &spread_pods(3, BY_LABELS, &spec)));
    assert!(unschedulable(&s, &p).is_empty());
    assert_eq!(per_zone(&p), BTreeMap::from([("z2".to_string(), 3)]));
    let affine = format!(
        "\n  nodeSelector: {{{ZONE}: z3}}\n  affinity: {{podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{app: self}}}}, topologyKey: {ZONE}}}]}}}}"
    );
    let text = pool("default", &[], "")
        + &zonal()
        + &(0..3)
            .map(|i| pod(&format!("a{i}"), "app: self", "1", "", &affine))
            .collect::<String>();
    let (s, p) = run(&text);
    assert!(unschedulable(&s, &p).is_empty());
    assert_eq!(per_zone(&p), BTreeMap::from([("z3".to_string(), 3)]));
}

/// Hostname spreads: an unknown `matchLabelKeys` key is ignored, so the pods still go one per
/// node (S-TOPO-041); two apps on different architectures need a node per pod (S-TOPO-025).
#[test]
fn hostname_spreads_with_unknown_keys_and_two_archs() {
    let host = |app: &str, extra: &str| {
        format!(
            "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: {app}}}}}{extra}}}]"
        )
    };
    let text = pool("default", &[], "")
        + &flavor("c4", 4, "0.10", "")
        + &(0..3)
            .map(|i| {
                pod(
                    &format!("k{i}"),
                    "app: k",
                    "500m",
                    "",
                    &host("k", ", matchLabelKeys: [no-such-label]"),
                )
            })
            .collect::<String>();
    let (_, p) = run(&text);
    assert_eq!(p.new_nodes.len(), 3);
    assert!(p.new_nodes.iter().all(|n| n.pods.len() == 1));
    let mut text = pool("default", &[], "")
        + &flavor("amd", 4, "0.10", "kubernetes.io/arch=amd64")
        + &flavor("arm", 4, "0.10", "kubernetes.io/arch=arm64");
    for (app, arch) in [("one", "amd64"), ("two", "arm64")] {
        for i in 0..2 {
            text.push_str(&pod(
                &format!("{app}{i}"),
                &format!("app: {app}"),
                "500m",
                "",
                &format!(
                    "\n  nodeSelector: {{kubernetes.io/arch: {arch}}}{}",
                    host(app, "")
                ),
            ));
        }
    }
    let (s, p) = run(&text);
    assert!(unschedulable(&s, &p).is_empty());
    assert_eq!(p.new_nodes.len(), 4);
}

/// A preferred zone does not shrink the spread's domains: six spread pods preferring z1 still
/// end 2, 2, 2 over the three zones, all placed (S-TOPO-054).
#[test]
fn a_preferred_zone_keeps_every_domain() {
    let prefer = format!(
        "\n  affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{{key: {ZONE}, operator: In, values: [z1]}}]}}}}]}}}}"
    );
    let (s, p) = run(&(pool("default", &[], "") + &zonal() + &spread_pods(6, BY_LABELS, &prefer)));
    assert!(unschedulable(&s, &p).is_empty());
    assert_eq!(counts(&p), [2, 2, 2]);
}

/// Pool `a` offers z1 and z2; pool `b` offers z3 but its cpu limit is 0. Ten pods under a hard
/// zonal spread and a hostname spread: z3 is still a domain (empty, and staying so), so z1 and z2
/// get one pod each, on their own nodes, and the rest wait (S-TOPO-038).
#[test]
fn a_zone_whose_pool_cannot_grow_still_caps_the_others() {
    let hostname = ", labelSelector: {matchLabels: {app: s}}}, {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: s}}";
    let a = format!("{{key: {ZONE}, operator: In, values: [z1, z2]}}");
    let b = format!("{{key: {ZONE}, operator: In, values: [z3]}}");
    let text = pool("a", &[&a], "")
        + &pool("b", &[&b], "").replace(
            "spec:\n  template:",
            "spec:\n  limits: {cpu: '0'}\n  template:",
        )
        + &zonal()
        + &spread_pods(10, hostname, "");
    assert!(text.contains("limits: {cpu: '0'}"));
    let (_, p) = run(&text);
    assert_eq!(
        per_zone(&p),
        BTreeMap::from([("z1".to_string(), 1), ("z2".to_string(), 1)])
    );
    assert_eq!(p.new_nodes.len(), 2);
    assert_eq!(p.unschedulable.len(), 8);
}
