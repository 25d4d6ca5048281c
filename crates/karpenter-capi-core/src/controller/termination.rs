//! Termination: NodeClaims and Nodes being deleted, and NodeClaims whose Machine vanished.
//!
//! - Our NodeClaims carry the `karpenter.sh/termination` finalizer. A deleting claim first has
//!   its node drained (a user's `kubectl delete nodeclaim` is a disruption request, drained at
//!   once like Karpenter core's `node/termination`), then its exact Machine is marked and
//!   removed (replicas by [`super::scale`]); its Node is first labelled out of external load
//!   balancers, as core's terminator does; the finalizer comes off only once the Machine is
//!   being deleted or gone, so a drained Machine never outlives its claim. A claim that never
//!   registered drains no Node (core finalizes only a registered claim's Nodes): its Machine is
//!   marked at once.
//! - A user's `kubectl delete node` (held by our finalizer) deletes the node's claim, which then
//!   drains as above. Cluster API deleting the Node of a Machine it is deleting is not a
//!   disruption request: nothing is done but releasing the finalizer once the Machine is gone.
//! - Garbage collection (core `nodeclaim/garbagecollection`): a registered claim whose Machine
//!   vanished out of band (MachineHealthCheck remediation, a manual delete) and whose Node is
//!   not Ready is deleted, whatever the consolidation policy; never when the Machines were not
//!   observed.
//! - The Node finalizer is released once the node's claim and its Machine are both gone, so
//!   Cluster API's own drain runs first.
//! - Duplicates strand nothing: a deleted Node that two claims match (the same providerID)
//!   deletes each of them once and is drained once; a deleting claim that two Nodes match (its
//!   providerID) drains both before its Machine goes (core `nodeclaim/lifecycle` finalize
//!   deletes every Node of the claim and waits for all of them). Neither keeps a finalizer once
//!   the claims and the Machine are gone.
//! - While it drains, the claim carries core's `Drained` condition: Unknown (`Draining`) from
//!   the drain's start, True once the drain is over and its Machine goes (core
//!   `node/termination` awaitDrain). As core, a Node two claims match has no single source of
//!   truth and writes no condition.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;

use super::action::Action;
use super::command::drained_long_enough;
use super::consolidation::Home;
use super::disruption::{Disruption, MIN_DRAIN_SECS, defer_rest, is_voluntary, node_of, pods_on};
use super::drain::{drain_step, drained, termination_deadline};
use super::lifecycle::{bound_machine, mark};
use super::pdb::{Pdbs, home_for_movable};
use super::rollout::scale_down_hold;
use super::write::ConditionUpdate;
use crate::model::machine::MachineRecord;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::snapshot::{MachineIndex, NodeRecord, Snapshot};
use crate::vocab::keys::{
    DISRUPTED_TAINT_KEY, DISRUPTION_REASON_ANNOTATION, EXCLUDE_FROM_LOAD_BALANCERS_LABEL,
    TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION,
};

/// Core's `Drained` NodeClaim condition type (`apis/v1` ConditionTypeDrained).
pub(crate) const DRAINED: &str = "Drained";
/// The reason of `Drained` while the drain goes on.
const DRAINING: &str = "Draining";

fn has_finalizer(f: &[String]) -> bool {
    f.iter().any(|f| f == TERMINATION_FINALIZER)
}

fn machine_of_node<'a>(snapshot: &'a Snapshot, n: &NodeRecord) -> Option<&'a MachineRecord> {
    snapshot.machines.iter().find(|m| {
        m.node_name.as_ref() == Some(&n.name)
            || (m.provider_id.is_some() && m.provider_id == n.provider_id)
    })
}

fn claim_matches_node(c: &NodeClaimRecord, n: &NodeRecord) -> bool {
    c.node_name.as_ref() == Some(&n.name)
        || (c.provider_id.is_some() && c.provider_id == n.provider_id)
}

