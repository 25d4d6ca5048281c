//! `least-waste`: Cluster Autoscaler's default expander over its clusterapi node groups. Each
//! loop estimates, per node group, how many nodes first-fit decreasing needs for the pending pods
//! that fit it, scores `(cpuCap·N − Σcpu)/(cpuCap·N) + (memCap·N − Σmem)/(memCap·N)` on node
//! capacity, scales the lowest-scoring group, and repeats with the pods still pending.
//! Node groups know nothing of NodePools; flavor taints apply, as Cluster Autoscaler reads them.

use super::{Budget, Placement, Strategy, finish, place_on_existing, queue_order};
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::{self, Offering};
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;

/// The least-waste strategy.
pub(crate) struct LeastWaste;

/// One expansion option: a node group, how many nodes, which pods.
struct Estimate {
    offering: usize,
    nodes: usize,
    pods: Vec<usize>,
    score: f64,
}

impl Strategy for LeastWaste {
    fn name(&self) -> StrategyName {
        StrategyName::LeastWaste
    }

    fn plan(&self, snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let offerings = catalog::bare_offerings(snapshot);
        let mut state = ClusterState::new(snapshot, &offerings);
        let mut budget = Budget::new(snapshot);
        let queue = queue_order(snapshot, pending);
        let mut rest = place_on_existing(&mut state, &queue);
        let classes = cursor_classes(snapshot, &rest);
        let group = interchangeable(snapshot, &offerings);
        loop {
            // Offerings interchangeable for every pod (same allocatable, capacity, taints and
            // the labels pods ask about) with the same room estimate alike: only the first of
            // them is estimated, which is the one an input-order tie-break picks anyway.
            let mut estimated: std::collections::HashSet<(usize, i64)> = Default::default();
            let candidates: Vec<(usize, i64)> = offerings
                .iter()
                .enumerate()
                .map(|(o, offering)| (o, budget.room(offering)))
                .filter(|&(o, room)| room > 0 && estimated.insert((group[o], room)))
                .collect();
            // Estimates run side by side, each worker on its own copy of the cluster, each
            // estimate undone after it is scored. When every pending pod's constraints stay
            // within a node, a floor under each group's score is known before its estimate:
            // groups are estimated in order of their floors, a few at a time, and those whose
            // floor is above the best score so far are never estimated (they cannot win).
            let floors = score_floors(&mut state, &offerings, &candidates, &rest, &classes);
            let mut order: Vec<usize> = (0..candidates.len())
                .filter(|&i| floors.as_ref().is_none_or(|f| f[i].is_some()))
                .collect();
            let floor = |i: usize| floors.as_ref().and_then(|f| f[i]).unwrap_or(f64::MIN);
            order.sort_by(|&a, &b| floor(a).total_cmp(&floor(b)).then(a.cmp(&b)));
            let step = if floors.is_some() {
                4
            } else {
                order.len().max(1)
            };
            // Ties: Cluster Autoscaler picks at random among the best; we take input order.
            let mut best: Option<(usize, Estimate)> = None;
            for batch in order.chunks(step) {
                if let Some((_, b)) = &best
                    && floor(batch[0]) > b.score + FLOOR_MARGIN
                {
                    break;
                }
                let estimates = crate::parallel::map_with(
                    batch,
                    || state.clone(),
                    |trial, &i| {
                        let (o, room) = candidates[i];
                        trial.begin_trial();
                        let (nodes, pods) =
                            first_fit_decreasing(trial, &offerings[o], o, &rest, room, &classes);
                        trial.end_trial();
                        (!pods.is_empty()).then(|| Estimate {
                            offering: o,
                            nodes,
                            score: waste_score(snapshot, &offerings[o], nodes, &pods),
                            pods,
                        })
                    },
                );
                for (&i, e) in batch.iter().zip(estimates) {
                    let Some(e) = e else { continue };
                    let better = match &best {
                        None => true,
                        Some((j, b)) => e.score < b.score || (e.score == b.score && i < *j),
                    };
                    if better {
                        best = Some((i, e));
                    }
                }
            }
            let best = best.map(|(_, e)| e);
            let Some(choice) = best else { break };
            let offering = &offerings[choice.offering];
            let (nodes, pods) = first_fit_decreasing(
                &mut state,
                offering,
                choice.offering,
                &rest,
                budget.room(offering),
                &classes,
            );
            debug_assert_eq!((nodes, pods.len()), (choice.nodes, choice.pods.len()));
            for _ in 0..nodes {
                budget.take(offering);
            }
            let placed: std::collections::HashSet<usize> = pods.into_iter().collect();
            rest.retain(|p| !placed.contains(p));
        }
        finish(StrategyName::LeastWaste, &state, &budget, &offerings, rest)
    }
}

