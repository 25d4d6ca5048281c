//! Karpenter's own metrics for what this controller does, as data: which of core's counters an
//! applied action increments, with core's names, label keys and label values, and the gauges a
//! snapshot sets, so Karpenter's Grafana dashboards read our clusters unchanged. Counters follow
//! what was done (the shell passes only the actions whose writes all succeeded); gauges follow
//! the snapshot of each pass. The kube shell (`kube::metrics`) only records.
//!
//! Upstream (names and labels checked against core, `sigs.k8s.io/karpenter`):
//! `pkg/metrics/metrics.go` and `constants.go` (nodeclaims/nodes created, terminated,
//! disrupted; label keys), `pkg/controllers/disruption/metrics.go` and `queue.go` (decisions),
//! `pkg/controllers/metrics/nodepool/controller.go` (usage, limit),
//! `pkg/controllers/metrics/pod/controller.go` (pods state),
//! `pkg/controllers/provisioning/scheduling/metrics.go` (scheduling duration),
//! `pkg/controllers/node/termination` (nodes and pods drained; see [`super::termination_metrics`]
//! for what termination observes).

use std::collections::BTreeSet;

use serde::Serialize;

use super::Plan;
use super::action::Action;
use crate::model::duration::GoDuration;
use crate::model::labels::Labels;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::vocab::keys;
use crate::vocab::keys::REPLACES_ANNOTATION;
use crate::vocab::reasons::DisruptionReason;
use jiff::Timestamp;

/// Label names and values of one series, in core's label order.
pub type LabelSet = Vec<(&'static str, String)>;

/// Core's counters this controller increments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Counter {
    /// `karpenter_nodeclaims_created_total{reason, nodepool, min_values_relaxed}`.
    NodeClaimsCreated,
    /// `karpenter_nodeclaims_terminated_total{nodepool, capacity_type, zone}`.
    NodeClaimsTerminated,
    /// `karpenter_nodeclaims_disrupted_total{reason, nodepool, capacity_type,
    /// consolidation_policy, termination_mode}`.
    NodeClaimsDisrupted,
    /// `karpenter_pods_disruption_initiated_total` (same labels, by reschedulable pods).
    PodsDisruptionInitiated,
    /// `karpenter_nodes_created_total{nodepool, zone}`.
    NodesCreated,
    /// `karpenter_nodes_terminated_total{nodepool, zone}`.
    NodesTerminated,
    /// `karpenter_voluntary_disruption_decisions_total{decision, reason, consolidation_type}`.
    DisruptionDecisions,
    /// `karpenter_voluntary_disruption_decisions_by_nodepool_total{nodepool, decision, reason,
    /// consolidation_type}`.
    DisruptionDecisionsByNodePool,
    /// `karpenter_nodes_drained_total{nodepool}`: a claim's `Drained` condition became True.
    NodesDrained,
    /// `karpenter_pods_drained_total{reason}`: a pod evicted by a drain, by its claim's
    /// DisruptionReason.
    PodsDrained,
}

impl Counter {
    /// Every counter, in exposition order.
    pub const ALL: [Counter; 10] = [
        Counter::NodeClaimsCreated,
        Counter::NodeClaimsTerminated,
        Counter::NodeClaimsDisrupted,
        Counter::PodsDisruptionInitiated,
        Counter::NodesCreated,
        Counter::NodesTerminated,
        Counter::DisruptionDecisions,
        Counter::DisruptionDecisionsByNodePool,
        Counter::NodesDrained,
        Counter::PodsDrained,
    ];

