//! The master LP over node patterns, grown by column generation: a pattern is an offering plus
//! a count per pod class that fits one node of it. Pricing is a bounded multi-dimensional
//! knapsack with conflicts, solved per offering by a capped depth-first branch and bound. The
//! LP value, corrected by how far the last duals are from feasible (Farley's bound), is a lower
//! bound on the price of any plan for these classes.

use std::collections::HashSet;
use std::time::Instant;

use super::lp::{Column, Lp};

/// A class of identical pods, as the optimizer sees it.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    /// How many pods.
    pub count: u32,
    /// Requests per dimension.
    pub req: Vec<i64>,
    /// Per offering: whether the class may use it.
    pub allowed: Vec<bool>,
    /// At most one pod of this class per node.
    pub one_per_node: bool,
    /// Other classes that may not share a node with this one (sorted).
    pub conflicts: Vec<usize>,
}

/// The packing problem over classes and offerings.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Allocatable per offering, per dimension.
    pub cap: Vec<Vec<i64>>,
    /// Price per offering (units per hour, the real price).
    pub price: Vec<f64>,
    /// The classes.
    pub classes: Vec<ClassSpec>,
}

/// One node's contents: an offering and a count per class (sorted by class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// The offering.
    pub offering: usize,
    /// (class, count), sorted by class, counts positive.
    pub counts: Vec<(usize, u32)>,
}

impl Problem {
    /// The LP cost of an offering: prices of zero still rank nodes by size.
    pub fn lp_cost(&self, o: usize) -> f64 {
        self.price[o].max(1e-9)
    }

    /// How many copies of class `c` fit an empty node of `o`.
    pub fn max_copies(&self, c: usize, o: usize) -> u32 {
        let class = &self.classes[c];
        let mut k = u32::MAX;
        for (need, have) in class.req.iter().zip(&self.cap[o]) {
            if *need > 0 {
                k = k.min(u32::try_from((*have).max(0) / need).unwrap_or(u32::MAX));
            }
        }
        if class.one_per_node { k.min(1) } else { k }
    }

    /// One-per-node classes that conflict pairwise (a greedy clique, largest classes first):
    /// no node holds two of their pods.
    pub fn conflict_clique(&self) -> Vec<usize> {
        let conflicting = |a: usize, b: usize| {
            self.classes[a].conflicts.binary_search(&b).is_ok()
                || self.classes[b].conflicts.binary_search(&a).is_ok()
        };
        let mut order: Vec<usize> = (0..self.classes.len())
            .filter(|&c| self.classes[c].one_per_node && self.classes[c].count > 0)
            .collect();
        order.sort_by(|&a, &b| {
            self.classes[b]
                .count
                .cmp(&self.classes[a].count)
                .then(a.cmp(&b))
        });
        let mut clique: Vec<usize> = Vec::new();
        for c in order {
            if clique.iter().all(|&o| conflicting(c, o)) {
                clique.push(c);
            }
        }
        clique
    }

    fn column(&self, p: &Pattern) -> Column {
        Column {
            cost: self.lp_cost(p.offering),
            entries: p.counts.iter().map(|&(c, k)| (c, f64::from(k))).collect(),
        }
    }
}

/// The result of column generation.
#[derive(Debug, Clone)]
pub struct Master {
    /// The LP with its pool of patterns.
    pub lp: Lp,
    /// The patterns, index-aligned with the LP's columns.
    pub patterns: Vec<Pattern>,
    /// A lower bound on the price of any plan (units per hour).
    pub lower_bound: f64,
    /// Duals feasible for every pattern (scaled by Farley's factor) that prove the bound: the
    /// pods they price bound any cover of them, which prunes the integer search.
    pub bound_duals: Vec<f64>,
}

/// The best pattern found for an offering under some duals, and whether the search finished.
struct Priced {
    best_value: f64,
    complete: bool,
    improving: Vec<Pattern>,
}

