//! What makes a node a disruption candidate and how it is judged, as core's disruption
//! controller reads it: `do-not-disrupt` and PodDisruptionBudget blockers (`statenode.go`
//! ValidateNodeDisruptable, ValidatePodsDisruptable), the node counts budgets work with
//! (`helpers.go` BuildDisruptionBudgetMapping), the quiet time consolidation waits for, the
//! claim's price, and the reason a candidate is taken. [`super::disruption`] plans the commands
//! from these.

use std::collections::BTreeSet;

use jiff::Timestamp;

use super::disruption::DO_NOT_DISRUPT;
use super::drain::{do_not_disrupt_active, waiting_eviction};
use super::pdb::Pdbs;
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::labels::Labels;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::{NodeIndex, NodeRecord, PodRecord, Snapshot};
use crate::vocab::keys::{DISRUPTED_TAINT_KEY, INITIALIZED_LABEL, NODEPOOL};
use crate::vocab::reasons::DisruptionReason;

/// `karpenter.sh/do-not-disrupt: "true"` on the node or its claim (core
/// ValidateNodeDisruptable): no voluntary disruption, eventual or not.
pub(super) fn node_do_not_disrupt(node: &NodeRecord, claim: &NodeClaimRecord) -> bool {
    let annotated = |a: &Labels| a.get(DO_NOT_DISRUPT).map(String::as_str) == Some("true");
    annotated(&node.annotations) || annotated(&claim.annotations)
}

