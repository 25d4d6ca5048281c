//! Which nodes and domains count: pod (anti-)affinity to running pods, the node-affinity and
//! node-taints policies, custom topology keys, in-flight claims, preferred pod affinity.

use std::collections::BTreeMap;

use super::*;
use karpenter_capi_testkit::Edit;

/// An existing Node in `zone` carrying a `NoSchedule` taint the test pods do not tolerate.
fn tainted_node(name: &str, zone: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{ZONE}: {zone}, kubernetes.io/hostname: {name}}}}}\nspec: {{taints: [{{key: dedicated, value: gpu, effect: NoSchedule}}]}}\nstatus: {{allocatable: {{cpu: 8000m, memory: 64Gi, pods: '110'}}, capacity: {{cpu: 8000m, memory: 64Gi, pods: '110'}}}}\n"
    )
}

#[test]
fn required_zonal_self_affinity_follows_the_existing_pod() {
    // The cheapest flavor is in zone a, but the group's first member already runs in zone c:
    // kube-scheduler's required pod affinity pins every new member to zone c.
    let affinity = "\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: cache}}\n        topologyKey: topology.kubernetes.io/zone";
    let mut y = flavor("m4-a", 4, "a", "0.05");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    y.push_str(&flavor("m4-c", 4, "c", "0.20"));
    y.push_str(&node("node-c", "c", 500));
    y.push_str(&pod("cache-0", "app: cache", Some("node-c"), ""));
    for i in 1..5 {
        y.push_str(&pod(&format!("cache-{i}"), "app: cache", None, affinity));
    }
    let s = snap(&y);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            per_zone(&zones(&s, &p)),
            [("c".to_string(), 4)].into(),
            "{strategy:?}"
        );
    }
}

#[test]
fn required_zonal_anti_affinity_leaves_one_pod_per_zone() {
    let anti = "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: db}}\n        topologyKey: topology.kubernetes.io/zone";
    let mut y = flavor("m4-a", 4, "a", "0.10");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    for i in 0..3 {
        y.push_str(&pod(&format!("db-{i}"), "app: db", None, anti));
    }
    let s = snap(&y);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert_eq!(
            per_zone(&zones(&s, &p)),
            [("a".to_string(), 1), ("b".to_string(), 1)].into(),
            "{strategy:?}"
        );
        assert_eq!(
            p.unschedulable.len(),
            1,
            "{strategy:?}: two zones, three db pods"
        );
    }
}

#[test]
fn node_taints_policy_decides_whether_a_tainted_zone_counts() {
    // Zone c holds only a node the pods do not tolerate. Under the default `Ignore` it is still a
    // domain with 0 matching pods, so after one pod each in a and b the skew would reach 2: two
    // pods stay pending (kube-scheduler's behaviour). `Honor` leaves zone c out.
    let world = |more: &str| {
        let mut y = flavor("m4-a", 4, "a", "0.10");
        y.push_str(&flavor("m4-b", 4, "b", "0.10"));
        y.push_str(&tainted_node("gpu-c", "c"));
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
    let ignore = world("");
    let honor = world(", nodeTaintsPolicy: Honor");
    for strategy in StrategyName::ALL {
        let p = plan(&ignore, strategy);
        assert_eq!(
            per_zone(&zones(&ignore, &p)),
            [("a".to_string(), 1), ("b".to_string(), 1)].into(),
            "{strategy:?}"
        );
        assert_eq!(p.unschedulable.len(), 2, "{strategy:?}");
        let p = plan(&honor, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            per_zone(&zones(&honor, &p)),
            [("a".to_string(), 2), ("b".to_string(), 2)].into(),
            "{strategy:?}"
        );
    }
}

#[test]
fn node_affinity_policy_decides_whether_an_excluded_zone_counts() {
    // The pods may only run in zones a and b. Under the default `Honor` zone c is no domain of
    // theirs; under `Ignore` it counts with 0 pods and caps the others at one each.
    let world = |more: &str| {
        let only_a_b = "\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a, b]}]";
        let mut y = three_zones();
        for i in 0..4 {
            y.push_str(&pod(
                &format!("web-{i}"),
                "app: web",
                None,
                &format!(
                    "{only_a_b}{}",
                    spread(ZONE, 1, "DoNotSchedule", "app: web", more)
                ),
            ));
        }
        snap(&y)
    };
    let honor = world("");
    let ignore = world(", nodeAffinityPolicy: Ignore");
    for strategy in StrategyName::ALL {
        let p = plan(&honor, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            per_zone(&zones(&honor, &p)),
            [("a".to_string(), 2), ("b".to_string(), 2)].into(),
            "{strategy:?}"
        );
        let p = plan(&ignore, strategy);
        assert_eq!(
            per_zone(&zones(&ignore, &p)),
            [("a".to_string(), 1), ("b".to_string(), 1)].into(),
            "{strategy:?}"
        );
        assert_eq!(p.unschedulable.len(), 2, "{strategy:?}");
    }
}

#[test]
fn a_custom_topology_key_spreads_over_its_label_values() {
    // Spread over a rack label carried by the flavors: any key works, not only zone/hostname.
    let rack_flavor = |name: &str, rack: &str| {
        flavor(name, 4, "a", "0.10").edit(
            &format!("{ZONE}=a"),
            &format!("{ZONE}=a,example.com/rack={rack}"),
        )
    };
    let mut y = rack_flavor("m4-r1", "r1");
    y.push_str(&rack_flavor("m4-r2", "r2"));
    for i in 0..4 {
        y.push_str(&pod(
            &format!("web-{i}"),
            "app: web",
            None,
            &spread("example.com/rack", 1, "DoNotSchedule", "app: web", ""),
        ));
    }
    let s = snap(&y);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        let mut racks = BTreeMap::new();
        for n in &p.new_nodes {
            let rack = n.offering.labels.get("example.com/rack").cloned();
            *racks.entry(rack.unwrap_or_default()).or_insert(0) += n.pods.len();
        }
        assert_eq!(
            racks,
            [("r1".to_string(), 2), ("r2".to_string(), 2)].into(),
            "{strategy:?}"
        );
    }
}

