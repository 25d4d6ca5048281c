//! Disruption commands, as Karpenter core's orchestration queue runs them
//! (`disruption/queue.go`, `validation.go`): one starts with the taint (its claim records reason,
//! start and replacement count), is validated again, waits for its replacements, and ends with the
//! claim's deletion — or is called off. No state outside the cluster: the taint and the claim's
//! annotations are the queue.

use crate::vocab::keys;
use std::collections::BTreeSet;

use jiff::Timestamp;

use super::action::Action;
use super::budget::allowed_disruptions;
use super::consolidation::Home;
use super::disruption::{
    DO_NOT_DISRUPT, Disruption, blocked_by, claim_price, defer_rest, drains_keep_home,
    node_do_not_disrupt, replacement_claim, skip_pool,
};
use super::drain::{drained, never_evicted, reschedulable};
use super::lifecycle::{bound_machine, mark};
use super::pdb::{Pdbs, home_for_movable};
use crate::model::duration::GoDuration;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::{NodeIndex, NodeRecord, PodRecord, Snapshot};
use crate::vocab::keys::REPLACES_ANNOTATION;
use crate::vocab::keys::{DISRUPTED_TAINT_KEY, DISRUPTION_REASON_ANNOTATION};
use crate::vocab::reasons::DisruptionReason;

/// How long a consolidation command waits before it is validated again and carried out (core
/// `disruption/consolidation.go` commandValidationDelay); emptiness and consolidation only.
pub(crate) const VALIDATION_DELAY_SECS: i64 = 15;

/// How long a drained node stays tainted before its Machine goes (core `node/termination`
/// MinDrainTime): pods the scheduler bound before it saw the taint are drained too.
pub(crate) const MIN_DRAIN_SECS: i64 = 5;

/// How long a disruption command may wait for its replacements before it is called off (core
/// `disruption/queue.go` GetMaxRetryDuration): 80 ms per queued command, clamped to 10 minutes
/// .. 1 hour.
pub fn command_timeout_secs(queued: usize) -> i64 {
    let ms = 80i64.saturating_mul(i64::try_from(queued).unwrap_or(i64::MAX));
    (ms / 1000).clamp(600, 3600)
}

/// Whether a recorded disruption reason is voluntary (emptiness, consolidation, drift: the claim
/// is deleted only once its pods have a home) rather than forceful (expiry, a user's deletion,
/// timeouts, garbage collection: drained at once). See [`DisruptionReason::is_voluntary`].
pub(crate) fn is_voluntary(reason: &str) -> bool {
    DisruptionReason::parse(reason).is_some_and(DisruptionReason::is_voluntary)
}

/// A disruption command that starts this pass: the taint, its claim remembering when and why.
pub(super) fn start_command(
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: DisruptionReason,
    saving: crate::model::flavor::Price,
    replacements: usize,
    now: Timestamp,
) -> Action {
    Action::TaintNode {
        target: format!("Node/{}", node.name),
        node: node.name.clone(),
        taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
        reason: reason.to_string(),
        saving_per_hour: saving,
        node_claim: Some(claim.name.clone()),
        since: now.to_string(),
        replacements,
    }
}

/// A disruption command under way: a node carrying `karpenter.sh/disrupted` whose claim is not
/// deleted yet.
pub(super) struct Command<'a> {
    pub(super) claim: &'a NodeClaimRecord,
    pub(super) node: &'a NodeRecord,
    pub(super) pods: Vec<&'a PodRecord>,
}

