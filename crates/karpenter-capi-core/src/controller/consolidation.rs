//! Consolidation of underutilized nodes (`WhenEmptyOrUnderutilized`): remove nodes whose pods
//! fit elsewhere, or replace them by a strictly cheaper set, proven with the `cost` scheduler on
//! the cluster without them. Multi-node first (the largest prefix of the best savings-per-disruption
//! candidates that works, by binary search), then single-node, as Karpenter does. One
//! deliberate difference: while pods keep arriving, a replacement must also save over `cost`'s
//! provisioning forecast ([`Ahead`]), so it only ever disrupts less.

use std::collections::HashSet;

use jiff::Timestamp;

use crate::model::flavor::Price;
use crate::model::snapshot::{EVICTION_COST_ONE, Snapshot};
use crate::sched::strategy::NewNode;
use crate::sched::strategy::cost::{engine, foresight, plan_within};

pub mod balanced;
#[cfg(test)]
mod balanced_tests;
pub(crate) mod payback;
mod room;
use balanced::{BALANCED_K, Part, PoolTotals, evaluate_move};
use payback::Falling;
use room::Scratch;
pub(crate) use room::usable_free;
pub use room::{Moving, Room};

/// A node that may be consolidated.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// Its NodeClaim.
    pub(crate) claim: String,
    /// Its Node.
    pub(crate) node: String,
    /// Its price per hour.
    pub(crate) price: Price,
    /// Pods that would have to move (snapshot indices).
    pub(crate) pods: Vec<usize>,
    /// What disrupting it costs, in units of 2^-27 (see [`disruption_cost`]).
    pub(crate) disruption_cost: i64,
}

impl Candidate {
    /// A candidate of `claim` on `node` at `price`, whose `pods` (snapshot indices) would move.
    pub(crate) fn new(
        snapshot: &Snapshot,
        claim: String,
        node: String,
        price: Price,
        pods: Vec<usize>,
    ) -> Candidate {
        let disruption_cost = disruption_cost(snapshot, &pods);
        Candidate {
            claim,
            node,
            price,
            pods,
            disruption_cost,
        }
    }
}

/// What disrupting a node whose reschedulable pods are `pods` costs, in units of 2^-27
/// ([`EVICTION_COST_ONE`] is 1): 1 for the node itself plus each pod's eviction cost where it
/// is positive. Mirrors Karpenter's `computeRescheduleDisruptionCost` (`disruption/types.go`),
/// with `PerNodeBaseDisruptionCost` 1.
pub(crate) fn disruption_cost(snapshot: &Snapshot, pods: &[usize]) -> i64 {
    EVICTION_COST_ONE
        + pods
            .iter()
            .filter_map(|&i| snapshot.pods.get(i))
            .map(|p| p.eviction_cost().max(0))
            .sum::<i64>()
}

/// Consolidation's order: the best savings per unit of disruption first, i.e. the highest
/// price over disruption cost (Karpenter's `SavingsRatio`), as Karpenter's `sortCandidates`
/// (`disruption/consolidation.go`) orders both single- and multi-node consolidation. The ratios
/// are compared exactly (cross-multiplied in 128 bits); equal ratios go fewest pods first,
/// then the most expensive, then by node name, so the order never depends on the input's.
pub(crate) fn sort_candidates(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        let left = i128::from(b.price.0) * i128::from(a.disruption_cost.max(1));
        let right = i128::from(a.price.0) * i128::from(b.disruption_cost.max(1));
        left.cmp(&right)
            .then(a.pods.len().cmp(&b.pods.len()))
            .then(b.price.cmp(&a.price))
            .then(a.node.cmp(&b.node))
    });
}

/// A consolidation decision.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    /// The candidates removed.
    pub(crate) remove: Vec<Candidate>,
    /// The new nodes replacing them (empty: their pods fit on the remaining nodes).
    pub(crate) replacements: Vec<NewNode>,
    /// Price per hour saved.
    pub(crate) saving: Price,
    /// Pods that move onto remaining nodes: (snapshot index, node).
    pub(crate) onto_existing: Vec<(usize, String)>,
}

