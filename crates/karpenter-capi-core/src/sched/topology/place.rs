//! Checked sequential placement for batches with constraints across nodes (topology spread,
//! pod affinity, zonal anti-affinity, preferences): each pod, in queue order, goes on the first
//! recent plan node that takes it by the full fit check ([`ClusterState::fits`]), else on a new
//! node of the offering with the lowest price per copy of the pod among those whose topology
//! domain admits it; at the end each node moves to the cheapest offering of the same topology
//! domain that still holds its pods. Karpenter schedules the same way (pods one at a time onto
//! in-flight NodeClaims, topology narrowing each claim's domain); the final move is what its
//! instance-type choice does for a NodeClaim's pods.

use std::collections::HashMap;

use crate::model::labels::Labels;
use crate::model::resources::Resources;
use crate::sched::catalog::Offering;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::Budget;
use crate::vocab::keys;

/// How many of the most recently opened nodes a pod tries before a new node is opened: enough
/// for spread and affinity to find their domain among the open nodes, bounded so a batch of
/// 20,000 pods stays linear.
const WINDOW: usize = 64;

/// The largest number of followers of one affinity term whose room a target's node keeps.
const MAX_GROUP: usize = 256;

/// Places `pods` (snapshot indices, in queue order) on new nodes; `permits(pod, offering)` says
/// which offerings a pod may use (weight, static fit, budget at the start). Returns the pods
/// placed nowhere.
pub(crate) fn pack(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    permits: &dyn Fn(usize, usize) -> bool,
    pods: &[usize],
) -> Vec<usize> {
    let domain_keys = domain_keys(state);
    // Offerings alike on every topology key form one domain: topology is checked once per
    // domain, and a node only moves within its domain.
    let mut domain_of = Vec::with_capacity(offerings.len());
    let mut domains: HashMap<Vec<Option<&String>>, usize> = HashMap::new();
    for o in offerings {
        let sig: Vec<Option<&String>> = domain_keys.iter().map(|k| o.labels.get(k)).collect();
        let next = domains.len();
        domain_of.push(*domains.entry(sig).or_insert(next));
    }
    let mut rankings: HashMap<Resources, Vec<usize>> = HashMap::new();
    let mut opened: Vec<usize> = Vec::new();
    // Every new node of the plan so far (the optimizer's too): a pod with required pod
    // affinity is offered them all, its targets may be on any.
    let mut all_new: Vec<usize> = (0..state.nodes.len())
        .filter(|&n| matches!(state.nodes[n].origin, NodeOrigin::New(_)))
        .collect();
    // Existing and in-flight nodes first for every pod (core `scheduler.go` `add`).
    let standing = state.standing_nodes();
    // Pods that fit nowhere are queued again and retried until a whole round places none
    // (core `scheduling/queue.go`): a pod whose affinity target comes later in the queue
    // finds it placed on the next round.
    let mut queue: Vec<usize> = pods.to_vec();
    let mut reserve = follower_room(state, pods);
    let mut done: std::collections::HashSet<usize> = Default::default();
    let mut unplaced;
    loop {
        unplaced = Vec::new();
        for &p in &queue {
            if done.contains(&p) {
                continue;
            }
            // A target first tries a node with room for its followers too, and they follow it
            // at once (the group is placed whole); failing that, it goes on any node.
            let group = reserve.remove(&p);
            let room = group.as_ref().map(|(r, _)| r.clone());
            let mut placed = false;
            for extra in room.iter().chain(std::iter::once(&Resources::default())) {
                placed = place_one(
                    state,
                    budget,
                    offerings,
                    permits,
                    p,
                    extra,
                    &standing,
                    (&mut opened, &mut all_new),
                    (&mut rankings, &domain_of, domains.len()),
                );
                if placed {
                    break;
                }
            }
            if placed {
                done.insert(p);
                for &f in group.iter().flat_map(|(_, followers)| followers) {
                    if !done.contains(&f)
                        && place_one(
                            state,
                            budget,
                            offerings,
                            permits,
                            f,
                            &Resources::default(),
                            &standing,
                            (&mut opened, &mut all_new),
                            (&mut rankings, &domain_of, domains.len()),
                        )
                    {
                        done.insert(f);
                    }
                }
                continue;
            }
            unplaced.push(p);
        }
        unplaced.retain(|p| !done.contains(p));
        if unplaced.is_empty() || unplaced.len() == queue.len() {
            break;
        }
        queue = std::mem::take(&mut unplaced);
    }
    shrink(state, budget, offerings, permits, &opened, &domain_of);
    unplaced
}

