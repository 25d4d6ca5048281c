//! Disruption: which nodes to remove, and the exact termination sequence for each. Covered here:
//! emptiness (per `consolidationPolicy`, after `consolidateAfter`), expiration (`expireAfter`,
//! forceful) and NodePool drift (hash), with disruption budgets, `karpenter.sh/do-not-disrupt`
//! on nodes and pods, and PodDisruptionBudgets that allow no disruption. Replacing underutilized
//! nodes by cheaper ones is not planned yet.
//!
//! The sequence for a node: taint `karpenter.sh/disrupted:NoSchedule`, evict its pods in
//! Karpenter's order; once no pod needs moving, mark its exact Machine with
//! `cluster.x-k8s.io/delete-machine`, lower the replicas (by [`super::scale`], which never lowers
//! without that mark) and delete the NodeClaim.

use std::collections::BTreeSet;

use jiff::Timestamp;

use super::action::{Action, DISRUPTED_TAINT_KEY, DISRUPTION_REASON_ANNOTATION};
use super::budget::allowed_disruptions;
use super::consolidation::{Candidate, Home, consolidate, home};
use super::drain::{drained, evict, grace_elapsed, is_forceful, never_evicted, tier};
use super::lifecycle::{bound_machine, mark};
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::labels::{LabelSelector, Labels};
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::{NodeRecord, PodRecord, Snapshot};

/// Annotation that blocks disruption on a node or a pod (a Karpenter key, shared with
/// consolidation through the model so the two modules import in one direction only).
pub use crate::model::labels::keys::DO_NOT_DISRUPT;

/// What disruption decided in one pass.
#[derive(Debug, Default)]
pub struct Disruption {
    /// Actions, in order per node.
    pub actions: Vec<Action>,
    /// NodeClaims deleted.
    pub deleted_claims: BTreeSet<String>,
    /// Machines marked.
    pub marked_machines: BTreeSet<String>,
    /// Why some NodePools or nodes were skipped.
    pub notes: Vec<String>,
    /// The rest of each decision under way, for later passes (drains finish first).
    pub pending: Vec<Action>,
    /// Why nodes may not be disrupted (Karpenter's `DisruptionBlocked`), for the plan's status.
    pub reports: Vec<Action>,
}

pub(super) fn pods_on<'a>(snapshot: &'a Snapshot, node: &str) -> Vec<&'a PodRecord> {
    snapshot
        .pods
        .iter()
        .filter(|p| !p.terminal && p.node_name.as_deref() == Some(node))
        .map(|p| &**p)
        .collect()
}

/// PodDisruptionBudgets (from the snapshot's objects) that allow no disruption, as selectors.
fn blocking_pdbs(snapshot: &Snapshot) -> Vec<(String, LabelSelector, String)> {
    snapshot
        .objects_of("PodDisruptionBudget")
        .filter(|o| {
            o.value
                .pointer("/status/disruptionsAllowed")
                .and_then(|v| v.as_i64())
                == Some(0)
        })
        .filter_map(|o| {
            let sel: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
                o.typed("/spec/selector", "spec.selector").ok().flatten()?;
            let sel = LabelSelector::from_k8s(&sel).ok()?;
            Some((o.namespace().to_string(), sel, o.name().to_string()))
        })
        .collect()
}

pub(super) fn node_of<'a>(
    snapshot: &'a Snapshot,
    claim: &NodeClaimRecord,
) -> Option<&'a NodeRecord> {
    snapshot.nodes.iter().find(|n| {
        claim.node_name.as_ref() == Some(&n.name)
            || (claim.provider_id.is_some() && n.provider_id == claim.provider_id)
    })
}

