//! Whether the consolidation search may be skipped this pass, as Karpenter v1.14.1 skips it:
//! core's `disruption/consolidation.go` `IsConsolidated` compares the cluster's consolidation
//! state (`state/cluster.go` `ConsolidationState`, a timestamp `MarkUnconsolidated` moves on
//! every pod binding or deletion, Node or NodeClaim added, removed, initialized or marked for
//! deletion, and NodePool change, and that moves by itself after 5 minutes without a change)
//! with the one `markConsolidated` recorded when a search found nothing and no candidate was
//! held back by a budget.
//!
//! The controller keeps no state outside the cluster, so the memo is a cache held by the
//! running process (as upstream's in-memory cluster state is): [`super::plan_with`] takes it
//! and returns it updated. A restart loses it, and the first pass searches again: harmless.
//! Instead of change events, a pass fingerprints what those events would have changed.
//!
//! One deliberate difference: a claim that becomes a consolidation candidate (its
//! `consolidateAfter` elapsed: Karpenter's `Consolidatable` condition) changes the fingerprint
//! too, so it is considered at once rather than at the next 5-minute search.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use jiff::Timestamp;

use crate::model::snapshot::Snapshot;

/// After this long without a change, a search runs again anyway (core `ConsolidationState`:
/// something the cluster cannot see, such as a flavor's availability, may have changed).
pub(crate) const FORCE_SEARCH_SECS: i64 = 300;

/// What the last consolidation searches concluded, per NodePool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsolidationMemo {
    pools: BTreeMap<String, PoolMemo>,
    /// The pods seen arriving and leaving (a replacement must pay back while the load falls).
    pub(crate) flow: super::pod_flow::PodFlow,
}

/// One pool's last search: the fingerprint it searched, where its single-node trials stopped
/// (their cap reached with candidates left), and when it settled (found nothing after trying
/// every candidate, none held back by a budget: core `markConsolidated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PoolMemo {
    fingerprint: u64,
    next: usize,
    settled_at: Option<Timestamp>,
}

/// What this pass's search of a pool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Nothing changed since a search that settled, less than 5 minutes ago: no search (core
    /// `IsConsolidated`).
    Skip,
    /// The same cluster as a search that stopped at its single-node trial cap: its multi-node
    /// search already failed on it, so only single-node trials run, from this candidate on
    /// (every candidate gets its turn, as core's single-node pass tries them all).
    Resume(usize),
    /// A full search: multi-node, then single-node from the first candidate.
    Fresh,
}

impl ConsolidationMemo {
    /// How `pool`'s search runs over `fingerprint` at `now`.
    pub(crate) fn gate(&self, pool: &str, fingerprint: u64, now: Timestamp) -> Gate {
        let Some(m) = self
            .pools
            .get(pool)
            .filter(|m| m.fingerprint == fingerprint)
        else {
            return Gate::Fresh;
        };
        match m.settled_at {
            Some(at) if now >= at && now.as_second() - at.as_second() < FORCE_SEARCH_SECS => {
                Gate::Skip
            }
            Some(_) => Gate::Fresh,
            None => Gate::Resume(m.next),
        }
    }

    /// Records how `pool`'s search over `fingerprint` ended at `now`: `found` a decision
    /// (carried out or deferred), `limited` by a budget (some candidates could not be in a
    /// decision), `next` the first candidate its single-node trials did not reach (None: they
    /// reached the last one). Only a search that found nothing, tried everyone and was not
    /// limited settles; a limited one is searched again in full next pass (core leaves the
    /// state unconsolidated when `constrainedByBudgets`).
    pub(crate) fn record(
        &mut self,
        pool: &str,
        fingerprint: u64,
        now: Timestamp,
        found: bool,
        limited: bool,
        next: Option<usize>,
    ) {
        let entry = match (found, next, limited) {
            (true, _, _) | (false, None, true) => None,
            (false, Some(next), _) => Some(PoolMemo {
                fingerprint,
                next,
                settled_at: None,
            }),
            (false, None, false) => Some(PoolMemo {
                fingerprint,
                next: 0,
                settled_at: Some(now),
            }),
        };
        match entry {
            Some(e) => {
                self.pools.insert(pool.to_string(), e);
            }
            None => {
                self.pools.remove(pool);
            }
        }
    }

    /// Forgets pools that no longer exist (the memo never outgrows the cluster).
    pub(crate) fn retain_pools(&mut self, snapshot: &Snapshot) {
        self.pools
            .retain(|p, _| snapshot.nodepools.iter().any(|np| &np.name == p));
    }

    /// When `pool`'s last search settled (found nothing, tried every candidate, no budget
    /// held any back), if it did and nothing has unsettled it since.
    pub fn settled_at(&self, pool: &str) -> Option<Timestamp> {
        self.pools.get(pool).and_then(|m| m.settled_at)
    }