/// Carries a command under way one step on, as core's orchestration queue does
/// (`disruption/queue.go` waitOrTerminate, `validation.go`): called off when it timed out, a
/// replacement failed or vanished, or it no longer holds (blocked, pods arrived or lost their
/// home); waiting while a replacement initializes or the validation delay runs; else its claim is
/// deleted, and termination drains the node. A taint no command of ours stands behind (none
/// recorded on the claim) is removed, as core does after a restart.
#[allow(clippy::too_many_arguments)]
pub(super) fn continue_command(
    snapshot: &Snapshot,
    reserved: &Snapshot,
    pdbs: &Pdbs,
    out: &mut Disruption,
    draining: &mut Vec<String>,
    cmd: &Command<'_>,
    queued: usize,
    skip: &BTreeSet<String>,
    free: &std::cell::OnceCell<[i64; 2]>,
    now: Timestamp,
) {
    let (claim, node) = (cmd.claim, cmd.node);
    let Some(recorded) = claim.annotations.get(DISRUPTION_REASON_ANNOTATION) else {
        abort(
            out,
            claim,
            node,
            "no disruption command of this controller stands behind its karpenter.sh/disrupted taint",
        );
        return;
    };
    let Some(reason) = DisruptionReason::parse(recorded).filter(|r| r.is_voluntary()) else {
        // A forceful disruption tainted by an earlier version: its claim goes now.
        if super::rollout::claim_paused(snapshot, claim).is_none() {
            delete_claim(out, claim, node, recorded);
        }
        return;
    };
    let elapsed = claim
        .annotations
        .get(keys::DRAIN_STARTED_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| now.as_second() - t.as_second())
        .unwrap_or(VALIDATION_DELAY_SECS);
    let timeout = command_timeout_secs(queued);
    if elapsed > timeout {
        abort(
            out,
            claim,
            node,
            &format!(
                "{reason} disruption timed out after {}",
                GoDuration(u64::try_from(elapsed).unwrap_or(0))
            ),
        );
        return;
    }
    let expected: usize = claim
        .annotations
        .get(keys::REPLACEMENTS_ANNOTATION)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let live: Vec<&NodeClaimRecord> = snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name))
        .filter(|c| {
            c.annotations
                .get(REPLACES_ANNOTATION)
                .is_some_and(|list| list.split(',').any(|n| n == node.name))
        })
        .collect();
    if live.len() < expected {
        abort(
            out,
            claim,
            node,
            &format!("{reason} disruption called off: a replacement NodeClaim failed or vanished"),
        );
        return;
    }
    // A command with replacements is in core's orchestration queue: its candidates are marked
    // for deletion until it finishes or is called off (`queue.go` StartCommand).
    if expected > 0 {
        out.marked.insert(node.name.clone());
    }
    let spare = (expected > 0)
        .then(|| {
            let room = free.get_or_init(|| free_room(reserved));
            replacements_spare(
                snapshot, reserved, pdbs, draining, cmd, reason, &live, *room, now,
            )
        })
        .flatten();
    if let Some(Spare::CallOff(why)) = &spare {
        // The replacements go first and the taint only after them (the abort shares their
        // scopes): a failed delete leaves the command on the node for the next pass to call off
        // again, where an untainted candidate would leave the replacement behind.
        for r in &live {
            out.actions.push(Action::delete_node_claim(
                r,
                reason.as_str(),
                format!("replacement for node {} no longer needed", node.name),
            ));
            out.deleted_claims.insert(r.name.clone());
        }
        abort_after(
            out,
            claim,
            node,
            why,
            live.iter().map(|r| r.name.clone()).collect(),
        );
        return;
    }
    if let Some(c) = live.iter().find(|c| !c.condition_true("Initialized")) {
        out.notes.push(format!(
            "node {}: waiting for its replacement {} to initialize before draining",
            node.name, c.name
        ));
        draining.push(node.name.clone());
        defer_rest(snapshot, out, claim, node, reason.as_str(), true);
        return;
    }
    if let Some(Spare::Wait(why)) = spare {
        out.notes.push(format!("node {}: {why}", node.name));
        draining.push(node.name.clone());
        defer_rest(snapshot, out, claim, node, reason.as_str(), true);
        return;
    }
    if reason != DisruptionReason::Drifted && elapsed < VALIDATION_DELAY_SECS {
        out.notes.push(format!(
            "node {}: {reason} disruption is validated again {}s after it started",
            node.name, VALIDATION_DELAY_SECS
        ));
        draining.push(node.name.clone());
        defer_rest(snapshot, out, claim, node, reason.as_str(), true);
        return;
    }
    // Validation (core `validation.go`): the candidate still qualifies.
    let blocked = if reason == DisruptionReason::Drifted && claim.termination_grace_period.is_some()
    {
        node_do_not_disrupt(node, claim)
            .then(|| format!("disruption is blocked through the \"{DO_NOT_DISRUPT}\" annotation"))
    } else {
        blocked_by(node, claim, &cmd.pods, pdbs, now)
    };
    // A pod that costs nothing to evict keeps the node empty (core `Candidate.IsEmpty`).
    let arrived = reason == DisruptionReason::Empty
        && cmd
            .pods
            .iter()
            .any(|p| reschedulable(p) && !never_evicted(p) && p.eviction_cost() > 0);
    let mut with = draining.clone();
    with.push(node.name.clone());
    let lost = match (blocked, arrived) {
        (Some(why), _) => Some(why),
        (None, true) => Some("pods arrived on it".to_string()),
        (None, false) => match home_for_movable(reserved, &with, pdbs, now) {
            Home::Fits => None,
            Home::Nowhere(p) => Some(format!("pods {} fit nowhere", p.join(", "))),
            // Pending pods took the room its replacements made. Core's queue drains anyway
            // (no simulation after the replacements initialize); ours never evicts without a
            // Ready home, so it waits, its node marked for deletion, while provisioning makes
            // that room (calling it off would waste the replacements); the command's timeout
            // still bounds the wait.
            Home::Needs(_) if expected > 0 => {
                out.notes.push(format!(
                    "node {}: {reason} disruption waits: pending pods took the room of its \
                     replacements, more is provisioned",
                    node.name
                ));
                draining.push(node.name.clone());
                defer_rest(snapshot, out, claim, node, reason.as_str(), true);
                return;
            }
            Home::Needs(_) => Some("its pods no longer have room".to_string()),
        },
    };
    if let Some(why) = lost {
        abort(
            out,
            claim,
            node,
            &format!(
                "{reason} disruption of node {} called off: {why}",
                node.name
            ),
        );
        return;
    }
    draining.push(node.name.clone());
    if let Some(why) = super::rollout::claim_paused(snapshot, claim) {
        out.notes.push(format!(
            "node {}: {reason} disruption waits: {why}",
            node.name
        ));
        defer_rest(snapshot, out, claim, node, reason.as_str(), true);
        return;
    }
    if drained(&cmd.pods, now) && drained_long_enough(claim, now) {
        finish(snapshot, out, claim, node, reason.as_str());
    } else {
        delete_claim(out, claim, node, reason.as_str());
        defer_rest(snapshot, out, claim, node, reason.as_str(), true);
    }
}

