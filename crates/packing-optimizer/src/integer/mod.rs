//! From the LP to whole nodes, then better nodes: diving (commit the whole part of every
//! pattern, round the largest fraction up, re-solve what is left), first-fit decreasing for
//! what the dive leaves, and local search (downsize a node; empty a node into the others' free
//! room; merge two nodes into one cheaper offering). Everything here works on class counts;
//! pods are placed, through the checked fit, only afterwards. The local search lives in
//! `search`, the set-cover and exact small-batch searches in `cover`, the branch and bound
//! over whole nodes for small batches in `branch`.

use crate::colgen::{Limits, Master, Pattern, Problem, generate};
use crate::work::Stop;

mod branch;
mod cover;
mod search;

pub use branch::{branch_and_bound, regroup};
pub use cover::{all_patterns, exact_small, set_cover};
use search::downsize;
pub use search::improve;

/// A planned node: an offering, a count per class (sorted by class), and what it uses.
#[derive(Debug, Clone)]
pub struct Node {
    /// The offering.
    pub offering: usize,
    /// (class, count), sorted by class.
    pub counts: Vec<(usize, u32)>,
    /// Summed requests per dimension.
    pub used: Vec<i64>,
}

impl Node {
    fn new(offering: usize, dims: usize) -> Node {
        Node {
            offering,
            counts: Vec::new(),
            used: vec![0; dims],
        }
    }

    fn add(&mut self, problem: &Problem, c: usize, k: u32) {
        match self.counts.binary_search_by_key(&c, |&(x, _)| x) {
            Ok(i) => self.counts[i].1 += k,
            Err(i) => self.counts.insert(i, (c, k)),
        }
        for (u, r) in self.used.iter_mut().zip(&problem.classes[c].req) {
            *u += r * i64::from(k);
        }
    }

    /// How many more pods of class `c` fit (resources, one-per-node, conflicts, the class's
    /// offerings), at most `want`.
    fn room_for(&self, problem: &Problem, c: usize, want: u32) -> u32 {
        let class = &problem.classes[c];
        if !class.allowed[self.offering] {
            return 0;
        }
        for &(other, _) in &self.counts {
            if other == c {
                if class.one_per_node {
                    return 0;
                }
            } else if class.conflicts.binary_search(&other).is_ok() {
                return 0;
            }
        }
        let mut k = want;
        for ((need, used), cap) in class
            .req
            .iter()
            .zip(&self.used)
            .zip(&problem.cap[self.offering])
        {
            if *need > 0 {
                k = k.min(u32::try_from((cap - used).max(0) / need).unwrap_or(u32::MAX));
            }
        }
        if class.one_per_node { k.min(1) } else { k }
    }
}

/// Offerings by LP cost ascending (then index), for "cheapest that fits" scans.
fn by_price(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.cap.len()).collect();
    order.sort_by(|&a, &b| {
        problem
            .lp_cost(a)
            .total_cmp(&problem.lp_cost(b))
            .then(a.cmp(&b))
    });
    order
}

fn fits(used: &[i64], cap: &[i64]) -> bool {
    used.iter().zip(cap).all(|(u, c)| u <= c)
}

/// The cheapest offering every class of `counts` may use that holds `used`.
fn cheapest_holding(
    problem: &Problem,
    order: &[usize],
    counts: &[(usize, u32)],
    used: &[i64],
) -> Option<usize> {
    order.iter().copied().find(|&o| {
        counts.iter().all(|&(c, _)| problem.classes[c].allowed[o]) && fits(used, &problem.cap[o])
    })
}

/// Whole nodes for every pod of the problem.
pub fn solve(problem: &Problem, master: &Master, stop: Stop<'_>, dive_rounds: usize) -> Vec<Node> {
    let dims = problem.cap.first().map_or(0, Vec::len);
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let mut nodes: Vec<Node> = Vec::new();
    let mut pool: Vec<Pattern> = master.patterns.clone();
    let x = master.lp.values();
    commit_floors(
        problem,
        &master.patterns,
        &x,
        &mut residual,
        &mut nodes,
        dims,
    );
    let mut rounds = 0;
    while residual.iter().any(|&r| r > 0) && rounds < dive_rounds && !stop.passed() {
        rounds += 1;
        let mut sub = problem.clone();
        for (class, &r) in sub.classes.iter_mut().zip(&residual) {
            class.count = r;
        }
        let trimmed: Vec<Pattern> = pool
            .iter()
            .filter_map(|p| {
                let counts: Vec<(usize, u32)> = p
                    .counts
                    .iter()
                    .map(|&(c, k)| (c, k.min(residual[c])))
                    .filter(|&(_, k)| k > 0)
                    .collect();
                (!counts.is_empty()).then_some(Pattern {
                    offering: p.offering,
                    counts,
                })
            })
            .collect();
        let m = generate(
            &sub,
            trimmed,
            Limits {
                rounds: 3,
                offerings_per_round: 8,
                node_cap: 2_000,
                stop: Some(stop),
            },
        );
        let x = m.lp.values();
        let before = nodes.len();
        commit_floors(problem, &m.patterns, &x, &mut residual, &mut nodes, dims);
        if nodes.len() == before {
            // Round the largest fraction up.
            let best = x
                .iter()
                .enumerate()
                .filter(|(_, v)| **v > 1e-9)
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
                .map(|(j, _)| j);
            match best {
                Some(j) => commit(problem, &m.patterns[j], 1, &mut residual, &mut nodes, dims),
                None => break,
            }
        }
        pool = m.patterns;
    }
    first_fit_decreasing(problem, &mut residual, &mut nodes, dims);
    nodes
}