/// Branch and bound for one offering: maximise `Σ pi_c a_c` over counts that fit, honour
/// one-per-node and conflicts; returns improving patterns (value above `threshold`).
fn price_offering(
    problem: &Problem,
    clique: &[bool],
    pi: &[f64],
    o: usize,
    threshold: f64,
    node_cap: usize,
    want: usize,
) -> Priced {
    let cap = &problem.cap[o];
    let dims = cap.len();
    // Items: classes with a positive dual that fit alone.
    let mut items: Vec<(usize, u32, f64)> = problem
        .classes
        .iter()
        .enumerate()
        .filter(|(c, class)| class.allowed[o] && pi[*c] > 1e-12 && class.count > 0)
        .filter_map(|(c, class)| {
            let k = problem.max_copies(c, o).min(class.count);
            if k == 0 {
                return None;
            }
            let share = class
                .req
                .iter()
                .zip(cap)
                .map(|(&r, &h)| if r > 0 { r as f64 / h as f64 } else { 0.0 })
                .fold(0.0, f64::max);
            Some((c, k, pi[c] / share.max(1e-12)))
        })
        .collect();
    items.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let n = items.len();
    let bounder = Bounder::new(problem, clique, pi, &items, dims);
    let suff_sum = &bounder.suff_sum;
    let bound_at = |k: usize, rem: &[i64]| -> f64 { bounder.bound(k, rem) };
    let _ = suff_sum;
    let root = bound_at(0, cap);
    // Multi-start greedy first: each item forced in at its most copies, the rest filled in
    // the static order. Cheap, and it finds varied improving patterns; the branch and bound
    // then only runs when the greedy finds none (to find one or prove there is none).
    if root > threshold {
        let mut found: Vec<Pattern> = Vec::new();
        for first in 0..n {
            let mut rem = cap.clone();
            let mut blocked = vec![false; problem.classes.len()];
            let mut counts: Vec<(usize, u32)> = Vec::new();
            let mut value = 0.0;
            for i in std::iter::once(first).chain((0..n).filter(|&i| i != first)) {
                let (c, u, _) = items[i];
                if blocked[c] {
                    continue;
                }
                let class = &problem.classes[c];
                let mut k = u;
                for (need, have) in class.req.iter().zip(rem.iter()) {
                    if *need > 0 {
                        k = k.min(u32::try_from((*have).max(0) / need).unwrap_or(u32::MAX));
                    }
                }
                if k == 0 {
                    continue;
                }
                for (r, need) in rem.iter_mut().zip(&class.req) {
                    *r -= need * i64::from(k);
                }
                for &other in &class.conflicts {
                    blocked[other] = true;
                }
                counts.push((c, k));
                value += pi[c] * f64::from(k);
            }
            if value > threshold {
                counts.sort_unstable();
                let p = Pattern {
                    offering: o,
                    counts,
                };
                if !found.contains(&p) {
                    found.push(p);
                }
                if found.len() >= want {
                    break;
                }
            }
        }
        if !found.is_empty() {
            return Priced {
                best_value: root,
                complete: false,
                improving: found,
            };
        }
    }
    let mut search = Search {
        problem,
        items: &items,
        pi,
        blocked: vec![0u32; problem.classes.len()],
        chosen: Vec::new(),
        best_value: 0.0,
        best: Vec::new(),
        threshold,
        improving: Vec::new(),
        nodes: 0,
        node_cap,
        want,
        o,
    };
    if root > threshold {
        let mut rem = cap.clone();
        search.dfs(0, &mut rem, 0.0, &bound_at);
    }
    let complete = search.nodes < node_cap && search.improving.len() < want;
    // A finished search pruned only below max(best, threshold), so that is the exact maximum
    // or an upper bound on it.
    let best_value = if root <= threshold {
        root
    } else if complete {
        search.best_value.max(threshold)
    } else {
        root
    };
    Priced {
        best_value,
        complete,
        improving: search.improving,
    }
}

struct Search<'a> {
    problem: &'a Problem,
    items: &'a [(usize, u32, f64)],
    pi: &'a [f64],
    blocked: Vec<u32>,
    chosen: Vec<(usize, u32)>,
    best_value: f64,
    best: Vec<(usize, u32)>,
    threshold: f64,
    improving: Vec<Pattern>,
    nodes: usize,
    node_cap: usize,
    want: usize,
    o: usize,
}