fn claim_of_node<'a>(snapshot: &'a Snapshot, n: &NodeRecord) -> Option<&'a NodeClaimRecord> {
    snapshot
        .nodeclaims
        .iter()
        .find(|c| claim_matches_node(c, n))
}

/// Every claim of a Node (named as its nodeName or carrying its providerID), in snapshot order.
/// More than one is a duplicate (core `utils/node` NodeClaimForNode: no single source of truth).
fn claims_of_node<'a>(snapshot: &'a Snapshot, n: &NodeRecord) -> Vec<&'a NodeClaimRecord> {
    snapshot
        .nodeclaims
        .iter()
        .filter(|c| claim_matches_node(c, n))
        .collect()
}

/// Every Node of a claim (its nodeName, or carrying its providerID), in snapshot order (the
/// first is [`node_of`]'s): core's `nodeclaim/lifecycle` finalize deletes them all.
fn nodes_of<'a>(snapshot: &'a Snapshot, claim: &NodeClaimRecord) -> Vec<&'a NodeRecord> {
    snapshot
        .nodes
        .iter()
        .filter(|n| claim_matches_node(claim, n))
        .collect()
}

fn remove_claim_finalizer(claim: &NodeClaimRecord) -> Action {
    Action::RemoveNodeClaimFinalizer {
        target: format!("NodeClaim/{}", claim.name),
        node_claim: claim.name.clone(),
        remaining: claim
            .finalizers
            .iter()
            .filter(|f| *f != TERMINATION_FINALIZER)
            .cloned()
            .collect(),
    }
}

/// Plans termination for deleting claims and nodes, garbage collection, and Node finalizers.
/// `skip`: claims this pass already deletes.
pub(crate) fn terminate(
    snapshot: &Snapshot,
    now: Timestamp,
    skip: &BTreeSet<String>,
) -> Disruption {
    let mut out = Disruption::default();
    let pdbs = Pdbs::new(snapshot);
    // The nodes whose pods leave this pass: every forceful drain, then each voluntary one that
    // still has a home beside them (one at a time, so two drains never count on the same room).
    let mut leaving: Vec<String> = draining_nodes(snapshot, now)
        .into_iter()
        .filter(|(_, voluntary)| !voluntary)
        .map(|(n, _)| n)
        .collect();
    // Nodes drained this pass, and whether each is done: a Node two deleting claims share is
    // drained once.
    let mut handled: BTreeMap<String, bool> = BTreeMap::new();
    for claim in snapshot.nodeclaims.iter().filter(|c| c.deleting) {
        if !has_finalizer(&claim.finalizers) {
            continue;
        }
        let machine = bound_machine(snapshot, claim);
        match (&claim.machine, machine) {
            (None, _) => out.actions.push(remove_claim_finalizer(claim)),
            (Some(_), Some(m)) if m.deleting => out.actions.push(remove_claim_finalizer(claim)),
            (Some(_), None) if snapshot.machines_observed => {
                out.actions.push(remove_claim_finalizer(claim))
            }
            (Some(key), None) => out.notes.push(format!(
                "NodeClaim {}: its Machine {key} was not observed; its finalizer stays",
                claim.name
            )),
            (Some(_), Some(m)) => drain_then_remove(
                snapshot,
                (&pdbs, now),
                &mut out,
                (&mut leaving, &mut handled),
                claim,
                m,
            ),
        }
    }
    for node in snapshot.nodes.iter().filter(|n| n.deleting) {
        // A user deleted the Node: a disruption request, if the Machine is not being deleted.
        // Every claim of the Node goes (two claims of one providerID describe one instance:
        // one left behind would hold the Node's finalizer for good), each once.
        let Some(m) = machine_of_node(snapshot, node) else {
            continue;
        };
        if m.deleting {
            continue;
        }
        for claim in claims_of_node(snapshot, node) {
            if claim.deleting
                || skip.contains(&claim.name)
                || out.deleted_claims.contains(&claim.name)
            {
                continue;
            }
            out.actions.push(Action::delete_node_claim(
                claim,
                "NodeDeleted".to_string(),
                format!(
                    "node {} was deleted: draining it and removing its Machine",
                    node.name
                ),
            ));
            out.deleted_claims.insert(claim.name.clone());
        }
    }
    if snapshot.machines_observed {
        let machines = MachineIndex::new(snapshot);
        for claim in snapshot
            .nodeclaims
            .iter()
            .filter(|c| !c.deleting && !skip.contains(&c.name) && c.condition_true("Registered"))
        {
            let Some(key) = &claim.machine else { continue };
            if machines.bound(claim).is_some() {
                continue;
            }
            let ready = node_of(snapshot, claim).is_some_and(|n| n.ready == Some(true));
            if ready {
                continue;
            }
            out.actions.push(Action::DeleteNodeClaim {
                target: format!("NodeClaim/{}", claim.name),
                node_claim: claim.name.clone(),
                reason: "GarbageCollected".to_string(),
                message: format!("its Machine {key} is gone and its Node is not Ready"),
                machine: None,
                // Its Machine is gone: nothing for a finalizer to wait for.
                add_finalizer: false,
            });
            out.deleted_claims.insert(claim.name.clone());
        }
        out.actions.extend(release_node_finalizers(snapshot));
    }
    out
}

