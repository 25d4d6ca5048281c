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
    /// The problem over the offerings that differ for these classes.
    pub problem: Problem,
    /// Per offering of the problem: the caller's offering it stands for.
    pub offering: Vec<usize>,
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
pub fn class_key(d: &PodDemand, terms: &[&AffinityTerm]) -> (PodDemand, Vec<bool>) {
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
    /// Nodes as class counts, on the caller's offerings.
    pub nodes: Vec<Node>,
    /// A lower bound on the price of any plan for these classes, in units per hour.
    pub lower_bound: f64,
}

/// Column generation, diving and local search over the classes.
pub fn optimize(classes: &Classes, total: Duration) -> Solved {
    let pods: usize = classes.pods.iter().map(Vec::len).sum();
    let start = Instant::now();
    let mut incumbent = integer::quick(&classes.problem, start + total);
    let mut seeds: Vec<colgen::Pattern> = Vec::new();
    let (prices, _) = resource_prices(&classes.problem);
    if let Some(anchored) = integer::anchored(&classes.problem, &prices) {
        // Its mixed patterns seed the LP whichever plan is cheaper.
        seeds.extend(anchored.iter().map(|n| colgen::Pattern {
            offering: n.offering,
            counts: n.counts.clone(),
        }));
        if integer::total(&classes.problem, &anchored)
            < integer::total(&classes.problem, &incumbent)
        {
            incumbent = anchored;
        }
    }
    seeds.extend(incumbent.iter().map(|n| colgen::Pattern {
        offering: n.offering,
        counts: n.counts.clone(),
    }));
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
            "optimize: {} classes, {} offerings, {} patterns, bound {:.4}, lp {:.4}, master {:?}, dive {:?}, total {:?}",
            classes.problem.classes.len(),
            classes.problem.cap.len(),
            master.patterns.len(),
            master.lower_bound,
            master.lp.objective(),
            t_master,
            t_dive,
            start.elapsed()
        );
    }
    // Back to the caller's offerings.
    for node in &mut nodes {
        node.offering = classes.offering[node.offering];
    }
    Solved {
        nodes,
        lower_bound: master
            .lower_bound
            .max(resource_bound(&classes.problem))
            .max(node_count_bound(&classes.problem)),
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

/// Pods of one-per-node classes that conflict pairwise (a greedy clique, largest classes first)
/// each need a node of their own: a lower bound on the number of nodes any plan opens.
pub fn min_nodes(problem: &Problem) -> u64 {
    let clique = problem.conflict_clique();
    let any = problem.classes.iter().any(|c| c.count > 0);
    clique
        .iter()
        .map(|&c| u64::from(problem.classes[c].count))
        .sum::<u64>()
        .max(u64::from(any))
}

/// A lower bound that charges every node it must open: any plan is a count `y_o` of nodes per
/// offering (one some class may use) whose allocatable covers the summed requests in every
/// dimension, with at least [`min_nodes`] nodes. Any duals `w_d, δ ≥ 0` scaled so that
/// `Σ_d w_d·cap_d(o) + δ ≤ price(o)` for every offering then prove
/// `price ≥ Σ_d w_d·demand_d + δ·min_nodes` (each node pays for its room and its overhead);
/// the duals come from this small covering LP, the scaling makes them valid whatever the
/// solver reached.
pub fn node_count_bound(problem: &Problem) -> f64 {
    resource_prices(problem).1
}

/// The duals behind [`node_count_bound`]: a price per unit of each dimension (made valid for
/// every offering) and the bound they prove.
pub fn resource_prices(problem: &Problem) -> (Vec<f64>, f64) {
    let offerings: Vec<usize> = (0..problem.cap.len())
        .filter(|&o| problem.classes.iter().any(|c| c.count > 0 && c.allowed[o]))
        .collect();
    let Some(&first) = offerings.first() else {
        return (Vec::new(), 0.0);
    };
    let dims = problem.cap[first].len();
    let scale: Vec<f64> = (0..dims)
        .map(|d| {
            offerings
                .iter()
                .map(|&o| problem.cap[o][d])
                .max()
                .unwrap_or(0)
                .max(1) as f64
        })
        .collect();
    let mut demand: Vec<f64> = (0..dims)
        .map(|d| {
            problem
                .classes
                .iter()
                .map(|c| c.req[d].max(0) as f64 * f64::from(c.count))
                .sum::<f64>()
                / scale[d]
        })
        .collect();
    demand.push(min_nodes(problem) as f64);
    let max_price = offerings
        .iter()
        .map(|&o| problem.price[o])
        .fold(0.0, f64::max);
    let mut lp = super::lp::Lp::new(demand.clone(), 10.0 * max_price + 1.0);
    let column = |o: usize| -> Vec<(usize, f64)> {
        let mut entries: Vec<(usize, f64)> = (0..dims)
            .filter(|&d| problem.cap[o][d] > 0)
            .map(|d| (d, problem.cap[o][d] as f64 / scale[d]))
            .collect();
        entries.push((dims, 1.0));
        entries
    };
    for &o in &offerings {
        lp.add(super::lp::Column {
            cost: problem.price[o],
            entries: column(o),
        });
    }
    lp.solve(50 * (dims + 1) + 10 * offerings.len());
    let duals: Vec<f64> = lp.duals().into_iter().map(|p| p.max(0.0)).collect();
    // Scale the duals into feasibility for every offering.
    let mut t = 1.0f64;
    for &o in &offerings {
        let charged: f64 = column(o).iter().map(|&(r, a)| duals[r] * a).sum();
        if charged > 0.0 {
            t = t.min(problem.price[o].max(0.0) / charged);
        }
    }
    let value: f64 = duals.iter().zip(&demand).map(|(w, n)| w * n).sum();
    // Dimensions nothing requests carry no price (their dual is arbitrary).
    let prices = (0..dims)
        .map(|d| {
            if demand[d] > 0.0 {
                t * duals[d] / scale[d]
            } else {
                0.0
            }
        })
        .collect();
    (prices, (t * value).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(count: u32, req: Vec<i64>, one_per_node: bool, conflicts: Vec<usize>) -> ClassSpec {
        ClassSpec {
            count,
            req,
            allowed: vec![true, true],
            one_per_node,
            conflicts,
        }
    }

    #[test]
    fn node_count_bound_charges_the_nodes_conflicting_pods_force() {
        // Two offerings at the same price per allocatable cpu; three pods that repel each
        // other (two classes) need three nodes even though they would fit one.
        let problem = Problem {
            cap: vec![vec![1000, 1000], vec![4000, 4000]],
            price: vec![1.0, 4.0],
            classes: vec![
                class(2, vec![100, 100], true, vec![1]),
                class(1, vec![100, 100], true, vec![0]),
            ],
        };
        assert_eq!(min_nodes(&problem), 3);
        let b = node_count_bound(&problem);
        assert!((b - 3.0).abs() < 1e-6, "{b}");
        assert!(resource_bound(&problem) < 0.31);
        // Without conflicts the pods share a node: one node's price at most.
        let free = Problem {
            classes: vec![class(3, vec![100, 100], false, vec![])],
            ..problem
        };
        assert_eq!(min_nodes(&free), 1);
        assert!(node_count_bound(&free) <= 1.0 + 1e-9);
    }
}
