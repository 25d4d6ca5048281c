//! The actions a plan is made of, as data: what `run --dry-run -o json` prints and what the
//! shell turns into API writes through [`Action::steps`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::write::ConditionUpdate;
use crate::model::flavor::Price;
use crate::vocab::keys::TERMINATION_FINALIZER;

mod steps;

pub(crate) use steps::{Steps, capi_type, initial_conditions};

fn is_zero(n: &usize) -> bool {
    *n == 0
}

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
        /// The Node joined without the `karpenter.sh/unregistered` taint (and was never
        /// registered): registration records core's `UnregisteredTaintMissing` Warning.
        #[serde(skip)]
        unregistered_taint_missing: bool,
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
    /// Take our stale `cluster.x-k8s.io/delete-machine` mark off a Machine no decision of this
    /// pass removes (Cluster API would delete it first on any scale-down).
    UnmarkMachine {
        /// `Machine/ns/name`.
        target: String,
        /// `namespace/name`.
        machine: String,
        /// Why the mark is stale.
        message: String,
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
        /// When the disruption command starts (RFC 3339): its validation delay and its timeout
        /// count from it.
        #[serde(skip)]
        since: String,
        /// How many replacement NodeClaims the command creates (recorded on the claim, so a
        /// replacement that vanished calls the command off).
        #[serde(skip_serializing_if = "is_zero")]
        replacements: usize,
    },
    /// Take a terminating node out of cloud load balancers before it drains: the label
    /// `node.kubernetes.io/exclude-from-external-load-balancers=karpenter`, as core's terminator
    /// (`terminator.go` Taint) sets beside its taint, so traffic stops reaching the node before
    /// its pods and connections go.
    ExcludeFromLoadBalancers {
        /// `Node/name`.
        target: String,
        /// The Node.
        node: String,
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
        /// The pod's UID: a precondition, so a new pod of the same name is never evicted.
        #[serde(skip)]
        uid: Option<String>,
    },
    /// Delete a pod whose time runs out before its claim's termination deadline, with what is
    /// left of it: PodDisruptionBudgets and `do-not-disrupt` no longer hold it.
    DeletePod {
        /// `Pod/ns/name`.
        target: String,
        /// `namespace/name`.
        pod: String,
        /// The node it is deleted from.
        node: String,
        /// Disruption reason.
        reason: String,
        /// `gracePeriodSeconds` of the delete: the seconds left until the deadline, at least 1
        /// (0 would remove it from etcd at once, before its containers stop).
        grace_period_seconds: i64,
        /// The pod's UID: a precondition, so a new pod of the same name is never deleted.
        #[serde(skip)]
        uid: Option<String>,
    },
    /// Record on a deleting NodeClaim when its node must be gone (Karpenter's
    /// `karpenter.sh/nodeclaim-termination-timestamp`).
    SetTerminationTimestamp {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// The deadline (RFC 3339).
        time: String,
    },
    /// Tell a pod's owner its `karpenter.sh/do-not-disrupt` value does not parse (a Warning
    /// Event; the pod is treated as unprotected).
    ReportInvalidDoNotDisrupt {
        /// `Pod/ns/name`.
        target: String,
        /// `namespace/name`.
        pod: String,
        /// What is wrong.
        message: String,
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
        /// The replacement claims a call-off deletes before it (its scopes include them): when
        /// one of those deletes fails the taint stays, so the next pass still knows the command
        /// and calls it off again, and no replacement is left behind by an untainted candidate.
        #[serde(skip)]
        replacements: Vec<String>,
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
    /// Core's consistency check of a claim's Node (`nodeclaim/consistency`): the claim's
    /// `ConsistentStateFound` condition, True without issues, else False with one
    /// `FailedConsistencyCheck` Warning Event per issue.
    SetConsistentState {
        /// `NodeClaim/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// What does not match (core's NodeShape messages); empty: consistent.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        issues: Vec<String>,
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
    /// Label a NodeClaim of ours, or its Node, with its node class
    /// (`karpenter.cluster.x-k8s.io/clusterapinodeclass: <nodeClassRef.name>`) where the label
    /// is missing or differs (core `nodeclaim/hydration` and `node/hydration`).
    HydrateNodeClassLabel {
        /// `NodeClaim/name` or `Node/name`.
        target: String,
        /// The NodeClaim.
        node_claim: String,
        /// Its Node, when the Node is the one labelled.
        #[serde(skip_serializing_if = "Option::is_none")]
        node: Option<String>,
        /// The node class's name: the label's value.
        node_class: String,
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
        /// `Ready` as Karpenter computes it: the node class is Ready and the pool passes
        /// runtime validation.
        ready: bool,
        /// Why the node class is not Ready.
        #[serde(skip_serializing_if = "String::is_empty")]
        message: String,
        /// What runtime validation found (`ValidationSucceeded=False` when not empty).
        #[serde(skip_serializing_if = "String::is_empty")]
        invalid: String,
    },
}

impl Action {
    /// A `deleteNodeClaim` of `claim` (its Machine named, so a failed deletion holds back the
    /// Machine's removal; our finalizer added first when the claim lacks it).
    pub(crate) fn delete_node_claim(
        claim: &crate::model::nodeclaim::NodeClaimRecord,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Action {
        Action::DeleteNodeClaim {
            target: format!("NodeClaim/{}", claim.name),
            node_claim: claim.name.clone(),
            reason: reason.into(),
            message: message.into(),
            machine: claim.machine.clone(),
            add_finalizer: !claim.finalizers.iter().any(|f| f == TERMINATION_FINALIZER),
        }
    }

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
            | Action::UnmarkMachine { target, .. }
            | Action::SetNodeClassReady { target, .. }
            | Action::TaintNode { target, .. }
            | Action::ExcludeFromLoadBalancers { target, .. }
            | Action::EvictPod { target, .. }
            | Action::DeletePod { target, .. }
            | Action::SetTerminationTimestamp { target, .. }
            | Action::ReportInvalidDoNotDisrupt { target, .. }
            | Action::WarnNodePool { target, .. }
            | Action::RemoveNodeFinalizer { target, .. }
            | Action::RemoveNodeClaimFinalizer { target, .. }
            | Action::AbortDisruption { target, .. }
            | Action::ReportDisruptionBlocked { target, .. }
            | Action::AdoptMachine { target, .. }
            | Action::StampNodeClaimHash { target, .. }
            | Action::SetNodeClaimConditions { target, .. }
            | Action::SetConsistentState { target, .. }
            | Action::RecordPodEvent { target, .. }
            | Action::HydrateNodeClassLabel { target, .. }
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
            Action::UnmarkMachine { .. } => "unmarkMachine",
            Action::SetNodeClassReady { .. } => "setNodeClassReady",
            Action::TaintNode { .. } => "taintNode",
            Action::ExcludeFromLoadBalancers { .. } => "excludeFromLoadBalancers",
            Action::EvictPod { .. } => "evictPod",
            Action::DeletePod { .. } => "deletePod",
            Action::SetTerminationTimestamp { .. } => "setTerminationTimestamp",
            Action::ReportInvalidDoNotDisrupt { .. } => "reportInvalidDoNotDisrupt",
            Action::WarnNodePool { .. } => "warnNodePool",
            Action::RemoveNodeFinalizer { .. } => "removeNodeFinalizer",
            Action::RemoveNodeClaimFinalizer { .. } => "removeNodeClaimFinalizer",
            Action::AbortDisruption { .. } => "abortDisruption",
            Action::ReportDisruptionBlocked { .. } => "reportDisruptionBlocked",
            Action::AdoptMachine { .. } => "adoptMachine",
            Action::StampNodeClaimHash { .. } => "stampNodeClaimHash",
            Action::SetNodeClaimConditions { .. } => "setNodeClaimConditions",
            Action::SetConsistentState { .. } => "setConsistentState",
            Action::RecordPodEvent { .. } => "recordPodEvent",
            Action::HydrateNodeClassLabel { .. } => "hydrateNodeClassLabel",
            Action::UpdateNodePoolStatus { .. } => "updateNodePoolStatus",
        }
    }
}