/// A quick first-fit-decreasing plan of every pod, then improved: the first incumbent, and
/// its patterns seed the LP.
pub fn quick(problem: &Problem) -> Vec<Node> {
    let dims = problem.cap.first().map_or(0, Vec::len);
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let mut nodes = Vec::new();
    first_fit_decreasing(problem, &mut residual, &mut nodes, dims);
    let order = by_price(problem);
    downsize(problem, &order, &mut nodes);
    nodes
}

/// A quick plan for batches whose pods of mutually conflicting one-per-node classes (anchors)
/// force many nodes: each anchor gets a node sized for itself plus its share of the other
/// pods (fillers) and filled with them until nothing more fits, choosing each next pod to keep
/// the node's free room balanced across dimensions, so the node ends full in all of them;
/// then first-fit decreasing for the rest, then each node onto the cheapest offering holding
/// it. Of the few offerings nearest that size, the one whose filled node wastes least (its
/// price less what its pods use at `prices` per unit of each dimension) wins. None when
/// there are no anchors.
pub fn anchored(problem: &Problem, prices: &[f64]) -> Option<Vec<Node>> {
    let dims = problem.cap.first().map_or(0, Vec::len);
    let clique = problem.conflict_clique();
    if clique.is_empty() {
        return None;
    }
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let fillers: Vec<usize> = (0..problem.classes.len())
        .filter(|c| !clique.contains(c))
        .collect();
    let top: Vec<f64> = (0..dims)
        .map(|d| {
            problem
                .cap
                .iter()
                .map(|cap| cap[d])
                .max()
                .unwrap_or(0)
                .max(1) as f64
        })
        .collect();
    let size = |c: usize| -> f64 {
        problem.classes[c]
            .req
            .iter()
            .zip(&top)
            .map(|(&r, t)| r as f64 / t)
            .sum()
    };
    let mut anchors = clique.clone();
    anchors.sort_by(|&a, &b| size(b).total_cmp(&size(a)).then(a.cmp(&b)));
    let mut anchors_left: u64 = anchors.iter().map(|&c| u64::from(residual[c])).sum();
    let order = by_price(problem);
    let mut nodes: Vec<Node> = Vec::new();
    for &a in &anchors {
        while residual[a] > 0 {
            let volume: Vec<f64> = (0..dims)
                .map(|d| {
                    fillers
                        .iter()
                        .map(|&c| problem.classes[c].req[d].max(0) as f64 * f64::from(residual[c]))
                        .sum::<f64>()
                })
                .collect();
            if volume.iter().all(|&v| v <= 0.0) {
                break;
            }
            // The node this anchor's share would fill in its tightest dimension.
            let target: Vec<f64> = (0..dims)
                .map(|d| problem.classes[a].req[d] as f64 + volume[d] / anchors_left as f64)
                .collect();
            let fill = |o: usize| -> f64 {
                (0..dims)
                    .map(|d| {
                        let cap = problem.cap[o][d];
                        if cap > 0 {
                            target[d] / cap as f64
                        } else if target[d] > 0.0 {
                            f64::INFINITY
                        } else {
                            0.0
                        }
                    })
                    .fold(0.0, f64::max)
            };
            let mut near: Vec<(f64, f64, usize)> = (0..problem.cap.len())
                .filter(|&o| problem.classes[a].allowed[o] && problem.max_copies(a, o) > 0)
                .map(|o| (fill(o).ln().abs(), problem.lp_cost(o), o))
                .filter(|t| t.0.is_finite())
                .collect();
            near.sort_by(|x, y| {
                x.0.total_cmp(&y.0)
                    .then(x.1.total_cmp(&y.1))
                    .then(x.2.cmp(&y.2))
            });
            near.truncate(CANDIDATES);
            let mut best: Option<(f64, Node, Vec<u32>)> = None;
            for &(_, _, o) in &near {
                let mut node = Node::new(o, dims);
                let mut left = residual.clone();
                node.add(problem, a, 1);
                left[a] -= 1;
                fill_balanced(problem, &mut node, &fillers, &mut left);
                if let Some(cheaper) = cheapest_holding(problem, &order, &node.counts, &node.used)
                    && problem.lp_cost(cheaper) < problem.lp_cost(node.offering)
                {
                    node.offering = cheaper;
                }
                let used: f64 = node
                    .used
                    .iter()
                    .zip(prices)
                    .map(|(&u, w)| u as f64 * w)
                    .sum();
                let waste = problem.lp_cost(node.offering) - used;
                if best.as_ref().is_none_or(|b| waste < b.0 - 1e-12) {
                    best = Some((waste, node, left));
                }
            }
            let Some((_, node, left)) = best else { break };
            residual = left;
            anchors_left -= 1;
            nodes.push(node);
        }
    }
    first_fit_decreasing(problem, &mut residual, &mut nodes, dims);
    downsize(problem, &order, &mut nodes);
    Some(nodes)
}

