//! The pure reconcile core: snapshot + now + config -> a [`Plan`] of [`Action`]s, and the API
//! writes each action implies. No I/O, no clock: `now` is an argument.
//!
//! # Guarantees
//! - Idempotent: planning the snapshot that results from applying a plan yields no new
//!   NodeClaims and no replica change; a converged cluster yields an empty plan.
//! - Declarative scaling: replicas are derived from the NodeClaims, never incremented.
//! - Replicas are never lowered without first marking the exact Machines to remove, and drop by
//!   at most the number marked in the same pass; never while Cluster API could pick another
//!   Machine (rollout, pause, a deletion in progress) or the view is stale.
//! - A Machine with a Node is removed only when its own NodeClaim is being deleted; one without
//!   a claim is adopted or left alone.
//! - A voluntary disruption drains a node only when its pods have a home on room that exists.

pub mod action;
pub(crate) mod adopt;
pub(crate) mod budget;
pub mod candidates;
pub(crate) mod clock;
pub mod command;
pub(crate) mod consistency;
pub(crate) mod consolidated;
pub(crate) mod consolidation;
pub(crate) mod disruption;
pub(crate) mod drain;
pub mod drift;
pub mod events;
pub(crate) mod fnv;
pub mod karpenter_metrics;
pub(crate) mod lifecycle;
pub(crate) mod pdb;
pub(crate) mod pod_flow;
pub(crate) mod provision;
pub(crate) mod rollout;
pub(crate) mod scale;
pub(crate) mod scope;
pub(crate) mod status;
pub(crate) mod termination;
pub mod termination_metrics;
pub mod write;

use crate::vocab::keys;
use jiff::Timestamp;
use serde::Serialize;

pub use action::Action;
pub use consolidated::ConsolidationMemo;
pub use consolidation::balanced;

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
    /// Whether some optimizer search of this pass (provisioning or a consolidation trial) hit
    /// its wall-clock safety net before its work budget: the plan then depends on the machine's
    /// speed. Normal inputs never do (budgets are counted in work, see `cost::engine`).
    #[serde(rename = "cutShort", skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// When a clock of the controller next changes a decision with nothing else changing
    /// (`clock::next_due`): `run` plans again then, not only at its resync.
    #[serde(skip)]
    pub next_due: Option<Timestamp>,
}

/// What provisioning sees: the claims this pass deletes as deleting, and every node being
/// disrupted or deleted (tainted this pass, or its claim deleting) as no room; the currently
/// reschedulable pods of deleting nodes and of `marked` ones (a command waiting on its
/// replacements) pending (core `provisioner.go` schedules the pods of deleting nodes;
/// `utils/pdb/pdb.go` IsCurrentlyReschedulable: not DaemonSet or mirror pods, no active
/// `do-not-disrupt`, no budget blocking them whatever it allows), so the room replacing them is
/// made, and kept, while they drain. None: nothing to change.
fn provisioning_view(
    snapshot: &Snapshot,
    deleted: &std::collections::BTreeSet<String>,
    tainted: &std::collections::BTreeSet<&str>,
    marked: &std::collections::BTreeSet<String>,
    now: Timestamp,
) -> Option<Snapshot> {
    // Every Node of a leaving claim leaves, not only the first: a claim can have two Nodes (the
    // same providerID registered twice), and termination drains each; mirrors core's
    // `nodeclaim.AllNodesForNodeClaim`, by which lifecycle finalize deletes all of them.
    let leaving_nodes: Vec<&crate::model::snapshot::NodeRecord> = snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.deleting || deleted.contains(&c.name))
        .flat_map(|c| {
            snapshot.nodes.iter().filter(move |n| {
                c.node_name.as_deref() == Some(n.name.as_str())
                    || (c.provider_id.is_some() && c.provider_id == n.provider_id)
            })
        })
        .collect();
    let leaving: std::collections::BTreeSet<String> = leaving_nodes
        .iter()
        .map(|n| n.name.clone())
        .chain(tainted.iter().map(|n| n.to_string()))
        .collect();
    if deleted.is_empty() && leaving.is_empty() && marked.is_empty() {
        return None;
    }
    let mut v = snapshot.clone();
    for c in v
        .nodeclaims
        .iter_mut()
        .filter(|c| deleted.contains(&c.name))
    {
        c.deleting = true;
    }
    for n in v.nodes.iter_mut().filter(|n| leaving.contains(&n.name)) {
        if !n.taints.iter().any(|t| t.key == keys::DISRUPTED_TAINT_KEY) {
            n.taints.push(crate::model::taints::Taint::new(
                keys::DISRUPTED_TAINT_KEY,
                "",
                crate::model::taints::Effect::NoSchedule,
            ));
        }
    }
    let pdbs = pdb::Pdbs::new(snapshot);
    // Core's provisioner also plans the pods of nodes marked for deletion (`provisioner.go`
    // Schedule: `nodes.Deleting().ReschedulablePods`): a command waiting on its replacements
    // keeps their room for its own pods, and pending pods that need more get nodes of their
    // own instead of taking it (which would call the command off and waste the replacement).
    let draining: std::collections::BTreeSet<&str> = leaving_nodes
        .iter()
        .map(|n| n.name.as_str())
        .chain(marked.iter().map(String::as_str))
        .collect();
    for p in v.pods.iter_mut() {
        let reschedulable = p.node_name.as_deref().is_some_and(|n| draining.contains(n))
            && drain::reschedulable(p)
            && !drain::do_not_disrupt_active(p, now)
            && !pdbs.fully_blocked(p, now);
        if reschedulable {
            let p = std::sync::Arc::make_mut(p);
            p.node_name = None;
            p.marked_unschedulable = true;
        }
    }
    Some(v)
}

