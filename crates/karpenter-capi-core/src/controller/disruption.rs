//! Disruption: which nodes to remove and the commands that remove them, as Karpenter core's
//! disruption controller and orchestration queue do: expiration of any claim (`expireAfter`,
//! forceful, not budgeted), emptiness and consolidation (per `consolidationPolicy`, after
//! `consolidateAfter`) and drift, within disruption budgets, `karpenter.sh/do-not-disrupt` and
//! PodDisruptionBudgets.
//!
//! A voluntary command for a node: taint it `karpenter.sh/disrupted:NoSchedule` (the claim
//! records when, why and how many replacements), create its replacements; in later passes
//! validate it again (after 15 s for emptiness and consolidation), wait for every replacement to
//! initialize, then delete the NodeClaim — or call it off when it timed out, a replacement
//! vanished or its pods lost their home. Termination (see [`super::termination`]) then drains
//! the node and removes its exact Machine. Nothing is evicted before the claim is deleted. The
//! commands themselves (start, validation, waiting, calling off) are [`super::command`]'s.

use std::collections::BTreeSet;

use jiff::Timestamp;

use super::action::Action;
use super::budget::allowed_disruptions;
use super::candidates::{
    being_removed, budget_counts_indexed, decide, deleting_machines, leaving_unclaimed,
    under_consolidate_after,
};
pub(crate) use super::candidates::{blocked_by, quiet_for};
pub(super) use super::candidates::{claim_price, node_do_not_disrupt};
use super::command::{Command, continue_command, start_command, start_drift};
pub(crate) use super::command::{MIN_DRAIN_SECS, is_voluntary};
use super::consolidated::{ConsolidationMemo, Gate, cluster_fingerprint, pool_fingerprint};
use super::consolidation::balanced::{self, BALANCED};
use super::consolidation::payback::Falling;
use super::consolidation::{Balanced, Candidate, Home, consolidate_from, home, sort_candidates};
use super::drain::{never_evicted, reschedulable, tier};
use super::lifecycle::{bound_machine, mark};
use super::pdb::Pdbs;
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::{NodeIndex, NodeRecord, PodRecord, Snapshot};
use crate::vocab::keys::REPLACES_ANNOTATION;
use crate::vocab::reasons::DisruptionReason;

/// Annotation that blocks disruption on a node or a pod (a Karpenter key, shared with
/// consolidation through the model so the two modules import in one direction only).
pub(crate) use crate::vocab::keys::DO_NOT_DISRUPT;

/// What disruption decided in one pass.
#[derive(Debug, Default)]
pub(crate) struct Disruption {
    /// Actions, in order per node.
    pub(crate) actions: Vec<Action>,
    /// NodeClaims deleted.
    pub(crate) deleted_claims: BTreeSet<String>,
    /// Machines marked.
    pub(crate) marked_machines: BTreeSet<String>,
    /// Why some NodePools or nodes were skipped.
    pub(crate) notes: Vec<String>,
    /// The rest of each decision under way, for later passes (drains finish first).
    pub(crate) pending: Vec<Action>,
    /// Why nodes may not be disrupted (Karpenter's `DisruptionBlocked`), for the plan's status.
    pub(crate) reports: Vec<Action>,
    /// The consolidation memo after this pass's searches (see [`super::consolidated`]).
    pub(crate) consolidation: ConsolidationMemo,
    /// Nodes whose command (begun in an earlier pass, with replacements) goes on waiting: core
    /// has marked them for deletion, so provisioning plans their pods too (see
    /// `super::provisioning_view`).
    pub(crate) marked: BTreeSet<String>,
    /// When consolidation's forecast of arrivals ends by itself (`foresight::ahead`): a clock of
    /// the plan, as a replacement it held back may be taken then.
    pub(crate) forecast_ends: Option<Timestamp>,
}

pub(super) fn pods_on<'a>(snapshot: &'a Snapshot, node: &str) -> Vec<&'a PodRecord> {
    snapshot
        .pods
        .iter()
        .filter(|p| !p.terminal && p.node_name.as_deref() == Some(node))
        .map(|p| &**p)
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

