//! Why each pending pod is pending: gated, nominated for preemption, waiting for a NodeClaim in
//! flight, room on an existing node, a new node `cost` would provision, or nowhere to go (with
//! the scheduler's reasons as [`Rejection`]s, the enums `explain` gives).

use jiff::Timestamp;
use serde::Serialize;

use crate::model::snapshot::Snapshot;
use crate::sched::Rejection;
use crate::sched::strategy::{StrategyName, by_name};

/// A pending pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPod {
    /// `namespace/name`.
    pub pod: String,
    /// Seconds since creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<i64>,
    /// Why it is pending.
    pub reason: PendingReason,
}

/// Why a pod is pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "reason",
    rename_all = "PascalCase",
    rename_all_fields = "camelCase"
)]
pub enum PendingReason {
    /// It has scheduling gates: nothing is planned for it until they are removed.
    SchedulingGated,
    /// The scheduler nominated a node for it (preemption in progress).
    Nominated,
    /// A NodeClaim launched for it has no Node yet.
    WaitingForNodeClaim {
        /// The claim (its planned node name).
        node_claim: String,
    },
    /// An existing node has room: the scheduler has not bound it yet.
    FitsExistingNode {
        /// The node.
        node: String,
    },
    /// `cost` would provision a new node of this flavor for it.
    WouldProvision {
        /// Instance type.
        instance_type: String,
        /// NodePool.
        node_pool: String,
    },
    /// No existing node or flavor can hold it: one reason per flavor or node.
    Unschedulable {
        /// The reasons, as `explain` gives them.
        rejections: Vec<Rejection>,
    },
}

impl PendingReason {
    /// The reason's name, as in JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            PendingReason::SchedulingGated => "SchedulingGated",
            PendingReason::Nominated => "Nominated",
            PendingReason::WaitingForNodeClaim { .. } => "WaitingForNodeClaim",
            PendingReason::FitsExistingNode { .. } => "FitsExistingNode",
            PendingReason::WouldProvision { .. } => "WouldProvision",
            PendingReason::Unschedulable { .. } => "Unschedulable",
        }
    }
}

/// The pending pods (not bound, not finished, not DaemonSet pods), by `namespace/name`, each with
/// why; the pods that can be planned get `cost`'s plan, as the controller would make it.
pub(crate) fn pending(snapshot: &Snapshot, now: Timestamp) -> Vec<PendingPod> {
    let waiting: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| {
            let p = &snapshot.pods[i];
            p.node_name.is_none() && !p.terminal && !p.daemon && !p.terminating
        })
        .collect();
    let plannable: Vec<usize> = waiting
        .iter()
        .copied()
        .filter(|&i| snapshot.pods[i].is_pending())
        .collect();
    let placement = (!plannable.is_empty() && crate::sched::catalog::validate(snapshot).is_ok())
        .then(|| by_name(StrategyName::Cost).plan(snapshot, &plannable));
    let mut out: Vec<PendingPod> = waiting
        .into_iter()
        .map(|i| {
            let p = &snapshot.pods[i];
            let reason = if p.gated {
                PendingReason::SchedulingGated
            } else if p.nominated {
                PendingReason::Nominated
            } else {
                placement
                    .as_ref()
                    .map(|pl| {
                        if let Some((_, n)) = pl.on_in_flight.iter().find(|(x, _)| *x == i) {
                            PendingReason::WaitingForNodeClaim {
                                node_claim: n.clone(),
                            }
                        } else if let Some((_, n)) = pl.on_existing.iter().find(|(x, _)| *x == i) {
                            PendingReason::FitsExistingNode { node: n.clone() }
                        } else if let Some(n) = pl.new_nodes.iter().find(|n| n.pods.contains(&i)) {
                            PendingReason::WouldProvision {
                                instance_type: n.offering.flavor.instance_type.clone(),
                                node_pool: n.offering.node_pool.clone(),
                            }
                        } else {
                            PendingReason::Unschedulable {
                                rejections: pl
                                    .unschedulable
                                    .iter()
                                    .find(|(x, _)| *x == i)
                                    .map(|(_, r)| r.clone())
                                    .unwrap_or_default(),
                            }
                        }
                    })
                    .unwrap_or(PendingReason::Unschedulable {
                        rejections: Vec::new(),
                    })
            };
            PendingPod {
                pod: p.demand.key(),
                age_seconds: p.created.map(|c| (now.as_second() - c.as_second()).max(0)),
                reason,
            }
        })
        .collect();
    // By key: a live listing and a dump order pods differently.
    out.sort_by(|a, b| a.pod.cmp(&b.pod));
    out
}
