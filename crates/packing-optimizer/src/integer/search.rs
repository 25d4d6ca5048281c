//! Local search over whole nodes: downsize a node, empty a node into the others' free room,
//! merge two nodes into one cheaper offering, recreate a group of nodes.

use super::*;

/// Local search until nothing improves or its share of the work meter is spent.
pub fn improve(problem: &Problem, nodes: &mut Vec<Node>, stop: Stop<'_>, pair_window: usize) {
    let order = by_price(problem);
    for _ in 0..8 {
        let mut better = downsize(problem, &order, nodes);
        if stop.passed() {
            break;
        }
        better |= empty_nodes(problem, nodes, stop);
        if stop.passed() {
            break;
        }
        better |= merge_pairs(problem, &order, nodes, stop, pair_window);
        if stop.passed() {
            break;
        }
        better |= recreate(problem, &order, nodes, stop, 12);
        if !better || stop.passed() {
            break;
        }
    }
    downsize(problem, &order, nodes);
}

/// Moves every node to the cheapest offering that holds it.
pub(super) fn downsize(problem: &Problem, order: &[usize], nodes: &mut [Node]) -> bool {
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
fn empty_nodes(problem: &Problem, nodes: &mut Vec<Node>, stop: Stop<'_>) -> bool {
    let victims = emptiest(problem, nodes, 64);
    let mut removed = vec![false; nodes.len()];
    let mut any = false;
    for v in victims {
        if stop.passed() {
            break;
        }
        stop.spend((nodes.len() * (nodes[v].counts.len() + 1)) as u64);
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
        drop_marked(nodes, &removed);
    }
    any
}

/// Merges two low-utilization nodes into one offering cheaper than both together.
fn merge_pairs(
    problem: &Problem,
    order: &[usize],
    nodes: &mut Vec<Node>,
    stop: Stop<'_>,
    window: usize,
) -> bool {
    let cand = emptiest(problem, nodes, window);
    let mut gone = vec![false; nodes.len()];
    let mut any = false;
    for x in 0..cand.len() {
        if stop.passed() {
            break;
        }
        let a = cand[x];
        if gone[a] {
            continue;
        }
        stop.spend(((cand.len() - x) * (order.len() + nodes[a].counts.len() + 1)) as u64);
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
        drop_marked(nodes, &gone);
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
    stop: Stop<'_>,
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
        if stop.passed() || nodes.len() < 2 {
            break;
        }
        let mut idx: Vec<usize> = (0..nodes.len()).collect();
        idx.sort_by(|&a, &b| {
            waste(&nodes[b])
                .total_cmp(&waste(&nodes[a]))
                .then(a.cmp(&b))
        });
        idx.truncate(window);
        stop.spend((nodes.len() + idx.len() * order.len() * (dims + 1)) as u64);
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

/// Drops the nodes marked (index-aligned with `nodes`), keeping the order of the rest.
fn drop_marked(nodes: &mut Vec<Node>, marked: &[bool]) {
    let mut i = 0;
    nodes.retain(|_| {
        i += 1;
        !marked[i - 1]
    });
}

/// The indices of the `limit` emptiest nodes, emptiest first: by the fullest dimension of each
/// (a node is as full as its scarcest resource).
fn emptiest(problem: &Problem, nodes: &[Node], limit: usize) -> Vec<usize> {
    let util = |n: &Node| -> f64 {
        n.used
            .iter()
            .zip(&problem.cap[n.offering])
            .map(|(&u, &c)| if c > 0 { u as f64 / c as f64 } else { 0.0 })
            .fold(0.0, f64::max)
    };
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| util(&nodes[a]).total_cmp(&util(&nodes[b])));
    order.truncate(limit);
    order
}
