//! How a node is drained, as Karpenter core's terminator does it
//! (`node/termination/terminator/terminator.go`, `utils/pod/scheduling.go`): eviction tiers,
//! the pods never evicted, when a node counts as drained, which reasons are forceful, and when
//! the `terminationGracePeriod` lets pods be deleted regardless of PodDisruptionBudgets.

use jiff::Timestamp;

use super::action::{Action, DISRUPTED_TAINT_KEY};
use super::disruption::Disruption;
use crate::model::duration::NillableDuration;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::PodRecord;

/// Critical pods (system priority classes) go last.
pub fn is_critical(p: &PodRecord) -> bool {
    matches!(
        p.priority_class.as_deref(),
        Some("system-cluster-critical" | "system-node-critical")
    )
}

/// Karpenter's eviction tier of a pod (core `node/termination/terminator/terminator.go`
/// `groupPodsByPriority`): non-critical, non-critical DaemonSet, critical, critical DaemonSet.
pub fn tier(p: &PodRecord) -> u8 {
    u8::from(is_critical(p)) * 2 + u8::from(p.daemon)
}

/// Pods a drain never evicts (core `utils/pod/scheduling.go`): mirror (static) pods, and pods
/// that tolerate the `karpenter.sh/disrupted:NoSchedule` taint.
pub fn never_evicted(p: &PodRecord) -> bool {
    p.mirror
        || p.demand.tolerations.iter().any(|t| {
            t.tolerates(&crate::model::taints::Taint::new(
                DISRUPTED_TAINT_KEY,
                "",
                crate::model::taints::Effect::NoSchedule,
            ))
        })
}

/// Whether a node being disrupted is drained: only pods a drain never evicts are left. DaemonSet
/// pods count like any other (tiers 2 and 4): core's `Drain` returns done only once no pod
/// `IsWaitingEviction`, DaemonSet pods included (`terminator.go`, `utils/pod/scheduling.go`), so
/// their graceful shutdown runs before the Machine goes. The DaemonSet controller does not put
/// them back: they do not tolerate the `karpenter.sh/disrupted:NoSchedule` taint, or they would
/// never be evicted. Terminating pods are waited for.
pub fn drained(pods: &[&PodRecord]) -> bool {
    pods.iter().all(|p| never_evicted(p))
}

/// Expiry (and a user's deletion, see `termination`) drains at once; the other reasons are
/// voluntary and wait for a home for the pods.
pub fn is_forceful(reason: &str) -> bool {
    reason == "Expired"
}

/// Evictions of the first tier of a node's pods still present, in Karpenter's order; a tier
/// goes only after the previous one is gone (terminating pods of an earlier tier hold the next).
/// Terminating pods are not evicted again. Each eviction carries the pod's UID.
pub fn evict(out: &mut Disruption, pods: &[&PodRecord], node: &str, reason: &str, force: bool) {
    let present: Vec<&&PodRecord> = pods.iter().filter(|p| !never_evicted(p)).collect();
    let Some(first) = present.iter().map(|p| tier(p)).min() else {
        return;
    };
    let mut order: Vec<&&&PodRecord> = present
        .iter()
        .filter(|p| tier(p) == first && !p.terminating)
        .collect();
    order.sort_by_key(|p| p.demand.key());
    for p in order {
        out.actions.push(Action::EvictPod {
            target: format!("Pod/{}", p.demand.key()),
            pod: p.demand.key(),
            node: node.to_string(),
            reason: reason.to_string(),
            force,
            uid: p.uid.clone(),
        });
    }
}

/// Whether the drain of a claim's node started longer ago than its `terminationGracePeriod`
/// (the claim's, else its NodePool's; none: never).
pub fn grace_elapsed(pool: &NodePool, claim: &NodeClaimRecord, now: Timestamp) -> bool {
    let Some(Ok(NillableDuration::After(grace))) = claim
        .termination_grace_period
        .as_deref()
        .or(pool.termination_grace_period.as_deref())
        .map(str::parse::<NillableDuration>)
    else {
        return false;
    };
    claim
        .annotations
        .get(super::action::DRAIN_STARTED_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_some_and(|started| now.as_second() - started.as_second() >= grace.as_secs_i64())
}
