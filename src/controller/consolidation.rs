//! Consolidation of underutilized nodes (`WhenEmptyOrUnderutilized`): remove nodes whose pods
//! fit elsewhere, or replace them by a strictly cheaper set, proven with the `cost` scheduler on
//! the cluster without them. Multi-node first (the largest prefix of the cheapest-to-disrupt
//! candidates that works, by binary search), then single-node, as Karpenter does.

use crate::model::flavor::Price;
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::{NewNode, Strategy, cost::Cost};

/// A node that may be consolidated.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its NodeClaim.
    pub claim: String,
    /// Its Node.
    pub node: String,
    /// Its price per hour.
    pub price: Price,
    /// Pods that would have to move (snapshot indices).
    pub pods: Vec<usize>,
}

/// A consolidation decision.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The candidates removed.
    pub remove: Vec<Candidate>,
    /// The new nodes replacing them (empty: their pods fit on the remaining nodes).
    pub replacements: Vec<NewNode>,
    /// Price per hour saved.
    pub saving: Price,
}

/// At most this many single-node trials per pass: each is a full scheduling simulation.
pub const SINGLE_NODE_TRIALS: usize = 20;
/// At most this many nodes in one multi-node decision.
pub const MULTI_NODE_MAX: usize = 100;

/// The snapshot as if `remove` were gone: their pods pending, their claims going away.
fn without(snapshot: &Snapshot, remove: &[Candidate]) -> (Snapshot, Vec<usize>) {
    let mut view = snapshot.clone();
    let names: std::collections::BTreeSet<&str> = remove.iter().map(|c| c.node.as_str()).collect();
    view.nodes.retain(|n| !names.contains(n.name.as_str()));
    for c in view.nodeclaims.iter_mut() {
        if remove.iter().any(|r| r.claim == c.name) {
            c.deleting = true;
        }
    }
    let mut moved = Vec::new();
    for (i, p) in view.pods.iter_mut().enumerate() {
        if p.node_name.as_deref().is_some_and(|n| names.contains(n)) {
            if p.daemon {
                // DaemonSet pods go with their node.
                p.terminal = true;
            } else {
                p.node_name = None;
                p.marked_unschedulable = true;
                moved.push(i);
            }
        }
    }
    (view, moved)
}

/// Whether removing `remove` (and adding the cheapest replacements) is strictly cheaper.
pub fn trial(snapshot: &Snapshot, remove: &[Candidate]) -> Option<Decision> {
    let (view, moved) = without(snapshot, remove);
    let placement = Cost.plan(&view, &moved);
    if !placement.unschedulable.is_empty() {
        return None;
    }
    let removed: i64 = remove.iter().map(|c| c.price.0).sum();
    let added = placement.price().0;
    (added < removed).then(|| Decision {
        remove: remove.to_vec(),
        replacements: placement.new_nodes,
        saving: Price(removed - added),
    })
}

/// The best consolidation among the candidates (already sorted cheapest to disrupt first),
/// at most `max_nodes` nodes.
pub fn consolidate(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    max_nodes: usize,
) -> Option<Decision> {
    let limit = candidates.len().min(max_nodes).min(MULTI_NODE_MAX);
    if limit >= 2 {
        // Largest working prefix by binary search.
        let (mut lo, mut hi) = (2usize, limit);
        let mut best = None;
        while lo <= hi {
            let mid = (lo + hi) / 2;
            match trial(snapshot, &candidates[..mid]) {
                Some(d) => {
                    best = Some(d);
                    lo = mid + 1;
                }
                None => hi = mid - 1,
            }
        }
        if best.is_some() {
            return best;
        }
    }
    if max_nodes == 0 {
        return None;
    }
    candidates
        .iter()
        .take(SINGLE_NODE_TRIALS)
        .find_map(|c| trial(snapshot, std::slice::from_ref(c)))
}
