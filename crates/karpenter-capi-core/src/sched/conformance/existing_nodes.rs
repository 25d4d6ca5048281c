//! Existing and initialized nodes, after core v1.14's scheduling `suite_test.go` (`In-Flight
//! Nodes › Taints`, `Existing Nodes › Daemonsets`) and `topology_test.go` (skew already
//! violated), in our own inputs through `cost`: an initialized node's startup and not-ready
//! taints keep pods off, a bound DaemonSet pod takes room and an unbound one that cannot run
//! there takes none, and spread pods only go to the emptier zones.

use std::collections::BTreeMap;

use super::{daemonset, flavor, plan, pod, snap};
use crate::sched::strategy::StrategyName::Cost;
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// A Ready Node `name` of `cpu` cores in zone `zone` with provider ID `test:///{name}` and
/// these extra spec fields.
fn node(name: &str, zone: &str, cpu: u32, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, {ZONE}: {zone}, karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true'}}}}\nspec: {{providerID: 'test:///{name}'{spec}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, capacity: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
    )
}

/// The initialized NodeClaim of node `name`, launched for `capi/{md}`, with extra spec fields.
fn initialized_claim(name: &str, md: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: claim-{name}\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: {md}}}\n  annotations: {{karpenter-capi/machine-deployment: capi/{md}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []{spec}}}\nstatus: {{providerID: 'test:///{name}', nodeName: {name}, conditions: [{{type: Launched, status: 'True'}}, {{type: Registered, status: 'True'}}, {{type: Initialized, status: 'True'}}]}}\n"
    )
}

/// A Running pod bound to `node`.
fn bound(name: &str, labels: &str, cpu: &str, node: &str, spec: &str) -> String {
    pod(name, labels, cpu, "", &format!("\n  nodeName: {node}{spec}")).replace(
        "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}",
        "status: {phase: Running}",
    )
}

/// Once its claim is initialized, a node still carrying its startup taint (S-SCHED-125) or a
/// NoExecute not-ready taint (S-SCHED-122) takes no pod that does not tolerate it: a new node
/// is bought. Without the taint the node takes the pod.
#[test]
fn an_initialized_node_keeps_its_taints() {
    let flavors = flavor("c4", 4, "0.10", &format!("{ZONE}=z1"));
    let startup = ", startupTaints: [{key: example.com/agent, effect: NoSchedule}]";
    for (taint, claim_spec) in [
        ("{key: example.com/agent, effect: NoSchedule}", startup),
        ("{key: node.kubernetes.io/not-ready, effect: NoExecute}", ""),
    ] {
        let text = POOL.to_string()
            + &flavors
            + &node("n1", "z1", 4, &format!(", taints: [{taint}]"))
            + &initialized_claim("n1", "c4", claim_spec)
            + &pod("p", "app: p", "1", "", "");
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert!(p.on_existing.is_empty(), "{taint}");
        assert_eq!(p.new_nodes.len(), 1, "{taint}");
    }
    let text = POOL.to_string()
        + &flavors
        + &node("n1", "z1", 4, "")
        + &initialized_claim("n1", "c4", "")
        + &pod("p", "app: p", "1", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(p.on_existing.len(), 1);
    assert!(p.new_nodes.is_empty());
}

/// A DaemonSet pod bound to a node takes its room, whether or not our estimate expected it
/// (S-SCHED-128); a DaemonSet that cannot run on the node (it selects another zone) reserves
/// nothing there (S-SCHED-138).
#[test]
fn daemonset_pods_on_existing_nodes() {
    let flavors = flavor("c4", 4, "0.10", &format!("{ZONE}=z1"));
    let ds_pod = bound("agent-n1", "app: agent", "1", "n1", "").replace(
        "namespace: default,",
        "namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, controller: true}],",
    );
    assert!(ds_pod.contains("DaemonSet"));
    let text = POOL.to_string()
        + &flavors
        + &node("n1", "z1", 2, "")
        + &ds_pod
        + &pod("p", "app: p", "1500m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.on_existing.is_empty());
    assert_eq!(p.new_nodes.len(), 1);
    let elsewhere = daemonset(
        "zonal-agent",
        "1",
        "",
        &format!("\n      nodeSelector: {{{ZONE}: z2}}"),
    );
    let text = POOL.to_string()
        + &flavors
        + &node("n1", "z1", 2, "")
        + &elsewhere
        + &pod("p", "app: p", "1500m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(p.on_existing.len(), 1);
    assert!(p.new_nodes.is_empty());
}

/// Zone z1 already holds three pods of a zonal spread and the others none: of three new pods
/// none goes to z1, new node or not; they split 1 and 2 over z2 and z3 (S-TOPO-013).
#[test]
fn a_violated_skew_only_fills_the_emptier_zones() {
    let spread = format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: s}}}}}}]"
    );
    let mut text = POOL.to_string()
        + &(1..=3)
            .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
            .collect::<String>()
        + &node("n1", "z1", 8, "");
    for i in 0..3 {
        text.push_str(&bound(&format!("old{i}"), "app: s", "1100m", "n1", &spread));
    }
    for i in 0..3 {
        text.push_str(&pod(&format!("new{i}"), "app: s", "1100m", "", &spread));
    }
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
    assert!(p.on_existing.is_empty());
    let mut per_zone: BTreeMap<String, usize> = BTreeMap::new();
    for n in &p.new_nodes {
        *per_zone
            .entry(n.offering.labels.get(ZONE).cloned().unwrap_or_default())
            .or_default() += n.pods.len();
    }
    assert!(!per_zone.contains_key("z1"), "{per_zone:?}");
    let mut counts: Vec<usize> = per_zone.into_values().collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 2]);
}

