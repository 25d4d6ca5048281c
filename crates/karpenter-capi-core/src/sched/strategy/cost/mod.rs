//! `cost`, our strategy: the cheapest total price per hour for all placeable pods, ties broken
//! by least waste (smaller total capacity), then fewer nodes.
//!
//! Small batches (up to [`exact::EXACT_LIMIT`] pods, constraints within a node only) are solved
//! exactly by dynamic programming over subsets ([`exact`]). Larger ones are packed greedily by
//! pod class ([`greedy`]). Both work on the *distinct* offerings: flavors that differ only in
//! labels no pod asks about (e.g. the same size in three zones) are one choice.
//!
//! The optimizer itself (column generation, the covering LP, the integer search and the lower
//! bounds) knows nothing of Kubernetes and lives in `crates/packing-optimizer`; [`engine`] turns
//! pods and offerings into its classes and its nodes back into placements.

pub(crate) mod constrained;
pub(crate) mod engine;
pub(crate) mod exact;
pub(crate) mod followers;
pub mod foresight;
pub(crate) mod greedy;

use std::collections::HashMap;
use std::sync::Arc;

use super::{Budget, Placement, Strategy, finish, place_on_existing, queue_order};
use crate::model::flavor::Price;
use crate::model::labels::Labels;
use crate::model::pod::PodDemand;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::{self, Offering};
use crate::sched::fit::static_ok;
use crate::sched::fit::{Rejection, Unfit};
use crate::sched::min_values::MinValues;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;
use crate::vocab::keys;

/// The `cost` strategy.
pub(crate) struct Cost;

/// Which offerings each pending pod may use, computed once per distinct demand.
pub(crate) struct Allowed {
    /// Per pod (snapshot index): its demand's index.
    pub(crate) demand_of: HashMap<usize, usize>,
    /// Per distinct demand: a mask over the offerings.
    pub(crate) masks: Vec<Vec<bool>>,
    /// Per distinct demand: the NodePools passed over because a claim holding it alone would
    /// miss their `minValues` ([`crate::sched::min_values`]).
    pub(crate) blocked: Vec<Vec<Unfit>>,
}

impl Allowed {
    /// Whether `pod` may use offering `o`.
    pub(crate) fn permits(&self, pod: usize, o: usize) -> bool {
        self.demand_of.get(&pod).is_some_and(|&d| self.masks[d][o])
    }

    /// The offerings `pod` may use.
    pub(crate) fn list(&self, pod: usize) -> Vec<usize> {
        match self.demand_of.get(&pod) {
            Some(&d) => (0..self.masks[d].len())
                .filter(|&o| self.masks[d][o])
                .collect(),
            None => Vec::new(),
        }
    }

    /// Whether `pod` may use any offering.
    pub(crate) fn any(&self, pod: usize) -> bool {
        self.demand_of
            .get(&pod)
            .is_some_and(|&d| self.masks[d].iter().any(|&b| b))
    }
}

impl Strategy for Cost {
    fn name(&self) -> StrategyName {
        StrategyName::Cost
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        plan_within(snapshot, pending, None)
    }
}

/// `cost` with a forecast of the pods about to arrive ([`foresight`]): what the controller
/// provisions with. An empty forecast plans exactly as [`Cost`].
pub struct Foreseeing(pub foresight::Forecast);

impl Strategy for Foreseeing {
    fn name(&self) -> StrategyName {
        StrategyName::Cost
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        foresight::plan(snapshot, pending, &self.0)
    }
}

