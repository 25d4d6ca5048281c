//! Pricing for column generation: the patterns of one offering worth more than its price at
//! the current duals (a capped branch and bound over counts, after a multi-start greedy), the
//! bounds that prune it, and the cheap per-round score that ranks offerings before any search.

use crate::colgen::{Pattern, Problem};

/// The best pattern found for an offering under some duals, and whether the search finished.
pub(super) struct Priced {
    pub(super) best_value: f64,
    pub(super) complete: bool,
    pub(super) improving: Vec<Pattern>,
    /// The work it took, for the optimizer's meter: the greedy starts' item scans plus the
    /// branch-and-bound nodes, each weighted by the items and dimensions it looks at.
    pub(super) work: u64,
}

/// Branch and bound for one offering: maximise `Σ pi_c a_c` over counts that fit, honour
/// one-per-node and conflicts; returns improving patterns (value above `threshold`).
pub(super) fn price_offering(
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
    let per_node = (n + dims + 1) as u64;
    let greedy_work = if root > threshold { (n * n) as u64 } else { 0 } + per_node;
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
                work: greedy_work,
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
        work: greedy_work + search.nodes as u64 * per_node,
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

pub(super) fn ratio_of(value: f64, price: f64) -> f64 {
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
pub(super) struct Scorer<'a> {
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
    pub(super) fn new(
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
    pub(super) fn root_ratio(&self, o: usize) -> f64 {
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