    /// When a search that settled is forced again (core `ConsolidationState` moving by itself
    /// after 5 minutes), or the pod flow's verdict changes by itself: a clock of the plan.
    pub(crate) fn next_change(&self, now: Timestamp) -> Option<Timestamp> {
        self.pools
            .values()
            .filter_map(|m| m.settled_at)
            .filter_map(|at| {
                at.checked_add(jiff::SignedDuration::from_secs(FORCE_SEARCH_SECS))
                    .ok()
            })
            .chain(self.flow.changes_at(now))
            .min()
    }

    /// Whether some pool's search stopped at its trial cap and goes on next pass.
    pub(crate) fn resuming(&self) -> bool {
        self.pools.values().any(|m| m.settled_at.is_none())
    }

    /// Whether nothing is remembered (a fresh process).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }
}

/// A fingerprint of what core's `MarkUnconsolidated` watches: which pods exist and where they
/// are bound (pending ones included: they take room first), the Nodes (readiness, deletion,
/// cordon, taints, allocatable), the NodeClaims (deletion, initialization, their node), the
/// NodePools and the flavors on offer; and whether recent arrivals forecast more and whether
/// the load is `falling` (each holds back replacements: their end is a change). Computed once
/// per pass, only when some pool has candidates.
pub(crate) fn cluster_fingerprint(snapshot: &Snapshot, growing: bool, falling: bool) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    (growing, falling).hash(&mut h);
    snapshot.pods.len().hash(&mut h);
    for p in &snapshot.pods {
        p.demand.namespace.hash(&mut h);
        p.demand.name.hash(&mut h);
        p.node_name.hash(&mut h);
        (
            p.terminal,
            p.terminating,
            p.nominated,
            p.marked_unschedulable,
        )
            .hash(&mut h);
    }
    snapshot.nodes.len().hash(&mut h);
    for n in &snapshot.nodes {
        n.name.hash(&mut h);
        n.provider_id.hash(&mut h);
        (n.ready, n.deleting, n.unschedulable).hash(&mut h);
        n.taints.hash(&mut h);
        n.allocatable.hash(&mut h);
    }
    snapshot.nodeclaims.len().hash(&mut h);
    for c in &snapshot.nodeclaims {
        c.name.hash(&mut h);
        c.deleting.hash(&mut h);
        c.condition_true("Initialized").hash(&mut h);
        c.node_name.hash(&mut h);
        c.provider_id.hash(&mut h);
    }
    for p in &snapshot.nodepools {
        // A change of its spec (core's NodePool informer marks the state unconsolidated); not
        // its status, which follows the fleet.
        format!(
            "{:?}",
            (
                &p.name,
                p.weight,
                &p.requirements,
                &p.labels,
                &p.taints,
                &p.limits,
                &p.consolidation_policy,
                &p.consolidate_after,
                &p.budgets,
            )
        )
        .hash(&mut h);
    }
    for md in &snapshot.machine_deployments {
        md.key().hash(&mut h);
        md.member.hash(&mut h);
        if let Ok(f) = &md.flavor {
            f.instance_type.hash(&mut h);
            f.price.hash(&mut h);
            f.capacity.hash(&mut h);
        }
    }
    h.finish()
}

/// One pool's fingerprint: the cluster's, the pool, its candidates (claim names, in order) and
/// the budget room the search had.
pub(crate) fn pool_fingerprint(cluster: u64, pool: &str, candidates: &[&str], room: usize) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    cluster.hash(&mut h);
    pool.hash(&mut h);
    candidates.hash(&mut h);
    room.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn a_settled_search_holds_until_five_minutes_or_a_change() {
        let mut m = ConsolidationMemo::default();
        assert_eq!(m.gate("default", 7, at(0)), Gate::Fresh);
        m.record("default", 7, at(0), false, false, None);
        assert_eq!(m.gate("default", 7, at(0)), Gate::Skip);
        assert_eq!(m.gate("default", 7, at(299)), Gate::Skip);
        assert_eq!(m.gate("default", 7, at(300)), Gate::Fresh);
        assert_eq!(m.gate("default", 8, at(10)), Gate::Fresh);
        assert_eq!(m.gate("other", 7, at(10)), Gate::Fresh);
    }

    #[test]
    fn found_limited_or_partial_searches_never_settle() {
        let mut m = ConsolidationMemo::default();
        m.record("default", 7, at(0), false, false, None);
        m.record("default", 7, at(10), false, true, None);
        assert_eq!(m.gate("default", 7, at(20)), Gate::Fresh);
        m.record("default", 7, at(30), false, false, None);
        m.record("default", 7, at(40), true, false, None);
        assert_eq!(m.gate("default", 7, at(50)), Gate::Fresh);
        assert!(m.is_empty());
        m.record("default", 7, at(60), false, true, Some(20));
        assert_eq!(m.gate("default", 7, at(70)), Gate::Resume(20));
        assert_eq!(m.gate("default", 9, at(70)), Gate::Fresh);
    }
}
