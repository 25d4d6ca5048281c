//! The pure reconcile core: snapshot + now + config -> a [`Plan`] of [`Action`]s, and the API
//! writes each action implies. No I/O, no clock: `now` is an argument.
//!
//! # Guarantees
//! - Idempotent: planning the snapshot that results from applying a plan yields no new
//!   NodeClaims and no replica change; a converged cluster yields an empty plan.
//! - Declarative scaling: replicas are derived from the NodeClaims, never incremented.
//! - Replicas are never lowered without first marking the exact Machines to remove.

pub mod action;
pub mod budget;
pub mod consolidation;
pub mod disruption;
pub mod drift;
pub mod lifecycle;
pub mod provision;
pub mod scale;
pub mod status;
pub mod write;

use jiff::Timestamp;
use serde::Serialize;

pub use action::Action;

use crate::model::duration::GoDuration;
use crate::model::snapshot::Snapshot;

/// Controller settings (the `run` flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Close a batch after this long without a new pending pod.
    pub batch_idle: GoDuration,
    /// Close a batch after this long at most.
    pub batch_max: GoDuration,
    /// Delete a NodeClaim not launched within this long.
    pub launch_timeout: GoDuration,
    /// Delete a NodeClaim not registered within this long.
    pub registration_timeout: GoDuration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            batch_idle: GoDuration(1),
            batch_max: GoDuration(10),
            launch_timeout: GoDuration(300),
            registration_timeout: GoDuration(900),
        }
    }
}

/// What one reconcile pass wants changed, in order. Empty on a converged cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// The actions.
    pub actions: Vec<Action>,
    /// Things worth telling the operator that are not changes (pods that fit nowhere, batching).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rest of each disruption under way, in order: what later passes do once drains
    /// finish (shown so a decision reads complete; never executed from this plan).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Action>,
    /// Status the controller reports (claim conditions, hash stamps, pod event times, NodePool
    /// status), applied after the actions. Never capacity: a cluster whose only plan is status
    /// is converged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<Action>,
}

/// Plans one reconcile pass: node classes Ready; liveness (timeouts delete the claim and mark its
/// exact Machine); disruption (empty, expired, drifted nodes); binding and launch; registration
/// and initialization; provisioning of new NodeClaims for provisionable pods; then
/// MachineDeployment replicas.
pub fn plan(snapshot: &Snapshot, now: Timestamp, config: &Config) -> Plan {
    let mut actions = lifecycle::node_classes(snapshot);
    let live = lifecycle::liveness(snapshot, now, config);
    let mut removals = scale::Removals {
        claims: live.deleted_claims.clone(),
        machines: live.marked_machines.clone(),
    };
    actions.extend(live.actions);
    let disrupted = disruption::disrupt(snapshot, now, &removals.claims);
    removals.claims.extend(disrupted.deleted_claims);
    removals.machines.extend(disrupted.marked_machines);
    let pending = disrupted.pending;
    actions.extend(disrupted.actions);
    actions.extend(disruption::release_finalizers(snapshot));
    actions.extend(lifecycle::bind_and_launch(snapshot, &removals.claims));
    actions.extend(lifecycle::register_and_initialize(
        snapshot,
        &removals.claims,
    ));

    // Claims deleted by this pass no longer hold room for pending pods.
    let view;
    let provision_view = if removals.claims.is_empty() {
        snapshot
    } else {
        let mut v = snapshot.clone();
        for c in v
            .nodeclaims
            .iter_mut()
            .filter(|c| removals.claims.contains(&c.name))
        {
            c.deleting = true;
        }
        view = v;
        &view
    };
    let (created, mut notes) = provision::provision(provision_view, now, config);
    notes.extend(disrupted.notes);
    let scaling = scale::scale(snapshot, &removals, &created);
    actions.extend(created);
    actions.extend(scaling);
    let status = status::status(snapshot, now, &removals.claims);
    Plan {
        actions,
        notes,
        pending,
        status,
    }
}
