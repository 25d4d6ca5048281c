//! From the LP to whole nodes, then better nodes: diving (commit the whole part of every
//! pattern, round the largest fraction up, re-solve what is left), first-fit decreasing for
//! what the dive leaves, and local search (downsize a node; empty a node into the others' free
//! room; merge two nodes into one cheaper offering). Everything here works on class counts;
//! pods are placed, through the checked fit, only afterwards.

use std::time::Instant;

use super::colgen::{Limits, Master, Pattern, Problem, generate};

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
pub fn solve(
    problem: &Problem,
    master: &Master,
    deadline: Instant,
    dive_rounds: usize,
) -> Vec<Node> {
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
    while residual.iter().any(|&r| r > 0) && rounds < dive_rounds && Instant::now() < deadline {
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
                deadline: Some(deadline),
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
pub fn quick(problem: &Problem, deadline: Instant) -> Vec<Node> {
    let dims = problem.cap.first().map_or(0, Vec::len);
    let mut residual: Vec<u32> = problem.classes.iter().map(|c| c.count).collect();
    let mut nodes = Vec::new();
    first_fit_decreasing(problem, &mut residual, &mut nodes, dims);
    let order = by_price(problem);
    downsize(problem, &order, &mut nodes);
    let _ = deadline;
    nodes
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

/// Local search until nothing improves or the deadline passes.
pub fn improve(problem: &Problem, nodes: &mut Vec<Node>, deadline: Instant, pair_window: usize) {
    let order = by_price(problem);
    for _ in 0..8 {
        let mut better = downsize(problem, &order, nodes);
        if Instant::now() >= deadline {
            break;
        }
        better |= empty_nodes(problem, nodes, deadline);
        if Instant::now() >= deadline {
            break;
        }
        better |= merge_pairs(problem, &order, nodes, deadline, pair_window);
        if Instant::now() >= deadline {
            break;
        }
        better |= recreate(problem, &order, nodes, deadline, 12);
        if !better || Instant::now() >= deadline {
            break;
        }
    }
    downsize(problem, &order, nodes);
}

/// Moves every node to the cheapest offering that holds it.
fn downsize(problem: &Problem, order: &[usize], nodes: &mut [Node]) -> bool {
    let mut changed = false;
    for node in nodes.iter_mut() {
        if let Some(o) = cheapest_holding(problem, order, &node.counts, &node.used)
            && problem.lp_cost(o) < problem.lp_cost(node.offering)
        {
            node.offering = o;
            changed = true;
        }
    }
    changed
}

/// Tries to move all pods of the emptiest nodes into the free room of the others.
fn empty_nodes(problem: &Problem, nodes: &mut Vec<Node>, deadline: Instant) -> bool {
    let util = |n: &Node| -> f64 {
        n.used
            .iter()
            .zip(&problem.cap[n.offering])
            .map(|(&u, &c)| if c > 0 { u as f64 / c as f64 } else { 0.0 })
            .fold(0.0, f64::max)
    };
    let mut victims: Vec<usize> = (0..nodes.len()).collect();
    victims.sort_by(|&a, &b| util(&nodes[a]).total_cmp(&util(&nodes[b])));
    victims.truncate(64);
    let mut removed = vec![false; nodes.len()];
    let mut any = false;
    for v in victims {
        if Instant::now() >= deadline {
            break;
        }
        let mut trial: Vec<(usize, usize, u32)> = Vec::new();
        let mut scratch: Vec<(usize, Node)> = Vec::new();
        let mut ok = true;
        for &(c, k) in &nodes[v].counts {
            let mut left = k;
            for (r, node) in nodes.iter().enumerate() {
                if left == 0 {
                    break;
                }
                if r == v || removed[r] {
                    continue;
                }
                let current = scratch.iter().find(|(i, _)| *i == r).map(|(_, n)| n);
                let room = current.unwrap_or(node).room_for(problem, c, left);
                if room > 0 {
                    match scratch.iter_mut().find(|(i, _)| *i == r) {
                        Some((_, n)) => n.add(problem, c, room),
                        None => {
                            let mut n = node.clone();
                            n.add(problem, c, room);
                            scratch.push((r, n));
                        }
                    }
                    trial.push((r, c, room));
                    left -= room;
                }
            }
            if left > 0 {
                ok = false;
                break;
            }
        }
        if ok && !nodes[v].counts.is_empty() {
            for (r, n) in scratch {
                nodes[r] = n;
            }
            nodes[v].counts.clear();
            nodes[v].used.iter_mut().for_each(|u| *u = 0);
            removed[v] = true;
            any = true;
        }
    }
    if any {
        let mut i = 0;
        nodes.retain(|_| {
            i += 1;
            !removed[i - 1]
        });
    }
    any
}

/// Merges two low-utilization nodes into one offering cheaper than both together.
fn merge_pairs(
    problem: &Problem,
    order: &[usize],
    nodes: &mut Vec<Node>,
    deadline: Instant,
    window: usize,
) -> bool {
    let util = |n: &Node| -> f64 {
        n.used
            .iter()
            .zip(&problem.cap[n.offering])
            .map(|(&u, &c)| if c > 0 { u as f64 / c as f64 } else { 0.0 })
            .fold(0.0, f64::max)
    };
    let mut cand: Vec<usize> = (0..nodes.len()).collect();
    cand.sort_by(|&a, &b| util(&nodes[a]).total_cmp(&util(&nodes[b])));
    cand.truncate(window);
    let mut gone = vec![false; nodes.len()];
    let mut any = false;
    for x in 0..cand.len() {
        if Instant::now() >= deadline {
            break;
        }
        let a = cand[x];
        if gone[a] {
            continue;
        }
        for &b in &cand[x + 1..] {
            if gone[b] || gone[a] {
                continue;
            }
            let conflict = nodes[b]
                .counts
                .iter()
                .any(|&(c, k)| nodes[a].room_for_ignoring_resources(problem, c) < k.min(1));
            if conflict {
                continue;
            }
            let used: Vec<i64> = nodes[a]
                .used
                .iter()
                .zip(&nodes[b].used)
                .map(|(x, y)| x + y)
                .collect();
            let mut counts = nodes[a].counts.clone();
            for &(c, k) in &nodes[b].counts {
                match counts.binary_search_by_key(&c, |&(x, _)| x) {
                    Ok(i) => counts[i].1 += k,
                    Err(i) => counts.insert(i, (c, k)),
                }
            }
            if counts
                .iter()
                .any(|&(c, k)| problem.classes[c].one_per_node && k > 1)
            {
                continue;
            }
            let together = problem.lp_cost(nodes[a].offering) + problem.lp_cost(nodes[b].offering);
            if let Some(o) = cheapest_holding(problem, order, &counts, &used)
                && problem.lp_cost(o) < together - 1e-12
            {
                nodes[a] = Node {
                    offering: o,
                    counts,
                    used,
                };
                gone[b] = true;
                any = true;
            }
        }
    }
    if any {
        let mut i = 0;
        nodes.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
    }
    any
}

impl Node {
    /// 1 if a pod of class `c` may join this node's pods (conflicts and one-per-node only).
    fn room_for_ignoring_resources(&self, problem: &Problem, c: usize) -> u32 {
        let class = &problem.classes[c];
        for &(other, _) in &self.counts {
            if other == c && class.one_per_node {
                return 0;
            }
            if other != c && class.conflicts.binary_search(&other).is_ok() {
                return 0;
            }
        }
        1
    }
}

/// Ruin and recreate: the contents of the `window` most wasteful nodes (price times unused
/// share), prefix by prefix, re-packed onto one node of the cheapest offering that holds them,
/// or first-fit decreasing onto copies of a single offering; kept when cheaper.
fn recreate(
    problem: &Problem,
    order: &[usize],
    nodes: &mut Vec<Node>,
    deadline: Instant,
    window: usize,
) -> bool {
    let dims = problem.cap.first().map_or(0, Vec::len);
    let waste = |n: &Node| -> f64 {
        let util = n
            .used
            .iter()
            .zip(&problem.cap[n.offering])
            .map(|(&u, &c)| if c > 0 { u as f64 / c as f64 } else { 0.0 })
            .fold(0.0, f64::max);
        problem.lp_cost(n.offering) * (1.0 - util).max(0.0)
    };
    let mut any = false;
    for _ in 0..16 {
        if Instant::now() >= deadline || nodes.len() < 2 {
            break;
        }
        let mut idx: Vec<usize> = (0..nodes.len()).collect();
        idx.sort_by(|&a, &b| {
            waste(&nodes[b])
                .total_cmp(&waste(&nodes[a]))
                .then(a.cmp(&b))
        });
        idx.truncate(window);
        let mut improved = false;
        for k in 2..=idx.len() {
            let chosen = &idx[..k];
            let mut counts: Vec<(usize, u32)> = Vec::new();
            let mut used = vec![0i64; dims];
            let mut current = 0.0;
            for &i in chosen {
                current += problem.lp_cost(nodes[i].offering);
                for (u, v) in used.iter_mut().zip(&nodes[i].used) {
                    *u += v;
                }
                for &(c, n) in &nodes[i].counts {
                    match counts.binary_search_by_key(&c, |&(x, _)| x) {
                        Ok(j) => counts[j].1 += n,
                        Err(j) => counts.insert(j, (c, n)),
                    }
                }
            }
            let mut best: Option<(f64, Vec<Node>)> = None;
            let single_ok = !counts.iter().any(|&(c, n)| {
                problem.classes[c].one_per_node && n > 1
                    || counts.iter().any(|&(d, _)| {
                        d != c && problem.classes[c].conflicts.binary_search(&d).is_ok()
                    })
            });
            if single_ok && let Some(o) = cheapest_holding(problem, order, &counts, &used) {
                best = Some((
                    problem.lp_cost(o),
                    vec![Node {
                        offering: o,
                        counts: counts.clone(),
                        used: used.clone(),
                    }],
                ));
            }
            for &o in order {
                if problem.lp_cost(o) >= current {
                    break;
                }
                if !counts.iter().all(|&(c, _)| problem.classes[c].allowed[o]) {
                    continue;
                }
                if let Some(bins) = pack_onto(problem, &counts, o, dims) {
                    let cost = problem.lp_cost(o) * bins.len() as f64;
                    if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                        best = Some((cost, bins));
                    }
                }
            }
            if let Some((cost, new_nodes)) = best
                && cost < current - 1e-9
            {
                let mut drop: Vec<usize> = chosen.to_vec();
                drop.sort_unstable_by(|a, b| b.cmp(a));
                for i in drop {
                    nodes.swap_remove(i);
                }
                nodes.extend(new_nodes);
                improved = true;
                any = true;
                break;
            }
        }
        if !improved {
            break;
        }
    }
    any
}

/// First-fit decreasing of `counts` onto nodes of offering `o` only.
fn pack_onto(
    problem: &Problem,
    counts: &[(usize, u32)],
    o: usize,
    dims: usize,
) -> Option<Vec<Node>> {
    let mut order: Vec<(usize, u32)> = counts.to_vec();
    let size = |c: usize| -> f64 {
        problem.classes[c]
            .req
            .iter()
            .zip(&problem.cap[o])
            .map(|(&r, &h)| if h > 0 { r as f64 / h as f64 } else { 0.0 })
            .fold(0.0, f64::max)
    };
    order.sort_by(|a, b| {
        (problem.classes[b.0].one_per_node as u8)
            .cmp(&(problem.classes[a.0].one_per_node as u8))
            .then(size(b.0).total_cmp(&size(a.0)))
    });
    let mut bins: Vec<Node> = Vec::new();
    for (c, mut left) in order {
        for bin in bins.iter_mut() {
            if left == 0 {
                break;
            }
            let k = bin.room_for(problem, c, left);
            if k > 0 {
                bin.add(problem, c, k);
                left -= k;
            }
        }
        while left > 0 {
            let mut bin = Node::new(o, dims);
            let k = bin.room_for(problem, c, left);
            if k == 0 {
                return None;
            }
            bin.add(problem, c, k);
            left -= k;
            bins.push(bin);
        }
    }
    Some(bins)
}

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
    deadline: Instant,
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
        deadline: Instant,
    }
    fn dfs(ctx: &mut Ctx, residual: &mut [u32], cost: f64) {
        ctx.nodes += 1;
        if ctx.nodes >= ctx.node_cap
            || (ctx.nodes.is_multiple_of(1024) && Instant::now() >= ctx.deadline)
        {
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
        deadline,
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
