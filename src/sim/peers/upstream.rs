//! Upstream karpenter-capi: Karpenter core with the Cluster API provider, simulated by its loop.
//!
//! - Provisioning: the same batching window (1 s idle, 10 s max); the `karpenter-capi` strategy
//!   (Karpenter's packing, every instance type priced 0, the provider's first name) decides the
//!   NodeClaims, created as Karpenter creates them.
//! - Launch: the provider's `Create` scales the MachineDeployment by the deficit of unclaimed
//!   Machines (karpenter-provider-cluster-api `pkg/batcher/create.go`) — here `upstreamLaunch`
//!   after the claim, the delay the seed report observed — then binds a Machine and launches
//!   the claim once the Machine has a providerID.
//! - Registration and initialization are event-driven, as Karpenter's lifecycle controller.
//! - Disruption: `WhenEmpty` only — the disruption controller polls every 10 s
//!   (karpenter `pkg/controllers/disruption/controller.go`), a node empty since its last pod
//!   event for `consolidateAfter` is validated for 15 s (`consolidation.go`), then tainted and
//!   its claim deleted; the provider marks its Machine and decrements replicas
//!   (`pkg/batcher/delete.go`); the claim goes once the Machine is gone.

use std::collections::{BTreeMap, BTreeSet};

use super::{Agent, at, batch_closes, earliest};
use crate::controller::action::{Action, DISRUPTED_TAINT_KEY};
use crate::controller::lifecycle::{bind_and_launch, bound_machine, mark, register_and_initialize};
use crate::controller::provision::{batch_ready, create_node_claim};
use crate::controller::{Config, scale::current_replicas};
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{Strategy, karpenter_capi::KarpenterCapi};
use crate::sim::apply::apply_all;
use crate::sim::cluster::{Mode, SimCluster};
use crate::sim::{Ms, ceil_to};

/// Karpenter's disruption polling period.
pub const POLL: Ms = 10_000;
/// Karpenter's consolidation command validation delay.
pub const VALIDATION: Ms = 15_000;

/// The upstream peer.
#[derive(Default)]
pub struct Upstream {
    config: Config,
    first_change: Option<Ms>,
    debounce: Option<Ms>,
    /// Claims waiting for the provider's `Create`, with when it runs.
    launches: Vec<(Ms, String)>,
    /// Claims the provider has launched (or is binding).
    released: BTreeSet<String>,
    /// Empty-node candidates under validation: claim → when the command executes.
    validating: BTreeMap<String, Ms>,
    next_poll: Option<Ms>,
    passes: usize,
}

impl Upstream {
    fn rearm(&self, c: &mut SimCluster) {
        let launch = self.launches.iter().map(|(t, _)| *t).min();
        let validate = self.validating.values().copied().min();
        c.set_wake(earliest([self.debounce, launch, validate, self.next_poll]));
    }

    /// Karpenter's lifecycle reconcilers: bind, launch, register, initialize the claims the
    /// provider has taken on.
    fn lifecycle(&mut self, c: &mut SimCluster) {
        let skip: BTreeSet<String> = c
            .snap
            .nodeclaims
            .iter()
            .filter(|x| !self.released.contains(&x.name))
            .map(|x| x.name.clone())
            .collect();
        let mut actions = bind_and_launch(&c.snap, &skip);
        actions.extend(register_and_initialize(&c.snap, &skip));
        if !actions.is_empty() {
            apply_all(c, &actions);
        }
    }

