//! The kube-scheduler stand-in of the simulated cluster: pending pods to the Ready node with
//! the most free room among those the strategies' fit rules accept.

use super::*;

impl SimCluster {
    /// Runs the kube-scheduler stand-in if anything changed since it last ran.
    pub(crate) fn schedule(&mut self) {
        if !std::mem::take(&mut self.sched_dirty) {
            return;
        }
        let pending: Vec<usize> = (0..self.snap.pods.len())
            .filter(|&i| self.snap.pods[i].is_pending())
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut order = pending;
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&self.snap.pods[a], &self.snap.pods[b]);
            pa.created
                .cmp(&pb.created)
                .then_with(|| pa.demand.key().cmp(&pb.demand.key()))
        });
        let mut binds: Vec<(usize, String)> = Vec::new();
        let mut unschedulable: Vec<usize> = Vec::new();
        {
            let snap = &self.snap;
            let mut state = ClusterState::new(snap, &[]);
            let mut alloc: Vec<(i64, i64)> = Vec::new();
            for pn in state.nodes.iter_mut() {
                if let NodeOrigin::Existing(ni) = pn.origin {
                    let n = &snap.nodes[ni];
                    // The scheduler sees the real taints (the strategies' view forgives the
                    // ones an initializing node is about to lose).
                    pn.taints = n.taints.clone();
                    pn.cordoned = n.unschedulable
                        || n.ready != Some(true)
                        || self.deleting_nodes.contains(&n.name);
                    alloc.push((
                        n.allocatable.cpu_millis.max(1),
                        n.allocatable.memory_bytes.max(1),
                    ));
                } else {
                    alloc.push((1, 1));
                }
            }
            for p in order {
                let best = (0..state.nodes.len())
                    .filter(|&n| state.can_place(p, n))
                    .max_by_key(|&n| {
                        let f = &state.nodes[n].free;
                        let (cpu, mem) = alloc[n];
                        let score = i128::from(f.cpu_millis) * 1_000_000 / i128::from(cpu)
                            + i128::from(f.memory_bytes) * 1_000_000 / i128::from(mem);
                        (score, Reverse(n))
                    });
                match best {
                    Some(n) => {
                        state.place(p, n);
                        binds.push((p, state.nodes[n].name.clone()));
                    }
                    None => unschedulable.push(p),
                }
            }
        }
        let start = self.lat.pod_start;
        for (p, node) in binds {
            let pod = std::sync::Arc::make_mut(&mut self.snap.pods[p]);
            pod.node_name = Some(node.clone());
            pod.marked_unschedulable = false;
            let k = pod.demand.key();
            self.last_pod_event.insert(node.clone(), self.now);
            self.push(self.now + start, Event::PodRunning(k, node));
            self.changed = true;
        }
        for p in unschedulable {
            if !self.snap.pods[p].marked_unschedulable {
                std::sync::Arc::make_mut(&mut self.snap.pods[p]).marked_unschedulable = true;
                self.changed = true;
            }
        }
    }
}
