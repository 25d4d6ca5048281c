//! Branch and bound over whole nodes for small batches, after the dive and local search: a
//! plan is a multiset of nodes, so branch on the pods of the largest class left, over the node
//! contents that could hold one of them (per offering, contents no further pod of what is left
//! fits: with a covering, a larger content on the same offering is never worse), cheapest
//! reduced cost first; prune with the master's proving duals (covering what is left costs at
//! least its dual value, and a content is worth trying only if its price less its dual value
//! is below the slack to the incumbent) and with the least cost each residual was reached at.
//! Within its share of the work meter, so the plan is the same on any machine.

use std::collections::HashMap;

use super::*;

/// A plan for the pods of `residual` (counts per class) cheaper than `incumbent` (LP costs),
/// if the search finds one within `stop`. `duals` must be feasible for every pattern (the
/// master's `bound_duals`).
pub fn branch_and_bound(
    problem: &Problem,
    duals: &[f64],
    mut residual: Vec<u32>,
    incumbent: f64,
    stop: Stop<'_>,
) -> Option<Vec<Node>> {
    let m = problem.classes.len();
    let dims = problem.cap.first().map_or(0, Vec::len);
    let top: Vec<f64> = (0..dims)
        .map(|d| problem.cap.iter().map(|c| c[d]).max().unwrap_or(0).max(1) as f64)
        .collect();
    let size: Vec<f64> = problem
        .classes
        .iter()
        .map(|c| c.req.iter().zip(&top).map(|(&r, t)| r as f64 / t).sum())
        .collect();
    // Per offering and dimension: the classes by dual value per unit, for the fractional bound.
    let density: Vec<Vec<Vec<usize>>> = problem
        .cap
        .iter()
        .map(|_| {
            (0..dims)
                .map(|d| {
                    let mut order: Vec<usize> = (0..m).filter(|&c| duals[c] > 0.0).collect();
                    let per =
                        |c: usize| duals[c] / (problem.classes[c].req[d].max(0) as f64 + 1e-12);
                    order.sort_by(|&a, &b| per(b).total_cmp(&per(a)).then(a.cmp(&b)));
                    order
                })
                .collect()
        })
        .collect();
    let mut search = Search {
        problem,
        duals,
        size,
        density,
        best: incumbent,
        best_nodes: None,
        chosen: Vec::new(),
        seen: HashMap::new(),
        stop,
    };
    search.node(&mut residual, 0.0);
    let order = by_price(problem);
    let mut nodes = search.best_nodes?;
    downsize(problem, &order, &mut nodes);
    Some(nodes)
}

/// Large neighbourhood search: the nodes of each small group (pairs and triples of the
/// `window` nodes that pay most above the dual value of their pods) re-planned exactly by
/// [`branch_and_bound`], each group within `per_group` units; a cheaper plan of a group
/// replaces it. Returns whether anything improved.
pub fn regroup(
    problem: &Problem,
    duals: &[f64],
    nodes: &mut Vec<Node>,
    stop: Stop<'_>,
    window: usize,
    per_group: u64,
) -> bool {
    let m = problem.classes.len();
    let excess = |n: &Node| -> f64 {
        let value: f64 = n.counts.iter().map(|&(c, k)| duals[c] * f64::from(k)).sum();
        problem.lp_cost(n.offering) - value
    };
    let mut any = false;
    let mut improved = true;
    while improved && !stop.passed() {
        improved = false;
        let mut idx: Vec<usize> = (0..nodes.len()).collect();
        idx.sort_by(|&a, &b| {
            excess(&nodes[b])
                .total_cmp(&excess(&nodes[a]))
                .then(a.cmp(&b))
        });
        idx.truncate(window);
        let mut groups: Vec<(f64, Vec<usize>)> = Vec::new();
        for (x, &a) in idx.iter().enumerate() {
            for (y, &b) in idx.iter().enumerate().skip(x + 1) {
                groups.push((excess(&nodes[a]) + excess(&nodes[b]), vec![a, b]));
                for &c in &idx[y + 1..] {
                    groups.push((
                        excess(&nodes[a]) + excess(&nodes[b]) + excess(&nodes[c]),
                        vec![a, b, c],
                    ));
                }
            }
        }
        groups.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (gain, group) in groups {
            if stop.passed() {
                break;
            }
            if gain <= 1e-9 {
                break;
            }
            let mut residual = vec![0u32; m];
            let mut current = 0.0;
            for &i in &group {
                current += problem.lp_cost(nodes[i].offering);
                for &(c, k) in &nodes[i].counts {
                    residual[c] += k;
                }
            }
            if let Some(better) =
                branch_and_bound(problem, duals, residual, current, stop.capped(per_group))
            {
                let mut drop = group.clone();
                drop.sort_unstable_by(|a, b| b.cmp(a));
                for i in drop {
                    nodes.swap_remove(i);
                }
                nodes.extend(better);
                improved = true;
                any = true;
                break;
            }
        }
    }
    any
}

