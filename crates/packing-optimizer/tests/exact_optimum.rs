//! The optimizer against a proven optimum on 20-flavor mixed catalogs (30-80 pods): an exact
//! branch and bound written here, independent of the optimizer's own search, proves the
//! cheapest plan of each fixed seed, and the optimizer's plan (with the production budget of
//! a batch up to 500 pods) must be within 2 % of it.
//!
//! The exact search: a plan is a multiset of nodes; branch on the pods of the largest class
//! left, over every node content that is maximal for some flavor within what is left (with
//! covering, a larger content on the same flavor is never worse), each on the cheapest flavor
//! holding it; prune with duals whose validity is checked here against every maximal content
//! of every flavor (so the bound does not rest on the optimizer's LP), and with a table of
//! the cheapest cost at which each residual was reached. Prices are integers (thousandths per
//! hour), so the optimum is exact.

use std::collections::HashMap;
use std::time::Duration;

use karpenter_capi_testkit::rng::Lcg;
use packing_optimizer::colgen::{ClassSpec, Limits, Problem, generate};
use packing_optimizer::work::{SMALL_BATCH_WORK, Work};

/// A generated case: the problem and its prices in thousandths per hour.
struct Case {
    problem: Problem,
    milli: Vec<i64>,
}

/// 20 flavors: four families (compute 1:2 GiB per vCPU, general 1:4, memory 1:8, and a
/// cheaper-CPU 1:3 family) in sizes 1-16 vCPU; each family its own price per vCPU and per GiB,
/// with a few percent of noise per flavor. Allocatable is capacity less a DaemonSet and system
/// reserve (100m + 3 % of the CPU, 256 MiB + 6 % of the memory). Pods: 3-6 classes of mixed
/// shapes (CPU-heavy 1-2 GiB per vCPU or memory-heavy 4-12 GiB per vCPU), `pods` in all.
fn generate_case(seed: u64, pods: u32) -> Case {
    let mut rng = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
    let families = [(2i64, 0), (4, 1), (8, 2), (3, 3)];
    let mut cap = Vec::new();
    let mut milli = Vec::new();
    for &(gib_per_cpu, kind) in &families {
        let (cpu_rate, mem_rate) = match kind {
            0 => (rng.range(0.026, 0.034), rng.range(0.003, 0.005)),
            1 => (rng.range(0.030, 0.038), rng.range(0.003, 0.005)),
            2 => (rng.range(0.030, 0.042), rng.range(0.002, 0.0035)),
            _ => (rng.range(0.020, 0.028), rng.range(0.004, 0.006)),
        };
        // Some families sell large sizes cheaper per unit, some small ones.
        let per_doubling = rng.range(0.92, 1.04);
        for (step, cpus) in [1i64, 2, 4, 8, 16].into_iter().enumerate() {
            let mem_gib = cpus * gib_per_cpu;
            let list = cpu_rate * cpus as f64 + mem_rate * mem_gib as f64;
            let price = list * per_doubling.powi(step as i32) * rng.range(0.92, 1.08);
            milli.push(((price * 1000.0).round() as i64).max(1));
            let cpu_m = cpus * 1000;
            let mem_mi = mem_gib * 1024;
            cap.push(vec![
                cpu_m - 100 - cpu_m * 3 / 100,
                mem_mi - 256 - mem_mi * 6 / 100,
            ]);
        }
    }
    let kinds = 3 + rng.below(4) as usize;
    let mut shapes: Vec<Vec<i64>> = Vec::new();
    while shapes.len() < kinds {
        let cpu = [250i64, 500, 750, 1000, 1500, 2000, 3000][rng.below(7) as usize];
        let per_cpu_mib = if rng.below(2) == 0 {
            [1024i64, 1536, 2048, 3072][rng.below(4) as usize]
        } else {
            [4096i64, 6144, 8192, 12288][rng.below(4) as usize]
        };
        let shape = vec![cpu, cpu * per_cpu_mib / 1000];
        if !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    // Split the pods over the classes, each at least one.
    let mut counts = vec![1u32; kinds];
    for _ in kinds as u32..pods {
        counts[rng.below(kinds as u64) as usize] += 1;
    }
    let offerings = cap.len();
    let classes = shapes
        .into_iter()
        .zip(counts)
        .map(|(req, count)| ClassSpec {
            count,
            req,
            allowed: vec![true; offerings],
            one_per_node: false,
            conflicts: Vec::new(),
        })
        .collect();
    Case {
        problem: Problem {
            cap,
            price: milli.iter().map(|&m| m as f64 / 1000.0).collect(),
            classes,
        },
        milli,
    }
}

/// The exact search's state.
struct Exact<'a> {
    problem: &'a Problem,
    milli: &'a [i64],
    /// Per class, thousandths per hour per pod: for every flavor, no content of it is worth
    /// more than its price (checked in [`valid_duals`]).
    duals: Vec<f64>,
    /// The cheapest plan found (thousandths per hour); starts at the incumbent's.
    best: i64,
    /// Its nodes (flavor, counts), when cheaper than the incumbent.
    best_plan: Option<Vec<(usize, Vec<u32>)>>,
    chosen: Vec<(usize, Vec<u32>)>,
    /// The least cost at which each residual was searched.
    seen: HashMap<Vec<u32>, i64>,
    nodes: u64,
    node_cap: u64,
}

