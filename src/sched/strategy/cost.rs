//! `cost`, our strategy: the cheapest total price per hour for all placeable pods, ties broken
//! by least waste (smaller total capacity), then fewer nodes.
//!
//! Small batches (up to [`EXACT_LIMIT`] pods, constraints within a node only) are solved exactly
//! by dynamic programming over subsets. Larger ones are packed greedily by pod class: each step
//! picks the (offering, fill) with the most pod value per unit of price, repeats it while the
//! same fill is available, and finally moves each node to the cheapest flavor that still holds
//! its pods.

use std::collections::HashMap;

use super::{Budget, Placement, Strategy, finish, place_on_existing, queue_order};
use crate::cli::StrategyName;
use crate::model::labels::keys;
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::{self, Offering};
use crate::sched::fit::static_fit;
use crate::sched::state::{ClusterState, NodeOrigin};

/// Batches up to this many pods are solved exactly (3^n subset pairs).
pub const EXACT_LIMIT: usize = 12;

/// The `cost` strategy.
pub struct Cost;

impl Strategy for Cost {
    fn name(&self) -> StrategyName {
        StrategyName::Cost
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let (offerings, _) = catalog::offerings(snapshot, true);
        let mut state = ClusterState::new(snapshot, &offerings);
        let budget = Budget::new(snapshot);
        let queue = queue_order(snapshot, pending);
        let rest = place_on_existing(&mut state, &queue);
        let allowed = allowed_offerings(snapshot, &offerings, &budget, &rest);
        let (placeable, mut unplaced): (Vec<usize>, Vec<usize>) =
            rest.iter().partition(|p| !allowed[p].is_empty());

        let cross_node = state.has_cross_node_constraints();
        let mut budget_after = budget.clone();
        let exact = if placeable.len() <= EXACT_LIMIT && !cross_node {
            exact(snapshot, &offerings, &allowed, &placeable)
                .filter(|nodes| within_budget(&budget, &offerings, nodes))
        } else {
            None
        };
        match exact {
            Some(nodes) => {
                for (o, pods) in nodes {
                    let n = state.open(&offerings[o], NodeOrigin::New(o), None);
                    budget_after.take(&offerings[o]);
                    for p in pods {
                        state.place(p, n);
                    }
                }
            }
            None => {
                unplaced.extend(greedy(
                    &mut state,
                    &mut budget_after,
                    &offerings,
                    &allowed,
                    &placeable,
                ));
                if !cross_node {
                    downsize(&mut state, &mut budget_after, &offerings, &allowed);
                }
            }
        }
        unplaced.sort_by_key(|p| queue.iter().position(|q| q == p));
        finish(
            StrategyName::Cost,
            &state,
            &budget_after,
            &offerings,
            unplaced,
        )
    }
}

/// For each pod, the offerings it may use: those of the highest-weight NodePool in which it fits
/// an empty node within the budget (Karpenter's weight semantics).
fn allowed_offerings(
    snapshot: &Snapshot,
    offerings: &[Offering],
    budget: &Budget,
    pods: &[usize],
) -> HashMap<usize, Vec<usize>> {
    let mut out = HashMap::new();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        let fitting: Vec<usize> = (0..offerings.len())
            .filter(|&o| fits_empty(demand, &offerings[o]) && budget.check(&offerings[o]).is_ok())
            .collect();
        let top = fitting.iter().map(|&o| offerings[o].weight).max();
        out.insert(
            p,
            fitting
                .into_iter()
                .filter(|&o| Some(offerings[o].weight) == top)
                .collect(),
        );
    }
    out
}

fn fits_empty(demand: &PodDemand, o: &Offering) -> bool {
    let mut labels = o.labels.clone();
    labels.insert(keys::HOSTNAME.to_string(), String::new());
    static_fit(demand, &labels, &o.taints, &o.allocatable).is_ok()
}

