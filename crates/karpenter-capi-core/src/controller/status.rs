//! The status the controller reports, so `kubectl get nodeclaims,nodepools` reads as under
//! Karpenter: NodeClaim `Drifted` and `Consolidatable` conditions (core
//! `nodeclaim/disruption/{drift,consolidation}.go`), `status.lastPodEventTime` from the pod
//! events the watches saw (core `nodeclaim/podevents`), our hash stamps (core
//! `nodepool/hash`), and NodePool `status.resources`, `status.nodes` and `Ready` (core
//! `nodepool/counter`, `nodepool/readiness`). These never change capacity: a plan carries them
//! apart from its actions ([`super::Plan::status`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use jiff::Timestamp;

use super::action::Action;
use super::drift::{drift_reason, stamps};
use super::write::ConditionUpdate;
use crate::model::duration::NillableDuration;
use crate::model::snapshot::{ClassState, Snapshot};

/// Core's de-duplication window for `lastPodEventTime` writes (`podevents/controller.go`): a
/// claim whose recorded event is this recent is not written again.
pub(crate) const POD_EVENT_DEDUPE_SECONDS: i64 = 10;

/// Every status update of a pass, claims in `skip` (deleted this pass) left out.
pub(crate) fn status(snapshot: &Snapshot, now: Timestamp, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut out: Vec<Action> = stamps(snapshot)
        .into_iter()
        .filter(|a| match a {
            Action::StampNodeClaimHash { node_claim, .. } => !skip.contains(node_claim),
            _ => true,
        })
        .collect();
    out.extend(hydration(snapshot, skip));
    out.extend(pod_events(snapshot, skip));
    out.extend(claim_conditions(snapshot, now, skip));
    out.extend(nodepools(snapshot));
    out
}

/// `hydrateNodeClassLabel` for each claim of ours, and each Node of a registered one, whose
/// node-class label is missing or differs from the claim's `nodeClassRef.name` (core
/// `nodeclaim/hydration` and `node/hydration`: claims and Nodes made by an older release, or
/// adopted). A Node not registered yet gets the claim's labels at registration instead; a
/// claim being deleted is left as it is.
pub(crate) fn hydration(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    use crate::vocab::keys::NODE_CLASS_LABEL;
    let nodes = crate::model::snapshot::NodeIndex::new(snapshot);
    let mut out = Vec::new();
    // A claim being deleted is about to vanish with its Node: not labelled.
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name))
    {
        let Some(class) = claim.node_class.as_ref() else {
            continue;
        };
        let action = |node: Option<String>| Action::HydrateNodeClassLabel {
            target: match &node {
                Some(n) => format!("Node/{n}"),
                None => format!("NodeClaim/{}", claim.name),
            },
            node_claim: claim.name.clone(),
            node,
            node_class: class.clone(),
        };
        if claim.labels.get(NODE_CLASS_LABEL) != Some(class) {
            out.push(action(None));
        }
        if let Some(node) = nodes
            .of_claim(claim)
            .filter(|n| claim.condition_true("Registered") && !n.deleting)
            .filter(|n| n.labels.get(NODE_CLASS_LABEL) != Some(class))
        {
            out.push(action(Some(node.name.clone())));
        }
    }
    out
}

/// `recordPodEvent` for each claim whose node had a pod event the claim's
/// `status.lastPodEventTime` does not show yet (outside the de-duplication window).
pub(crate) fn pod_events(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut out = Vec::new();
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name))
    {
        let Some(node) = &claim.node_name else {
            continue;
        };
        let Some(seen) = snapshot.pod_events.get(node) else {
            continue;
        };
        let stale = claim
            .last_pod_event
            .is_none_or(|last| seen.as_second() - last.as_second() >= POD_EVENT_DEDUPE_SECONDS);
        if stale {
            out.push(Action::RecordPodEvent {
                target: format!("NodeClaim/{}", claim.name),
                node_claim: claim.name.clone(),
                node: node.clone(),
                time: seen.round(jiff::Unit::Second).unwrap_or(*seen).to_string(),
            });
        }
    }
    out
}

fn set(type_: &str, reason: &str, message: &str) -> ConditionUpdate {
    ConditionUpdate {
        type_: type_.to_string(),
        status: "True".to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
    }
}

