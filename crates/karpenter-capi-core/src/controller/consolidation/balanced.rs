//! The `Balanced` consolidation policy of Karpenter v1.14.1 (`disruption/balanced.go`), in
//! exact integers: a move is worth making when the share of its NodePool's cost it saves is at
//! least half (`1/k`, k = 2) the share of the pool's disruption cost it causes. A pool's totals
//! are taken over all of its nodes, candidates or not; disruption costs are in units of 2^-27
//! ([`EVICTION_COST_ONE`] per node, plus each reschedulable pod's positive eviction cost), and
//! prices in nano-units per hour, so no comparison here rounds.

use std::collections::BTreeMap;

use super::Candidate;
use crate::model::flavor::Price;
use crate::model::snapshot::{EVICTION_COST_ONE, NodeIndex, Snapshot};

/// The policy's name in `spec.disruption.consolidationPolicy`.
pub(crate) const BALANCED: &str = "Balanced";

/// Karpenter's `BalancedK`: a move passes when its score is at least `1/k`. A constant in
/// v1.14.1 (no NodePool field sets it); [`score_move`] takes it as a parameter for tests.
pub const BALANCED_K: i64 = 2;

/// A NodePool's cost and disruption cost over all of its nodes (Karpenter's `NodePoolTotals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolTotals {
    /// The price per hour of its nodes.
    pub cost: Price,
    /// The disruption cost of draining every one of its nodes, in units of 2^-27.
    pub disruption: i64,
}

/// How a move scores against its pool (Karpenter's `ScoreResult`): the savings and disruption
/// it brings and the pool totals they are fractions of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    /// Price per hour saved (negative: the move costs more).
    pub savings: i64,
    /// Disruption cost of the move, in units of 2^-27.
    pub disruption: i64,
    /// The pool's totals; a zero total scores every move 0.
    pub totals: PoolTotals,
    /// The threshold parameter: approved when the score is at least `1/k`.
    pub k: i64,
}

impl Score {
    /// Whether both totals are positive (otherwise nothing is normalized, and the score is 0).
    fn normalized(&self) -> bool {
        self.totals.cost.0 > 0 && self.totals.disruption > 0
    }

    /// The share of the pool's cost saved (0 without totals).
    pub fn savings_fraction(&self) -> f64 {
        if !self.normalized() {
            return 0.0;
        }
        self.savings as f64 / self.totals.cost.0 as f64
    }

    /// The share of the pool's disruption cost caused (0 without totals).
    pub fn disruption_fraction(&self) -> f64 {
        if !self.normalized() {
            return 0.0;
        }
        self.disruption as f64 / self.totals.disruption as f64
    }

    /// Savings fraction over disruption fraction: 0 when nothing is saved (or there are no
    /// totals), unbounded when nothing is disrupted. For reports; [`Score::approved`] decides
    /// in integers.
    pub fn value(&self) -> f64 {
        if !self.normalized() || self.savings <= 0 {
            return 0.0;
        }
        if self.disruption <= 0 {
            return f64::INFINITY;
        }
        self.savings_fraction() / self.disruption_fraction()
    }

    /// The threshold the score must reach, `1/k`.
    pub fn threshold(&self) -> f64 {
        1.0 / self.k.max(1) as f64
    }

    /// Whether the move passes: something is saved and `k * savings * total disruption >=
    /// disruption * total cost` (the score at least `1/k`, cross-multiplied exactly). Mirrors
    /// Karpenter's `ScoreResult.Approved`.
    pub fn approved(&self) -> bool {
        if !self.normalized() || self.savings <= 0 {
            return false;
        }
        if self.disruption <= 0 {
            return true;
        }
        let k = i128::from(self.k.max(1));
        k * i128::from(self.savings) * i128::from(self.totals.disruption)
            >= i128::from(self.disruption) * i128::from(self.totals.cost.0)
    }
}