/// Pods in every zone repelling `security: s2` by zone keep a plain pod with that label pending
/// when already bound (S-TOPO-075); bound pods that only prefer to repel it do not (S-TOPO-076).
/// Planned in the same batch, one of the four pods waits (S-TOPO-073).
#[test]
fn anti_affinity_of_other_pods_keeps_a_plain_pod_out() {
    let flavors: String = (1..=3)
        .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
        .collect();
    let term = format!("{{labelSelector: {{matchLabels: {{security: s2}}}}, topologyKey: {ZONE}}}");
    let hard = format!(
        "\n  affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}}}"
    );
    let soft = format!(
        "\n  affinity: {{podAntiAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 10, podAffinityTerm: {term}}}]}}}}"
    );
    let plain = pod("plain", "security: s2", "100m", "", "");
    // In one batch, each repeller pinned to its zone.
    let mut text = POOL.to_string() + &flavors;
    for z in 1..=3 {
        text.push_str(&pod(
            &format!("guard-z{z}"),
            "app: guard",
            "2",
            "",
            &format!("\n  nodeSelector: {{{ZONE}: z{z}}}{hard}"),
        ));
    }
    // Exactly one of the four waits: upstream places the larger repellers first and the plain
    // pod waits; `cost` may place the plain pod and leave a repeller waiting (as many placed).
    let s = snap(&(text + &plain));
    let p = plan(&s, Cost);
    assert_eq!(super::unschedulable(&s, &p).len(), 1);
    assert_eq!(p.new_nodes.len(), 3);
    // Already bound on a node in each zone.
    for (affinity, pending) in [(&hard, true), (&soft, false)] {
        let mut text = POOL.to_string() + &flavors;
        for z in 1..=3 {
            let name = format!("n{z}");
            text.push_str(&node(&name, &format!("z{z}"), 4, ""));
            text.push_str(&bound(
                &format!("guard-z{z}"),
                "app: guard",
                "2",
                &name,
                affinity,
            ));
        }
        let s = snap(&(text + &plain));
        let p = plan(&s, Cost);
        assert_eq!(
            super::unschedulable(&s, &p).is_empty(),
            !pending,
            "required {pending}"
        );
    }
}

/// maxSkew 5: z1 and z2 hold one pod each on full nodes and the pool now offers only z3; of ten
/// new pods six go to z3 (1 + 5) and four wait (S-TOPO-012).
#[test]
fn a_large_skew_fills_the_only_reachable_zone_to_its_limit() {
    let spread = format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 5, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: s}}}}}}]"
    );
    let only_z3 = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: [{{key: {ZONE}, operator: In, values: [z3]}}]\n"
    );
    let mut text = only_z3
        + &(1..=3)
            .map(|z| flavor(&format!("c2-z{z}"), 2, "0.05", &format!("{ZONE}=z{z}")))
            .collect::<String>();
    for z in 1..=2 {
        let name = format!("n{z}");
        text.push_str(&node(&name, &format!("z{z}"), 1, ""));
        text.push_str(&bound(&format!("old{z}"), "app: s", "1", &name, &spread));
    }
    for i in 0..10 {
        text.push_str(&pod(&format!("new{i}"), "app: s", "1100m", "", &spread));
    }
    let s = snap(&text);
    let p = plan(&s, Cost);
    let in_z3: usize = p
        .new_nodes
        .iter()
        .filter(|n| n.offering.labels.get(ZONE).map(String::as_str) == Some("z3"))
        .map(|n| n.pods.len())
        .sum();
    assert_eq!(in_z3, 6);
    assert_eq!(p.unschedulable.len(), 4);
    assert!(p.on_existing.is_empty());
}