/// Plans one reconcile pass: node classes Ready; liveness (timeouts delete the claim and mark its
/// exact Machine); adoption of Machines with a Node and no claim; binding and launch;
/// registration and initialization; provisioning of new NodeClaims for provisionable pods
/// (seeing the nodes this pass disrupts as gone); disruption (empty, expired, drifted,
/// underutilized nodes); termination of deleting claims and nodes and garbage collection; then
/// MachineDeployment replicas. Provisioning comes before the disruption writes, so a failing
/// disruption never holds pending pods back.
pub fn plan(snapshot: &Snapshot, now: Timestamp, config: &Config) -> Plan {
    plan_with(snapshot, now, config, &ConsolidationMemo::default()).0
}

/// [`plan`] with the consolidation memo of the process's earlier passes (a cache, lost
/// harmlessly on restart: see [`consolidated`]), returned updated for the next pass. `run` and
/// the simulator's replay both plan through this.
pub fn plan_with(
    snapshot: &Snapshot,
    now: Timestamp,
    config: &Config,
    memo: &ConsolidationMemo,
) -> (Plan, ConsolidationMemo) {
    let cut_before = packing_optimizer::work::cut_short_runs();
    let mut actions = lifecycle::node_classes(snapshot);
    let live = lifecycle::liveness(snapshot, now, config);
    let mut removals = scale::Removals {
        claims: live.deleted_claims.clone(),
        machines: live.marked_machines.clone(),
    };
    actions.extend(live.actions);
    let (adopted, mut notes) = adopt::adopt(snapshot, now);
    actions.extend(adopted);
    let mut disrupted = disruption::disrupt_with(snapshot, now, &removals.claims, memo);
    let memo = std::mem::take(&mut disrupted.consolidation);
    let forecast_ends = disrupted.forecast_ends;
    removals.claims.extend(disrupted.deleted_claims);
    removals.machines.extend(disrupted.marked_machines);
    let terminated = termination::terminate(snapshot, now, &removals.claims);
    removals.claims.extend(terminated.deleted_claims);
    removals.machines.extend(terminated.marked_machines);
    actions.extend(lifecycle::bind_and_launch(snapshot, &removals.claims));
    actions.extend(lifecycle::register_and_initialize(
        snapshot,
        &removals.claims,
    ));

    // Claims deleted by this pass no longer hold room for pending pods, and nodes it starts
    // disrupting take none: pending pods that would have gone there are provisioned for.
    let tainted: std::collections::BTreeSet<&str> = disrupted
        .actions
        .iter()
        .chain(terminated.actions.iter())
        .filter_map(|a| match a {
            Action::TaintNode { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    let view = provisioning_view(snapshot, &removals.claims, &tainted, &disrupted.marked, now);
    let provision_view = view.as_ref().unwrap_or(snapshot);
    let (created, provision_notes) = provision::provision(provision_view, now, config);
    notes.extend(provision_notes);
    notes.extend(disrupted.notes);
    notes.extend(terminated.notes);
    let (scaling, scale_notes) =
        scale::scale(snapshot, &removals, &created, &disrupted.actions, now);
    notes.extend(scale_notes);
    actions.extend(created);
    actions.extend(disrupted.actions);
    actions.extend(terminated.actions);
    actions.extend(scaling);
    let mut status = status::status(snapshot, now, &removals.claims);
    status.extend(lifecycle::launch_failures(snapshot, &removals.claims));
    status.extend(disrupted.reports);
    status.extend(terminated.reports);
    // Claims whose conditions or finalizers an action of this pass writes (other than a plain
    // condition update, which the re-stated conditions join), or that it deletes, are brought to
    // their generation by a later pass: a re-stated condition must never overwrite what this
    // pass writes.
    let mut going = removals.claims.clone();
    going.extend(actions.iter().filter_map(|a| match a {
        Action::LaunchNodeClaim { node_claim, .. }
        | Action::RegisterNode { node_claim, .. }
        | Action::InitializeNodeClaim { node_claim, .. }
        | Action::DeleteNodeClaim { node_claim, .. }
        | Action::RemoveNodeClaimFinalizer { node_claim, .. } => Some(node_claim.clone()),
        Action::TaintNode { node_claim, .. } | Action::AbortDisruption { node_claim, .. } => {
            node_claim.clone()
        }
        _ => None,
    }));
    status.extend(consistency::consistency(snapshot, &removals.claims));
    status::refresh_generations(snapshot, &mut actions, &mut status, &going);
    let mut pending = disrupted.pending;
    pending.extend(terminated.pending);
    // Commands and drains this pass starts (their taint records when).
    let started = actions.iter().filter_map(|a| match a {
        Action::TaintNode {
            node_claim: Some(claim),
            ..
        } => Some(claim.as_str()),
        _ => None,
    });
    let next_due = clock::next_due(snapshot, now, config, started)
        .into_iter()
        .chain(
            memo.next_change(now)
                .into_iter()
                .chain(forecast_ends)
                .filter(|t| t.as_second() > now.as_second()),
        )
        .min();
    (
        Plan {
            actions,
            notes,
            pending,
            status,
            cut_short: packing_optimizer::work::cut_short_runs() > cut_before,
            next_due,
        },
        memo,
    )
}