/// A lower bound on covering `residual`, in whole thousandths (prices are whole thousandths).
fn dual_bound(duals: &[f64], residual: &[u32]) -> i64 {
    let v: f64 = duals
        .iter()
        .zip(residual)
        .map(|(d, &r)| d * f64::from(r))
        .sum();
    (v * (1.0 - 1e-9) - 1e-6).ceil() as i64
}

/// Calls `out` with every content of flavor `o` (counts per class, within `limit`) that holds
/// a pod of `first` (if any), to which no further pod of `limit` fits, and whose dual value
/// exceeds `floor`.
fn contents(
    problem: &Problem,
    duals: &[f64],
    o: usize,
    limit: &[u32],
    first: Option<usize>,
    floor: f64,
    out: &mut dyn FnMut(&[u32], f64),
) {
    struct Walk<'a> {
        problem: &'a Problem,
        duals: &'a [f64],
        cap: &'a [i64],
        limit: &'a [u32],
        first: Option<usize>,
        floor: f64,
        counts: Vec<u32>,
        used: Vec<i64>,
    }
    impl Walk<'_> {
        fn fits_one(&self, c: usize) -> bool {
            self.problem.classes[c]
                .req
                .iter()
                .zip(&self.used)
                .zip(self.cap)
                .all(|((r, u), k)| u + r <= *k)
        }
        /// What classes `from..` can still add in dual value: per dimension a fractional
        /// knapsack over the room left, the least of those.
        fn upper(&self, from: usize) -> f64 {
            let m = self.limit.len();
            let mut best = f64::INFINITY;
            for d in 0..self.cap.len() {
                let mut items: Vec<(f64, f64, f64)> = (from..m)
                    .filter(|&c| self.limit[c] > 0 && self.duals[c] > 0.0)
                    .map(|c| {
                        let r = self.problem.classes[c].req[d].max(0) as f64;
                        (r, self.duals[c], f64::from(self.limit[c]))
                    })
                    .collect();
                items.sort_by(|a, b| (b.1 / b.0.max(1e-12)).total_cmp(&(a.1 / a.0.max(1e-12))));
                let mut room = (self.cap[d] - self.used[d]).max(0) as f64;
                let mut value = 0.0;
                for (r, v, n) in items {
                    if r <= 0.0 {
                        value += v * n;
                        continue;
                    }
                    let take = (room / r).min(n);
                    value += take * v;
                    room -= take * r;
                }
                best = best.min(value);
            }
            best
        }
        fn walk(&mut self, c: usize, value: f64, out: &mut dyn FnMut(&[u32], f64)) {
            let m = self.limit.len();
            if value + self.upper(c) <= self.floor {
                return;
            }
            if c == m {
                if self.first.is_some_and(|f| self.counts[f] == 0) {
                    return;
                }
                if (0..m).any(|d| self.counts[d] < self.limit[d] && self.fits_one(d)) {
                    return;
                }
                if self.counts.iter().all(|&k| k == 0) {
                    return;
                }
                out(&self.counts, value);
                return;
            }
            let req = self.problem.classes[c].req.clone();
            let mut k = 0u32;
            while k < self.limit[c] && self.fits_one(c) {
                for (u, r) in self.used.iter_mut().zip(&req) {
                    *u += r;
                }
                k += 1;
            }
            let most = k;
            loop {
                // Fewer than fit now: the later classes must be able to close the room.
                let closable = k == most || {
                    (0..self.cap.len()).any(|d| {
                        let later: i64 = (c + 1..m)
                            .map(|x| self.problem.classes[x].req[d] * i64::from(self.limit[x]))
                            .sum();
                        self.used[d] + later + req[d] > self.cap[d]
                    })
                };
                if closable {
                    self.counts[c] = k;
                    self.walk(c + 1, value + self.duals[c] * f64::from(k), out);
                }
                if k == 0 {
                    break;
                }
                k -= 1;
                for (u, r) in self.used.iter_mut().zip(&req) {
                    *u -= r;
                }
            }
            self.counts[c] = 0;
        }
    }
    let m = limit.len();
    let mut w = Walk {
        problem,
        duals,
        cap: &problem.cap[o],
        limit,
        first,
        floor,
        counts: vec![0; m],
        used: vec![0; problem.cap[o].len()],
    };
    w.walk(0, 0.0, out);
}