/// `Drifted` (with Karpenter's reason) and `Consolidatable` on the claims where they hold, and
/// removed where they no longer do.
pub(crate) fn claim_conditions(
    snapshot: &Snapshot,
    now: Timestamp,
    skip: &BTreeSet<String>,
) -> Vec<Action> {
    let mut out = Vec::new();
    for pool in &snapshot.nodepools {
        let after = match pool
            .consolidate_after
            .as_deref()
            .map(str::parse::<NillableDuration>)
        {
            None => Some(0),
            Some(Ok(NillableDuration::After(d))) => Some(d.as_secs_i64()),
            Some(Ok(NillableDuration::Never)) | Some(Err(_)) => None,
        };
        for claim in snapshot.nodeclaims.iter().filter(|c| {
            !c.deleting
                && !skip.contains(&c.name)
                && c.node_pool.as_deref() == Some(pool.name.as_str())
        }) {
            let current = |t: &str| {
                claim
                    .conditions
                    .iter()
                    .find(|c| c.type_ == t)
                    .map(|c| (c.status.clone(), c.reason.clone()))
            };
            let mut to_set = Vec::new();
            let mut clear = Vec::new();
            match (drift_reason(snapshot, pool, claim, now), current("Drifted")) {
                (Some(r), Some((s, reason))) if s == "True" && reason == r.as_str() => {}
                (Some(r), _) => to_set.push(set("Drifted", r.as_str(), r.as_str())),
                (None, Some(_)) => clear.push("Drifted".to_string()),
                (None, None) => {}
            }
            let consolidatable = claim.condition_true("Initialized")
                && after.is_some_and(|a| super::disruption::quiet_for(snapshot, claim, now) >= a);
            // A static pool's claims are never judged Consolidatable: core's
            // `nodeclaim/disruption` `runReconcilers` runs no consolidation reconciler for a pool
            // with `spec.replicas`, so the condition is neither set nor cleared there.
            match (consolidatable, current("Consolidatable")) {
                _ if pool.replicas.is_some() => {}
                (true, Some((s, _))) if s == "True" => {}
                (true, _) => to_set.push(set("Consolidatable", "Consolidatable", "")),
                (false, Some(_)) => clear.push("Consolidatable".to_string()),
                (false, None) => {}
            }
            if !to_set.is_empty() || !clear.is_empty() {
                out.push(Action::SetNodeClaimConditions {
                    target: format!("NodeClaim/{}", claim.name),
                    node_claim: claim.name.clone(),
                    set: to_set,
                    clear,
                });
            }
        }
    }
    out
}

/// The conditions of a claim written at an older generation than the claim's: those whose
/// `observedGeneration` is recorded and differs from `metadata.generation`, re-stated as they
/// are (status, reason and message unchanged, so the shell keeps their lastTransitionTime and
/// stamps the current generation). Conditions with no recorded generation are left alone.
pub(crate) fn stale_generations(
    claim: &crate::model::nodeclaim::NodeClaimRecord,
) -> Vec<ConditionUpdate> {
    let Some(generation) = claim.generation else {
        return Vec::new();
    };
    claim
        .conditions
        .iter()
        .filter(|c| c.observed_generation.is_some_and(|o| o != generation))
        .map(|c| ConditionUpdate {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
        })
        .collect()
}

/// Brings every claim's conditions to its current generation: mirrors core's lifecycle
/// reconciler (`nodeclaim/lifecycle/controller.go` Reconcile and finalize), which sets its
/// conditions through operatorpkg's ConditionSet on each pass, and operatorpkg stamps each set
/// condition with the object's generation; so after a spec edit or the deletion (both bump
/// `metadata.generation`) every condition reports the new one. Folded into the claim's
/// condition action of this pass when there is one (in `actions` or `status`), never
/// re-stating a condition this pass writes. `skip`: claims deleted or acted on this pass (the next pass brings them).
pub(crate) fn refresh_generations(
    snapshot: &Snapshot,
    actions: &mut [Action],
    status: &mut Vec<Action>,
    skip: &BTreeSet<String>,
) {
    // Looked up by claim name once per pass (a scan per claim is quadratic at 10k claims).
    let checked: HashSet<String> = status
        .iter()
        .filter_map(|a| match a {
            Action::SetConsistentState { node_claim, .. } => Some(node_claim.clone()),
            _ => None,
        })
        .collect();
    // The first condition action of each claim, in `actions` then in `status`.
    let mut existing: HashMap<String, (bool, usize)> = HashMap::new();
    for (in_actions, list) in [(true, &*actions), (false, &*status)] {
        for (i, a) in list.iter().enumerate() {
            if let Action::SetNodeClaimConditions { node_claim, .. } = a {
                existing
                    .entry(node_claim.clone())
                    .or_insert((in_actions, i));
            }
        }
    }
    for claim in snapshot.nodeclaims.iter().filter(|c| {
        !skip.contains(&c.name)
            && (!c.deleting
                || c.finalizers
                    .iter()
                    .any(|f| f == crate::vocab::keys::TERMINATION_FINALIZER))
    }) {
        // The consistency check of this pass writes its own condition.
        let checked = checked.contains(&claim.name);
        let stale: Vec<ConditionUpdate> = stale_generations(claim)
            .into_iter()
            .filter(|c| !(checked && c.type_ == crate::vocab::names::CONSISTENT_STATE_FOUND))
            .collect();
        if stale.is_empty() {
            continue;
        }
        let found = existing.get(&claim.name).and_then(|&(in_actions, i)| {
            let action = if in_actions {
                actions.get_mut(i)
            } else {
                status.get_mut(i)
            };
            match action {
                Some(Action::SetNodeClaimConditions { set, clear, .. }) => Some((set, clear)),
                _ => None,
            }
        });
        match found {
            Some((set, clear)) => {
                for c in stale {
                    if !set.iter().any(|s| s.type_ == c.type_) && !clear.contains(&c.type_) {
                        set.push(c);
                    }
                }
            }
            None => {
                existing.insert(claim.name.clone(), (false, status.len()));
                status.push(Action::SetNodeClaimConditions {
                    target: format!("NodeClaim/{}", claim.name),
                    node_claim: claim.name.clone(),
                    set: stale,
                    clear: Vec::new(),
                });
            }
        }
    }
}

