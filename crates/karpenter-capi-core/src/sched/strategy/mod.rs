//! Provisioning strategies behind one trait: ours (`cost`), the upstream Karpenter Cluster API
//! provider (`karpenter-capi`) and Cluster Autoscaler's `least-waste`, plus what they share:
//! Karpenter's pod queue order, existing nodes first, NodePool limits and MachineDeployment
//! max sizes, and the reasons a pod stays unschedulable.

pub(crate) mod cost;
pub(crate) mod karpenter_capi;
pub(crate) mod least_waste;
pub(crate) mod name;

pub use name::StrategyName;

use std::collections::HashMap;

use super::catalog::Offering;
use super::fit::{Rejection, Unfit, static_fit};
use super::free_index::FreeIndex;
use super::state::{ClusterState, NodeOrigin};
use crate::model::flavor::Price;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;

/// A planned new node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNode {
    /// The offering it is a node of.
    pub offering: Offering,
    /// Its name in the plan.
    pub name: String,
    /// Pods placed on it (snapshot pod indices).
    pub pods: Vec<usize>,
    /// Their summed requests.
    pub requested: Resources,
}

/// What a strategy decided for the pending pods.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Which strategy.
    pub strategy: StrategyName,
    /// New nodes to provision.
    pub new_nodes: Vec<NewNode>,
    /// Pods placed on existing nodes: (pod, node name).
    pub(crate) on_existing: Vec<(usize, String)>,
    /// Pods placed on nodes launched but not registered yet: (pod, node name).
    pub(crate) on_in_flight: Vec<(usize, String)>,
    /// Pods that fit nowhere, with a reason per flavor.
    pub unschedulable: Vec<(usize, Vec<Rejection>)>,
    /// A lower bound on the price per hour of the new nodes any plan needs for the pods left
    /// after existing and in-flight room (`cost` only; none when some of them stay unplaced).
    pub lower_bound: Option<Price>,
    /// Preferences dropped per pod (Karpenter's relaxation order) before it could be placed,
    /// or before it was given up on.
    pub relaxed: Vec<(usize, Vec<String>)>,
    /// Whether the optimizer's wall-clock safety net stopped it before its work budget did:
    /// the plan then depends on the machine's speed (`cost` only; normal inputs never do).
    pub cut_short: bool,
    /// Why `cost` bought larger nodes than the batch alone needs (provisioning with
    /// foresight, [`cost::foresight`]); none otherwise.
    pub sizing: Option<cost::foresight::Sizing>,
}

impl Placement {
    /// Total price per hour of the new nodes.
    pub fn price(&self) -> Price {
        Price(
            self.new_nodes
                .iter()
                .map(|n| n.offering.flavor.price.0)
                .sum(),
        )
    }

    /// Total capacity of the new nodes.
    pub(crate) fn capacity(&self) -> Resources {
        let mut total = Resources::default();
        for n in &self.new_nodes {
            total.add(&n.offering.flavor.capacity);
        }
        total
    }

    /// Number of new nodes per instance type, sorted by name.
    pub fn node_counts(&self) -> Vec<(String, usize)> {
        let mut counts: std::collections::BTreeMap<String, usize> =
            std::collections::BTreeMap::new();
        for n in &self.new_nodes {
            *counts
                .entry(n.offering.flavor.instance_type.clone())
                .or_insert(0) += 1;
        }
        counts.into_iter().collect()
    }
}

/// A way of choosing new nodes for pending pods.
pub trait Strategy {
    /// Its name.
    fn name(&self) -> StrategyName;
    /// Plans new nodes for the pending pods (snapshot pod indices, any order).
    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement;
}

/// The strategy with this name, relaxing preferences as Karpenter does ([`Relaxing`]).
pub fn by_name(name: StrategyName) -> Box<dyn Strategy> {
    match name {
        StrategyName::Cost => Box::new(Relaxing(cost::Cost)),
        StrategyName::KarpenterCapi => Box::new(Relaxing(karpenter_capi::KarpenterCapi)),
        StrategyName::LeastWaste => Box::new(Relaxing(least_waste::LeastWaste)),
    }
}

