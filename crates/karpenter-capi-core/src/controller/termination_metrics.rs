//! Karpenter's node termination metrics for what this controller does, as data (the kube shell
//! only records them): `karpenter_nodes_drained_total`, `karpenter_pods_drained_total`, and the
//! `karpenter_nodes_termination_duration_seconds` summary and
//! `karpenter_nodes_lifetime_duration_seconds` histogram observed when a Node's finalizer comes
//! off. Names, labels and semantics from core v1.14.1: `pkg/controllers/node/termination`
//! (`metrics.go`, `controller.go` finalize and removeFinalizer) and `terminator/metrics.go`,
//! `terminator/eviction.go` (evictionReason).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::action::Action;
use super::karpenter_metrics::LabelSet;
use super::termination::DRAINED;
use crate::model::snapshot::{NodeRecord, Snapshot};
use crate::vocab::keys;

/// The reason label of a pod drained from a node whose claim has no `DisruptionReason` (core
/// evictionReason).
pub const FORCEFUL_TERMINATION: &str = "Forceful Termination";

/// Core's observed (non-counter) metrics this controller reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Observed {
    /// `karpenter_nodes_termination_duration_seconds{nodepool}` (a summary): from the Node's
    /// deletion to the removal of its finalizer.
    NodesTerminationDuration,
    /// `karpenter_nodes_lifetime_duration_seconds{nodepool}` (a histogram): from the Node's
    /// creation to the removal of its finalizer.
    NodesLifetimeDuration,
}

impl Observed {
    /// Both, in exposition order.
    pub const ALL: [Observed; 2] = [
        Observed::NodesTerminationDuration,
        Observed::NodesLifetimeDuration,
    ];

    /// The name under the `karpenter` namespace.
    pub fn name(self) -> &'static str {
        match self {
            Observed::NodesTerminationDuration => "nodes_termination_duration_seconds",
            Observed::NodesLifetimeDuration => "nodes_lifetime_duration_seconds",
        }
    }

    /// Core's help text.
    pub fn help(self) -> &'static str {
        match self {
            Observed::NodesTerminationDuration => {
                "The time taken between a node's deletion request and the removal of its finalizer"
            }
            Observed::NodesLifetimeDuration => "The lifetime duration of the nodes since creation",
        }
    }
}

/// Core's buckets of `karpenter_nodes_lifetime_duration_seconds`, in seconds: 15, 30 and 45
/// minutes; 1, 2, 4, 6, 8, 10, 12, 16 and 20 hours; 1, 2, 3, 5, 10, 15, 20, 25 and 30 days.
pub const LIFETIME_BUCKETS: [f64; 21] = [
    900.0, 1800.0, 2700.0, 3600.0, 7200.0, 14400.0, 21600.0, 28800.0, 36000.0, 43200.0, 57600.0,
    72000.0, 86400.0, 172800.0, 259200.0, 432000.0, 864000.0, 1296000.0, 1728000.0, 2160000.0,
    2592000.0,
];

/// The quantiles core's summaries report (`pkg/metrics/constants.go` SummaryObjectives), over
/// the observations of the last [`SUMMARY_MAX_AGE_SECS`] (client_golang's default window).
pub const SUMMARY_QUANTILES: [f64; 5] = [0.0, 0.5, 0.9, 0.99, 1.0];

/// How long an observation counts toward a summary's quantiles (client_golang's DefMaxAge);
/// its sum and count keep every observation.
pub const SUMMARY_MAX_AGE_SECS: u64 = 600;

/// One observation of an [`Observed`] metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// Which metric.
    pub metric: Observed,
    /// Its labels.
    pub labels: LabelSet,
    /// The value, in seconds.
    pub seconds: f64,
}

fn nodepool_of(labels: &crate::model::labels::Labels) -> LabelSet {
    vec![(
        "nodepool",
        labels.get(keys::NODEPOOL).cloned().unwrap_or_default(),
    )]
}

fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    ((to.as_millisecond() - from.as_millisecond()).max(0)) as f64 / 1000.0
}

/// What the applied actions of a pass observe at `now`: for each Node whose finalizer came
/// off, its lifetime, and, when it was being deleted, its termination duration (core
/// removeFinalizer observes both; a Node whose deletion or creation time is unknown observes
/// only what is known).
pub fn observations<'a>(
    applied: impl IntoIterator<Item = &'a Action>,
    snapshot: &Snapshot,
    now: Timestamp,
) -> Vec<Observation> {
    let mut out = Vec::new();
    for a in applied {
        let Action::RemoveNodeFinalizer { node, .. } = a else {
            continue;
        };
        let Some(n) = snapshot.nodes.iter().find(|n| &n.name == node) else {
            continue;
        };
        if let Some(deleted) = n.deleted_at {
            out.push(Observation {
                metric: Observed::NodesTerminationDuration,
                labels: nodepool_of(&n.labels),
                seconds: seconds_between(deleted, now),
            });
        }
        if let Some(created) = n.created {
            out.push(Observation {
                metric: Observed::NodesLifetimeDuration,
                labels: nodepool_of(&n.labels),
                seconds: seconds_between(created, now),
            });
        }
    }
    out
}