/// Plans disruption for every NodePool.
pub fn disrupt(
    snapshot: &Snapshot,
    now: Timestamp,
    already_deleted: &BTreeSet<String>,
) -> Disruption {
    let mut out = Disruption::default();
    let pdbs = blocking_pdbs(snapshot);
    let deleting = deleting_machines(snapshot);
    // Pending pods take the room they will be placed on first: a node they would land on is not
    // Empty, and the room they take is not a home for displaced pods.
    let (pending_room, reserved) = reserve_for_pending_pods(snapshot);
    let reserved = reserved.as_ref().unwrap_or(snapshot);
    // The pods of each node, indexed once: a scan of every pod per candidate is quadratic at
    // thousands of nodes.
    let mut by_node: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (i, p) in snapshot.pods.iter().enumerate() {
        if let Some(n) = p.node_name.as_deref().filter(|_| !p.terminal) {
            by_node.entry(n).or_default().push(i);
        }
    }
    let indices = |node: &str| by_node.get(node).map(Vec::as_slice).unwrap_or(&[]);
    let pods_on = |_: &Snapshot, node: &str| -> Vec<&PodRecord> {
        indices(node).iter().map(|&i| &*snapshot.pods[i]).collect()
    };
    for pool in &snapshot.nodepools {
        let claims: Vec<&NodeClaimRecord> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| c.node_pool.as_deref() == Some(pool.name.as_str()))
            .collect();
        let (total, mut in_progress) = budget_counts(snapshot, &claims);
        let consolidate_after = match pool
            .consolidate_after
            .as_deref()
            .map(str::parse::<NillableDuration>)
        {
            None => Some(GoDuration(0)),
            Some(Ok(NillableDuration::Never)) => None,
            Some(Ok(NillableDuration::After(d))) => Some(d),
            Some(Err(e)) => {
                skip_pool(
                    &mut out,
                    pool,
                    format!("spec.disruption.consolidateAfter: {e}"),
                );
                continue;
            }
        };
        let mut candidates: Vec<&&NodeClaimRecord> = claims
            .iter()
            .filter(|c| {
                !c.deleting && !already_deleted.contains(&c.name) && c.condition_true("Initialized")
            })
            .collect();
        candidates.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
        let mut underutilized: Vec<Candidate> = Vec::new();
        // Nodes whose voluntary drain goes on this pass: their pods' room is taken.
        let mut draining: Vec<String> = Vec::new();
        for claim in candidates {
            let Some(node) = node_of(snapshot, claim) else {
                continue;
            };
            if node.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY) {
                // Already being disrupted: evict what is left, tier by tier (evictions refused
                // by a PDB come back here); when drained, finish. A voluntary drain goes on only
                // while its pods have a home; otherwise it waits for its replacements, or is
                // called off when they failed or vanished.
                let pods = pods_on(snapshot, &node.name);
                let reason = claim
                    .annotations
                    .get(DISRUPTION_REASON_ANNOTATION)
                    .map(String::as_str)
                    .unwrap_or("Disrupted")
                    .to_string();
                if drained(&pods) {
                    finish(snapshot, &mut out, claim, node, &reason);
                } else if grace_elapsed(pool, claim, now) {
                    // terminationGracePeriod is over: pods go regardless of PDBs.
                    evict(&mut out, &pods, &node.name, &reason, true);
                } else if is_forceful(&reason) {
                    evict(&mut out, &pods, &node.name, &reason, false);
                    defer_rest(snapshot, &mut out, claim, node, &reason, false);
                } else {
                    let mut with: Vec<String> = draining.clone();
                    with.push(node.name.clone());
                    match home(reserved, &with) {
                        Home::Fits => {
                            draining.push(node.name.clone());
                            evict(&mut out, &pods, &node.name, &reason, false);
                            defer_rest(snapshot, &mut out, claim, node, &reason, false);
                        }
                        _ if replacements_pending(snapshot, &node.name, already_deleted) => {
                            out.notes.push(format!(
                                "node {}: waiting for its replacement to initialize before draining",
                                node.name
                            ));
                            defer_rest(snapshot, &mut out, claim, node, &reason, true);
                        }
                        lost => {
                            let why = match lost {
                                Home::Nowhere(p) => format!("pods {} fit nowhere", p.join(", ")),
                                _ => "its pods have no room and no replacement is coming (it failed or vanished)".to_string(),
                            };
                            let message = format!(
                                "{reason} disruption of node {} called off: {why}",
                                node.name
                            );
                            out.notes.push(message.clone());
                            out.actions.push(Action::AbortDisruption {
                                target: format!("Node/{}", node.name),
                                node: node.name.clone(),
                                node_claim: Some(claim.name.clone()),
                                message,
                            });
                        }
                    }
                }
                continue;
            }
            // Cluster API is already removing this node (its Machine or its Node is being
            // deleted, e.g. by a MachineHealthCheck or a rollout): Cluster API drains it, and
            // it is no candidate for a disruption of ours (core `state/statenode.go`
            // `ValidateNodeDisruptable` refuses nodes marked for deletion).
            if being_removed(&deleting, claim, node) {
                continue;
            }
            let pods = pods_on(snapshot, &node.name);
            // Core tells why of every node its validation refuses, candidate or not.
            if let Some(why) = blocked_by(node, claim, &pods, &pdbs, now) {
                out.reports.push(Action::ReportDisruptionBlocked {
                    target: format!("Node/{}", node.name),
                    node: node.name.clone(),
                    node_claim: claim.name.clone(),
                    message: why,
                });
            }
            let movable = pods.iter().filter(|p| !p.daemon).count();
            let wanted_by_pending = pending_room.contains(&node.name);
            let reason = match decide(
                snapshot,
                pool,
                claim,
                if wanted_by_pending {
                    movable.max(1)
                } else {
                    movable
                },
                now,
                consolidate_after,
            ) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    let quiet = consolidate_after.is_some_and(|after| {
                        quiet_for(snapshot, claim, now) >= after.as_secs_i64()
                    });
                    if pool.consolidation_policy == "WhenEmptyOrUnderutilized"
                        && movable > 0
                        && quiet
                        && blocked_by(node, claim, &pods, &pdbs, now).is_none()
                    {
                        underutilized.push(Candidate {
                            claim: claim.name.clone(),
                            node: node.name.clone(),
                            price: claim_price(snapshot, claim),
                            pods: indices(&node.name)
                                .iter()
                                .copied()
                                .filter(|&i| !snapshot.pods[i].daemon)
                                .collect(),
                        });
                    }
                    continue;
                }
                Err(e) => {
                    skip_pool(&mut out, pool, e.to_string());
                    break;
                }
            };
            // Expiration is forceful; every other reason yields to do-not-disrupt annotations,
            // to PodDisruptionBudgets that allow no disruption, and to the pool's budgets.
            if reason != "Expired" && blocked_by(node, claim, &pods, &pdbs, now).is_some() {
                continue;
            }
            if reason != "Expired" {
                match allowed_disruptions(pool, reason, total, now) {
                    Ok(allowed) if in_progress < allowed => {}
                    Ok(_) => continue,
                    Err(e) => {
                        skip_pool(&mut out, pool, format!("spec.disruption.budgets: {e}"));
                        break;
                    }
                }
            }
            in_progress += 1;
            let saving = claim_price(snapshot, claim);
            let taint = Action::TaintNode {
                target: format!("Node/{}", node.name),
                node: node.name.clone(),
                taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
                reason: reason.to_string(),
                saving_per_hour: saving,
                node_claim: Some(claim.name.clone()),
                since: now.to_string(),
            };
            // A node removed this pass (empty, or drained at once) is no home for the pods of
            // a later drain or consolidation in the same pass.
            if movable == 0 {
                // An empty node removed this pass is no home for the drains already going on in
                // it: remove it only while their pods still fit without it.
                if !drains_keep_home(reserved, &draining, std::slice::from_ref(&node.name)) {
                    in_progress -= 1;
                    out.notes.push(format!(
                        "node {}: {reason}, but nodes draining this pass need its room; not removed",
                        node.name
                    ));
                    continue;
                }
                draining.push(node.name.clone());
                out.actions.push(taint);
                // Its DaemonSet pods still go tier by tier (core `terminator.go`); the Machine
                // goes once they are gone.
                if drained(&pods) {
                    finish(snapshot, &mut out, claim, node, reason);
                } else {
                    evict(&mut out, &pods, &node.name, reason, false);
                    defer_rest(snapshot, &mut out, claim, node, reason, false);
                }
                continue;
            }
            // Forceful (expiry): drain at once; the pods go pending and are provisioned for.
            if is_forceful(reason) {
                draining.push(node.name.clone());
                out.actions.push(taint);
                evict(&mut out, &pods, &node.name, reason, false);
                defer_rest(snapshot, &mut out, claim, node, reason, false);
                continue;
            }
            // Voluntary: drain only when the pods have a home. When they need room the other
            // nodes lack, the replacements are created first and the drain waits for them to
            // initialize; when they fit nowhere, the node is left alone.
            let mut with = draining.clone();
            with.push(node.name.clone());
            match home(reserved, &with) {
                Home::Fits => {
                    draining.push(node.name.clone());
                    out.actions.push(taint);
                    evict(&mut out, &pods, &node.name, reason, false);
                    defer_rest(snapshot, &mut out, claim, node, reason, false);
                }
                Home::Needs(replacements) => {
                    // Tainted this pass: its room is no home for the drains already going on,
                    // nor for later ones.
                    if !drains_keep_home(reserved, &draining, std::slice::from_ref(&node.name)) {
                        in_progress -= 1;
                        out.notes.push(format!(
                            "node {}: {reason}, but nodes draining this pass need its room; not tainted yet",
                            node.name
                        ));
                        continue;
                    }
                    draining.push(node.name.clone());
                    for n in &replacements {
                        out.actions.push(replacement_claim(
                            snapshot,
                            pool,
                            n,
                            reason,
                            std::slice::from_ref(&node.name),
                        ));
                    }
                    out.actions.push(taint);
                    defer_rest(snapshot, &mut out, claim, node, reason, true);
                }
                Home::Nowhere(p) => {
                    in_progress -= 1;
                    out.notes.push(format!(
                        "node {}: {reason}, but pods {} fit nowhere else; not drained",
                        node.name,
                        p.join(", ")
                    ));
                }
            }
        }
        if underutilized.is_empty() {
            continue;
        }
        let room = match allowed_disruptions(pool, "Underutilized", total, now) {
            Ok(allowed) => allowed.saturating_sub(in_progress),
            Err(e) => {
                skip_pool(&mut out, pool, format!("spec.disruption.budgets: {e}"));
                continue;
            }
        };
        // Cheapest to disrupt first: fewest pods, then the most expensive node.
        underutilized.sort_by(|a, b| {
            a.pods
                .len()
                .cmp(&b.pods.len())
                .then(b.price.cmp(&a.price))
                .then(a.node.cmp(&b.node))
        });
        if let Some(decision) = consolidate(reserved, &underutilized, room) {
            let removed: Vec<String> = decision.remove.iter().map(|c| c.node.clone()).collect();
            let mut with = draining.clone();
            with.extend(removed.iter().cloned());
            if !drains_keep_home(reserved, &draining, &removed) {
                out.notes.push(format!(
                    "consolidation of {} deferred: nodes draining this pass need their room",
                    removed.join(", ")
                ));
                continue;
            }
            if decision.replacements.is_empty() && home(reserved, &with) != Home::Fits {
                // The simulation counted room that is not there yet (in-flight or initializing
                // claims): no drain on a promise.
                out.notes.push(format!(
                    "consolidation of {} deferred: its pods' room is not ready yet",
                    removed.join(", ")
                ));
                continue;
            }
            for n in &decision.replacements {
                out.actions.push(replacement_claim(
                    snapshot,
                    pool,
                    n,
                    "Underutilized",
                    &removed,
                ));
            }
            for c in &decision.remove {
                out.actions.push(Action::TaintNode {
                    target: format!("Node/{}", c.node),
                    node: c.node.clone(),
                    taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
                    reason: "Underutilized".to_string(),
                    saving_per_hour: decision.saving,
                    node_claim: Some(c.claim.clone()),
                    since: now.to_string(),
                });
                // With replacements, the drain waits for them (next passes); without, the
                // pods fit on the remaining nodes and go now.
                if decision.replacements.is_empty() {
                    evict(
                        &mut out,
                        &pods_on(snapshot, &c.node),
                        &c.node,
                        "Underutilized",
                        false,
                    );
                }
                let claim = snapshot.nodeclaims.iter().find(|k| k.name == c.claim);
                let node = snapshot.nodes.iter().find(|n| n.name == c.node);
                if let (Some(claim), Some(node)) = (claim, node) {
                    defer_rest(
                        snapshot,
                        &mut out,
                        claim,
                        node,
                        "Underutilized",
                        !decision.replacements.is_empty(),
                    );
                }
            }
        }
    }
    out
}

