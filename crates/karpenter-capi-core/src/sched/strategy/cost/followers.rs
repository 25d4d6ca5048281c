//! Pods that wait a batch for their pod-affinity targets, as in Karpenter v1.14: a NodeClaim
//! for pods that do not constrain a topology key keeps every value of it until it launches
//! (core `scheduling/topology.go` `AddRequirements` gives such a claim no domain), so a pod
//! whose required affinity on that key selects only such pods cannot be placed in the same
//! batch; it is once they are bound. Our claims are bound to one MachineDeployment, but the
//! target may still land elsewhere (the kube-scheduler may bind it to room that frees up), and
//! a node bought for the followers on a zone it never reaches would never run them.

use std::collections::BTreeMap;

use crate::model::snapshot::Snapshot;
use crate::sched::fit::Unfit;
use crate::sched::state::ClusterState;
use crate::sched::strategy::karpenter_capi::constrains;
use crate::vocab::keys;

/// The pods of `pending` (not placed on standing nodes) that wait for their targets, each with
/// its reason; computed to a fixed point, since a target that waits is not placed either.
pub(crate) fn waiting(state: &ClusterState, pending: &[usize]) -> BTreeMap<usize, Unfit> {
    let snapshot = state.snapshot();
    let mut out: BTreeMap<usize, Unfit> = BTreeMap::new();
    if !pending
        .iter()
        .any(|&p| zonal_terms(snapshot, p).next().is_some())
    {
        return out;
    }
    // Pods whose domain is decided: bound to a node, or placed on a standing node this pass.
    let mut placed: Vec<usize> = snapshot
        .pods
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.terminal && p.node_name.is_some())
        .map(|(i, _)| i)
        .collect();
    placed.extend(state.nodes.iter().flat_map(|n| n.pods.iter().copied()));
    loop {
        let mut changed = false;
        for &f in pending {
            if out.contains_key(&f) {
                continue;
            }
            for term in zonal_terms(snapshot, f) {
                let selected = |i: &usize| {
                    let d = &snapshot.pods[*i].demand;
                    term.selects(&d.namespace, &d.labels)
                };
                if placed.iter().any(selected) {
                    continue;
                }
                let targets: Vec<usize> = pending
                    .iter()
                    .copied()
                    .filter(|i| !out.contains_key(i) && selected(i))
                    .collect();
                let undecided = targets
                    .iter()
                    .all(|&t| !constrains(&snapshot.pods[t].demand, &term.topology_key));
                if let (Some(&t), true) = (targets.first(), undecided) {
                    out.insert(
                        f,
                        Unfit::AffinityTargetUnbound {
                            topology_key: term.topology_key.clone(),
                            target: snapshot.pods[t].demand.key(),
                        },
                    );
                    changed = true;
                    break;
                }
            }
        }
        if !changed {
            return out;
        }
    }
}

/// A pod's required pod-affinity terms on keys other than the hostname.
fn zonal_terms(
    snapshot: &Snapshot,
    pod: usize,
) -> impl Iterator<Item = &crate::model::pod::AffinityTerm> {
    snapshot.pods[pod]
        .demand
        .affinity
        .iter()
        .filter(|t| t.topology_key != keys::HOSTNAME)
}
