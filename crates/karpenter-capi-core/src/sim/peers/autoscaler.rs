//! Cluster Autoscaler with its clusterapi provider and the least-waste expander, simulated by
//! its documented loop: a scan every 10 s (`--scan-interval`); scale-up of the node groups the
//! `least-waste` strategy picks for unschedulable pods, counting upcoming nodes; scale-down of
//! nodes under 50 % utilization (`--scale-down-utilization-threshold`, the larger of cpu and
//! memory requests over allocatable) whose pods fit elsewhere, once unneeded for 10 min
//! (`--scale-down-unneeded-time`) and not within 10 min of a scale-up
//! (`--scale-down-delay-after-add`): drain, mark the exact Machine, replicas − 1. Scans with
//! nothing new and no deadline due are skipped.

use std::collections::{BTreeMap, BTreeSet};

use super::{Agent, earliest};
use crate::controller::action::Action;
use crate::controller::lifecycle::mark;
use crate::controller::scale::current_replicas;
use crate::model::snapshot::{NodeRecord, Snapshot};
use crate::model::taints::is_joining;
use crate::sched::catalog;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{Strategy, least_waste::LeastWaste, place_on_existing, queue_order};
use crate::sim::apply::apply_all;
use crate::sim::cluster::{Mode, SimCluster};
use crate::sim::{Ms, ceil_to};
use crate::vocab::keys;

/// `--scan-interval`.
pub(crate) const SCAN: Ms = 10_000;
/// Where in its period the scan loop runs: its phase is unknown, so the middle of the interval.
pub(crate) const PHASE: Ms = 5_000;
/// `--scale-down-unneeded-time`.
pub(crate) const UNNEEDED: Ms = 600_000;
/// `--scale-down-delay-after-add`.
pub(crate) const DELAY_AFTER_ADD: Ms = 600_000;
/// `--scale-down-utilization-threshold`, in per-mille.
pub(crate) const THRESHOLD_PERMILLE: i64 = 500;

/// The Cluster Autoscaler peer.
#[derive(Default)]
pub(crate) struct ClusterAutoscaler {
    scan_at: Option<Ms>,
    deadline: Option<Ms>,
    last_scale_up: Option<Ms>,
    unneeded: BTreeMap<String, Ms>,
    last_scan: Option<Ms>,
    passes: usize,
}

/// The first scan at or after `t`.
fn next_scan(t: Ms) -> Ms {
    ceil_to(t - PHASE, SCAN) + PHASE
}

impl ClusterAutoscaler {
    fn rearm(&self, c: &mut SimCluster) {
        c.set_wake(earliest([self.scan_at, self.deadline.map(next_scan)]));
    }

    /// The cluster as CA's estimator sees it: Nodes still booting and Machines without a Node
    /// yet count as upcoming nodes of their group, ready for pods.
    fn view(c: &SimCluster) -> Snapshot {
        let mut view = c.snap.clone();
        for n in view.nodes.iter_mut() {
            n.taints.retain(|t| !is_joining(&t.key));
            n.ready = Some(true);
        }
        let offerings = catalog::bare_offerings(&c.snap);
        let mut upcoming = Vec::new();
        for m in c
            .snap
            .machines
            .iter()
            .filter(|m| !m.deleting && m.node_name.is_none())
        {
            let Some(md) = m.deployment_key() else {
                continue;
            };
            if let Some(o) = offerings.iter().find(|o| o.flavor.machine_deployment == md) {
                upcoming.push((m.name.clone(), o.clone()));
            }
        }
        for md in c.snap.all_members() {
            let key = md.key();
            if let Some(o) = offerings
                .iter()
                .find(|o| o.flavor.machine_deployment == key)
            {
                for i in 0..c.creating(&key) {
                    upcoming.push((format!("{}-upcoming-{i}", md.object.name()), o.clone()));
                }
            }
        }
        for (name, o) in upcoming {
            let mut labels = o.labels.clone();
            labels.insert(keys::HOSTNAME.to_string(), name.clone());
            view.nodes.push(NodeRecord {
                name,
                finalizers: Vec::new(),
                labels,
                annotations: Default::default(),
                taints: o.taints.clone(),
                allocatable: o.allocatable.clone(),
                capacity: o.flavor.capacity.clone(),
                provider_id: None,
                ready: Some(true),
                unschedulable: false,
                created: None,
                deleting: false,
                deleted_at: None,
            });
        }
        view
    }