/// A deleting claim with a live Machine, as core's `node/termination` finalizes its Nodes: the
/// deadline its `terminationGracePeriod` sets is recorded; each of its Nodes is tainted and
/// drained one step per pass (pods with an active `do-not-disrupt` wait, and are deleted only
/// when their time runs out before the deadline); once all are drained for [`MIN_DRAIN_SECS`],
/// its exact Machine is marked so the scale-down removes it. A claim deleted by a voluntary
/// command of ours drains only while its pods have a home (provisioning counts them as pending
/// meanwhile); a forceful one (expiry, a user's deletion) drains at once. `handled`: the Nodes
/// drained this pass and whether each is done (a Node another deleting claim shares is drained
/// once, and its Machine marked once).
fn drain_then_remove(
    snapshot: &Snapshot,
    (pdbs, now): (&Pdbs, Timestamp),
    out: &mut Disruption,
    (leaving, handled): (&mut Vec<String>, &mut BTreeMap<String, bool>),
    claim: &NodeClaimRecord,
    m: &MachineRecord,
) {
    let deadline = termination_deadline(claim, None);
    if let Some(t) = deadline
        && !claim
            .annotations
            .contains_key(TERMINATION_TIMESTAMP_ANNOTATION)
    {
        out.actions.push(Action::SetTerminationTimestamp {
            target: format!("NodeClaim/{}", claim.name),
            node_claim: claim.name.clone(),
            time: t.to_string(),
        });
    }
    if let Some(why) = super::rollout::claim_paused(snapshot, claim) {
        out.notes.push(format!(
            "NodeClaim {}: termination waits: {why}",
            claim.name
        ));
        return;
    }
    let voluntary = claim
        .annotations
        .get(DISRUPTION_REASON_ANNOTATION)
        .is_some_and(|r| is_voluntary(r));
    let reason = claim
        .annotations
        .get(DISRUPTION_REASON_ANNOTATION)
        .filter(|_| voluntary)
        .cloned()
        .unwrap_or_else(|| "Deleted".to_string());
    // Only a registered claim's Nodes are drained (core `nodeclaim/lifecycle/controller.go`
    // finalize deletes Nodes only when Registered is True): a Node that merely shares the
    // providerID of a claim that never registered was not made ours, so it is not tainted or
    // drained; the Machine goes at once and Cluster API's own deletion handles what runs there.
    let nodes = registered_nodes(snapshot, claim);
    let mut done = true;
    for node in &nodes {
        let node_done = match handled.get(&node.name) {
            Some(d) => *d,
            None => {
                let step = Step {
                    pdbs,
                    now,
                    claim,
                    reason: &reason,
                    voluntary,
                    deadline,
                };
                let d = drain_node(snapshot, &step, out, leaving, node);
                handled.insert(node.name.clone(), d);
                d
            }
        };
        done &= node_done;
    }
    // Core's Drained condition, on a claim that is its Nodes' single source of truth.
    if !nodes.is_empty() && nodes.iter().all(|n| claims_of_node(snapshot, n).len() == 1) {
        out.reports.extend(drained_condition(claim, done));
    }
    if !done {
        if let Some(node) = nodes.first() {
            defer_rest(snapshot, out, claim, node, &reason, false);
        }
        return;
    }
    if out.marked_machines.contains(&m.key()) {
        // Another deleting claim of the same Machine marked it this pass.
        return;
    }
    let held = snapshot
        .claim_machine_deployment(claim)
        .and_then(|k| snapshot.machine_deployments.iter().find(|md| md.key() == k))
        .and_then(|md| scale_down_hold(snapshot, md, &[m], now));
    // Marked again while its removal can go on (the mark may have been rolled back), and when
    // the mark on it is not ours (so it reads as this decision's); a held scale-down shows as a
    // note from `scale`.
    if !m.marked_for_deletion || !m.marked_by_us || held.is_none() {
        out.actions.push(mark(m, Some(&claim.name), &reason));
    }
    out.marked_machines.insert(m.key());
}

