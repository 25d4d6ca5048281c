//! Applying an autoscaler's [`Action`]s to the simulated cluster — the one place they land.
//! Each action is carried out through the same [`Action::steps`] the kube shell executes, so a
//! new action variant works here as soon as its writes do; each [`Write`] changes the snapshot
//! the way the API server (and CAPI's MachineSet controller, for a scale) would.

use serde_json::Value;

use super::cluster::SimCluster;
use crate::controller::action::Action;
use crate::controller::write::Write;
use crate::model::condition::Condition;
use crate::model::labels::Labels;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::object::RawObject;
use crate::vocab::keys;
use crate::vocab::keys::DELETE_MACHINE_ANNOTATION;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::{MACHINE_ANNOTATION, MACHINE_DEPLOYMENT_ANNOTATION};

/// Carries out one action; on a failed write, runs its rollback and reports the failure.
pub(crate) fn apply_action(c: &mut SimCluster, action: &Action) -> Result<(), String> {
    let steps = action.steps();
    for w in &steps.writes {
        if let Err(e) = apply_write(c, w) {
            for r in &steps.rollback {
                let _ = apply_write(c, r);
            }
            return Err(format!("{} {}: {e}", action.name(), action.target()));
        }
    }
    Ok(())
}

/// Carries out actions in order; failures become warnings (the next pass retries, as in `run`).
pub(crate) fn apply_all(c: &mut SimCluster, actions: &[Action]) {
    for a in actions {
        if let Err(e) = apply_action(c, a) {
            c.warn(e);
        }
    }
}

/// Carries out a controller pass's plan as `run`'s executor does (`kube::apply::Executor::
/// execute`): the actions in order, skipping those whose scope an earlier failed action
/// blocked, then the status updates (none about a blocked object). Failures become warnings.
/// Returns the actions carried out (not the status updates), for action logs.
pub(crate) fn apply_plan(c: &mut SimCluster, plan: &crate::controller::Plan) -> Vec<String> {
    let mut blocked: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut done = Vec::new();
    for a in &plan.actions {
        let scopes = a.scopes();
        if scopes.iter().any(|s| blocked.contains(s)) {
            blocked.extend(scopes);
            continue;
        }
        match apply_action(c, a) {
            Ok(()) => done.push(format!("{} {}", a.name(), a.target())),
            Err(e) => {
                blocked.extend(scopes);
                c.warn(e);
            }
        }
    }
    for a in &plan.status {
        if a.scopes().iter().any(|s| blocked.contains(s)) {
            continue;
        }
        if let Err(e) = apply_action(c, a) {
            c.warn(e);
        }
    }
    done
}

/// Merges a JSON merge patch of string values into a label or annotation map.
fn merge_map(map: &mut Labels, patch: Option<&Value>) {
    let Some(obj) = patch.and_then(Value::as_object) else {
        return;
    };
    for (k, v) in obj {
        match v.as_str() {
            Some(s) => {
                map.insert(k.clone(), s.to_string());
            }
            None => {
                map.remove(k);
            }
        }
    }
}

/// Re-reads the fields a NodeClaim record derives from its labels and annotations.
fn rederive(claim: &mut NodeClaimRecord) {
    claim.machine = claim
        .annotations
        .get(MACHINE_ANNOTATION)
        .cloned()
        .filter(|m| !m.is_empty());
    claim.machine_deployment = claim
        .annotations
        .get(MACHINE_DEPLOYMENT_ANNOTATION)
        .cloned();
    claim.node_pool = claim.labels.get(keys::NODEPOOL).cloned();
    claim.instance_type = claim.labels.get(keys::INSTANCE_TYPE).cloned();
}