/// The node counts a pool's budgets work with, as core's `BuildDisruptionBudgetMapping`
/// (`disruption/helpers.go`): only initialized nodes count toward the total (a replacement
/// that is not up yet must not raise a percentage), and of those, nodes that are NotReady,
/// deleting (the NodeClaim, the Node or its Machine) or already being disrupted count as
/// disrupting.
pub fn budget_counts(snapshot: &Snapshot, claims: &[&NodeClaimRecord]) -> (usize, usize) {
    let deleting = deleting_machines(snapshot);
    let mut total = 0;
    let mut disrupting = 0;
    for c in claims {
        let Some(node) = node_of(snapshot, c) else {
            continue;
        };
        if !c.condition_true("Initialized") {
            continue;
        }
        total += 1;
        if c.deleting
            || being_removed(&deleting, c, node)
            || node.ready != Some(true)
            || node.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY)
        {
            disrupting += 1;
        }
    }
    (total, disrupting)
}

/// The Machines being deleted (`namespace/name`), collected once per pass.
fn deleting_machines(snapshot: &Snapshot) -> BTreeSet<String> {
    snapshot
        .machines
        .iter()
        .filter(|m| m.deleting)
        .map(|m| m.key())
        .collect()
}

/// Whether the Node, or the Machine bound to its claim, is being deleted (core's
/// `StateNode.MarkedForDeletion` for a Node being deleted; a Machine Cluster API is deleting
/// takes its Node with it).
fn being_removed(deleting: &BTreeSet<String>, claim: &NodeClaimRecord, node: &NodeRecord) -> bool {
    node.deleting || claim.machine.as_ref().is_some_and(|k| deleting.contains(k))
}