    /// The name under the `karpenter` namespace, without the `_total` a counter gets on
    /// exposition (`nodeclaims_created` is `karpenter_nodeclaims_created_total`).
    pub fn name(self) -> &'static str {
        match self {
            Counter::NodeClaimsCreated => "nodeclaims_created",
            Counter::NodeClaimsTerminated => "nodeclaims_terminated",
            Counter::NodeClaimsDisrupted => "nodeclaims_disrupted",
            Counter::PodsDisruptionInitiated => "pods_disruption_initiated",
            Counter::NodesCreated => "nodes_created",
            Counter::NodesTerminated => "nodes_terminated",
            Counter::DisruptionDecisions => "voluntary_disruption_decisions",
            Counter::DisruptionDecisionsByNodePool => "voluntary_disruption_decisions_by_nodepool",
            Counter::NodesDrained => "nodes_drained",
            Counter::PodsDrained => "pods_drained",
        }
    }

    /// Core's help text, shortened.
    pub fn help(self) -> &'static str {
        match self {
            Counter::NodeClaimsCreated => {
                "NodeClaims created, by reason, nodepool and whether minValues was relaxed"
            }
            Counter::NodeClaimsTerminated => {
                "NodeClaims terminated, by nodepool, capacity type and zone"
            }
            Counter::NodeClaimsDisrupted => {
                "NodeClaims disrupted, by reason, nodepool, capacity type, consolidation policy and termination mode"
            }
            Counter::PodsDisruptionInitiated => {
                "Pod disruptions initiated (reschedulable pods of disrupted NodeClaims), labelled as nodeclaims_disrupted"
            }
            Counter::NodesCreated => "Nodes registered, by nodepool and zone",
            Counter::NodesTerminated => "Nodes terminated, by nodepool and zone",
            Counter::DisruptionDecisions => {
                "Disruption decisions performed, by decision, reason and consolidation type"
            }
            Counter::DisruptionDecisionsByNodePool => {
                "Disruption decisions performed, by nodepool, decision, reason and consolidation type"
            }
            Counter::NodesDrained => "The total number of nodes drained by Karpenter",
            Counter::PodsDrained => {
                "The total number of pods drained during node termination by Karpenter, labeled by reason"
            }
        }
    }
}

/// One increment of a counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Which counter.
    pub counter: Counter,
    /// Its labels.
    pub labels: LabelSet,
    /// By how much.
    pub by: u64,
}

/// Core's `pretty.ToSnakeCase`: `WhenEmptyOrUnderutilized` -> `when_empty_or_underutilized`.
pub(crate) fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let chars: Vec<char> = s.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn label(labels: &Labels, key: &str) -> String {
    labels.get(key).cloned().unwrap_or_default()
}

/// Core's `DisruptionTerminationMode`: `graceful` without a `terminationGracePeriod`,
/// `forceful` when it is zero, else `eventual`.
fn termination_mode(period: Option<&str>) -> String {
    match period.map(str::parse::<GoDuration>) {
        None => "graceful",
        Some(Ok(d)) if d.as_secs_i64() <= 0 => "forceful",
        Some(_) => "eventual",
    }
    .to_string()
}

fn claim<'a>(snapshot: &'a Snapshot, name: &str) -> Option<&'a NodeClaimRecord> {
    snapshot.nodeclaims.iter().find(|c| c.name == name)
}

/// The labels of `nodeclaims_disrupted_total` for a claim.
fn disrupted_labels(snapshot: &Snapshot, name: &str, reason: &str, policy: &str) -> LabelSet {
    let c = claim(snapshot, name);
    let labels = c.map(|c| c.labels.clone()).unwrap_or_default();
    vec![
        ("reason", reason.to_string()),
        ("nodepool", label(&labels, keys::NODEPOOL)),
        ("capacity_type", label(&labels, keys::CAPACITY_TYPE)),
        ("consolidation_policy", policy.to_string()),
        (
            "termination_mode",
            termination_mode(c.and_then(|c| c.termination_grace_period.as_deref())),
        ),
    ]
}

/// Reasons core's voluntary disruption methods use (the rest are forceful).
fn consolidation_type(reason: DisruptionReason) -> Option<&'static str> {
    match reason {
        DisruptionReason::Empty => Some("empty"),
        DisruptionReason::Underutilized => Some("single"),
        DisruptionReason::Drifted => Some(""),
        DisruptionReason::Expired => None,
    }
}

/// One disruption command of a pass, as core's queue counts it.
struct Decision {
    /// Disruption reason.
    reason: DisruptionReason,
    /// Core's consolidation type (`empty`, `single`, `multi`; empty for drift).
    kind: &'static str,
    /// Its nodes.
    nodes: Vec<String>,
    /// Their NodePools.
    pools: Vec<String>,
}