/// How pods whose fit on a node can only go from yes to no as pods are added (no pod affinity,
/// no topology spread) are grouped for first fit; indexed by snapshot pod (a hash lookup per pod
/// per estimate was a tenth of least-waste's time). Other pods, and every pod of an empty
/// `Classes`, have neither.
#[derive(Default)]
struct Classes {
    /// Per pod: its class (same demand, selected by the same (anti-)affinity terms), whose pods
    /// fit exactly the same nodes, so the next pod of a class may start where the last one
    /// landed.
    class: Vec<Option<usize>>,
    /// How many classes there are.
    classes: usize,
    /// Per pod: its class without its requests, its kind. A node that turns away one pod of a
    /// kind for anything but room (anti-affinity, a host port, a selector or a taint) turns
    /// away every other, now and later: the next may skip that node.
    kind: Vec<Option<usize>>,
    /// How many kinds there are.
    kinds: usize,
}

/// The [`Classes`] of the pending pods.
fn cursor_classes(snapshot: &Snapshot, pods: &[usize]) -> Classes {
    use super::cost::engine::class_key;
    use crate::model::pod::{AffinityTerm, PodDemand};
    let mut terms: Vec<&AffinityTerm> = Vec::new();
    for p in &snapshot.pods {
        let d = &p.demand;
        for t in d
            .anti_affinity
            .iter()
            .chain(&d.affinity)
            .chain(d.preferred_affinity.iter().map(|w| &w.term))
            .chain(d.preferred_anti_affinity.iter().map(|w| &w.term))
        {
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
    }
    let mut ids: std::collections::HashMap<(PodDemand, Vec<bool>), usize> = Default::default();
    let mut kinds: std::collections::HashMap<(PodDemand, Vec<bool>), usize> = Default::default();
    let mut out = Classes {
        class: vec![None; snapshot.pods.len()],
        kind: vec![None; snapshot.pods.len()],
        ..Classes::default()
    };
    for &p in pods {
        let d = &snapshot.pods[p].demand;
        if !d.affinity.is_empty() || !d.preferred_affinity.is_empty() || !d.spread.is_empty() {
            continue;
        }
        let key = class_key(d, &terms);
        let mut kind = key.clone();
        kind.0.requests = Default::default();
        let next = ids.len();
        out.class[p] = Some(*ids.entry(key).or_insert(next));
        let next = kinds.len();
        out.kind[p] = Some(*kinds.entry(kind).or_insert(next));
    }
    out.classes = ids.len();
    out.kinds = kinds.len();
    out
}

/// Skips over nodes known to turn a kind of pod away: `next[i]` leads to the first node at or
/// after `i` not known to (a union-find over positions, halving paths as it goes).
#[derive(Default)]
struct Skip {
    next: Vec<usize>,
}

impl Skip {
    /// The first position at or after `i` not known to turn the kind away.
    fn from(&mut self, mut i: usize) -> usize {
        while i < self.next.len() && self.next[i] != i {
            let up = self.next[i];
            self.next[i] = self.next.get(up).copied().unwrap_or(up);
            i = up;
        }
        i
    }

    /// Position `i` turns the kind away from now on.
    fn refuse(&mut self, i: usize) {
        while self.next.len() <= i {
            self.next.push(self.next.len());
        }
        self.next[i] = i + 1;
    }
}

/// Per offering, the first offering interchangeable with it for every pod: same allocatable,
/// capacity, taints, NodePool and the labels any pod or DaemonSet asks about.
fn interchangeable(snapshot: &Snapshot, offerings: &[Offering]) -> Vec<usize> {
    let relevant = super::cost::relevant_keys(snapshot);
    let mut first: std::collections::HashMap<String, usize> = Default::default();
    offerings
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let labels: Vec<(&String, &String)> = o
                .labels
                .iter()
                .filter(|(k, _)| relevant.contains(*k))
                .collect();
            let key = format!(
                "{}|{:?}|{:?}|{:?}|{:?}|{:?}",
                o.node_pool, o.allocatable, o.flavor.capacity, o.taints, labels, o.ports
            );
            *first.entry(key).or_insert(i)
        })
        .collect()
}