/// `cost`'s plan with the optimizer's budget in units of work (default: by batch size, see
/// [`engine::work_for`]); consolidation's many trials pass a small one.
pub(crate) fn plan_within(snapshot: &Snapshot, pending: &[usize], work: Option<u64>) -> Placement {
    {
        let (all_offerings, _) = catalog::offerings(snapshot, true);
        let offerings = distinct(snapshot, &all_offerings);
        let mut state = ClusterState::new(snapshot, &all_offerings);
        let budget = Budget::new(snapshot);
        let min_values = MinValues::new(snapshot, &all_offerings, &budget).map(Arc::new);
        state.track_min_values(min_values.clone());
        let queue = queue_order(snapshot, pending);
        let mut rest = place_on_existing(&mut state, &queue);
        let waiting = followers::waiting(&state, &rest);
        rest.retain(|p| !waiting.contains_key(p));
        let allowed =
            allowed_offerings(snapshot, &offerings, &budget, min_values.as_deref(), &rest);
        let (placeable, mut unplaced): (Vec<usize>, Vec<usize>) =
            rest.iter().partition(|&&p| allowed.any(p));
        unplaced.extend(waiting.keys().copied());

        let cross_node = state.has_cross_node_constraints();
        let exact = if placeable.len() <= exact::EXACT_LIMIT && !cross_node {
            exact::solve(snapshot, &offerings, &allowed, &placeable)
                .filter(|nodes| exact::within_budget(&budget, &offerings, nodes))
                .filter(|nodes| min_values.is_none() || claims_hold(&state, &offerings, nodes))
        } else {
            None
        };
        let mut cut_short = false;
        let (state, budget_after, lower_bound) = match exact {
            Some(nodes) => {
                let mut budget_after = budget.clone();
                for (o, pods) in nodes {
                    let n = state.open(&offerings[o], NodeOrigin::New(o), None);
                    budget_after.take(&offerings[o]);
                    for p in pods {
                        state.place(p, n);
                    }
                }
                // The exact optimum is its own lower bound.
                let price = super::new_nodes(&state, &offerings)
                    .iter()
                    .map(|n| n.offering.flavor.price.0)
                    .sum();
                (state, budget_after, Some(Price(price)))
            }
            None => {
                let (state, budget_after, left, bound, cut) = optimized(
                    &state, &budget, &offerings, &allowed, &placeable, cross_node, work,
                );
                cut_short = cut;
                unplaced.extend(left);
                (state, budget_after, bound)
            }
        };
        let position: HashMap<usize, usize> =
            queue.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        unplaced.sort_by_key(|p| position.get(p).copied());
        let mut placement = finish(
            StrategyName::Cost,
            &state,
            &budget_after,
            &offerings,
            unplaced,
        );
        // Every pod's resources and what hostname anti-affinity forces on the new nodes: the
        // relaxation leaves out the pods placed one at a time.
        let on_new: Vec<usize> = placement
            .new_nodes
            .iter()
            .flat_map(|n| n.pods.iter().copied())
            .collect();
        let forced = constrained::forced(snapshot, &offerings, &allowed, &on_new);
        placement.lower_bound = lower_bound.map(|b| b.max(forced));
        placement.cut_short = cut_short;
        for (pod, rejections) in placement.unschedulable.iter_mut() {
            if let Some(unfit) = waiting.get(pod) {
                *rejections = vec![Rejection {
                    subject: "every NodePool".to_string(),
                    unfit: unfit.clone(),
                }];
            }
            if let Some(&d) = allowed.demand_of.get(pod) {
                rejections.extend(allowed.blocked[d].iter().map(|unfit| Rejection {
                    subject: match unfit {
                        Unfit::MinValuesUnmet { node_pool, .. } => node_pool.clone(),
                        _ => String::new(),
                    },
                    unfit: unfit.clone(),
                }));
            }
        }
        placement
    }
}

/// Whether every node of an exact plan keeps its NodePool's `minValues` (the exact solver
/// packs without them; when one misses, the checked packing plans instead).
fn claims_hold(state: &ClusterState, offerings: &[Offering], nodes: &[exact::SolvedNode]) -> bool {
    let mut trial = state.clone();
    nodes.iter().all(|(o, pods)| {
        let n = trial.open(&offerings[*o], NodeOrigin::New(*o), None);
        pods.iter().all(|&p| {
            let ok = trial.claim_unmet(p, n).is_none();
            trial.place(p, n);
            ok
        })
    })
}

/// Batches at most this large are also packed by the greedy alone, and the cheaper plan wins:
/// a safety net that costs little at this size.
const GREEDY_CROSS_CHECK: usize = 400;

