//! The actions a plan is made of, as data: what `run --dry-run -o json` prints and what the
//! shell turns into API writes through [`Action::steps`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::write::{self, ConditionUpdate, ResourceType, Write};
use crate::error::ClusterRole;
use crate::model::flavor::{MEMBER_LABEL, Price};
use crate::model::machine::DELETE_MACHINE_ANNOTATION;
use crate::model::nodeclaim::MACHINE_ANNOTATION;
use crate::model::taints::Taint;

/// Karpenter's taint on a node that has not been adopted yet.
pub const UNREGISTERED_TAINT_KEY: &str = "karpenter.sh/unregistered";
/// Karpenter's taint on a node being disrupted.
pub const DISRUPTED_TAINT_KEY: &str = "karpenter.sh/disrupted";
/// Our NodeClaim annotation recording when the drain of its node started (RFC 3339).
pub const DRAIN_STARTED_ANNOTATION: &str = "karpenter-capi/drain-started";
/// Karpenter's Node and NodeClaim finalizer.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// Our NodeClaim annotation recording why its node is being disrupted (voluntary reasons wait for
/// a home for the pods; forceful ones drain at once).
pub const DISRUPTION_REASON_ANNOTATION: &str = "karpenter-capi/disruption-reason";

/// One change the controller wants.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Action {
    /// Create a NodeClaim for pending pods.
    CreateNodeClaim {
        /// `NodeClaim/<nodepool>-` (the name is generated).
        target: String,
        /// NodePool.
        node_pool: String,
        /// The MachineDeployment chosen (`namespace/name`).
        machine_deployment: String,
        /// Its instance type.
        instance_type: String,
        /// Pods it is for (`namespace/name`).
        pods: Vec<String>,
        /// Price per hour.
        price_per_hour: Price,
        /// Why (`Provisioning`, or the disruption it replaces for).
        reason: String,
        /// The NodeClaim to create.
        #[serde(skip)]
        manifest: Value,
    },
    /// Set a MachineDeployment's replicas through the scale subresource.
    ScaleMachineDeployment {
        /// `MachineDeployment/ns/name`.
        target: String,
        /// `namespace/name`.
        machine_deployment: String,
        /// Current `spec.replicas`.
        from: i64,
        /// Desired replicas.
        replicas: i64,
        /// Machines this plan marked for deletion: unmarked again if the scale fails.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        rollback_machines: Vec<String>,
        /// The MachineDeployment's resourceVersion as read: a precondition (a conflict re-plans).
        #[serde(skip)]
        resource_version: Option<String>,
        /// apiVersion of the MachineDeployment.
        #[serde(skip)]
        api_version: String,
    },
    /// Bind an unclaimed Machine to a waiting NodeClaim.
    ClaimMachine {
        /// `Machine/ns/name`.
        target: String,
        /// `namespace/name`.
        machine: String,
        /// The NodeClaim.
        node_claim: String,
        /// apiVersion of the Machine.
        #[serde(skip)]
        api_version: String,
    },
    /// The Machine has a providerID: the NodeClaim is launched.
    LaunchNodeClaim {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// Its Machine.
        machine: String,
        /// The providerID copied from the Machine.
        provider_id: String,
    },
    /// Adopt the Node whose providerID matches the NodeClaim.
    RegisterNode {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
        /// The NodeClaim.
        node_claim: String,
        /// Labels copied to the Node.
        labels: BTreeMap<String, String>,
        /// Annotations copied to the Node (the claim's, but none in the `cluster.x-k8s.io`
        /// domain: Cluster API owns those on Nodes).
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        annotations: BTreeMap<String, String>,
        /// Taints copied to the Node.
        taints: Vec<String>,
        /// The NodeClaim's UID (for the Node's owner reference).
        #[serde(skip)]
        node_claim_uid: Option<String>,
        /// Capacity and allocatable copied to the NodeClaim's status.
        #[serde(skip)]
        status: serde_json::Map<String, Value>,
    },
    /// The Node is ready and free of startup and ephemeral taints.
    InitializeNodeClaim {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// Its Node.
        node: String,
    },
    /// Delete a NodeClaim (timeout or disruption).
    DeleteNodeClaim {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// CamelCase reason (`LaunchTimeout`, `RegistrationTimeout`, `Empty`, ...).
        reason: String,
        /// What happened.
        message: String,
        /// Its Machine (`namespace/name`), when bound: a failed deletion holds back the
        /// Machine's removal in the same pass.
        #[serde(skip)]
        machine: Option<String>,
        /// The claim lacks our `karpenter.sh/termination` finalizer (made before it existed):
        /// it is added first, so a drained Machine never outlives its claim.
        #[serde(skip)]
        add_finalizer: bool,
    },
    /// Mark the exact Machine CAPI must delete on the next scale-down.
    MarkMachineForDeletion {
        /// `Machine/ns/name`.
        target: String,
        /// `namespace/name`.
        machine: String,
        /// Its NodeClaim, if any.
        node_claim: Option<String>,
        /// Why.
        reason: String,
        /// apiVersion of the Machine.
        #[serde(skip)]
        api_version: String,
    },
    /// Report the node class Ready so NodePools provision.
    SetNodeClassReady {
        /// `ClusterAPINodeClass/name`.
        target: String,
        /// Its name.
        node_class: String,
    },
    /// Taint a node before draining it.
    TaintNode {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
        /// `key:Effect`.
        taint: String,
        /// Disruption reason.
        reason: String,
        /// Saving per hour of the disruption decision.
        saving_per_hour: Price,
        /// The node's NodeClaim, which records when the drain started.
        #[serde(skip_serializing_if = "Option::is_none")]
        node_claim: Option<String>,
        /// When the drain starts (RFC 3339), for `terminationGracePeriod`.
        #[serde(skip)]
        since: String,
    },
    /// Evict a pod from a node being disrupted.
    EvictPod {
        /// `Pod/ns/name`.
        target: String,
        /// `namespace/name`.
        pod: String,
        /// The node it is evicted from.
        node: String,
        /// Disruption reason.
        reason: String,
        /// Delete the pod instead of evicting it: the NodePool's `terminationGracePeriod` has
        /// elapsed, so PodDisruptionBudgets no longer hold it.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        force: bool,
        /// The pod's UID: a precondition, so a new pod of the same name is never evicted.
        #[serde(skip)]
        uid: Option<String>,
    },
    /// Report a NodePool the controller skips (an Event on it).
    WarnNodePool {
        /// `NodePool/name`.
        target: String,
        /// The NodePool.
        node_pool: String,
        /// CamelCase reason.
        reason: String,
        /// What is wrong and what was skipped.
        message: String,
    },
    /// Remove Karpenter's finalizer from a Node whose Machine is gone.
    RemoveNodeFinalizer {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
    },
    /// Remove Karpenter's finalizer from a deleting NodeClaim whose Machine is being deleted or
    /// gone.
    RemoveNodeClaimFinalizer {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// The finalizers it keeps.
        #[serde(skip)]
        remaining: Vec<String>,
    },
    /// Call off a voluntary disruption whose pods lost their home (a replacement failed or
    /// vanished): the `karpenter.sh/disrupted` taint comes off, with a Warning Event.
    AbortDisruption {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
        /// Its NodeClaim.
        #[serde(skip_serializing_if = "Option::is_none")]
        node_claim: Option<String>,
        /// Why.
        message: String,
    },
    /// Tell the owner why disruption may not touch a node (Karpenter's `DisruptionBlocked` Event
    /// on the Node and its NodeClaim; a report, so it goes in the plan's status).
    ReportDisruptionBlocked {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
        /// Its NodeClaim.
        node_claim: String,
        /// Why, as core words it (`disruption is blocked through the ... annotation`).
        message: String,
    },
    /// Adopt a Machine that has a Node but no NodeClaim: create its claim (registered and
    /// initialized) and label the Machine and the Node as Karpenter's.
    AdoptMachine {
        /// `Machine/ns/name`.
        target: String,
        /// `namespace/name`.
        machine: String,
        /// Its Node.
        node: String,
        /// The NodeClaim created (named after the Node).
        node_claim: String,
        /// The NodePool adopting it.
        node_pool: String,
        /// The NodeClaim to create.
        #[serde(skip)]
        manifest: Value,
        /// Its status (capacity, allocatable, providerID, nodeName).
        #[serde(skip)]
        status: serde_json::Map<String, Value>,
        /// Labels the Node gets.
        #[serde(skip)]
        node_labels: BTreeMap<String, String>,
        /// apiVersion of the Machine.
        #[serde(skip)]
        api_version: String,
    },
    /// Write our NodePool hash and its version on a NodeClaim stamped with another version (or
    /// none), so static drift compares like with like.
    StampNodeClaimHash {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// The hash computed now (None: the claim is already Drifted and keeps its hash).
        #[serde(skip_serializing_if = "Option::is_none")]
        hash: Option<String>,
        /// Our hash version.
        hash_version: String,
        /// The version it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        previous_version: Option<String>,
    },
    /// Set or clear the NodeClaim conditions disruption reads (`Drifted`, `Consolidatable`).
    SetNodeClaimConditions {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// Conditions to set.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        set: Vec<ConditionUpdate>,
        /// Condition types to remove.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        clear: Vec<String>,
    },
    /// A pod arrived on or left the claim's node: `status.lastPodEventTime`.
    RecordPodEvent {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// Its node.
        node: String,
        /// When (RFC 3339).
        time: String,
    },
    /// A NodePool's `status.resources`, `status.nodes` and `Ready` condition.
    UpdateNodePoolStatus {
        /// `NodePool/name`.
        target: String,
        /// The NodePool.
        node_pool: String,
        /// Nodes of the pool.
        nodes: i64,
        /// Their summed capacity (quantities).
        resources: BTreeMap<String, String>,
        /// `Ready` as Karpenter computes it: the node class is Ready.
        ready: bool,
        /// Why not Ready.
        #[serde(skip_serializing_if = "String::is_empty")]
        message: String,
    },
}