/// A `Balanced` pool's consolidation: its name and its totals (the only entry).
pub(crate) struct Balanced<'a> {
    /// The pool.
    pub(crate) pool: &'a str,
    /// Its totals, keyed by its name.
    pub(crate) totals: std::collections::BTreeMap<String, PoolTotals>,
}

/// At most this many single-node trials per pass: each is a full scheduling simulation.
pub(crate) const SINGLE_NODE_TRIALS: usize = 20;
/// At most this many nodes in one multi-node decision.
pub(crate) const MULTI_NODE_MAX: usize = 100;

/// The optimizer's work per trial, in units (never time, so a trial's answer does not depend on
/// the machine's speed or the build): a pass runs up to ~30 trials, and the pods of a few nodes
/// are a small batch.
fn trial_budget() -> u64 {
    engine::TRIAL_WORK
}

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
            // Only the pods that move are copied; the rest stay shared with `snapshot`.
            let p = std::sync::Arc::make_mut(p);
            // DaemonSet pods go with their node. Pending pods nominated to it move like its
            // own: a consolidation must pay for their room too (Karpenter core simulates
            // pending pods with the candidates' pods).
            if p.daemon {
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

/// Where the pods of some nodes would go if they were drained now.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Home {
    /// Every pod fits on room that exists.
    Fits,
    /// The pods need these new nodes first.
    Needs(Vec<NewNode>),
    /// These pods (`namespace/name`) fit on no node and no flavor.
    Nowhere(Vec<String>),
}

/// Whether the pods of `nodes` have a home, counting only room that exists now: Ready nodes not
/// being deleted whose NodeClaim (if any) is Initialized and not being deleted. In-flight and initializing claims do
/// not count, so a voluntary drain never starts on a promise. Mirrors Karpenter core
/// `disruption/helpers.go` `SimulateScheduling` (a candidate is disrupted only when its pods
/// schedule) and `disruption/drift.go` (a drifted node whose pods fit nowhere is not drained).
pub(crate) fn home(snapshot: &Snapshot, nodes: &[String]) -> Home {
    let mut view = snapshot.clone();
    // Nodes of claims not initialized yet or being deleted (about to be drained): a Node is
    // such a claim's when it carries its nodeName or its providerID. Sets, not a scan of every
    // Node per claim (quadratic at 10k claims).
    let mut leaving_names: HashSet<&str> = HashSet::new();
    let mut leaving_pids: HashSet<&str> = HashSet::new();
    for c in view
        .nodeclaims
        .iter()
        .filter(|c| c.deleting || !c.condition_true("Initialized"))
    {
        leaving_names.extend(c.node_name.as_deref());
        leaving_pids.extend(c.provider_id.as_deref());
    }
    let uninitialized: HashSet<String> = view
        .nodes
        .iter()
        .filter(|n| {
            leaving_names.contains(n.name.as_str())
                || n.provider_id
                    .as_deref()
                    .is_some_and(|p| leaving_pids.contains(p))
        })
        .map(|n| n.name.clone())
        .collect();
    view.nodes.retain(|n| {
        !nodes.contains(&n.name)
            && n.ready == Some(true)
            && !n.deleting
            && !uninitialized.contains(&n.name)
    });
    // A claim without a node in this view is no room (not in flight either).
    let kept_names: HashSet<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
    let kept_pids: HashSet<&str> = view
        .nodes
        .iter()
        .filter_map(|n| n.provider_id.as_deref())
        .collect();
    for c in view.nodeclaims.iter_mut() {
        let has_node = c
            .node_name
            .as_deref()
            .is_some_and(|n| kept_names.contains(n))
            || c.provider_id
                .as_deref()
                .is_some_and(|p| kept_pids.contains(p));
        if !has_node || !c.condition_true("Initialized") {
            c.deleting = true;
        }
    }
    let mut moved = Vec::new();
    for (i, p) in view.pods.iter_mut().enumerate() {
        if p.terminal || !p.node_name.as_ref().is_some_and(|n| nodes.contains(n)) {
            continue;
        }
        let p = std::sync::Arc::make_mut(p);
        // Pending pods nominated to these nodes are provisioned for by this pass (which sees
        // the nodes disrupted), so they need no home here.
        if p.daemon || p.mirror || p.nominated {
            p.terminal = true;
        } else {
            p.node_name = None;
            p.marked_unschedulable = true;
            moved.push(i);
        }
    }
    if moved.is_empty() {
        return Home::Fits;
    }
    let placement = plan_within(&view, &moved, Some(trial_budget()));
    if !placement.unschedulable.is_empty() {
        return Home::Nowhere(
            placement
                .unschedulable
                .iter()
                .map(|(p, _)| view.pods[*p].demand.key())
                .collect(),
        );
    }
    if placement.new_nodes.is_empty() {
        Home::Fits
    } else {
        Home::Needs(placement.new_nodes)
    }
}