/// `duals` scaled down until no content of any flavor is worth more than its price: valid for
/// a lower bound on any plan whatever the LP that suggested them reached.
fn valid_duals(problem: &Problem, milli: &[i64], duals: &[f64]) -> Vec<f64> {
    let counts: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let mut rho = 1.0f64;
    for (o, &price) in milli.iter().enumerate() {
        let mut most = 0.0f64;
        contents(problem, duals, o, &counts, None, -1.0, &mut |_, v| {
            most = most.max(v)
        });
        rho = rho.max(most / price as f64);
    }
    duals.iter().map(|d| d / rho).collect()
}

impl Exact<'_> {
    fn search(&mut self, residual: &mut Vec<u32>, cost: i64) {
        self.nodes += 1;
        if self.nodes > self.node_cap {
            return;
        }
        if residual.iter().all(|&r| r == 0) {
            if cost < self.best {
                self.best = cost;
                self.best_plan = Some(self.chosen.clone());
            }
            return;
        }
        let bound = dual_bound(&self.duals, residual);
        if cost + bound >= self.best {
            return;
        }
        if self
            .seen
            .get(residual.as_slice())
            .is_some_and(|&g| g <= cost)
        {
            return;
        }
        self.seen.insert(residual.clone(), cost);
        // Branch on the largest class left (its share of the largest flavor).
        let top: Vec<f64> = (0..self.problem.cap[0].len())
            .map(|d| self.problem.cap.iter().map(|c| c[d]).max().unwrap_or(1) as f64)
            .collect();
        let size = |c: usize| -> f64 {
            self.problem.classes[c]
                .req
                .iter()
                .zip(&top)
                .map(|(&r, t)| r as f64 / t)
                .sum()
        };
        let first = (0..residual.len())
            .filter(|&c| residual[c] > 0)
            .max_by(|&a, &b| size(a).total_cmp(&size(b)).then(b.cmp(&a)))
            .unwrap_or(0);
        // A content of price p and dual value v helps only if p - v < slack.
        let slack = (self.best - cost - bound) as f64;
        let mut cands: HashMap<Vec<u32>, (i64, usize, f64)> = HashMap::new();
        for o in 0..self.milli.len() {
            let price = self.milli[o];
            let floor = price as f64 - slack;
            contents(
                self.problem,
                &self.duals,
                o,
                residual,
                Some(first),
                floor,
                &mut |counts, v| {
                    let e = cands.entry(counts.to_vec()).or_insert((price, o, v));
                    if price < e.0 {
                        *e = (price, o, v);
                    }
                },
            );
        }
        let mut list: Vec<(Vec<u32>, i64, usize, f64)> = cands
            .into_iter()
            .map(|(k, (p, o, v))| (k, p, o, v))
            .collect();
        list.sort_by(|a, b| {
            (a.1 as f64 - a.3)
                .total_cmp(&(b.1 as f64 - b.3))
                .then(a.0.cmp(&b.0))
        });
        for (counts, price, o, _) in list {
            if cost + price + dual_bound(&self.duals, residual) - self.dual_of(&counts) >= self.best
            {
                continue;
            }
            for (r, k) in residual.iter_mut().zip(&counts) {
                *r -= k;
            }
            self.chosen.push((o, counts.clone()));
            self.search(residual, cost + price);
            self.chosen.pop();
            for (r, k) in residual.iter_mut().zip(&counts) {
                *r += k;
            }
        }
    }

    /// The dual value of a content, rounded down (so a bound less it stays a bound).
    fn dual_of(&self, counts: &[u32]) -> i64 {
        let v: f64 = self
            .duals
            .iter()
            .zip(counts)
            .map(|(d, &k)| d * f64::from(k))
            .sum();
        (v * (1.0 + 1e-9) + 1e-6).floor() as i64
    }
}