/// The optimizer's plan (classes, column generation, diving, local search), materialised
/// through the checked fit; what it leaves, and the pods that need sequential placement, go
/// through the checked greedy. Returns the state, the budget after it, the pods left unplaced,
/// the lower bound (when every optimized pod was placed) and whether the optimizer's
/// wall-clock safety net cut it short.
fn optimized<'a>(
    start: &ClusterState<'a>,
    budget: &Budget,
    offerings: &[Offering],
    allowed: &Allowed,
    placeable: &[usize],
    cross_node: bool,
    work: Option<u64>,
) -> (ClusterState<'a>, Budget, Vec<usize>, Option<Price>, bool) {
    let snapshot = start.snapshot();
    // Pods with required pod affinity, and the pods of the batch they select (their targets):
    // placed one at a time, so a target's node is chosen with its followers to come.
    let mut terms: Vec<&crate::model::pod::AffinityTerm> = Vec::new();
    for &p in placeable {
        for t in &snapshot.pods[p].demand.affinity {
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
    }
    let (sequential, optimizable): (Vec<usize>, Vec<usize>) = placeable.iter().partition(|&&p| {
        let d = &snapshot.pods[p].demand;
        engine::needs_sequential(d) || terms.iter().any(|t| t.selects(&d.namespace, &d.labels))
    });
    let classes = engine::classes(start, offerings, allowed, &optimizable);
    let work = work.unwrap_or_else(|| engine::work_for(optimizable.len()));
    let solved = engine::optimize(&classes, work);
    let cut_short = solved.cut_short;
    let mut state = start.clone();
    let mut budget_after = budget.clone();
    let rest = engine::materialise(
        &mut state,
        &mut budget_after,
        offerings,
        allowed,
        &classes,
        &solved.nodes,
    );
    let optimized_all = rest.is_empty();
    let mut left = greedy::pack(&mut state, &mut budget_after, offerings, allowed, &rest);
    // Constraints across nodes (spread, affinity, preferences): checked placement one pod at
    // a time, as Karpenter does; the class packing does not model them.
    left.extend(crate::sched::topology::place::pack(
        &mut state,
        &mut budget_after,
        offerings,
        &|p, o| allowed.permits(p, o),
        &sequential,
    ));
    if !cross_node {
        greedy::downsize(&mut state, &mut budget_after, offerings, allowed);
    }
    let optimized_placed = optimized_all || {
        let left_set: std::collections::HashSet<&usize> = left.iter().collect();
        optimizable.iter().all(|p| !left_set.contains(p))
    };
    let bound = optimized_placed.then(|| {
        // Floor, less a relative hair for floating point: a bound must never exceed the optimum.
        Price(
            (solved.lower_bound * (1.0 - 1e-6) * Price::UNIT as f64)
                .floor()
                .max(0.0) as i64,
        )
    });
    if placeable.len() <= GREEDY_CROSS_CHECK {
        let mut g_state = start.clone();
        let mut g_budget = budget.clone();
        let g_left = if cross_node {
            crate::sched::topology::place::pack(
                &mut g_state,
                &mut g_budget,
                offerings,
                &|p, o| allowed.permits(p, o),
                placeable,
            )
        } else {
            let left = greedy::pack(&mut g_state, &mut g_budget, offerings, allowed, placeable);
            greedy::downsize(&mut g_state, &mut g_budget, offerings, allowed);
            left
        };
        let price = |s: &ClusterState| -> i64 {
            super::new_nodes(s, offerings)
                .iter()
                .map(|n| n.offering.flavor.price.0)
                .sum()
        };
        if (g_left.len(), price(&g_state)) < (left.len(), price(&state)) {
            let g_bound = bound.filter(|_| g_left.is_empty());
            return (g_state, g_budget, g_left, g_bound, cut_short);
        }
    }
    left.sort_unstable();
    left.dedup();
    (state, budget_after, left, bound, cut_short)
}

/// Label keys some pod's scheduling depends on (selectors, affinity, non-hostname topology).
pub(crate) fn relevant_keys(snapshot: &Snapshot) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for p in &snapshot.pods {
        let d = &p.demand;
        out.extend(d.node_selector.iter().map(|r| r.key.clone()));
        out.extend(d.node_affinity.iter().flatten().map(|r| r.key.clone()));
        out.extend(
            d.anti_affinity
                .iter()
                .chain(d.affinity.iter())
                .map(|t| t.topology_key.clone()),
        );
        // Spread, preferences and volumes tell zones apart too.
        out.extend(d.spread.iter().map(|c| c.topology_key.clone()));
        out.extend(
            d.preferred_affinity
                .iter()
                .chain(d.preferred_anti_affinity.iter())
                .map(|w| w.term.topology_key.clone()),
        );
        out.extend(
            d.preferred_node_affinity
                .iter()
                .flat_map(|t| t.requirements.iter().map(|r| r.key.clone())),
        );
        out.extend(
            d.volume_requirements
                .iter()
                .flat_map(|v| v.alternatives.iter().flatten().map(|r| r.key.clone())),
        );
    }
    for ds in &snapshot.daemonsets {
        out.extend(ds.pod.node_selector.iter().map(|r| r.key.clone()));
        out.extend(ds.pod.node_affinity.iter().flatten().map(|r| r.key.clone()));
    }
    out.remove(keys::HOSTNAME);
    out
}

