//! The exact optimum for small batches: dynamic programming over subsets of pods,
//! `best(S) = min over T ∋ lowest(S) that fits one node: single(T) + best(S \ T)`, with the
//! objective (price, CPU capacity, memory capacity, nodes) compared lexicographically.

use super::{Allowed, conflict};
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::Offering;
use crate::sched::strategy::Budget;

/// Batches up to this many pods are solved exactly (3^n subset pairs).
pub(crate) const EXACT_LIMIT: usize = 12;

/// Lexicographic objective: price, then total CPU capacity, memory capacity, node count.
type Objective = (i64, i64, i64, i64);

fn objective(o: &Offering) -> Objective {
    (
        o.flavor.price.0,
        o.flavor.capacity.cpu_millis,
        o.flavor.capacity.memory_bytes,
        1,
    )
}

fn add(a: Objective, b: Objective) -> Objective {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
}

/// A node of the solution: (offering, pods).
pub(crate) type SolvedNode = (usize, Vec<usize>);

/// The optimal nodes for `pods`, or None when there are too many offerings for the bit masks.
pub(crate) fn solve(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Option<Vec<SolvedNode>> {
    let n = pods.len();
    if n == 0 {
        return Some(Vec::new());
    }
    if offerings.len() > 128 {
        return None;
    }
    let full = (1usize << n) - 1;
    let demands: Vec<&PodDemand> = pods.iter().map(|&p| &*snapshot.pods[p].demand).collect();
    let mut conflicts = vec![0usize; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && conflict(demands[i], demands[j]) {
                conflicts[i] |= 1 << j;
            }
        }
    }
    let masks: Vec<u128> = pods
        .iter()
        .map(|&p| allowed.list(p).iter().fold(0u128, |m, &o| m | (1u128 << o)))
        .collect();
    // Per subset: summed requests, offerings every member may use, free of conflicts.
    let mut sums = vec![Resources::default(); full + 1];
    let mut usable = vec![0u128; full + 1];
    let mut clean = vec![true; full + 1];
    usable[0] = u128::MAX;
    let mut single: Vec<Option<(Objective, usize)>> = vec![None; full + 1];
    for s in 1..=full {
        let i = s.trailing_zeros() as usize;
        let rest = s & (s - 1);
        sums[s] = sums[rest].plus(&demands[i].requests);
        usable[s] = usable[rest] & masks[i];
        clean[s] = clean[rest] && (conflicts[i] & rest) == 0;
        if !clean[s] || usable[s] == 0 {
            continue;
        }
        let mut m = usable[s];
        while m != 0 {
            let o = m.trailing_zeros() as usize;
            m &= m - 1;
            if sums[s].fits_in(&offerings[o].allocatable) {
                let obj = objective(&offerings[o]);
                if single[s].is_none_or(|(best, _)| obj < best) {
                    single[s] = Some((obj, o));
                }
            }
        }
    }
    let mut best: Vec<Option<(Objective, usize)>> = vec![None; full + 1];
    best[0] = Some(((0, 0, 0, 0), 0));
    for s in 1..=full {
        let low = s & s.wrapping_neg();
        let rest_bits = s ^ low;
        // Every subset T of s containing `low`: T = low | sub, sub ⊆ rest_bits.
        let mut sub = rest_bits;
        loop {
            let t = low | sub;
            if let (Some((cost_t, _)), Some((cost_rest, _))) = (single[t], best[s ^ t]) {
                let total = add(cost_t, cost_rest);
                if best[s].is_none_or(|(b, _)| total < b) {
                    best[s] = Some((total, t));
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest_bits;
        }
    }
    best[full]?;
    let mut nodes = Vec::new();
    let mut s = full;
    while s != 0 {
        let (_, t) = best[s]?;
        let (_, o) = single[t]?;
        nodes.push((
            o,
            (0..n)
                .filter(|i| t & (1 << i) != 0)
                .map(|i| pods[i])
                .collect(),
        ));
        s ^= t;
    }
    // Most expensive nodes first, for a stable, readable plan.
    nodes.sort_by(|a, b| {
        let (oa, ob) = (&offerings[a.0].flavor, &offerings[b.0].flavor);
        ob.price
            .cmp(&oa.price)
            .then(oa.instance_type.cmp(&ob.instance_type))
    });
    Some(nodes)
}

/// Whether the solution respects NodePool limits and MachineDeployment max sizes.
pub(crate) fn within_budget(budget: &Budget, offerings: &[Offering], nodes: &[SolvedNode]) -> bool {
    let mut b = budget.clone();
    for (o, _) in nodes {
        if b.check(&offerings[*o]).is_err() {
            return false;
        }
        b.take(&offerings[*o]);
    }
    true
}