impl Search<'_> {
    fn dfs(
        &mut self,
        k: usize,
        rem: &mut [i64],
        value: f64,
        bound_at: &dyn Fn(usize, &[i64]) -> f64,
    ) {
        self.nodes += 1;
        if self.nodes >= self.node_cap || self.improving.len() >= self.want {
            return;
        }
        if value > self.best_value + 1e-12 {
            self.best_value = value;
            self.best = self.chosen.clone();
            if value > self.threshold {
                let mut counts = self.chosen.clone();
                counts.sort_unstable();
                self.improving.push(Pattern {
                    offering: self.o,
                    counts,
                });
            }
        }
        if k == self.items.len() {
            return;
        }
        if value + bound_at(k, rem) <= self.best_value.max(self.threshold) + 1e-12 {
            return;
        }
        let (c, u, _) = self.items[k];
        let class = &self.problem.classes[c];
        let max = if self.blocked[c] > 0 {
            0
        } else {
            let mut m = u;
            for (need, have) in class.req.iter().zip(rem.iter()) {
                if *need > 0 {
                    m = m.min(u32::try_from((*have).max(0) / need).unwrap_or(u32::MAX));
                }
            }
            m
        };
        // Counts high to low, then skipping the class.
        for cnt in (1..=max).rev() {
            for (r, need) in rem.iter_mut().zip(&class.req) {
                *r -= need * i64::from(cnt);
            }
            for &other in &class.conflicts {
                self.blocked[other] += 1;
            }
            self.chosen.push((c, cnt));
            self.dfs(k + 1, rem, value + self.pi[c] * f64::from(cnt), bound_at);
            self.chosen.pop();
            for &other in &class.conflicts {
                self.blocked[other] -= 1;
            }
            for (r, need) in rem.iter_mut().zip(&class.req) {
                *r += need * i64::from(cnt);
            }
            if self.nodes >= self.node_cap || self.improving.len() >= self.want {
                return;
            }
        }
        self.dfs(k + 1, rem, value, bound_at);
    }
}

/// Upper bounds on what the items from position `k` on can add within `rem`: the summed values
/// (every count at its limit), and per dimension Dantzig's fractional knapsack bound (items by
/// value per unit of that dimension, whole counts while they fit, then a fraction). A
/// dimension some remaining item does not use bounds nothing. Items of the conflict clique
/// ([`Problem::conflict_clique`]) add at most one pod between them: they are left out of both
/// and the best of them is added on top.
struct Bounder<'a> {
    items: &'a [(usize, u32, f64)],
    pi: &'a [f64],
    req: Vec<&'a [i64]>,
    /// Per dimension: item positions (outside the clique) by value per unit, best first.
    orders: Vec<Vec<usize>>,
    /// Per dimension: the last position of an item (outside the clique) that does not use it
    /// (+1), or 0.
    free_until: Vec<usize>,
    suff_sum: Vec<f64>,
    /// From each position on: the best value of one pod of a clique class.
    suff_clique: Vec<f64>,
}

impl<'a> Bounder<'a> {
    fn new(
        problem: &'a Problem,
        clique: &[bool],
        pi: &'a [f64],
        items: &'a [(usize, u32, f64)],
        dims: usize,
    ) -> Self {
        let n = items.len();
        let req: Vec<&[i64]> = items
            .iter()
            .map(|&(c, _, _)| problem.classes[c].req.as_slice())
            .collect();
        let member = |i: usize| clique.get(items[i].0).copied().unwrap_or(false);
        let mut orders = Vec::with_capacity(dims);
        let mut free_until = vec![0usize; dims];
        for d in 0..dims {
            let mut o: Vec<usize> = (0..n).filter(|&i| !member(i) && req[i][d] > 0).collect();
            o.sort_by(|&a, &b| {
                let ra = pi[items[a].0] / req[a][d] as f64;
                let rb = pi[items[b].0] / req[b][d] as f64;
                rb.total_cmp(&ra).then(a.cmp(&b))
            });
            orders.push(o);
            free_until[d] = (0..n)
                .filter(|&i| !member(i) && req[i][d] <= 0)
                .map(|i| i + 1)
                .max()
                .unwrap_or(0);
        }
        let mut suff_sum = vec![0.0f64; n + 1];
        let mut suff_clique = vec![0.0f64; n + 1];
        for k in (0..n).rev() {
            let (c, u, _) = items[k];
            if member(k) {
                suff_sum[k] = suff_sum[k + 1];
                suff_clique[k] = suff_clique[k + 1].max(pi[c] * f64::from(u.min(1)));
            } else {
                suff_sum[k] = suff_sum[k + 1] + pi[c] * f64::from(u);
                suff_clique[k] = suff_clique[k + 1];
            }
        }
        Bounder {
            items,
            pi,
            req,
            orders,
            free_until,
            suff_sum,
            suff_clique,
        }
    }

