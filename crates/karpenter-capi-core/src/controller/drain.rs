//! How a node is drained, as Karpenter core's terminator does it
//! (`node/termination/terminator/terminator.go` Drain and DeleteExpiringPods,
//! `utils/pod/scheduling.go`): which pods a drain waits for and which it may evict, the eviction
//! tiers, `karpenter.sh/do-not-disrupt` on pods, stuck terminating pods, and the deletions that
//! keep a claim's `terminationGracePeriod`.

use jiff::Timestamp;

use super::action::Action;
use super::disruption::Disruption;
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::snapshot::PodRecord;
use crate::model::taints::{Effect, Taint};
use crate::vocab::keys::DO_NOT_DISRUPT;
use crate::vocab::keys::{DISRUPTED_TAINT_KEY, TERMINATION_TIMESTAMP_ANNOTATION};

/// How long a pod may terminate before a drain stops waiting for it (core
/// `utils/pod/scheduling.go` IsStuckTerminating: one minute past its deletionTimestamp).
pub(crate) const STUCK_TERMINATING_SECS: i64 = 60;

/// The pod grace period the API server defaults `terminationGracePeriodSeconds` to.
pub(crate) const DEFAULT_POD_GRACE_SECS: i64 = 30;

/// Critical pods (system priority classes) go last.
pub(crate) fn is_critical(p: &PodRecord) -> bool {
    matches!(
        p.priority_class.as_deref(),
        Some("system-cluster-critical" | "system-node-critical")
    )
}

/// Karpenter's eviction tier of a pod (core `terminator.go` groupPodsByPriority): non-critical,
/// non-critical DaemonSet, critical, critical DaemonSet.
pub(crate) fn tier(p: &PodRecord) -> u8 {
    u8::from(is_critical(p)) * 2 + u8::from(p.daemon)
}

/// Whether a pod tolerates `karpenter.sh/disrupted:NoSchedule` (core
/// ToleratesDisruptedNoScheduleTaint): it would come straight back, so it is left alone.
pub(crate) fn tolerates_disrupted(p: &PodRecord) -> bool {
    let taint = Taint::new(DISRUPTED_TAINT_KEY, "", Effect::NoSchedule);
    p.demand.tolerations.iter().any(|t| t.tolerates(&taint))
}

/// Pods a drain never evicts nor waits for, whatever the time: mirror (static) pods, which the
/// API server cannot delete, and pods tolerating the disrupted taint.
pub(crate) fn never_evicted(p: &PodRecord) -> bool {
    p.mirror || tolerates_disrupted(p)
}

/// A pod terminating for more than a minute: a drain no longer waits for it (core
/// IsStuckTerminating).
pub(crate) fn stuck_terminating(p: &PodRecord, now: Timestamp) -> bool {
    p.terminating
        && p.deleted_at
            .is_some_and(|d| now.as_second() - d.as_second() > STUCK_TERMINATING_SECS)
}

/// Whether a drain still waits for this pod (core IsWaitingEviction / IsDrainable): not
/// finished, not stuck terminating, not mirror, not tolerating the disrupted taint. Pods with an
/// active `do-not-disrupt` are waited for, though never evicted.
pub(crate) fn waiting_eviction(p: &PodRecord, now: Timestamp) -> bool {
    !p.terminal && !never_evicted(p) && !stuck_terminating(p, now)
}

/// What a pod's `karpenter.sh/do-not-disrupt` annotation says at `now` (core
/// IsDoNotDisruptActive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DoNotDisrupt {
    /// No annotation, or a duration that has elapsed since the pod started.
    Inactive,
    /// `"true"`, or a duration not yet elapsed (a pod without a start time counts as just
    /// started: protected).
    Active,
    /// A value that is neither `"true"` nor a positive Go duration: counts as absent, and is
    /// reported with a Warning Event.
    Invalid(String),
}

/// Reads a pod's `karpenter.sh/do-not-disrupt` at `now`.
pub(crate) fn do_not_disrupt(p: &PodRecord, now: Timestamp) -> DoNotDisrupt {
    let Some(value) = p.annotations.get(DO_NOT_DISRUPT) else {
        return DoNotDisrupt::Inactive;
    };
    if value == "true" {
        return DoNotDisrupt::Active;
    }
    match value.parse::<GoDuration>() {
        Ok(d) if d.as_secs() > 0 => match p.started {
            Some(started) if now.as_second() - started.as_second() >= d.as_secs_i64() => {
                DoNotDisrupt::Inactive
            }
            _ => DoNotDisrupt::Active,
        },
        Ok(_) => DoNotDisrupt::Invalid(format!("duration {value:?} must be positive")),
        Err(e) => DoNotDisrupt::Invalid(e),
    }
}

/// Whether a pod's `do-not-disrupt` protection is active at `now`.
pub(crate) fn do_not_disrupt_active(p: &PodRecord, now: Timestamp) -> bool {
    do_not_disrupt(p, now) == DoNotDisrupt::Active
}

/// Whether a pod would need a new home if its node went (core `utils/pod/scheduling.go`
/// IsReschedulable): running, or a StatefulSet pod terminating (it comes back under its name);
/// not a DaemonSet or mirror pod. A node with none is Empty.
pub(crate) fn reschedulable(p: &PodRecord) -> bool {
    let statefulset = p
        .owner
        .as_deref()
        .is_some_and(|o| o.starts_with("StatefulSet/"));
    !p.terminal && !p.daemon && !p.mirror && (!p.terminating || statefulset)
}