struct Search<'a> {
    problem: &'a Problem,
    duals: &'a [f64],
    size: Vec<f64>,
    density: Vec<Vec<Vec<usize>>>,
    best: f64,
    best_nodes: Option<Vec<Node>>,
    chosen: Vec<(usize, Vec<u32>)>,
    /// The least cost each residual was searched at.
    seen: HashMap<Vec<u32>, f64>,
    stop: Stop<'a>,
}

impl Search<'_> {
    fn value(&self, counts: &[u32]) -> f64 {
        self.duals
            .iter()
            .zip(counts)
            .map(|(d, &k)| d * f64::from(k))
            .sum()
    }

    fn node(&mut self, residual: &mut Vec<u32>, cost: f64) {
        let m = residual.len();
        self.stop.spend(m as u64 + 1);
        if self.stop.passed() {
            return;
        }
        let eps = 1e-9 * self.best.abs().max(1.0);
        let Some(first) = (0..m)
            .filter(|&c| residual[c] > 0)
            .max_by(|&a, &b| self.size[a].total_cmp(&self.size[b]).then(b.cmp(&a)))
        else {
            if cost < self.best - eps {
                self.best = cost;
                let dims = self.problem.cap.first().map_or(0, Vec::len);
                let nodes = self
                    .chosen
                    .iter()
                    .map(|(o, counts)| {
                        let mut node = Node::new(*o, dims);
                        for (c, &k) in counts.iter().enumerate() {
                            if k > 0 {
                                node.add(self.problem, c, k);
                            }
                        }
                        node
                    })
                    .collect();
                self.best_nodes = Some(nodes);
            }
            return;
        };
        let bound = self.value(residual);
        if cost + bound >= self.best - eps {
            return;
        }
        if self
            .seen
            .get(residual.as_slice())
            .is_some_and(|&g| g <= cost + eps)
        {
            return;
        }
        self.seen.insert(residual.clone(), cost);
        let slack = self.best - cost - bound;
        // Contents per count vector, on the cheapest offering that yields it.
        let mut found: HashMap<Vec<u32>, (f64, usize, f64)> = HashMap::new();
        for o in 0..self.problem.cap.len() {
            if !self.problem.classes[first].allowed[o] {
                continue;
            }
            let price = self.problem.lp_cost(o);
            let mut walk = Walk {
                first,
                floor: price - slack,
                budget: self.stop.left(),
                ..Walk::new(self.problem, self.duals, &self.density[o], o, residual)
            };
            walk.walk(0, 0.0, &mut |counts, value| {
                let e = found.entry(counts.to_vec()).or_insert((price, o, value));
                if price < e.0 {
                    *e = (price, o, value);
                }
            });
            self.stop.spend(walk.steps);
            if self.stop.passed() {
                return;
            }
        }
        let mut list: Vec<(Vec<u32>, f64, usize, f64)> = found
            .into_iter()
            .map(|(k, (p, o, v))| (k, p, o, v))
            .collect();
        list.sort_by(|a, b| {
            (a.1 - a.3)
                .total_cmp(&(b.1 - b.3))
                .then_with(|| a.0.cmp(&b.0))
        });
        for (counts, price, o, value) in list {
            if cost + price + bound - value >= self.best - eps {
                // Sorted by reduced cost: none after this one helps either.
                break;
            }
            for (r, k) in residual.iter_mut().zip(&counts) {
                *r -= k;
            }
            self.chosen.push((o, counts));
            self.node(residual, cost + price);
            if let Some((_, counts)) = self.chosen.pop() {
                for (r, k) in residual.iter_mut().zip(&counts) {
                    *r += k;
                }
            }
            if self.stop.passed() {
                return;
            }
        }
    }
}