/// The counters the applied actions increment, in order. `applied` are the actions of one pass
/// whose writes all succeeded (a failed or skipped action counts nothing).
pub fn counts<'a>(
    applied: impl IntoIterator<Item = &'a Action>,
    snapshot: &Snapshot,
) -> Vec<Count> {
    let applied: Vec<&Action> = applied.into_iter().collect();
    let mut out = Vec::new();
    let mut push = |counter, labels, by| {
        out.push(Count {
            counter,
            labels,
            by,
        })
    };
    // Nodes a replacement claim was created for (this pass, or earlier and still there).
    let replaced: BTreeSet<String> = applied
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => manifest
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(REPLACES_ANNOTATION))
                .and_then(|v| v.as_str())
                .map(str::to_string),
            _ => None,
        })
        .chain(
            snapshot
                .nodeclaims
                .iter()
                .filter_map(|c| c.annotations.get(REPLACES_ANNOTATION).cloned()),
        )
        .flat_map(|list| list.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect();
    // One decision per command, as core's queue counts them: all empty nodes of a pass are one
    // command; an underutilized consolidation is one per NodePool (single or multi); each
    // drifted node is one.
    let mut decisions: Vec<Decision> = Vec::new();
    let reasons = super::termination_metrics::disruption_reasons(&applied, snapshot);
    for a in &applied {
        match a {
            Action::EvictPod { node, .. } => push(
                Counter::PodsDrained,
                vec![(
                    "reason",
                    super::termination_metrics::eviction_reason(snapshot, node, &reasons),
                )],
                1,
            ),
            Action::SetNodeClaimConditions { .. } => {
                if let Some(labels) = super::termination_metrics::nodes_drained(a, snapshot) {
                    push(Counter::NodesDrained, labels, 1);
                }
            }
            Action::CreateNodeClaim {
                node_pool,
                reason,
                manifest,
                ..
            } => {
                let relaxed = manifest
                    .pointer("/metadata/annotations/karpenter.sh~1nodeclaim-min-values-relaxed")
                    .and_then(|v| v.as_str())
                    .unwrap_or("false");
                let reason = if reason == "Provisioning" {
                    "provisioned".to_string()
                } else {
                    reason.to_lowercase()
                };
                push(
                    Counter::NodeClaimsCreated,
                    vec![
                        ("reason", reason),
                        ("nodepool", node_pool.clone()),
                        ("min_values_relaxed", relaxed.to_string()),
                    ],
                    1,
                );
            }
            Action::RegisterNode {
                node_claim, labels, ..
            } => {
                let l = claim(snapshot, node_claim).map_or(labels, |c| &c.labels);
                push(
                    Counter::NodesCreated,
                    vec![
                        ("nodepool", label(l, keys::NODEPOOL)),
                        ("zone", label(l, keys::ZONE)),
                    ],
                    1,
                );
            }
            Action::RemoveNodeClaimFinalizer { node_claim, .. } => {
                let l = claim(snapshot, node_claim)
                    .map(|c| c.labels.clone())
                    .unwrap_or_default();
                push(
                    Counter::NodeClaimsTerminated,
                    vec![
                        ("nodepool", label(&l, keys::NODEPOOL)),
                        ("capacity_type", label(&l, keys::CAPACITY_TYPE)),
                        ("zone", label(&l, keys::ZONE)),
                    ],
                    1,
                );
            }
            Action::RemoveNodeFinalizer { node, .. } => {
                let l = snapshot
                    .nodes
                    .iter()
                    .find(|n| &n.name == node)
                    .map(|n| n.labels.clone())
                    .unwrap_or_default();
                push(
                    Counter::NodesTerminated,
                    vec![
                        ("nodepool", label(&l, keys::NODEPOOL)),
                        ("zone", label(&l, keys::ZONE)),
                    ],
                    1,
                );
            }
            Action::DeleteNodeClaim {
                node_claim, reason, ..
            } => {
                // Liveness, garbage collection and expiry (core `nodeclaim/expiration`
                // controller.go: reason `expired`) count as core's do; a voluntary
                // disruption's final delete was counted when it started (TaintNode).
                let reason = match reason.as_str() {
                    "LaunchTimeout" | "RegistrationTimeout" | "GarbageCollected" | "Expired" => {
                        snake_case(reason)
                    }
                    _ => continue,
                };
                push(
                    Counter::NodeClaimsDisrupted,
                    disrupted_labels(snapshot, node_claim, &reason, ""),
                    1,
                );
            }
            // Core counts the disruptions its controllers decide; a claim a user deleted is
            // drained too, but is no disruption.
            Action::TaintNode {
                node,
                reason,
                node_claim: Some(name),
                ..
            } if DisruptionReason::parse(reason).is_some() => {
                let Some(reason) = DisruptionReason::parse(reason) else {
                    continue;
                };
                let pool_name = claim(snapshot, name).and_then(|c| c.node_pool.clone());
                let pool = snapshot
                    .nodepools
                    .iter()
                    .find(|p| Some(&p.name) == pool_name.as_ref());
                // Drift also flows through core's queue; only consolidation reports a policy.
                let policy = match (reason, pool) {
                    (DisruptionReason::Empty | DisruptionReason::Underutilized, Some(p)) => {
                        snake_case(&p.consolidation_policy)
                    }
                    _ => String::new(),
                };
                let labels =
                    disrupted_labels(snapshot, name, &snake_case(reason.as_str()), &policy);
                let pods = snapshot
                    .pods
                    .iter()
                    .filter(|p| {
                        p.node_name.as_deref() == Some(node.as_str())
                            && !p.terminal
                            && !p.daemon
                            && !p.mirror
                    })
                    .count() as u64;
                push(Counter::NodeClaimsDisrupted, labels.clone(), 1);
                push(Counter::PodsDisruptionInitiated, labels, pods);
                let Some(kind) = consolidation_type(reason) else {
                    continue;
                };
                let pool = pool_name.unwrap_or_default();
                let group = match reason {
                    DisruptionReason::Empty => decisions
                        .iter_mut()
                        .find(|d| d.reason == DisruptionReason::Empty),
                    DisruptionReason::Underutilized => decisions.iter_mut().find(|d| {
                        d.reason == DisruptionReason::Underutilized
                            && d.pools.first() == Some(&pool)
                    }),
                    _ => None,
                };
                match group {
                    Some(d) => {
                        d.nodes.push(node.clone());
                        if !d.pools.contains(&pool) {
                            d.pools.push(pool);
                        }
                    }
                    None => decisions.push(Decision {
                        reason,
                        kind,
                        nodes: vec![node.clone()],
                        pools: vec![pool],
                    }),
                }
            }
            _ => {}
        }
    }
    for Decision {
        reason,
        kind,
        nodes,
        pools,
    } in decisions
    {
        let decision = if nodes.iter().any(|n| replaced.contains(n)) {
            "replace"
        } else {
            "delete"
        };
        let kind = if kind == "single" && nodes.len() > 1 {
            "multi"
        } else {
            kind
        };
        let reason = reason.as_str().to_lowercase();
        for pool in pools {
            push(
                Counter::DisruptionDecisionsByNodePool,
                vec![
                    ("nodepool", pool),
                    ("decision", decision.to_string()),
                    ("reason", reason.clone()),
                    ("consolidation_type", kind.to_string()),
                ],
                1,
            );
        }
        push(
            Counter::DisruptionDecisions,
            vec![
                ("decision", decision.to_string()),
                ("reason", reason),
                ("consolidation_type", kind.to_string()),
            ],
            1,
        );
    }
    out
}