/// Whether a drain may evict this pod now (core IsEvictable): running (not terminating), not
/// mirror, not tolerating the disrupted taint, no active `do-not-disrupt`.
pub(crate) fn evictable(p: &PodRecord, now: Timestamp) -> bool {
    !p.terminal && !p.terminating && !never_evicted(p) && !do_not_disrupt_active(p, now)
}

/// When the node of a deleting claim must be gone, if its `terminationGracePeriod` bounds the
/// drain: Karpenter's `karpenter.sh/nodeclaim-termination-timestamp` annotation, else the
/// claim's deletion time plus its `spec.terminationGracePeriod` (core `nodeclaim/lifecycle`
/// ensureTerminationGracePeriodTerminationTimeAnnotation). `deleted_at` stands in for a claim
/// this very pass deletes.
pub(crate) fn termination_deadline(
    claim: &NodeClaimRecord,
    deleted_at: Option<Timestamp>,
) -> Option<Timestamp> {
    if let Some(t) = claim
        .annotations
        .get(TERMINATION_TIMESTAMP_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok())
    {
        return Some(t);
    }
    let grace = match claim
        .termination_grace_period
        .as_deref()
        .map(str::parse::<NillableDuration>)
    {
        Some(Ok(NillableDuration::After(d))) => d,
        _ => return None,
    };
    let deleted = claim.deleted_at.or(deleted_at)?;
    Timestamp::from_second(deleted.as_second().saturating_add(grace.as_secs_i64())).ok()
}

/// Whether the drain of a node is over: no pod is waited for any more.
pub(crate) fn drained(pods: &[&PodRecord], now: Timestamp) -> bool {
    !pods.iter().any(|p| waiting_eviction(p, now))
}

/// One drain step of a node, as core's terminator takes it each reconcile: pods whose time runs
/// out before `deadline` are deleted with what is left of it (DeleteExpiringPods), then the
/// evictable pods of the first tier still waited for are evicted (a tier goes only after the
/// previous one is gone; pods with an active `do-not-disrupt` hold their tier until they go).
/// Returns whether the node is drained. Invalid `do-not-disrupt` values are reported.
pub(crate) fn drain_step(
    out: &mut Disruption,
    pods: &[&PodRecord],
    node: &str,
    reason: &str,
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> bool {
    let waiting: Vec<&PodRecord> = pods
        .iter()
        .copied()
        .filter(|p| waiting_eviction(p, now))
        .collect();
    let Some(first) = waiting.iter().map(|p| tier(p)).min() else {
        return true;
    };
    let mut deleted = std::collections::BTreeSet::new();
    if let Some(deadline) = deadline {
        let mut due: Vec<&PodRecord> = waiting
            .iter()
            .copied()
            .filter(|p| needs_delete(p, deadline, now))
            .collect();
        due.sort_by_key(|p| p.demand.key());
        for p in due {
            let left = deadline.as_second() - now.as_second();
            out.actions.push(Action::DeletePod {
                target: format!("Pod/{}", p.demand.key()),
                pod: p.demand.key(),
                node: node.to_string(),
                reason: reason.to_string(),
                grace_period_seconds: left.max(1),
                uid: p.uid.clone(),
            });
            deleted.insert(p.demand.key());
        }
    }
    let mut order: Vec<&PodRecord> = waiting
        .iter()
        .copied()
        .filter(|p| tier(p) == first && evictable(p, now) && !deleted.contains(&p.demand.key()))
        .collect();
    order.sort_by_key(|p| p.demand.key());
    for p in order {
        out.actions.push(Action::EvictPod {
            target: format!("Pod/{}", p.demand.key()),
            pod: p.demand.key(),
            node: node.to_string(),
            reason: reason.to_string(),
            uid: p.uid.clone(),
        });
    }
    report_invalid_do_not_disrupt(out, &waiting, now);
    false
}

/// Whether a pod still on a node whose deadline is `deadline` must be deleted now to get its
/// whole `terminationGracePeriodSeconds` before the node goes (core podDeleteTimeWithGracePeriod
/// and IsPodEligibleForForcedEviction): a running pod once `deadline - its grace` has passed; a
/// terminating one only when its own deletion is due after the deadline.
fn needs_delete(p: &PodRecord, deadline: Timestamp, now: Timestamp) -> bool {
    if p.terminating && p.deleted_at.is_none_or(|d| d <= deadline) {
        return false;
    }
    let grace = p.grace_seconds.unwrap_or(DEFAULT_POD_GRACE_SECS).max(0);
    now.as_second() > deadline.as_second().saturating_sub(grace)
}

/// A Warning Event per pod whose `do-not-disrupt` value does not parse (core
/// InvalidDoNotDisruptAnnotationEvent); the pod is treated as unprotected.
fn report_invalid_do_not_disrupt(out: &mut Disruption, pods: &[&PodRecord], now: Timestamp) {
    for p in pods {
        if let DoNotDisrupt::Invalid(why) = do_not_disrupt(p, now) {
            let report = Action::ReportInvalidDoNotDisrupt {
                target: format!("Pod/{}", p.demand.key()),
                pod: p.demand.key(),
                message: format!("ignoring {DO_NOT_DISRUPT} annotation: {why}"),
            };
            if !out.reports.contains(&report) {
                out.reports.push(report);
            }
        }
    }
}