/// Places one pod: on a standing node, else a recent node this pass opened (every new node of
/// the plan, for a pod with required pod affinity), else — for such a pod — on a node it is
/// affine to, grown to a larger offering of the same domain that holds it too (a NodeClaim
/// keeps every instance type that fits its pods), else on a new node. Returns whether it did.
#[allow(clippy::too_many_arguments)]
fn place_one(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    permits: &dyn Fn(usize, usize) -> bool,
    p: usize,
    extra: &Resources,
    standing: &[usize],
    (opened, all_new): (&mut Vec<usize>, &mut Vec<usize>),
    (rankings, domain_of, domain_count): (&mut HashMap<Resources, Vec<usize>>, &[usize], usize),
) -> bool {
    let snapshot = state.snapshot();
    let demand = &snapshot.pods[p].demand;
    let reserving = *extra != Resources::default();
    let need = demand.requests.plus(extra);
    if reserving {
        if let Some(&n) = standing
            .iter()
            .find(|&&n| need.fits_in(&state.nodes[n].free) && state.can_place(p, n))
        {
            state.place(p, n);
            return true;
        }
    } else if state.place_on_standing(p, standing) {
        return true;
    }
    let affine = !demand.affinity.is_empty();
    let candidates: Vec<usize> = if affine {
        all_new.iter().rev().copied().collect()
    } else {
        opened.iter().rev().take(WINDOW).copied().collect()
    };
    for &n in &candidates {
        let node = &state.nodes[n];
        let NodeOrigin::New(o) = node.origin else {
            continue;
        };
        if need.fits_in(&node.free) && permits(p, o) && state.can_place(p, n) {
            state.place(p, n);
            return true;
        }
    }
    if affine && !reserving {
        for &n in &candidates {
            if grow_for(state, budget, offerings, permits, p, n, domain_of) {
                state.place(p, n);
                if !opened.contains(&n) {
                    opened.push(n);
                }
                return true;
            }
        }
    }
    let ranking = rankings
        .entry(need.clone())
        .or_insert_with(|| rank(&need, offerings));
    let mut admitted: Vec<Option<bool>> = vec![None; domain_count];
    let mut chosen = None;
    for &o in ranking.iter() {
        if !permits(p, o) || budget.check(&offerings[o]).is_err() {
            continue;
        }
        let ok = *admitted[domain_of[o]].get_or_insert_with(|| {
            let mut labels: Labels = offerings[o].labels.clone();
            labels.insert(keys::HOSTNAME.to_string(), "\u{0}probe".to_string());
            state.topology_admits(p, &labels)
        });
        if ok {
            chosen = Some(o);
            break;
        }
    }
    let Some(o) = chosen else {
        return false;
    };
    let n = state.open(&offerings[o], NodeOrigin::New(o), None);
    if state.can_place(p, n) {
        budget.take(&offerings[o]);
        state.place(p, n);
        opened.push(n);
        all_new.push(n);
        true
    } else {
        state.close_if_empty(n);
        false
    }
}

/// Per pod of `pods` that other pods of `pods` require on its node (required pod affinity on
/// the hostname): the summed requests of those followers (the room its node should keep for
/// them) and the followers, in queue order.
fn follower_room(state: &ClusterState, pods: &[usize]) -> HashMap<usize, (Resources, Vec<usize>)> {
    let snapshot = state.snapshot();
    let mut out: HashMap<usize, (Resources, Vec<usize>)> = HashMap::new();
    // Per distinct hostname term: the pods that require it and their summed requests.
    let mut terms: HashMap<&crate::model::pod::AffinityTerm, (Resources, Vec<usize>)> =
        HashMap::new();
    for &f in pods {
        let d = &snapshot.pods[f].demand;
        for t in d
            .affinity
            .iter()
            .filter(|t| t.topology_key == keys::HOSTNAME)
        {
            let entry = terms.entry(t).or_default();
            entry.0.add(&d.requests);
            entry.1.push(f);
        }
    }
    // A group this large is not kept together by reservation (its pods still join their
    // targets' nodes one by one): the lists would grow with the square of its size.
    terms.retain(|_, (_, followers)| followers.len() <= MAX_GROUP);
    if terms.is_empty() {
        return out;
    }
    let position: HashMap<usize, usize> = pods.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    for &t in pods {
        let target = &snapshot.pods[t].demand;
        for (term, (room, followers)) in &terms {
            if term.selects(&target.namespace, &target.labels) {
                let entry = out.entry(t).or_default();
                entry.0.add(room);
                entry
                    .1
                    .extend(followers.iter().copied().filter(|&f| f != t));
            }
        }
    }
    for (room, followers) in out.values_mut() {
        // Slots are counted by the followers' own placement.
        room.pods = 0;
        followers.sort_unstable_by_key(|f| position.get(f).copied());
        followers.dedup();
    }
    out
}

