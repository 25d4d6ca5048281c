//! What Cluster API is doing to a MachineDeployment, as far as our scale-downs care: whether
//! lowering its replicas now would make Cluster API delete exactly the Machines we marked, and
//! whether Cluster API is itself replacing its Machines (a rollout, which suspends our template
//! drift). Each hold is a reason as data, shown as a note.
//!
//! Mirrors Cluster API's choice of the Machines to delete (`core/reconcilers/machineset/
//! machineset_deletion_order.go`: Machines already being deleted go first, then those with
//! `cluster.x-k8s.io/delete-machine`) and its rollouts (`machinedeployment_sync.go`,
//! `machinedeployment_rollout_ondelete.go`: old MachineSets are scaled down first, oldest
//! first), and Cluster Autoscaler's `IsMachineDeploymentAndRollingOut`; `spec.rollout.after`
//! (v1beta1 `spec.rolloutAfter`) as `mdutil/util.go` `FindNewAndOldMachineSets` reads it: once
//! that time has passed, every MachineSet created before it is old and is rolled out.

use jiff::Timestamp;

use crate::model::machine::MachineRecord;
use crate::model::object::RawObject;
use crate::model::snapshot::{MachineDeploymentRecord, Snapshot};
use crate::vocab::keys::DEPLOYMENT_NAME_LABEL;
use crate::vocab::keys::PAUSED_ANNOTATION;

fn i64_at(obj: &RawObject, pointer: &str) -> Option<i64> {
    obj.value.pointer(pointer).and_then(|v| v.as_i64())
}

fn annotated_paused(obj: &RawObject) -> bool {
    obj.meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(PAUSED_ANNOTATION))
}

/// Why Cluster API is paused for a MachineDeployment's Machines, if it is (Cluster API's
/// `annotations.IsPaused`: the Cluster's `spec.paused`, or the `cluster.x-k8s.io/paused`
/// annotation on the Cluster, the MachineDeployment or one of its MachineSets). Then no taint,
/// mark, claim deletion or replica change is planned on it. The MachineDeployment's own
/// `spec.paused` only pauses rollouts: Cluster API still scales it.
pub(crate) fn capi_paused(snapshot: &Snapshot, md: &MachineDeploymentRecord) -> Option<String> {
    if annotated_paused(&md.object) {
        return Some(format!(
            "MachineDeployment {} carries {PAUSED_ANNOTATION}",
            md.key()
        ));
    }
    if let Some(set) = machine_sets(snapshot, md)
        .into_iter()
        .find(|s| annotated_paused(s))
    {
        return Some(format!(
            "MachineSet {} carries {PAUSED_ANNOTATION}",
            set.name()
        ));
    }
    let cluster = md
        .object
        .str_at("/spec/clusterName")
        .or_else(|| {
            md.object
                .meta
                .labels
                .as_ref()
                .and_then(|l| l.get("cluster.x-k8s.io/cluster-name"))
                .map(String::as_str)
        })
        .unwrap_or("");
    snapshot
        .objects_of("Cluster")
        .find(|c| c.namespace() == md.object.namespace() && c.name() == cluster)
        .filter(|c| {
            c.value.pointer("/spec/paused").and_then(|v| v.as_bool()) == Some(true)
                || annotated_paused(c)
        })
        .map(|c| format!("Cluster {} is paused", c.name()))
}

/// [`capi_paused`] for the MachineDeployment of a claim.
pub(crate) fn claim_paused(
    snapshot: &Snapshot,
    claim: &crate::model::nodeclaim::NodeClaimRecord,
) -> Option<String> {
    let key = snapshot.claim_machine_deployment(claim)?;
    let md = snapshot
        .machine_deployments
        .iter()
        .find(|m| m.key() == key)?;
    capi_paused(snapshot, md)
}

/// The rollout strategy type (`RollingUpdate` when unset, as Cluster API defaults it).
pub(crate) fn strategy(md: &MachineDeploymentRecord) -> String {
    md.object
        .str_at("/spec/rollout/strategy/type")
        .or_else(|| md.object.str_at("/spec/strategy/type"))
        .unwrap_or("RollingUpdate")
        .to_string()
}