/// What the recent arrivals forecast for a consolidation pass: the pods `cost`'s provisioning
/// foresight expects over its window, and what they would add to the bill with every node kept.
struct Ahead {
    forecast: foresight::Forecast,
    /// Price per hour of the new nodes the expected pods need on the cluster as it is.
    keep: Price,
}

impl Ahead {
    /// None without a time, or nothing is expected (no recent arrival, or a pool that never
    /// consolidates: see `foresight::ahead`).
    fn new(snapshot: &Snapshot, now: Option<Timestamp>) -> Option<Ahead> {
        let forecast = foresight::ahead(snapshot, now?);
        if forecast.is_empty() {
            return None;
        }
        let (aug, expected) = foresight::with_expected(snapshot, &forecast);
        let keep = plan_within(&aug, &expected, Some(trial_budget())).price();
        Some(Ahead { forecast, keep })
    }

    /// Whether a replacement that saves now still saves over the forecast: the moved and the
    /// expected pods together, on the cluster without the removed nodes, must cost less than
    /// the removed nodes plus what the expected pods cost with them kept. A deliberate
    /// difference from Karpenter (which prices the replacement now only): it can only make
    /// this controller disrupt less, never more (docs/benchmarks.md "Generated traces").
    fn still_saves(&self, view: &Snapshot, moved: &[usize], removed: i64) -> bool {
        let (aug, expected) = foresight::with_expected(view, &self.forecast);
        let mut together = moved.to_vec();
        together.extend(&expected);
        let joint = plan_within(&aug, &together, Some(trial_budget()));
        if joint.unschedulable.iter().any(|(p, _)| moved.contains(p)) {
            return false;
        }
        joint.price().0 < removed + self.keep.0
    }
}

/// [`trial`] on the search's scratch copy, rejected without a simulation when [`Room`] shows
/// it cannot succeed.
/// The copy is made at the first trial that needs it.
fn trial_within(
    snapshot: &Snapshot,
    scratch: &mut Option<Scratch>,
    room: &Room,
    ahead: &(Option<Timestamp>, std::cell::OnceCell<Option<Ahead>>),
    balanced: Option<&Balanced<'_>>,
    falling: Option<&Falling>,
    remove: &[Candidate],
) -> Option<Decision> {
    if room.cannot_pay(remove) {
        return None;
    }
    scratch
        .get_or_insert_with(|| Scratch::new(snapshot))
        .without(remove, |view, moved| {
            let d = decide(view, moved, remove)?;
            // A `Balanced` pool takes only a move whose savings are worth its disruption
            // (core `ApproveCommand`, in both single- and multi-node consolidation).
            if let Some(b) = balanced {
                let parts: Vec<Part<'_>> = remove
                    .iter()
                    .map(|c| Part {
                        pool: b.pool,
                        balanced: true,
                        price: c.price,
                        disruption: c.disruption_cost,
                    })
                    .collect();
                if !evaluate_move(&parts, d.saving.0, &b.totals, BALANCED_K).0 {
                    return None;
                }
            }
            if d.replacements.is_empty() {
                return Some(d);
            }
            let removed: i64 = remove.iter().map(|c| c.price.0).sum();
            if falling.is_some_and(|f| !f.pays(view, moved, remove, Price(removed), d.saving)) {
                return None;
            }
            match ahead.1.get_or_init(|| Ahead::new(snapshot, ahead.0)) {
                Some(a) if !a.still_saves(view, moved, removed) => None,
                _ => Some(d),
            }
        })
}

