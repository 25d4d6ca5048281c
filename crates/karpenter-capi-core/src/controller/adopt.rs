//! Adoption of Machines that have a Node but no NodeClaim, as when an existing, populated
//! MachineDeployment is labelled a member (the migration from Cluster Autoscaler). Such a Machine
//! is never scaled away: it gets a NodeClaim, registered and initialized, in the highest-weight
//! NodePool that offers its MachineDeployment and whose requirements its Node meets (its ages
//! count from adoption, so consolidation later treats it like any other node), or, when no
//! NodePool fits, it is left alone with a note. Mirrors karpenter-provider-cluster-api
//! `pkg/batcher/create.go` and `delete.go`: replicas change only for a specific NodeClaim.

use crate::vocab::kinds;
use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde_json::json;

use super::action::{Action, Steps, capi_type};
use super::lifecycle::resource_json;
use super::provision::{node_claim_manifest, template_hash};
use super::write::{ConditionUpdate, Write};
use crate::error::ClusterRole;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::offerings;
use crate::sched::strategy::NewNode;
use crate::vocab::keys;
use crate::vocab::keys::ADOPTED_ANNOTATION;
use crate::vocab::keys::MACHINE_ANNOTATION;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::TEMPLATE_HASH_ANNOTATION;
use crate::vocab::keys::TERMINATION_FINALIZER;

/// `adoptMachine` for each member Machine with a Node and no claim; notes for those left alone.
pub(crate) fn adopt(snapshot: &Snapshot, now: Timestamp) -> (Vec<Action>, Vec<String>) {
    let mut actions = Vec::new();
    let mut notes = Vec::new();
    let referenced: BTreeSet<&String> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| c.machine.as_ref())
        .collect();
    let members: BTreeSet<String> = snapshot.all_members().iter().map(|m| m.key()).collect();
    let mut catalog = None;
    for m in &snapshot.machines {
        let (Some(node_name), Some(md)) = (&m.node_name, m.deployment_key()) else {
            continue;
        };
        if !m.is_live() || referenced.contains(&m.key()) || !members.contains(&md) {
            continue;
        }
        let Some(node) = snapshot.nodes.iter().find(|n| &n.name == node_name) else {
            continue;
        };
        // A claim may know the Node without naming the Machine (a claim of another provider).
        let known = snapshot
            .nodeclaims
            .iter()
            .chain(&snapshot.foreign_claims)
            .any(|c| {
                c.node_name.as_ref() == Some(&node.name)
                    || (c.provider_id.is_some() && c.provider_id == node.provider_id)
            });
        if node.deleting || known {
            continue;
        }
        // Not registered yet (its Node carries `karpenter.sh/unregistered`): it waits for a
        // claim to be bound to (`lifecycle::bind_and_launch`), never adopted as initialized.
        if node
            .taints
            .iter()
            .any(|t| t.key == keys::UNREGISTERED_TAINT_KEY)
        {
            continue;
        }
        let all = catalog.get_or_insert_with(|| offerings(snapshot, true).0);
        // Offerings follow the NodePools' order: highest weight first.
        let fit = all.iter().find(|o| {
            o.flavor.machine_deployment == md
                && snapshot.nodepools[o.pool_index]
                    .requirements
                    .iter()
                    .all(|r| !node.labels.contains_key(&r.key) || r.matches(&node.labels))
        });
        let Some(offering) = fit else {
            notes.push(format!(
                "Machine {} (node {}) has no NodeClaim and no NodePool fits it: left alone",
                m.key(),
                node.name
            ));
            continue;
        };
        let pool = &snapshot.nodepools[offering.pool_index];
        let planned = NewNode {
            offering: offering.clone(),
            name: node.name.clone(),
            pods: Vec::new(),
            requested: Resources::default(),
        };
        let mut manifest = node_claim_manifest(pool, &planned);
        let meta = &mut manifest["metadata"];
        if let Some(obj) = meta.as_object_mut() {
            obj.remove("generateName");
        }
        meta["name"] = json!(node.name);
        meta["finalizers"] = json!([TERMINATION_FINALIZER]);
        meta["annotations"][MACHINE_ANNOTATION] = json!(m.key());
        meta["annotations"][ADOPTED_ANNOTATION] = json!(now.to_string());
        if let Some(record) = snapshot.machine_deployments.iter().find(|r| r.key() == md) {
            meta["annotations"][TEMPLATE_HASH_ANNOTATION] = json!(template_hash(record));
        }
        // The Node exists as it is: its taints are never changed by adoption.
        if let Some(spec) = manifest["spec"].as_object_mut() {
            spec.remove("taints");
            spec.remove("startupTaints");
        }
        let mut status = serde_json::Map::new();
        if let Some(pid) = node.provider_id.clone().or_else(|| m.provider_id.clone()) {
            status.insert("providerID".into(), json!(pid));
        }
        status.insert("nodeName".into(), json!(node.name));
        status.insert("capacity".into(), resource_json(&node.capacity));
        status.insert("allocatable".into(), resource_json(&node.allocatable));
        let node_labels: BTreeMap<String, String> = [
            (keys::NODEPOOL.to_string(), pool.name.clone()),
            (keys::REGISTERED_LABEL.to_string(), "true".to_string()),
            (keys::INITIALIZED_LABEL.to_string(), "true".to_string()),
        ]
        .into();
        actions.push(Action::AdoptMachine {
            target: format!("Machine/{}", m.key()),
            machine: m.key(),
            node: node.name.clone(),
            node_claim: node.name.clone(),
            node_pool: pool.name.clone(),
            manifest,
            status,
            node_labels,
            api_version: m.api_version.clone(),
        });
    }
    (actions, notes)
}

