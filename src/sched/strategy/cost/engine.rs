//! The optimizer's view of a batch and the way back: pods grouped into classes (identical
//! demand and constraints), the packing [`Problem`] over the distinct offerings, and the
//! materialisation of planned nodes through the same checked fit `explain` uses, so a plan can
//! never violate a constraint. Pods whose constraints the optimizer does not model (see
//! [`needs_sequential`]) are left to the checked greedy.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::colgen::{self, ClassSpec, Limits, Problem};
use super::integer::{self, Node};
use super::{Allowed, conflict};
use crate::model::pod::{AffinityTerm, PodDemand};
use crate::model::resources::Resources;
use crate::sched::catalog::Offering;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::Budget;

/// Whether a pod needs sequential checked placement: a constraint between nodes that the
/// pattern optimizer does not model (pod affinity, anti-affinity on a topology wider than a
/// node, topology spread, preferences: [`PodDemand::has_topology`]). Such pods go through the
/// checked one-at-a-time placement after the optimized ones.
pub fn needs_sequential(d: &PodDemand) -> bool {
    d.has_topology()
}

/// A class: its pods (snapshot indices) and what the optimizer knows about it.
pub struct Classes {
    /// Pods per class.
    pub pods: Vec<Vec<usize>>,
    /// The problem over the distinct offerings.
    pub problem: Problem,
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

/// Groups `pods` into classes: identical demand, and selected by the same (anti-)affinity
/// terms of any pod (labels and namespace matter only through those).
pub fn classes(
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
        let d = &snapshot.pods[p].demand;
        let selected: Vec<bool> = terms
            .iter()
            .map(|t| t.selects(&d.namespace, &d.labels))
            .collect();
        let mut key = d.clone();
        key.name.clear();
        key.namespace.clear();
        key.labels.clear();
        let next = groups.len();
        let c = *index.entry((key, selected)).or_insert(next);
        if c == next {
            groups.push(Vec::new());
        }
        groups[c].push(p);
    }
    let reps: Vec<&PodDemand> = groups.iter().map(|g| &snapshot.pods[g[0]].demand).collect();
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
    Classes {
        pods: groups,
        problem: Problem {
            cap: offerings
                .iter()
                .map(|o| vector(&o.allocatable, &dims))
                .collect(),
            price: offerings
                .iter()
                .map(|o| o.flavor.price.0 as f64 / crate::model::flavor::Price::UNIT as f64)
                .collect(),
            classes: specs,
        },
    }
}

/// How long the optimizer may take, by batch size: a plan must stay interactive. Work caps
/// usually end it far sooner; unoptimized (debug) builds run some 20 times slower, so they get
/// proportionally more time and reach the same plans in tests.
pub fn budget_for(pods: usize) -> Duration {
    let ms = if pods <= 500 { 150 } else { 500 };
    scaled(Duration::from_millis(ms))
}

/// A release-build time budget as this build's: debug builds get twenty times as long.
pub fn scaled(d: Duration) -> Duration {
    if cfg!(debug_assertions) { d * 20 } else { d }
}

/// Planned nodes and the lower bound (units per hour) of the optimizer's batch.
pub struct Solved {
    /// Nodes as class counts.
    pub nodes: Vec<Node>,
    /// A lower bound on the price of any plan for these classes, in units per hour.
    pub lower_bound: f64,
}

/// Column generation, diving and local search over the classes.
pub fn optimize(classes: &Classes, total: Duration) -> Solved {
    let pods: usize = classes.pods.iter().map(Vec::len).sum();
    let start = Instant::now();
    let incumbent = integer::quick(&classes.problem, start + total);
    let seeds: Vec<colgen::Pattern> = incumbent
        .iter()
        .map(|n| colgen::Pattern {
            offering: n.offering,
            counts: n.counts.clone(),
        })
        .collect();
    let master = colgen::generate(
        &classes.problem,
        seeds,
        Limits {
            rounds: 200,
            offerings_per_round: 24,
            node_cap: 4_000,
            deadline: Some(start + total * 6 / 10),
        },
    );
    let t_master = start.elapsed();
    let mut nodes = integer::solve(
        &classes.problem,
        &master,
        start + total * 8 / 10,
        if pods <= 500 { 200 } else { 60 },
    );
    let t_dive = start.elapsed();
    integer::improve(&classes.problem, &mut nodes, start + total, 96);
    let mut nodes = if integer::total(&classes.problem, &incumbent)
        < integer::total(&classes.problem, &nodes)
    {
        incumbent
    } else {
        nodes
    };
    // Small batches: a set-cover search over every pattern seen (the pool and the plan's own
    // nodes) may close the last node or two of integrality gap.
    if pods <= 400 {
        let mut pool = master.patterns.clone();
        pool.extend(nodes.iter().map(|n| colgen::Pattern {
            offering: n.offering,
            counts: n.counts.clone(),
        }));
        let mut solved_exactly = false;
        if let Some(all) = integer::all_patterns(&classes.problem, 20_000) {
            // Few enough count vectors to solve exactly.
            if let Some(exact) = integer::exact_small(&classes.problem, &all) {
                solved_exactly = true;
                if integer::total(&classes.problem, &exact)
                    < integer::total(&classes.problem, &nodes)
                {
                    nodes = exact;
                }
            }
            pool.extend(all);
        }
        let current = integer::total(&classes.problem, &nodes);
        if solved_exactly {
        } else if let Some(mut better) = integer::set_cover(
            &classes.problem,
            &pool,
            &master.bound_duals,
            current,
            50_000,
            start + total,
        ) {
            integer::improve(&classes.problem, &mut better, start + total, 96);
            if integer::total(&classes.problem, &better) < current {
                nodes = better;
            }
        }
    }
    if tracing::enabled!(tracing::Level::TRACE) {
        tracing::trace!(
            "optimize: {} classes, {} patterns, bound {:.4}, lp {:.4}, master {:?}, dive {:?}, total {:?}",
            classes.problem.classes.len(),
            master.patterns.len(),
            master.lower_bound,
            master.lp.objective(),
            t_master,
            t_dive,
            start.elapsed()
        );
    }
    Solved {
        nodes,
        lower_bound: master.lower_bound.max(resource_bound(&classes.problem)),
    }
}

/// Opens the planned nodes and places their pods through the checked fit (within the
/// budget); returns the pods that did not go where planned.
pub fn materialise(
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

/// A simple lower bound: in any one resource, every pod pays at least its share of the
/// cheapest offering per unit of that resource it may use (a node's price covers its pods'
/// shares). The best resource wins.
pub fn resource_bound(problem: &Problem) -> f64 {
    let dims = problem.cap.first().map_or(0, Vec::len);
    (0..dims)
        .map(|d| {
            problem
                .classes
                .iter()
                .map(|class| {
                    if class.req[d] <= 0 {
                        return 0.0;
                    }
                    let per_unit = (0..problem.cap.len())
                        .filter(|&o| class.allowed[o] && problem.cap[o][d] > 0)
                        .map(|o| problem.price[o] / problem.cap[o][d] as f64)
                        .fold(f64::INFINITY, f64::min);
                    if per_unit.is_finite() {
                        per_unit * class.req[d] as f64 * f64::from(class.count)
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}