/// The writes of one action, and what to undo if one of them fails.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Steps {
    /// Executed in order; the first failure stops the action.
    pub writes: Vec<Write>,
    /// Executed (best effort) when a write failed.
    pub rollback: Vec<Write>,
}

/// The resource type of a Cluster API object read with this apiVersion.
pub fn capi_type(base: ResourceType, api_version: &str) -> ResourceType {
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
pub fn initial_conditions() -> Vec<ConditionUpdate> {
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
    /// The object this action changes, `Kind/ns/name` or `Kind/name`.
    pub fn target(&self) -> &str {
        match self {
            Action::CreateNodeClaim { target, .. }
            | Action::ScaleMachineDeployment { target, .. }
            | Action::ClaimMachine { target, .. }
            | Action::LaunchNodeClaim { target, .. }
            | Action::RegisterNode { target, .. }
            | Action::InitializeNodeClaim { target, .. }
            | Action::DeleteNodeClaim { target, .. }
            | Action::MarkMachineForDeletion { target, .. }
            | Action::SetNodeClassReady { target, .. }
            | Action::TaintNode { target, .. }
            | Action::EvictPod { target, .. }
            | Action::WarnNodePool { target, .. }
            | Action::RemoveNodeFinalizer { target, .. }
            | Action::RemoveNodeClaimFinalizer { target, .. }
            | Action::AbortDisruption { target, .. }
            | Action::ReportDisruptionBlocked { target, .. }
            | Action::AdoptMachine { target, .. }
            | Action::StampNodeClaimHash { target, .. }
            | Action::SetNodeClaimConditions { target, .. }
            | Action::RecordPodEvent { target, .. }
            | Action::UpdateNodePoolStatus { target, .. } => target,
        }
    }

    /// The action's camelCase name, as in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Action::CreateNodeClaim { .. } => "createNodeClaim",
            Action::ScaleMachineDeployment { .. } => "scaleMachineDeployment",
            Action::ClaimMachine { .. } => "claimMachine",
            Action::LaunchNodeClaim { .. } => "launchNodeClaim",
            Action::RegisterNode { .. } => "registerNode",
            Action::InitializeNodeClaim { .. } => "initializeNodeClaim",
            Action::DeleteNodeClaim { .. } => "deleteNodeClaim",
            Action::MarkMachineForDeletion { .. } => "markMachineForDeletion",
            Action::SetNodeClassReady { .. } => "setNodeClassReady",
            Action::TaintNode { .. } => "taintNode",
            Action::EvictPod { .. } => "evictPod",
            Action::WarnNodePool { .. } => "warnNodePool",
            Action::RemoveNodeFinalizer { .. } => "removeNodeFinalizer",
            Action::RemoveNodeClaimFinalizer { .. } => "removeNodeClaimFinalizer",
            Action::AbortDisruption { .. } => "abortDisruption",
            Action::ReportDisruptionBlocked { .. } => "reportDisruptionBlocked",
            Action::AdoptMachine { .. } => "adoptMachine",
            Action::StampNodeClaimHash { .. } => "stampNodeClaimHash",
            Action::SetNodeClaimConditions { .. } => "setNodeClaimConditions",
            Action::RecordPodEvent { .. } => "recordPodEvent",
            Action::UpdateNodePoolStatus { .. } => "updateNodePoolStatus",
        }
    }

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
                            resource: write::NODE_CLAIM,
                            object,
                        },
                        Write::StatusOfCreated {
                            resource: write::NODE_CLAIM,
                            fields,
                            conditions,
                        },
                    ]
                    .into_iter()
                    // Core nominates the pods of a provisioning claim; a replacement claim
                    // gets `DisruptionLaunching` instead.
                    .chain(if reason == "Provisioning" {
                        super::events::nominated(pods)
                    } else {
                        vec![super::events::disruption_launching(reason)]
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
                let machine_type = capi_type(write::MACHINE, api_version);
                Steps {
                    writes: vec![Write::Scale {
                        cluster: ClusterRole::Management,
                        resource: capi_type(write::MACHINE_DEPLOYMENT, api_version),
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
                                patch: json!({"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: null}}}),
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
                            resource: write::NODE_CLAIM,
                            namespace: String::new(),
                            name: node_claim.clone(),
                            patch: json!({"metadata": {"annotations": {MACHINE_ANNOTATION: machine}}}),
                        },
                        Write::MergePatch {
                            cluster: ClusterRole::Management,
                            resource: capi_type(write::MACHINE, api_version),
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
                ..
            } => {
                let mut add_labels = labels.clone();
                add_labels.insert("karpenter.sh/registered".to_string(), "true".to_string());
                let owner = node_claim_uid.as_ref().map(|uid| {
                    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": node_claim, "uid": uid, "blockOwnerDeletion": true})
                });
                let mut fields = status.clone();
                fields.insert("nodeName".to_string(), json!(node));
                let annotate = (!annotations.is_empty()).then(|| Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: write::NODE,
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
                    ]).collect(),
                    rollback: Vec::new(),
                }
            }
            Action::InitializeNodeClaim {
                node, node_claim, ..
            } => Steps {
                writes: vec![
                    Write::EditNode {
                        name: node.clone(),
                        add_labels: [("karpenter.sh/initialized".to_string(), "true".to_string())]
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
                        resource: write::NODE_CLAIM,
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
                .chain(add_finalizer.then(|| Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: write::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    patch: json!({"metadata": {"finalizers": [TERMINATION_FINALIZER]}}),
                }))
                .chain([Write::Delete {
                    cluster: ClusterRole::Workload,
                    resource: write::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    uid: None,
                }])
                .collect(),
                rollback: Vec::new(),
            },
            Action::MarkMachineForDeletion {
                machine,
                reason,
                api_version,
                ..
            } => {
                let (namespace, name) = split(machine);
                one(Write::MergePatch {
                    cluster: ClusterRole::Management,
                    resource: capi_type(write::MACHINE, api_version),
                    namespace,
                    name,
                    patch: json!({"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: reason}}}),
                })
            }
            Action::SetNodeClassReady { node_class, .. } => one(Write::SetConditions {
                resource: write::NODE_CLASS,
                name: node_class.clone(),
                conditions: vec![condition("Ready", "True", "Ready", "")],
            }),
            Action::TaintNode {
                node,
                taint,
                reason,
                node_claim,
                since,
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
                .chain(super::events::disruption_terminating(node, None, reason))
                .chain(node_claim.iter().flat_map(|claim| {
                    [
                        // When the drain started, on the claim (no state outside the cluster).
                        Write::MergePatch {
                            cluster: ClusterRole::Workload,
                            resource: write::NODE_CLAIM,
                            namespace: String::new(),
                            name: claim.clone(),
                            patch: json!({"metadata": {"annotations": {DRAIN_STARTED_ANNOTATION: since, DISRUPTION_REASON_ANNOTATION: reason}}}),
                        },
                        // Karpenter's DisruptionReason condition: what `kubectl get
                        // nodeclaims -o yaml` shows for a claim being disrupted.
                        Write::SetNodeClaimStatus {
                            name: claim.clone(),
                            fields: serde_json::Map::new(),
                            conditions: vec![condition("DisruptionReason", "True", reason, "")],
                        },
                    ]
                    .into_iter()
                    .chain(
                        super::events::disruption_terminating(node, Some(claim), reason)
                            .into_iter()
                            .skip(1),
                    )
                }))
                .collect(),
                rollback: Vec::new(),
            },
            Action::EvictPod { pod, force, uid, reason, .. } => {
                let (namespace, name) = split(pod);
                let uid = uid.clone();
                if *force {
                    one(Write::Delete { cluster: ClusterRole::Workload, resource: write::POD, namespace, name, uid })
                } else {
                    Steps {
                        writes: vec![
                            Write::Evict { namespace, name, uid },
                            super::events::evicted(pod, reason),
                        ],
                        rollback: Vec::new(),
                    }
                }
            }
            Action::ReportDisruptionBlocked {
                node,
                node_claim,
                message,
                ..
            } => Steps {
                writes: super::events::disruption_blocked(node, node_claim, message),
                rollback: Vec::new(),
            },
            Action::WarnNodePool { node_pool, reason, message, .. } => one(Write::Event {
                resource: write::NODE_POOL,
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
                        crate::model::nodeclaim::NODEPOOL_HASH_ANNOTATION.to_string(),
                        json!(h),
                    );
                }
                annotations.insert(
                    super::drift::HASH_VERSION_ANNOTATION.to_string(),
                    json!(hash_version),
                );
                one(Write::MergePatch {
                    cluster: ClusterRole::Workload,
                    resource: write::NODE_CLAIM,
                    namespace: String::new(),
                    name: node_claim.clone(),
                    patch: json!({"metadata": {"annotations": annotations}}),
                })
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
                        resource: write::NODE_CLAIM,
                        name: node_claim.clone(),
                        types: clear.clone(),
                    });
                }
                Steps {
                    writes,
                    rollback: Vec::new(),
                }
            }
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
                ..
            } => {
                let mut fields = serde_json::Map::new();
                fields.insert("nodes".to_string(), json!(nodes));
                fields.insert("resources".to_string(), json!(resources));
                let (status, reason) = if *ready {
                    ("True", "Ready")
                } else {
                    ("False", "NodeClassNotReady")
                };
                one(Write::SetStatus {
                    resource: write::NODE_POOL,
                    name: node_pool.clone(),
                    fields,
                    conditions: vec![condition("Ready", status, reason, message)],
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
            Action::RemoveNodeClaimFinalizer { node_claim, remaining, .. } => one(Write::MergePatch {
                cluster: ClusterRole::Workload,
                resource: write::NODE_CLAIM,
                namespace: String::new(),
                name: node_claim.clone(),
                patch: json!({"metadata": {"finalizers": remaining}}),
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
                        resource: write::NODE,
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
                            resource: write::NODE_CLAIM,
                            namespace: String::new(),
                            name: claim.clone(),
                            patch: json!({"metadata": {"annotations": {DRAIN_STARTED_ANNOTATION: null, DISRUPTION_REASON_ANNOTATION: null}}}),
                        },
                        // The claim is no longer being disrupted: its DisruptionReason goes, as
                        // core's orchestration queue clears it when a command fails
                        // (`pkg/controllers/disruption/orchestration/queue.go`).
                        Write::ClearConditions {
                            resource: write::NODE_CLAIM,
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
            } => super::adopt::steps(
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
