//! Set cover over a pattern pool by branch and bound, and the exact search for small batches
//! over every count vector.

use super::*;

/// A small set-cover integer program over the pattern pool, by depth-first branch and bound:
/// branch on the uncovered class with the fewest patterns, each pattern trimmed to what is left
/// and moved to the cheapest offering that holds it; prune with the proving duals (a valid
/// bound on covering whatever is left). Returns a plan cheaper than `incumbent`, if found
/// within `node_cap` search nodes.
pub fn set_cover(
    problem: &Problem,
    pool: &[Pattern],
    duals: &[f64],
    incumbent: f64,
    node_cap: usize,
    stop: Stop<'_>,
) -> Option<Vec<Node>> {
    let m = problem.classes.len();
    let order = by_price(problem);
    let value =
        |p: &Pattern| -> f64 { p.counts.iter().map(|&(c, k)| duals[c] * f64::from(k)).sum() };
    let mut covering: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (j, p) in pool.iter().enumerate() {
        for &(c, _) in &p.counts {
            covering[c].push(j);
        }
    }
    for list in covering.iter_mut() {
        list.sort_by(|&a, &b| {
            let ra = problem.lp_cost(pool[a].offering) / value(&pool[a]).max(1e-12);
            let rb = problem.lp_cost(pool[b].offering) / value(&pool[b]).max(1e-12);
            ra.total_cmp(&rb).then(a.cmp(&b))
        });
    }
    struct Ctx<'a> {
        problem: &'a Problem,
        pool: &'a [Pattern],
        duals: &'a [f64],
        covering: &'a [Vec<usize>],
        order: &'a [usize],
        best: f64,
        best_nodes: Option<Vec<Node>>,
        chosen: Vec<Node>,
        nodes: usize,
        node_cap: usize,
        stop: Stop<'a>,
    }
    fn dfs(ctx: &mut Ctx, residual: &mut [u32], cost: f64) {
        ctx.nodes += 1;
        ctx.stop.spend(ctx.covering.len() as u64 + 1);
        if ctx.nodes >= ctx.node_cap || ctx.stop.passed() {
            ctx.nodes = ctx.node_cap;
            return;
        }
        let bound: f64 = residual
            .iter()
            .zip(ctx.duals)
            .map(|(&r, d)| f64::from(r) * d)
            .sum();
        if cost + bound >= ctx.best - 1e-9 {
            return;
        }
        let next = (0..residual.len())
            .filter(|&c| residual[c] > 0)
            .min_by_key(|&c| (ctx.covering[c].len(), c));
        let Some(c) = next else {
            ctx.best = cost;
            ctx.best_nodes = Some(ctx.chosen.clone());
            return;
        };
        let dims = ctx.problem.cap.first().map_or(0, Vec::len);
        for idx in 0..ctx.covering[c].len() {
            let j = ctx.covering[c][idx];
            let p = &ctx.pool[j];
            let mut node = Node::new(p.offering, dims);
            for &(d, k) in &p.counts {
                let take = k.min(residual[d]);
                if take > 0 {
                    node.add(ctx.problem, d, take);
                }
            }
            let Some(o) = cheapest_holding(ctx.problem, ctx.order, &node.counts, &node.used) else {
                continue;
            };
            node.offering = o;
            let price = ctx.problem.lp_cost(o);
            for &(d, k) in &node.counts {
                residual[d] -= k;
            }
            ctx.chosen.push(node);
            dfs(ctx, residual, cost + price);
            let node = ctx.chosen.pop();
            if let Some(node) = node {
                for &(d, k) in &node.counts {
                    residual[d] += k;
                }
            }
            if ctx.nodes >= ctx.node_cap {
                return;
            }
        }
    }
    let mut ctx = Ctx {
        problem,
        pool,
        duals,
        covering: &covering,
        order: &order,
        best: incumbent,
        best_nodes: None,
        chosen: Vec::new(),
        nodes: 0,
        node_cap,
        stop,
    };
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    dfs(&mut ctx, &mut residual, 0.0);
    ctx.best_nodes
}

