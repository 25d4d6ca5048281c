//! Topology spread, preferences and volume topology against kube-scheduler's and Karpenter's
//! semantics, through every strategy; and a property test that no plan breaks a
//! `DoNotSchedule` constraint.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{Placement, by_name};

const ZONE: &str = "topology.kubernetes.io/zone";

/// A member MachineDeployment of `cpu` vCPU in `zone`.
fn flavor(name: &str, cpu: u32, zone: &str, price: &str) -> String {
    format!(
        "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: {name}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {}Gi\n    capacity.cluster-autoscaler.kubernetes.io/price: '{price}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type={name},{ZONE}={zone}\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n",
        cpu * 4
    )
}

/// An existing Node in `zone` with `cpu_millis` allocatable.
fn node(name: &str, zone: &str, cpu_millis: u32) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{ZONE}: {zone}, kubernetes.io/hostname: {name}}}}}\nstatus: {{allocatable: {{cpu: {cpu_millis}m, memory: 64Gi, pods: '110'}}, capacity: {{cpu: {cpu_millis}m, memory: 64Gi, pods: '110'}}}}\n"
    )
}

/// A pod with `labels` (flow map body), 500m cpu, bound to `node` if given, with `extra` spec.
fn pod(name: &str, labels: &str, node: Option<&str>, extra: &str) -> String {
    let bind = node
        .map(|n| format!("\n  nodeName: {n}"))
        .unwrap_or_default();
    let status = if node.is_some() {
        "status: {phase: Running}"
    } else {
        "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}"
    };
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{{labels}}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 128Mi}}}}}}]{bind}{extra}\n{status}\n"
    )
}

fn spread(key: &str, skew: u32, when: &str, selector: &str, more: &str) -> String {
    format!(
        "\n  topologySpreadConstraints:\n  - {{maxSkew: {skew}, topologyKey: {key}, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{{selector}}}}}{more}}}"
    )
}

fn snap(text: &str) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap()
}

fn plan(s: &Snapshot, strategy: StrategyName) -> Placement {
    let pending: Vec<usize> = (0..s.pods.len())
        .filter(|&i| s.pods[i].is_pending())
        .collect();
    by_name(strategy).plan(s, &pending)
}

/// Zone of every pod the plan places (new, existing or in-flight node), by pod name.
fn zones(s: &Snapshot, p: &Placement) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for n in &p.new_nodes {
        for &i in &n.pods {
            out.insert(
                s.pods[i].demand.name.clone(),
                n.offering.labels.get(ZONE).cloned().unwrap_or_default(),
            );
        }
    }
    for (i, name) in &p.on_existing {
        let node = s.nodes.iter().find(|n| &n.name == name).unwrap();
        out.insert(
            s.pods[*i].demand.name.clone(),
            node.labels.get(ZONE).cloned().unwrap_or_default(),
        );
    }
    out
}

fn per_zone(z: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for v in z.values() {
        *out.entry(v.clone()).or_insert(0) += 1;
    }
    out
}

fn three_zones() -> String {
    ["a", "b", "c"]
        .iter()
        .map(|z| flavor(&format!("m4-{z}"), 4, z, "0.10"))
        .collect()
}

#[test]
fn zonal_spread_never_exceeds_max_skew() {
    let mut y = three_zones();
    for i in 0..7 {
        y.push_str(&pod(
            &format!("web-{i}"),
            "app: web",
            None,
            &spread(ZONE, 1, "DoNotSchedule", "app: web", ""),
        ));
    }
    let s = snap(&y);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        let counts: Vec<usize> = per_zone(&zones(&s, &p)).into_values().collect();
        assert_eq!(counts.len(), 3, "{strategy:?}: every zone used");
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 1, "{strategy:?}: {counts:?}");
    }
}