/// The optimizer's plan for a case (production budget), checked: every node fits its flavor
/// and every pod is placed. Its price in thousandths per hour, and the units of work spent.
fn optimizer_price(case: &Case) -> (i64, u64) {
    let work = Work::new(SMALL_BATCH_WORK, Duration::from_secs(3_600));
    let solved = packing_optimizer::optimize(&case.problem, &work);
    assert!(!solved.cut_short);
    let mut placed = vec![0u32; case.problem.classes.len()];
    for n in &solved.nodes {
        let mut used = vec![0i64; case.problem.cap[n.offering].len()];
        for &(c, k) in &n.counts {
            placed[c] += k;
            for (u, r) in used.iter_mut().zip(&case.problem.classes[c].req) {
                *u += r * i64::from(k);
            }
        }
        assert!(
            used.iter()
                .zip(&case.problem.cap[n.offering])
                .all(|(u, c)| u <= c),
            "a planned node overflows its flavor"
        );
    }
    let want: Vec<u32> = case.problem.classes.iter().map(|c| c.count).collect();
    assert_eq!(placed, want, "every pod placed once");
    let price = solved.nodes.iter().map(|n| case.milli[n.offering]).sum();
    (price, solved.work)
}

/// The proven optimum of a case (thousandths per hour), given a plan of price `incumbent`;
/// none when the search needs more than `node_cap` nodes.
fn proven_optimum(case: &Case, incumbent: i64, node_cap: u64) -> Option<i64> {
    let master = generate(
        &case.problem,
        Vec::new(),
        Limits {
            rounds: 1_000,
            offerings_per_round: 20,
            node_cap: 1_000_000,
            stop: None,
        },
    );
    let suggested: Vec<f64> = master.bound_duals.iter().map(|d| d * 1000.0).collect();
    let duals = valid_duals(&case.problem, &case.milli, &suggested);
    let mut exact = Exact {
        problem: &case.problem,
        milli: &case.milli,
        duals,
        best: incumbent,
        best_plan: None,
        chosen: Vec::new(),
        seen: HashMap::new(),
        nodes: 0,
        node_cap,
    };
    let mut residual: Vec<u32> = case.problem.classes.iter().map(|c| c.count).collect();
    exact.search(&mut residual, 0);
    if let Some(plan) = &exact.best_plan {
        // The better plan is real: each content fits its flavor and the pods are all there.
        let mut placed = vec![0u32; residual.len()];
        for (o, counts) in plan {
            for (d, cap) in case.problem.cap[*o].iter().enumerate() {
                let used: i64 = counts
                    .iter()
                    .enumerate()
                    .map(|(c, &k)| case.problem.classes[c].req[d] * i64::from(k))
                    .sum();
                assert!(used <= *cap);
            }
            for (p, k) in placed.iter_mut().zip(counts) {
                *p += k;
            }
        }
        assert_eq!(placed, residual);
    }
    (exact.nodes <= node_cap).then_some(exact.best)
}

/// The fixed cases: seed, pods, and the proven optimum in thousandths per hour. The last seven
/// are the sweep's (seeds 100-179) worst before the branch and bound and the regrouping
/// (docs/benchmarks.md, "Packing against a proven optimum").
const CASES: [(u64, u32, i64); 11] = [
    (1, 30, 1518),
    (2, 37, 2489),
    (3, 44, 1272),
    (5, 57, 4101),
    (178, 74, 2804),
    (114, 45, 3377),
    (115, 59, 4452),
    (117, 36, 2339),
    (140, 52, 2672),
    (165, 45, 2892),
    (168, 36, 4716),
];

#[test]
fn cost_is_within_two_percent_of_the_proven_optimum_on_20_flavor_mixed_catalogs() {
    let mut worst = 1.0f64;
    for &(seed, pods, optimum) in &CASES {
        let case = generate_case(seed, pods);
        assert_eq!(case.problem.cap.len(), 20);
        assert_eq!(
            case.problem.classes.iter().map(|c| c.count).sum::<u32>(),
            pods
        );
        let (ours, work) = optimizer_price(&case);
        let proven = proven_optimum(&case, ours, 20_000_000);
        // The search proves the optimum from the optimizer's plan down (a cheaper plan it
        // finds is checked node by node), and no plan is cheaper.
        assert_eq!(
            proven,
            Some(optimum),
            "seed {seed} pods {pods}: the optimum"
        );
        assert!(ours >= optimum);
        let ratio = ours as f64 / optimum as f64;
        eprintln!(
            "seed {seed} pods {pods}: cost {ours} optimum {optimum} ratio {ratio:.4}, {work} units"
        );
        assert!(
            ours * 100 <= optimum * 102,
            "seed {seed} pods {pods}: {ours} is more than 2 % above the optimum {optimum}"
        );
        worst = worst.max(ratio);
    }
    eprintln!("worst ratio {worst:.4}");
}

