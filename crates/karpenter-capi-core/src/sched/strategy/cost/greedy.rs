//! Greedy packing for large batches. Pods are grouped into classes (identical demand; pods that
//! repel each other on a hostname form one class across sizes, one per node). Each step picks
//! the (offering, fill) with the most pod value per unit of price, where a pod's value is its
//! fair share of the cheapest offering that could host it; repeats that fill while the same
//! pods remain; and at the end moves each node to the cheapest offering that still holds it.

use std::collections::HashMap;

use super::{Allowed, conflict};
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::sched::catalog::Offering;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::Budget;
use crate::vocab::keys;

/// Everything that makes pods schedule alike, except their names (and, for classes of pods
/// that repel each other, their sizes).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct DemandKey(PodDemand);

impl DemandKey {
    /// The key of a demand; `with_requests: false` ignores its requests.
    pub(crate) fn of(d: &PodDemand, with_requests: bool) -> DemandKey {
        let mut copy = d.clone();
        copy.name.clear();
        if !with_requests {
            copy.requests = Resources::default();
        }
        DemandKey(copy)
    }

    /// The key of a demand without its name, namespace and labels: pods alike for the fit on
    /// a node with no pods.
    pub(crate) fn unlabelled(d: &PodDemand) -> DemandKey {
        let mut copy = d.clone();
        copy.name.clear();
        copy.namespace.clear();
        copy.labels.clear();
        DemandKey(copy)
    }

    /// [`DemandKey::unlabelled`] without the requests either: what a node's labels and
    /// taints see of a pod.
    pub(crate) fn without_requests(d: &PodDemand) -> DemandKey {
        let mut key = DemandKey::unlabelled(d);
        key.0.requests = Resources::default();
        key
    }

    /// The demand this key stands for.
    pub(crate) fn demand(&self) -> &PodDemand {
        &self.0
    }
}

/// Pods that pack alike.
struct Class {
    /// Remaining pods, largest first.
    pods: Vec<usize>,
    /// At most one of these per node.
    one_per_node: bool,
    /// A representative demand (the largest pod).
    requests: Resources,
    /// Classes that may not share a node with this one.
    conflicts: Vec<usize>,
}

/// How many pods of each class go on one node: (class, count, value of those pods).
type Pattern = Vec<(usize, usize, f64)>;

fn size_order(a: &Resources, b: &Resources) -> std::cmp::Ordering {
    b.cpu_millis
        .cmp(&a.cpu_millis)
        .then(b.memory_bytes.cmp(&a.memory_bytes))
}

fn classes(state: &ClusterState, pods: &[usize]) -> Vec<Class> {
    let snapshot = state.snapshot();
    let mut index: HashMap<DemandKey, usize> = HashMap::new();
    let mut out: Vec<Class> = Vec::new();
    for &p in pods {
        let d = &snapshot.pods[p].demand;
        let one_per_node = conflict(d, d);
        let key = DemandKey::of(d, !one_per_node);
        match index.get(&key) {
            Some(&c) => out[c].pods.push(p),
            None => {
                index.insert(key, out.len());
                out.push(Class {
                    pods: vec![p],
                    one_per_node,
                    requests: d.requests.clone(),
                    conflicts: Vec::new(),
                });
            }
        }
    }
    for c in &mut out {
        c.pods.sort_by(|&a, &b| {
            size_order(
                &snapshot.pods[a].demand.requests,
                &snapshot.pods[b].demand.requests,
            )
        });
        c.requests = snapshot.pods[c.pods[0]].demand.requests.clone();
    }
    out.sort_by(|a, b| size_order(&a.requests, &b.requests));
    // Conflicts between classes, decided on representatives: every member of a class has the
    // same labels and terms.
    let reps: Vec<&PodDemand> = out
        .iter()
        .map(|c| &*snapshot.pods[c.pods[0]].demand)
        .collect();
    let interacting: Vec<bool> = reps
        .iter()
        .map(|d| !d.anti_affinity.is_empty() || !d.host_ports.is_empty())
        .collect();
    for a in 0..out.len() {
        for b in 0..out.len() {
            if a != b && (interacting[a] || interacting[b]) && conflict(reps[a], reps[b]) {
                out[a].conflicts.push(b);
            }
        }
    }
    out
}

