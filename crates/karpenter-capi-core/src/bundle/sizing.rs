//! The controller Deployment's memory request and limit from the cluster size `init` is told
//! (`--expected-pods`, `--expected-nodes`). Pure arithmetic over figures measured with
//! `cargo run --example memory PODS NODES` (peak RSS of the reflector stores plus five controller
//! passes; README, "Memory sizing"):
//!
//! | pods | nodes (+ as many NodeClaims and Machines) | peak RSS |
//! |---|---|---|
//! | 5,000 | 500 | 69.5 MiB |
//! | 5,000 | 2,000 | 106.8 MiB |
//! | 20,000 | 1,000 | 222.2 MiB |
//! | 20,000 | 2,000 | 247.0 MiB |
//! | 50,000 | 5,000 | 590.4 MiB |
//!
//! A linear fit through them: about 10 MiB, plus 9.6 KiB per pod, plus 25.5 KiB per node (its
//! Node, NodeClaim and Machine, and the plan's per-node work). It is an estimate: pods with
//! large specs or many labels cost more, and the figure is for this version's stores.

/// Fixed cost (binary, runtime, clients, metrics), KiB.
pub(crate) const BASE_KIB: u64 = 10 * 1024;
/// Per pod in the stores and a pass, KiB (9.6, rounded up).
pub(crate) const PER_POD_KIB: u64 = 10;
/// Per node (with its NodeClaim and Machine), KiB (25.5, rounded up).
pub(crate) const PER_NODE_KIB: u64 = 26;
/// The request is the estimate plus this share (percent), for larger-than-measured objects.
pub(crate) const HEADROOM_PERCENT: u64 = 25;
/// The smallest request and limit (MiB): the previous fixed values, enough for a small cluster.
pub(crate) const MIN_REQUEST_MIB: u64 = 128;
/// The smallest limit (MiB).
pub(crate) const MIN_LIMIT_MIB: u64 = 512;
/// Requests are rounded up to a multiple of this (MiB).
pub(crate) const ROUND_MIB: u64 = 64;
/// The default `--expected-pods`.
pub const DEFAULT_EXPECTED_PODS: u64 = 5_000;
/// Pods per node when `--expected-nodes` is not given.
pub(crate) const PODS_PER_NODE: u64 = 10;

/// The memory request and limit, in MiB, for a cluster of `pods` pods and `nodes` nodes: the
/// estimate plus headroom, rounded up to [`ROUND_MIB`], at least [`MIN_REQUEST_MIB`]; the limit
/// twice the request (a relist holds a page beside the old store, and the allocator keeps
/// freed memory), at least [`MIN_LIMIT_MIB`]. Saturates instead of overflowing.
pub(crate) fn controller_memory_mib(pods: u64, nodes: u64) -> (u64, u64) {
    let estimate_kib = BASE_KIB
        .saturating_add(pods.saturating_mul(PER_POD_KIB))
        .saturating_add(nodes.saturating_mul(PER_NODE_KIB));
    let with_headroom = estimate_kib.saturating_mul(100 + HEADROOM_PERCENT) / 100;
    let mib = with_headroom.div_ceil(1024);
    let request = mib
        .div_ceil(ROUND_MIB)
        .saturating_mul(ROUND_MIB)
        .max(MIN_REQUEST_MIB);
    let limit = request.saturating_mul(2).max(MIN_LIMIT_MIB);
    (request, limit)
}

/// `--expected-nodes`, or the pods at [`PODS_PER_NODE`] per node (at least one node).
pub fn nodes_for(pods: u64, nodes: Option<u64>) -> u64 {
    nodes.unwrap_or_else(|| pods.div_ceil(PODS_PER_NODE).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_measured_clusters() {
        // The defaults keep the previous fixed values.
        let default_nodes = nodes_for(DEFAULT_EXPECTED_PODS, None);
        assert_eq!(default_nodes, 500);
        assert_eq!(
            controller_memory_mib(DEFAULT_EXPECTED_PODS, default_nodes),
            (128, 512)
        );
        // 20,000 pods on 2,000 nodes measured 247 MiB: 10 + 195 + 51 = 256 MiB estimated,
        // 320 with headroom, requested 384Mi.
        assert_eq!(controller_memory_mib(20_000, 2_000), (384, 768));
        // 50,000 pods on 5,000 nodes measured 590 MiB: 10 + 488 + 127 = 625 MiB estimated,
        // 782 with headroom.
        assert_eq!(controller_memory_mib(50_000, 5_000), (832, 1664));
        // Every measured point is under the request.
        for (pods, nodes, measured) in [
            (5_000, 500, 69.5),
            (5_000, 2_000, 106.8),
            (20_000, 1_000, 222.2),
            (20_000, 2_000, 247.0),
            (50_000, 5_000, 590.4),
        ] {
            let (request, _) = controller_memory_mib(pods, nodes);
            assert!(
                request as f64 >= measured * 1.2,
                "{pods}/{nodes}: {request} vs {measured}"
            );
        }
        assert_eq!(controller_memory_mib(0, 0), (128, 512));
        // No overflow on absurd input.
        let (request, limit) = controller_memory_mib(u64::MAX, u64::MAX);
        assert!(request > 0 && limit >= request);
        assert_eq!(nodes_for(7, None), 1);
        assert_eq!(nodes_for(7, Some(3)), 3);
    }
}