/// Drift's command for a pool (core `disruption/drift.go`): one drifted node, the empty ones
/// first, then the one drifted longest; within the pool's budget, and only when its pods have a
/// home (replacements created first when they need room). Whether a command started.
#[allow(clippy::too_many_arguments)]
pub(super) fn start_drift(
    snapshot: &Snapshot,
    reserved: &Snapshot,
    pdbs: &Pdbs,
    pool: &NodePool,
    out: &mut Disruption,
    draining: &mut Vec<String>,
    drifted: &mut [(&NodeClaimRecord, &NodeRecord, bool)],
    (total, in_progress): (usize, usize),
    now: Timestamp,
) -> bool {
    match allowed_disruptions(pool, DisruptionReason::Drifted, total, now) {
        Ok(allowed) if in_progress < allowed => {}
        Ok(_) => return false,
        Err(e) => {
            skip_pool(out, pool, format!("spec.disruption.budgets: {e}"));
            return false;
        }
    }
    let since = |c: &NodeClaimRecord| {
        c.conditions
            .iter()
            .find(|k| k.type_ == "Drifted")
            .and_then(|k| k.last_transition_time)
    };
    drifted.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then(since(a.0).cmp(&since(b.0)))
            .then(a.0.created.cmp(&b.0.created))
            .then(a.0.name.cmp(&b.0.name))
    });
    for (claim, node, _) in drifted.iter() {
        let mut with = draining.clone();
        with.push(node.name.clone());
        // Pods that no eviction moves (a claim with a terminationGracePeriod drifts despite
        // them) get no replacement, as core's drift makes none: they stay until the deadline.
        let replacements = match home_for_movable(reserved, &with, pdbs, now) {
            Home::Fits => Vec::new(),
            Home::Needs(r) => r,
            Home::Nowhere(p) => {
                out.notes.push(format!(
                    "node {}: Drifted, but pods {} fit nowhere else; not drained",
                    node.name,
                    p.join(", ")
                ));
                continue;
            }
        };
        if !drains_keep_home(reserved, draining, std::slice::from_ref(&node.name)) {
            out.notes.push(format!(
                "node {}: Drifted, but nodes draining this pass need its room; not tainted yet",
                node.name
            ));
            continue;
        }
        for n in &replacements {
            out.actions.push(replacement_claim(
                snapshot,
                pool,
                n,
                DisruptionReason::Drifted.as_str(),
                std::slice::from_ref(&node.name),
            ));
        }
        draining.push(node.name.clone());
        out.actions.push(start_command(
            claim,
            node,
            DisruptionReason::Drifted,
            claim_price(snapshot, claim),
            replacements.len(),
            now,
        ));
        defer_rest(
            snapshot,
            out,
            claim,
            node,
            DisruptionReason::Drifted.as_str(),
            true,
        );
        return true;
    }
    false
}