/// A strategy that treats preferences (preferred pod affinity, anti-affinity and node affinity,
/// `ScheduleAnyway` spread) as required, and when pods with preferences stay unschedulable,
/// drops one preference of each such pod in Karpenter's order (`preferences.go` `Relax`) and
/// plans again, until every pod is placed or has nothing left to relax.
///
/// For Karpenter's strategies (`cost`, `karpenter-capi`) it also plans as Karpenter's scheduler
/// does before any relaxation: a pod's required node affinity is its first term only, and
/// PreferNoSchedule taints keep it off as NoSchedule ones do. The steps, one per round:
/// the next required node-affinity term, then the preferences above, then — only when some
/// NodePool template has a PreferNoSchedule taint — a toleration for PreferNoSchedule taints.
/// `least-waste` (Cluster Autoscaler, the kube-scheduler's view) keeps every term and treats
/// PreferNoSchedule as soft.
pub(crate) struct Relaxing<S>(pub S);

/// What Karpenter's planning holds back of a pod until relaxed: its later required
/// node-affinity terms.
type LaterTerms = std::collections::BTreeMap<usize, Vec<Vec<crate::model::labels::Requirement>>>;

impl<S: Strategy> Strategy for Relaxing<S> {
    fn name(&self) -> StrategyName {
        self.0.name()
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let karpenter = self.0.name() != StrategyName::LeastWaste;
        let mut later = LaterTerms::new();
        let strict = if karpenter {
            karpenter_view(snapshot, pending, &mut later)
        } else {
            None
        };
        let base = strict.as_ref().unwrap_or(snapshot);
        // Core `scheduler.go` `NewScheduler`: the toleration step exists only when a NodePool
        // template has a PreferNoSchedule taint, among the pools that provision.
        let tolerate_step = karpenter
            && snapshot
                .nodepools
                .iter()
                .filter(|p| snapshot.provisions(p))
                .any(|p| {
                    p.taints
                        .iter()
                        .any(|t| t.effect == crate::model::taints::Effect::PreferNoSchedule)
                });
        let mut placement = self.0.plan(base, pending);
        let stuck = |p: &Placement, s: &Snapshot, later: &LaterTerms| -> Vec<usize> {
            p.unschedulable
                .iter()
                .map(|(i, _)| *i)
                .filter(|&i| {
                    let d = &s.pods[i].demand;
                    later.get(&i).is_some_and(|l| !l.is_empty())
                        || d.has_preferences()
                        || (tolerate_step && d.prefer_no_schedule_hard)
                })
                .collect()
        };
        if stuck(&placement, base, &later).is_empty() {
            return placement;
        }
        let mut relaxed = base.clone();
        let mut notes: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
        loop {
            let pods = stuck(&placement, &relaxed, &later);
            if pods.is_empty() {
                break;
            }
            for i in pods {
                let demand = std::sync::Arc::make_mut(
                    &mut std::sync::Arc::make_mut(&mut relaxed.pods[i]).demand,
                );
                let note = match later.get_mut(&i).filter(|l| !l.is_empty()) {
                    Some(next) => {
                        let dropped =
                            std::mem::replace(&mut demand.node_affinity, vec![next.remove(0)]);
                        let reqs: Vec<String> =
                            dropped.iter().flatten().map(ToString::to_string).collect();
                        Some(format!(
                            "dropped required node affinity term {}",
                            reqs.join(", ")
                        ))
                    }
                    None => demand.relax().or_else(|| {
                        (tolerate_step && demand.prefer_no_schedule_hard).then(|| {
                            demand.prefer_no_schedule_hard = false;
                            "added a toleration for PreferNoSchedule taints".to_string()
                        })
                    }),
                };
                if let Some(note) = note {
                    notes.entry(i).or_default().push(note);
                }
            }
            placement = self.0.plan(&relaxed, pending);
        }
        placement.relaxed = notes.into_iter().collect();
        placement
    }
}

