//! Declarative MachineDeployment sizing: desired replicas = the NodeClaims that target it and
//! survive this pass (bound or not) plus the ones this pass creates. A retry or a restart computes
//! the same number, so a scale-up is never doubled. Lowering replicas always marks the exact
//! surplus Machines first, so CAPI never chooses the victim.

use std::collections::BTreeSet;

use super::action::Action;
use super::lifecycle::mark;
use crate::model::machine::MachineRecord;
use crate::model::snapshot::Snapshot;

/// Machines marked for deletion earlier in the same plan, and claims deleted by it.
#[derive(Debug, Default, Clone)]
pub struct Removals {
    /// NodeClaims this plan deletes.
    pub claims: BTreeSet<String>,
    /// Machines this plan marks for deletion (`namespace/name`).
    pub machines: BTreeSet<String>,
}

/// `markMachineForDeletion` for surplus Machines and `scaleMachineDeployment` where the replica
/// count differs from the desired one.
pub fn scale(snapshot: &Snapshot, removals: &Removals, created: &[Action]) -> Vec<Action> {
    let mut actions = Vec::new();
    for md in snapshot.all_members() {
        let key = md.key();
        let surviving: Vec<&crate::model::nodeclaim::NodeClaimRecord> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| !c.deleting && !removals.claims.contains(&c.name))
            .filter(|c| snapshot.claim_machine_deployment(c).as_deref() == Some(key.as_str()))
            .collect();
        let new = created
            .iter()
            .filter(|a| matches!(a, Action::CreateNodeClaim { machine_deployment, .. } if *machine_deployment == key))
            .count();
        let desired = (surviving.len() + new) as i64;
        let current = current_replicas(md);

        // Machines still counting toward the MachineSet after this plan's marks.
        let machines: Vec<&MachineRecord> = snapshot
            .machines
            .iter()
            .filter(|m| m.deployment_key().as_deref() == Some(key.as_str()))
            .collect();
        let live: Vec<&MachineRecord> = machines
            .iter()
            .copied()
            .filter(|m| m.is_live() && !removals.machines.contains(&m.key()))
            .collect();
        let mut marked_here: Vec<String> = machines
            .iter()
            .filter(|m| removals.machines.contains(&m.key()))
            .map(|m| m.key())
            .collect();
        let surplus = live.len() as i64 - desired;
        if surplus > 0 && desired < current {
            // Only Machines no surviving claim is bound to may go; the newest first, as they
            // are the least likely to carry work.
            let kept: BTreeSet<&String> = surviving
                .iter()
                .filter_map(|c| c.machine.as_ref())
                .collect();
            let mut candidates: Vec<&MachineRecord> = live
                .iter()
                .copied()
                .filter(|m| !kept.contains(&m.key()))
                .collect();
            candidates.sort_by(|a, b| b.created.cmp(&a.created).then(b.name.cmp(&a.name)));
            for m in candidates
                .into_iter()
                .take(usize::try_from(surplus).unwrap_or(0))
            {
                actions.push(mark(m, None, "ScaleDown"));
                marked_here.push(m.key());
            }
        }
        if current != desired {
            actions.push(Action::ScaleMachineDeployment {
                target: format!("MachineDeployment/{key}"),
                machine_deployment: key.clone(),
                from: current,
                replicas: desired,
                rollback_machines: if desired < current {
                    marked_here
                } else {
                    Vec::new()
                },
                api_version: md.object.api_version.clone(),
            });
        }
    }
    actions
}

/// `spec.replicas`, or what the CAPI webhook defaults it to: the min-size annotation when both
/// size annotations exist, else 1.
pub fn current_replicas(md: &crate::model::snapshot::MachineDeploymentRecord) -> i64 {
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