    fn provision(&mut self, c: &mut SimCluster) {
        let pods: Vec<usize> = (0..c.snap.pods.len())
            .filter(|&i| c.snap.pods[i].is_provisionable())
            .collect();
        if pods.is_empty() || !batch_ready(&c.snap, &pods, c.ts(c.now), &self.config) {
            return;
        }
        let placement = KarpenterCapi.plan(&c.snap, &pods);
        let actions: Vec<Action> = placement
            .new_nodes
            .iter()
            .filter_map(|n| {
                let pool = c
                    .snap
                    .nodepools
                    .iter()
                    .find(|p| p.name == n.offering.node_pool)?;
                Some(create_node_claim(&c.snap, pool, n, "Provisioning"))
            })
            .collect();
        let before: BTreeSet<String> = c.snap.nodeclaims.iter().map(|x| x.name.clone()).collect();
        apply_all(c, &actions);
        let due = c.now + c.lat.upstream_launch;
        for claim in &c.snap.nodeclaims {
            if !before.contains(&claim.name) {
                self.launches.push((due, claim.name.clone()));
            }
        }
    }

    /// The provider's `Create` for the claims due: raise replicas by the deficit of unclaimed
    /// Machines, per MachineDeployment, then bind.
    fn launch_due(&mut self, c: &mut SimCluster) {
        let now = c.now;
        let (due, later): (Vec<_>, Vec<_>) = self.launches.drain(..).partition(|(t, _)| *t <= now);
        self.launches = later;
        let mut per_md: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, name) in due {
            if let Some(claim) = c
                .snap
                .nodeclaims
                .iter()
                .find(|x| x.name == name && !x.deleting)
                && let Some(md) = c.snap.claim_machine_deployment(claim)
            {
                per_md.entry(md).or_default().push(name);
            }
        }
        let mut actions = Vec::new();
        for (md_key, claims) in &per_md {
            let referenced: BTreeSet<&String> = c
                .snap
                .nodeclaims
                .iter()
                .filter_map(|x| x.machine.as_ref())
                .collect();
            let unclaimed = c
                .snap
                .machines
                .iter()
                .filter(|m| m.deployment_key().as_deref() == Some(md_key.as_str()))
                .filter(|m| m.is_live() && !m.claimed && !referenced.contains(&m.key()))
                .count() as i64
                + c.creating(md_key);
            let deficit = claims.len() as i64 - unclaimed;
            if deficit > 0
                && let Some(md) = c
                    .snap
                    .machine_deployments
                    .iter()
                    .find(|m| &m.key() == md_key)
            {
                let current = current_replicas(md);
                actions.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{md_key}"),
                    machine_deployment: md_key.clone(),
                    from: current,
                    replicas: current + deficit,
                    rollback_machines: Vec::new(),
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
            self.released.extend(claims.iter().cloned());
        }
        apply_all(c, &actions);
    }

    /// Empty nodes of initialized claims, with when they became eligible for `WhenEmpty`.
    fn empty_candidates(&self, c: &SimCluster) -> Vec<(String, Ms)> {
        let mut out = Vec::new();
        for claim in c.snap.nodeclaims.iter().filter(|x| !x.deleting) {
            if !claim.condition_true("Initialized") {
                continue;
            }
            let Some(node) = claim.node_name.as_ref() else {
                continue;
            };
            if c.snap
                .pods
                .iter()
                .any(|p| !p.daemon && p.node_name.as_ref() == Some(node))
            {
                continue;
            }
            let Some(after) = claim
                .node_pool
                .as_ref()
                .and_then(|p| c.snap.nodepools.iter().find(|np| &np.name == p))
                .and_then(super::consolidate_after)
            else {
                continue;
            };
            let initialized = claim
                .conditions
                .iter()
                .find(|x| x.type_ == "Initialized")
                .and_then(|x| x.last_transition_time)
                .map_or(0, |t| at(c, t));
            let last = c.last_pod_event.get(node).copied().unwrap_or(0);
            out.push((claim.name.clone(), initialized.max(last) + after));
        }
        out
    }

    fn poll(&mut self, c: &mut SimCluster) {
        let now = c.now;
        for (claim, eligible) in self.empty_candidates(c) {
            if eligible <= now {
                self.validating.entry(claim).or_insert(now + VALIDATION);
            }
        }
    }