/// The pending pods as Karpenter's scheduler first sees them: PreferNoSchedule taints hard
/// (when any node, NodeClaim, flavor or NodePool has one; otherwise the flag changes nothing)
/// and only the first required node-affinity term (core `scheduling/requirements.go`
/// `NewPodRequirements` reads `nodeSelectorTerms[0]`), the others held in `later`. None when
/// no pod changes.
fn karpenter_view(
    snapshot: &Snapshot,
    pending: &[usize],
    later: &mut LaterTerms,
) -> Option<Snapshot> {
    use crate::model::taints::{Effect, Taint};
    let soft = |taints: &[Taint]| taints.iter().any(|t| t.effect == Effect::PreferNoSchedule);
    let any_soft = snapshot.nodes.iter().any(|n| soft(&n.taints))
        || snapshot.nodeclaims.iter().any(|c| soft(&c.taints))
        || snapshot.nodepools.iter().any(|p| soft(&p.taints))
        || snapshot
            .machine_deployments
            .iter()
            .any(|m| m.flavor.as_ref().is_ok_and(|f| soft(&f.taints)));
    let changes = |i: usize| any_soft || snapshot.pods[i].demand.node_affinity.len() > 1;
    if !pending.iter().any(|&i| changes(i)) {
        return None;
    }
    let mut out = snapshot.clone();
    for &i in pending.iter().filter(|&&i| changes(i)) {
        let demand =
            std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut out.pods[i]).demand);
        demand.prefer_no_schedule_hard = any_soft;
        if demand.node_affinity.len() > 1 {
            let rest = demand.node_affinity.split_off(1);
            later.insert(i, rest);
        }
    }
    Some(out)
}

/// Karpenter's queue (`byCPUAndMemoryDescending` in core `provisioning/scheduling/queue.go`):
/// CPU request descending, memory descending, creation time, then uid (a pod read from a file
/// may have none: those sort first), then `namespace/name`, so the order is total.
pub(crate) fn queue_order(snapshot: &Snapshot, pending: &[usize]) -> Vec<usize> {
    let mut q = pending.to_vec();
    q.sort_by(|&a, &b| {
        let (pa, pb) = (&snapshot.pods[a], &snapshot.pods[b]);
        pb.demand
            .requests
            .cpu_millis
            .cmp(&pa.demand.requests.cpu_millis)
            .then(
                pb.demand
                    .requests
                    .memory_bytes
                    .cmp(&pa.demand.requests.memory_bytes),
            )
            .then(pa.created.cmp(&pb.created))
            .then_with(|| pa.uid.cmp(&pb.uid))
            .then_with(|| pa.demand.cmp_key(&pb.demand))
    });
    q
}

/// Places what fits on existing (and in-flight) nodes, first fit in queue order; returns the rest.
pub(crate) fn place_on_existing(state: &mut ClusterState, queue: &[usize]) -> Vec<usize> {
    let mut rest = Vec::new();
    // Full nodes are skipped in runs ([`FreeIndex`]): the first node that takes the pod is the
    // one a scan in order finds.
    let mut free = FreeIndex::new(state);
    for &pod in queue {
        // Room first: it turns most full nodes away before the whole fit check.
        let requests = &state.snapshot().pods[pod].demand.requests;
        match free.first(requests, |n| {
            requests.fits_in(&state.nodes[n].free) && state.can_place(pod, n)
        }) {
            Some(n) => {
                state.place(pod, n);
                free.update(n, &state.nodes[n].free);
            }
            None => rest.push(pod),
        }
    }
    rest
}

/// A pod (snapshot index) and the node it is placed on.
pub(crate) type PodOnNode = (usize, String);

/// Collects the pods placed on existing and in-flight nodes of a state.
pub(crate) fn existing_placements(state: &ClusterState) -> (Vec<PodOnNode>, Vec<PodOnNode>) {
    let mut existing = Vec::new();
    let mut in_flight = Vec::new();
    for n in &state.nodes {
        for &p in &n.pods {
            match n.origin {
                NodeOrigin::Existing(_) => existing.push((p, n.name.clone())),
                NodeOrigin::InFlight(_) => in_flight.push((p, n.name.clone())),
                NodeOrigin::New(_) => {}
            }
        }
    }
    (existing, in_flight)
}