/// Whether two pods may not share a node (hostname anti-affinity either way, or a host port).
fn conflict(a: &PodDemand, b: &PodDemand) -> bool {
    let anti = |x: &PodDemand, y: &PodDemand| {
        x.anti_affinity
            .iter()
            .any(|t| t.topology_key == keys::HOSTNAME && t.selects(&y.namespace, &y.labels))
    };
    anti(a, b) || anti(b, a) || a.host_ports.iter().any(|p| b.host_ports.contains(p))
}

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

/// Exact optimum by dynamic programming over subsets: `best(S) = min over T ∋ lowest(S) that
/// fits one node: single(T) + best(S \ T)`. Returns (offering, pods) per node.
fn exact(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &HashMap<usize, Vec<usize>>,
    pods: &[usize],
) -> Option<Vec<(usize, Vec<usize>)>> {
    let n = pods.len();
    if n == 0 {
        return Some(Vec::new());
    }
    let full = (1usize << n) - 1;
    let demands: Vec<&PodDemand> = pods.iter().map(|&p| &snapshot.pods[p].demand).collect();
    let mut conflicts = vec![0usize; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && conflict(demands[i], demands[j]) {
                conflicts[i] |= 1 << j;
            }
        }
    }
    // Per subset: summed requests, the offerings every member may use, and whether it is free of conflicts.
    let mut sums = vec![Resources::default(); full + 1];
    let mut usable = vec![0u128; full + 1];
    let mut clean = vec![true; full + 1];
    let all_offerings: u128 = if offerings.len() >= 128 {
        u128::MAX
    } else {
        (1u128 << offerings.len()) - 1
    };
    usable[0] = all_offerings;
    let masks: Vec<u128> = pods
        .iter()
        .map(|p| {
            allowed[p]
                .iter()
                .filter(|&&o| o < 128)
                .fold(0u128, |m, &o| m | (1u128 << o))
        })
        .collect();
    if offerings.len() > 128 {
        return None;
    }
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
        // Enumerate subsets T of s that contain `low`: T = low | sub, sub ⊆ rest_bits.
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
    // Biggest nodes first, for a stable, readable plan.
    nodes.sort_by(|a, b| {
        let (oa, ob) = (&offerings[a.0].flavor, &offerings[b.0].flavor);
        ob.price
            .cmp(&oa.price)
            .then(oa.instance_type.cmp(&ob.instance_type))
    });
    Some(nodes)
}

fn within_budget(budget: &Budget, offerings: &[Offering], nodes: &[(usize, Vec<usize>)]) -> bool {
    let mut b = budget.clone();
    for (o, _) in nodes {
        if b.check(&offerings[*o]).is_err() {
            return false;
        }
        b.take(&offerings[*o]);
    }
    true
}

/// Pods that schedule identically: same requests, constraints and labels.
struct Class {
    /// Remaining pods, in queue order.
    pods: Vec<usize>,
    /// A representative.
    demand: PodDemand,
    /// Offerings these pods may use.
    allowed: Vec<bool>,
    /// At most one of these per node.
    one_per_node: bool,
    /// The value of one pod: its fair share of the cheapest offering that could host it.
    value: f64,
}

fn classes(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &HashMap<usize, Vec<usize>>,
    pods: &[usize],
) -> Vec<Class> {
    let mut index: HashMap<(PodDemandKey, Vec<usize>), usize> = HashMap::new();
    let mut out: Vec<Class> = Vec::new();
    for &p in pods {
        let d = &snapshot.pods[p].demand;
        let key = (PodDemandKey::of(d), allowed[&p].clone());
        match index.get(&key) {
            Some(&c) => out[c].pods.push(p),
            None => {
                let mut allowed_mask = vec![false; offerings.len()];
                for &o in &allowed[&p] {
                    allowed_mask[o] = true;
                }
                let value = allowed[&p]
                    .iter()
                    .map(|&o| share(&d.requests, &offerings[o]))
                    .fold(f64::INFINITY, f64::min);
                index.insert(key, out.len());
                out.push(Class {
                    pods: vec![p],
                    demand: d.clone(),
                    allowed: allowed_mask,
                    one_per_node: conflict(d, d),
                    value,
                });
            }
        }
    }
    // Largest first, so fills are first-fit decreasing.
    out.sort_by(|a, b| {
        b.demand
            .requests
            .cpu_millis
            .cmp(&a.demand.requests.cpu_millis)
            .then(
                b.demand
                    .requests
                    .memory_bytes
                    .cmp(&a.demand.requests.memory_bytes),
            )
    });
    out
}

