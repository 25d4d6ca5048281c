//! First fit over a plan's nodes without testing every full node: the largest free CPU, memory
//! and pod slots over ranges of nodes, in a segment tree.

use crate::model::resources::Resources;

/// The largest free CPU, memory and pod slots over ranges of a state's nodes (a segment tree), so
/// a first fit in node order skips whole runs of full nodes instead of testing each one: placing
/// every pending pod by a scan from the first node is quadratic once the first nodes fill.
#[derive(Debug, Clone)]
pub struct FreeIndex {
    /// Leaves start here (a power of two); the nodes past the last are padding.
    leaves: usize,
    nodes: usize,
    /// Per tree slot: free CPU millis, memory bytes and pod slots, the largest under it.
    max: Vec<[i64; 3]>,
}

impl FreeIndex {
    /// Indexes the nodes of a state as they are now.
    pub fn new(state: &super::state::ClusterState<'_>) -> FreeIndex {
        Self::of_free(state.nodes.iter().map(|n| &n.free))
    }

    /// Indexes nodes with these free resources, in order.
    pub fn of_free<'r>(free: impl ExactSizeIterator<Item = &'r Resources>) -> FreeIndex {
        let nodes = free.len();
        let leaves = nodes.next_power_of_two().max(1);
        let mut max = vec![[i64::MIN; 3]; 2 * leaves];
        for (i, f) in free.enumerate() {
            max[leaves + i] = Self::room(f);
        }
        for k in (1..leaves).rev() {
            max[k] = Self::larger(max[2 * k], max[2 * k + 1]);
        }
        FreeIndex { leaves, nodes, max }
    }

    fn room(free: &Resources) -> [i64; 3] {
        [free.cpu_millis, free.memory_bytes, free.pods]
    }

    fn larger(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
        [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])]
    }

    /// Whether a node with at most `room` free may fit `need` ([`Resources::fits_in`] on the
    /// three resources indexed: a need of zero or less always fits).
    fn may_fit(room: &[i64; 3], need: &[i64; 3]) -> bool {
        need.iter().zip(room).all(|(&n, &r)| n <= 0 || n <= r)
    }

    /// Records a node's free resources after a change.
    pub fn update(&mut self, node: usize, free: &Resources) {
        let mut k = self.leaves + node;
        self.max[k] = Self::room(free);
        while k > 1 {
            k /= 2;
            self.max[k] = Self::larger(self.max[2 * k], self.max[2 * k + 1]);
        }
    }

    /// The first node, in order, that may hold `requests` and that `accept` takes: the node a
    /// scan in order finds with the same test, with the nodes that cannot hold it skipped in
    /// runs.
    pub fn first(
        &self,
        requests: &Resources,
        mut accept: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let need = Self::room(requests);
        self.first_under(1, &need, &mut accept)
    }

    fn first_under(
        &self,
        k: usize,
        need: &[i64; 3],
        accept: &mut impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        if !Self::may_fit(&self.max[k], need) {
            return None;
        }
        if k >= self.leaves {
            let node = k - self.leaves;
            return (node < self.nodes && accept(node)).then_some(node);
        }
        self.first_under(2 * k, need, accept)
            .or_else(|| self.first_under(2 * k + 1, need, accept))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Lcg;

    /// Under any sequence of placements, the index finds the node a scan in order finds.
    #[test]
    fn the_free_index_finds_the_first_fit_a_scan_finds() {
        let mut rng = Lcg(42);
        let mut next = |n: u64| rng.below(n);
        for nodes in [0usize, 1, 7, 64, 300] {
            let mut free: Vec<Resources> = (0..nodes)
                .map(|_| Resources {
                    cpu_millis: next(4_000) as i64,
                    memory_bytes: next(1 << 20) as i64,
                    pods: next(4) as i64,
                    ..Resources::default()
                })
                .collect();
            let mut index = FreeIndex::of_free(free.iter());
            let mut placed = 0;
            for round in 0..2_000u64 {
                let need = Resources {
                    cpu_millis: next(600) as i64,
                    memory_bytes: next(1 << 17) as i64 - 1_000,
                    pods: 1,
                    ..Resources::default()
                };
                // Some nodes turn the pod away for other reasons.
                let accept = |n: usize| !(n as u64 + round).is_multiple_of(5);
                let scan = (0..nodes).find(|&n| need.fits_in(&free[n]) && accept(n));
                let found = index.first(&need, |n| need.fits_in(&free[n]) && accept(n));
                assert_eq!(found, scan, "{nodes} nodes, round {round}");
                if let Some(n) = found {
                    free[n].sub(&need);
                    index.update(n, &free[n]);
                    placed += 1;
                }
            }
            assert!(nodes < 64 || placed > 50, "{nodes} nodes: {placed} placed");
        }
    }
}
