//! Checked sequential placement for batches with constraints across nodes (topology spread,
//! pod affinity, zonal anti-affinity, preferences): each pod, in queue order, goes on the first
//! recent plan node that takes it by the full fit check ([`ClusterState::fits`]), else on a new
//! node of the offering with the lowest price per copy of the pod among those whose topology
//! domain admits it; at the end each node moves to the cheapest offering of the same topology
//! domain that still holds its pods. Karpenter schedules the same way (pods one at a time onto
//! in-flight NodeClaims, topology narrowing each claim's domain); the final move is what its
//! instance-type choice does for a NodeClaim's pods.

use std::collections::HashMap;

use crate::model::labels::{Labels, keys};
use crate::model::resources::Resources;
use crate::sched::catalog::Offering;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::Budget;

/// How many of the most recently opened nodes a pod tries before a new node is opened: enough
/// for spread and affinity to find their domain among the open nodes, bounded so a batch of
/// 20,000 pods stays linear.
const WINDOW: usize = 64;

/// Places `pods` (snapshot indices, in queue order) on new nodes; `permits(pod, offering)` says
/// which offerings a pod may use (weight, static fit, budget at the start). Returns the pods
/// placed nowhere.
pub fn pack(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    permits: &dyn Fn(usize, usize) -> bool,
    pods: &[usize],
) -> Vec<usize> {
    let snapshot = state.snapshot();
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
    let mut unplaced = Vec::new();
    // Existing and in-flight nodes first for every pod (core `scheduler.go` `add`).
    let standing = state.standing_nodes();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        if state.place_on_standing(p, &standing) {
            continue;
        }
        let mut placed = false;
        for &n in opened.iter().rev().take(WINDOW) {
            let node = &state.nodes[n];
            let NodeOrigin::New(o) = node.origin else {
                continue;
            };
            if demand.requests.fits_in(&node.free) && permits(p, o) && state.can_place(p, n) {
                state.place(p, n);
                placed = true;
                break;
            }
        }
        if placed {
            continue;
        }
        let ranking = rankings
            .entry(demand.requests.clone())
            .or_insert_with(|| rank(&demand.requests, offerings));
        let mut admitted: Vec<Option<bool>> = vec![None; domains.len()];
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
            unplaced.push(p);
            continue;
        };
        let n = state.open(&offerings[o], NodeOrigin::New(o), None);
        if state.can_place(p, n) {
            budget.take(&offerings[o]);
            state.place(p, n);
            opened.push(n);
        } else {
            state.close_if_empty(n);
            unplaced.push(p);
        }
    }
    shrink(state, budget, offerings, permits, &opened, &domain_of);
    unplaced
}

/// Label keys (other than the hostname) that some pod's topology constraint uses.
fn domain_keys(state: &ClusterState) -> Vec<String> {
    topology_label_keys(state.snapshot())
}

/// Label keys (other than the hostname) that the snapshot's pods' spread and (anti-)affinity
/// terms use: offerings differing in these are different domains.
pub fn topology_label_keys(snapshot: &crate::model::snapshot::Snapshot) -> Vec<String> {
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