/// Core's per-node gauges (`pkg/controllers/metrics/node/controller.go`), under
/// `karpenter_nodes_`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NodeGauge {
    /// `allocatable`: the Node's `status.allocatable`.
    Allocatable,
    /// `total_pod_requests`: the requests of the pods bound to it, DaemonSet pods included.
    TotalPodRequests,
    /// `total_pod_limits`: their limits.
    TotalPodLimits,
    /// `total_daemon_requests`: the requests of its DaemonSet pods.
    TotalDaemonRequests,
    /// `total_daemon_limits`: their limits.
    TotalDaemonLimits,
    /// `system_overhead`: capacity less allocatable.
    SystemOverhead,
    /// `current_lifetime_seconds`: the Node's age (no `resource_type` label).
    CurrentLifetimeSeconds,
}

impl NodeGauge {
    /// Every per-node gauge, in exposition order.
    pub const ALL: [NodeGauge; 7] = [
        NodeGauge::Allocatable,
        NodeGauge::TotalPodRequests,
        NodeGauge::TotalPodLimits,
        NodeGauge::TotalDaemonRequests,
        NodeGauge::TotalDaemonLimits,
        NodeGauge::SystemOverhead,
        NodeGauge::CurrentLifetimeSeconds,
    ];

    /// The name under the `karpenter` namespace.
    pub fn name(self) -> &'static str {
        match self {
            NodeGauge::Allocatable => "nodes_allocatable",
            NodeGauge::TotalPodRequests => "nodes_total_pod_requests",
            NodeGauge::TotalPodLimits => "nodes_total_pod_limits",
            NodeGauge::TotalDaemonRequests => "nodes_total_daemon_requests",
            NodeGauge::TotalDaemonLimits => "nodes_total_daemon_limits",
            NodeGauge::SystemOverhead => "nodes_system_overhead",
            NodeGauge::CurrentLifetimeSeconds => "nodes_current_lifetime_seconds",
        }
    }

    /// Core's help text.
    pub fn help(self) -> &'static str {
        match self {
            NodeGauge::Allocatable => "Node allocatable are the resources allocatable by nodes",
            NodeGauge::TotalPodRequests => {
                "Node total pod requests are the resources requested by pods bound to nodes, including the DaemonSet pods"
            }
            NodeGauge::TotalPodLimits => {
                "Node total pod limits are the resources specified by pod limits, including the DaemonSet pods"
            }
            NodeGauge::TotalDaemonRequests => {
                "Node total daemon requests are the resource requested by DaemonSet pods bound to nodes"
            }
            NodeGauge::TotalDaemonLimits => {
                "Node total daemon limits are the resources specified by DaemonSet pod limits"
            }
            NodeGauge::SystemOverhead => {
                "Node system daemon overhead are the resources reserved for system overhead, the difference between the node's capacity and allocatable values are reported by the status"
            }
            NodeGauge::CurrentLifetimeSeconds => "Node age in seconds",
        }
    }
}

