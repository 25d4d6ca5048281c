//! The master LP over node patterns, grown by column generation: a pattern is an offering plus
//! a count per pod class that fits one node of it. Pricing is a bounded multi-dimensional
//! knapsack with conflicts, solved per offering by a capped branch and bound (`pricing.rs`). The
//! LP value, corrected by how far the last duals are from feasible (Farley's bound), is a lower
//! bound on the price of any plan for these classes.

use std::collections::HashSet;
use std::time::Instant;

use crate::work::Stop;

use crate::lp::{Column, Lp};
use crate::pricing::{Scorer, price_offering, ratio_of};

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

/// Limits of column generation.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// Column generation rounds.
    pub rounds: usize,
    /// Offerings searched exactly per round.
    pub offerings_per_round: usize,
    /// Branch-and-bound nodes per offering search.
    pub node_cap: usize,
    /// Where the generation stops on the optimizer's work meter (none: only the caps above).
    pub stop: Option<Stop<'a>>,
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
pub fn generate(problem: &Problem, extra: Vec<Pattern>, limits: Limits<'_>) -> Master {
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
    let (prices, _) = crate::bounds::resource_prices(problem);
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
        let done = lp.solve_until(20 * m + 200, limits.stop);
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
        if let Some(stop) = limits.stop {
            stop.spend((offerings * (m + 1)) as u64);
        }
        let mut rho = 1.0f64;
        let mut added = 0;
        let out_of_time = limits.stop.is_some_and(|s| s.passed());
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
            if let Some(stop) = limits.stop {
                stop.spend(priced.work);
            }
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
    lp.solve_until(20 * m + 200, limits.stop);
    Master {
        lp,
        patterns,
        lower_bound,
        bound_duals,
    }
}