/// A move's score (mirrors Karpenter's `ScoreMove`).
pub fn score_move(savings: i64, disruption: i64, totals: PoolTotals, k: i64) -> Score {
    Score {
        savings,
        disruption,
        totals,
        k,
    }
}

/// One node of a move: its pool, whether that pool is `Balanced`, its price and its disruption
/// cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part<'a> {
    /// Its NodePool.
    pub pool: &'a str,
    /// Whether the pool's policy is `Balanced`.
    pub balanced: bool,
    /// Its price per hour.
    pub price: Price,
    /// Its disruption cost, in units of 2^-27.
    pub disruption: i64,
}

/// Whether a move removing `parts` and saving `savings` passes, and each `Balanced` pool's
/// score (mirrors Karpenter's `EvaluateBalancedMove`): a move removing nothing is refused;
/// pools of other policies are not scored and do not hold it back; each `Balanced` pool is
/// scored on its share of the savings (in proportion to the price of its nodes among those
/// removed, when the move spans pools) and its own disruption, against its totals (none:
/// zero totals, refused); the move passes only when every `Balanced` pool approves.
pub fn evaluate_move(
    parts: &[Part<'_>],
    savings: i64,
    totals: &BTreeMap<String, PoolTotals>,
    k: i64,
) -> (bool, BTreeMap<String, Score>) {
    let mut scores = BTreeMap::new();
    if parts.is_empty() {
        return (false, scores);
    }
    let mut pools: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for p in parts.iter().filter(|p| p.balanced) {
        let e = pools.entry(p.pool).or_default();
        e.0 += p.price.0;
        e.1 += p.disruption;
    }
    let spans = parts
        .iter()
        .map(|p| p.pool)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let source: i128 = parts.iter().map(|p| i128::from(p.price.0)).sum();
    let mut all = true;
    for (pool, (price, disruption)) in pools {
        let share = if spans && source > 0 {
            // Rounded toward zero: at most a nano-unit per hour less than the exact share.
            i64::try_from(i128::from(savings) * i128::from(price) / source).unwrap_or(savings)
        } else {
            savings
        };
        let score = score_move(
            share,
            disruption,
            totals.get(pool).copied().unwrap_or_default(),
            k,
        );
        all &= score.approved();
        scores.insert(pool.to_string(), score);
    }
    (all, scores)
}

/// Whether deleting `candidate` outright (the best any move of it can do) would pass its
/// pool's threshold (mirrors Karpenter's `CanPassThreshold`): when not, no trial of it alone
/// can succeed. No totals, or a pool costing nothing: not ruled out here.
pub(crate) fn can_pass(candidate: &Candidate, totals: &PoolTotals) -> bool {
    if totals.cost.0 <= 0 {
        return true;
    }
    score_move(
        candidate.price.0,
        candidate.disruption_cost,
        *totals,
        BALANCED_K,
    )
    .approved()
}

/// The totals of `pool` over all of its nodes (mirrors Karpenter's `computeNodePoolTotals`):
/// each claim of the pool that has a Node and is not being deleted adds its price (0 when its
/// flavor is unknown) and the disruption cost of its node's reschedulable pods
/// ([`super::disruption_cost`]), candidate or not.
pub(crate) fn pool_totals(snapshot: &Snapshot, nodes: &NodeIndex<'_>, pool: &str) -> PoolTotals {
    let mut by_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, p) in snapshot.pods.iter().enumerate() {
        if let Some(n) = p.node_name.as_deref()
            && crate::controller::drain::reschedulable(p)
        {
            by_node.entry(n).or_default().push(i);
        }
    }
    let mut totals = PoolTotals::default();
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.node_pool.as_deref() == Some(pool) && !c.deleting)
    {
        let Some(node) = nodes.of_claim(claim) else {
            continue;
        };
        totals.cost.0 += crate::controller::disruption::claim_price(snapshot, claim).0;
        totals.disruption += by_node
            .get(node.name.as_str())
            .map_or(EVICTION_COST_ONE, |pods| {
                super::disruption_cost(snapshot, pods)
            });
    }
    totals
}