    fn bound(&self, k: usize, rem: &[i64]) -> f64 {
        let mut b = self.suff_sum[k];
        for (d, order) in self.orders.iter().enumerate() {
            if k < self.free_until[d] {
                continue;
            }
            let items = order.iter().filter(|&&i| i >= k).map(|&i| {
                let (c, u, _) = self.items[i];
                (self.pi[c], u, self.req[i][d] as f64)
            });
            b = b.min(fractional_knapsack(items, rem[d].max(0) as f64, b));
        }
        b + self.suff_clique[k]
    }
}

/// Dantzig's bound for one dimension: items (value per copy, copies, need per copy) best value
/// per unit first, whole while they fit in `room`, then a fraction of the next. Stops early
/// once the value reaches `enough` (the caller keeps the least of several bounds).
fn fractional_knapsack(
    items: impl Iterator<Item = (f64, u32, f64)>,
    room: f64,
    enough: f64,
) -> f64 {
    let (mut room, mut v) = (room, 0.0);
    for (value, copies, need) in items {
        let whole = f64::from(copies) * need;
        if whole <= room {
            v += value * f64::from(copies);
            room -= whole;
        } else {
            v += value * room / need;
            break;
        }
        if v >= enough {
            break;
        }
    }
    v
}

/// Limits of column generation.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Column generation rounds.
    pub rounds: usize,
    /// Offerings searched exactly per round.
    pub offerings_per_round: usize,
    /// Branch-and-bound nodes per offering search.
    pub node_cap: usize,
    /// Wall time for the whole generation.
    pub deadline: Option<Instant>,
}

/// Single-class patterns: per class, the cheapest few offerings per pod at full copies.
pub fn seed_patterns(problem: &Problem) -> Vec<Pattern> {
    let mut out = Vec::new();
    for (c, class) in problem.classes.iter().enumerate() {
        let mut options: Vec<(f64, usize, u32)> = (0..problem.cap.len())
            .filter(|&o| class.allowed[o])
            .filter_map(|o| {
                let k = problem.max_copies(c, o).min(class.count.max(1));
                (k > 0).then(|| (problem.lp_cost(o) / f64::from(k), o, k))
            })
            .collect();
        options.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, o, k) in options.iter().take(3) {
            out.push(Pattern {
                offering: o,
                counts: vec![(c, k)],
            });
        }
    }
    out
}