/// The MachineSets of a MachineDeployment (owner reference, else the deployment-name label),
/// oldest first.
pub(crate) fn machine_sets<'a>(
    snapshot: &'a Snapshot,
    md: &MachineDeploymentRecord,
) -> Vec<&'a RawObject> {
    let (ns, name) = (md.object.namespace(), md.object.name());
    let mut sets: Vec<&RawObject> = snapshot
        .objects_of("MachineSet")
        .filter(|s| s.namespace() == ns)
        .filter(|s| {
            s.meta
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.kind == "MachineDeployment" && r.name == name)
                || s.meta
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(DEPLOYMENT_NAME_LABEL))
                    .is_some_and(|d| d == name)
        })
        .collect();
    sets.sort_by(|a, b| {
        let t = |o: &RawObject| o.meta.creation_timestamp.as_ref().map(|t| t.0);
        t(a).cmp(&t(b)).then(a.name().cmp(b.name()))
    });
    sets
}

/// `spec.rollout.after` (v1beta2) or `spec.rolloutAfter` (v1beta1), when set and readable.
pub(crate) fn rollout_after(md: &MachineDeploymentRecord) -> Option<Timestamp> {
    md.object
        .str_at("/spec/rollout/after")
        .or_else(|| md.object.str_at("/spec/rolloutAfter"))
        .and_then(|t| t.parse::<Timestamp>().ok())
}

fn created(obj: &RawObject) -> Option<Timestamp> {
    obj.meta.creation_timestamp.as_ref().map(|t| t.0)
}

/// A rollout `spec.rollout.after` asks for and Cluster API has not finished: the time has passed
/// and a MachineSet created before it still has replicas (with no MachineSet in view, a Machine
/// of the MachineDeployment created before it).
fn rollout_after_pending(
    snapshot: &Snapshot,
    md: &MachineDeploymentRecord,
    sets: &[&RawObject],
    now: Timestamp,
) -> Option<String> {
    let after = rollout_after(md).filter(|a| *a <= now)?;
    let before = |t: Option<Timestamp>| t.is_some_and(|t| t < after);
    let old = if sets.is_empty() {
        let key = md.key();
        snapshot
            .machines
            .iter()
            .filter(|m| m.deployment_key().as_deref() == Some(key.as_str()))
            .find(|m| before(m.created))
            .map(|m| format!("Machine {}", m.name))
    } else {
        sets.iter()
            .find(|s| set_replicas(s) > 0 && before(created(s)))
            .map(|s| format!("MachineSet {}", s.name()))
    }?;
    Some(format!(
        "rolling out: spec.rollout.after {after} has passed and {old}, created before it, is still there"
    ))
}

fn set_replicas(set: &RawObject) -> i64 {
    i64_at(set, "/spec/replicas")
        .unwrap_or(0)
        .max(i64_at(set, "/status/replicas").unwrap_or(0))
}

/// Why Cluster API is replacing this MachineDeployment's Machines right now (None: it is not):
/// a spec change not observed yet, several MachineSets with replicas, Machines not up to date,
/// or a `spec.rollout.after` that has passed with Machines older than it.
pub(crate) fn rolling_out(
    snapshot: &Snapshot,
    md: &MachineDeploymentRecord,
    now: Timestamp,
) -> Option<String> {
    if let (Some(generation), Some(observed)) = (
        md.object.meta.generation,
        i64_at(&md.object, "/status/observedGeneration"),
    ) && observed < generation
    {
        return Some(format!(
            "status.observedGeneration {observed} is behind metadata.generation {generation}"
        ));
    }
    let sets = machine_sets(snapshot, md);
    let with_replicas: Vec<&str> = sets
        .iter()
        .filter(|s| set_replicas(s) > 0)
        .map(|s| s.name())
        .collect();
    if with_replicas.len() > 1 {
        return Some(format!(
            "rolling out: MachineSets {} have replicas",
            with_replicas.join(", ")
        ));
    }
    // v1beta2 reports upToDateReplicas, v1beta1 updatedReplicas (Cluster Autoscaler's check).
    let up_to_date = i64_at(&md.object, "/status/upToDateReplicas")
        .or_else(|| i64_at(&md.object, "/status/updatedReplicas"));
    let replicas = i64_at(&md.object, "/status/replicas");
    if strategy(md) != "OnDelete"
        && let (Some(u), Some(r)) = (up_to_date, replicas)
        && u < r
    {
        return Some(format!("rolling out: {u} of {r} Machines up to date"));
    }
    rollout_after_pending(snapshot, md, &sets, now)
}

