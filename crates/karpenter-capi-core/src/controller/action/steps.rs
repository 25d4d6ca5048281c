//! The API writes each action is carried out by ([`Action::steps`]), and what undoes them
//! when one fails.

use crate::vocab::kinds;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::controller::write::{ConditionUpdate, Write};
use crate::error::ClusterRole;
use crate::model::taints::Taint;
use crate::vocab::keys::MACHINE_ANNOTATION;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::{DELETE_MACHINE_ANNOTATION, MARKED_FOR_ANNOTATION};
use crate::vocab::keys::{EXCLUDE_FROM_LOAD_BALANCERS_LABEL, EXCLUDE_FROM_LOAD_BALANCERS_VALUE};
use crate::vocab::kinds::ResourceType;

use super::Action;
use crate::vocab::keys::{
    DISRUPTED_TAINT_KEY, DISRUPTION_REASON_ANNOTATION, DRAIN_STARTED_ANNOTATION,
    REPLACEMENTS_ANNOTATION, TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION,
    UNREGISTERED_TAINT_KEY,
};

/// The writes of one action, and what to undo if one of them fails.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Steps {
    /// Executed in order; the first failure stops the action.
    pub writes: Vec<Write>,
    /// Executed (best effort) when a write failed.
    pub rollback: Vec<Write>,
}

/// The resource type of a Cluster API object read with this apiVersion.
pub(crate) fn capi_type(base: ResourceType, api_version: &str) -> ResourceType {
    if api_version.ends_with("/v1beta1") {
        ResourceType {
            version: "v1beta1",
            ..base
        }
    } else {
        base
    }
}

fn split(key: &str) -> (String, String) {
    match key.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => (String::new(), key.to_string()),
    }
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> ConditionUpdate {
    ConditionUpdate {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
    }
}

/// A new NodeClaim's conditions: Karpenter's ready set (`Launched`, `Registered`,
/// `Initialized`, and `Ready` over them) all Unknown until each step happens (operatorpkg's
/// `AwaitingReconciliation`), so `kubectl get nodeclaims` reads as under Karpenter.
pub(crate) fn initial_conditions() -> Vec<ConditionUpdate> {
    ["Launched", "Registered", "Initialized", "Ready"]
        .iter()
        .map(|t| {
            condition(
                t,
                "Unknown",
                "AwaitingReconciliation",
                "object is awaiting reconciliation",
            )
        })
        .collect()
}