    fn scale_up(&mut self, c: &mut SimCluster) {
        if !c.snap.pods.iter().any(|p| p.is_provisionable()) {
            return;
        }
        let view = Self::view(c);
        let pending: Vec<usize> = (0..view.pods.len())
            .filter(|&i| view.pods[i].is_provisionable())
            .collect();
        let placement = LeastWaste.plan(&view, &pending);
        let mut per_md: BTreeMap<String, i64> = BTreeMap::new();
        for n in &placement.new_nodes {
            *per_md
                .entry(n.offering.flavor.machine_deployment.clone())
                .or_insert(0) += 1;
        }
        let mut actions = Vec::new();
        for (key, add) in per_md {
            if let Some(md) = c.snap.machine_deployments.iter().find(|m| m.key() == key) {
                let current = current_replicas(md);
                actions.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{key}"),
                    machine_deployment: key.clone(),
                    from: current,
                    replicas: current + add,
                    rollback_machines: Vec::new(),
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
        }
        if !actions.is_empty() {
            self.last_scale_up = Some(c.now);
            apply_all(c, &actions);
        }
    }

    /// Ready nodes of autoscaled groups with their utilization (per-mille) and Machine.
    fn candidates(c: &SimCluster) -> Vec<(String, i64, String)> {
        let mut out = Vec::new();
        for m in c.snap.machines.iter().filter(|m| !m.deleting) {
            let Some(node) = m.node_name.as_ref() else {
                continue;
            };
            let Some(n) = c.snap.nodes.iter().find(|n| &n.name == node) else {
                continue;
            };
            if n.ready != Some(true) || n.unschedulable {
                continue;
            }
            let (mut cpu, mut mem) = (0i64, 0i64);
            for p in c
                .snap
                .pods
                .iter()
                .filter(|p| p.node_name.as_ref() == Some(node))
            {
                cpu += p.demand.requests.cpu_millis;
                mem += p.demand.requests.memory_bytes;
            }
            let util = (cpu * 1000 / n.allocatable.cpu_millis.max(1)).max(
                (i128::from(mem) * 1000 / i128::from(n.allocatable.memory_bytes.max(1))) as i64,
            );
            out.push((node.clone(), util, m.key()));
        }
        out
    }

    /// Whether a node's pods fit on the other ready nodes (not those being removed).
    fn movable(c: &SimCluster, node: &str, removing: &BTreeSet<String>) -> bool {
        let mut view = c.snap.clone();
        let mut moving = Vec::new();
        for (i, p) in view.pods.iter_mut().enumerate() {
            if !p.daemon && p.node_name.as_deref() == Some(node) {
                std::sync::Arc::make_mut(p).node_name = None;
                moving.push(i);
            }
        }
        if moving.is_empty() {
            return true;
        }
        let mut state = ClusterState::new(&view, &[]);
        for pn in state.nodes.iter_mut() {
            if let NodeOrigin::Existing(ni) = pn.origin {
                let n = &view.nodes[ni];
                pn.cordoned = n.name == node
                    || removing.contains(&n.name)
                    || n.unschedulable
                    || n.ready != Some(true);
            }
        }
        let queue = queue_order(&view, &moving);
        place_on_existing(&mut state, &queue).is_empty()
    }

    fn scale_down(&mut self, c: &mut SimCluster) {
        let now = c.now;
        let candidates = Self::candidates(c);
        let under: BTreeSet<&String> = candidates
            .iter()
            .filter(|(_, u, _)| *u < THRESHOLD_PERMILLE)
            .map(|(n, _, _)| n)
            .collect();
        self.unneeded.retain(|n, _| under.contains(n));
        let mut removing = BTreeSet::new();
        for (node, util, _) in &candidates {
            if *util >= THRESHOLD_PERMILLE {
                continue;
            }
            if Self::movable(c, node, &removing) {
                self.unneeded.entry(node.clone()).or_insert(now);
                removing.insert(node.clone());
            } else {
                self.unneeded.remove(node);
            }
        }
        let cooling = self
            .last_scale_up
            .is_some_and(|t| now - t < DELAY_AFTER_ADD);
        if cooling {
            let cooled = self.last_scale_up.map_or(0, |t| t + DELAY_AFTER_ADD);
            self.deadline = self
                .unneeded
                .values()
                .map(|t| (t + UNNEEDED).max(cooled))
                .min();
            return;
        }
        // Empty nodes go together; at most one non-empty node per scan.
        let mut actions = Vec::new();
        let mut drained_one = false;
        let due: Vec<(String, i64, String)> = candidates
            .into_iter()
            .filter(|(n, _, _)| self.unneeded.get(n).is_some_and(|t| now - t >= UNNEEDED))
            .collect();
        let mut per_md: BTreeMap<String, i64> = BTreeMap::new();
        for (node, _, mk) in due {
            let empty = !c
                .snap
                .pods
                .iter()
                .any(|p| !p.daemon && p.node_name.as_deref() == Some(node.as_str()));
            if !empty {
                if drained_one {
                    continue;
                }
                drained_one = true;
                c.drain(&node);
            }
            self.unneeded.remove(&node);
            if let Some(m) = c.snap.machines.iter().find(|m| m.key() == mk) {
                actions.push(mark(m, None, "ScaleDown"));
                if let Some(d) = m.deployment_key() {
                    *per_md.entry(d).or_insert(0) += 1;
                }
            }
        }
        apply_all(c, &actions);
        let mut scales = Vec::new();
        for (key, remove) in per_md {
            if let Some(md) = c.snap.machine_deployments.iter().find(|m| m.key() == key) {
                let current = current_replicas(md);
                scales.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{key}"),
                    machine_deployment: key.clone(),
                    from: current,
                    replicas: (current - remove).max(0),
                    rollback_machines: Vec::new(),
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
        }
        apply_all(c, &scales);
        self.deadline = self.unneeded.values().map(|t| t + UNNEEDED).min();
    }
}

impl Agent for ClusterAutoscaler {
    fn strategy(&self) -> StrategyName {
        StrategyName::LeastWaste
    }

    fn mode(&self) -> Mode {
        Mode {
            karpenter: false,
            claim_finalizer: false,
        }
    }

    fn on_change(&mut self, c: &mut SimCluster) {
        let mut next = next_scan(c.now);
        if Some(next) == self.last_scan {
            next += SCAN;
        }
        self.scan_at = Some(self.scan_at.map_or(next, |s| s.min(next)).max(c.now));
        self.rearm(c);
    }

    fn on_wake(&mut self, c: &mut SimCluster) {
        self.passes += 1;
        self.scan_at = None;
        self.last_scan = Some(c.now);
        self.scale_up(c);
        self.scale_down(c);
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}