/// Cluster Autoscaler's binpacking estimate for one node group: pods in order, each onto the
/// first new node of the group that fits, opening one (up to `room`) when none does.
fn first_fit_decreasing(
    state: &mut ClusterState,
    o: &Offering,
    index: usize,
    pods: &[usize],
    room: i64,
    classes: &Classes,
) -> (usize, Vec<usize>) {
    let mut opened: Vec<usize> = Vec::new();
    let mut placed = Vec::new();
    // Per class: every opened node before this position rejects its pods (and keeps doing so,
    // as nodes only fill up).
    let mut cursor: Vec<usize> = vec![0; classes.classes];
    // Per kind: the opened nodes that turned it away for anything but room.
    let mut skips: Vec<Skip> = (0..classes.kinds).map(|_| Skip::default()).collect();
    for &p in pods {
        let class = classes.class.get(p).copied().flatten();
        let mut skip = classes
            .kind
            .get(p)
            .copied()
            .flatten()
            .map(|k| &mut skips[k]);
        let mut i = class.map_or(0, |c| cursor[c]);
        // Room first: it rejects most full nodes without the whole fit check.
        let requests = &state.snapshot().pods[p].demand.requests;
        let mut found = None;
        loop {
            if let Some(skip) = skip.as_deref_mut() {
                i = skip.from(i);
            }
            if i >= opened.len() {
                break;
            }
            if requests.fits_in(&state.nodes[opened[i]].free) {
                if state.can_place(p, opened[i]) {
                    found = Some(i);
                    break;
                }
                if let Some(skip) = skip.as_deref_mut() {
                    skip.refuse(i);
                }
            }
            i += 1;
        }
        if let Some(i) = found {
            state.place(p, opened[i]);
            placed.push(p);
            if let Some(c) = class {
                cursor[c] = i;
            }
            continue;
        }
        if let Some(c) = class {
            cursor[c] = opened.len();
        }
        if (opened.len() as i64) >= room {
            continue;
        }
        let n = state.open(o, NodeOrigin::New(index), None);
        if state.can_place(p, n) {
            state.place(p, n);
            placed.push(p);
            opened.push(n);
        } else {
            state.close_if_empty(n);
        }
    }
    (opened.len(), placed)
}

/// How far a group's score may sit below its floor from rounding alone.
const FLOOR_MARGIN: f64 = 1e-9;