/// Merges condition updates by type, as the shell does: `lastTransitionTime` moves only when the
/// status changes. Returns the types that became `True`.
fn merge_conditions(
    existing: &mut Vec<Condition>,
    updates: &[crate::controller::write::ConditionUpdate],
    ts: jiff::Timestamp,
) -> Vec<String> {
    let mut became = Vec::new();
    for u in updates {
        match existing.iter_mut().find(|x| x.type_ == u.type_) {
            Some(x) => {
                if x.status != u.status {
                    x.last_transition_time = Some(ts);
                    if u.status == "True" {
                        became.push(u.type_.clone());
                    }
                }
                x.status = u.status.clone();
                x.reason = u.reason.clone();
                x.message = u.message.clone();
            }
            None => {
                if u.status == "True" {
                    became.push(u.type_.clone());
                }
                existing.push(Condition {
                    type_: u.type_.clone(),
                    status: u.status.clone(),
                    reason: u.reason.clone(),
                    message: u.message.clone(),
                    last_transition_time: Some(ts),
                    observed_generation: None,
                });
            }
        }
    }
    became
}

/// Counts the lifecycle transitions the timeline reports.
fn record_transitions(c: &mut SimCluster, became: &[String], now: i64) {
    for t in became {
        match t.as_str() {
            "Registered" => c.rec.registered(now),
            "Initialized" => c.rec.initialized(now),
            _ => {}
        }
    }
}

/// The simulated NodeClaim of that name, or the error a missing one is.
fn claim_mut<'a>(c: &'a mut SimCluster, name: &str) -> Result<&'a mut NodeClaimRecord, String> {
    c.snap
        .nodeclaims
        .iter_mut()
        .find(|x| x.name == name)
        .ok_or_else(|| format!("NodeClaim {name} not found"))
}

/// Claim `name`'s status written at `now`: `edit` sets its other fields, then `conditions` are
/// merged into its conditions and the lifecycle transitions they make are recorded.
fn set_claim_status(
    c: &mut SimCluster,
    name: &str,
    conditions: &[crate::controller::write::ConditionUpdate],
    now: i64,
    edit: impl FnOnce(&mut NodeClaimRecord),
) -> Result<(), String> {
    let ts = c.ts(now);
    let claim = claim_mut(c, name)?;
    edit(claim);
    let became = merge_conditions(&mut claim.conditions, conditions, ts);
    record_transitions(c, &became, now);
    Ok(())
}

fn apply_write(c: &mut SimCluster, w: &Write) -> Result<(), String> {
    // A write that changes nothing is no watch event (the API server keeps the object's
    // resourceVersion), so it does not wake the controller again.
    let claims_before = match w {
        Write::SetNodeClaimStatus { .. } | Write::ClearConditions { .. } => {
            Some(c.snap.nodeclaims.clone())
        }
        _ => None,
    };
    let silent = matches!(
        w,
        Write::SetStatus { .. } | Write::Event { .. } | Write::EventForCreated { .. }
    );
    apply_write_inner(c, w)?;
    let unchanged = claims_before.is_some_and(|b| b == c.snap.nodeclaims);
    if !silent && !unchanged {
        c.touch();
    }
    Ok(())
}