#[test]
fn hostname_spread_puts_at_most_max_skew_per_node() {
    let mut y = flavor("m8", 8, "a", "0.10");
    for i in 0..5 {
        y.push_str(&pod(
            &format!("web-{i}"),
            "app: web",
            None,
            &spread("kubernetes.io/hostname", 2, "DoNotSchedule", "app: web", ""),
        ));
    }
    let s = snap(&y);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        let mut sizes: Vec<usize> = p.new_nodes.iter().map(|n| n.pods.len()).collect();
        sizes.sort();
        assert_eq!(sizes, vec![1, 2, 2], "{strategy:?}");
    }
}

/// Existing pods count: two web pods on a zone-a node with room leave the pending one no
/// choice but a new node in another zone, and the reason names the skew.
fn blocked_world() -> String {
    let mut y = flavor("m4-a", 4, "a", "0.10");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    y.push_str(&node("node-a", "a", 8000));
    y.push_str(&pod("web-0", "app: web", Some("node-a"), ""));
    y.push_str(&pod("web-1", "app: web", Some("node-a"), ""));
    y.push_str(&pod(
        "web-2",
        "app: web",
        None,
        &spread(ZONE, 1, "DoNotSchedule", "app: web", ""),
    ));
    y
}

#[test]
fn existing_pods_count_and_the_reason_has_numbers() {
    let s = snap(&blocked_world());
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.on_existing.is_empty(), "{strategy:?}");
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}");
        assert_eq!(
            p.new_nodes[0].offering.labels.get(ZONE).map(String::as_str),
            Some("b"),
            "{strategy:?}"
        );
    }
    let e = crate::diagnose::explain::explain_pod(&s, 2);
    assert_eq!(e.nodes.len(), 1);
    assert_eq!(
        e.nodes[0].reason.as_deref(),
        Some(
            "zone a would have skew 3 > maxSkew 1 for app=web (3 matching pods there with this one, fewest in a domain 0)"
        )
    );
    let a = e
        .flavors
        .iter()
        .find(|f| f.instance_type == "m4-a")
        .unwrap();
    assert!(!a.fits);
    assert!(
        e.flavors
            .iter()
            .find(|f| f.instance_type == "m4-b")
            .unwrap()
            .fits
    );
    assert_eq!(
        e.constraints,
        vec!["topology spread: DoNotSchedule maxSkew 1 on topology.kubernetes.io/zone for app=web"]
    );
}

#[test]
fn min_domains_counts_missing_domains_as_empty() {
    let two_zones = format!(
        "{}{}",
        flavor("m4-a", 4, "a", "0.10"),
        flavor("m4-b", 4, "b", "0.10")
    );
    let replicas = |more: &str| {
        let mut y = two_zones.clone();
        for i in 0..4 {
            y.push_str(&pod(
                &format!("web-{i}"),
                "app: web",
                None,
                &spread(ZONE, 1, "DoNotSchedule", "app: web", more),
            ));
        }
        snap(&y)
    };
    let without = replicas("");
    assert!(plan(&without, StrategyName::Cost).unschedulable.is_empty());
    let with = replicas(", minDomains: 3");
    for strategy in StrategyName::ALL {
        let p = plan(&with, strategy);
        assert_eq!(
            per_zone(&zones(&with, &p)),
            [("a".to_string(), 1), ("b".to_string(), 1)].into(),
            "{strategy:?}"
        );
        assert_eq!(p.unschedulable.len(), 2, "{strategy:?}");
        let reasons: Vec<String> = p.unschedulable[0].1.iter().map(|r| r.to_string()).collect();
        assert!(
            reasons.iter().any(
                |r| r.ends_with("2 eligible domains < minDomains 3, so the fewest counts as 0")
            ),
            "{reasons:?}"
        );
    }
}