/// Per-unit prices (per millicore, per byte) that best explain the offerings' prices, by least
/// squares on allocatable; a pod's value is what its requests cost at these prices, so a fill's
/// value over its price is how much of the money buys requested resources.
fn unit_prices(offerings: &[Offering]) -> Option<(f64, f64)> {
    let (mut cc, mut cm, mut mm, mut cp, mut mp) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for o in offerings {
        let (c, m, p) = (
            o.allocatable.cpu_millis as f64,
            o.allocatable.memory_bytes as f64,
            effective_price(o),
        );
        cc += c * c;
        cm += c * m;
        mm += m * m;
        cp += c * p;
        mp += m * p;
    }
    let det = cc * mm - cm * cm;
    if det.abs() > f64::EPSILON * cc * mm && det.is_finite() {
        let a = (cp * mm - mp * cm) / det;
        let b = (mp * cc - cp * cm) / det;
        if a > 0.0 && b > 0.0 {
            return Some((a, b));
        }
    }
    // One resource explains the prices (or the fit is degenerate): fall back to CPU alone.
    (cc > 0.0).then(|| (cp / cc, 0.0))
}

/// A pod's share of an offering's price: price × its dominant fraction of allocatable.
fn share(req: &Resources, o: &Offering) -> f64 {
    let frac = |need: i64, have: i64| {
        if need <= 0 {
            0.0
        } else if have <= 0 {
            f64::INFINITY
        } else {
            need as f64 / have as f64
        }
    };
    let mut dominant = frac(req.cpu_millis, o.allocatable.cpu_millis)
        .max(frac(req.memory_bytes, o.allocatable.memory_bytes))
        .max(frac(
            req.ephemeral_storage_bytes,
            o.allocatable.ephemeral_storage_bytes,
        ))
        .max(frac(req.pods, o.allocatable.pods));
    for (k, v) in &req.extended {
        dominant = dominant.max(frac(
            *v,
            o.allocatable.extended.get(k).copied().unwrap_or(0),
        ));
    }
    effective_price(o) * dominant
}

/// Prices of zero still have to rank nodes by size, so treat them as one billionth.
fn effective_price(o: &Offering) -> f64 {
    o.flavor.price.0.max(1) as f64
}

/// One node of `o`, filled first-fit decreasing over the classes.
fn fill(
    state: &ClusterState,
    classes: &[Class],
    o: usize,
    offering: &Offering,
    allowed: &Allowed,
    values: &HashMap<usize, f64>,
    order: &[usize],
) -> Pattern {
    let pods = &state.snapshot().pods;
    let mut free = offering.allocatable.clone();
    let mut blocked = vec![false; classes.len()];
    let mut pattern = Pattern::new();
    for &c in order {
        let class = &classes[c];
        if class.pods.is_empty() || blocked[c] {
            continue;
        }
        let (k, value) = if class.one_per_node {
            // The largest member this node can take.
            match class
                .pods
                .iter()
                .find(|&&p| allowed.permits(p, o) && pods[p].demand.requests.fits_in(&free))
            {
                Some(&p) => {
                    free.sub(&pods[p].demand.requests);
                    (1, values.get(&p).copied().unwrap_or(0.0))
                }
                None => continue,
            }
        } else {
            if !allowed.permits(class.pods[0], o) {
                continue;
            }
            let k = class.requests.copies_in(&free).min(class.pods.len() as i64);
            if k <= 0 {
                continue;
            }
            for _ in 0..k {
                free.sub(&class.requests);
            }
            (
                k as usize,
                values.get(&class.pods[0]).copied().unwrap_or(0.0) * k as f64,
            )
        };
        for &other in &class.conflicts {
            blocked[other] = true;
        }
        pattern.push((c, k, value));
    }
    pattern
}