/// Per candidate (offering, room): a floor under the score its estimate can reach, or None when
/// the estimate places no pod. The whole answer is None (no floors known) unless every pending
/// pod is in a class and has constraints only within a node (hostname anti-affinity, host
/// ports): then a pod that fits an empty node of the group fits a new one at any point of the
/// estimate, so with room for a node per pod the estimate places exactly the pods that fit an
/// empty node, on at least as many nodes as their summed requests and one-per-node classes
/// need; the score only grows with the node count.
fn score_floors(
    state: &mut ClusterState,
    offerings: &[Offering],
    candidates: &[(usize, i64)],
    rest: &[usize],
    classes: &Classes,
) -> Option<Vec<Option<f64>>> {
    let snapshot = state.snapshot();
    // One pod standing for each class, and how many pending pods it has.
    let mut members: Vec<(usize, i64)> = Vec::new();
    let mut slot: Vec<Option<usize>> = vec![None; classes.classes];
    for &p in rest {
        if snapshot.pods[p].demand.has_topology() {
            return None;
        }
        let c = classes.class.get(p).copied().flatten()?;
        match slot[c] {
            Some(i) => members[i].1 += 1,
            None => {
                slot[c] = Some(members.len());
                members.push((p, 1));
            }
        }
    }
    let floors = candidates
        .iter()
        .map(|&(o, room)| {
            let offering = &offerings[o];
            state.begin_trial();
            let n = state.open(offering, NodeOrigin::New(o), None);
            let fitting: Vec<(usize, i64)> = members
                .iter()
                .copied()
                .filter(|&(p, _)| state.can_place(p, n))
                .collect();
            state.end_trial();
            if fitting.is_empty() {
                return None;
            }
            let pods: i64 = fitting.iter().map(|&(_, k)| k).sum();
            if pods > room {
                // The estimate may run out of nodes: no floor.
                return Some(f64::MIN);
            }
            let alloc = &offering.allocatable;
            let total = |get: &dyn Fn(&crate::model::resources::Resources) -> i64| -> i128 {
                fitting
                    .iter()
                    .map(|&(p, k)| {
                        i128::from(get(&snapshot.pods[p].demand.requests)) * i128::from(k)
                    })
                    .sum()
            };
            let nodes_for = |need: i128, have: i64| -> i128 {
                if need <= 0 || have <= 0 {
                    0
                } else {
                    (need + i128::from(have) - 1) / i128::from(have)
                }
            };
            let cpu = total(&|r| r.cpu_millis);
            let mem = total(&|r| r.memory_bytes);
            let mut nodes = nodes_for(cpu, alloc.cpu_millis)
                .max(nodes_for(mem, alloc.memory_bytes))
                .max(nodes_for(
                    total(&|r| r.ephemeral_storage_bytes),
                    alloc.ephemeral_storage_bytes,
                ))
                .max(nodes_for(total(&|r| r.pods), alloc.pods))
                .max(1);
            for (name, &have) in &alloc.extended {
                nodes = nodes.max(nodes_for(
                    total(&|r| r.extended.get(name).copied().unwrap_or(0)),
                    have,
                ));
            }
            for &(p, k) in &fitting {
                let d = &snapshot.pods[p].demand;
                if super::cost::conflict(d, d) {
                    nodes = nodes.max(i128::from(k));
                }
            }
            let n = nodes as f64;
            let cpu_cap = offering.flavor.capacity.cpu_millis as f64 * n;
            let mem_cap = offering.flavor.capacity.memory_bytes as f64 * n;
            let floor = (cpu_cap - cpu as f64) / cpu_cap + (mem_cap - mem as f64) / mem_cap;
            Some(if floor.is_finite() { floor } else { f64::MIN })
        })
        .collect();
    Some(floors)
}