#[test]
fn schedule_anyway_prefers_but_does_not_block() {
    // Zone b exists (a full node there) but cannot take pods; only zone a is offered.
    let world = |when: &str| {
        let mut y = flavor("m4-a", 4, "a", "0.10");
        y.push_str(&node("node-b", "b", 100));
        for i in 0..3 {
            y.push_str(&pod(
                &format!("web-{i}"),
                "app: web",
                None,
                &spread(ZONE, 1, when, "app: web", ""),
            ));
        }
        snap(&y)
    };
    let hard = world("DoNotSchedule");
    let soft = world("ScheduleAnyway");
    for strategy in StrategyName::ALL {
        let p = plan(&hard, strategy);
        assert_eq!(p.unschedulable.len(), 2, "{strategy:?}");
        let p = plan(&soft, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            p.relaxed.len(),
            2,
            "{strategy:?}: the two that did not fit relaxed"
        );
        assert_eq!(
            p.relaxed[0].1,
            vec![
                "dropped topology spread ScheduleAnyway maxSkew 1 on topology.kubernetes.io/zone for app=web"
            ]
        );
    }
}

#[test]
fn match_label_keys_split_by_revision() {
    let world = |keys: &str| {
        let mut y = three_zones();
        y.push_str(&node("node-a", "a", 8000));
        for i in 0..3 {
            y.push_str(&pod(
                &format!("old-{i}"),
                "app: web, pod-template-hash: v1",
                Some("node-a"),
                "",
            ));
        }
        for i in 0..3 {
            y.push_str(&pod(
                &format!("new-{i}"),
                "app: web, pod-template-hash: v2",
                None,
                &spread(ZONE, 1, "DoNotSchedule", "app: web", keys),
            ));
        }
        snap(&y)
    };
    let split = world(", matchLabelKeys: [pod-template-hash]");
    let p = plan(&split, StrategyName::Cost);
    assert_eq!(
        per_zone(&zones(&split, &p)),
        [("a".into(), 1), ("b".into(), 1), ("c".into(), 1)].into()
    );
    // Without it the old revision counts: zone a is already 3 ahead.
    let merged = world("");
    let p = plan(&merged, StrategyName::Cost);
    let z = per_zone(&zones(&merged, &p));
    assert_eq!(z.get("a"), None, "{z:?}");
}

#[test]
fn preferred_anti_affinity_is_kept_while_it_fits_then_relaxed() {
    let anti = "\n  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 10\n        podAffinityTerm: {labelSelector: {matchLabels: {app: db}}, topologyKey: topology.kubernetes.io/zone}";
    let mut y = flavor("m4-a", 4, "a", "0.10");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    for i in 0..3 {
        y.push_str(&pod(&format!("db-{i}"), "app: db", None, anti));
    }
    let s = snap(&y);
    let p = plan(&s, StrategyName::Cost);
    assert!(p.unschedulable.is_empty());
    assert_eq!(p.relaxed.len(), 1, "one pod had no zone left");
    assert_eq!(
        p.relaxed[0].1,
        vec![
            "dropped preferred pod anti-affinity (weight 10) to app=db on topology.kubernetes.io/zone"
        ]
    );
    let z = per_zone(&zones(&s, &p));
    assert_eq!(z.len(), 2, "{z:?}");
    let e = crate::diagnose::explain::explain_pod(&s, p.relaxed[0].0);
    let cost = e.strategies.iter().find(|c| c.strategy == "cost").unwrap();
    assert_eq!(cost.relaxed, p.relaxed[0].1);
}

#[test]
fn preferred_node_affinity_wins_when_it_fits() {
    let pref = "\n  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b]}]}";
    let mut y = flavor("m4-a", 4, "a", "0.05");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    y.push_str(&pod("p", "app: x", None, pref));
    let s = snap(&y);
    let p = plan(&s, StrategyName::Cost);
    assert_eq!(zones(&s, &p).get("p").map(String::as_str), Some("b"));
    assert!(p.relaxed.is_empty());
}