/// Whether removing `remove` (and adding the cheapest replacements) is strictly cheaper, decided
/// over the view without `remove`, its pods `moved`.
fn decide(view: &Snapshot, moved: &[usize], remove: &[Candidate]) -> Option<Decision> {
    let placement = plan_within(view, moved, Some(trial_budget()));
    if !placement.unschedulable.is_empty() {
        return None;
    }
    // Never one node into several (core `consolidation.go` computeConsolidation): more
    // replacements than nodes removed is churn, not consolidation.
    if placement.new_nodes.len() > 1 {
        return None;
    }
    let removed: i64 = remove.iter().map(|c| c.price.0).sum();
    let added = placement.price().0;
    // The replacement's cheaper options must keep its pool's minValues.
    if let Some(n) = placement.new_nodes.first()
        && crate::sched::min_values::replacement_unmet(
            view,
            view,
            n,
            remove.iter().map(|c| (c.claim.as_str(), c.price)),
        )
        .is_some()
    {
        return None;
    }
    (added < removed).then(|| Decision {
        remove: remove.to_vec(),
        replacements: placement.new_nodes,
        saving: Price(removed - added),
        onto_existing: placement.on_existing,
    })
}

/// Whether a multi-node decision replaces its nodes by a node of the flavor of one of them.
/// Karpenter rejects it (core `disruption/multinodeconsolidation.go` `filterOutSameType`): it
/// saves no more than deleting the others, and drains one more node and creates one for nothing.
/// E.g. two half-empty nodes of one type are not both replaced by a new node of that type; one
/// of them is deleted instead (single-node consolidation).
fn replaces_with_own_type(snapshot: &Snapshot, d: &Decision) -> bool {
    let removed: std::collections::BTreeSet<String> = d
        .remove
        .iter()
        .filter_map(|c| snapshot.nodeclaims.iter().find(|r| r.name == c.claim))
        .filter_map(|r| snapshot.claim_machine_deployment(r))
        .collect();
    d.replacements
        .iter()
        .any(|n| removed.contains(&n.offering.flavor.machine_deployment))
}

/// The best consolidation among the candidates (already in [`sort_candidates`] order),
/// at most `max_nodes` nodes.
pub(crate) fn consolidate(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    max_nodes: usize,
) -> Option<Decision> {
    consolidate_from(
        snapshot,
        candidates,
        max_nodes,
        None,
        snapshot.now,
        None,
        None,
    )
    .0
}

/// [`consolidate`], gated by the consolidation memo ([`super::consolidated::Gate`]): `resume`
/// None runs the multi-node search, then single-node trials from the first candidate;
/// `Some(k)` only single-node trials from candidate `k` (the multi-node search already failed
/// on this same cluster). Also returns the first candidate the single-node trials did not
/// reach when they stopped at [`SINGLE_NODE_TRIALS`] (None: they reached the last one, or
/// found a decision). `balanced`: the pool and its totals when its policy is `Balanced`, whose
/// moves must also pass [`balanced::evaluate_move`].
pub(crate) fn consolidate_from(
    snapshot: &Snapshot,
    candidates: &[Candidate],
    max_nodes: usize,
    resume: Option<usize>,
    now: Option<Timestamp>,
    balanced: Option<&Balanced<'_>>,
    falling: Option<&Falling>,
) -> (Option<Decision>, Option<usize>) {
    let limit = candidates.len().min(max_nodes).min(MULTI_NODE_MAX);
    let room = Room::new(snapshot);
    let ahead = (now, std::cell::OnceCell::new());
    let mut scratch = None;
    if resume.is_none() && limit >= 2 {
        // Largest working prefix by binary search.
        let (mut lo, mut hi) = (2usize, limit);
        let mut best = None;
        while lo <= hi {
            let mid = (lo + hi) / 2;
            match trial_within(
                snapshot,
                &mut scratch,
                &room,
                &ahead,
                balanced,
                falling,
                &candidates[..mid],
            )
            .filter(|d| !replaces_with_own_type(snapshot, d))
            {
                Some(d) => {
                    best = Some(d);
                    lo = mid + 1;
                }
                None => hi = mid - 1,
            }
        }
        if best.is_some() {
            return (best, None);
        }
    }
    if max_nodes == 0 {
        return (None, None);
    }
    let start = resume.unwrap_or(0).min(candidates.len());
    let end = (start + SINGLE_NODE_TRIALS).min(candidates.len());
    let found = candidates[start..end]
        .iter()
        // A candidate whose outright deletion would not pass its pool's threshold cannot pass
        // in any move of its own (core `CanPassThreshold`): no trial.
        .filter(|c| {
            balanced.is_none_or(|b| {
                b.totals
                    .get(b.pool)
                    .is_none_or(|t| balanced::can_pass(c, t))
            })
        })
        .find_map(|c| {
            trial_within(
                snapshot,
                &mut scratch,
                &room,
                &ahead,
                balanced,
                falling,
                std::slice::from_ref(c),
            )
        });
    let next = (found.is_none() && end < candidates.len()).then_some(end);
    (found, next)
}

