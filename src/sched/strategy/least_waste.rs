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
pub struct LeastWaste;

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
        loop {
            let mut best: Option<Estimate> = None;
            for (o, offering) in offerings.iter().enumerate() {
                let room = budget.room(offering);
                if room == 0 {
                    continue;
                }
                let mut trial = state.clone();
                let (nodes, pods) = first_fit_decreasing(&mut trial, offering, o, &rest, room);
                if pods.is_empty() {
                    continue;
                }
                let score = waste_score(snapshot, offering, nodes, &pods);
                // Ties: Cluster Autoscaler picks at random among the best; we take input order.
                if best.as_ref().is_none_or(|b| score < b.score) {
                    best = Some(Estimate {
                        offering: o,
                        nodes,
                        pods,
                        score,
                    });
                }
            }
            let Some(choice) = best else { break };
            let offering = &offerings[choice.offering];
            let (nodes, pods) = first_fit_decreasing(
                &mut state,
                offering,
                choice.offering,
                &rest,
                budget.room(offering),
            );
            debug_assert_eq!((nodes, pods.len()), (choice.nodes, choice.pods.len()));
            for _ in 0..nodes {
                budget.take(offering);
            }
            rest.retain(|p| !pods.contains(p));
        }
        finish(StrategyName::LeastWaste, &state, &budget, &offerings, rest)
    }
}

/// Cluster Autoscaler's binpacking estimate for one node group: pods in order, each onto the
/// first new node of the group that fits, opening one (up to `room`) when none does.
fn first_fit_decreasing(
    state: &mut ClusterState,
    o: &Offering,
    index: usize,
    pods: &[usize],
    room: i64,
) -> (usize, Vec<usize>) {
    let mut opened: Vec<usize> = Vec::new();
    let mut placed = Vec::new();
    for &p in pods {
        if let Some(&n) = opened.iter().find(|&&n| state.can_place(p, n)) {
            state.place(p, n);
            placed.push(p);
            continue;
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