#[test]
fn volumes_pin_pods_to_their_zones() {
    let mut y = three_zones();
    y.push_str("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\nspec:\n  capacity: {storage: 1Gi}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b]}]\n");
    y.push_str("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-bound, namespace: default, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {volumeName: pv-1, storageClassName: zonal}\n");
    y.push_str("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-new, namespace: default}\nspec: {storageClassName: only-c}\n");
    y.push_str("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: only-c}\nprovisioner: x\nallowedTopologies:\n- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [c]}]\n");
    let vol = |claim: &str| {
        format!("\n  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]")
    };
    y.push_str(&pod("bound", "app: x", None, &vol("data-bound")));
    y.push_str(&pod("unbound", "app: x", None, &vol("data-new")));
    y.push_str(&pod("missing", "app: x", None, &vol("nope")));
    let s = snap(&y);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("PersistentVolumeClaim default/nope")),
        "{:?}",
        s.warnings
    );
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        let z = zones(&s, &p);
        assert_eq!(
            z.get("bound").map(String::as_str),
            Some("b"),
            "{strategy:?}"
        );
        assert_eq!(
            z.get("unbound").map(String::as_str),
            Some("c"),
            "{strategy:?}"
        );
        assert!(z.contains_key("missing"));
    }
    let e = crate::diagnose::explain::explain_pod(&s, 0);
    let a = e
        .flavors
        .iter()
        .find(|f| f.instance_type == "m4-a")
        .unwrap();
    assert_eq!(
        a.reason.as_deref(),
        Some(
            "volume claim data-bound (PersistentVolume pv-1) requires topology.kubernetes.io/zone In [b], m4-a has topology.kubernetes.io/zone=a"
        )
    );
}

#[test]
fn invalid_spread_names_the_field() {
    let y = format!(
        "{}{}",
        flavor("m4-a", 4, "a", "0.10"),
        pod(
            "p",
            "app: x",
            None,
            &spread(ZONE, 1, "Sometimes", "app: x", "")
        )
    );
    let err = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: y,
    }])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: unknown value \"Sometimes\""
        ),
        "{err}"
    );
}

/// One spread group of the random instances: pods labelled `group: g<i>` that all carry the
/// same constraint selecting that label.
#[derive(Debug, Clone)]
struct GroupSpec {
    hostname: bool,
    max_skew: u32,
    min_domains: Option<u32>,
    pending: usize,
    /// Bound pods of the group per existing node.
    bound: Vec<usize>,
}

fn group_spec(nodes: usize) -> impl Strategy<Value = GroupSpec> {
    (
        prop::bool::weighted(0.3),
        1u32..=2,
        prop::option::weighted(0.2, 2u32..=4),
        1usize..=80,
        prop::collection::vec(0usize..=3, nodes),
    )
        .prop_map(
            |(hostname, max_skew, min_domains, pending, bound)| GroupSpec {
                hostname,
                max_skew,
                min_domains: if hostname { None } else { min_domains },
                pending,
                bound,
            },
        )
}

/// Zones `z0..`: flavors (sizes 2/4/8 vCPU) in the first `offered`, one existing node in each
/// of the first `with_nodes` (so some zones exist only through nodes).
fn random_world(zones: usize, offered: usize, groups: &[GroupSpec], sizes: &[u32]) -> String {
    let mut y = String::new();
    for z in 0..offered {
        for &cpu in sizes {
            y.push_str(&flavor(
                &format!("m{cpu}-z{z}"),
                cpu,
                &format!("z{z}"),
                &format!("0.{:02}", cpu * 2 + z as u32),
            ));
        }
    }
    for z in 0..zones {
        y.push_str(&node(&format!("node-z{z}"), &format!("z{z}"), 6000));
    }
    for (g, spec) in groups.iter().enumerate() {
        let key = if spec.hostname {
            "kubernetes.io/hostname"
        } else {
            ZONE
        };
        let more = spec
            .min_domains
            .map(|m| format!(", minDomains: {m}"))
            .unwrap_or_default();
        let c = spread(
            key,
            spec.max_skew,
            "DoNotSchedule",
            &format!("group: g{g}"),
            &more,
        );
        for (n, &count) in spec.bound.iter().enumerate().take(zones) {
            for i in 0..count {
                y.push_str(&pod(
                    &format!("g{g}-bound-{n}-{i}"),
                    &format!("group: g{g}"),
                    Some(&format!("node-z{n}")),
                    "",
                ));
            }
        }
        for i in 0..spec.pending {
            y.push_str(&pod(
                &format!("g{g}-{i}"),
                &format!("group: g{g}"),
                None,
                &c,
            ));
        }
    }
    y
}