/// [`disrupt`] with the consolidation memo of earlier passes: a pool whose cluster has not
/// changed since a search that settled is not searched again (core `IsConsolidated`); the memo
/// after this pass is in [`Disruption::consolidation`].
pub(crate) fn disrupt_with(
    snapshot: &Snapshot,
    now: Timestamp,
    already_deleted: &BTreeSet<String>,
    memo: &ConsolidationMemo,
) -> Disruption {
    let mut out = Disruption {
        consolidation: memo.clone(),
        ..Disruption::default()
    };
    out.consolidation.retain_pools(snapshot);
    out.consolidation.flow.observe(snapshot, now);
    let fall = out.consolidation.flow.fall(now);
    // Read once per pass: its end is a clock, and whether it holds anything is part of the
    // fingerprint (the consolidation trials price replacements with it on their own).
    let forecast = crate::sched::strategy::cost::foresight::ahead(snapshot, now);
    out.forecast_ends = forecast.ends;
    let growing = !forecast.is_empty();
    // The cluster's fingerprint, computed at the first pool with candidates.
    let mut fingerprint: Option<u64> = None;
    let pdbs = Pdbs::new(snapshot);
    let deleting = deleting_machines(snapshot);
    expire(snapshot, now, already_deleted, &mut out);
    let skip: BTreeSet<String> = already_deleted
        .iter()
        .chain(out.deleted_claims.iter())
        .cloned()
        .collect();
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
    let pods_of = |node: &str| -> Vec<&PodRecord> {
        indices(node).iter().map(|&i| &*snapshot.pods[i]).collect()
    };
    let nodes = NodeIndex::new(snapshot);
    let is_tainted = NodeRecord::disrupted;
    // Commands under way, for their timeout (core scales it with the queue's length).
    let queued = snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && nodes.of_claim(c).is_some_and(is_tainted))
        .count();
    let draining_now: Vec<String> = super::termination::draining_nodes(snapshot, now)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    // The free room of the nodes that take pods, for commands waiting on replacements (made at
    // the first such command).
    let free_room = std::cell::OnceCell::new();
    // Core's drift starts one command per disruption pass.
    let mut drift_started = false;
    // Nodes inside their consolidateAfter window, and the view consolidation simulates on with
    // them (and the nodes of deleting claims) cordoned, made at the first pool with
    // underutilized candidates.
    let mut young: Option<(Vec<String>, Option<Snapshot>)> = None;
    let mut going_empty: Vec<(String, String)> = Vec::new();
    // While the load falls, what a replacement must pay back against (made at the first pool
    // that searches).
    let mut falling: Option<Option<Falling>> = None;
    // Nodes of each pool leaving with no claim left: they use up its budgets too.
    let leaving = leaving_unclaimed(snapshot, &nodes, now);
    for pool in &snapshot.nodepools {
        let claims: Vec<&NodeClaimRecord> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| c.node_pool.as_deref() == Some(pool.name.as_str()))
            .collect();
        let leaving = leaving.get(&pool.name).copied().unwrap_or(0);
        let (total, mut in_progress) = budget_counts_indexed(snapshot, &nodes, &claims, leaving);
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
            .filter(|c| !c.deleting && !skip.contains(&c.name) && c.condition_true("Initialized"))
            .collect();
        candidates.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
        let mut underutilized: Vec<Candidate> = Vec::new();
        let mut drifted: Vec<(&NodeClaimRecord, &NodeRecord, bool)> = Vec::new();
        // Nodes whose drain goes on or starts this pass: their pods' room is taken. Termination
        // drains the nodes of deleting claims: their pods need room too.
        let mut draining: Vec<String> = draining_now.clone();
        for claim in candidates {
            let Some(node) = nodes.of_claim(claim) else {
                continue;
            };
            // Cluster API (or a user) is already removing this node (its Machine or its Node is
            // being deleted, e.g. by a MachineHealthCheck or a rollout): Cluster API drains it,
            // and it is no candidate for a disruption of ours (core `state/statenode.go`
            // `ValidateNodeDisruptable` refuses nodes marked for deletion); a command of ours
            // under way on it waits (termination takes a deleted Node's claim).
            if being_removed(&deleting, claim, node) {
                continue;
            }
            if is_tainted(node) {
                let command = Command {
                    claim,
                    node,
                    pods: pods_of(&node.name),
                };
                continue_command(
                    snapshot,
                    reserved,
                    &pdbs,
                    &mut out,
                    &mut draining,
                    &command,
                    queued,
                    &skip,
                    &free_room,
                    now,
                );
                continue;
            }
            // Cluster API is paused for its Machines: nothing is started on them.
            if super::rollout::claim_paused(snapshot, claim).is_some() {
                continue;
            }
            // A static NodePool's nodes (`spec.replicas`) are kept by its own controller: core's
            // emptiness, consolidation and drift pass them over (`Candidate.OwnedByStaticNodePool`,
            // whatever the StaticCapacity gate says). Provisioning makes nothing for such a pool
            // either (`NodePool::provisions`); expiry still applies, as in core.
            if pool.replicas.is_some() {
                continue;
            }
            let pods = pods_of(&node.name);
            // Core tells why of every node its validation refuses, candidate or not.
            let blocker = blocked_by(node, claim, &pods, &pdbs, now);
            if let Some(why) = &blocker {
                out.reports.push(Action::ReportDisruptionBlocked {
                    target: format!("Node/{}", node.name),
                    node: node.name.clone(),
                    node_claim: claim.name.clone(),
                    message: why.clone(),
                });
            }
            let movable = pods.iter().filter(|p| reschedulable(p)).count();
            // Emptiness and consolidation call a node empty when none of its reschedulable pods
            // costs anything to evict (mirrors core's `Candidate.IsEmpty`: the reschedule
            // disruption cost adds only positive eviction costs); drift's "empty first" counts
            // the pods themselves (`drift.go`).
            let costly = pods
                .iter()
                .filter(|p| reschedulable(p) && p.eviction_cost() > 0)
                .count();
            let wanted_by_pending = pending_room.contains(&node.name);
            let reason = match decide(
                snapshot,
                pool,
                claim,
                if wanted_by_pending {
                    costly.max(1)
                } else {
                    costly
                },
                now,
                consolidate_after,
            ) {
                Ok(reason) => reason,
                Err(e) => {
                    skip_pool(&mut out, pool, e.to_string());
                    break;
                }
            };
            // An empty node that emptiness will take (now or once its `consolidateAfter` has
            // elapsed) is no home for an underutilized node's pods: deleting it evicts
            // nothing, and filling it would keep the fleet larger than its load.
            if costly == 0
                && !wanted_by_pending
                && blocker.is_none()
                && consolidate_after.is_some()
                && !node_do_not_disrupt(node, claim)
            {
                going_empty.push((claim.name.clone(), node.name.clone()));
            }
            match reason {
                Some(DisruptionReason::Drifted) => {
                    // Drift is eventual (core `disruption/types.go` NewCandidate): a claim with a
                    // terminationGracePeriod is a candidate despite pods that block eviction
                    // (its drain deletes them at its deadline); never against the node's own
                    // do-not-disrupt.
                    let pods_block = blocker.is_some() && claim.termination_grace_period.is_none();
                    if !pods_block && !node_do_not_disrupt(node, claim) {
                        drifted.push((claim, node, movable == 0));
                    }
                }
                Some(reason) => {
                    if blocker.is_some() {
                        continue;
                    }
                    match allowed_disruptions(pool, reason, total, now) {
                        Ok(allowed) if in_progress < allowed => {}
                        Ok(_) => continue,
                        Err(e) => {
                            skip_pool(&mut out, pool, format!("spec.disruption.budgets: {e}"));
                            break;
                        }
                    }
                    // An empty node taken this pass is no home for the drains going on.
                    if !drains_keep_home(reserved, &draining, std::slice::from_ref(&node.name)) {
                        out.notes.push(format!(
                            "node {}: {reason}, but nodes draining this pass need its room; not disrupted",
                            node.name
                        ));
                        continue;
                    }
                    in_progress += 1;
                    draining.push(node.name.clone());
                    out.actions.push(start_command(
                        claim,
                        node,
                        reason,
                        claim_price(snapshot, claim),
                        0,
                        now,
                    ));
                    defer_rest(snapshot, &mut out, claim, node, reason.as_str(), true);
                }
                None => {
                    let quiet = consolidate_after.is_some_and(|after| {
                        quiet_for(snapshot, claim, now) >= after.as_secs_i64()
                    });
                    let underutilizing = pool.consolidation_policy == "WhenEmptyOrUnderutilized"
                        || pool.consolidation_policy == BALANCED;
                    if underutilizing && costly > 0 && quiet && blocker.is_none() {
                        underutilized.push(Candidate::new(
                            snapshot,
                            claim.name.clone(),
                            node.name.clone(),
                            claim_price(snapshot, claim),
                            indices(&node.name)
                                .iter()
                                .copied()
                                .filter(|&i| reschedulable(&snapshot.pods[i]))
                                .collect(),
                        ));
                    }
                }
            }
        }
        if !drift_started && !drifted.is_empty() {
            drift_started = start_drift(
                snapshot,
                reserved,
                &pdbs,
                pool,
                &mut out,
                &mut draining,
                &mut drifted,
                (total, in_progress),
                now,
            );
            if drift_started {
                in_progress += 1;
            }
        }
        if underutilized.is_empty() {
            continue;
        }
        let room = match allowed_disruptions(pool, DisruptionReason::Underutilized, total, now) {
            Ok(allowed) => allowed.saturating_sub(in_progress),
            Err(e) => {
                skip_pool(&mut out, pool, format!("spec.disruption.budgets: {e}"));
                continue;
            }
        };
        // The best savings per unit of disruption first (core `sortCandidates`).
        sort_candidates(&mut underutilized);

        // A node inside its own consolidateAfter window takes none of a candidate's pods
        // (core's scheduler in a consolidation simulation, `IsUnderConsolidateAfter`), nor does
        // the node of a claim being deleted (core's `SimulateScheduling` schedules onto active
        // nodes only): the search runs on a view with such nodes cordoned. Pending pods were
        // placed before.
        let (young_nodes, cordoned) = young.get_or_insert_with(|| {
            let names = under_consolidate_after(snapshot, &nodes, now);
            let mut closed: BTreeSet<&str> = names.iter().map(String::as_str).collect();
            closed.extend(
                snapshot
                    .nodeclaims
                    .iter()
                    .filter(|c| c.deleting)
                    .filter_map(|c| nodes.of_claim(c))
                    .map(|n| n.name.as_str()),
            );
            let view = (!closed.is_empty()).then(|| {
                let mut view = reserved.clone();
                for n in view
                    .nodes
                    .iter_mut()
                    .filter(|n| closed.contains(n.name.as_str()))
                {
                    n.unschedulable = true;
                }
                view
            });
            (names, view)
        });
        let trial_view: &Snapshot = cordoned.as_ref().unwrap_or(reserved);
        // The window closing changes the search: part of the pool's fingerprint.
        let names: Vec<&str> = underutilized
            .iter()
            .map(|c| c.claim.as_str())
            .chain(young_nodes.iter().map(String::as_str))
            .collect();
        let cluster = *fingerprint
            .get_or_insert_with(|| cluster_fingerprint(snapshot, growing, fall.is_some()));
        let pool_print = pool_fingerprint(cluster, &pool.name, &names, room);
        let resume = match out.consolidation.gate(&pool.name, pool_print, now) {
            Gate::Skip => continue,
            Gate::Resume(k) => Some(k),
            Gate::Fresh => None,
        };
        let without_empty = (!going_empty.is_empty()).then(|| {
            let mut view = trial_view.clone();
            view.nodes
                .retain(|n| !going_empty.iter().any(|(_, g)| g == &n.name));
            for c in view.nodeclaims.iter_mut() {
                if going_empty.iter().any(|(g, _)| g == &c.name) {
                    c.deleting = true;
                }
            }
            view
        });
        // A `Balanced` pool's moves are scored against its totals over all of its nodes
        // (core `GetCandidatesWithTotals`), empty ones included.
        let totals = (pool.consolidation_policy == BALANCED).then(|| Balanced {
            pool: &pool.name,
            totals: [(
                pool.name.clone(),
                balanced::pool_totals(snapshot, &nodes, &pool.name),
            )]
            .into(),
        });
        let falling = falling
            .get_or_insert_with(|| fall.and_then(|rate| Falling::new(reserved, rate)))
            .as_ref();
        let (found, next) = consolidate_from(
            without_empty.as_ref().unwrap_or(trial_view),
            &underutilized,
            room,
            resume,
            Some(now),
            totals.as_ref(),
            falling,
        );
        out.consolidation.record(
            &pool.name,
            pool_print,
            now,
            found.is_some(),
            room < underutilized.len(),
            next,
        );
        if let Some(decision) = found {
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
                    DisruptionReason::Underutilized.as_str(),
                    &removed,
                ));
            }
            draining.extend(removed.iter().cloned());
            for c in &decision.remove {
                let claim = snapshot.nodeclaims.iter().find(|k| k.name == c.claim);
                let node = nodes.named(&c.node);
                if let (Some(claim), Some(node)) = (claim, node) {
                    out.actions.push(start_command(
                        claim,
                        node,
                        DisruptionReason::Underutilized,
                        decision.saving,
                        decision.replacements.len(),
                        now,
                    ));
                    defer_rest(
                        snapshot,
                        &mut out,
                        claim,
                        node,
                        DisruptionReason::Underutilized.as_str(),
                        true,
                    );
                }
            }
        }
    }
    out
}