/// What one claim's drain of its Nodes goes by.
struct Step<'a> {
    pdbs: &'a Pdbs,
    now: Timestamp,
    claim: &'a NodeClaimRecord,
    reason: &'a str,
    voluntary: bool,
    deadline: Option<Timestamp>,
}

/// One pass of the drain of one Node of a deleting claim; returns whether the Node is done
/// (drained, and tainted for at least [`MIN_DRAIN_SECS`]).
fn drain_node(
    snapshot: &Snapshot,
    step: &Step<'_>,
    out: &mut Disruption,
    leaving: &mut Vec<String>,
    node: &NodeRecord,
) -> bool {
    let Step {
        pdbs,
        now,
        claim,
        reason,
        voluntary,
        deadline,
    } = *step;
    let pods = pods_on(snapshot, &node.name);
    let tainted = node.disrupted();
    // Core's terminator (`terminator.go` Taint, run on every pass of a terminating Node)
    // labels it out of external load balancers before draining it, whether or not a
    // disruption command tainted it earlier. The key's presence is what excludes the node,
    // so a value someone else set is left as it is.
    if !node.labels.contains_key(EXCLUDE_FROM_LOAD_BALANCERS_LABEL) {
        out.actions.push(Action::ExcludeFromLoadBalancers {
            target: format!("Node/{}", node.name),
            node: node.name.clone(),
        });
    }
    if !tainted {
        out.actions.push(Action::TaintNode {
            target: format!("Node/{}", node.name),
            node: node.name.clone(),
            taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
            reason: reason.to_string(),
            saving_per_hour: Default::default(),
            node_claim: Some(claim.name.clone()),
            since: now.to_string(),
            replacements: 0,
        });
    }
    if !drained(&pods, now) {
        let homeless = voluntary && {
            let mut with = leaving.clone();
            with.push(node.name.clone());
            // Pods no eviction moves need no room (core SimulateScheduling leaves them
            // out): they wait for the deadline.
            let fits = home_for_movable(snapshot, &with, pdbs, now) == Home::Fits;
            if fits {
                leaving.push(node.name.clone());
            }
            !fits
        };
        if homeless {
            // Only what the deadline forces goes; the rest waits for the room provisioning
            // is making for it.
            out.notes.push(format!(
                "node {}: its drain waits for room for its pods",
                node.name
            ));
            delete_due(out, &pods, &node.name, reason, deadline, now);
        } else {
            drain_step(out, &pods, &node.name, reason, deadline, now);
        }
        return false;
    }
    if !tainted || !drained_long_enough(claim, now) {
        out.notes.push(format!(
            "node {}: drained; its Machine goes {MIN_DRAIN_SECS}s after the taint",
            node.name
        ));
        return false;
    }
    true
}

