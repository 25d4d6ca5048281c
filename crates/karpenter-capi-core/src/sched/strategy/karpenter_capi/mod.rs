//! `karpenter-capi`: what the upstream Karpenter Cluster API provider does, on Karpenter v1.5
//! (the core version the provider vendors). Karpenter packs pods, in its queue order, into
//! NodeClaims that keep every instance type still able to hold them (all priced 0, so none is
//! preferred); the provider then takes the lexicographically first compatible instance-type name.
//! Flavor taints are ignored, as upstream ignores the `taints` annotation.
//!
//! The rules mirrored, each from the upstream file named:
//! - pod order: [`queue_order`] (core `provisioning/scheduling/queue.go`);
//! - before each pod, the in-batch NodeClaims are re-sorted by fewest pods, and the pod joins the
//!   first that can take it (core `scheduler.go` `add`, `addToInflightNode`);
//! - a new NodeClaim comes from the first NodePool (weight order) with a compatible instance
//!   type within its remaining limits, and charges those limits with the largest of its initial
//!   options (`addToNewNodeClaim`, `filterByRemainingResources`, `subtractMax`);
//! - `minValues`: a pod that would leave a NodeClaim fewer distinct values of a key than the
//!   NodePool's `minValues` does not join it (core `nodeclaim.go` `CanAdd`, policy `Strict`);
//! - after packing, each NodeClaim's options are truncated to [`MAX_INSTANCE_TYPES`] in price
//!   order, which with every price 0 is the provider's list order (the API lists
//!   MachineDeployments by namespace/name; a file keeps its own order), and a NodeClaim whose
//!   truncated options miss `minValues` is not launched (`Results.TruncateInstanceTypes`);
//! - the provider takes, among the truncated options whose MachineDeployment is still below its
//!   max size, the first by lower-cased name (provider `pkg/cloudprovider/cloudprovider.go`
//!   `resolveInstanceType`); none left fails the launch and its pods stay pending.

use std::collections::BTreeMap;

use super::{Budget, Placement, Strategy, finish, place_on_existing, queue_order};
use crate::model::hostport::first_clash;
use crate::model::labels::Labels;
use crate::model::nodepool::NodePool;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::{self, Offering};
use crate::sched::fit::{Rejection, Unfit, static_ok};
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;
use crate::vocab::keys;

#[cfg(test)]
mod tests;

/// Karpenter v1.5 (`MaxInstanceTypes` in core `provisioning/scheduling/nodeclaimtemplate.go`,
/// 60 in the version the provider vendors) truncates a NodeClaim's instance types to this many.
pub(crate) const MAX_INSTANCE_TYPES: usize = 60;

/// The upstream strategy.
pub(crate) struct KarpenterCapi;

/// A NodeClaim being filled: its NodePool, the instance types still possible (offering indices
/// in list order), its pods' summed requests, and when it was opened.
struct Claim {
    node: usize,
    pool: usize,
    candidates: Vec<usize>,
    requested: Resources,
    opened: usize,
}