/// The node counts a pool's budgets work with, as core's `BuildDisruptionBudgetMapping`
/// (`disruption/helpers.go`): only initialized nodes count toward the total (a replacement
/// that is not up yet must not raise a percentage), never one whose claim reports
/// `InstanceTerminating`, and of those, nodes that are NotReady,
/// deleting (the NodeClaim, the Node or its Machine) or already being disrupted count as
/// disrupting. `leaving` more nodes of the pool (see [`leaving_unclaimed`]) count toward both.
/// Nodes are looked up in the pass's index.
pub(super) fn budget_counts_indexed(
    snapshot: &Snapshot,
    nodes: &NodeIndex<'_>,
    claims: &[&NodeClaimRecord],
    leaving: usize,
) -> (usize, usize) {
    let deleting = deleting_machines(snapshot);
    let mut total = leaving;
    let mut disrupting = leaving;
    for c in claims {
        let Some(node) = nodes.of_claim(c) else {
            continue;
        };
        if !c.condition_true("Initialized") {
            continue;
        }
        // A claim whose instance is already terminating (drained, its cloud instance being
        // deleted) is left out altogether, as core's BuildDisruptionBudgetMapping does.
        if c.condition_true("InstanceTerminating") {
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

/// Per NodePool (by the Node's `karpenter.sh/nodepool` label), the initialized Nodes that are
/// leaving with no NodeClaim left and still have pods to drain: their Machine is being deleted,
/// or the Node carries the `karpenter.sh/disrupted` taint or a deletionTimestamp. Core keeps a
/// claim until its instance is gone, and `BuildDisruptionBudgetMapping` counts its node as
/// disrupting (`StateNode.MarkedForDeletion`) until the claim reports `InstanceTerminating`,
/// which it does once the node is drained and the instance delete was issued. Our claim comes
/// off when its Machine starts deleting, normally after our drain; a node left with pods waiting
/// for eviction (a forceful deletion, a Machine deleted out of band while still marked) is still
/// draining, and counting it in a pool's total and as disrupting (a node counted in both never
/// raises what a budget allows) keeps core's budget until it is drained.
pub(super) fn leaving_unclaimed(
    snapshot: &Snapshot,
    nodes: &NodeIndex<'_>,
    now: Timestamp,
) -> std::collections::HashMap<String, usize> {
    let claimed: BTreeSet<&str> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| nodes.of_claim(c))
        .map(|n| n.name.as_str())
        .collect();
    let mut machine_nodes: BTreeSet<&str> = BTreeSet::new();
    let mut machine_pids: BTreeSet<&str> = BTreeSet::new();
    for m in snapshot.machines.iter().filter(|m| m.deleting) {
        machine_nodes.extend(m.node_name.as_deref());
        machine_pids.extend(m.provider_id.as_deref());
    }
    let mut leaving: std::collections::HashMap<&str, &String> = std::collections::HashMap::new();
    for node in &snapshot.nodes {
        let Some(pool) = node.labels.get(NODEPOOL) else {
            continue;
        };
        // Core counts initialized nodes only (`StateNode.Initialized`: the Node's label).
        if claimed.contains(node.name.as_str())
            || node.labels.get(INITIALIZED_LABEL).map(String::as_str) != Some("true")
        {
            continue;
        }
        let is_leaving = node.deleting
            || node.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY)
            || machine_nodes.contains(node.name.as_str())
            || node
                .provider_id
                .as_deref()
                .is_some_and(|p| machine_pids.contains(p));
        if is_leaving {
            leaving.insert(node.name.as_str(), pool);
        }
    }
    let mut out = std::collections::HashMap::new();
    if leaving.is_empty() {
        return out;
    }
    // A drained node is core's InstanceTerminating claim: it counts no more.
    let mut draining: BTreeSet<&str> = BTreeSet::new();
    for p in &snapshot.pods {
        if let Some(n) = p.node_name.as_deref()
            && leaving.contains_key(n)
            && waiting_eviction(p, now)
        {
            draining.insert(n);
        }
    }
    for n in draining {
        if let Some(pool) = leaving.get(n) {
            *out.entry((*pool).clone()).or_insert(0) += 1;
        }
    }
    out
}

/// The Machines being deleted (`namespace/name`), collected once per pass.
pub(super) fn deleting_machines(snapshot: &Snapshot) -> BTreeSet<String> {
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
pub(super) fn being_removed(
    deleting: &BTreeSet<String>,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
) -> bool {
    node.deleting || claim.machine.as_ref().is_some_and(|k| deleting.contains(k))
}

/// How long a claim's node has been without pod changes, counted as core's consolidation
/// (`nodeclaim/disruption/consolidation.go`) does: from `status.lastPodEventTime`, else from
/// when it initialized. An event the watches saw that the claim's status does not show yet
/// counts too (it is being written this pass).
pub(crate) fn quiet_for(snapshot: &Snapshot, claim: &NodeClaimRecord, now: Timestamp) -> i64 {
    quiet_since(snapshot, claim)
        .map(|s| now.as_second() - s.as_second())
        .unwrap_or(i64::MAX)
}

/// Since when a claim's node has been without pod changes (see [`quiet_for`]); None without
/// any time on the claim.
pub(crate) fn quiet_since(snapshot: &Snapshot, claim: &NodeClaimRecord) -> Option<Timestamp> {
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
    match last_event {
        Some(t) => Some(t),
        None => initialized.or(claim.created),
    }
}

/// The Nodes still inside their own NodePool's `consolidateAfter` window: an initialized claim
/// whose node saw a pod event (else initialized) more recently than that. Consolidation does not
/// move a candidate's pods onto them; mirrors Karpenter's `IsUnderConsolidateAfter`
/// (`utils/disruption`), which core's scheduler applies to existing nodes when it simulates a
/// consolidation (`IsConsolidationSimulation`). `Never` and `0s` windows never hold a node.
pub(super) fn under_consolidate_after(
    snapshot: &Snapshot,
    nodes: &NodeIndex<'_>,
    now: Timestamp,
) -> Vec<String> {
    // Each pool's window in seconds, for pools that have one: one pass over the claims.
    let windows: std::collections::HashMap<&str, i64> = snapshot
        .nodepools
        .iter()
        .filter_map(|pool| match pool.consolidate_after.as_deref()?.parse() {
            Ok(NillableDuration::After(after)) if after.as_secs_i64() > 0 => {
                Some((pool.name.as_str(), after.as_secs_i64()))
            }
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    if windows.is_empty() {
        return out;
    }
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.condition_true("Initialized"))
    {
        let Some(&window) = claim.node_pool.as_deref().and_then(|p| windows.get(p)) else {
            continue;
        };
        if quiet_for(snapshot, claim, now) < window
            && let Some(node) = nodes.of_claim(claim)
        {
            out.push(node.name.clone());
        }
    }
    out
}

/// The `consolidateAfter` of a claim's NodePool in seconds, when it has a positive one.
pub(super) fn consolidate_after_secs(snapshot: &Snapshot, claim: &NodeClaimRecord) -> Option<i64> {
    let pool = snapshot
        .nodepools
        .iter()
        .find(|p| claim.node_pool.as_deref() == Some(p.name.as_str()))?;
    match pool.consolidate_after.as_deref()?.parse() {
        Ok(NillableDuration::After(after)) if after.as_secs_i64() > 0 => Some(after.as_secs_i64()),
        _ => None,
    }
}

/// The price per hour of a claim's flavor.
pub(super) fn claim_price(
    snapshot: &Snapshot,
    claim: &NodeClaimRecord,
) -> crate::model::flavor::Price {
    snapshot
        .claim_machine_deployment(claim)
        .and_then(|md| snapshot.machine_deployments.iter().find(|r| r.key() == md))
        .and_then(|r| r.flavor.as_ref().ok())
        .map(|f| f.price)
        .unwrap_or_default()
}

/// Disruption blockers, as Karpenter reads them (core `state/statenode.go`
/// ValidateNodeDisruptable and ValidatePodsDisruptable): `karpenter.sh/do-not-disrupt: "true"` on
/// the node or its NodeClaim; a pod with an active `do-not-disrupt` (DaemonSet and mirror pods
/// included); or a pod that PodDisruptionBudgets keep from being evicted (one allowing no
/// disruption, or two covering it). The reason, for notes and Events.
pub(crate) fn blocked_by(
    node: &NodeRecord,
    claim: &NodeClaimRecord,
    pods: &[&PodRecord],
    pdbs: &Pdbs,
    now: Timestamp,
) -> Option<String> {
    if node_do_not_disrupt(node, claim) {
        return Some(format!(
            "disruption is blocked through the \"{DO_NOT_DISRUPT}\" annotation"
        ));
    }
    if let Some(p) = pods
        .iter()
        .find(|p| !p.terminating && do_not_disrupt_active(p, now))
    {
        return Some(format!(
            "pod has \"{DO_NOT_DISRUPT}\" annotation (Pod={})",
            p.demand.key()
        ));
    }
    pdbs.blocks(pods, now).map(|b| b.to_string())
}

/// Why a candidate is disrupted (drift before emptiness, as core orders its methods), if it is.
/// Expiry is not decided here: every claim expires, see `expire`.
pub(super) fn decide(
    snapshot: &Snapshot,
    pool: &NodePool,
    claim: &NodeClaimRecord,
    movable: usize,
    now: Timestamp,
    consolidate_after: Option<GoDuration>,
) -> Result<Option<DisruptionReason>, String> {
    if let Some(e) = claim
        .expire_after
        .as_deref()
        .or(pool.expire_after.as_deref())
        .and_then(|e| e.parse::<NillableDuration>().err())
    {
        return Err(format!("expireAfter: {e}"));
    }
    if super::drift::drift_reason(snapshot, pool, claim, now).is_some() {
        return Ok(Some(DisruptionReason::Drifted));
    }
    if movable == 0
        && let Some(after) = consolidate_after
        && quiet_for(snapshot, claim, now) >= after.as_secs_i64()
    {
        return Ok(Some(DisruptionReason::Empty));
    }
    Ok(None)
}
