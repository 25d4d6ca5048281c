//! The optimizer's view of a batch and the way back: pods grouped into classes (identical
//! demand and constraints), the packing [`Problem`] over the distinct offerings, and the
//! materialisation of planned nodes through the same checked fit `explain` uses, so a plan can
//! never violate a constraint. Pods whose constraints the optimizer does not model (see
//! [`needs_sequential`]) are left to the checked greedy.

use std::collections::HashMap;
use std::time::Duration;

use packing_optimizer::work::{LARGE_BATCH_WORK, SMALL_BATCH_WORK, Work};

use super::{Allowed, conflict};
use crate::model::pod::{AffinityTerm, PodDemand};
use crate::model::resources::Resources;
use crate::sched::catalog::Offering;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::Budget;
pub(crate) use packing_optimizer::Solved;
use packing_optimizer::colgen::{ClassSpec, Problem};
use packing_optimizer::integer::Node;

/// Whether a pod needs sequential checked placement: a constraint between nodes that the
/// pattern optimizer does not model (pod affinity, anti-affinity on a topology wider than a
/// node, topology spread, preferences: [`PodDemand::has_topology`]). Such pods go through the
/// checked one-at-a-time placement after the optimized ones.
pub(crate) fn needs_sequential(d: &PodDemand) -> bool {
    d.has_topology()
}

/// A class: its pods (snapshot indices) and what the optimizer knows about it.
pub(crate) struct Classes {
    /// Pods per class.
    pub(crate) pods: Vec<Vec<usize>>,
    /// The problem over the offerings that differ for these classes.
    pub(crate) problem: Problem,
    /// Per offering of the problem: the caller's offering it stands for.
    pub(crate) offering: Vec<usize>,
}