/// Runs column generation from the seed patterns plus `extra` (e.g. a quick greedy's).
pub fn generate(problem: &Problem, extra: Vec<Pattern>, limits: Limits) -> Master {
    let demand: Vec<f64> = problem.classes.iter().map(|c| f64::from(c.count)).collect();
    let max_cost = (0..problem.cap.len())
        .map(|o| problem.lp_cost(o))
        .fold(0.0, f64::max);
    let mut lp = Lp::new(demand.clone(), 10.0 * max_cost + 1.0);
    let mut patterns = Vec::new();
    let mut seen: HashSet<Pattern> = HashSet::new();
    // The first seed of each class is its cheapest per pod: together they are the first basis.
    let mut per_row: Vec<Option<usize>> = vec![None; problem.classes.len()];
    for p in seed_patterns(problem).into_iter().chain(extra) {
        if !p.counts.is_empty() && seen.insert(p.clone()) {
            if let [(c, _)] = p.counts[..]
                && per_row[c].is_none()
            {
                per_row[c] = Some(patterns.len());
            }
            lp.add(problem.column(&p));
            patterns.push(p);
        }
    }
    lp.diagonal_basis(&per_row);
    let mut in_clique = vec![false; problem.classes.len()];
    for c in problem.conflict_clique() {
        in_clique[c] = true;
    }
    // Prices per unit of each dimension for the Lagrangian pricing bound: the ones that prove
    // the node-count bound, scaled a little either way.
    let (prices, _) = super::engine::resource_prices(problem);
    let lambdas: Vec<Vec<f64>> = [0.5, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5]
        .iter()
        .map(|s| prices.iter().map(|w| w * s).collect())
        .collect();
    let mut lower_bound = 0.0f64;
    let mut bound_duals = vec![0.0; problem.classes.len()];
    let offerings = problem.cap.len();
    for _round in 0..limits.rounds {
        let m = problem.classes.len();
        let t = Instant::now();
        let done = lp.solve_until(20 * m + 200, limits.deadline);
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(
                "round {_round}: solved {done} obj {:.4} in {:?}, pool {}",
                lp.objective(),
                t.elapsed(),
                patterns.len()
            );
        }
        let pi: Vec<f64> = lp.duals().into_iter().map(|p| p.max(0.0)).collect();
        let dual_value: f64 = pi.iter().zip(&demand).map(|(p, n)| p * n).sum();
        // Score every offering by the cheap root bound, search the most promising.
        let scorer = Scorer::new(problem, &in_clique, &lambdas, &pi);
        let mut scored: Vec<(f64, usize)> =
            (0..offerings).map(|o| (scorer.root_ratio(o), o)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut rho = 1.0f64;
        let mut added = 0;
        let out_of_time = limits.deadline.is_some_and(|d| Instant::now() >= d);
        for (rank, &(ratio, o)) in scored.iter().enumerate() {
            let searched = rank < limits.offerings_per_round && !out_of_time;
            if ratio <= 1.0 + 1e-9 {
                break;
            }
            if !searched {
                rho = rho.max(ratio);
                continue;
            }
            let cost = problem.lp_cost(o);
            let priced = price_offering(
                problem,
                &in_clique,
                &pi,
                o,
                cost * (1.0 + 1e-9),
                limits.node_cap,
                8,
            );
            let real = problem.price[o];
            if priced.complete {
                rho = rho.max(ratio_of(priced.best_value, real));
            } else {
                rho = rho.max(ratio);
            }
            for p in priced.improving {
                if seen.insert(p.clone()) {
                    lp.add(problem.column(&p));
                    patterns.push(p);
                    added += 1;
                }
            }
        }
        // The bound must use the real prices: recompute rho for offerings whose real price is
        // below the LP cost (price zero), where any positive value makes the ratio unbounded.
        if !lp.infeasible() && dual_value / rho > lower_bound && rho.is_finite() {
            lower_bound = dual_value / rho;
            bound_duals = pi.iter().map(|p| p / rho).collect();
        }
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(
                "   dual {dual_value:.4} rho {rho:.4} added {added} bound {lower_bound:.4}"
            );
        }
        if added == 0 || out_of_time {
            break;
        }
    }
    let m = problem.classes.len();
    lp.solve_until(20 * m + 200, limits.deadline);
    Master {
        lp,
        patterns,
        lower_bound,
        bound_duals,
    }
}

fn ratio_of(value: f64, price: f64) -> f64 {
    if value <= 0.0 {
        0.0
    } else if price <= 0.0 {
        f64::INFINITY
    } else {
        value / price
    }
}

/// What scoring every offering against one round's duals shares, computed once per round:
/// per dimension the classes by dual value per unit (best first), and per Lagrangian price
/// vector each class's gain. An offering's score then costs a pass over the classes.
struct Scorer<'a> {
    problem: &'a Problem,
    clique: &'a [bool],
    pi: &'a [f64],
    /// Per dimension: classes outside the clique that use it, by value per unit, best first.
    orders: Vec<Vec<usize>>,
    /// Per Lagrangian price vector (valid ones only): the vector and each class's gain
    /// `π_c − λ·req_c`.
    lambdas: Vec<(&'a [f64], Vec<f64>)>,
}