/// The writes of an `adoptMachine`: the claim (a fixed name, so applying it again is a no-op),
/// its status (launched, registered, initialized), the Machine's membership label, and the
/// Node's labels and finalizer.
pub(super) fn steps(
    machine: &str,
    node: &str,
    node_claim: &str,
    manifest: &serde_json::Value,
    status: &serde_json::Map<String, serde_json::Value>,
    node_labels: &BTreeMap<String, String>,
    api_version: &str,
) -> Steps {
    let (namespace, name) = machine.split_once('/').unwrap_or(("", machine));
    let (namespace, name) = (namespace.to_string(), name.to_string());
    let condition = |type_: &str, reason: &str, message: &str| ConditionUpdate {
        type_: type_.to_string(),
        status: "True".to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
    };
    Steps {
        writes: vec![
            // A fixed name: applying it again is a no-op, so a retry never doubles it.
            Write::Create {
                cluster: ClusterRole::Workload,
                resource: kinds::NODE_CLAIM,
                object: manifest.clone(),
            },
            Write::SetNodeClaimStatus {
                name: node_claim.to_string(),
                fields: status.clone(),
                conditions: vec![
                    condition("Launched", "Adopted", &format!("adopted Machine {machine}")),
                    condition("Registered", "Adopted", &format!("adopted Node {node}")),
                    condition("Initialized", "Adopted", ""),
                    condition("Ready", "Ready", ""),
                ],
            },
            Write::MergePatch {
                cluster: ClusterRole::Management,
                resource: capi_type(kinds::MACHINE, api_version),
                namespace,
                name,
                patch: json!({"metadata": {"labels": {MEMBER_LABEL: ""}}}),
            },
            Write::EditNode {
                name: node.to_string(),
                add_labels: node_labels.clone(),
                add_taints: Vec::new(),
                remove_taint_keys: Vec::new(),
                add_finalizers: vec![TERMINATION_FINALIZER.to_string()],
                remove_finalizers: Vec::new(),
                add_owner_references: Vec::new(),
            },
        ],
        rollback: Vec::new(),
    }
}