/// The summed capacity of a NodePool's nodes and how many there are: core's counter
/// (`state/cluster.go` `updateNodePoolResources`, which both `status.resources` and
/// `karpenter_nodepools_usage` report). Each launched claim counts once, by its pool label: by
/// its Node's capacity once initialized, before that by its own `status.capacity` (filling the
/// zero values of a Node already there, `StateNode.Capacity`); a Node no claim holds counts by
/// its own label and capacity. A claim or Node being deleted, or under a disruption command (the
/// `karpenter.sh/disrupted` taint: core's `MarkedForDeletion`), counts nothing.
pub(crate) fn pool_capacity(
    snapshot: &Snapshot,
    pool: &crate::model::nodepool::NodePool,
) -> (crate::model::resources::Resources, usize) {
    use crate::model::resources::Resources;
    let index = crate::model::snapshot::NodeIndex::new(snapshot);
    let marked = |n: &crate::model::snapshot::NodeRecord| n.deleting || n.disrupted();
    let mut sum = Resources::default();
    let mut count = 0;
    let mut held: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| c.provider_id.is_some())
    {
        let node = index.of_claim(claim);
        held.extend(node.map(|n| n.name.as_str()));
        // The pool label: the claim's until its Node registers, then the Node's.
        let registered = node.filter(|_| claim.condition_true("Registered"));
        let label = match registered {
            Some(n) => n.labels.get(crate::vocab::keys::NODEPOOL),
            None => claim.node_pool.as_ref(),
        };
        if label != Some(&pool.name) || claim.deleting || node.is_some_and(marked) {
            continue;
        }
        let capacity = match node {
            Some(n) if claim.condition_true("Initialized") => n.capacity.clone(),
            Some(n) => n.capacity.or_else_from(&claim.capacity),
            None => claim.capacity.clone(),
        };
        sum = sum.plus(&capacity);
        count += 1;
    }
    for n in snapshot.nodes.iter().filter(|n| {
        !held.contains(n.name.as_str())
            && n.labels.get(crate::vocab::keys::NODEPOOL) == Some(&pool.name)
            && !marked(n)
    }) {
        sum = sum.plus(&n.capacity);
        count += 1;
    }
    (sum, count)
}

/// A NodePool's nodes, summed capacity and readiness, written when its status says otherwise.
pub(crate) fn nodepools(snapshot: &Snapshot) -> Vec<Action> {
    let mut out = Vec::new();
    for pool in &snapshot.nodepools {
        if snapshot.implicit_nodepool {
            // An implied pool (files without one) has no object to report on.
            continue;
        }
        let (sum, nodes) = pool_capacity(snapshot, pool);
        let mut resources = BTreeMap::new();
        resources.insert("cpu".to_string(), cpu_quantity(sum.cpu_millis));
        resources.insert("memory".to_string(), sum.memory_bytes.to_string());
        resources.insert("pods".to_string(), sum.pods.to_string());
        // Core's counter reports these four and `nodes` even at zero.
        resources.insert(
            "ephemeral-storage".to_string(),
            sum.ephemeral_storage_bytes.to_string(),
        );
        for (k, v) in &sum.extended {
            resources.insert(k.clone(), v.to_string());
        }
        resources.insert("nodes".to_string(), nodes.to_string());
        // A node class this pass reports Ready (setNodeClassReady) counts as Ready; one being
        // deleted does not (core's NodePool readiness: `NodeClassTerminating`).
        let class = pool.node_class.as_deref().unwrap_or("");
        let (class_ready, message) = match snapshot.node_class_of(pool) {
            ClassState::Ready => (true, String::new()),
            ClassState::Terminating => {
                (false, format!("ClusterAPINodeClass {class} is terminating"))
            }
            ClassState::Missing => (false, format!("ClusterAPINodeClass {class} not found")),
        };
        // Core's `nodepool.validation` controller (RuntimeValidate): a pool failing it is not
        // Ready whatever its class.
        let problems = crate::model::pool_validation::runtime_problems(pool);
        let ready = class_ready && problems.is_empty();
        if pool.status_nodes == Some(nodes as i64)
            && pool.status_resources.as_ref() == Some(&resources)
            && pool.ready == Some(ready)
            && pool.validated == Some(problems.is_empty())
        {
            continue;
        }
        out.push(Action::UpdateNodePoolStatus {
            target: format!("NodePool/{}", pool.name),
            node_pool: pool.name.clone(),
            nodes: nodes as i64,
            resources,
            ready,
            message,
            invalid: problems.join("; "),
        });
    }
    out
}

/// CPU as Kubernetes prints it: whole cores when exact, else millicores.
fn cpu_quantity(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