impl Strategy for KarpenterCapi {
    fn name(&self) -> StrategyName {
        StrategyName::KarpenterCapi
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let v15;
        let snapshot = match container_only(snapshot) {
            Some(s) => {
                v15 = s;
                &v15
            }
            None => snapshot,
        };
        let (offerings, _) =
            catalog::offerings_with(snapshot, false, catalog::DaemonScope::NodePool);
        let mut state = ClusterState::new(snapshot, &offerings);
        let mut budget = Budget::new(snapshot);
        // An offering is available while its MachineDeployment is below its max size, as the
        // provider lists it when the batch starts; it does not change during the batch.
        let listed = budget.clone();
        let queue = queue_order(snapshot, pending);
        let rest = place_on_existing(&mut state, &queue);
        let mut claims: Vec<Claim> = Vec::new();
        let mut unplaced = Vec::new();
        // Pods no claim could take because of `minValues`: the reason the generic rejections
        // (per flavor) cannot show.
        let mut min_values_blocked: BTreeMap<usize, Unfit> = BTreeMap::new();
        // Label keys that topology constraints look at (zone, custom keys): a claim keeps only
        // instance types that agree on them with the domain it was opened in, as Karpenter's
        // topology requirements narrow a NodeClaim.
        let topo_keys = crate::sched::topology::place::topology_label_keys(snapshot);
        // The provider's choice, by lower-cased name: each offering's rank in that order.
        let name_rank = name_ranks(&offerings);
        // Existing and in-flight nodes first for every pod (core `scheduler.go` `add`).
        let standing = state.standing_nodes();
        for pod in rest {
            let demand = &snapshot.pods[pod].demand;
            if state.place_on_standing(pod, &standing) {
                continue;
            }
            // An offering's labels plus the claim's hostname; copied only for the rare pod
            // whose node requirements read the hostname.
            let reads_hostname = demand.requires_label(keys::HOSTNAME);
            let fits = |o: &Offering, used: &Resources, node_labels: &Labels| {
                // The DaemonSets' host ports on the NodeClaim template (v1.5
                // `getDaemonHostPortUsage`).
                if first_clash(&demand.host_ports, &o.ports).is_some() {
                    return false;
                }
                let free = o.allocatable.minus(used);
                if !reads_hostname {
                    return static_ok(demand, &o.labels, &o.taints, &free);
                }
                let mut labels = o.labels.clone();
                labels.insert(
                    keys::HOSTNAME.to_string(),
                    node_labels.get(keys::HOSTNAME).cloned().unwrap_or_default(),
                );
                static_ok(demand, &labels, &o.taints, &free)
            };
            // Fewest pods first; a stable sort, as Go's insertion sort is for the small batches
            // this is about (beyond 12 claims Go's order among equal counts is unspecified).
            claims.sort_by_key(|c| state.nodes[c.node].pods.len());
            let mut placed = false;
            for claim in claims.iter_mut() {
                let labels = &state.nodes[claim.node].labels;
                // Host ports of the claim's pods (core `nodeclaim.go` `CanAdd`, hostPortUsage).
                if !state.topology_admits(pod, labels)
                    || first_clash(&demand.host_ports, &state.nodes[claim.node].ports).is_some()
                {
                    continue;
                }
                let narrowed: Vec<usize> = claim
                    .candidates
                    .iter()
                    .copied()
                    .filter(|&o| fits(&offerings[o], &claim.requested, labels))
                    .collect();
                if !narrowed.is_empty()
                    && min_values_met(&snapshot.nodepools[claim.pool], &offerings, &narrowed)
                {
                    claim.candidates = narrowed;
                    claim.requested.add(&demand.requests);
                    state.place(pod, claim.node);
                    placed = true;
                    break;
                }
            }
            if placed {
                continue;
            }
            // A new claim from the first NodePool (weight order) that has compatible types.
            let empty = Resources::default();
            let mut opened = false;
            for pool in 0..snapshot.nodepools.len() {
                let mut candidates: Vec<usize> = (0..offerings.len())
                    .filter(|&o| offerings[o].pool_index == pool)
                    .filter(|&o| {
                        listed.check_size(&offerings[o]).is_ok()
                            && budget.check_pool(&offerings[o]).is_ok()
                            && fits(&offerings[o], &empty, &Labels::default())
                    })
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                // The topology domain the claim is opened in: that of the first candidate by
                // name (the one the provider would launch) whose domain takes the pod.
                let mut by_name = candidates.clone();
                by_name.sort_by_key(|&o| name_rank[o]);
                let mut opened_node = None;
                let mut tried: Vec<Vec<Option<&String>>> = Vec::new();
                for &c in &by_name {
                    let domain: Vec<Option<&String>> = topo_keys
                        .iter()
                        .map(|k| offerings[c].labels.get(k))
                        .collect();
                    if tried.contains(&domain) {
                        continue;
                    }
                    tried.push(domain);
                    let node = state.open(&offerings[c], NodeOrigin::New(c), None);
                    if state.topology_admits(pod, &state.nodes[node].labels) {
                        opened_node = Some((node, c));
                        break;
                    }
                    state.close_if_empty(node);
                }
                let Some((node, first)) = opened_node else {
                    continue;
                };
                // The claim is narrowed to that domain only on the keys the pod itself
                // constrains (its selectors, affinity, spread): on the others it keeps every
                // value, as v1.5's NodeClaim keeps every zone for a pod without a zonal
                // constraint, and its node has no label for them (a pod affine to this one on
                // such a key waits until it is bound).
                let (constrained, open_keys): (Vec<&String>, Vec<&String>) =
                    topo_keys.iter().partition(|k| constrains(demand, k));
                candidates.retain(|&o| {
                    constrained
                        .iter()
                        .all(|k| offerings[o].labels.get(*k) == offerings[first].labels.get(*k))
                });
                for k in open_keys {
                    let value = offerings[first].labels.get(k);
                    if candidates
                        .iter()
                        .any(|&o| offerings[o].labels.get(k) != value)
                    {
                        state.nodes[node].labels.remove(k);
                    }
                }
                if let Some(unfit) =
                    min_values_unmet(&snapshot.nodepools[pool], &offerings, &candidates)
                {
                    state.close_if_empty(node);
                    min_values_blocked.entry(pod).or_insert(unfit);
                    continue;
                }
                let options: Vec<&Offering> = candidates.iter().map(|&o| &offerings[o]).collect();
                budget.charge_pool_max(&snapshot.nodepools[pool].name, &options);
                // The claim's own resource checks are done per candidate; the plan node only
                // carries its pods and topology.
                state.nodes[node].free = unlimited();
                state.place(pod, node);
                let opened_seq = claims.len();
                claims.push(Claim {
                    node,
                    pool,
                    candidates,
                    requested: demand.requests.clone(),
                    opened: opened_seq,
                });
                opened = true;
                break;
            }
            if !opened {
                unplaced.push(pod);
            }
        }
        // Launch, in the order the claims were opened.
        claims.sort_by_key(|c| c.opened);
        for claim in &claims {
            let mut options = claim.candidates_truncated();
            let launched =
                match min_values_unmet(&snapshot.nodepools[claim.pool], &offerings, &options) {
                    None => {
                        // The provider: the compatible types still below their max size, by name.
                        options.retain(|&o| budget.check_size(&offerings[o]).is_ok());
                        options.sort_by_key(|&o| name_rank[o]);
                        options.first().copied()
                    }
                    Some(unfit) => {
                        for &p in &state.nodes[claim.node].pods {
                            min_values_blocked.entry(p).or_insert_with(|| unfit.clone());
                        }
                        None
                    }
                };
            let node = &mut state.nodes[claim.node];
            match launched {
                Some(chosen) => {
                    budget.take_size(&offerings[chosen]);
                    node.origin = NodeOrigin::New(chosen);
                    node.free = offerings[chosen].allocatable.minus(&claim.requested);
                }
                None => {
                    // Not launched: its pods stay pending.
                    unplaced.append(&mut node.pods);
                }
            }
        }
        unplaced.sort_unstable();
        let mut placement = finish(
            StrategyName::KarpenterCapi,
            &state,
            &budget,
            &offerings,
            unplaced,
        );
        for (pod, rejections) in placement.unschedulable.iter_mut() {
            if let Some(unfit) = min_values_blocked.remove(pod) {
                let Unfit::MinValuesUnmet { node_pool, .. } = &unfit else {
                    continue;
                };
                rejections.push(Rejection {
                    subject: node_pool.clone(),
                    unfit,
                });
            }
        }
        placement
    }
}