fn apply_write_inner(c: &mut SimCluster, w: &Write) -> Result<(), String> {
    let now = c.now;
    match w {
        Write::Create {
            resource, object, ..
        } if resource.kind == "NodeClaim" => {
            let mut obj = object.clone();
            let name = match obj.pointer("/metadata/name").and_then(Value::as_str) {
                Some(n) => n.to_string(),
                None => {
                    let prefix = obj
                        .pointer("/metadata/generateName")
                        .and_then(Value::as_str)
                        .unwrap_or("nodeclaim-")
                        .to_string();
                    // As the API server does: the prefix and five random characters.
                    let mut n = c.snap.nodeclaims.len() as u64 + 1;
                    loop {
                        let candidate =
                            format!("{prefix}{}", super::cluster::suffix(n * 31 + now as u64));
                        if !c.snap.nodeclaims.iter().any(|x| x.name == candidate) {
                            break candidate;
                        }
                        n += 1;
                    }
                }
            };
            if c.snap.nodeclaims.iter().any(|x| x.name == name) {
                return Err(format!("NodeClaim {name} already exists"));
            }
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("name".into(), Value::String(name.clone()));
                meta.insert("uid".into(), Value::String(format!("sim-{name}")));
                meta.insert(
                    "creationTimestamp".into(),
                    Value::String(c.ts(now).to_string()),
                );
            }
            let raw = RawObject::from_value(obj, "simulation").map_err(|e| e.to_string())?;
            c.snap.nodeclaims.push(NodeClaimRecord::from_object(&raw));
            c.last_created_claim = Some(name);
            c.rec.claim(now);
        }
        Write::MergePatch {
            resource,
            namespace,
            name,
            patch,
            ..
        } => {
            let labels = patch.pointer("/metadata/labels");
            let annotations = patch.pointer("/metadata/annotations");
            match resource.kind {
                "NodeClaim" => {
                    let claim = claim_mut(c, name)?;
                    merge_map(&mut claim.labels, labels);
                    merge_map(&mut claim.annotations, annotations);
                    if let Some(f) = patch.pointer("/metadata/finalizers") {
                        claim.finalizers = f
                            .as_array()
                            .map(|v| {
                                v.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                    }
                    rederive(claim);
                    // The API server removes a deleting object once its last finalizer is gone.
                    if claim.deleting && claim.finalizers.is_empty() {
                        let name = name.clone();
                        c.snap.nodeclaims.retain(|x| x.name != name);
                    }
                }
                "Machine" => {
                    let m = c
                        .snap
                        .machines
                        .iter_mut()
                        .find(|x| &x.namespace == namespace && &x.name == name)
                        .ok_or_else(|| format!("Machine {namespace}/{name} not found"))?;
                    merge_map(&mut m.labels, labels);
                    m.claimed = m.labels.contains_key(MEMBER_LABEL);
                    if let Some(v) = annotations.and_then(|a| a.get(DELETE_MACHINE_ANNOTATION)) {
                        m.marked_for_deletion = !v.is_null();
                        m.marked_by_us = !v.is_null();
                    }
                }
                "Node" => {
                    let n = c
                        .snap
                        .nodes
                        .iter_mut()
                        .find(|n| &n.name == name)
                        .ok_or_else(|| format!("Node {name} not found"))?;
                    merge_map(&mut n.labels, labels);
                    merge_map(std::sync::Arc::make_mut(&mut n.annotations), annotations);
                }
                other => return Err(format!("the simulation does not patch {other}s")),
            }
        }
        Write::Scale {
            namespace,
            name,
            replicas,
            ..
        } => {
            let key = format!("{namespace}/{name}");
            let md = c
                .snap
                .machine_deployments
                .iter_mut()
                .find(|m| m.key() == key)
                .ok_or_else(|| format!("MachineDeployment {key} not found"))?;
            let before = crate::controller::scale::current_replicas(md);
            if let Some(spec) = md
                .object
                .value
                .get_mut("spec")
                .and_then(Value::as_object_mut)
            {
                spec.insert("replicas".into(), Value::from(*replicas));
            } else {
                md.object.value["spec"] = serde_json::json!({"replicas": replicas});
            }
            if *replicas > before {
                c.rec.scale_up(now);
            }
            c.reconcile_machine_set(&key);
        }
        Write::EditNode {
            name,
            add_labels,
            add_taints,
            remove_taint_keys,
            add_finalizers,
            remove_finalizers,
            ..
        } => {
            let n = c
                .snap
                .nodes
                .iter_mut()
                .find(|n| &n.name == name)
                .ok_or_else(|| format!("Node {name} not found"))?;
            n.labels
                .extend(add_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            n.taints.retain(|t| !remove_taint_keys.contains(&t.key));
            for t in add_taints {
                if !n
                    .taints
                    .iter()
                    .any(|x| x.key == t.key && x.effect == t.effect)
                {
                    n.taints.push(t.clone());
                }
            }
            for f in add_finalizers {
                if !n.finalizers.contains(f) {
                    n.finalizers.push(f.clone());
                }
            }
            n.finalizers.retain(|f| !remove_finalizers.contains(f));
            let released = n.finalizers.is_empty();
            if released && c.node_deleting(name) {
                c.remove_node(name);
            }
        }
        // As the API server: the claim's finalizers change, and a deleting claim whose last
        // finalizer went is removed.
        Write::EditFinalizers {
            resource,
            name,
            add,
            remove,
        } if resource.kind == "NodeClaim" => {
            let Some(claim) = c.snap.nodeclaims.iter_mut().find(|x| &x.name == name) else {
                return Ok(());
            };
            for f in add {
                if !claim.finalizers.contains(f) {
                    claim.finalizers.push(f.clone());
                }
            }
            claim.finalizers.retain(|f| !remove.contains(f));
            if claim.deleting && claim.finalizers.is_empty() {
                let name = name.clone();
                c.snap.nodeclaims.retain(|x| x.name != name);
            }
        }
        Write::EditFinalizers { resource, .. } => {
            return Err(format!(
                "the simulation does not edit the finalizers of {}s",
                resource.kind
            ));
        }
        Write::SetNodeClaimStatus {
            name,
            fields,
            conditions,
        } => {
            set_claim_status(c, name, conditions, now, |claim| {
                if let Some(p) = fields.get("providerID").and_then(Value::as_str) {
                    claim.provider_id = Some(p.to_string());
                }
                if let Some(n) = fields.get("nodeName").and_then(Value::as_str) {
                    claim.node_name = Some(n.to_string());
                }
                if let Some(t) = fields
                    .get("lastPodEventTime")
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse().ok())
                {
                    claim.last_pod_event = Some(t);
                }
            })?;
        }
        Write::StatusOfCreated {
            resource,
            conditions,
            ..
        } => {
            // Capacity and allocatable are read from the member MachineDeployment, not kept on
            // the simulated claim; its conditions are.
            if resource.kind != "NodeClaim" {
                return Err(format!(
                    "the simulation does not set status on {}s",
                    resource.kind
                ));
            }
            let name = c
                .last_created_claim
                .clone()
                .ok_or("no NodeClaim was created before its status")?;
            set_claim_status(c, &name, conditions, now, |_| {})?;
        }
        Write::ClearConditions {
            resource,
            name,
            types,
        } => {
            if resource.kind == "NodeClaim" {
                let claim = claim_mut(c, name)?;
                claim.conditions.retain(|x| !types.contains(&x.type_));
            }
        }
        // NodePool status (`resources`, `nodes`, conditions) is for people and Karpenter's other
        // controllers; nothing in the simulation reads it back.
        Write::SetStatus { .. } => {}
        Write::SetConditions {
            resource,
            name,
            conditions,
        } => {
            if resource.kind != "ClusterAPINodeClass" {
                return Err(format!(
                    "the simulation does not set conditions on {}s",
                    resource.kind
                ));
            }
            let class = c
                .snap
                .nodeclasses
                .iter_mut()
                .find(|x| &x.name == name)
                .ok_or_else(|| format!("ClusterAPINodeClass {name} not found"))?;
            if let Some(r) = conditions.iter().find(|u| u.type_ == "Ready") {
                class.ready = Some(r.status == "True");
            }
        }
        Write::Delete {
            resource,
            namespace,
            name,
            ..
        } => match resource.kind {
            "NodeClaim" => {
                let i = c
                    .snap
                    .nodeclaims
                    .iter()
                    .position(|x| &x.name == name)
                    .ok_or_else(|| format!("NodeClaim {name} not found"))?;
                // As the API server: an object with finalizers is only marked deleting.
                if c.mode.claim_finalizer || !c.snap.nodeclaims[i].finalizers.is_empty() {
                    let at = c.ts(c.now);
                    let claim = &mut c.snap.nodeclaims[i];
                    claim.deleting = true;
                    claim.deleted_at.get_or_insert(at);
                } else {
                    c.snap.nodeclaims.remove(i);
                }
            }
            "Pod" => c.evict_pod(&format!("{namespace}/{name}")),
            other => return Err(format!("the simulation does not delete {other}s")),
        },
        Write::Evict {
            namespace, name, ..
        } => {
            // The simulated API never refuses: the pod goes, with its `Evicted` Event.
            c.evict_pod(&format!("{namespace}/{name}"));
            c.rec.events += 1;
        }
        Write::Event { .. } | Write::EventForCreated { .. } => c.rec.events += 1,
        Write::Create { resource, .. } => {
            return Err(format!("the simulation does not create {}s", resource.kind));
        }
    }
    Ok(())
}
