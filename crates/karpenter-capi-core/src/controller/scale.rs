//! Declarative MachineDeployment sizing. Scale-up: desired replicas = the NodeClaims that target
//! it and survive this pass (bound or not), plus the ones this pass creates, plus the Machines
//! with a Node that no claim holds (never ours to remove). A retry or a restart computes the same
//! number, so a scale-up is never doubled.
//!
//! Scale-down removes only Machines this pass marked with `cluster.x-k8s.io/delete-machine`:
//! replicas drop by at most their number, never below the live Machines kept (so a lowering
//! Cluster API has not acted on yet is never repeated), and not at all while
//! [`super::rollout::scale_down_hold`] says Cluster API could pick another victim. Only a Machine
//! without a Node and without a claim waiting for it is surplus. Mirrors
//! karpenter-provider-cluster-api `pkg/batcher/delete.go` (replicas lowered only for one
//! specific NodeClaim's Machine) and `create.go` (unclaimed Machines are reused).

use std::collections::BTreeSet;

use super::action::Action;
use super::lifecycle::mark;
use super::rollout::scale_down_hold;
use crate::model::machine::MachineRecord;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::snapshot::Snapshot;

/// Machines marked for deletion earlier in the same plan, and claims deleted by it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Removals {
    /// NodeClaims this plan deletes.
    pub(crate) claims: BTreeSet<String>,
    /// Machines this plan marks for deletion (`namespace/name`).
    pub(crate) machines: BTreeSet<String>,
}