/// Every conflict-free count vector that fits some offering all its classes may use, when
/// there are at most `limit` count vectors in all (small batches): the set-cover search over
/// them is then exact up to its node cap.
pub fn all_patterns(problem: &Problem, limit: usize) -> Option<Vec<Pattern>> {
    let m = problem.classes.len();
    let mut space: usize = 1;
    for c in &problem.classes {
        space = space.checked_mul(c.count as usize + 1)?;
        if space > limit {
            return None;
        }
    }
    let dims = problem.cap.first().map_or(0, Vec::len);
    let order = by_price(problem);
    let mut out = Vec::new();
    let mut counts: Vec<(usize, u32)> = Vec::new();
    let mut used = vec![0i64; dims];
    fn walk(
        problem: &Problem,
        order: &[usize],
        c: usize,
        m: usize,
        counts: &mut Vec<(usize, u32)>,
        used: &mut Vec<i64>,
        out: &mut Vec<Pattern>,
    ) {
        if c == m {
            if !counts.is_empty()
                && let Some(o) = cheapest_holding(problem, order, counts, used)
            {
                out.push(Pattern {
                    offering: o,
                    counts: counts.clone(),
                });
            }
            return;
        }
        walk(problem, order, c + 1, m, counts, used, out);
        let class = &problem.classes[c];
        if counts
            .iter()
            .any(|&(d, _)| class.conflicts.binary_search(&d).is_ok())
        {
            return;
        }
        let max = if class.one_per_node { 1 } else { class.count };
        for k in 1..=max {
            for (u, r) in used.iter_mut().zip(&class.req) {
                *u += r;
            }
            // Nothing larger fits any offering once this does not.
            if !problem.cap.iter().any(|cap| fits(used, cap)) {
                for (u, r) in used.iter_mut().zip(&class.req) {
                    *u -= r * i64::from(k);
                }
                return;
            }
            counts.push((c, k));
            walk(problem, order, c + 1, m, counts, used, out);
            counts.pop();
        }
        for (u, r) in used.iter_mut().zip(&class.req) {
            *u -= r * i64::from(max);
        }
    }
    walk(problem, &order, 0, m, &mut counts, &mut used, &mut out);
    Some(out)
}

/// The exact optimum over count vectors, by dynamic programming (a node takes at least one pod
/// of the first class left), given every pattern ([`all_patterns`]): for small batches.
pub fn exact_small(problem: &Problem, patterns: &[Pattern]) -> Option<Vec<Node>> {
    use std::collections::HashMap;
    let m = problem.classes.len();
    // A pattern can serve as "the node of the first class left" for any class it holds;
    // index it under each.
    let mut holding: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (j, p) in patterns.iter().enumerate() {
        for &(c, _) in &p.counts {
            holding[c].push(j);
        }
    }
    fn best(
        problem: &Problem,
        patterns: &[Pattern],
        holding: &[Vec<usize>],
        residual: &mut Vec<u32>,
        memo: &mut HashMap<Vec<u32>, Option<(f64, usize)>>,
    ) -> Option<f64> {
        let Some(first) = residual.iter().position(|&r| r > 0) else {
            return Some(0.0);
        };
        if let Some(v) = memo.get(residual.as_slice()) {
            return v.map(|(c, _)| c);
        }
        let mut out: Option<(f64, usize)> = None;
        for &j in &holding[first] {
            let p = &patterns[j];
            if p.counts.iter().any(|&(c, k)| k > residual[c]) {
                continue;
            }
            // Classes before `first` are all placed: a pattern holding one would not fit.
            for &(c, k) in &p.counts {
                residual[c] -= k;
            }
            let rest = best(problem, patterns, holding, residual, memo);
            for &(c, k) in &p.counts {
                residual[c] += k;
            }
            if let Some(r) = rest {
                let total = r + problem.lp_cost(p.offering);
                if out.is_none_or(|(b, _)| total < b - 1e-12) {
                    out = Some((total, j));
                }
            }
        }
        memo.insert(residual.clone(), out);
        out.map(|(c, _)| c)
    }
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let mut memo = HashMap::new();
    best(problem, patterns, &holding, &mut residual, &mut memo)?;
    let dims = problem.cap.first().map_or(0, Vec::len);
    let mut nodes = Vec::new();
    while let Some(Some((_, j))) = memo.get(residual.as_slice()).copied() {
        let p = &patterns[j];
        let mut node = Node::new(p.offering, dims);
        for &(c, k) in &p.counts {
            node.add(problem, c, k);
            residual[c] -= k;
        }
        nodes.push(node);
    }
    residual.iter().all(|&r| r == 0).then_some(nodes)
}