/// A sweep over many seeds (a measuring aid): `SEEDS=80 [FROM=100] [NODES=2000000] cargo test
/// -p packing-optimizer --test exact_optimum sweep -- --ignored --nocapture`; the pods of seed
/// s are 30 + (s * 7919 mod 51).
#[test]
#[ignore]
fn sweep() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (from, seeds, node_cap) = (env("FROM", 100), env("SEEDS", 50), env("NODES", 2_000_000));
    let mut ratios = Vec::new();
    for seed in from..from + seeds {
        let pods = 30 + (seed * 7919 % 51) as u32;
        let case = generate_case(seed, pods);
        let (ours, _) = optimizer_price(&case);
        let Some(optimum) = proven_optimum(&case, ours, node_cap) else {
            eprintln!("seed {seed} pods {pods}: not proven");
            continue;
        };
        let ratio = ours as f64 / optimum as f64;
        eprintln!(
            "seed {seed} pods {pods} classes {}: cost {ours} optimum {optimum} ratio {ratio:.4}",
            case.problem.classes.len()
        );
        ratios.push((ratio, seed, pods));
    }
    ratios.sort_by(|a, b| b.0.total_cmp(&a.0));
    eprintln!("worst: {:?}", &ratios[..ratios.len().min(10)]);
    let above = ratios.iter().filter(|r| r.0 > 1.02).count();
    eprintln!("above 1.02: {above} of {}", ratios.len());
}

/// One case's plans, the optimizer's and the exact one (a debugging aid):
/// `SEED=.. PODS=.. cargo test -p packing-optimizer --test exact_optimum show -- --ignored --nocapture`.
#[test]
#[ignore]
fn show() {
    let seed: u64 = std::env::var("SEED").unwrap().parse().unwrap();
    let pods: u32 = std::env::var("PODS").unwrap().parse().unwrap();
    let case = generate_case(seed, pods);
    for (o, cap) in case.problem.cap.iter().enumerate() {
        eprintln!("f{o}: {cap:?} {}", case.milli[o]);
    }
    for c in &case.problem.classes {
        eprintln!("class {:?} x{}", c.req, c.count);
    }
    let budget: u64 = std::env::var("WORK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SMALL_BATCH_WORK);
    let work = Work::new(budget, Duration::from_secs(3_600));
    let t = std::time::Instant::now();
    let solved = packing_optimizer::optimize(&case.problem, &work);
    eprintln!(
        "optimizer (work {}, bound {:.4}, {:?}):",
        solved.work,
        solved.lower_bound,
        t.elapsed()
    );
    for n in &solved.nodes {
        eprintln!(
            "   f{} {} {:?} used {:?}",
            n.offering, case.milli[n.offering], n.counts, n.used
        );
    }
    let ours: i64 = solved.nodes.iter().map(|n| case.milli[n.offering]).sum();
    let master = generate(
        &case.problem,
        Vec::new(),
        Limits {
            rounds: 1_000,
            offerings_per_round: 20,
            node_cap: 1_000_000,
            stop: None,
        },
    );
    let suggested: Vec<f64> = master.bound_duals.iter().map(|d| d * 1000.0).collect();
    let duals = valid_duals(&case.problem, &case.milli, &suggested);
    let counts: Vec<u32> = case.problem.classes.iter().map(|c| c.count).collect();
    eprintln!(
        "harness root bound {} (master {:.4})",
        dual_bound(&duals, &counts),
        master.lower_bound
    );
    let mut exact = Exact {
        problem: &case.problem,
        milli: &case.milli,
        duals,
        best: ours,
        best_plan: None,
        chosen: Vec::new(),
        seen: HashMap::new(),
        nodes: 0,
        node_cap: 20_000_000,
    };
    let mut residual: Vec<u32> = case.problem.classes.iter().map(|c| c.count).collect();
    exact.search(&mut residual, 0);
    eprintln!("exact {} ({} nodes):", exact.best, exact.nodes);
    for (o, counts) in exact.best_plan.iter().flatten() {
        eprintln!("   f{o} {} {counts:?}", case.milli[*o]);
    }
}