/// For every group and every domain the plan put its pods in: the final count there minus the
/// smallest final count of an eligible domain is at most maxSkew. Any order of placements that
/// kube-scheduler would accept ends this way, since counts only grow.
fn assert_spread_kept(
    s: &Snapshot,
    p: &Placement,
    groups: &[GroupSpec],
    offered: usize,
    zones: usize,
) {
    for (g, spec) in groups.iter().enumerate() {
        let label = format!("g{g}");
        let selected = |i: usize| s.pods[i].demand.labels.get("group") == Some(&label);
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        let mut received: BTreeSet<String> = BTreeSet::new();
        let domain_of_node = |name: &str| -> String {
            if spec.hostname {
                name.to_string()
            } else {
                let n = s.nodes.iter().find(|n| n.name == name).unwrap();
                n.labels[ZONE].clone()
            }
        };
        if !spec.hostname {
            for z in 0..zones.max(offered) {
                counts.insert(format!("z{z}"), 0);
            }
        }
        for (i, pod) in s.pods.iter().enumerate() {
            if let Some(n) = &pod.node_name
                && selected(i)
            {
                *counts.entry(domain_of_node(n)).or_insert(0) += 1;
            }
        }
        for (i, name) in p.on_existing.iter().chain(p.on_in_flight.iter()) {
            if selected(*i) {
                let d = domain_of_node(name);
                *counts.entry(d.clone()).or_insert(0) += 1;
                received.insert(d);
            }
        }
        for n in &p.new_nodes {
            let d = if spec.hostname {
                n.name.clone()
            } else {
                n.offering.labels[ZONE].clone()
            };
            for &i in &n.pods {
                if selected(i) {
                    *counts.entry(d.clone()).or_insert(0) += 1;
                    received.insert(d.clone());
                }
            }
        }
        let eligible = counts.len() as i64;
        let min = if spec.hostname || spec.min_domains.is_some_and(|m| eligible < i64::from(m)) {
            0
        } else {
            counts.values().copied().min().unwrap_or(0)
        };
        for d in &received {
            assert!(
                counts[d] - min <= i64::from(spec.max_skew),
                "{:?}: group {g} ({spec:?}) domain {d} has {} with min {min}: {counts:?}",
                p.strategy,
                counts[d]
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn do_not_schedule_spread_is_never_violated(
        zones in 2usize..=3,
        offered in 1usize..=3,
        groups in prop::collection::vec(group_spec(3), 1..=4),
        sizes in prop::sample::subsequence(vec![2u32, 4, 8], 1..=3),
    ) {
        let offered = offered.min(zones);
        let s = snap(&random_world(zones, offered, &groups, &sizes));
        for strategy in StrategyName::ALL {
            let p = plan(&s, strategy);
            assert_spread_kept(&s, &p, &groups, offered, zones);
            let placed: usize = p.new_nodes.iter().map(|n| n.pods.len()).sum::<usize>()
                + p.on_existing.len()
                + p.on_in_flight.len();
            let pending = s.pods.iter().filter(|p| p.is_pending()).count();
            prop_assert_eq!(placed + p.unschedulable.len(), pending);
        }
    }
}

mod domains;