/// Where pending pods would be placed now on existing nodes (Karpenter core simulates pending
/// pods in disruption, `disruption/helpers.go` `SimulateScheduling`): the nodes they would land
/// on, and a view with them bound there (None when there are no pending pods), so consolidation
/// and drains see only the room left after them.
fn reserve_for_pending_pods(snapshot: &Snapshot) -> (BTreeSet<String>, Option<Snapshot>) {
    use crate::sched::strategy::{existing_placements, place_on_existing, queue_order};
    let pending: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| snapshot.pods[i].is_provisionable())
        .collect();
    if pending.is_empty() {
        return (BTreeSet::new(), None);
    }
    // Only the room of existing (and in-flight) nodes matters here, which every strategy fills
    // first and in queue order: that placement alone, not a whole provisioning plan.
    let placed = {
        let (offerings, _) = crate::sched::catalog::offerings(snapshot, true);
        let mut state = crate::sched::state::ClusterState::new(snapshot, &offerings);
        place_on_existing(&mut state, &queue_order(snapshot, &pending));
        existing_placements(&state).0
    };
    let mut view = snapshot.clone();
    for (p, node) in &placed {
        // Nominated to that node, as the scheduler would: if the node goes, they are pending
        // again and provisioning (which sees the node disrupted) takes care of them.
        let pod = std::sync::Arc::make_mut(&mut view.pods[*p]);
        pod.node_name = Some(node.clone());
        pod.nominated = true;
    }
    (placed.into_iter().map(|(_, n)| n).collect(), Some(view))
}