    fn execute_due(&mut self, c: &mut SimCluster) {
        let now = c.now;
        let due: Vec<String> = self
            .validating
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(k, _)| k.clone())
            .collect();
        let still_empty: BTreeSet<String> = self
            .empty_candidates(c)
            .into_iter()
            .filter(|(_, eligible)| *eligible <= now)
            .map(|(k, _)| k)
            .collect();
        let mut actions = Vec::new();
        let mut per_md: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in due {
            self.validating.remove(&name);
            if !still_empty.contains(&name) {
                continue;
            }
            let Some(claim) = c.snap.nodeclaims.iter().find(|x| x.name == name) else {
                continue;
            };
            if let Some(node) = &claim.node_name {
                actions.push(Action::TaintNode {
                    target: format!("Node/{node}"),
                    node: node.clone(),
                    taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
                    reason: "Empty".to_string(),
                    saving_per_hour: crate::model::flavor::Price(0),
                    node_claim: Some(name.clone()),
                    since: c.ts(now).to_string(),
                    replacements: 0,
                });
            }
            actions.push(Action::DeleteNodeClaim {
                target: format!("NodeClaim/{name}"),
                node_claim: name.clone(),
                reason: "Empty".to_string(),
                message: "disrupting node(s): empty".to_string(),
                machine: claim.machine.clone(),
                add_finalizer: false,
            });
            // The provider's Delete: mark that Machine; replicas drop by the batch's count.
            if let Some(m) = bound_machine(&c.snap, claim) {
                actions.push(mark(m, Some(&name), "Empty"));
                if let Some(md) = m.deployment_key() {
                    per_md.entry(md).or_default().push(m.key());
                }
            }
        }
        for (key, machines) in per_md {
            if let Some(md) = c.snap.machine_deployments.iter().find(|d| d.key() == key) {
                let current = current_replicas(md);
                actions.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{key}"),
                    machine_deployment: key.clone(),
                    from: current,
                    replicas: (current - machines.len() as i64).max(0),
                    rollback_machines: machines,
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
        }
        apply_all(c, &actions);
    }

    fn schedule_poll(&mut self, c: &SimCluster) {
        let now = c.now;
        self.next_poll = self
            .empty_candidates(c)
            .into_iter()
            .filter(|(k, _)| !self.validating.contains_key(k))
            .map(|(_, eligible)| ceil_to(eligible.max(now + 1), POLL))
            .min();
    }
}

impl Agent for Upstream {
    fn strategy(&self) -> StrategyName {
        StrategyName::KarpenterCapi
    }

    fn mode(&self) -> Mode {
        Mode {
            karpenter: true,
            claim_finalizer: true,
        }
    }

    fn on_change(&mut self, c: &mut SimCluster) {
        self.lifecycle(c);
        if c.snap.pods.iter().any(|p| p.is_provisionable()) {
            let first = *self.first_change.get_or_insert(c.now);
            let idle = self.config.batch_idle.as_secs_i64() * 1000;
            let max = self.config.batch_max.as_secs_i64() * 1000;
            let window = batch_closes(c, idle, max).unwrap_or(c.now);
            self.debounce = Some(window.max(c.now).min(first + max).max(c.now));
        }
        self.schedule_poll(c);
        self.rearm(c);
    }

    fn on_wake(&mut self, c: &mut SimCluster) {
        let now = c.now;
        self.passes += 1;
        if self.debounce.is_some_and(|t| t <= now) {
            self.debounce = None;
            self.first_change = None;
            self.provision(c);
        }
        if self.launches.iter().any(|(t, _)| *t <= now) {
            self.launch_due(c);
            self.lifecycle(c);
        }
        if self.next_poll.is_some_and(|t| t <= now) {
            self.poll(c);
        }
        if self.validating.values().any(|t| *t <= now) {
            self.execute_due(c);
        }
        self.released
            .retain(|name| c.snap.nodeclaims.iter().any(|x| &x.name == name));
        self.schedule_poll(c);
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}