/// Offerings tried per anchor node in [`anchored`].
const CANDIDATES: usize = 4;

/// Adds pods of `classes` to `node` one at a time while any fits: each time the one whose
/// requests best match the node's free room (the dot product of both as shares of the
/// allocatable), so no dimension fills up long before the others.
fn fill_balanced(problem: &Problem, node: &mut Node, classes: &[usize], residual: &mut [u32]) {
    let cap = &problem.cap[node.offering];
    loop {
        let mut best: Option<(f64, usize)> = None;
        for &c in classes {
            if residual[c] == 0 || node.room_for(problem, c, 1) == 0 {
                continue;
            }
            let score: f64 = problem.classes[c]
                .req
                .iter()
                .zip(&node.used)
                .zip(cap)
                .filter(|&(_, &k)| k > 0)
                .map(|((&r, &u), &k)| (r as f64 / k as f64) * ((k - u) as f64 / k as f64))
                .sum();
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, c));
            }
        }
        let Some((_, c)) = best else { break };
        node.add(problem, c, 1);
        residual[c] -= 1;
    }
}

/// The price of a plan (LP costs).
pub fn total(problem: &Problem, nodes: &[Node]) -> f64 {
    nodes.iter().map(|n| problem.lp_cost(n.offering)).sum()
}

fn commit_floors(
    problem: &Problem,
    patterns: &[Pattern],
    x: &[f64],
    residual: &mut [u32],
    nodes: &mut Vec<Node>,
    dims: usize,
) {
    // Largest values first, so the patterns the LP relies on most are taken whole.
    let mut order: Vec<usize> = (0..patterns.len())
        .filter(|&j| x[j] >= 1.0 - 1e-7)
        .collect();
    order.sort_by(|&a, &b| x[b].total_cmp(&x[a]).then(a.cmp(&b)));
    for j in order {
        let copies = (x[j] + 1e-7).floor() as u64;
        commit(problem, &patterns[j], copies, residual, nodes, dims);
    }
}

fn commit(
    problem: &Problem,
    p: &Pattern,
    copies: u64,
    residual: &mut [u32],
    nodes: &mut Vec<Node>,
    dims: usize,
) {
    for _ in 0..copies {
        let mut node = Node::new(p.offering, dims);
        for &(c, k) in &p.counts {
            let take = k.min(residual[c]);
            if take > 0 {
                node.add(problem, c, take);
                residual[c] -= take;
            }
        }
        if node.counts.is_empty() {
            return;
        }
        nodes.push(node);
    }
}

/// The rest, largest classes first: into the free room of planned nodes, else onto a new node
/// of the offering cheapest per pod of that class.
fn first_fit_decreasing(
    problem: &Problem,
    residual: &mut [u32],
    nodes: &mut Vec<Node>,
    dims: usize,
) {
    let mut order: Vec<usize> = (0..residual.len()).filter(|&c| residual[c] > 0).collect();
    let size = |c: usize| -> f64 {
        let req = &problem.classes[c].req;
        // Share of the largest offering's allocatable, summed over dimensions.
        req.iter()
            .enumerate()
            .map(|(d, &r)| {
                let top = problem.cap.iter().map(|cap| cap[d]).max().unwrap_or(0);
                if top > 0 { r as f64 / top as f64 } else { 0.0 }
            })
            .sum()
    };
    order.sort_by(|&a, &b| {
        (problem.classes[b].one_per_node as u8)
            .cmp(&(problem.classes[a].one_per_node as u8))
            .then(size(b).total_cmp(&size(a)))
            .then(a.cmp(&b))
    });
    for c in order {
        for node in nodes.iter_mut() {
            if residual[c] == 0 {
                break;
            }
            let k = node.room_for(problem, c, residual[c]);
            if k > 0 {
                node.add(problem, c, k);
                residual[c] -= k;
            }
        }
        while residual[c] > 0 {
            let best = (0..problem.cap.len())
                .filter(|&o| problem.classes[c].allowed[o])
                .filter_map(|o| {
                    let k = problem.max_copies(c, o).min(residual[c]);
                    (k > 0).then(|| (problem.lp_cost(o) / f64::from(k), o, k))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((_, o, k)) = best else { break };
            let mut node = Node::new(o, dims);
            node.add(problem, c, k);
            residual[c] -= k;
            nodes.push(node);
        }
    }
}
