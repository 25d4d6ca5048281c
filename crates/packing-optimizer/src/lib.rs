//! The cost optimizer's solver, apart from Kubernetes: the cheapest set of nodes (an offering and
//! a count per pod class each) that holds every class, by column generation over a covering LP,
//! diving and local search, with a lower bound that proves how far from optimal a plan can be.
//!
//! A crate of its own so that debug builds (`cargo run`, `cargo test`) compile it optimized
//! (`[profile.dev.package.packing-optimizer]` in the root Cargo.toml): its loops run some fifty
//! times slower unoptimized. Its budget is counted in work ([`work`]), never in time, so a debug
//! and a release build, or an idle and a loaded machine, give the same plan.
//! Method and sources: `packing.md` in the project's shared reference.

pub mod bounds;
pub mod colgen;
pub mod integer;
pub mod lp;
mod pricing;
pub mod work;

use std::time::Instant;

use bounds::{node_count_bound, resource_bound, resource_prices};
use colgen::{Limits, Problem};
use integer::Node;

/// The least budget (units) for which [`optimize`] runs its branch and bound and regrouping:
/// a provisioning batch's (15 M or 50 M in the plugin), not a consolidation trial's (1.5 M).
pub const EXACT_PHASES_MIN_WORK: u64 = 5_000_000;

/// Planned nodes and the lower bound (units per hour) of the optimizer's batch.
pub struct Solved {
    /// Nodes as class counts, on the problem's offerings.
    pub nodes: Vec<Node>,
    /// A lower bound on the price of any plan for these classes, in units per hour.
    pub lower_bound: f64,
    /// Units of work spent.
    pub work: u64,
    /// Whether the wall-clock safety net stopped the search before its work budget did.
    pub cut_short: bool,
}

/// Column generation, diving and local search over the classes, within `work`: the master
/// problem until 6/10 of its units, the dive until 8/10, local search and the set cover after;
/// then, for a small batch still more than 0.5 % above the bound and a budget of at least
/// [`EXACT_PHASES_MIN_WORK`], a branch and bound over whole nodes and a regrouping of node pairs and triples, each within 3/10 of the units (and the
/// total).
pub fn optimize(problem: &Problem, work: &work::Work) -> Solved {
    let pods: usize = problem.classes.iter().map(|c| c.count as usize).sum();
    let start = Instant::now();
    let mut incumbent = integer::quick(problem);
    let mut seeds: Vec<colgen::Pattern> = Vec::new();
    let (prices, _) = resource_prices(problem);
    if let Some(anchored) = integer::anchored(problem, &prices) {
        // Its mixed patterns seed the LP whichever plan is cheaper.
        seeds.extend(anchored.iter().map(|n| colgen::Pattern {
            offering: n.offering,
            counts: n.counts.clone(),
        }));
        if integer::total(problem, &anchored) < integer::total(problem, &incumbent) {
            incumbent = anchored;
        }
    }
    seeds.extend(incumbent.iter().map(|n| colgen::Pattern {
        offering: n.offering,
        counts: n.counts.clone(),
    }));
    let master = colgen::generate(
        problem,
        seeds,
        Limits {
            rounds: 200,
            offerings_per_round: 24,
            node_cap: 4_000,
            stop: Some(work.share(6, 10)),
        },
    );
    let t_master = start.elapsed();
    let mut nodes = integer::solve(
        problem,
        &master,
        work.share(8, 10),
        if pods <= 500 { 200 } else { 60 },
    );
    let t_dive = start.elapsed();
    integer::improve(problem, &mut nodes, work.all(), 96);
    let mut nodes = if integer::total(problem, &incumbent) < integer::total(problem, &nodes) {
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
        if let Some(all) = integer::all_patterns(problem, 20_000) {
            // Few enough count vectors to solve exactly.
            if let Some(exact) = integer::exact_small(problem, &all) {
                solved_exactly = true;
                if integer::total(problem, &exact) < integer::total(problem, &nodes) {
                    nodes = exact;
                }
            }
            pool.extend(all);
        }
        let current = integer::total(problem, &nodes);
        if solved_exactly {
        } else if let Some(mut better) = integer::set_cover(
            problem,
            &pool,
            &master.bound_duals,
            current,
            50_000,
            work.all(),
        ) {
            integer::improve(problem, &mut better, work.all(), 96);
            if integer::total(problem, &better) < current {
                nodes = better;
            }
        }
    }
    // Small batches still above the bound: a branch and bound over whole nodes, pruned by the
    // proving duals, may close the integrality gap the rounding left (at most 3/10 of the
    // budget, so a search that cannot prove anything costs a bounded share). Not for the small
    // budgets of consolidation's trials (many per pass), whose search stays as it was.
    let current = integer::total(problem, &nodes);
    if pods <= 400
        && work.limit() >= EXACT_PHASES_MIN_WORK
        && problem.classes.len() <= 24
        && current > master.lower_bound * 1.005 + 1e-9
    {
        let counts = problem.classes.iter().map(|c| c.count).collect();
        if let Some(better) = integer::branch_and_bound(
            problem,
            &master.bound_duals,
            counts,
            current,
            work.from_now(3, 10),
        ) {
            nodes = better;
        }
        if integer::total(problem, &nodes) > master.lower_bound * 1.005 + 1e-9 {
            integer::regroup(
                problem,
                &master.bound_duals,
                &mut nodes,
                work.from_now(3, 10),
                10,
                100_000,
            );
        }
    }
    if tracing::enabled!(tracing::Level::TRACE) {
        tracing::trace!(
            "optimize: {} classes, {} offerings, {} patterns, bound {:.4}, lp {:.4}, master {:?}, dive {:?}, total {:?}, work {} of {}",
            problem.classes.len(),
            problem.cap.len(),
            master.patterns.len(),
            master.lower_bound,
            master.lp.objective(),
            t_master,
            t_dive,
            start.elapsed(),
            work.used(),
            work.limit()
        );
    }
    Solved {
        nodes,
        lower_bound: master
            .lower_bound
            .max(resource_bound(problem))
            .max(node_count_bound(problem)),
        work: work.used(),
        cut_short: work.cut_short(),
    }
}