/// The least-waste score on node capacity (lower is better).
fn waste_score(snapshot: &Snapshot, o: &Offering, nodes: usize, pods: &[usize]) -> f64 {
    let n = nodes as f64;
    let cpu_cap = o.flavor.capacity.cpu_millis as f64 * n;
    let mem_cap = o.flavor.capacity.memory_bytes as f64 * n;
    let cpu: f64 = pods
        .iter()
        .map(|&p| snapshot.pods[p].demand.requests.cpu_millis as f64)
        .sum();
    let mem: f64 = pods
        .iter()
        .map(|&p| snapshot.pods[p].demand.requests.memory_bytes as f64)
        .sum();
    (cpu_cap - cpu) / cpu_cap + (mem_cap - mem) / mem_cap
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};
    use crate::rng::Lcg;

    /// The expander as first written (every node group estimated every round, a scan from the
    /// first node for every pod): the reference the faster one must match plan for plan.
    fn reference(snapshot: &Snapshot, pending: &[usize]) -> Placement {
        let offerings = catalog::bare_offerings(snapshot);
        let mut state = ClusterState::new(snapshot, &offerings);
        let mut budget = Budget::new(snapshot);
        let queue = queue_order(snapshot, pending);
        let mut rest = place_on_existing(&mut state, &queue);
        let none = Classes::default();
        loop {
            let mut best: Option<(usize, f64)> = None;
            for (o, offering) in offerings.iter().enumerate() {
                let room = budget.room(offering);
                if room == 0 {
                    continue;
                }
                let mut trial = state.clone();
                let (nodes, pods) =
                    first_fit_decreasing(&mut trial, offering, o, &rest, room, &none);
                if pods.is_empty() {
                    continue;
                }
                let score = waste_score(snapshot, offering, nodes, &pods);
                if best.is_none_or(|b| score < b.1) {
                    best = Some((o, score));
                }
            }
            let Some((o, _)) = best else { break };
            let offering = &offerings[o];
            let (nodes, pods) =
                first_fit_decreasing(&mut state, offering, o, &rest, budget.room(offering), &none);
            for _ in 0..nodes {
                budget.take(offering);
            }
            rest.retain(|p| !pods.contains(p));
        }
        finish(StrategyName::LeastWaste, &state, &budget, &offerings, rest)
    }

    /// Flavors in three zones (some size-bounded, some tainted), pods with hostname and zone
    /// anti-affinity, zone selectors, spread, affinity, tolerations and host ports.
    fn instance(seed: u64) -> Snapshot {
        instance_with(seed, false)
    }

    /// [`instance`]; `local`: only constraints within a node (hostname anti-affinity, host
    /// ports) besides selectors and tolerations, the case where estimates are pruned.
    fn instance_with(seed: u64, local: bool) -> Snapshot {
        let mut rng = Lcg(seed);
        let mut y = String::new();
        let types = 2 + rng.next() % 5;
        for i in 0..types {
            let cpu = [1, 2, 4, 8][rng.below(4) as usize];
            let mem = cpu * [1, 2, 4][rng.below(3) as usize];
            let max = if rng.next().is_multiple_of(3) {
                format!(
                    "\n    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: '{}'",
                    1 + rng.next() % 4
                )
            } else {
                String::new()
            };
            let taint = if rng.next().is_multiple_of(5) {
                "\n    capacity.cluster-autoscaler.kubernetes.io/taints: dedicated=x:NoSchedule"
            } else {
                ""
            };
            for zone in ["a", "b", "c"] {
                y.push_str(&format!(
                    "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: t{i}-{zone}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {mem}Gi\n    capacity.cluster-autoscaler.kubernetes.io/price: '0.{:02}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=t{i},topology.kubernetes.io/zone={zone}{max}{taint}\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n",
                    cpu + mem
                ));
            }
        }
        let pods = 10 + rng.next() % 50;
        for i in 0..pods {
            let cpu = rng.pick(&["100m", "250m", "500m", "1", "1500m"]);
            let mem = rng.pick(&["100Mi", "512Mi", "1Gi", "2Gi"]);
            let mut spec = String::new();
            let mut labels = format!("app: {}", rng.pick(&["xx", "yy", "nginx"]));
            let choice = match rng.next() % 8 {
                2 | 4 | 5 if local => 7,
                c => c,
            };
            match choice {
                0 | 1 => spec.push_str("\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: nginx}}\n        topologyKey: kubernetes.io/hostname"),
                2 => spec.push_str("\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: yy}}\n        topologyKey: topology.kubernetes.io/zone"),
                3 => spec.push_str(&format!(
                    "\n  nodeSelector: {{topology.kubernetes.io/zone: {}}}",
                    rng.pick(&["a", "b"])
                )),
                4 => spec.push_str("\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: xx}}}"),
                5 => {
                    labels = "app: web".to_string();
                    spec.push_str("\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: web}}\n        topologyKey: topology.kubernetes.io/zone");
                }
                6 => spec.push_str("\n  tolerations: [{key: dedicated, operator: Exists}]"),
                _ => {}
            }
            let port = if rng.next().is_multiple_of(10) {
                ", ports: [{containerPort: 80, hostPort: 80}]"
            } else {
                ""
            };
            y.push_str(&format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {{{labels}}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}, memory: {mem}}}}}{port}}}]{spec}\n"
            ));
        }
        snapshot_from_sources(&[Source {
            name: "t".into(),
            text: y,
        }])
        .expect("instance parses")
    }

    fn shape(p: &Placement) -> (Vec<(String, Vec<usize>)>, Vec<usize>) {
        let mut nodes: Vec<(String, Vec<usize>)> = p
            .new_nodes
            .iter()
            .map(|n| {
                let mut pods = n.pods.clone();
                pods.sort_unstable();
                (n.offering.flavor.machine_deployment.clone(), pods)
            })
            .collect();
        nodes.sort();
        (nodes, p.unschedulable.iter().map(|(p, _)| *p).collect())
    }

    /// Every pod's fit (with its reason) on every node, and the nodes themselves.
    fn fingerprint(state: &ClusterState) -> String {
        let mut out = format!("{:?}\n", state.nodes);
        for p in 0..state.snapshot().pods.len() {
            for n in 0..state.nodes.len() {
                out.push_str(&format!("{p}@{n}: {:?}\n", state.fits(p, n)));
            }
        }
        out
    }

    #[test]
    fn a_trial_leaves_the_state_as_it_found_it() {
        let mut tried = 0;
        for seed in 0..40 {
            let snap = instance(seed);
            let offerings = catalog::bare_offerings(&snap);
            let mut state = ClusterState::new(&snap, &offerings);
            let pending: Vec<usize> = (0..snap.pods.len()).collect();
            let queue = queue_order(&snap, &pending);
            // Half the pods planned for real first, so the trial also places next to them.
            let (first, second) = queue.split_at(queue.len() / 2);
            first_fit_decreasing(&mut state, &offerings[0], 0, first, 20, &Classes::default());
            let before = fingerprint(&state);
            for (o, offering) in offerings.iter().enumerate() {
                state.begin_trial();
                let (_, pods) =
                    first_fit_decreasing(&mut state, offering, o, second, 20, &Classes::default());
                tried += pods.len();
                state.end_trial();
                assert_eq!(fingerprint(&state), before, "seed {seed}, offering {o}");
            }
        }
        assert!(tried > 1_000, "the trials placed pods ({tried})");
    }

    #[test]
    fn picks_the_same_node_groups_and_pods_as_the_plain_expander() {
        for local in [false, true] {
            for seed in 0..40 {
                let snap = instance_with(seed, local);
                let pending: Vec<usize> = (0..snap.pods.len()).collect();
                let fast = LeastWaste.plan(&snap, &pending);
                let slow = reference(&snap, &pending);
                assert_eq!(shape(&fast), shape(&slow), "seed {seed}, local {local}");
            }
        }
    }

    /// With constraints only within a node, every group's floor is at most the score its
    /// estimate reaches (and a group with no floor places no pod), and the floors rule out some
    /// groups before they are estimated.
    #[test]
    fn score_floors_never_exceed_the_estimates_and_prune_some() {
        let (mut checked, mut prunable) = (0, 0);
        for seed in 0..40 {
            let snap = instance_with(seed, true);
            let offerings = catalog::bare_offerings(&snap);
            let mut state = ClusterState::new(&snap, &offerings);
            let budget = Budget::new(&snap);
            let pending: Vec<usize> = (0..snap.pods.len()).collect();
            let rest = place_on_existing(&mut state, &queue_order(&snap, &pending));
            let classes = cursor_classes(&snap, &rest);
            let candidates: Vec<(usize, i64)> = offerings
                .iter()
                .enumerate()
                .map(|(o, offering)| (o, budget.room(offering)))
                .filter(|&(_, room)| room > 0)
                .collect();
            let floors = score_floors(&mut state, &offerings, &candidates, &rest, &classes)
                .expect("only constraints within a node");
            let mut scores = Vec::new();
            for (&(o, room), floor) in candidates.iter().zip(&floors) {
                state.begin_trial();
                let (nodes, pods) =
                    first_fit_decreasing(&mut state, &offerings[o], o, &rest, room, &classes);
                state.end_trial();
                match floor {
                    None => assert!(pods.is_empty(), "seed {seed}, offering {o}"),
                    Some(f) => {
                        let score = waste_score(&snap, &offerings[o], nodes, &pods);
                        assert!(
                            *f <= score + FLOOR_MARGIN,
                            "seed {seed}, offering {o}: {f} > {score}"
                        );
                        scores.push((*f, score));
                        checked += 1;
                    }
                }
            }
            let best = scores.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
            prunable += scores.iter().filter(|s| s.0 > best + FLOOR_MARGIN).count();
        }
        eprintln!("{prunable} of {checked} groups ruled out");
        assert!(checked > 200, "{checked} floors checked");
        assert!(
            prunable > checked / 4,
            "{prunable} of {checked} groups ruled out"
        );
        // A pod with constraints across nodes: no floors.
        let snap = instance(1);
        let offerings = catalog::bare_offerings(&snap);
        let mut state = ClusterState::new(&snap, &offerings);
        let pending: Vec<usize> = (0..snap.pods.len()).collect();
        let classes = cursor_classes(&snap, &pending);
        assert!(score_floors(&mut state, &offerings, &[(0, 10)], &pending, &classes).is_none());
    }
}