/// The contents of one offering within a residual that hold a pod of `first`, that no further
/// pod fits, and whose dual value is above `floor`.
struct Walk<'a> {
    problem: &'a Problem,
    duals: &'a [f64],
    density: &'a [Vec<usize>],
    cap: &'a [i64],
    limit: Vec<u32>,
    first: usize,
    floor: f64,
    /// Units left on the meter: the walk gives up beyond them (its steps are then spent and
    /// the search stops).
    budget: u64,
    counts: Vec<u32>,
    used: Vec<i64>,
    steps: u64,
}

impl<'a> Walk<'a> {
    fn new(
        problem: &'a Problem,
        duals: &'a [f64],
        density: &'a [Vec<usize>],
        o: usize,
        residual: &[u32],
    ) -> Walk<'a> {
        let limit = residual
            .iter()
            .enumerate()
            .map(|(c, &r)| {
                let class = &problem.classes[c];
                if !class.allowed[o] {
                    0
                } else if class.one_per_node {
                    r.min(1)
                } else {
                    r
                }
            })
            .collect();
        Walk {
            problem,
            duals,
            density,
            cap: &problem.cap[o],
            limit,
            first: 0,
            floor: f64::NEG_INFINITY,
            budget: u64::MAX,
            counts: vec![0; residual.len()],
            used: vec![0; problem.cap[o].len()],
            steps: 0,
        }
    }

    /// Whether one more pod of `c` may join: room, its limit, no conflict with the content.
    fn fits_one(&self, c: usize) -> bool {
        if self.counts[c] >= self.limit[c] {
            return false;
        }
        let class = &self.problem.classes[c];
        let conflict = self.counts.iter().enumerate().any(|(d, &k)| {
            k > 0
                && d != c
                && (class.conflicts.binary_search(&d).is_ok()
                    || self.problem.classes[d].conflicts.binary_search(&c).is_ok())
        });
        !conflict
            && class
                .req
                .iter()
                .zip(&self.used)
                .zip(self.cap)
                .all(|((r, u), k)| u + r <= *k)
    }

    /// What classes `from..` can still add in dual value: per dimension a fractional knapsack
    /// over the room left (conflicts ignored), the least of those.
    fn upper(&mut self, from: usize) -> f64 {
        let mut best = f64::INFINITY;
        for (d, order) in self.density.iter().enumerate() {
            self.steps += order.len() as u64;
            let mut room = (self.cap[d] - self.used[d]).max(0) as f64;
            let mut value = 0.0;
            for &c in order {
                if c < from || self.limit[c] == 0 {
                    continue;
                }
                let r = self.problem.classes[c].req[d].max(0) as f64;
                let n = f64::from(self.limit[c]);
                if r <= 0.0 {
                    value += self.duals[c] * n;
                    continue;
                }
                let take = (room / r).min(n);
                value += take * self.duals[c];
                room -= take * r;
                if room <= 0.0 {
                    break;
                }
            }
            best = best.min(value);
        }
        best
    }

    fn walk(&mut self, c: usize, value: f64, out: &mut dyn FnMut(&[u32], f64)) {
        self.steps += 1;
        if self.steps > self.budget {
            return;
        }
        let m = self.limit.len();
        if value + self.upper(c) <= self.floor {
            return;
        }
        if c == m {
            if self.counts[self.first] == 0 || (0..m).any(|d| self.fits_one(d)) {
                return;
            }
            out(&self.counts, value);
            return;
        }
        let problem = self.problem;
        let req = &problem.classes[c].req;
        let mut k = 0u32;
        while self.fits_one(c) {
            for (u, r) in self.used.iter_mut().zip(req) {
                *u += r;
            }
            self.counts[c] += 1;
            k += 1;
        }
        let most = k;
        loop {
            // Fewer than fit now: later classes must be able to take the room or conflict.
            let closable = k == most
                || (c + 1..m).any(|x| {
                    self.limit[x] > 0
                        && (self.problem.classes[c].conflicts.binary_search(&x).is_ok()
                            || self.problem.classes[x].conflicts.binary_search(&c).is_ok())
                })
                || (0..self.cap.len()).any(|d| {
                    let later: i64 = (c + 1..m)
                        .map(|x| self.problem.classes[x].req[d] * i64::from(self.limit[x]))
                        .sum();
                    self.used[d] + later + req[d] > self.cap[d]
                });
            if closable && (c != self.first || k > 0) {
                self.walk(c + 1, value + self.duals[c] * f64::from(k), out);
            }
            if k == 0 {
                break;
            }
            k -= 1;
            self.counts[c] -= 1;
            for (u, r) in self.used.iter_mut().zip(req) {
                *u -= r;
            }
        }
    }
}