/// Karpenter's well-known node labels and the metric label each becomes (core
/// `getWellKnownLabels`: the part after the `/`, lower case, `-` as `_`).
const WELL_KNOWN_NODE_LABELS: [(&str, &str); 8] = [
    (keys::NODEPOOL, "nodepool"),
    (keys::ZONE, "zone"),
    (keys::REGION, "region"),
    (keys::INSTANCE_TYPE, "instance_type"),
    (keys::ARCH, "arch"),
    (keys::OS, "os"),
    (keys::CAPACITY_TYPE, "capacity_type"),
    ("node.kubernetes.io/windows-build", "windows_build"),
];

/// The gauges of one pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Gauges {
    /// `karpenter_nodepools_usage{resource_type, nodepool}`: what the pool's nodes provide.
    pub nodepool_usage: Vec<(LabelSet, f64)>,
    /// `karpenter_nodepools_limit{resource_type, nodepool}`: `spec.limits`.
    pub nodepool_limit: Vec<(LabelSet, f64)>,
    /// `karpenter_pods_state{name, namespace, owner, node, scheduled, nodepool, zone, arch,
    /// capacity_type, instance_type, phase, ready, managed}`: 1 per pod.
    pub pods_state: Vec<LabelSet>,
    /// The per-node gauges: `{well-known labels, node_name, phase, managed[, resource_type]}`.
    pub nodes: Vec<(NodeGauge, LabelSet, f64)>,
    /// `karpenter_cluster_utilization_percent{resource_type}`: pod requests over allocatable
    /// across every Node.
    pub cluster_utilization: Vec<(LabelSet, f64)>,
}