/// Why lowering this MachineDeployment's replicas now could make Cluster API delete other
/// Machines than `leaving` (the ones marked), or would act on a stale view (a watch not yet
/// re-synced, its generation not observed, its Machines not matching its MachineSets). None: safe.
pub(crate) fn scale_down_hold(
    snapshot: &Snapshot,
    md: &MachineDeploymentRecord,
    leaving: &[&MachineRecord],
    now: Timestamp,
) -> Option<String> {
    // A watch re-listing (after a restart or an expired resourceVersion) still serves the objects
    // of before: Machines and MachineSets may have changed since.
    if !snapshot.unsynced.is_empty() {
        return Some(format!(
            "stale view: the watches of {} have not re-synced yet",
            snapshot.unsynced.join(", ")
        ));
    }
    if let Some(why) = capi_paused(snapshot, md) {
        return Some(why);
    }
    let key = md.key();
    let machines: Vec<&MachineRecord> = snapshot
        .machines
        .iter()
        .filter(|m| m.deployment_key().as_deref() == Some(key.as_str()))
        .collect();
    // Cluster API counts a Machine being deleted among its MachineSet's Machines and takes it
    // first (`syncReplicas`: the surplus is all Machines less `spec.replicas`;
    // `machineset_deletion_order.go`: a deletion timestamp is `mustDelete`). Lowering replicas
    // while one is going is safe when the replicas already leave every deleting Machine out
    // (it is leaving by an earlier scale-down): the lowered count then takes the deleting ones
    // and the marked ones, and nothing else. Otherwise (a Machine deleted by hand or by a
    // MachineHealthCheck, its replacement still due) the lowering would be spent on it.
    if let Some(m) = machines.iter().find(|m| m.deleting) {
        let not_deleting = machines.iter().filter(|m| !m.deleting).count() as i64;
        let spec = super::scale::current_replicas(md);
        let sets = machine_sets(snapshot, md);
        let sets_agree = sets.is_empty()
            || sets
                .iter()
                .map(|s| i64_at(s, "/spec/replicas").unwrap_or(0))
                .sum::<i64>()
                == spec;
        if spec != not_deleting || !sets_agree {
            return Some(format!(
                "Machine {} is being deleted (Cluster API counts it first)",
                m.name
            ));
        }
    }
    // Cluster API deletes every marked Machine first (`machineset_deletion_order.go`): a mark
    // that is not part of this decision (someone else's, or a stale one of ours) would be taken
    // instead of, or as well as, ours. (A Machine being deleted is counted above: its mark
    // changes nothing any more.)
    if let Some(m) = machines.iter().find(|m| {
        m.marked_for_deletion && !m.deleting && !leaving.iter().any(|l| l.key() == m.key())
    }) {
        let whose = if m.marked_by_us {
            "an earlier mark of ours"
        } else {
            "not ours"
        };
        return Some(format!(
            "Machine {} carries cluster.x-k8s.io/delete-machine ({whose}): Cluster API would delete it first",
            m.name
        ));
    }
    let sets = machine_sets(snapshot, md);
    if !sets.is_empty() {
        let reported: i64 = sets
            .iter()
            .map(|s| i64_at(s, "/status/replicas").unwrap_or(0))
            .sum();
        if reported != machines.len() as i64 {
            return Some(format!(
                "stale view: {} Machines seen, its MachineSets report {reported}",
                machines.len()
            ));
        }
    }
    match rolling_out(snapshot, md, now) {
        None => None,
        // OnDelete scales the oldest MachineSet with replicas down first, choosing by deletion
        // order within it: safe when every Machine leaving is in that MachineSet.
        Some(_)
            if strategy(md) == "OnDelete"
                && md.object.meta.generation.is_none_or(|g| {
                    i64_at(&md.object, "/status/observedGeneration").is_none_or(|o| o >= g)
                })
                && sets
                    .iter()
                    .find(|s| set_replicas(s) > 0)
                    .is_some_and(|oldest| {
                        leaving.len() as i64 <= set_replicas(oldest)
                            && leaving
                                .iter()
                                .all(|m| m.machine_set.as_deref() == Some(oldest.name()))
                    }) =>
        {
            None
        }
        Some(why) => Some(why),
    }
}