/// The snapshot as Karpenter v1.5 counts requests: from the containers alone, pod-level
/// resources (`spec.resources`) not read (v1.5 `utils/resources` `Ceiling` sums containers);
/// None when no pod or DaemonSet sets them.
fn container_only(snapshot: &Snapshot) -> Option<Snapshot> {
    let pods = snapshot
        .pods
        .iter()
        .any(|p| p.demand.container_requests.is_some());
    let daemons = snapshot
        .daemonsets
        .iter()
        .any(|d| d.pod.container_requests.is_some());
    if !pods && !daemons {
        return None;
    }
    let mut out = snapshot.clone();
    for record in &mut out.pods {
        if let Some(r) = record.demand.container_requests.clone() {
            std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(record).demand).requests = r;
        }
    }
    for ds in &mut out.daemonsets {
        if let Some(r) = ds.pod.container_requests.clone() {
            ds.pod.requests = r;
        }
    }
    Some(out)
}

impl Claim {
    /// The options Karpenter sends to the provider: the first [`MAX_INSTANCE_TYPES`] in price
    /// order, which with every price 0 is list order.
    fn candidates_truncated(&self) -> Vec<usize> {
        self.candidates
            .iter()
            .copied()
            .take(MAX_INSTANCE_TYPES)
            .collect()
    }
}

/// Whether a pod's own constraints read this label key: a node requirement, a topology
/// spread constraint or a pod (anti-)affinity term on it.
pub(crate) fn constrains(demand: &crate::model::pod::PodDemand, key: &str) -> bool {
    demand.requires_label(key)
        || demand.spread.iter().any(|c| c.topology_key == key)
        || demand
            .affinity
            .iter()
            .chain(&demand.anti_affinity)
            .chain(demand.preferred_affinity.iter().map(|w| &w.term))
            .chain(demand.preferred_anti_affinity.iter().map(|w| &w.term))
            .any(|t| t.topology_key == key)
}

/// Per offering, its place in the order of lower-cased instance-type names (a stable sort:
/// equal names keep list order, as the provider's sort of the compatible types would).
fn name_ranks(offerings: &[Offering]) -> Vec<usize> {
    let names: Vec<String> = offerings
        .iter()
        .map(|o| o.flavor.instance_type.to_lowercase())
        .collect();
    let mut order: Vec<usize> = (0..offerings.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(&names[b]));
    let mut rank = vec![0; offerings.len()];
    for (r, o) in order.into_iter().enumerate() {
        rank[o] = r;
    }
    rank
}

/// Whether these options keep at least the pool's `minValues` distinct values of each key
/// (core `scheduling` `Requirements.HasMinValues`, `InstanceTypes.SatisfiesMinValues`).
fn min_values_met(pool: &NodePool, offerings: &[Offering], options: &[usize]) -> bool {
    min_values_unmet(pool, offerings, options).is_none()
}

/// The first key of the pool's `minValues` these options miss, as a reason.
fn min_values_unmet(pool: &NodePool, offerings: &[Offering], options: &[usize]) -> Option<Unfit> {
    if pool.min_values.is_empty() {
        return None;
    }
    let min: Vec<(String, usize)> = pool
        .min_values
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    crate::sched::min_values::unmet_among(&pool.name, &min, options.iter().map(|&o| &offerings[o]))
}

fn unlimited() -> Resources {
    Resources {
        cpu_millis: i64::MAX / 4,
        memory_bytes: i64::MAX / 4,
        ephemeral_storage_bytes: i64::MAX / 4,
        pods: i64::MAX / 4,
        extended: Default::default(),
    }
}