/// Core's resource_type label: lower case, `-` as `_`.
fn resource_type(name: &str) -> String {
    name.to_lowercase().replace('-', "_")
}

/// A resource amount as core reports it: CPU in cores, the rest in their unit.
fn amount(resource: &str, value: i64) -> f64 {
    if resource == "cpu" {
        value as f64 / 1000.0
    } else {
        value as f64
    }
}

/// The API group of a pod owner kind, for core's owner self link.
fn owner_api_version(kind: &str) -> Option<&'static str> {
    match kind {
        "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Deployment" => Some("apps/v1"),
        "Job" | "CronJob" => Some("batch/v1"),
        "Node" | "ReplicationController" => Some("v1"),
        _ => None,
    }
}

/// A resource list as core's metrics iterate it: `(resource_type, amount)` for each resource
/// present. `always` are reported even at zero (the ones every Node's status lists).
fn listed(r: &Resources, always: bool) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (name, v) in [
        ("cpu", r.cpu_millis),
        ("memory", r.memory_bytes),
        ("pods", r.pods),
    ] {
        if always || v != 0 {
            out.push((name.to_string(), amount(name, v)));
        }
    }
    if r.ephemeral_storage_bytes != 0 {
        out.push((
            "ephemeral_storage".to_string(),
            r.ephemeral_storage_bytes as f64,
        ));
    }
    for (k, v) in r.extended.iter().filter(|(_, v)| **v != 0) {
        out.push((resource_type(k), amount(k, *v)));
    }
    out
}

/// Core's per-node gauges and cluster utilization (`metrics/node/controller.go`
/// buildMetrics, buildClusterUtilizationMetric): every Node, managed when a NodeClaim carries
/// its providerID; the pods bound to it that have not finished.
fn node_gauges(snapshot: &Snapshot, now: Timestamp, out: &mut Gauges) {
    #[derive(Default)]
    struct Bound {
        requests: Resources,
        limits: Resources,
        daemon_requests: Resources,
        daemon_limits: Resources,
    }
    let mut bound: std::collections::HashMap<&str, Bound> = std::collections::HashMap::new();
    for p in snapshot.pods.iter().filter(|p| !p.terminal) {
        let Some(node) = p.node_name.as_deref() else {
            continue;
        };
        let b = bound.entry(node).or_default();
        let mut limits = p.limits.clone();
        limits.pods = 1;
        b.requests.add(&p.demand.requests);
        b.limits.add(&limits);
        if p.owner
            .as_deref()
            .is_some_and(|o| o.starts_with("DaemonSet/"))
        {
            b.daemon_requests.add(&p.demand.requests);
            b.daemon_limits.add(&limits);
        }
    }
    let claimed: std::collections::HashSet<&str> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| c.provider_id.as_deref())
        .filter(|p| !p.is_empty())
        .collect();
    let mut allocatable = Resources::default();
    let mut used = Resources::default();
    for n in &snapshot.nodes {
        let mut labels: LabelSet = WELL_KNOWN_NODE_LABELS
            .iter()
            .map(|(key, name)| (*name, label(&n.labels, key)))
            .collect();
        labels.push(("node_name", n.name.clone()));
        // `status.phase` is deprecated and no kubelet sets it any more: empty, as core reads it.
        labels.push(("phase", String::new()));
        let managed = n
            .provider_id
            .as_deref()
            .is_some_and(|p| claimed.contains(p));
        labels.push(("managed", managed.to_string()));
        let with_type = |r: &str| {
            let mut l = labels.clone();
            l.push(("resource_type", r.to_string()));
            l
        };
        let empty = Bound::default();
        let b = bound.get(n.name.as_str()).unwrap_or(&empty);
        let mut lists: Vec<(NodeGauge, Vec<(String, f64)>)> =
            vec![(NodeGauge::Allocatable, listed(&n.allocatable, true))];
        for (gauge, r) in [
            (NodeGauge::TotalPodRequests, &b.requests),
            (NodeGauge::TotalPodLimits, &b.limits),
            (NodeGauge::TotalDaemonRequests, &b.daemon_requests),
            (NodeGauge::TotalDaemonLimits, &b.daemon_limits),
        ] {
            lists.push((gauge, listed(r, false)));
        }
        if n.capacity != Resources::default() {
            lists.push((
                NodeGauge::SystemOverhead,
                listed(&n.capacity.minus(&n.allocatable), true),
            ));
        }
        for (gauge, list) in lists {
            for (r, v) in list {
                out.nodes.push((gauge, with_type(&r), v));
            }
        }
        if let Some(created) = n.created {
            let age = (now.as_millisecond() - created.as_millisecond()) as f64 / 1000.0;
            out.nodes
                .push((NodeGauge::CurrentLifetimeSeconds, labels.clone(), age));
        }
        allocatable.add(&n.allocatable);
        used.add(&b.requests);
    }
    let totals = listed(&allocatable, false);
    let mut used_list: std::collections::HashMap<String, f64> =
        listed(&used, false).into_iter().collect();
    for (r, total) in totals {
        let u = used_list.remove(&r).unwrap_or(0.0);
        out.cluster_utilization
            .push((vec![("resource_type", r)], 100.0 * u / total));
    }
}