/// The resource dimensions of a batch: cpu, memory, ephemeral storage, pods, then every
/// extended resource some pod requests.
fn dimensions(demands: &[&PodDemand]) -> Vec<String> {
    let mut ext: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for d in demands {
        ext.extend(d.requests.extended.keys().map(String::as_str));
    }
    let mut out: Vec<String> = ["cpu", "memory", "ephemeral-storage", "pods"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    out.extend(ext.into_iter().map(str::to_string));
    out
}

fn vector(r: &Resources, dims: &[String]) -> Vec<i64> {
    dims.iter().map(|d| r.get(d)).collect()
}

/// A pod's class: its demand without name, namespace and labels, and which of `terms` select it
/// (labels and namespace matter only through those). Pods of one class fit the same nodes.
pub(crate) fn class_key(d: &PodDemand, terms: &[&AffinityTerm]) -> (PodDemand, Vec<bool>) {
    let selected = terms
        .iter()
        .map(|t| t.selects(&d.namespace, &d.labels))
        .collect();
    let mut key = d.clone();
    key.name.clear();
    key.namespace.clear();
    key.labels.clear();
    (key, selected)
}

/// Groups `pods` into classes: identical demand, and selected by the same (anti-)affinity
/// terms of any pod (labels and namespace matter only through those).
pub(crate) fn classes(
    state: &ClusterState,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Classes {
    let snapshot = state.snapshot();
    let mut terms: Vec<&AffinityTerm> = Vec::new();
    for p in &snapshot.pods {
        for t in p.demand.anti_affinity.iter().chain(&p.demand.affinity) {
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
    }
    let mut index: HashMap<(PodDemand, Vec<bool>), usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &p in pods {
        let next = groups.len();
        let c = *index
            .entry(class_key(&snapshot.pods[p].demand, &terms))
            .or_insert(next);
        if c == next {
            groups.push(Vec::new());
        }
        groups[c].push(p);
    }
    let reps: Vec<&PodDemand> = groups
        .iter()
        .map(|g| &*snapshot.pods[g[0]].demand)
        .collect();
    let dims = dimensions(&reps);
    let interacting: Vec<bool> = reps
        .iter()
        .map(|d| !d.anti_affinity.is_empty() || !d.host_ports.is_empty())
        .collect();
    let mut specs: Vec<ClassSpec> = groups
        .iter()
        .zip(&reps)
        .map(|(g, d)| ClassSpec {
            count: u32::try_from(g.len()).unwrap_or(u32::MAX),
            req: vector(&d.requests, &dims),
            allowed: (0..offerings.len())
                .map(|o| allowed.permits(g[0], o))
                .collect(),
            one_per_node: conflict(d, d),
            conflicts: Vec::new(),
        })
        .collect();
    for a in 0..reps.len() {
        for b in 0..reps.len() {
            if a != b && (interacting[a] || interacting[b]) && conflict(reps[a], reps[b]) {
                specs[a].conflicts.push(b);
            }
        }
    }
    let cap: Vec<Vec<i64>> = offerings
        .iter()
        .map(|o| vector(&o.allocatable, &dims))
        .collect();
    // Offerings these classes cannot tell apart (same allocatable in every dimension they use,
    // same price, allowed to the same classes, same NodePool) are one choice for the optimizer:
    // the same flavor in three zones when only the sequential pods care about zones. Budgets
    // are per NodePool and per size-bounded MachineDeployment, so those stay apart.
    type Twin<'o> = (Vec<i64>, i64, Vec<bool>, &'o str);
    let mut first: HashMap<Twin, usize> = HashMap::new();
    let kept: Vec<usize> = (0..offerings.len())
        .filter(|&o| {
            if offerings[o].flavor.max_size.is_some() {
                return true;
            }
            let key = (
                cap[o].clone(),
                offerings[o].flavor.price.0,
                specs.iter().map(|c| c.allowed[o]).collect(),
                offerings[o].node_pool.as_str(),
            );
            *first.entry(key).or_insert(o) == o
        })
        .collect();
    for spec in &mut specs {
        spec.allowed = kept.iter().map(|&o| spec.allowed[o]).collect();
    }
    Classes {
        pods: groups,
        problem: Problem {
            cap: kept.iter().map(|&o| cap[o].clone()).collect(),
            price: kept
                .iter()
                .map(|&o| {
                    offerings[o].flavor.price.0 as f64 / crate::model::flavor::Price::UNIT as f64
                })
                .collect(),
            classes: specs,
        },
        offering: kept,
    }
}

/// The optimizer's budget in units of work ([`packing_optimizer::work`]) by batch size: counted,
/// not timed, so the same input gives the same plan on any machine and in any build. About a
/// tenth of a second of a core's time in the optimizer for a batch up to 500 pods, up to half a
/// second above, where most batches finish their search before the budget (measured in
/// docs/benchmarks.md).
pub(crate) fn work_for(pods: usize) -> u64 {
    if pods <= 500 {
        SMALL_BATCH_WORK
    } else {
        LARGE_BATCH_WORK
    }
}

/// Units of work for one consolidation trial (the pods of a few nodes; a pass runs up to ~30).
pub(crate) const TRIAL_WORK: u64 = 1_500_000;

/// The wall-clock safety net of one optimizer run of `work` units: a millisecond per thousand
/// units, at least a second (50 s for a large batch, 1.5 s for a consolidation trial). An idle
/// core spends about 10 M units per 100 ms (docs/benchmarks.md), so this is some fifty times
/// what a budget takes and normal inputs never reach it; when one does, the plan says so
/// (`cutShort`), because it then depends on the machine's speed.
pub(crate) fn safety_net(work: u64) -> Duration {
    Duration::from_millis((work / 1_000).max(1_000))
}

/// Column generation, diving and local search over the classes (`packing_optimizer`) within
/// `work` units, with the plan's nodes mapped back to the caller's offerings.
pub(crate) fn optimize(classes: &Classes, work: u64) -> Solved {
    let meter = Work::new(work, safety_net(work));
    let mut solved = packing_optimizer::optimize(&classes.problem, &meter);
    for node in &mut solved.nodes {
        node.offering = classes.offering[node.offering];
    }
    solved
}

/// Opens the planned nodes and places their pods through the checked fit (within the
/// budget); returns the pods that did not go where planned.
pub(crate) fn materialise(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &Allowed,
    classes: &Classes,
    nodes: &[Node],
) -> Vec<usize> {
    let mut queues: Vec<std::collections::VecDeque<usize>> = classes
        .pods
        .iter()
        .map(|g| g.iter().copied().collect())
        .collect();
    let mut left = Vec::new();
    // Expensive nodes first: when a budget runs short, the big nodes the plan relies on most
    // are the ones that get made.
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| {
        offerings[nodes[b].offering]
            .flavor
            .price
            .cmp(&offerings[nodes[a].offering].flavor.price)
            .then(a.cmp(&b))
    });
    for i in order {
        let node = &nodes[i];
        let o = node.offering;
        if budget.check(&offerings[o]).is_err() {
            for &(c, k) in &node.counts {
                for _ in 0..k {
                    if let Some(p) = queues[c].pop_front() {
                        left.push(p);
                    }
                }
            }
            continue;
        }
        let n = state.open(&offerings[o], NodeOrigin::New(o), None);
        for &(c, k) in &node.counts {
            for _ in 0..k {
                let Some(p) = queues[c].pop_front() else {
                    break;
                };
                if allowed.permits(p, o) && state.can_place(p, n) {
                    state.place(p, n);
                } else {
                    left.push(p);
                }
            }
        }
        if state.nodes[n].pods.is_empty() {
            state.close_if_empty(n);
        } else {
            budget.take(&offerings[o]);
        }
    }
    for q in queues {
        left.extend(q);
    }
    left
}