/// Skips disruption for a NodePool whose settings do not parse: a note in the plan and a
/// Warning Event on the NodePool.
/// Whether the voluntary drains already decided this pass keep a home once `taken` stop being
/// room too (tainted or removed by a later decision of the same pass): no pod is evicted towards
/// a node that the same pass takes away.
fn drains_keep_home(snapshot: &Snapshot, draining: &[String], taken: &[String]) -> bool {
    if draining.is_empty() {
        return true;
    }
    let mut view = snapshot.clone();
    for n in view.nodes.iter_mut().filter(|n| taken.contains(&n.name)) {
        // `home` counts only Ready nodes as room; the pods bound there stay where they are.
        n.ready = Some(false);
    }
    home(&view, draining) == Home::Fits
}

fn skip_pool(out: &mut Disruption, pool: &NodePool, problem: String) {
    let message = format!("{problem}; disruption skipped");
    out.notes.push(format!("NodePool {}: {message}", pool.name));
    out.actions.push(Action::WarnNodePool {
        target: format!("NodePool/{}", pool.name),
        node_pool: pool.name.clone(),
        reason: "InvalidDisruptionSettings".to_string(),
        message,
    });
}

/// The annotation on a replacement NodeClaim naming the nodes it replaces (comma-separated).
pub const REPLACES_ANNOTATION: &str = "karpenter-capi/replaces";

/// A `createNodeClaim` for a replacement, annotated with the nodes it replaces so later passes
/// can wait for it before draining them.
fn replacement_claim(
    snapshot: &Snapshot,
    pool: &NodePool,
    node: &crate::sched::strategy::NewNode,
    reason: &str,
    replaces: &[String],
) -> Action {
    let mut action = super::provision::create_node_claim(snapshot, pool, node, reason);
    if let Action::CreateNodeClaim { manifest, .. } = &mut action {
        manifest["metadata"]["annotations"][REPLACES_ANNOTATION] =
            serde_json::json!(replaces.join(","));
    }
    action
}