/// The gauges a snapshot sets at `now`.
pub fn gauges(snapshot: &Snapshot, now: Timestamp) -> Gauges {
    let mut out = Gauges::default();
    node_gauges(snapshot, now, &mut out);
    if !snapshot.implicit_nodepool {
        for pool in &snapshot.nodepools {
            let labels = |r: &str| {
                vec![
                    ("resource_type", resource_type(r)),
                    ("nodepool", pool.name.clone()),
                ]
            };
            let (sum, nodes) = super::status::pool_capacity(snapshot, pool);
            let mut usage = vec![
                ("cpu".to_string(), sum.cpu_millis),
                ("memory".to_string(), sum.memory_bytes),
                ("pods".to_string(), sum.pods),
                ("ephemeral-storage".to_string(), sum.ephemeral_storage_bytes),
                ("nodes".to_string(), nodes as i64),
            ];
            usage.extend(sum.extended.iter().map(|(k, v)| (k.clone(), *v)));
            for (r, v) in usage {
                out.nodepool_usage.push((labels(&r), amount(&r, v)));
            }
            for l in &pool.limits {
                out.nodepool_limit
                    .push((labels(&l.resource), amount(&l.resource, l.amount)));
            }
        }
    }
    // Thousands of pods on hundreds of nodes: look nodes up by name.
    let nodes: std::collections::HashMap<&str, &Labels> = snapshot
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), &n.labels))
        .collect();
    let none = Labels::new();
    for p in &snapshot.pods {
        let nl = p
            .node_name
            .as_deref()
            .and_then(|n| nodes.get(n).copied())
            .unwrap_or(&none);
        // Core's self link of the first owner: /apis/<apiVersion>/namespaces/<ns>/<kind>s/<name>.
        let owner = p
            .owner
            .as_deref()
            .and_then(|o| o.split_once('/'))
            .and_then(|(kind, name)| {
                owner_api_version(kind).map(|v| {
                    format!(
                        "/apis/{v}/namespaces/{}/{}s/{name}",
                        p.demand.namespace,
                        kind.to_lowercase()
                    )
                })
            })
            .unwrap_or_default();
        let ready = p.phase.as_deref() == Some("Running")
            && !p.containers.is_empty()
            && p.containers.iter().all(|c| c.ready);
        let node_name = p.node_name.clone().unwrap_or_default();
        out.pods_state.push(vec![
            ("name", p.demand.name.clone()),
            ("namespace", p.demand.namespace.clone()),
            ("owner", owner),
            ("node", node_name.clone()),
            ("scheduled", (!node_name.is_empty()).to_string()),
            ("nodepool", label(nl, keys::NODEPOOL)),
            ("zone", label(nl, keys::ZONE)),
            ("arch", label(nl, keys::ARCH)),
            ("capacity_type", label(nl, keys::CAPACITY_TYPE)),
            ("instance_type", label(nl, keys::INSTANCE_TYPE)),
            ("phase", p.phase.clone().unwrap_or_default()),
            ("ready", ready.to_string()),
            // Core's `managed`: the node's `karpenter.sh/nodepool` label is not empty.
            (
                "managed",
                nl.get(keys::NODEPOOL)
                    .is_some_and(|v| !v.is_empty())
                    .to_string(),
            ),
        ]);
    }
    out
}