impl<'a> Scorer<'a> {
    fn new(
        problem: &'a Problem,
        clique: &'a [bool],
        lambdas: &'a [Vec<f64>],
        pi: &'a [f64],
    ) -> Self {
        let dims = problem.cap.first().map_or(0, Vec::len);
        let member = |c: usize| clique.get(c).copied().unwrap_or(false);
        let orders = (0..dims)
            .map(|d| {
                let mut o: Vec<usize> = (0..problem.classes.len())
                    .filter(|&c| !member(c) && problem.classes[c].req[d] > 0)
                    .collect();
                let density = |c: usize| pi[c] / problem.classes[c].req[d] as f64;
                o.sort_by(|&a, &b| density(b).total_cmp(&density(a)).then(a.cmp(&b)));
                o
            })
            .collect();
        let lambdas = lambdas
            .iter()
            .filter(|l| l.len() == dims && l.iter().all(|x| x.is_finite() && *x >= 0.0))
            .map(|l| {
                let gains = problem
                    .classes
                    .iter()
                    .enumerate()
                    .map(|(c, class)| {
                        pi[c]
                            - l.iter()
                                .zip(&class.req)
                                .map(|(x, &r)| x * r as f64)
                                .sum::<f64>()
                    })
                    .collect();
                (l.as_slice(), gains)
            })
            .collect();
        Scorer {
            problem,
            clique,
            pi,
            orders,
            lambdas,
        }
    }

    /// An upper bound on what one node of offering `o` is worth at these duals, over its real
    /// price: the least of the fractional knapsack bounds per dimension ([`Bounder`] at the
    /// root) and the Lagrangian bounds.
    fn root_ratio(&self, o: usize) -> f64 {
        let problem = self.problem;
        let member = |c: usize| self.clique.get(c).copied().unwrap_or(false);
        // Copies of each class one empty node holds (0 where the class may not use it).
        let copies: Vec<u32> = problem
            .classes
            .iter()
            .enumerate()
            .map(|(c, class)| {
                if class.allowed[o] && self.pi[c] > 0.0 && class.count > 0 {
                    problem.max_copies(c, o).min(class.count)
                } else {
                    0
                }
            })
            .collect();
        let item = |c: usize| copies[c] > 0 && self.pi[c] > 1e-12;
        let (mut sum, mut clique_best) = (0.0f64, 0.0f64);
        for c in (0..copies.len()).filter(|&c| item(c)) {
            if member(c) {
                clique_best = clique_best.max(self.pi[c] * f64::from(copies[c].min(1)));
            } else {
                sum += self.pi[c] * f64::from(copies[c]);
            }
        }
        let cap = &problem.cap[o];
        let mut knapsack = sum;
        for (d, order) in self.orders.iter().enumerate() {
            // A dimension some item does not use bounds nothing.
            if (0..copies.len()).any(|c| item(c) && !member(c) && problem.classes[c].req[d] <= 0) {
                continue;
            }
            let items = order
                .iter()
                .filter(|&&c| item(c))
                .map(|&c| (self.pi[c], copies[c], problem.classes[c].req[d] as f64));
            knapsack = knapsack.min(fractional_knapsack(items, cap[d].max(0) as f64, knapsack));
        }
        let bound = (knapsack + clique_best).min(self.lagrangian(o, &copies));
        ratio_of(bound, problem.price[o])
    }

    /// The Lagrangian bound on a pattern's value for offering `o`: for prices `λ ≥ 0` per unit
    /// of each dimension, any pattern that fits is worth at most
    /// `λ·cap + Σ_c u_c·max(0, π_c − λ·req_c)` (`u_c` the copies of class c that fit; the
    /// conflict clique adds one pod at most, its best). The least over the price vectors;
    /// combines all dimensions where the per-dimension knapsack bound takes one at a time.
    fn lagrangian(&self, o: usize, copies: &[u32]) -> f64 {
        let cap = &self.problem.cap[o];
        let mut best = f64::INFINITY;
        for (lambda, gains) in &self.lambdas {
            let mut v: f64 = lambda
                .iter()
                .zip(cap)
                .map(|(l, &c)| l * c.max(0) as f64)
                .sum();
            let mut clique_best = 0.0f64;
            for (c, (&u, &gain)) in copies.iter().zip(gains).enumerate() {
                if u == 0 || gain <= 0.0 {
                    continue;
                }
                if self.clique.get(c).copied().unwrap_or(false) {
                    clique_best = clique_best.max(gain);
                } else {
                    v += gain * f64::from(u);
                }
            }
            best = best.min(v + clique_best);
        }
        best
    }
}