/// The new nodes of a state.
pub(crate) fn new_nodes(state: &ClusterState, offerings: &[Offering]) -> Vec<NewNode> {
    state
        .nodes
        .iter()
        .filter_map(|n| match n.origin {
            NodeOrigin::New(o) if !n.pods.is_empty() => Some(NewNode {
                offering: offerings[o].clone(),
                name: n.name.clone(),
                pods: n.pods.clone(),
                requested: n.requested.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// NodePool limits and MachineDeployment max sizes, as a plan consumes them.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    /// Per NodePool name: (resource, limit, usage).
    pools: HashMap<String, Vec<(String, i64, i64)>>,
    /// Per MachineDeployment: (max, current + planned).
    sizes: HashMap<String, (i64, i64)>,
}

impl Budget {
    /// Usage from existing nodes of each pool (by the `karpenter.sh/nodepool` label) and current
    /// replicas of each MachineDeployment.
    pub(crate) fn new(snapshot: &Snapshot) -> Budget {
        let mut pools = HashMap::new();
        for pool in &snapshot.nodepools {
            let nodes: Vec<_> = snapshot
                .nodes
                .iter()
                .filter(|n| n.labels.get(crate::vocab::keys::NODEPOOL) == Some(&pool.name))
                .collect();
            // NodeClaims without a Node yet count with their flavor's capacity.
            let in_flight: Vec<Resources> = snapshot
                .in_flight_claims()
                .filter(|c| c.node_pool.as_ref() == Some(&pool.name))
                .filter_map(|c| snapshot.claim_machine_deployment(c))
                .filter_map(|md| {
                    snapshot
                        .machine_deployments
                        .iter()
                        .find(|r| r.key() == md)
                        .and_then(|r| r.flavor.as_ref().ok())
                        .map(|f| f.capacity.clone())
                })
                .collect();
            let limits = pool
                .limits
                .iter()
                .map(|l| {
                    let usage = if l.resource == "nodes" {
                        (nodes.len() + in_flight.len()) as i64
                    } else {
                        nodes
                            .iter()
                            .map(|n| n.capacity.get(&l.resource))
                            .sum::<i64>()
                            + in_flight.iter().map(|c| c.get(&l.resource)).sum::<i64>()
                    };
                    (l.resource.clone(), l.amount, usage)
                })
                .collect();
            pools.insert(pool.name.clone(), limits);
        }
        let mut sizes = HashMap::new();
        for md in &snapshot.machine_deployments {
            if let Ok(f) = &md.flavor
                && let Some(max) = f.max_size
            {
                let current = md
                    .object
                    .value
                    .pointer("/spec/replicas")
                    .and_then(|v| v.as_i64())
                    .unwrap_or(0);
                sizes.insert(f.machine_deployment.clone(), (max, current));
            }
        }
        Budget { pools, sizes }
    }

    /// Why one more node of this offering is not allowed, if it is not.
    pub(crate) fn check(&self, o: &Offering) -> Result<(), Unfit> {
        self.check_pool(o)?;
        self.check_size(o)
    }

    /// The NodePool-limit part of [`Budget::check`]: one more node of this offering's capacity
    /// would exceed a limit of its pool.
    pub(crate) fn check_pool(&self, o: &Offering) -> Result<(), Unfit> {
        if let Some(limits) = self.pools.get(&o.node_pool) {
            for (resource, limit, usage) in limits {
                let add = if resource == "nodes" {
                    1
                } else {
                    o.flavor.capacity.get(resource)
                };
                if usage + add > *limit {
                    return Err(Unfit::LimitReached {
                        node_pool: o.node_pool.clone(),
                        resource: resource.clone(),
                        limit: *limit,
                        usage: *usage,
                    });
                }
            }
        }
        Ok(())
    }

    /// The MachineDeployment part of [`Budget::check`]: its max size is reached.
    pub(crate) fn check_size(&self, o: &Offering) -> Result<(), Unfit> {
        if let Some((max, used)) = self.sizes.get(&o.flavor.machine_deployment)
            && used + 1 > *max
        {
            return Err(Unfit::MaxSizeReached {
                machine_deployment: o.flavor.machine_deployment.clone(),
                max: *max,
            });
        }
        Ok(())
    }

    /// How many more nodes of this offering are allowed.
    pub(crate) fn room(&self, o: &Offering) -> i64 {
        let mut room = i64::MAX;
        if let Some(limits) = self.pools.get(&o.node_pool) {
            for (resource, limit, usage) in limits {
                let per_node = if resource == "nodes" {
                    1
                } else {
                    o.flavor.capacity.get(resource)
                };
                if per_node > 0 {
                    room = room.min(((limit - usage) / per_node).max(0));
                }
            }
        }
        if let Some((max, used)) = self.sizes.get(&o.flavor.machine_deployment) {
            room = room.min((max - used).max(0));
        }
        room
    }

    /// Charges a NodePool's limits with one node of the largest of these options, per resource
    /// (what a NodeClaim that may still become any of them could use), as Karpenter does for an
    /// in-batch NodeClaim (`subtractMax` in core `provisioning/scheduling/scheduler.go`).
    pub(crate) fn charge_pool_max(&mut self, node_pool: &str, options: &[&Offering]) {
        if options.is_empty() {
            return;
        }
        if let Some(limits) = self.pools.get_mut(node_pool) {
            for (resource, _, usage) in limits.iter_mut() {
                *usage += if resource == "nodes" {
                    1
                } else {
                    options
                        .iter()
                        .map(|o| o.flavor.capacity.get(resource))
                        .max()
                        .unwrap_or(0)
                };
            }
        }
    }

    /// Records one more node of this offering's MachineDeployment (not its pool's limits).
    pub(crate) fn take_size(&mut self, o: &Offering) {
        if let Some((_, used)) = self.sizes.get_mut(&o.flavor.machine_deployment) {
            *used += 1;
        }
    }

    /// Records one more node of this offering.
    pub(crate) fn take(&mut self, o: &Offering) {
        if let Some(limits) = self.pools.get_mut(&o.node_pool) {
            for (resource, _, usage) in limits.iter_mut() {
                *usage += if resource == "nodes" {
                    1
                } else {
                    o.flavor.capacity.get(resource)
                };
            }
        }
        if let Some((_, used)) = self.sizes.get_mut(&o.flavor.machine_deployment) {
            *used += 1;
        }
    }
}

/// Why a pod fits none of the offerings: one rejection per offering (a fresh node of it, with
/// the plan's budget and topology as they ended).
pub(crate) fn rejections(
    state: &ClusterState,
    budget: &Budget,
    offerings: &[Offering],
    pod: usize,
) -> Vec<Rejection> {
    let demand = &state.snapshot().pods[pod].demand;
    let multi_pool = offerings
        .iter()
        .map(|o| &o.node_pool)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let mut out = Vec::new();
    for o in offerings {
        let subject = if multi_pool {
            format!("{}/{}", o.node_pool, o.flavor.instance_type)
        } else {
            o.flavor.instance_type.clone()
        };
        let mut labels = o.labels.clone();
        labels.insert(
            crate::vocab::keys::HOSTNAME.to_string(),
            format!("{}-new", o.flavor.instance_type),
        );
        let unfit = static_fit(demand, &labels, &o.taints, &o.allocatable)
            .err()
            .or_else(|| {
                crate::model::hostport::first_clash(&demand.host_ports, &o.ports).map(|p| {
                    Unfit::HostPortInUse {
                        port: p.to_string(),
                    }
                })
            })
            .or_else(|| budget.check(o).err())
            .or_else(|| state.topology_fit(pod, &labels).err());
        if let Some(unfit) = unfit {
            out.push(Rejection { subject, unfit });
        }
    }
    if offerings.is_empty() {
        // Say which NodePool requirement ruled each flavor out, as core's "nodepool requirements
        // filtered out all available instance types" (`scheduler.go` `NewScheduler`).
        let (_, excluded) = crate::sched::catalog::offerings(state.snapshot(), true);
        out.extend(excluded.into_iter().map(|e| Rejection {
            subject: format!("{}/{}", e.node_pool, e.instance_type),
            unfit: e.unfit,
        }));
        if out.is_empty() {
            out.push(Rejection {
                subject: "catalog".to_string(),
                unfit: Unfit::NoOffering,
            });
        }
    }
    out
}

/// Fills in the unschedulable list for pods the strategy could not place.
pub(crate) fn finish(
    strategy: StrategyName,
    state: &ClusterState,
    budget: &Budget,
    offerings: &[Offering],
    unplaced: Vec<usize>,
) -> Placement {
    let (on_existing, on_in_flight) = existing_placements(state);
    Placement {
        strategy,
        new_nodes: new_nodes(state, offerings),
        on_existing,
        on_in_flight,
        unschedulable: unplaced
            .into_iter()
            .map(|p| (p, rejections(state, budget, offerings, p)))
            .collect(),
        lower_bound: None,
        relaxed: Vec::new(),
        cut_short: false,
        sizing: None,
    }
}

impl Budget {
    /// Gives back one node of this offering (a planned node moved to another flavor).
    pub(crate) fn release(&mut self, o: &Offering) {
        if let Some(limits) = self.pools.get_mut(&o.node_pool) {
            for (resource, _, usage) in limits.iter_mut() {
                *usage -= if resource == "nodes" {
                    1
                } else {
                    o.flavor.capacity.get(resource)
                };
            }
        }
        if let Some((_, used)) = self.sizes.get_mut(&o.flavor.machine_deployment) {
            *used -= 1;
        }
    }
}
