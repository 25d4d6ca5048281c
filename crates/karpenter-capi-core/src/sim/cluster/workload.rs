//! The trace's workloads in the simulated cluster: pods created and removed as the trace says,
//! and evictions.

use super::*;

impl SimCluster {
    pub(super) fn trace_step(&mut self, i: usize) {
        let Some(step) = self.trace.steps.get(i).copied() else {
            return;
        };
        let first_wave = Some(step.at) == self.first_step_at;
        let w = step.workload;
        let current: Vec<String> = self.workload_pods(w);
        match step.change {
            Change::Scale(n) => {
                let have = current.len() as i64;
                if n > have {
                    for _ in have..n {
                        self.create_pod(w, first_wave);
                    }
                } else if n < have {
                    // A ReplicaSet removes unscheduled pods first, then the newest.
                    let mut victims: Vec<(bool, Timestamp, String)> = self
                        .snap
                        .pods
                        .iter()
                        .filter(|p| self.workload_of.get(&p.demand.key()) == Some(&w))
                        .map(|p| {
                            (
                                p.node_name.is_some(),
                                p.created.unwrap_or(self.base),
                                p.demand.key(),
                            )
                        })
                        .collect();
                    victims.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
                    for (_, _, k) in victims.into_iter().take((have - n) as usize) {
                        self.remove_pod(&k);
                    }
                }
            }
            Change::Add { count, lifetime } => {
                let created: Vec<String> =
                    (0..count).map(|_| self.create_pod(w, first_wave)).collect();
                if let Some(l) = lifetime {
                    for k in &created {
                        self.expiry.insert(k.clone(), self.now + l);
                    }
                    self.push(self.now + l, Event::Expire(created));
                }
            }
        }
        // Steps at the same time as the first belong to the first wave.
        let next_in_first_wave = self
            .trace
            .steps
            .get(i + 1)
            .is_some_and(|s| Some(s.at) == self.first_step_at);
        if first_wave && !next_in_first_wave {
            self.rec.close_first_wave();
        }
        self.check_load();
    }

    pub(super) fn check_load(&mut self) {
        let gone = self.workload_of.is_empty();
        self.rec.load(self.now, gone);
    }

    fn workload_pods(&self, w: usize) -> Vec<String> {
        self.workload_of
            .iter()
            .filter(|(_, x)| **x == w)
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn create_pod(&mut self, w: usize, first_wave: bool) -> String {
        let n = self.next_pod[w];
        self.next_pod[w] += 1;
        let name = format!("{}-{}", self.trace.workloads[w].name, n);
        let mut demand = self.templates[w].clone();
        demand.name = name;
        demand.namespace = self.trace.workloads[w].namespace.clone();
        let k = demand.key();
        self.snap.pods.push(std::sync::Arc::new(PodRecord {
            demand: demand.into(),
            node_name: None,
            marked_unschedulable: false,
            nominated: false,
            daemon: false,
            terminal: false,
            terminating: false,
            deleted_at: None,
            not_ready: false,
            grace_seconds: None,
            mirror: false,
            uid: Some(format!("sim-{}", k)),
            gated: false,
            owner: Some(format!("ReplicaSet/{}", self.trace.workloads[w].name)),
            created: Some(self.ts(self.now)),
            annotations: Default::default(),
            priority_class: None,
            priority: None,
            phase: Some("Pending".to_string()),
            containers: Default::default(),
            started: None,
        }));
        self.workload_of.insert(k.clone(), w);
        self.rec.alive(self.now, self.workload_of.len());
        self.rec.pod_created(self.now, &k, first_wave);
        self.touch();
        k
    }

    /// Deletes a pod (its workload scaled down or its lifetime ended).
    pub(crate) fn remove_pod(&mut self, pod: &str) {
        let Some(i) = self.snap.pods.iter().position(|p| p.demand.key() == pod) else {
            return;
        };
        let p = self.snap.pods.remove(i);
        if let Some(node) = p.node_name.clone() {
            self.last_pod_event.insert(node, self.now);
        }
        self.workload_of.remove(pod);
        self.expiry.remove(pod);
        self.rec.alive(self.now, self.workload_of.len());
        self.touch();
    }

    /// Evicts a pod: it goes, and its workload creates a replacement (a standalone pod is
    /// simply pending again; a DaemonSet pod just goes). The replacement inherits the evicted
    /// pod's expiry time: the trace's job still ends when it would have (its remaining lifetime).
    pub(crate) fn evict_pod(&mut self, pod: &str) {
        let Some(p) = self.snap.pods.iter_mut().find(|p| p.demand.key() == pod) else {
            return;
        };
        if p.daemon {
            // The DaemonSet controller does not put it back on a node tainted
            // `karpenter.sh/disrupted:NoSchedule` (a pod tolerating that is never evicted), and a
            // DaemonSet pod is no pod event (core `nodeclaim/podevents`).
            self.snap.pods.retain(|p| p.demand.key() != pod);
            self.touch();
            return;
        }
        self.rec.evictions += 1;
        match self.workload_of.get(pod).copied() {
            Some(w) => {
                let expires = self.expiry.get(pod).copied();
                self.remove_pod(pod);
                let replacement = self.create_pod(w, false);
                if let Some(at) = expires {
                    self.expiry.insert(replacement.clone(), at);
                    self.push(at.max(self.now), Event::Expire(vec![replacement]));
                }
            }
            None => {
                let p = std::sync::Arc::make_mut(p);
                if let Some(node) = p.node_name.take() {
                    self.last_pod_event.insert(node, self.now);
                }
                p.phase = Some("Pending".to_string());
                p.marked_unschedulable = false;
                self.touch();
            }
        }
    }
}