/// Moves new node `n` to the cheapest offering of its topology domain that every pod on it and
/// pod `p` may use, that holds their requests together and within the budget, and on which
/// `p` then fits by the full check; returns whether it did (the node is left as it was if not).
#[allow(clippy::too_many_arguments)]
fn grow_for(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    permits: &dyn Fn(usize, usize) -> bool,
    p: usize,
    n: usize,
    domain_of: &[usize],
) -> bool {
    let NodeOrigin::New(current) = state.nodes[n].origin else {
        return false;
    };
    if !state.topology_admits(p, &state.nodes[n].labels) {
        return false;
    }
    let need = state.nodes[n]
        .requested
        .plus(&state.snapshot().pods[p].demand.requests);
    let mut options: Vec<usize> = (0..offerings.len())
        .filter(|&o| {
            o != current
                && domain_of[o] == domain_of[current]
                && need.fits_in(&offerings[o].allocatable)
                && permits(p, o)
                && state.nodes[n].pods.iter().all(|&q| permits(q, o))
        })
        .collect();
    options.sort_by_key(|&o| (offerings[o].flavor.price, o));
    for o in options {
        budget.release(&offerings[current]);
        if budget.check(&offerings[o]).is_err() {
            budget.take(&offerings[current]);
            continue;
        }
        let saved = state.nodes[n].clone();
        switch(state, n, offerings, o);
        if state.can_place(p, n) {
            budget.take(&offerings[o]);
            return true;
        }
        state.nodes[n] = saved;
        budget.take(&offerings[current]);
    }
    false
}

/// Makes new node `n` a node of offering `o`, keeping its name and pods.
fn switch(state: &mut ClusterState, n: usize, offerings: &[Offering], o: usize) {
    let offering = &offerings[o];
    let mut ports = offering.ports.clone();
    for &q in &state.nodes[n].pods {
        ports.extend(state.snapshot().pods[q].demand.host_ports.iter().cloned());
    }
    let node = &mut state.nodes[n];
    node.origin = NodeOrigin::New(o);
    node.free = offering.allocatable.minus(&node.requested);
    node.taints = offering.taints.clone();
    let hostname = node.name.clone();
    node.labels = offering.labels.clone();
    node.labels.insert(keys::HOSTNAME.to_string(), hostname);
    node.ports = ports;
}

/// Label keys (other than the hostname) that some pod's topology constraint uses.
fn domain_keys(state: &ClusterState) -> Vec<String> {
    topology_label_keys(state.snapshot())
}

/// Label keys (other than the hostname) that the snapshot's pods' spread and (anti-)affinity
/// terms use: offerings differing in these are different domains.
pub(crate) fn topology_label_keys(snapshot: &crate::model::snapshot::Snapshot) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for p in &snapshot.pods {
        let d = &p.demand;
        out.extend(d.spread.iter().map(|c| c.topology_key.clone()));
        out.extend(
            d.affinity
                .iter()
                .chain(d.anti_affinity.iter())
                .chain(d.preferred_affinity.iter().map(|w| &w.term))
                .chain(d.preferred_anti_affinity.iter().map(|w| &w.term))
                .map(|t| t.topology_key.clone()),
        );
    }
    out.remove(keys::HOSTNAME);
    out.into_iter().collect()
}

/// Offerings by price per copy of a pod of these requests (cheapest first; ties: more room,
/// then catalog order). Offerings that cannot hold one copy are left out.
fn rank(requests: &Resources, offerings: &[Offering]) -> Vec<usize> {
    let mut scored: Vec<(f64, i64, usize)> = offerings
        .iter()
        .enumerate()
        .filter_map(|(o, offering)| {
            let copies = requests.copies_in(&offering.allocatable);
            (copies > 0).then(|| {
                (
                    offering.flavor.price.0.max(1) as f64 / copies as f64,
                    -offering.allocatable.cpu_millis,
                    o,
                )
            })
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().map(|(_, _, o)| o).collect()
}

/// Moves each node to the cheapest offering of its own topology domain that every pod on it
/// may use and that holds their requests (the hostname stays, so no count changes).
fn shrink(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    permits: &dyn Fn(usize, usize) -> bool,
    nodes: &[usize],
    domain_of: &[usize],
) {
    let mut by_price: Vec<usize> = (0..offerings.len()).collect();
    by_price.sort_by_key(|&o| {
        (
            offerings[o].flavor.price,
            offerings[o].allocatable.cpu_millis,
        )
    });
    for &n in nodes {
        let NodeOrigin::New(current) = state.nodes[n].origin else {
            continue;
        };
        let requested = state.nodes[n].requested.clone();
        let better = by_price
            .iter()
            .copied()
            .take_while(|&o| offerings[o].flavor.price < offerings[current].flavor.price)
            .find(|&o| {
                domain_of[o] == domain_of[current]
                    && requested.fits_in(&offerings[o].allocatable)
                    && state.nodes[n].pods.iter().all(|&p| permits(p, o))
                    && {
                        budget.release(&offerings[current]);
                        let ok = budget.check(&offerings[o]).is_ok();
                        budget.take(&offerings[current]);
                        ok
                    }
            });
        if let Some(o) = better {
            budget.release(&offerings[current]);
            budget.take(&offerings[o]);
            let node = &mut state.nodes[n];
            node.origin = NodeOrigin::New(o);
            node.free = offerings[o].allocatable.minus(&requested);
            node.taints = offerings[o].taints.clone();
            let hostname = node.name.clone();
            node.labels = offerings[o].labels.clone();
            node.labels.insert(keys::HOSTNAME.to_string(), hostname);
        }
    }
}
