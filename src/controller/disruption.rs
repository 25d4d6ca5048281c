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

use super::action::{Action, DISRUPTED_TAINT_KEY};
use super::budget::allowed_disruptions;
use super::consolidation::{Candidate, consolidate};
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
}

fn pods_on<'a>(snapshot: &'a Snapshot, node: &str) -> Vec<&'a PodRecord> {
    snapshot
        .pods
        .iter()
        .filter(|p| !p.terminal && p.node_name.as_deref() == Some(node))
        .collect()
}

fn is_critical(p: &PodRecord) -> bool {
    matches!(
        p.priority_class.as_deref(),
        Some("system-cluster-critical" | "system-node-critical")
    )
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

fn node_of<'a>(snapshot: &'a Snapshot, claim: &NodeClaimRecord) -> Option<&'a NodeRecord> {
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
    for pool in &snapshot.nodepools {
        let claims: Vec<&NodeClaimRecord> = snapshot
            .nodeclaims
            .iter()
            .filter(|c| c.node_pool.as_deref() == Some(pool.name.as_str()))
            .collect();
        let total = claims.iter().filter(|c| !c.deleting).count();
        let mut in_progress = claims
            .iter()
            .filter(|c| {
                c.deleting
                    || node_of(snapshot, c)
                        .is_some_and(|n| n.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY))
            })
            .count();
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
        for claim in candidates {
            let Some(node) = node_of(snapshot, claim) else {
                continue;
            };
            if node.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY) {
                // Already being disrupted: once its replacements are initialized, evict what is
                // left (evictions refused by a PDB come back here); when drained, finish.
                let pods = pods_on(snapshot, &node.name);
                let grace_over = grace_elapsed(pool, claim, now);
                if pods.iter().all(|p| p.daemon) {
                    finish(snapshot, &mut out, claim, node, "Disrupted");
                } else if grace_over {
                    // terminationGracePeriod is over: pods go regardless of PDBs.
                    evict(&mut out, &pods, &node.name, "Disrupted", true);
                } else if replacements_pending(snapshot, &node.name) {
                    out.notes.push(format!(
                        "node {}: waiting for its replacement to initialize before draining",
                        node.name
                    ));
                    defer_rest(snapshot, &mut out, claim, node, "Disrupted", true);
                } else {
                    evict(&mut out, &pods, &node.name, "Disrupted", false);
                    defer_rest(snapshot, &mut out, claim, node, "Disrupted", false);
                }
                continue;
            }
            let pods = pods_on(snapshot, &node.name);
            let movable = pods.iter().filter(|p| !p.daemon).count();
            let reason = match decide(snapshot, pool, claim, movable, now, consolidate_after) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    let quiet = consolidate_after
                        .is_some_and(|after| quiet_for(claim, now) >= after.as_secs_i64());
                    if pool.consolidation_policy == "WhenEmptyOrUnderutilized"
                        && movable > 0
                        && quiet
                        && !is_blocked(node, &pods, &pdbs)
                    {
                        underutilized.push(Candidate {
                            claim: claim.name.clone(),
                            node: node.name.clone(),
                            price: claim_price(snapshot, claim),
                            pods: snapshot
                                .pods
                                .iter()
                                .enumerate()
                                .filter(|(_, p)| {
                                    !p.terminal
                                        && !p.daemon
                                        && p.node_name.as_deref() == Some(node.name.as_str())
                                })
                                .map(|(i, _)| i)
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
            // Expiration is forceful; every other reason yields to do-not-disrupt annotations
            // and to PodDisruptionBudgets that allow no disruption.
            if reason != "Expired" && is_blocked(node, &pods, &pdbs) {
                continue;
            }
            // Expiration is forceful; the other reasons respect the budgets.
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
            if movable == 0 {
                out.actions.push(taint);
                evict(&mut out, &pods, &node.name, reason, false);
                finish(snapshot, &mut out, claim, node, reason);
                continue;
            }
            // Replace before removing: when the pods need room the other nodes lack, the
            // replacements are created first and the drain waits for them to initialize.
            let candidate = Candidate {
                claim: claim.name.clone(),
                node: node.name.clone(),
                price: saving,
                pods: Vec::new(),
            };
            let replacements = replacements_for(snapshot, &candidate);
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
            if replacements.is_empty() {
                evict(&mut out, &pods, &node.name, reason, false);
            }
            defer_rest(
                snapshot,
                &mut out,
                claim,
                node,
                reason,
                !replacements.is_empty(),
            );
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
        if let Some(decision) = consolidate(snapshot, &underutilized, room) {
            let removed: Vec<String> = decision.remove.iter().map(|c| c.node.clone()).collect();
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

/// Skips disruption for a NodePool whose settings do not parse: a note in the plan and a
/// Warning Event on the NodePool.
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

/// Evictions of a node's pods in Karpenter's order: non-critical, non-critical DaemonSet,
/// critical, critical DaemonSet.
fn evict(out: &mut Disruption, pods: &[&PodRecord], node: &str, reason: &str, force: bool) {
    let mut order: Vec<&&PodRecord> = pods.iter().collect();
    order.sort_by_key(|p| (is_critical(p), p.daemon, p.demand.key()));
    for p in order {
        out.actions.push(Action::EvictPod {
            target: format!("Pod/{}", p.demand.key()),
            pod: p.demand.key(),
            node: node.to_string(),
            reason: reason.to_string(),
            force,
        });
    }
}

/// Whether the drain of a claim's node started longer ago than its `terminationGracePeriod`
/// (the claim's, else its NodePool's; none: never).
fn grace_elapsed(pool: &NodePool, claim: &NodeClaimRecord, now: Timestamp) -> bool {
    let Some(Ok(NillableDuration::After(grace))) = claim
        .termination_grace_period
        .as_deref()
        .or(pool.termination_grace_period.as_deref())
        .map(str::parse::<NillableDuration>)
    else {
        return false;
    };
    claim
        .annotations
        .get(super::action::DRAIN_STARTED_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_some_and(|started| now.as_second() - started.as_second() >= grace.as_secs_i64())
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

/// Whether a NodeClaim replacing this node exists and is not initialized yet.
fn replacements_pending(snapshot: &Snapshot, node: &str) -> bool {
    snapshot.nodeclaims.iter().any(|c| {
        !c.deleting
            && !c.condition_true("Initialized")
            && c.annotations
                .get(REPLACES_ANNOTATION)
                .is_some_and(|list| list.split(',').any(|n| n == node))
    })
}

/// The new nodes a node's pods would need if it went away (none when they fit elsewhere).
fn replacements_for(
    snapshot: &Snapshot,
    candidate: &Candidate,
) -> Vec<crate::sched::strategy::NewNode> {
    super::consolidation::replacements(snapshot, std::slice::from_ref(candidate))
}

/// How long a claim's node has been without pod changes: since it initialized or since its
/// last pod event, whichever is later.
fn quiet_for(claim: &NodeClaimRecord, now: Timestamp) -> i64 {
    let initialized = claim
        .conditions
        .iter()
        .find(|c| c.type_ == "Initialized")
        .and_then(|c| c.last_transition_time);
    let since = [initialized, claim.last_pod_event, claim.created]
        .into_iter()
        .flatten()
        .max();
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

/// Disruption blockers: `karpenter.sh/do-not-disrupt` on the node or a pod, or a pod covered by
/// a PodDisruptionBudget that allows no disruption.
fn is_blocked(
    node: &NodeRecord,
    pods: &[&PodRecord],
    pdbs: &[(String, LabelSelector, String)],
) -> bool {
    let annotated = |a: &Labels| a.get(DO_NOT_DISRUPT).map(String::as_str) == Some("true");
    annotated(&node.annotations)
        || pods.iter().any(|p| annotated(&p.annotations))
        || pods.iter().any(|p| {
            !p.daemon
                && pdbs
                    .iter()
                    .any(|(ns, sel, _)| *ns == p.demand.namespace && sel.matches(&p.demand.labels))
        })
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
    let hash = claim
        .annotations
        .get(crate::model::nodeclaim::NODEPOOL_HASH_ANNOTATION);
    if hash.is_some_and(|h| *h != super::provision::nodepool_hash(pool)) {
        return Ok(Some("Drifted"));
    }
    // A pool requirement the claim's labels no longer satisfy, or a flavor the pool no longer
    // offers, is drift too.
    if pool
        .requirements
        .iter()
        .any(|r| claim.labels.contains_key(&r.key) && !r.matches(&claim.labels))
    {
        return Ok(Some("Drifted"));
    }
    if let Some(md) = snapshot.claim_machine_deployment(claim)
        && !snapshot
            .members_of(pool)
            .any(|m| m.key() == md && m.flavor.is_ok())
    {
        return Ok(Some("Drifted"));
    }
    // The MachineDeployment's template changed since the claim was made (image, bootstrap, ...).
    if let (Some(recorded), Some(md)) = (
        claim
            .annotations
            .get(super::provision::TEMPLATE_HASH_ANNOTATION),
        snapshot
            .claim_machine_deployment(claim)
            .and_then(|md| snapshot.machine_deployments.iter().find(|m| m.key() == md)),
    ) && *recorded != super::provision::template_hash(md)
    {
        return Ok(Some("Drifted"));
    }
    if movable == 0
        && let Some(after) = consolidate_after
        && quiet_for(claim, now) >= after.as_secs_i64()
    {
        return Ok(Some("Empty"));
    }
    Ok(None)
}

/// Records the steps a decision still has to take once its node is drained (and, when
/// `with_evictions`, the evictions themselves), so a plan shows each decision complete.
fn defer_rest(
    snapshot: &Snapshot,
    out: &mut Disruption,
    claim: &NodeClaimRecord,
    node: &NodeRecord,
    reason: &str,
    with_evictions: bool,
) {
    if with_evictions {
        let pods = pods_on(snapshot, &node.name);
        let mut later = Disruption::default();
        evict(&mut later, &pods, &node.name, reason, false);
        out.pending.extend(later.actions);
    }
    if let Some(m) = bound_machine(snapshot, claim).filter(|m| m.is_live()) {
        out.pending.push(mark(m, Some(&claim.name), reason));
    }
    out.pending.push(Action::DeleteNodeClaim {
        target: format!("NodeClaim/{}", claim.name),
        node_claim: claim.name.clone(),
        reason: reason.to_string(),
        message: format!("node {} disrupted: {reason}", node.name),
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
            api_version: md.object.api_version.clone(),
        });
    }
}

/// The end of the sequence: mark the exact Machine, delete the NodeClaim (the replicas follow
/// in [`super::scale`]).
fn finish(
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
    });
    out.deleted_claims.insert(claim.name.clone());
}

/// Nodes whose NodeClaim is gone or going and whose Machine is gone or being deleted: Karpenter's
/// termination finalizer comes off so the Node object can go.
pub fn release_finalizers(snapshot: &Snapshot) -> Vec<Action> {
    snapshot
        .nodes
        .iter()
        .filter(|n| {
            n.finalizers
                .iter()
                .any(|f| f == super::action::TERMINATION_FINALIZER)
        })
        .filter(|n| {
            let claim_alive = snapshot.nodeclaims.iter().any(|c| {
                !c.deleting
                    && (c.node_name.as_ref() == Some(&n.name)
                        || (c.provider_id.is_some() && c.provider_id == n.provider_id))
            });
            let machine_alive = snapshot.machines.iter().any(|m| {
                !m.deleting
                    && (m.node_name.as_ref() == Some(&n.name)
                        || (m.provider_id.is_some() && m.provider_id == n.provider_id))
            });
            !claim_alive && !machine_alive
        })
        .map(|n| Action::RemoveNodeFinalizer {
            target: format!("Node/{}", n.name),
            node: n.name.clone(),
        })
        .collect()
}