/// A claim's `expireAfter`: its own, else its NodePool's, else Karpenter's default `720h`.
pub(crate) fn expire_after<'a>(snapshot: &'a Snapshot, claim: &'a NodeClaimRecord) -> &'a str {
    let pool = snapshot
        .nodepools
        .iter()
        .find(|p| claim.node_pool.as_deref() == Some(p.name.as_str()));
    claim
        .expire_after
        .as_deref()
        .or(pool.and_then(|p| p.expire_after.as_deref()))
        .unwrap_or("720h")
}

/// Expiration (core `nodeclaim/expiration`): every claim older than its `expireAfter` (the
/// claim's, else its NodePool's, else Karpenter's default `720h`) is deleted, initialized or not,
/// whatever budgets and `do-not-disrupt` say; its drain (termination) honours `do-not-disrupt`
/// until the claim's deadline. Not while Cluster API is paused for its Machine.
fn expire(
    snapshot: &Snapshot,
    now: Timestamp,
    already_deleted: &BTreeSet<String>,
    out: &mut Disruption,
) {
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !already_deleted.contains(&c.name))
    {
        let expire = expire_after(snapshot, claim);
        let Ok(NillableDuration::After(d)) = expire.parse::<NillableDuration>() else {
            continue;
        };
        let age = claim
            .created
            .map(|c| now.as_second() - c.as_second())
            .unwrap_or(0);
        if age <= d.as_secs_i64() || super::rollout::claim_paused(snapshot, claim).is_some() {
            continue;
        }
        out.actions.push(Action::delete_node_claim(
            claim,
            DisruptionReason::Expired.to_string(),
            format!("expired: older than its expireAfter {expire}"),
        ));
        out.deleted_claims.insert(claim.name.clone());
    }
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
        // The node of a claim being deleted is no room for them: core's `SimulateScheduling`
        // schedules onto active nodes only, and provisioning here sees such nodes tainted.
        let index = NodeIndex::new(snapshot);
        let leaving: BTreeSet<&str> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| c.deleting)
            .filter_map(|c| index.of_claim(c))
            .map(|n| n.name.as_str())
            .collect();
        for n in state
            .nodes
            .iter_mut()
            .filter(|n| leaving.contains(n.name.as_str()))
        {
            n.cordoned = true;
        }
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

