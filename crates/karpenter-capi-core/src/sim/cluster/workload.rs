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
                    for k in self
                        .scale_down_order(w)
                        .into_iter()
                        .take((have - n) as usize)
                    {
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

    /// The pods of workload `w` in the order its ReplicaSet deletes them on a scale-down, as
    /// Kubernetes ranks them (`controller.ActivePodsWithRanks`, with the pods' ranks from
    /// `getPodsRankedByRelatedPodsOnSameNode` and `LogarithmicScaleDown`, on by default since
    /// 1.22): unscheduled first, then not yet running, then those sharing a node with more pods
    /// of the workload, then the most recently started by powers of two of the time since
    /// (`logarithmicRankDiff`), ties by UID (the newest first among pods not running); the simulated pods have no deletion cost, readiness
    /// apart from running, or restarts. So the pods a replacement just took (the newest, but
    /// alone on their node) are not the first to go while other nodes are crowded.
    pub(super) fn scale_down_order(&self, w: usize) -> Vec<String> {
        let now = self.ts(self.now);
        let pods: Vec<&PodRecord> = self
            .snap
            .pods
            .iter()
            .filter(|p| self.workload_of.get(&p.demand.key()) == Some(&w))
            .map(|p| &**p)
            .collect();
        let mut on_node: HashMap<&str, usize> = HashMap::new();
        for node in pods.iter().filter_map(|p| p.node_name.as_deref()) {
            *on_node.entry(node).or_insert(0) += 1;
        }
        // floor(log2(nanoseconds since it started)), as upstream buckets the ready time.
        let bucket = |started: Timestamp| {
            let ns = now.as_nanosecond() - started.as_nanosecond();
            if ns > 0 { ns.ilog2() as i64 } else { -1 }
        };
        type Rank<'a> = (
            bool,
            bool,
            Reverse<usize>,
            i64,
            Option<&'a str>,
            Reverse<Timestamp>,
        );
        let mut ranked: Vec<(Rank<'_>, String)> = pods
            .iter()
            .map(|p| {
                let running = p.phase.as_deref() == Some("Running");
                let rank = (
                    p.node_name.is_some(),
                    running,
                    Reverse(
                        p.node_name
                            .as_deref()
                            .and_then(|n| on_node.get(n))
                            .copied()
                            .unwrap_or(0),
                    ),
                    p.started.filter(|_| running).map_or(-1, bucket),
                    // Started pods in one bucket: by UID; the others: the newest first.
                    p.uid.as_deref().filter(|_| running),
                    Reverse(p.created.unwrap_or(self.base)),
                );
                (rank, p.demand.key())
            })
            .collect();
        ranked.sort();
        ranked.into_iter().map(|(_, k)| k).collect()
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
            // The simulator's pods set no limits.
            limits: Default::default(),
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

#[cfg(test)]
mod tests {
    use super::super::super::generated::{self, Shape};
    use super::*;

    #[test]
    fn a_scale_down_takes_the_pods_kubernetes_ranks_first() {
        let trace = generated::generate(Shape::Ramp, 2, 24).unwrap();
        let scenario = generated::scenario().unwrap();
        let mut c = SimCluster::new(
            &scenario,
            &trace,
            super::super::Mode {
                karpenter: true,
                claim_finalizer: true,
            },
        )
        .unwrap();
        c.now = 3_600_000;
        let keys: Vec<String> = (0..7).map(|_| c.create_pod(0, false)).collect();
        // (node, seconds since it started; None: bound but not running yet).
        let placed: [(Option<&str>, Option<i64>); 7] = [
            (Some("crowded"), Some(3000)),
            (Some("crowded"), Some(100)),
            (Some("crowded"), Some(3000)),
            (Some("alone"), Some(10)),
            (None, None),
            (Some("alone-too"), None),
            (Some("pair"), Some(600)),
        ];
        let now = c.ts(c.now);
        for (i, (node, started)) in placed.into_iter().enumerate() {
            let p = std::sync::Arc::make_mut(&mut c.snap.pods[i]);
            p.node_name = node.map(str::to_string);
            if let Some(ago) = started {
                p.phase = Some("Running".into());
                p.started = Some(now - jiff::SignedDuration::from_secs(ago));
            }
        }
        // web-7 shares "pair" with web-6, running for 700 s.
        let last = c.create_pod(0, false);
        let p = std::sync::Arc::make_mut(c.snap.pods.last_mut().unwrap());
        p.node_name = Some("pair".into());
        p.phase = Some("Running".into());
        p.started = Some(now - jiff::SignedDuration::from_secs(700));
        assert_eq!(last, "default/web-7");
        let order = c.scale_down_order(0);
        let names: Vec<&str> = order
            .iter()
            .map(|k| k.trim_start_matches("default/"))
            .collect();
        // Unscheduled, then bound but not running, then the crowded node's (the one started
        // 100 s ago first, then the two of 3000 s by UID), then the pair's (600 s and 700 s
        // fall in one power-of-two bucket: by UID), then the pod alone on its node, though it
        // is the most recently started.
        assert_eq!(
            names,
            [
                "web-4", "web-5", "web-1", "web-0", "web-2", "web-6", "web-7", "web-3"
            ]
        );
        assert_eq!(keys[0], "default/web-0");
    }
}