/// A NodeClaim launched for `m4-{zone}` whose Node has not registered yet.
fn in_flight_claim(name: &str, zone: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m4-{zone}, {ZONE}: {zone}}}\n  annotations: {{karpenter-capi/machine-deployment: capi/m4-{zone}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{conditions: [{{type: Launched, status: 'True'}}]}}\n"
    )
}

#[test]
fn pods_planned_onto_an_in_flight_claim_count_in_its_zone() {
    // Room for all four pods on the claim launching in zone a; spread over a and b allows two
    // there only if the claim's pods count toward zone a, as Karpenter counts in-flight nodes.
    let mut y = flavor("m4-a", 4, "a", "0.10");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    y.push_str(&in_flight_claim("default-x", "a"));
    for i in 0..4 {
        y.push_str(&pod(
            &format!("web-{i}"),
            "app: web",
            None,
            &spread(ZONE, 1, "DoNotSchedule", "app: web", ""),
        ));
    }
    let s = snap(&y);
    assert_eq!(s.in_flight_claims().count(), 1);
    for strategy in StrategyName::ALL {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        let mut counts = per_zone(&zones(&s, &p));
        for (_, claim) in &p.on_in_flight {
            assert_eq!(claim, "default-x", "{strategy:?}");
            *counts.entry("a".to_string()).or_insert(0) += 1;
        }
        // Karpenter tries existing and in-flight nodes first for every pod; Cluster
        // Autoscaler places on upcoming nodes only before it estimates a scale-up, so its
        // last pod gets a node of its own in zone a.
        let on_claim = if strategy == StrategyName::LeastWaste {
            1
        } else {
            2
        };
        assert_eq!(p.on_in_flight.len(), on_claim, "{strategy:?}");
        assert_eq!(p.new_nodes.len(), 3 - on_claim, "{strategy:?}");
        assert_eq!(
            counts,
            BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 2)]),
            "{strategy:?}"
        );
    }
}

#[test]
fn preferred_pod_affinity_follows_its_peer_while_it_can_then_is_relaxed() {
    // The peer runs in zone b; the pods prefer its zone. The cheaper flavor is in zone a, so
    // only the preference takes them to b.
    let pref = "\n  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 5\n        podAffinityTerm: {labelSelector: {matchLabels: {app: cache}}, topologyKey: topology.kubernetes.io/zone}";
    let mut y = flavor("m4-a", 4, "a", "0.05");
    y.push_str(&flavor("m4-b", 4, "b", "0.10"));
    y.push_str(&node("n-b", "b", 600));
    y.push_str(&pod("cache-0", "app: cache", Some("n-b"), ""));
    y.push_str(&pod("web-0", "app: web", None, pref));
    let s = snap(&y);
    let p = plan(&s, StrategyName::Cost);
    assert!(p.unschedulable.is_empty());
    assert!(p.relaxed.is_empty(), "{:?}", p.relaxed);
    assert_eq!(zones(&s, &p).get("web-0").map(String::as_str), Some("b"));

    // No zone b to be had (its flavor gone, the node full): the preference is dropped, with a
    // note, and the pod goes to zone a.
    let mut y = flavor("m4-a", 4, "a", "0.05");
    y.push_str(&node("n-b", "b", 500));
    y.push_str(&pod("cache-0", "app: cache", Some("n-b"), ""));
    y.push_str(&pod("web-0", "app: web", None, pref));
    let s = snap(&y);
    let p = plan(&s, StrategyName::Cost);
    assert!(p.unschedulable.is_empty());
    assert_eq!(zones(&s, &p).get("web-0").map(String::as_str), Some("a"));
    assert_eq!(p.relaxed.len(), 1);
    assert_eq!(p.relaxed[0].1.len(), 1, "{:?}", p.relaxed);
    assert!(
        p.relaxed[0].1[0].starts_with("dropped preferred pod affinity (weight 5)"),
        "{:?}",
        p.relaxed[0].1
    );
}