/// Whether the voluntary drains already decided this pass keep a home once `taken` stop being
/// room too (tainted or removed by a later decision of the same pass): no pod is evicted towards
/// a node that the same pass takes away.
pub(super) fn drains_keep_home(snapshot: &Snapshot, draining: &[String], taken: &[String]) -> bool {
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

/// Skips disruption for a NodePool whose settings do not parse: a note in the plan and a
/// Warning Event on the NodePool.
pub(super) fn skip_pool(out: &mut Disruption, pool: &NodePool, problem: String) {
    let message = format!("{problem}; disruption skipped");
    out.notes.push(format!("NodePool {}: {message}", pool.name));
    out.actions.push(Action::WarnNodePool {
        target: format!("NodePool/{}", pool.name),
        node_pool: pool.name.clone(),
        reason: "InvalidDisruptionSettings".to_string(),
        message,
    });
}

/// A `createNodeClaim` for a replacement, annotated with the nodes it replaces so later passes
/// can wait for it before draining them.
pub(super) fn replacement_claim(
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

/// Records the steps a decision still has to take, so a plan shows each decision complete: the
/// claim's deletion (unless this pass deletes it), then, when `with_evictions`, the evictions of
/// its drain, the Machine's mark and the scale-down.
pub(super) fn defer_rest(
    snapshot: &Snapshot,
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: &str,
    with_evictions: bool,
) {
    if !out.deleted_claims.contains(&claim.name) && !claim.deleting {
        out.pending.push(Action::delete_node_claim(
            claim,
            reason.to_string(),
            format!("node {} disrupted: {reason}", node.name),
        ));
    }
    if with_evictions {
        let pods = pods_on(snapshot, &node.name);
        let mut order: Vec<&&PodRecord> = pods
            .iter()
            .filter(|p| !never_evicted(p) && !p.terminating)
            .collect();
        order.sort_by_key(|p| (tier(p), p.demand.key()));
        out.pending
            .extend(order.into_iter().map(|p| Action::EvictPod {
                target: format!("Pod/{}", p.demand.key()),
                pod: p.demand.key(),
                node: node.name.clone(),
                reason: reason.to_string(),
                uid: p.uid.clone(),
            }));
    }
    if let Some(m) = bound_machine(snapshot, claim).filter(|m| m.is_live()) {
        out.pending.push(mark(m, Some(&claim.name), reason));
    }
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