/// A pod's share of an offering's price: price × its dominant fraction of allocatable.
fn share(req: &Resources, o: &Offering) -> f64 {
    let frac = |need: i64, have: i64| {
        if need <= 0 {
            0.0
        } else if have <= 0 {
            f64::INFINITY
        } else {
            need as f64 / have as f64
        }
    };
    let mut dominant = frac(req.cpu_millis, o.allocatable.cpu_millis)
        .max(frac(req.memory_bytes, o.allocatable.memory_bytes))
        .max(frac(
            req.ephemeral_storage_bytes,
            o.allocatable.ephemeral_storage_bytes,
        ))
        .max(frac(req.pods, o.allocatable.pods));
    for (k, v) in &req.extended {
        dominant = dominant.max(frac(
            *v,
            o.allocatable.extended.get(k).copied().unwrap_or(0),
        ));
    }
    effective_price(o) * dominant
}

/// Prices of zero still have to rank nodes by size, so treat them as one billionth.
fn effective_price(o: &Offering) -> f64 {
    o.flavor.price.0.max(1) as f64
}

/// Everything that makes two pods schedule the same, except their names.
#[derive(Debug, PartialEq, Eq, Hash)]
struct PodDemandKey(String);

impl PodDemandKey {
    fn of(d: &PodDemand) -> PodDemandKey {
        let mut copy = d.clone();
        copy.name.clear();
        PodDemandKey(format!("{copy:?}"))
    }
}

/// How many pods of each class go on one node: (class index, count).
type Pattern = Vec<(usize, usize)>;

/// How many pods of each class one node of `o` takes, first-fit decreasing over classes.
fn fill(
    classes: &[Class],
    o: usize,
    offering: &Offering,
    conflicts: &[Vec<bool>],
) -> Vec<(usize, usize)> {
    let mut free = offering.allocatable.clone();
    let mut pattern: Vec<(usize, usize)> = Vec::new();
    for (c, class) in classes.iter().enumerate() {
        if class.pods.is_empty()
            || !class.allowed[o]
            || pattern.iter().any(|&(p, _)| conflicts[c][p])
        {
            continue;
        }
        let mut k = max_copies(&class.demand.requests, &free).min(class.pods.len() as i64);
        if class.one_per_node {
            k = k.min(1);
        }
        if k > 0 {
            for _ in 0..k {
                free.sub(&class.demand.requests);
            }
            pattern.push((c, k as usize));
        }
    }
    pattern
}

fn max_copies(req: &Resources, free: &Resources) -> i64 {
    let per = |need: i64, have: i64| {
        if need <= 0 {
            i64::MAX
        } else {
            (have / need).max(0)
        }
    };
    let mut k = per(req.cpu_millis, free.cpu_millis)
        .min(per(req.memory_bytes, free.memory_bytes))
        .min(per(
            req.ephemeral_storage_bytes,
            free.ephemeral_storage_bytes,
        ))
        .min(per(req.pods, free.pods));
    for (name, v) in &req.extended {
        k = k.min(per(*v, free.extended.get(name).copied().unwrap_or(0)));
    }
    k
}

