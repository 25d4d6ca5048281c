//! `karpenter-capi`: what the upstream Karpenter Cluster API provider does. Karpenter packs pods
//! into NodeClaims that keep every instance type still able to hold them (all priced 0, so none
//! is preferred), and the provider then takes the lexicographically first compatible
//! instance-type name. Flavor taints are ignored, as upstream ignores the `taints` annotation.

use super::{Budget, Placement, Strategy, finish, place_on_existing, queue_order};
use crate::model::labels::keys;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::{self, Offering};
use crate::sched::fit::static_ok;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;

/// Karpenter v1.5 truncates a NodeClaim's instance types to this many (cheapest first).
pub const MAX_INSTANCE_TYPES: usize = 60;

/// The upstream strategy.
pub struct KarpenterCapi;

/// A NodeClaim being filled: the instance types still possible, its pods and their requests.
struct Claim {
    node: usize,
    candidates: Vec<usize>,
    requested: Resources,
}

impl Strategy for KarpenterCapi {
    fn name(&self) -> StrategyName {
        StrategyName::KarpenterCapi
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let (offerings, _) = catalog::offerings(snapshot, false);
        let mut state = ClusterState::new(snapshot, &offerings);
        let mut budget = Budget::new(snapshot);
        let queue = queue_order(snapshot, pending);
        let rest = place_on_existing(&mut state, &queue);
        let mut claims: Vec<Claim> = Vec::new();
        let mut unplaced = Vec::new();
        // Label keys that topology constraints look at (zone, custom keys): a claim keeps only
        // instance types that agree on them with the domain it was opened in, as Karpenter's
        // topology requirements narrow a NodeClaim.
        let topo_keys = topology_label_keys(snapshot);
        for pod in rest {
            let demand = &snapshot.pods[pod].demand;
            let fits =
                |o: &Offering, used: &Resources, labels_node: &crate::model::labels::Labels| {
                    let mut labels = o.labels.clone();
                    labels.insert(
                        keys::HOSTNAME.to_string(),
                        labels_node.get(keys::HOSTNAME).cloned().unwrap_or_default(),
                    );
                    static_ok(demand, &labels, &o.taints, &o.allocatable.minus(used))
                };
            // In-flight claims first, in creation order.
            let mut placed = false;
            for claim in claims.iter_mut() {
                if state
                    .topology_fit(pod, &state.nodes[claim.node].labels)
                    .is_err()
                {
                    continue;
                }
                let labels = state.nodes[claim.node].labels.clone();
                let narrowed: Vec<usize> = claim
                    .candidates
                    .iter()
                    .copied()
                    .filter(|&o| fits(&offerings[o], &claim.requested, &labels))
                    .collect();
                if !narrowed.is_empty() {
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
                        fits(&offerings[o], &empty, &Default::default())
                            && budget.check(&offerings[o]).is_ok()
                    })
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                // Every price is 0: the order is the name order, then truncated.
                candidates.sort_by_key(|&o| offerings[o].flavor.instance_type.to_lowercase());
                // The first candidate whose topology domain takes the pod.
                let mut opened_node = None;
                let mut tried: Vec<Vec<Option<&String>>> = Vec::new();
                for &c in &candidates {
                    let domain: Vec<Option<&String>> = topo_keys
                        .iter()
                        .map(|k| offerings[c].labels.get(k))
                        .collect();
                    if tried.contains(&domain) {
                        continue;
                    }
                    tried.push(domain);
                    let node = state.open(&offerings[c], NodeOrigin::New(c), None);
                    if state.topology_fit(pod, &state.nodes[node].labels).is_ok() {
                        opened_node = Some((node, c));
                        break;
                    }
                    state.close_if_empty(node);
                }
                let Some((node, first)) = opened_node else {
                    continue;
                };
                candidates.retain(|&o| {
                    topo_keys
                        .iter()
                        .all(|k| offerings[o].labels.get(k) == offerings[first].labels.get(k))
                });
                candidates.truncate(MAX_INSTANCE_TYPES);
                // The claim's own resource checks are done per candidate; the plan node only
                // carries its pods and topology.
                state.nodes[node].free = unlimited();
                state.place(pod, node);
                claims.push(Claim {
                    node,
                    candidates,
                    requested: demand.requests.clone(),
                });
                opened = true;
                break;
            }
            if !opened {
                unplaced.push(pod);
            }
        }
        // The provider: sort the claim's compatible types by lower-cased name, take the first.
        for claim in &claims {
            let mut names: Vec<usize> = claim.candidates.clone();
            names.sort_by_key(|&o| offerings[o].flavor.instance_type.to_lowercase());
            let chosen = names
                .iter()
                .copied()
                .find(|&o| budget.check(&offerings[o]).is_ok())
                .unwrap_or(names[0]);
            budget.take(&offerings[chosen]);
            let node = &mut state.nodes[claim.node];
            node.origin = NodeOrigin::New(chosen);
            node.free = offerings[chosen].allocatable.minus(&claim.requested);
        }
        finish(
            StrategyName::KarpenterCapi,
            &state,
            &budget,
            &offerings,
            unplaced,
        )
    }
}

/// Label keys (other than the hostname) that pod topology constraints use.
fn topology_label_keys(snapshot: &Snapshot) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for p in &snapshot.pods {
        let d = &p.demand;
        out.extend(d.spread.iter().map(|c| c.topology_key.clone()));
        out.extend(
            d.affinity
                .iter()
                .chain(d.anti_affinity.iter())
                .chain(d.preferred_affinity.iter().map(|w| &w.term))
                .chain(d.preferred_anti_affinity.iter().map(|w| &w.term))
                .map(|t| t.topology_key.clone()),
        );
    }
    out.remove(keys::HOSTNAME);
    out.into_iter().collect()
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