/// Packs the pods onto new nodes; returns the pods it could not place.
pub(crate) fn pack(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Vec<usize> {
    let snapshot = state.snapshot();
    let mut classes = classes(state, pods);
    // A pod's value: its requests at the catalog's unit prices; pods with extended resources
    // (GPUs), which those prices do not explain, weigh at least their fair share of the
    // cheapest offering they may use.
    let prices = unit_prices(offerings);
    let mut demand_value: HashMap<usize, f64> = HashMap::new();
    let mut values: HashMap<usize, f64> = HashMap::new();
    for &p in pods {
        let d = allowed.demand_of.get(&p).copied().unwrap_or(usize::MAX);
        let v = *demand_value.entry(d).or_insert_with(|| {
            let req = &snapshot.pods[p].demand.requests;
            let fair = allowed
                .list(p)
                .iter()
                .map(|&o| share(req, &offerings[o]))
                .fold(f64::INFINITY, f64::min);
            let fair = if fair.is_finite() { fair } else { 0.0 };
            match prices {
                Some((a, b)) if req.extended.is_empty() => {
                    a * req.cpu_millis as f64 + b * req.memory_bytes as f64
                }
                Some((a, b)) => fair.max(a * req.cpu_millis as f64 + b * req.memory_bytes as f64),
                None => fair,
            }
        });
        values.insert(p, v);
    }
    // Pods that constrain each other (one per node, or repelling other classes) are packed
    // first: they decide how many nodes are needed at least. The unconstrained pods then fill
    // the room left on those nodes before any node is opened for them alone, so they are not
    // used up early, leaving constrained pods alone on their own nodes.
    let constrained: Vec<bool> = classes
        .iter()
        .map(|c| c.one_per_node || !c.conflicts.is_empty())
        .collect();
    if constrained.iter().any(|&c| c) {
        greedy_loop(
            state,
            budget,
            offerings,
            allowed,
            &mut classes,
            &values,
            &constrained,
        );
        fill_open_nodes(state, allowed, &mut classes);
    }
    let all = vec![true; classes.len()];
    greedy_loop(
        state,
        budget,
        offerings,
        allowed,
        &mut classes,
        &values,
        &all,
    );
    classes.into_iter().flat_map(|c| c.pods).collect()
}

/// Repeatedly opens the node with the best fill of the `active` classes, as long as one exists.
fn greedy_loop(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &Allowed,
    classes: &mut [Class],
    values: &HashMap<usize, f64>,
    active: &[bool],
) {
    let mut banned = vec![false; offerings.len()];
    loop {
        // Classes limited to one pod per node go first, those with the most pods left first:
        // each needs at least that many more nodes, so they are spread evenly instead of being
        // left for a tail of nodes of their own. Then the rest, largest first.
        let mut order: Vec<usize> = (0..classes.len())
            .filter(|&c| active[c] && !classes[c].pods.is_empty())
            .collect();
        order.sort_by_key(|&c| {
            (
                !classes[c].one_per_node,
                std::cmp::Reverse(if classes[c].one_per_node {
                    classes[c].pods.len()
                } else {
                    0
                }),
                c,
            )
        });
        // The fill with the most value per unit of price; ties: more value, then cheaper.
        let mut best: Option<(f64, f64, usize, Pattern)> = None;
        for (o, offering) in offerings.iter().enumerate() {
            if banned[o] || budget.room(offering) == 0 {
                continue;
            }
            let pattern = fill(state, classes, o, offering, allowed, values, &order);
            if pattern.is_empty() {
                continue;
            }
            let value: f64 = pattern.iter().map(|&(_, _, v)| v).sum();
            let score = value / effective_price(offering);
            let better = match &best {
                None => true,
                Some((s, v, bo, _)) => {
                    let eps = 1e-12;
                    score > s * (1.0 + eps)
                        || ((score - s).abs() <= s * eps
                            && (value > v * (1.0 + eps)
                                || ((value - v).abs() <= v * eps
                                    && offering.flavor.price < offerings[*bo].flavor.price)))
                }
            };
            if better {
                best = Some((score, value, o, pattern));
            }
        }
        let Some((_, _, o, pattern)) = best else {
            break;
        };
        let repeats = pattern
            .iter()
            .map(|&(c, k, _)| classes[c].pods.len() / k)
            .min()
            .unwrap_or(1)
            .max(1)
            .min(usize::try_from(budget.room(&offerings[o])).unwrap_or(usize::MAX));
        for _ in 0..repeats {
            let node = state.open(&offerings[o], NodeOrigin::New(o), None);
            for &(c, k, _) in &pattern {
                let mut taken = 0;
                let mut i = 0;
                while taken < k && i < classes[c].pods.len() {
                    let p = classes[c].pods[i];
                    if allowed.permits(p, o) && state.can_place(p, node) {
                        state.place(p, node);
                        classes[c].pods.remove(i);
                        taken += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            if state.nodes[node].pods.is_empty() {
                // Constraints across nodes refused every pod: do not try this offering again.
                state.close_if_empty(node);
                banned[o] = true;
                break;
            }
            budget.take(&offerings[o]);
        }
    }
}

/// First fit, largest pods first, of the remaining pods onto the new nodes already planned.
fn fill_open_nodes(state: &mut ClusterState, allowed: &Allowed, classes: &mut [Class]) {
    let new_nodes: Vec<(usize, usize)> = state
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n.origin {
            NodeOrigin::New(o) => Some((i, o)),
            _ => None,
        })
        .collect();
    for class in classes.iter_mut() {
        let mut i = 0;
        while i < class.pods.len() {
            let p = class.pods[i];
            match new_nodes
                .iter()
                .find(|&&(n, o)| allowed.permits(p, o) && state.can_place(p, n))
            {
                Some(&(n, _)) => {
                    state.place(p, n);
                    class.pods.remove(i);
                }
                None => i += 1,
            }
        }
    }
}

/// Moves each new node to the cheapest offering that still holds its pods, if that is cheaper.
pub(crate) fn downsize(
    state: &mut ClusterState,
    budget: &mut Budget,
    offerings: &[Offering],
    allowed: &Allowed,
) {
    for i in 0..state.nodes.len() {
        let NodeOrigin::New(current) = state.nodes[i].origin else {
            continue;
        };
        let requested = state.nodes[i].requested.clone();
        let mut usable = vec![true; offerings.len()];
        for &p in &state.nodes[i].pods {
            for (o, u) in usable.iter_mut().enumerate() {
                *u = *u && allowed.permits(p, o);
            }
        }
        let cheaper = (0..offerings.len())
            .filter(|&o| {
                usable[o]
                    && offerings[o].flavor.price < offerings[current].flavor.price
                    && requested.fits_in(&offerings[o].allocatable)
                    && budget.check(&offerings[o]).is_ok()
            })
            .min_by_key(|&o| {
                (
                    offerings[o].flavor.price,
                    offerings[o].flavor.capacity.cpu_millis,
                )
            });
        if let Some(o) = cheaper {
            budget.release(&offerings[current]);
            budget.take(&offerings[o]);
            let node = &mut state.nodes[i];
            node.origin = NodeOrigin::New(o);
            node.free = offerings[o].allocatable.minus(&requested);
            node.taints = offerings[o].taints.clone();
            let hostname = node.name.clone();
            node.labels = offerings[o].labels.clone();
            node.labels.insert(keys::HOSTNAME.to_string(), hostname);
        }
    }
}