/// One offering per group of interchangeable ones: same pool, allocatable, capacity, price,
/// taints and relevant labels (and not size-bounded, whose budgets are per MachineDeployment).
fn distinct(snapshot: &Snapshot, offerings: &[Offering]) -> Vec<Offering> {
    let relevant = relevant_keys(snapshot);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for o in offerings {
        let labels: Labels = o
            .labels
            .iter()
            .filter(|(k, _)| relevant.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let bounded = o
            .flavor
            .max_size
            .map(|_| o.flavor.machine_deployment.clone());
        let key = format!(
            "{}|{:?}|{:?}|{:?}|{:?}|{}|{:?}|{:?}|{:?}",
            o.pool_index,
            o.allocatable,
            o.ports,
            o.flavor.capacity,
            o.taints,
            o.flavor.price.0,
            labels,
            bounded,
            o.flavor.instance_type
        );
        // Same instance type in several zones collapses; different types never do (their names
        // are what a NodeClaim asks for).
        if seen.insert(key) {
            out.push(o.clone());
        }
    }
    out
}

/// For each pending pod, the offerings it may use: those of the highest-weight NodePool in which
/// it fits an empty node within the budget (Karpenter's weight semantics).
fn allowed_offerings(
    snapshot: &Snapshot,
    offerings: &[Offering],
    budget: &Budget,
    min_values: Option<&MinValues>,
    pods: &[usize],
) -> Allowed {
    let mut index: HashMap<greedy::DemandKey, usize> = HashMap::new();
    let mut allowed = Allowed {
        demand_of: HashMap::new(),
        masks: Vec::new(),
        blocked: Vec::new(),
    };
    let in_budget: Vec<bool> = offerings.iter().map(|o| budget.check(o).is_ok()).collect();
    // Per demand without its requests: the offerings whose labels and taints admit it. A
    // demand then fits where its kind is admitted and its requests fit the allocatable (the
    // static fit's parts are independent), so the label checks run once per kind.
    let mut kinds: HashMap<greedy::DemandKey, Vec<bool>> = HashMap::new();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        // Which nodes a pod fits statically does not depend on its labels or namespace.
        let key = greedy::DemandKey::unlabelled(demand);
        let d = match index.get(&key) {
            Some(&d) => d,
            None => {
                let admits = kinds
                    .entry(greedy::DemandKey::without_requests(demand))
                    .or_insert_with_key(|kind| {
                        offerings
                            .iter()
                            .map(|o| fits_empty(kind.demand(), o))
                            .collect()
                    });
                let mut fitting: Vec<usize> = (0..offerings.len())
                    .filter(|&o| {
                        in_budget[o]
                            && admits[o]
                            && demand.requests.fits_in(&offerings[o].allocatable)
                    })
                    .collect();
                // A pool whose claim could not hold the pod alone and keep its `minValues` is
                // passed over: the pod goes to the next pool by weight, as core's scheduler
                // goes to the next NodeClaim template when `CanAdd` fails.
                let mut blocked = Vec::new();
                if let Some(mv) = min_values {
                    let pools: std::collections::BTreeSet<&str> = fitting
                        .iter()
                        .map(|&o| offerings[o].node_pool.as_str())
                        .collect();
                    for pool in pools {
                        if let Some(unfit) = mv.unmet_alone(pool, demand) {
                            fitting.retain(|&o| offerings[o].node_pool != pool);
                            blocked.push(unfit);
                        }
                    }
                }
                let top = fitting.iter().map(|&o| offerings[o].weight).max();
                let mut mask = vec![false; offerings.len()];
                for o in fitting
                    .into_iter()
                    .filter(|&o| Some(offerings[o].weight) == top)
                {
                    mask[o] = true;
                }
                allowed.masks.push(mask);
                allowed.blocked.push(blocked);
                index.insert(key, allowed.masks.len() - 1);
                allowed.masks.len() - 1
            }
        };
        allowed.demand_of.insert(p, d);
    }
    allowed
}

/// Whether a pod fits an empty node of the offering (a new node has no hostname a pod could
/// select, so the offering's labels are used as they are).
fn fits_empty(demand: &PodDemand, o: &Offering) -> bool {
    static_ok(demand, &o.labels, &o.taints, &o.allocatable)
        && crate::model::hostport::first_clash(&demand.host_ports, &o.ports).is_none()
}

/// Whether two pods may not share a node (hostname anti-affinity either way, or a host port).
pub(crate) fn conflict(a: &PodDemand, b: &PodDemand) -> bool {
    let anti = |x: &PodDemand, y: &PodDemand| {
        x.anti_affinity
            .iter()
            .any(|t| t.topology_key == keys::HOSTNAME && t.selects(&y.namespace, &y.labels))
    };
    anti(a, b)
        || anti(b, a)
        || crate::model::hostport::first_clash(&a.host_ports, &b.host_ports).is_some()
}