/// Core's `Drained` condition on a draining claim (`node/termination` awaitDrain): Unknown with
/// reason `Draining` when the drain starts (a claim without the condition), True (reason
/// `Drained`, as operatorpkg's SetTrue words it) once it is over.
fn drained_condition(claim: &NodeClaimRecord, done: bool) -> Option<Action> {
    let current = claim.conditions.iter().find(|c| c.type_ == DRAINED);
    let update = match (done, current) {
        (true, Some(c)) if c.is_true() => return None,
        (true, _) => ConditionUpdate {
            type_: DRAINED.to_string(),
            status: "True".to_string(),
            reason: DRAINED.to_string(),
            message: String::new(),
        },
        (false, None) => ConditionUpdate {
            type_: DRAINED.to_string(),
            status: "Unknown".to_string(),
            reason: DRAINING.to_string(),
            message: DRAINING.to_string(),
        },
        (false, Some(_)) => return None,
    };
    Some(Action::SetNodeClaimConditions {
        target: format!("NodeClaim/{}", claim.name),
        node_claim: claim.name.clone(),
        set: vec![update],
        clear: Vec::new(),
    })
}

/// The Nodes termination drains for a claim: its Nodes, if the claim registered.
fn registered_nodes<'a>(snapshot: &'a Snapshot, claim: &NodeClaimRecord) -> Vec<&'a NodeRecord> {
    if !claim.condition_true("Registered") {
        return Vec::new();
    }
    nodes_of(snapshot, claim)
}

/// The nodes of deleting claims (with a live, bound Machine) still being drained, and whether
/// their claim was deleted by a voluntary command of ours.
pub(super) fn draining_nodes(snapshot: &Snapshot, now: Timestamp) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for c in snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.deleting && has_finalizer(&c.finalizers))
        .filter(|c| bound_machine(snapshot, c).is_some_and(|m| !m.deleting))
    {
        let voluntary = c
            .annotations
            .get(DISRUPTION_REASON_ANNOTATION)
            .is_some_and(|r| is_voluntary(r));
        for node in registered_nodes(snapshot, c) {
            if !drained(&pods_on(snapshot, &node.name), now)
                && !out.iter().any(|(n, _)| *n == node.name)
            {
                out.push((node.name.clone(), voluntary));
            }
        }
    }
    out
}

/// Only the deletions the deadline forces (a drain step without evictions).
fn delete_due(
    out: &mut Disruption,
    pods: &[&crate::model::snapshot::PodRecord],
    node: &str,
    reason: &str,
    deadline: Option<Timestamp>,
    now: Timestamp,
) {
    let mut step = Disruption::default();
    drain_step(&mut step, pods, node, reason, deadline, now);
    out.actions.extend(
        step.actions
            .into_iter()
            .filter(|a| matches!(a, Action::DeletePod { .. })),
    );
    out.reports.extend(step.reports);
}

/// Nodes carrying our finalizer whose claim and Machine are both gone: the finalizer comes off
/// so the Node object can go (Cluster API has drained and deleted the Machine by then). A Node
/// another Karpenter's claim holds (the finalizer has the same name) is never touched.
fn release_node_finalizers(snapshot: &Snapshot) -> Vec<Action> {
    let foreign = |n: &NodeRecord| {
        snapshot.foreign_claims.iter().any(|c| {
            c.node_name.as_ref() == Some(&n.name)
                || (c.provider_id.is_some() && c.provider_id == n.provider_id)
        })
    };
    snapshot
        .nodes
        .iter()
        .filter(|n| has_finalizer(&n.finalizers) && !foreign(n))
        .filter(|n| claim_of_node(snapshot, n).is_none() && machine_of_node(snapshot, n).is_none())
        .map(|n| Action::RemoveNodeFinalizer {
            target: format!("Node/{}", n.name),
            node: n.name.clone(),
        })
        .collect()
}