impl Action {
    /// The API writes that carry the action out.
    pub fn steps(&self) -> Steps {
        let one = |w: Write| Steps {
            writes: vec![w],
            rollback: Vec::new(),
        };
        match self {
            Action::CreateNodeClaim {
                manifest,
                pods,
                reason,
                ..
            } => {
                // A create drops `status`: the claim's initial status (Karpenter's conditions,
                // Unknown until each step happens, and the capacity known at launch) follows on
                // the status subresource.
                let mut object = manifest.clone();
                let status = object
                    .as_object_mut()
                    .and_then(|m| m.remove("status"))
                    .unwrap_or_else(|| json!({}));
                let mut fields = serde_json::Map::new();
                let mut conditions = Vec::new();
                if let Value::Object(s) = status {
                    for (k, v) in s {
                        if k == "conditions" {
                            conditions = initial_conditions();
                        } else {
                            fields.insert(k, v);
                        }
                    }
                }
                Steps {
                    writes: vec![
                        Write::Create {
                            cluster: ClusterRole::Workload,
                            resource: kinds::NODE_CLAIM,
                            object,
                        },
                        Write::StatusOfCreated {
                            resource: kinds::NODE_CLAIM,
                            fields,
                            conditions,
                        },
                    ]
                    .into_iter()
                    // Core nominates the pods of a provisioning claim; a replacement claim
                    // gets `DisruptionLaunching` instead.
                    .chain(if reason == "Provisioning" {
                        crate::controller::events::nominated(pods)
                    } else {
                        vec![crate::controller::events::disruption_launching(reason)]
                    })
                    .collect(),
                    rollback: Vec::new(),
                }
            }
            Action::ScaleMachineDeployment {
                machine_deployment,
                replicas,
                rollback_machines,
                resource_version,
                api_version,
                ..
            } => {
                let (namespace, name) = split(machine_deployment);
                let machine_type = capi_type(kinds::MACHINE, api_version);
                Steps {
                    writes: vec![Write::Scale {
                        cluster: ClusterRole::Management,
                        resource: capi_type(kinds::MACHINE_DEPLOYMENT, api_version),
                        namespace,
                        name,
                        replicas: *replicas,
                        resource_version: resource_version.clone(),
                    }],
                    rollback: rollback_machines
                        .iter()
                        .map(|m| {
                            let (namespace, name) = split(m);
                            Write::MergePatch {
                                cluster: ClusterRole::Management,
                                resource: machine_type,
                                namespace,
                                name,
                                patch: json!({"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: null, MARKED_FOR_ANNOTATION: null}}}),
                            }
                        })
                        .collect(),
                }
            }
            Action::ClaimMachine {
                machine,
                node_claim,
                api_version,
                ..
            } => {
                let (namespace, name) = split(machine);
                // The NodeClaim's annotation is the source of truth, so it is written first: a
                // crash in between leaves a claim that the next pass finishes labelling.
                Steps {
                    writes: vec![
                        Write::MergePatch {
                            cluster: ClusterRole::Workload,
                            resource: kinds::NODE_CLAIM,
                            namespace: String::new(),
                            name: node_claim.clone(),
                            patch: json!({"metadata": {"annotations": {MACHINE_ANNOTATION: machine}}}),
                        },
                        Write::MergePatch {
                            cluster: ClusterRole::Management,
                            resource: capi_type(kinds::MACHINE, api_version),
                            namespace,
                            name,
                            patch: json!({"metadata": {"labels": {MEMBER_LABEL: ""}}}),
                        },
                    ],
                    rollback: Vec::new(),
                }
            }
            Action::LaunchNodeClaim {
                node_claim,
                provider_id,
                machine,
                ..
            } => {
                let mut fields = serde_json::Map::new();
                fields.insert("providerID".to_string(), json!(provider_id));
                one(Write::SetNodeClaimStatus {
                    name: node_claim.clone(),
                    fields,
                    conditions: vec![condition(
                        "Launched",
                        "True",
                        "Launched",
                        &format!("Machine {machine} has providerID {provider_id}"),
                    )],
                })
            }
            Action::RegisterNode {
                node,
                node_claim,
                labels,
                annotations,
                taints,
                node_claim_uid,
                status,
                unregistered_taint_missing,
                ..
            } => {
                let mut add_labels = labels.clone();
                add_labels.insert(crate::vocab::keys::REGISTERED_LABEL.to_string(), "true".to_string());
                let owner = node_claim_uid.as_ref().map(|uid| {
                    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": node_claim, "uid": uid, "blockOwnerDeletion": true})
                });
                let mut fields = status.clone();
                fields.insert("nodeName".to_string(), json!(node));
                let annotate = (!annotations.is_empty()).then(|| Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: kinds::NODE,
                    namespace: String::new(),
                    name: node.clone(),
                    patch: json!({"metadata": {"annotations": annotations}}),
                });
                Steps {
                    writes: annotate.into_iter().chain([
                        Write::EditNode {
                            name: node.clone(),
                            add_labels,
                            add_taints: taints
                                .iter()
                                .filter_map(|t| Taint::parse(t).ok())
                                .collect(),
                            remove_taint_keys: vec![UNREGISTERED_TAINT_KEY.to_string()],
                            add_finalizers: vec![TERMINATION_FINALIZER.to_string()],
                            remove_finalizers: Vec::new(),
                            add_owner_references: owner.into_iter().collect(),
                        },
                        Write::SetNodeClaimStatus {
                            name: node_claim.clone(),
                            fields,
                            conditions: vec![condition("Registered", "True", "Registered", "")],
                        },
                    ])
                    .chain(unregistered_taint_missing.then(|| {
                        crate::controller::events::unregistered_taint_missing(node_claim, node)
                    }))
                    .collect(),
                    rollback: Vec::new(),
                }
            }
            Action::InitializeNodeClaim {
                node, node_claim, ..
            } => Steps {
                writes: vec![
                    Write::EditNode {
                        name: node.clone(),
                        add_labels: [(crate::vocab::keys::INITIALIZED_LABEL.to_string(), "true".to_string())]
                            .into(),
                        add_taints: Vec::new(),
                        remove_taint_keys: Vec::new(),
                        add_finalizers: Vec::new(),
                        remove_finalizers: Vec::new(),
                        add_owner_references: Vec::new(),
                    },
                    Write::SetNodeClaimStatus {
                        name: node_claim.clone(),
                        fields: serde_json::Map::new(),
                        conditions: vec![
                            condition("Initialized", "True", "Initialized", ""),
                            condition("Ready", "True", "Ready", ""),
                        ],
                    },
                ],
                rollback: Vec::new(),
            },
            Action::DeleteNodeClaim {
                node_claim,
                reason,
                message,
                add_finalizer,
                ..
            } => Steps {
                writes: [
                    Write::Event {
                        resource: kinds::NODE_CLAIM,
                        namespace: String::new(),
                        name: node_claim.clone(),
                        event_type: if reason.ends_with("Timeout") {
                            "Warning"
                        } else {
                            "Normal"
                        }
                        .to_string(),
                        reason: reason.clone(),
                        message: message.clone(),
                    },
                ]
                .into_iter()
                // Our finalizer holds the claim until its Machine is being deleted (claims made
                // before the finalizer existed get it here; NodeClaims carry no other one).
                // Added to the list as read, never replacing another controller's finalizer.
                .chain(add_finalizer.then(|| Write::EditFinalizers {
                    resource: kinds::NODE_CLAIM,
                    name: node_claim.clone(),
                    add: vec![TERMINATION_FINALIZER.to_string()],
                    remove: Vec::new(),
                }))
                .chain([Write::Delete {
                    cluster: ClusterRole::Workload,
                    resource: kinds::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    uid: None,
                    grace_period_seconds: None,
                }])
                .collect(),
                rollback: Vec::new(),
            },
            Action::MarkMachineForDeletion {
                machine,
                node_claim,
                reason,
                api_version,
                ..
            } => {
                let (namespace, name) = split(machine);
                one(Write::MergePatch {
                    cluster: ClusterRole::Management,
                    resource: capi_type(kinds::MACHINE, api_version),
                    namespace,
                    name,
                    patch: json!({"metadata": {"annotations": {
                        DELETE_MACHINE_ANNOTATION: reason,
                        MARKED_FOR_ANNOTATION: node_claim.as_deref().unwrap_or("surplus"),
                    }}}),
                })
            }
            Action::UnmarkMachine {
                machine,
                api_version,
                ..
            } => {
                let (namespace, name) = split(machine);
                one(Write::MergePatch {
                    cluster: ClusterRole::Management,
                    resource: capi_type(kinds::MACHINE, api_version),
                    namespace,
                    name,
                    patch: json!({"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: null, MARKED_FOR_ANNOTATION: null}}}),
                })
            }
            Action::SetNodeClassReady { node_class, .. } => one(Write::SetConditions {
                resource: kinds::NODE_CLASS,
                name: node_class.clone(),
                conditions: vec![condition("Ready", "True", "Ready", "")],
            }),
            Action::TaintNode {
                node,
                taint,
                reason,
                node_claim,
                since,
                replacements,
                ..
            } => Steps {
                writes: [
                    Write::EditNode {
                        name: node.clone(),
                        add_labels: BTreeMap::new(),
                        add_taints: Taint::parse(taint).into_iter().collect(),
                        remove_taint_keys: Vec::new(),
                        add_finalizers: Vec::new(),
                        remove_finalizers: Vec::new(),
                        add_owner_references: Vec::new(),
                    },
                ]
                .into_iter()
                // Karpenter's DisruptionTerminating on the Node, then (below) on the claim.
                .chain(crate::controller::events::disruption_terminating(node, None, reason))
                .chain(node_claim.iter().flat_map(|claim| {
                    [
                        // When the drain started, on the claim (no state outside the cluster).
                        Write::MergePatch {
                            cluster: ClusterRole::Workload,
                            resource: kinds::NODE_CLAIM,
                            namespace: String::new(),
                            name: claim.clone(),
                            patch: json!({"metadata": {"annotations": {
                                DRAIN_STARTED_ANNOTATION: since,
                                DISRUPTION_REASON_ANNOTATION: reason,
                                REPLACEMENTS_ANNOTATION: (*replacements > 0).then(|| replacements.to_string()),
                            }}}),
                        },
                        // Karpenter's DisruptionReason condition: what `kubectl get
                        // nodeclaims -o yaml` shows for a claim being disrupted. Only core's
                        // disruption queue writes it (`disruption/queue.go`): a user's deletion
                        // or an expiry drains with none, so its evictions count as forceful.
                        Write::SetNodeClaimStatus {
                            name: claim.clone(),
                            fields: serde_json::Map::new(),
                            conditions: vec![condition("DisruptionReason", "True", reason, "")],
                        },
                    ]
                    .into_iter()
                    .filter(|w| {
                        !matches!(w, Write::SetNodeClaimStatus { .. })
                            || crate::controller::command::is_voluntary(reason)
                    })
                    .chain(
                        crate::controller::events::disruption_terminating(node, Some(claim), reason)
                            .into_iter()
                            .skip(1),
                    )
                }))
                .collect(),
                rollback: Vec::new(),
            },
            Action::EvictPod { pod, uid, reason, node, .. } => {
                let (namespace, name) = split(pod);
                // Its Event depends on the answer: recorded by the executor.
                one(Write::Evict {
                    namespace,
                    name,
                    uid: uid.clone(),
                    node: node.clone(),
                    reason: reason.clone(),
                })
            }
            Action::DeletePod { pod, uid, grace_period_seconds, .. } => {
                let (namespace, name) = split(pod);
                Steps {
                    writes: vec![
                        Write::Delete {
                            cluster: ClusterRole::Workload,
                            resource: kinds::POD,
                            namespace: namespace.clone(),
                            name: name.clone(),
                            uid: uid.clone(),
                            grace_period_seconds: Some(*grace_period_seconds),
                        },
                        // Core's DisruptPodDelete Event.
                        Write::Event {
                            resource: kinds::POD,
                            namespace,
                            name,
                            event_type: "Warning".to_string(),
                            reason: "Disrupted".to_string(),
                            message: format!(
                                "Deleting the pod to accommodate the terminationTime of its node (gracePeriodSeconds={grace_period_seconds})"
                            ),
                        },
                    ],
                    rollback: Vec::new(),
                }
            }
            Action::ExcludeFromLoadBalancers { node, .. } => one(Write::EditNode {
                name: node.clone(),
                add_labels: BTreeMap::from([(
                    EXCLUDE_FROM_LOAD_BALANCERS_LABEL.to_string(),
                    EXCLUDE_FROM_LOAD_BALANCERS_VALUE.to_string(),
                )]),
                add_taints: Vec::new(),
                remove_taint_keys: Vec::new(),
                add_finalizers: Vec::new(),
                remove_finalizers: Vec::new(),
                add_owner_references: Vec::new(),
            }),
            Action::SetTerminationTimestamp { node_claim, time, .. } => one(Write::MergePatch {
                cluster: ClusterRole::Workload,
                resource: kinds::NODE_CLAIM,
                namespace: String::new(),
                name: node_claim.clone(),
                patch: json!({"metadata": {"annotations": {TERMINATION_TIMESTAMP_ANNOTATION: time}}}),
            }),
            Action::ReportInvalidDoNotDisrupt { pod, message, .. } => {
                let (namespace, name) = split(pod);
                one(Write::Event {
                    resource: kinds::POD,
                    namespace,
                    name,
                    event_type: "Warning".to_string(),
                    reason: "InvalidDoNotDisruptAnnotation".to_string(),
                    message: message.clone(),
                })
            }
            Action::ReportDisruptionBlocked {
                node,
                node_claim,
                message,
                ..
            } => Steps {
                writes: crate::controller::events::disruption_blocked(node, node_claim, message),
                rollback: Vec::new(),
            },
            Action::WarnNodePool { node_pool, reason, message, .. } => one(Write::Event {
                resource: kinds::NODE_POOL,
                namespace: String::new(),
                name: node_pool.clone(),
                event_type: "Warning".to_string(),
                reason: reason.clone(),
                message: message.clone(),
            }),
            Action::StampNodeClaimHash {
                node_claim,
                hash,
                hash_version,
                ..
            } => {
                let mut annotations = serde_json::Map::new();
                if let Some(h) = hash {
                    annotations.insert(
                        crate::vocab::keys::NODEPOOL_HASH_ANNOTATION.to_string(),
                        json!(h),
                    );
                }
                annotations.insert(
                    crate::vocab::keys::HASH_VERSION_ANNOTATION.to_string(),
                    json!(hash_version),
                );
                one(Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: kinds::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    patch: json!({"metadata": {"annotations": annotations}}),
                })
            }
            Action::SetConsistentState {
                node_claim, issues, ..
            } => {
                use crate::vocab::names::{
                    CONSISTENCY_CHECK_FAILED, CONSISTENT_STATE_FOUND, FAILED_CONSISTENCY_CHECK,
                };
                let set = if issues.is_empty() {
                    condition(CONSISTENT_STATE_FOUND, "True", CONSISTENT_STATE_FOUND, "")
                } else {
                    condition(
                        CONSISTENT_STATE_FOUND,
                        "False",
                        CONSISTENCY_CHECK_FAILED,
                        &issues.join("; "),
                    )
                };
                let mut writes = vec![Write::SetNodeClaimStatus {
                    name: node_claim.clone(),
                    fields: serde_json::Map::new(),
                    conditions: vec![set],
                }];
                writes.extend(issues.iter().map(|issue| Write::Event {
                    resource: kinds::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    event_type: "Warning".to_string(),
                    reason: FAILED_CONSISTENCY_CHECK.to_string(),
                    message: issue.clone(),
                }));
                Steps {
                    writes,
                    rollback: Vec::new(),
                }
            }
            Action::SetNodeClaimConditions {
                node_claim,
                set,
                clear,
                ..
            } => {
                let mut writes = Vec::new();
                if !set.is_empty() {
                    writes.push(Write::SetNodeClaimStatus {
                        name: node_claim.clone(),
                        fields: serde_json::Map::new(),
                        conditions: set.clone(),
                    });
                }
                if !clear.is_empty() {
                    writes.push(Write::ClearConditions {
                        resource: kinds::NODE_CLAIM,
                        name: node_claim.clone(),
                        types: clear.clone(),
                    });
                }
                Steps {
                    writes,
                    rollback: Vec::new(),
                }
            }
            Action::HydrateNodeClassLabel {
                node_claim,
                node,
                node_class,
                ..
            } => match node {
                Some(node) => one(Write::EditNode {
                    name: node.clone(),
                    add_labels: BTreeMap::from([(
                        crate::vocab::keys::NODE_CLASS_LABEL.to_string(),
                        node_class.clone(),
                    )]),
                    add_taints: Vec::new(),
                    remove_taint_keys: Vec::new(),
                    add_finalizers: Vec::new(),
                    remove_finalizers: Vec::new(),
                    add_owner_references: Vec::new(),
                }),
                None => one(Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: kinds::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    patch: json!({"metadata": {"labels": {
                        crate::vocab::keys::NODE_CLASS_LABEL: node_class
                    }}}),
                }),
            },
            Action::RecordPodEvent {
                node_claim, time, ..
            } => {
                let mut fields = serde_json::Map::new();
                fields.insert("lastPodEventTime".to_string(), json!(time));
                one(Write::SetNodeClaimStatus {
                    name: node_claim.clone(),
                    fields,
                    conditions: Vec::new(),
                })
            }
            Action::UpdateNodePoolStatus {
                node_pool,
                nodes,
                resources,
                ready,
                message,
                invalid,
                ..
            } => {
                let mut fields = serde_json::Map::new();
                fields.insert("nodes".to_string(), json!(nodes));
                fields.insert("resources".to_string(), json!(resources));
                let validation = if invalid.is_empty() {
                    condition("ValidationSucceeded", "True", "ValidationSucceeded", "")
                } else {
                    condition("ValidationSucceeded", "False", "NodePoolValidationFailed", invalid)
                };
                let ready = if *ready {
                    condition("Ready", "True", "Ready", "")
                } else if message.is_empty() {
                    condition("Ready", "False", "NodePoolValidationFailed", invalid)
                } else {
                    condition("Ready", "False", "NodeClassNotReady", message)
                };
                one(Write::SetStatus {
                    resource: kinds::NODE_POOL,
                    name: node_pool.clone(),
                    fields,
                    conditions: vec![ready, validation],
                })
            }
            Action::RemoveNodeFinalizer { node, .. } => one(Write::EditNode {
                name: node.clone(),
                add_labels: BTreeMap::new(),
                add_taints: Vec::new(),
                remove_taint_keys: Vec::new(),
                add_finalizers: Vec::new(),
                remove_finalizers: vec![TERMINATION_FINALIZER.to_string()],
                add_owner_references: Vec::new(),
            }),
            // Only ours comes off the list as read at write time (the plan's `remaining` is the
            // snapshot's view and may be stale).
            Action::RemoveNodeClaimFinalizer { node_claim, .. } => one(Write::EditFinalizers {
                resource: kinds::NODE_CLAIM,
                name: node_claim.clone(),
                add: Vec::new(),
                remove: vec![TERMINATION_FINALIZER.to_string()],
            }),
            Action::AbortDisruption { node, node_claim, message, .. } => Steps {
                writes: [
                    Write::EditNode {
                        name: node.clone(),
                        add_labels: BTreeMap::new(),
                        add_taints: Vec::new(),
                        remove_taint_keys: vec![DISRUPTED_TAINT_KEY.to_string()],
                        add_finalizers: Vec::new(),
                        remove_finalizers: Vec::new(),
                        add_owner_references: Vec::new(),
                    },
                    Write::Event {
                        resource: kinds::NODE,
                        namespace: String::new(),
                        name: node.clone(),
                        event_type: "Warning".to_string(),
                        reason: "DisruptionAborted".to_string(),
                        message: message.clone(),
                    },
                ]
                .into_iter()
                .chain(node_claim.iter().flat_map(|claim| {
                    [
                        Write::MergePatch {
                            cluster: ClusterRole::Workload,
                            resource: kinds::NODE_CLAIM,
                            namespace: String::new(),
                            name: claim.clone(),
                            patch: json!({"metadata": {"annotations": {DRAIN_STARTED_ANNOTATION: null, DISRUPTION_REASON_ANNOTATION: null, REPLACEMENTS_ANNOTATION: null}}}),
                        },
                        // The claim is no longer being disrupted: its DisruptionReason goes, as
                        // core's orchestration queue clears it when a command fails
                        // (`pkg/controllers/disruption/orchestration/queue.go`).
                        Write::ClearConditions {
                            resource: kinds::NODE_CLAIM,
                            name: claim.clone(),
                            types: vec!["DisruptionReason".to_string()],
                        },
                    ]
                }))
                .collect(),
                rollback: Vec::new(),
            },
            Action::AdoptMachine {
                machine,
                node,
                node_claim,
                manifest,
                status,
                node_labels,
                api_version,
                ..
            } => crate::controller::adopt::steps(
                machine,
                node,
                node_claim,
                manifest,
                status,
                node_labels,
                api_version,
            ),
        }
    }
}
