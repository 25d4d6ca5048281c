//! The room a consolidation search can count on before simulating anything, and the one copy
//! of the snapshot its trials share (see [`Room`] and [`Scratch`]).

use super::Candidate;
use crate::model::snapshot::Snapshot;

/// The free requests (CPU millis, memory bytes; never below zero) of each node that can take
/// pods now: Ready, schedulable, not being deleted or disrupted, and not the node of a claim
/// being deleted or not yet initialized (the room [`super::home`] counts on).
pub(crate) fn usable_free(snapshot: &Snapshot) -> std::collections::HashMap<String, [i64; 2]> {
    let closed: std::collections::HashSet<&str> = snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.deleting || !c.condition_true("Initialized"))
        .flat_map(|c| c.node_name.as_deref())
        .collect();
    let mut free: std::collections::HashMap<String, [i64; 2]> = snapshot
        .nodes
        .iter()
        .filter(|n| {
            n.ready == Some(true)
                && !n.unschedulable
                && !n.deleting
                && !n.disrupted()
                && !closed.contains(n.name.as_str())
        })
        .map(|n| {
            (
                n.name.clone(),
                [n.allocatable.cpu_millis, n.allocatable.memory_bytes],
            )
        })
        .collect();
    for p in snapshot.pods.iter().filter(|p| !p.terminal) {
        if let Some(room) = p.node_name.as_deref().and_then(|n| free.get_mut(n)) {
            room[0] = room[0].saturating_sub(p.demand.requests.cpu_millis);
            room[1] = room[1].saturating_sub(p.demand.requests.memory_bytes);
        }
    }
    for room in free.values_mut() {
        *room = [room[0].max(0), room[1].max(0)];
    }
    free
}

/// What bounds every trial of one search from above, counted once per search: each node's free
/// CPU and memory (allocatable less its pods' requests, as the scheduler counts them, never below
/// zero) and the pods it would have to move, the capacity of in-flight claims, and each flavor's
/// capacity and price. A trial cannot succeed (its pods would be unschedulable, need two new
/// nodes, or a node as dear as the removed ones) when its pods exceed all the room there is
/// plus the largest flavor cheaper than what it removes: in CPU or memory summed, or in count,
/// each node holding at most as many of them as it has room for their smallest request. Such a
/// trial is rejected without its scheduling simulation. Only a necessary condition, so no
/// decision changes. The replay's upstream peer uses the same sums to skip simulations.
pub struct Room {
    /// Per node: its free room and the pods it would move.
    nodes: std::collections::HashMap<String, NodeRoom>,
    /// The capacity of each in-flight claim's flavor.
    in_flight: Vec<[i64; 2]>,
    /// (price, capacity) of each flavor.
    flavors: Vec<(i64, [i64; 2])>,
}

/// One node's free room (CPU millis, memory bytes) and its pods other than DaemonSet pods.
#[derive(Default)]
struct NodeRoom {
    free: [i64; 2],
    moving: Vec<[i64; 2]>,
}

/// The pods some nodes would move: their summed requests, their count, and the smallest
/// request in each resource.
pub struct Moving {
    sum: [i64; 2],
    count: i64,
    least: [i64; 2],
}

impl Moving {
    /// None so far.
    pub fn new() -> Moving {
        Moving {
            sum: [0, 0],
            count: 0,
            least: [i64::MAX, i64::MAX],
        }
    }

    /// One more pod of these requests (CPU millis, memory bytes).
    pub fn add(&mut self, r: [i64; 2]) {
        for (k, v) in r.into_iter().enumerate() {
            self.sum[k] += v;
            self.least[k] = self.least[k].min(v);
        }
        self.count += 1;
    }

    /// How many of these pods at most fit in `room`.
    fn fit(&self, room: [i64; 2]) -> i64 {
        (0..2)
            .filter(|&k| self.least[k] > 0)
            .map(|k| room[k].max(0) / self.least[k])
            .min()
            .unwrap_or(i64::MAX)
    }
}

impl Default for Moving {
    fn default() -> Moving {
        Moving::new()
    }
}

impl Room {
    /// The room of `snapshot`.
    pub fn new(snapshot: &Snapshot) -> Room {
        let mut nodes: std::collections::HashMap<String, NodeRoom> = snapshot
            .nodes
            .iter()
            .map(|n| {
                let a = &n.allocatable;
                (
                    n.name.clone(),
                    NodeRoom {
                        free: [a.cpu_millis, a.memory_bytes],
                        moving: Vec::new(),
                    },
                )
            })
            .collect();
        for p in snapshot.pods.iter().filter(|p| !p.terminal) {
            let Some(entry) = p.node_name.as_deref().and_then(|n| nodes.get_mut(n)) else {
                continue;
            };
            let r = [p.demand.requests.cpu_millis, p.demand.requests.memory_bytes];
            entry.free[0] -= r[0];
            entry.free[1] -= r[1];
            if !p.daemon {
                entry.moving.push(r);
            }
        }
        for n in nodes.values_mut() {
            n.free = [n.free[0].max(0), n.free[1].max(0)];
        }
        // A cordoned Node, or one being deleted, takes no pods (as the scheduler's state has it).
        for n in snapshot
            .nodes
            .iter()
            .filter(|n| n.unschedulable || n.deleting)
        {
            if let Some(r) = nodes.get_mut(&n.name) {
                r.free = [0, 0];
            }
        }
        let flavors: Vec<(String, i64, [i64; 2])> = snapshot
            .all_members()
            .into_iter()
            .filter_map(|md| md.flavor.as_ref().ok())
            .map(|f| {
                (
                    f.machine_deployment.clone(),
                    f.price.0,
                    [f.capacity.cpu_millis, f.capacity.memory_bytes],
                )
            })
            .collect();
        let largest = flavors
            .iter()
            .fold([0i64; 2], |m, f| [m[0].max(f.2[0]), m[1].max(f.2[1])]);
        // Each in-flight claim at its flavor's capacity (never less than the room the scheduler
        // gives it); the largest flavor when its MachineDeployment is not known here.
        let in_flight = snapshot
            .in_flight_claims()
            .map(|claim| {
                snapshot
                    .claim_machine_deployment(claim)
                    .and_then(|md| flavors.iter().find(|f| f.0 == md))
                    .map_or(largest, |f| f.2)
            })
            .collect();
        Room {
            nodes,
            in_flight,
            flavors: flavors.into_iter().map(|(_, p, c)| (p, c)).collect(),
        }
    }