/// What consolidation of the running nodes would achieve under one strategy's rules.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsolidationOutcome {
    /// `cost`, `karpenter-capi` or `least-waste`.
    pub strategy: String,
    /// Nodes removed.
    pub remove: Vec<String>,
    /// Replacement nodes: instance type and the pods moved onto each.
    pub replacements: Vec<Replacement>,
    /// Price per hour of the running nodes before.
    pub price_per_hour_before: Price,
    /// After.
    pub price_per_hour_after: Price,
    /// Saving per hour.
    pub saving_per_hour: Price,
}

/// A replacement node.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    /// MachineDeployment.
    pub(crate) machine_deployment: String,
    /// Instance type.
    pub instance_type: String,
    /// Price per hour.
    pub(crate) price_per_hour: Price,
    /// Pods moved onto it.
    pub(crate) pods: Vec<String>,
}

/// The running nodes as candidates: priced by their instance-type label, not blocked.
fn node_candidates(snapshot: &Snapshot) -> Vec<Candidate> {
    let flavors: Vec<&crate::model::flavor::Flavor> = snapshot
        .machine_deployments
        .iter()
        .filter_map(|m| m.flavor.as_ref().ok())
        .collect();
    let blocked = |a: &crate::model::labels::Labels| {
        a.get(crate::vocab::keys::DO_NOT_DISRUPT)
            .map(String::as_str)
            == Some("true")
    };
    let mut out: Vec<Candidate> = snapshot
        .nodes
        .iter()
        .filter(|n| !blocked(&n.annotations))
        .filter_map(|n| {
            let it = n.labels.get(crate::vocab::keys::INSTANCE_TYPE)?;
            let price = flavors.iter().find(|f| &f.instance_type == it)?.price;
            let pods: Vec<usize> = (0..snapshot.pods.len())
                .filter(|&i| {
                    let p = &snapshot.pods[i];
                    !p.terminal && !p.daemon && p.node_name.as_deref() == Some(n.name.as_str())
                })
                .collect();
            if pods.iter().any(|&i| blocked(&snapshot.pods[i].annotations)) {
                return None;
            }
            Some(Candidate::new(
                snapshot,
                n.name.clone(),
                n.name.clone(),
                price,
                pods,
            ))
        })
        .collect();
    sort_candidates(&mut out);
    out
}

fn outcome(
    strategy: &str,
    snapshot: &Snapshot,
    remove: Vec<String>,
    replacements: Vec<Replacement>,
) -> ConsolidationOutcome {
    let before = Price(node_candidates(snapshot).iter().map(|c| c.price.0).sum());
    let removed: i64 = node_candidates(snapshot)
        .iter()
        .filter(|c| remove.contains(&c.node))
        .map(|c| c.price.0)
        .sum();
    let added: i64 = replacements.iter().map(|r| r.price_per_hour.0).sum();
    let after = Price(before.0 - removed + added);
    ConsolidationOutcome {
        strategy: strategy.to_string(),
        remove,
        replacements,
        price_per_hour_before: before,
        price_per_hour_after: after,
        saving_per_hour: Price(before.0 - after.0),
    }
}