/// Whether a NodeClaim replacing this node exists and is not initialized yet. One being deleted,
/// or deleted by this very pass (`deleted`: its launch or registration timed out), is no longer
/// coming: the disruption waiting for it is called off now, as core's orchestration queue fails
/// the command and un-taints the candidates when a replacement fails to launch or initialize
/// (`pkg/controllers/disruption/orchestration/queue.go`).
fn replacements_pending(snapshot: &Snapshot, node: &str, deleted: &BTreeSet<String>) -> bool {
    snapshot.nodeclaims.iter().any(|c| {
        !c.deleting
            && !deleted.contains(&c.name)
            && !c.condition_true("Initialized")
            && c.annotations
                .get(REPLACES_ANNOTATION)
                .is_some_and(|list| list.split(',').any(|n| n == node))
    })
}

/// How long a claim's node has been without pod changes, counted as core's consolidation
/// (`nodeclaim/disruption/consolidation.go`) does: from `status.lastPodEventTime`, else from
/// when it initialized. An event the watches saw that the claim's status does not show yet
/// counts too (it is being written this pass).
pub fn quiet_for(snapshot: &Snapshot, claim: &NodeClaimRecord, now: Timestamp) -> i64 {
    let initialized = claim
        .conditions
        .iter()
        .find(|c| c.type_ == "Initialized")
        .and_then(|c| c.last_transition_time);
    let seen = claim
        .node_name
        .as_ref()
        .and_then(|n| snapshot.pod_events.get(n))
        .copied();
    let last_event = [claim.last_pod_event, seen].into_iter().flatten().max();
    let since = match last_event {
        Some(t) => Some(t),
        None => initialized.or(claim.created),
    };
    since
        .map(|s| now.as_second() - s.as_second())
        .unwrap_or(i64::MAX)
}

/// The price per hour of a claim's flavor.
fn claim_price(snapshot: &Snapshot, claim: &NodeClaimRecord) -> crate::model::flavor::Price {
    snapshot
        .claim_machine_deployment(claim)
        .and_then(|md| snapshot.machine_deployments.iter().find(|r| r.key() == md))
        .and_then(|r| r.flavor.as_ref().ok())
        .map(|f| f.price)
        .unwrap_or_default()
}

/// Disruption blockers, as Karpenter reads them (core `state/statenode.go`,
/// `utils/pod/scheduling.go` `IsDoNotDisruptActive`): `karpenter.sh/do-not-disrupt: "true"` on
/// the node or its NodeClaim; on a pod, `"true"` or a duration (`"5m"`) that has not elapsed
/// since the pod started (no start time yet: still protected; a value that does not parse:
/// no protection); or a pod covered by a PodDisruptionBudget that allows no disruption. The
/// reason, for notes and Events.
pub fn blocked_by(
    node: &NodeRecord,
    claim: &NodeClaimRecord,
    pods: &[&PodRecord],
    pdbs: &[(String, LabelSelector, String)],
    now: Timestamp,
) -> Option<String> {
    let annotated = |a: &Labels| a.get(DO_NOT_DISRUPT).map(String::as_str) == Some("true");
    if annotated(&node.annotations) || annotated(&claim.annotations) {
        return Some(format!(
            "disruption is blocked through the \"{DO_NOT_DISRUPT}\" annotation"
        ));
    }
    if let Some(p) = pods.iter().find(|p| pod_do_not_disrupt(p, now)) {
        return Some(format!(
            "pod has \"{DO_NOT_DISRUPT}\" annotation (Pod={})",
            p.demand.key()
        ));
    }
    pods.iter().find_map(|p| {
        (!p.daemon)
            .then(|| {
                pdbs.iter()
                    .find(|(ns, sel, _)| *ns == p.demand.namespace && sel.matches(&p.demand.labels))
            })
            .flatten()
            .map(|(ns, _, name)| {
                format!("pdb prevents pod evictions (PodDisruptionBudget=[{ns}/{name}])")
            })
    })
}

/// Whether a pod's `karpenter.sh/do-not-disrupt` protection is active at `now`.
pub fn pod_do_not_disrupt(p: &PodRecord, now: Timestamp) -> bool {
    let Some(value) = p.annotations.get(DO_NOT_DISRUPT) else {
        return false;
    };
    if value == "true" {
        return true;
    }
    match value.parse::<GoDuration>() {
        Ok(d) if d.as_secs_i64() > 0 => match p.started {
            Some(started) => now.as_second() - started.as_second() < d.as_secs_i64(),
            None => true,
        },
        _ => false,
    }
}