/// The claims of a Node: naming it as their nodeName or carrying its providerID.
fn claims_of<'a>(
    snapshot: &'a Snapshot,
    n: &NodeRecord,
) -> Vec<&'a crate::model::nodeclaim::NodeClaimRecord> {
    snapshot
        .nodeclaims
        .iter()
        .filter(|c| {
            c.node_name.as_ref() == Some(&n.name)
                || (c.provider_id.is_some() && c.provider_id == n.provider_id)
        })
        .collect()
}

/// The labels of `karpenter_nodes_drained_total` when an applied action sets a claim's
/// `Drained` condition True that was not True (core counts the transition once, after the
/// status patch went through, labelled by the Node's NodePool).
pub(crate) fn nodes_drained(a: &Action, snapshot: &Snapshot) -> Option<LabelSet> {
    let Action::SetNodeClaimConditions {
        node_claim, set, ..
    } = a
    else {
        return None;
    };
    if !set.iter().any(|c| c.type_ == DRAINED && c.status == "True") {
        return None;
    }
    let claim = snapshot.nodeclaims.iter().find(|c| &c.name == node_claim)?;
    if claim.condition_true(DRAINED) {
        return None;
    }
    let node = snapshot.nodes.iter().find(|n| {
        claim.node_name.as_ref() == Some(&n.name)
            || (claim.provider_id.is_some() && claim.provider_id == n.provider_id)
    });
    Some(nodepool_of(node.map_or(&claim.labels, |n| &n.labels)))
}

/// The `DisruptionReason` each claim has after the applied actions of a pass: the snapshot's
/// True condition, or the one a disruption command that started this pass wrote (only a
/// voluntary command writes it, as core's queue).
pub(crate) fn disruption_reasons<'a>(
    applied: &[&'a Action],
    snapshot: &'a Snapshot,
) -> BTreeMap<&'a str, &'a str> {
    let mut out: BTreeMap<&str, &str> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| {
            c.conditions
                .iter()
                .find(|k| k.type_ == "DisruptionReason" && k.is_true())
                .map(|k| (c.name.as_str(), k.reason.as_str()))
        })
        .collect();
    for a in applied {
        match a {
            Action::TaintNode {
                node_claim: Some(c),
                reason,
                ..
            } if super::command::is_voluntary(reason) => {
                out.insert(c.as_str(), reason.as_str());
            }
            Action::AbortDisruption {
                node_claim: Some(c),
                ..
            } => {
                out.remove(c.as_str());
            }
            _ => {}
        }
    }
    out
}

/// The `reason` label of `karpenter_pods_drained_total` for a pod evicted from `node` (core
/// terminator evictionReason): its claim's `DisruptionReason` when True, else
/// [`FORCEFUL_TERMINATION`]; empty when the Node is unknown or has no single claim.
pub(crate) fn eviction_reason(
    snapshot: &Snapshot,
    node: &str,
    reasons: &BTreeMap<&str, &str>,
) -> String {
    let Some(n) = snapshot.nodes.iter().find(|n| n.name == node) else {
        return String::new();
    };
    match claims_of(snapshot, n).as_slice() {
        [claim] => reasons
            .get(claim.name.as_str())
            .map_or(FORCEFUL_TERMINATION, |r| *r)
            .to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_buckets_are_cores() {
        let minutes = |m: f64| m * 60.0;
        let hours = |h: f64| h * 3600.0;
        let days = |d: f64| d * 86400.0;
        let mut expected = vec![minutes(15.0), minutes(30.0), minutes(45.0)];
        expected.extend(
            [1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0]
                .iter()
                .map(|h| hours(*h)),
        );
        expected.extend(
            [1.0, 2.0, 3.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
                .iter()
                .map(|d| days(*d)),
        );
        assert_eq!(LIFETIME_BUCKETS.to_vec(), expected);
    }

    #[test]
    fn durations_never_go_negative() {
        let t: Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
        let later: Timestamp = "2026-11-30T10:00:12.5Z".parse().unwrap();
        assert_eq!(seconds_between(t, later), 12.5);
        assert_eq!(seconds_between(later, t), 0.0);
    }
}