/// What becomes of a consolidation command's replacements that turn out not to be needed.
enum Spare {
    /// Call the command off and delete them: the candidate's pods fit on Ready nodes now.
    CallOff(String),
    /// Hold the drain: they would fit once the destinations' `consolidateAfter` windows close,
    /// which is sooner than the replacements' own window.
    Wait(String),
}

/// Whether a consolidation command's replacements are still needed. Pods may leave the cluster
/// while they launch; when the candidate's pods then fit on the Ready nodes other than the
/// replacements, as consolidation's own search sees them (a node inside its `consolidateAfter`
/// window takes none), the command is called off and the replacements deleted: they would be
/// billed beside the candidate and emptied at the next scale-down, while the candidate can go by
/// a plain deletion, which the next search finds. When the pods would fit but for those windows,
/// an initialized replacement holds the drain for at most its pool's `consolidateAfter` after it
/// initialized (the windows close within that). Only while nothing is pending (it may need the
/// room), nothing blocks the candidate and no pod is on a replacement; consolidation only, drift
/// replaces whatever the room. Core's queue drains once the replacements initialize, with no
/// simulation in between (`queue.go` waitOrTerminate): deliberate difference 10 in
/// docs/conformance.md.
#[allow(clippy::too_many_arguments)]
fn replacements_spare(
    snapshot: &Snapshot,
    reserved: &Snapshot,
    pdbs: &Pdbs,
    draining: &[String],
    cmd: &Command<'_>,
    reason: DisruptionReason,
    live: &[&NodeClaimRecord],
    room: [i64; 2],
    now: Timestamp,
) -> Option<Spare> {
    // The candidate's pods outgrow all the free room there is: nothing to simulate (a pass
    // checks every waiting command, and a simulation copies the snapshot).
    let mut need = [0i64; 2];
    for p in cmd.pods.iter().filter(|p| !p.daemon && !p.terminal) {
        need[0] = need[0].saturating_add(p.demand.requests.cpu_millis);
        need[1] = need[1].saturating_add(p.demand.requests.memory_bytes);
    }
    if need[0] > room[0] || need[1] > room[1] {
        return None;
    }
    if reason != DisruptionReason::Underutilized
        || snapshot.pods.iter().any(|p| p.is_provisionable())
        || blocked_by(cmd.node, cmd.claim, &cmd.pods, pdbs, now).is_some()
    {
        return None;
    }
    let replacement_nodes: Vec<&str> = live
        .iter()
        .filter_map(|r| super::disruption::node_of(snapshot, r))
        .map(|n| n.name.as_str())
        .collect();
    if snapshot.pods.iter().any(|p| {
        !p.terminal
            && !p.daemon
            && p.node_name
                .as_deref()
                .is_some_and(|n| replacement_nodes.contains(&n))
    }) {
        return None;
    }
    let mut with = draining.to_vec();
    with.push(cmd.node.name.clone());
    let young =
        super::candidates::under_consolidate_after(snapshot, &NodeIndex::new(snapshot), now);
    let fits = |closed: &[&str]| {
        let mut view = reserved.clone();
        for n in view
            .nodes
            .iter_mut()
            .filter(|n| closed.contains(&n.name.as_str()))
        {
            n.unschedulable = true;
        }
        home_for_movable(&view, &with, pdbs, now) == Home::Fits
    };
    let mut closed = replacement_nodes.clone();
    closed.extend(young.iter().map(String::as_str));
    if fits(&closed) {
        return Some(Spare::CallOff(format!(
            "{reason} disruption of node {} called off: its pods fit on Ready nodes now, its \
             replacements are not needed",
            cmd.node.name
        )));
    }
    // Initialized replacements hold the drain within their pool's window only.
    let window = super::candidates::consolidate_after_secs(snapshot, cmd.claim)?;
    let initialized_at = live
        .iter()
        .map(|r| {
            r.conditions
                .iter()
                .find(|c| c.type_ == "Initialized" && c.status == "True")
                .and_then(|c| c.last_transition_time)
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .max()?;
    let young_closes = !young.is_empty()
        && now.as_second() - initialized_at.as_second() < window
        && fits(&replacement_nodes);
    young_closes.then(|| {
        Spare::Wait(format!(
            "{reason} disruption waits: its pods fit on Ready nodes once their consolidateAfter \
             window closes, and its replacements are not needed then"
        ))
    })
}

/// The free requests (`[CPU millicores, memory bytes]`) of every node that can take pods now
/// ([`super::consolidation::usable_free`], summed): an upper bound on where a command's pods could
/// go, computed once per pass.
fn free_room(snapshot: &Snapshot) -> [i64; 2] {
    super::consolidation::usable_free(snapshot)
        .values()
        .fold([0i64; 2], |t, r| {
            [t[0].saturating_add(r[0]), t[1].saturating_add(r[1])]
        })
}

/// Calls a command off: the taint comes off and the claim forgets the command, with a Warning
/// Event (core only logs it).
pub(super) fn abort(
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    message: &str,
) {
    abort_after(out, claim, node, message, Vec::new());
}

/// [`abort`], once the `replacements` deleted before it in this pass are gone.
fn abort_after(
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    message: &str,
    replacements: Vec<String>,
) {
    out.marked.remove(&node.name);
    out.notes.push(message.to_string());
    out.actions.push(Action::AbortDisruption {
        target: format!("Node/{}", node.name),
        node: node.name.clone(),
        node_claim: Some(claim.name.clone()),
        message: message.to_string(),
        replacements,
    });
}

/// Deletes the claim of a node whose command goes ahead: termination drains it.
pub(super) fn delete_claim(
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: &str,
) {
    out.actions.push(Action::delete_node_claim(
        claim,
        reason.to_string(),
        format!("node {} disrupted: {reason}", node.name),
    ));
    out.deleted_claims.insert(claim.name.clone());
}

/// Whether the node of a claim has been tainted for at least [`MIN_DRAIN_SECS`] (no record:
/// tainted by an earlier version, long enough).
pub(super) fn drained_long_enough(claim: &NodeClaimRecord, now: Timestamp) -> bool {
    claim
        .annotations
        .get(keys::DRAIN_STARTED_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_none_or(|t| now.as_second() - t.as_second() >= MIN_DRAIN_SECS)
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
    delete_claim(out, claim, node, reason);
}