fn decide(
    snapshot: &Snapshot,
    pool: &NodePool,
    claim: &NodeClaimRecord,
    movable: usize,
    now: Timestamp,
    consolidate_after: Option<GoDuration>,
) -> Result<Option<&'static str>, String> {
    let age = claim
        .created
        .map(|c| now.as_second() - c.as_second())
        .unwrap_or(0);
    let expire = claim
        .expire_after
        .as_deref()
        .or(pool.expire_after.as_deref())
        .unwrap_or("720h");
    match expire
        .parse::<NillableDuration>()
        .map_err(|e| format!("expireAfter: {e}"))?
    {
        NillableDuration::After(d) if age > d.as_secs_i64() => return Ok(Some("Expired")),
        _ => {}
    }
    if super::drift::drift_reason(snapshot, pool, claim, now).is_some() {
        return Ok(Some("Drifted"));
    }
    if movable == 0
        && let Some(after) = consolidate_after
        && quiet_for(snapshot, claim, now) >= after.as_secs_i64()
    {
        return Ok(Some("Empty"));
    }
    Ok(None)
}

/// Records the steps a decision still has to take once its node is drained (and, when
/// `with_evictions`, the evictions themselves), so a plan shows each decision complete.
pub(super) fn defer_rest(
    snapshot: &Snapshot,
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: &str,
    with_evictions: bool,
) {
    if with_evictions {
        let pods = pods_on(snapshot, &node.name);
        let mut order: Vec<&&PodRecord> = pods.iter().filter(|p| !never_evicted(p)).collect();
        order.sort_by_key(|p| (tier(p), p.demand.key()));
        out.pending
            .extend(order.into_iter().map(|p| Action::EvictPod {
                target: format!("Pod/{}", p.demand.key()),
                pod: p.demand.key(),
                node: node.name.clone(),
                reason: reason.to_string(),
                force: false,
                uid: p.uid.clone(),
            }));
    }
    if let Some(m) = bound_machine(snapshot, claim).filter(|m| m.is_live()) {
        out.pending.push(mark(m, Some(&claim.name), reason));
    }
    out.pending.push(Action::DeleteNodeClaim {
        target: format!("NodeClaim/{}", claim.name),
        node_claim: claim.name.clone(),
        reason: reason.to_string(),
        message: format!("node {} disrupted: {reason}", node.name),
        machine: claim.machine.clone(),
        add_finalizer: !claim
            .finalizers
            .iter()
            .any(|f| f == super::action::TERMINATION_FINALIZER),
    });
    if let Some(md) = snapshot
        .claim_machine_deployment(claim)
        .and_then(|md| snapshot.machine_deployments.iter().find(|m| m.key() == md))
    {
        let current = super::scale::current_replicas(md);
        out.pending.push(Action::ScaleMachineDeployment {
            target: format!("MachineDeployment/{}", md.key()),
            machine_deployment: md.key(),
            from: current,
            replicas: (current - 1).max(0),
            rollback_machines: bound_machine(snapshot, claim)
                .map(|m| vec![m.key()])
                .unwrap_or_default(),
            resource_version: md.object.meta.resource_version.clone(),
            api_version: md.object.api_version.clone(),
        });
    }
}

/// The end of the sequence: mark the exact Machine, delete the NodeClaim (the replicas follow
/// in [`super::scale`]).
pub(super) fn finish(
    snapshot: &Snapshot,
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: &str,
) {
    if let Some(m) = bound_machine(snapshot, claim).filter(|m| m.is_live()) {
        out.actions.push(mark(m, Some(&claim.name), reason));
        out.marked_machines.insert(m.key());
    }
    out.actions.push(Action::DeleteNodeClaim {
        target: format!("NodeClaim/{}", claim.name),
        node_claim: claim.name.clone(),
        reason: reason.to_string(),
        message: format!("node {} disrupted: {reason}", node.name),
        machine: claim.machine.clone(),
        add_finalizer: !claim
            .finalizers
            .iter()
            .any(|f| f == super::action::TERMINATION_FINALIZER),
    });
    out.deleted_claims.insert(claim.name.clone());
}