    /// The pods `nodes` would move (each node counted once), added to `moving`.
    pub fn moving(&self, nodes: &std::collections::BTreeSet<&str>, moving: &mut Moving) {
        for name in nodes {
            if let Some(n) = self.nodes.get(*name) {
                for r in &n.moving {
                    moving.add(*r);
                }
            }
        }
    }

    /// Whether `moving` cannot fit the room of every node but `nodes`, in-flight claims and
    /// `extra` (a new node's capacity) together.
    pub fn cannot_fit(
        &self,
        nodes: &std::collections::BTreeSet<&str>,
        moving: &Moving,
        extra: [i64; 2],
    ) -> bool {
        if moving.count == 0 {
            return false;
        }
        let (mut free, mut slots) = (extra, moving.fit(extra));
        let rooms = self
            .nodes
            .iter()
            .filter(|(name, _)| !nodes.contains(name.as_str()))
            .map(|(_, n)| n.free)
            .chain(self.in_flight.iter().copied());
        for room in rooms {
            free[0] += room[0];
            free[1] += room[1];
            slots = slots.saturating_add(moving.fit(room));
        }
        (0..2).any(|k| moving.sum[k] > free[k]) || moving.count > slots
    }

    /// Whether the pods of `remove` cannot fit the room left plus one flavor cheaper than them.
    pub(super) fn cannot_pay(&self, remove: &[Candidate]) -> bool {
        let names: std::collections::BTreeSet<&str> =
            remove.iter().map(|c| c.node.as_str()).collect();
        let mut moving = Moving::new();
        self.moving(&names, &mut moving);
        let removed: i64 = remove.iter().map(|c| c.price.0).sum();
        // The one new node a decision may add, cheaper than what it removes: at most the
        // largest such flavor in each resource.
        let new = self
            .flavors
            .iter()
            .filter(|(price, _)| *price < removed)
            .fold([0i64; 2], |m, (_, c)| [m[0].max(c[0]), m[1].max(c[1])]);
        self.cannot_fit(&names, &moving, new)
    }
}

/// One copy of the snapshot for all the trials of a search: each trial edits it into the view
/// [`without`] builds (its nodes taken out, their claims deleting, their pods pending) and puts
/// it back afterwards, instead of copying the whole snapshot per trial.
pub(super) struct Scratch {
    work: Snapshot,
}

impl Scratch {
    pub(super) fn new(snapshot: &Snapshot) -> Scratch {
        Scratch {
            work: snapshot.clone(),
        }
    }

    /// Runs `f` on the snapshot as if `remove` were gone (exactly [`without`]'s view: the same
    /// nodes in the same order, the same pods moved), then restores it.
    pub(super) fn without<R>(
        &mut self,
        remove: &[Candidate],
        f: impl FnOnce(&Snapshot, &[usize]) -> R,
    ) -> R {
        let view = &mut self.work;
        let names: std::collections::BTreeSet<&str> =
            remove.iter().map(|c| c.node.as_str()).collect();
        let mut taken: Vec<(usize, crate::model::snapshot::NodeRecord)> = Vec::new();
        let mut i = 0;
        while i < view.nodes.len() {
            if names.contains(view.nodes[i].name.as_str()) {
                // Recorded at its index among the nodes before it, so reinserting in order
                // restores the same sequence.
                taken.push((i + taken.len(), view.nodes.remove(i)));
            } else {
                i += 1;
            }
        }
        let mut marked = Vec::new();
        for (k, c) in view.nodeclaims.iter_mut().enumerate() {
            if !c.deleting && remove.iter().any(|r| r.claim == c.name) {
                c.deleting = true;
                marked.push(k);
            }
        }
        let mut moved = Vec::new();
        let mut originals = Vec::new();
        for (i, slot) in view.pods.iter_mut().enumerate() {
            if slot.node_name.as_deref().is_some_and(|n| names.contains(n)) {
                originals.push((i, slot.clone()));
                let p = std::sync::Arc::make_mut(slot);
                if p.daemon {
                    p.terminal = true;
                } else {
                    p.node_name = None;
                    p.marked_unschedulable = true;
                    moved.push(i);
                }
            }
        }
        let out = f(view, &moved);
        for (i, p) in originals {
            view.pods[i] = p;
        }
        for k in marked {
            view.nodeclaims[k].deleting = false;
        }
        for (i, n) in taken {
            view.nodes.insert(i, n);
        }
        out
    }
}