/// `markMachineForDeletion` for surplus Machines and `scaleMachineDeployment` where the replica
/// count must change; plus a note per scale-down held back. `created`: the claims provisioning
/// creates this pass (counted in the replicas); `disrupting`: the disruption's actions, whose
/// replacement claims are counted from the next pass on but already wait for a free Machine.
pub(crate) fn scale(
    snapshot: &Snapshot,
    removals: &Removals,
    created: &[Action],
    disrupting: &[Action],
    now: jiff::Timestamp,
) -> (Vec<Action>, Vec<String>) {
    let mut actions = Vec::new();
    let mut notes = Vec::new();
    let referenced: BTreeSet<&String> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| c.machine.as_ref())
        .collect();
    let members = snapshot.all_members();
    for &md in &members {
        let key = md.key();
        let surviving: Vec<&NodeClaimRecord> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| !c.deleting && !removals.claims.contains(&c.name))
            .filter(|c| snapshot.claim_machine_deployment(c).as_deref() == Some(key.as_str()))
            .collect();
        let creates_here = |a: &&Action| matches!(a, Action::CreateNodeClaim { machine_deployment, .. } if *machine_deployment == key);
        let new = created.iter().filter(creates_here).count();
        let replacements = disrupting.iter().filter(creates_here).count();
        let current = current_replicas(md);
        let alive: Vec<&MachineRecord> = snapshot
            .machines
            .iter()
            .filter(|m| m.deployment_key().as_deref() == Some(key.as_str()) && !m.deleting)
            .collect();
        // Marked by this pass (its own decisions: a claim's Machine, or surplus below).
        let mut leaving: Vec<&MachineRecord> = alive
            .iter()
            .copied()
            .filter(|m| removals.machines.contains(&m.key()))
            .collect();
        // Machines with a Node and no claim: adopted this pass or left alone, never removed. Of
        // those whose Node has not registered yet, the ones a waiting claim will be bound to are
        // the claim's room already (karpenter-provider-cluster-api `create.go`
        // countUnclaimedMachines): counted once, through the claim.
        let unclaimed_with_node: Vec<&&MachineRecord> = alive
            .iter()
            .filter(|m| {
                !removals.machines.contains(&m.key())
                    && m.node_name.is_some()
                    && !referenced.contains(&m.key())
            })
            .collect();
        let joinable = unclaimed_with_node
            .iter()
            .filter(|m| !m.claimed && super::lifecycle::joinable(snapshot, m))
            .count();
        let waiting_claims = surviving.iter().filter(|c| c.machine.is_none()).count() + new;
        let foreign = unclaimed_with_node.len() - joinable.min(waiting_claims);
        let desired = (surviving.len() + new + foreign) as i64;
        if let Some(why) = super::rollout::capi_paused(snapshot, md) {
            if desired != current || !leaving.is_empty() {
                notes.push(format!(
                    "MachineDeployment {key}: replicas stay at {current}: {why}"
                ));
            }
            continue;
        }
        // Our marks that no decision of this pass stands behind: Cluster API would take those
        // Machines first on any scale-down, so they come off.
        for m in alive.iter().filter(|m| {
            m.marked_by_us
                && !removals.machines.contains(&m.key())
                && stale_mark(snapshot, removals, m)
        }) {
            actions.push(Action::UnmarkMachine {
                target: format!("Machine/{}", m.key()),
                machine: m.key(),
                message: "no NodeClaim of ours is being removed with it".to_string(),
                api_version: m.api_version.clone(),
            });
        }
        if leaving.is_empty() && desired > current {
            actions.push(scale_action(md, current, desired, Vec::new()));
            continue;
        }
        let mut surplus_marks = Vec::new();
        if leaving.is_empty() && desired < current {
            // Surplus: no Node, no claim, and not one a waiting claim will be bound to (the
            // oldest free ones are bound first, so the newest go). The claims this pass creates
            // (provisioning, and disruption's replacements) wait too: a free Machine is reused for them, as upstream's `pkg/batcher/create.go`
            // reuses unclaimed Machines, rather than removed while they wait for a new one.
            let waiting =
                surviving.iter().filter(|c| c.machine.is_none()).count() + new + replacements;
            let mut free: Vec<&MachineRecord> = alive
                .iter()
                .copied()
                .filter(|m| {
                    m.node_name.is_none()
                        && !referenced.contains(&m.key())
                        && !removals.machines.contains(&m.key())
                })
                .collect();
            free.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
            let for_waiting: BTreeSet<String> = free
                .iter()
                .filter(|m| !m.claimed)
                .take(waiting)
                .map(|m| m.key())
                .collect();
            let room = usize::try_from(alive.len() as i64 - desired).unwrap_or(0);
            let surplus: Vec<&MachineRecord> = free
                .into_iter()
                .filter(|m| !for_waiting.contains(&m.key()))
                .rev()
                .take(room)
                .collect();
            if !surplus.is_empty() {
                match scale_down_hold(snapshot, md, &surplus, now) {
                    None => {
                        for m in &surplus {
                            surplus_marks.push(mark(m, None, "ScaleDown"));
                        }
                        leaving = surplus;
                    }
                    Some(why) => notes.push(format!(
                        "MachineDeployment {key}: surplus Machine(s) {} not removed: {why}",
                        surplus
                            .iter()
                            .map(|m| m.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
        }
        if leaving.is_empty() {
            continue;
        }
        match lower(snapshot, md, current, alive.len(), &leaving, now) {
            Lowering::Unchanged => {}
            Lowering::Held(note) => notes.push(note),
            Lowering::Scale(scale) => {
                actions.extend(surplus_marks);
                actions.push(scale);
            }
        }
    }
    let member_keys: BTreeSet<String> = members.iter().map(|m| m.key()).collect();
    lower_outside_members(
        snapshot,
        &member_keys,
        removals,
        now,
        &mut actions,
        &mut notes,
    );
    (actions, notes)
}

/// The Machines this pass marked whose MachineDeployment is not a member (its label or the node
/// class's selector taken away since the claim was made): their replicas drop by exactly those
/// Machines, with the same guards, and are never sized otherwise; one whose MachineDeployment
/// is gone gets a note, as the claim then waits on its finalizer. Mirrors the provider's
/// `Delete` (`cloudprovider.go` `machineDeploymentFromMachine`), which finds the Machine's
/// MachineDeployment by name whatever its labels, and fails naming both when there is none.
/// `members`: the member MachineDeployments' keys.
fn lower_outside_members(
    snapshot: &Snapshot,
    members: &BTreeSet<String>,
    removals: &Removals,
    now: jiff::Timestamp,
    actions: &mut Vec<Action>,
    notes: &mut Vec<String>,
) {
    let mut by_deployment: std::collections::BTreeMap<String, Vec<&MachineRecord>> =
        std::collections::BTreeMap::new();
    for m in snapshot
        .machines
        .iter()
        .filter(|m| !m.deleting && removals.machines.contains(&m.key()))
    {
        match m.deployment_key() {
            Some(d) if !members.contains(&d) => by_deployment.entry(d).or_default().push(m),
            Some(_) => {}
            None => notes.push(format!(
                "Machine {} belongs to no MachineDeployment (no cluster.x-k8s.io/deployment-name label): marked, but no replicas can be lowered for it",
                m.key()
            )),
        }
    }
    for (key, leaving) in by_deployment {
        let names = || {
            leaving
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(md) = snapshot.machine_deployments.iter().find(|d| d.key() == key) else {
            notes.push(format!(
                "MachineDeployment {key} of the marked Machine(s) {} is not there: its replicas cannot be lowered, and their NodeClaims wait for Cluster API to delete them",
                names()
            ));
            continue;
        };
        let current = current_replicas(md);
        if let Some(why) = super::rollout::capi_paused(snapshot, md) {
            notes.push(format!(
                "MachineDeployment {key}: replicas stay at {current}: {why}"
            ));
            continue;
        }
        let alive = snapshot
            .machines
            .iter()
            .filter(|m| m.deployment_key().as_deref() == Some(key.as_str()) && !m.deleting)
            .count();
        match lower(snapshot, md, current, alive, &leaving, now) {
            Lowering::Unchanged => {}
            Lowering::Held(note) => notes.push(note),
            Lowering::Scale(scale) => actions.push(scale),
        }
    }
}

/// What lowering a MachineDeployment by the Machines marked on it comes to.
enum Lowering {
    /// Nothing to write: replicas are already at or below the target.
    Unchanged,
    /// Cluster API could pick another victim now: a note says why, the marks wait.
    Held(String),
    /// The scale write.
    Scale(Action),
}

/// Lowers `md` (at `current` replicas, `alive` Machines not being deleted) by the Machines in
/// `leaving`: by at most their number and never below the Machines kept, so a lowering Cluster
/// API has not carried out yet is never repeated; held while [`scale_down_hold`] says so.
fn lower(
    snapshot: &Snapshot,
    md: &crate::model::snapshot::MachineDeploymentRecord,
    current: i64,
    alive: usize,
    leaving: &[&MachineRecord],
    now: jiff::Timestamp,
) -> Lowering {
    let kept = alive.saturating_sub(leaving.len()) as i64;
    let target = kept.max(current - leaving.len() as i64).max(0);
    if target >= current {
        return Lowering::Unchanged;
    }
    if let Some(why) = scale_down_hold(snapshot, md, leaving, now) {
        return Lowering::Held(format!(
            "MachineDeployment {}: replicas not lowered from {current}: {why}; the marked Machine(s) {} wait",
            md.key(),
            leaving
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Lowering::Scale(scale_action(
        md,
        current,
        target,
        leaving.iter().map(|m| m.key()).collect(),
    ))
}

/// Whether our mark on a live Machine has no decision behind it: no claim holds the Machine, or
/// its claim is alive and not removed by this pass.
fn stale_mark(snapshot: &Snapshot, removals: &Removals, m: &MachineRecord) -> bool {
    let key = m.key();
    match snapshot
        .nodeclaims
        .iter()
        .find(|c| c.machine.as_deref() == Some(key.as_str()))
    {
        None => true,
        Some(c) => !c.deleting && !removals.claims.contains(&c.name),
    }
}

fn scale_action(
    md: &crate::model::snapshot::MachineDeploymentRecord,
    from: i64,
    replicas: i64,
    rollback_machines: Vec<String>,
) -> Action {
    Action::ScaleMachineDeployment {
        target: format!("MachineDeployment/{}", md.key()),
        machine_deployment: md.key(),
        from,
        replicas,
        rollback_machines,
        resource_version: md.object.meta.resource_version.clone(),
        api_version: md.object.api_version.clone(),
    }
}

/// `spec.replicas`, or what the CAPI webhook defaults it to: the min-size annotation when both
/// size annotations exist, else 1.
pub(crate) fn current_replicas(md: &crate::model::snapshot::MachineDeploymentRecord) -> i64 {
    if let Some(r) = md
        .object
        .value
        .pointer("/spec/replicas")
        .and_then(|v| v.as_i64())
    {
        return r;
    }
    match md.flavor.as_ref().ok().map(|f| (f.min_size, f.max_size)) {
        Some((Some(min), Some(_))) => min,
        _ => 1,
    }
}