/// Ours: repeated consolidation decisions (multi-node, then single-node) until none saves money.
pub(crate) fn simulate_cost(snapshot: &Snapshot) -> ConsolidationOutcome {
    let mut removed: Vec<String> = Vec::new();
    let mut replacements: Vec<Replacement> = Vec::new();
    let mut current = snapshot.clone();
    for _ in 0..20 {
        let candidates: Vec<Candidate> = node_candidates(&current)
            .into_iter()
            .filter(|c| !c.node.starts_with("replacement-"))
            .collect();
        let Some(d) = consolidate(&current, &candidates, usize::MAX) else {
            break;
        };
        let (mut view, _) = without(&current, &d.remove);
        for (i, n) in d.replacements.iter().enumerate() {
            let name = format!("replacement-{}-{i}", replacements.len());
            let mut labels = n.offering.labels.clone();
            labels.insert(crate::vocab::keys::HOSTNAME.into(), name.clone());
            view.nodes.push(crate::model::snapshot::NodeRecord {
                finalizers: Vec::new(),
                name: name.clone(),
                labels,
                annotations: Default::default(),
                taints: n.offering.taints.clone(),
                allocatable: n.offering.allocatable.clone(),
                capacity: n.offering.flavor.capacity.clone(),
                provider_id: None,
                ready: Some(true),
                unschedulable: false,
                created: None,
                deleting: false,
                deleted_at: None,
            });
            for &p in &n.pods {
                std::sync::Arc::make_mut(&mut view.pods[p]).node_name = Some(name.clone());
            }
            replacements.push(Replacement {
                machine_deployment: n.offering.flavor.machine_deployment.clone(),
                instance_type: n.offering.flavor.instance_type.clone(),
                price_per_hour: n.offering.flavor.price,
                pods: n
                    .pods
                    .iter()
                    .map(|&p| snapshot.pods[p].demand.key())
                    .collect(),
            });
        }
        // Pods moved onto remaining nodes are bound there for the next round.
        for (p, node) in &d.onto_existing {
            std::sync::Arc::make_mut(&mut view.pods[*p]).node_name = Some(node.clone());
        }
        removed.extend(d.remove.iter().map(|c| c.node.clone()));
        current = view;
    }
    outcome("cost", snapshot, removed, replacements)
}

/// Upstream: every price is 0, so no replacement is ever cheaper; only empty nodes go.
pub(crate) fn simulate_upstream(snapshot: &Snapshot) -> ConsolidationOutcome {
    let remove = node_candidates(snapshot)
        .into_iter()
        .filter(|c| c.pods.is_empty())
        .map(|c| c.node)
        .collect();
    outcome("karpenter-capi", snapshot, remove, Vec::new())
}

/// Cluster Autoscaler: nodes under 50% utilization (the max of CPU and memory requests over
/// allocatable) whose pods all fit on the other remaining nodes are removed, one at a time.
pub(crate) fn simulate_least_waste(snapshot: &Snapshot) -> ConsolidationOutcome {
    let mut removed: Vec<Candidate> = Vec::new();
    let utilization = |c: &Candidate| -> f64 {
        let Some(n) = snapshot.nodes.iter().find(|n| n.name == c.node) else {
            return 1.0;
        };
        let mut req = crate::model::resources::Resources::default();
        for p in snapshot
            .pods
            .iter()
            .filter(|p| !p.terminal && p.node_name.as_deref() == Some(n.name.as_str()))
        {
            req.add(&p.demand.requests);
        }
        let frac = |a: i64, b: i64| if b > 0 { a as f64 / b as f64 } else { 1.0 };
        frac(req.cpu_millis, n.allocatable.cpu_millis)
            .max(frac(req.memory_bytes, n.allocatable.memory_bytes))
    };
    let mut candidates = node_candidates(snapshot);
    candidates.sort_by(|a, b| utilization(a).total_cmp(&utilization(b)));
    for c in candidates {
        if utilization(&c) >= 0.5 {
            continue;
        }
        let mut trial_set = removed.clone();
        trial_set.push(c.clone());
        let (view, moved) = without(snapshot, &trial_set);
        let placement = plan_within(&view, &moved, Some(trial_budget()));
        if placement.unschedulable.is_empty() && placement.new_nodes.is_empty() {
            removed.push(c);
        }
    }
    outcome(
        "least-waste",
        snapshot,
        removed.into_iter().map(|c| c.node).collect(),
        Vec::new(),
    )
}