/// Greedy packing by class; returns the pods it could not place.
fn greedy(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &HashMap<usize, Vec<usize>>,
    pods: &[usize],
) -> Vec<usize> {
    let snapshot = state.snapshot();
    let mut classes = classes(snapshot, offerings, allowed, pods);
    let conflicts: Vec<Vec<bool>> = classes
        .iter()
        .map(|a| {
            classes
                .iter()
                .map(|b| conflict(&a.demand, &b.demand))
                .collect()
        })
        .collect();
    let mut banned = vec![vec![false; offerings.len()]; classes.len()];
    loop {
        // The fill with the most value per unit of price; ties: more value, then cheaper.
        let mut best: Option<(f64, f64, usize, Pattern)> = None;
        for (o, offering) in offerings.iter().enumerate() {
            if budget.room(offering) == 0 {
                continue;
            }
            let pattern: Vec<(usize, usize)> = fill(&classes, o, offering, &conflicts)
                .into_iter()
                .filter(|&(c, _)| !banned[c][o])
                .collect();
            if pattern.is_empty() {
                continue;
            }
            let value: f64 = pattern
                .iter()
                .map(|&(c, k)| classes[c].value * k as f64)
                .sum();
            let score = value / effective_price(offering);
            let better = match &best {
                None => true,
                Some((s, v, bo, _)) => {
                    score > *s * (1.0 + 1e-12)
                        || ((score - *s).abs() <= *s * 1e-12
                            && (value > *v * (1.0 + 1e-12)
                                || ((value - *v).abs() <= *v * 1e-12
                                    && offering.flavor.price < offerings[*bo].flavor.price)))
                }
            };
            if better {
                best = Some((score, value, o, pattern));
            }
        }
        let Some((_, _, o, pattern)) = best else {
            break;
        };
        let repeats = pattern
            .iter()
            .map(|&(c, k)| classes[c].pods.len() / k)
            .min()
            .unwrap_or(1)
            .max(1)
            .min(usize::try_from(budget.room(&offerings[o])).unwrap_or(usize::MAX));
        for _ in 0..repeats {
            let node = state.open(&offerings[o], NodeOrigin::New(o), None);
            for &(c, k) in &pattern {
                let mut taken = 0;
                let mut i = 0;
                while taken < k && i < classes[c].pods.len() {
                    let p = classes[c].pods[i];
                    if state.fits(p, node).is_ok() {
                        state.place(p, node);
                        classes[c].pods.remove(i);
                        taken += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            if state.nodes[node].pods.is_empty() {
                // Cross-node constraints refused every pod: never try this pairing again.
                state.close_if_empty(node);
                banned[pattern[0].0][o] = true;
                break;
            }
            budget.take(&offerings[o]);
        }
    }
    classes.into_iter().flat_map(|c| c.pods).collect()
}

/// Moves each new node to the cheapest offering (same NodePool weight rules) that still holds
/// its pods, if that is cheaper.
fn downsize(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &HashMap<usize, Vec<usize>>,
) {
    for i in 0..state.nodes.len() {
        let NodeOrigin::New(current) = state.nodes[i].origin else {
            continue;
        };
        let pods = state.nodes[i].pods.clone();
        let requested = state.nodes[i].requested.clone();
        let cheaper = (0..offerings.len())
            .filter(|&o| {
                offerings[o].flavor.price < offerings[current].flavor.price
                    && pods.iter().all(|p| allowed[p].contains(&o))
                    && requested.fits_in(&offerings[o].allocatable)
                    && budget.check(&offerings[o]).is_ok()
            })
            .min_by_key(|&o| {
                (
                    offerings[o].flavor.price,
                    offerings[o].flavor.capacity.cpu_millis,
                )
            });
        if let Some(o) = cheaper {
            budget.release(&offerings[current]);
            budget.take(&offerings[o]);
            let node = &mut state.nodes[i];
            node.origin = NodeOrigin::New(o);
            node.free = offerings[o].allocatable.minus(&requested);
            node.taints = offerings[o].taints.clone();
            let hostname = node.name.clone();
            node.labels = offerings[o].labels.clone();
            node.labels.insert(keys::HOSTNAME.to_string(), hostname);
        }
    }
}