/// The actions of a plan (actions, then status, as the executor runs them) paired with whether
/// each was applied, from the executor's per-action outcomes in the same order.
pub fn applied<'a>(plan: &'a Plan, outcomes: &[bool]) -> Vec<&'a Action> {
    plan.actions
        .iter()
        .chain(plan.status.iter())
        .zip(outcomes.iter())
        .filter(|(_, ok)| **ok)
        .map(|(a, _)| a)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// O-MPOD-002/003: a pod's series takes its labels from its node (`managed` when the node's
    /// pool label is set and not empty) and follows its phase.
    #[test]
    fn pod_series_take_their_labels_from_the_node() {
        let text = |phase: &str, ready: bool| {
            format!(
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: worker-1, labels: {{karpenter.sh/nodepool: default, topology.kubernetes.io/zone: gra1, kubernetes.io/arch: amd64, karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: c3-4}}}}\n\
                 ---\napiVersion: v1\nkind: Node\nmetadata: {{name: plain-1, labels: {{karpenter.sh/nodepool: ''}}}}\n\
                 ---\napiVersion: v1\nkind: Pod\nmetadata: {{name: a, namespace: default, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: u, controller: true}}]}}\nspec: {{nodeName: worker-1, containers: [{{name: c}}]}}\nstatus: {{phase: {phase}, containerStatuses: [{{name: c, ready: {ready}, restartCount: 0, image: i, imageID: '', state: {{}}}}]}}\n\
                 ---\napiVersion: v1\nkind: Pod\nmetadata: {{name: b, namespace: default}}\nspec: {{nodeName: plain-1, containers: [{{name: c}}]}}\nstatus: {{phase: Pending}}\n"
            )
        };
        let series = |t: String| {
            let s = crate::model::load::snapshot_from_sources(&[crate::model::load::Source {
                name: "t.yaml".into(),
                text: t,
            }])
            .unwrap();
            gauges(&s, Timestamp::UNIX_EPOCH).pods_state
        };
        let get = |set: &LabelSet, k: &str| {
            set.iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let pods = series(text("Running", true));
        assert_eq!(pods.len(), 2);
        let a = &pods[0];
        for (k, v) in [
            ("name", "a"),
            (
                "owner",
                "/apis/apps/v1/namespaces/default/replicasets/web-1",
            ),
            ("node", "worker-1"),
            ("scheduled", "true"),
            ("nodepool", "default"),
            ("zone", "gra1"),
            ("arch", "amd64"),
            ("capacity_type", "on-demand"),
            ("instance_type", "c3-4"),
            ("phase", "Running"),
            ("ready", "true"),
            ("managed", "true"),
        ] {
            assert_eq!(get(a, k), v, "{k}");
        }
        let b = &pods[1];
        for (k, v) in [
            ("node", "plain-1"),
            ("nodepool", ""),
            ("phase", "Pending"),
            ("ready", "false"),
            ("managed", "false"),
        ] {
            assert_eq!(get(b, k), v, "{k}");
        }
        let a = &series(text("Succeeded", false))[0];
        assert_eq!(
            (get(a, "phase"), get(a, "ready")),
            ("Succeeded".into(), "false".into())
        );
    }

    #[test]
    fn snake_case_is_cores() {
        assert_eq!(
            snake_case("WhenEmptyOrUnderutilized"),
            "when_empty_or_underutilized"
        );
        assert_eq!(snake_case("LaunchTimeout"), "launch_timeout");
        assert_eq!(snake_case("Drifted"), "drifted");
        assert_eq!(snake_case("GarbageCollected"), "garbage_collected");
    }

    #[test]
    fn termination_mode_follows_the_grace_period() {
        assert_eq!(termination_mode(None), "graceful");
        assert_eq!(termination_mode(Some("0s")), "forceful");
        assert_eq!(termination_mode(Some("1h")), "eventual");
    }
}
