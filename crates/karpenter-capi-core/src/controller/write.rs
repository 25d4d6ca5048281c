//! The API writes a plan turns into: a small, closed set of intent-level operations that the
//! kube shell executes verbatim (it never decides). Writes that touch lists (taints, finalizers,
//! conditions) are expressed as intents so the shell can re-read and retry on a 409 conflict.

use serde::Serialize;
use serde_json::Value;

use crate::error::ClusterRole;
use crate::vocab::kinds::ResourceType;

/// In the message of a [`Write::EventForCreated`], the name the API gave the created object.
pub const CREATED_NAME: &str = "{created}";

/// A status condition to set (Karpenter's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionUpdate {
    /// Type, e.g. `Launched`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// CamelCase reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
}

/// One write to one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Write {
    /// Create an object (may use `metadata.generateName`).
    Create {
        /// Which cluster.
        cluster: ClusterRole,
        /// Type.
        resource: ResourceType,
        /// The full object.
        object: Value,
    },
    /// A JSON merge patch without preconditions (labels, annotations: never conflicts).
    MergePatch {
        /// Which cluster.
        cluster: ClusterRole,
        /// Type.
        resource: ResourceType,
        /// Namespace (empty for cluster-scoped).
        namespace: String,
        /// Name.
        name: String,
        /// The patch.
        patch: Value,
    },
    /// Set `spec.replicas` through the `scale` subresource.
    Scale {
        /// Which cluster.
        cluster: ClusterRole,
        /// Type.
        resource: ResourceType,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Desired replicas.
        replicas: i64,
        /// The resourceVersion read: sent as a precondition (409 when the object changed).
        resource_version: Option<String>,
    },
    /// Edit a Node: read, change, write with its resourceVersion; retried on conflict.
    EditNode {
        /// Node name.
        name: String,
        /// Labels to set.
        add_labels: std::collections::BTreeMap<String, String>,
        /// Taints to add (`key=value:Effect`), if not present.
        add_taints: Vec<crate::model::taints::Taint>,
        /// Taint keys to remove.
        remove_taint_keys: Vec<String>,
        /// Finalizers to add.
        add_finalizers: Vec<String>,
        /// Finalizers to remove.
        remove_finalizers: Vec<String>,
        /// Owner references to add (full JSON).
        add_owner_references: Vec<Value>,
    },
    /// Add and remove finalizers of a cluster-scoped workload object (a NodeClaim): read, change
    /// only these entries of the list as read, write with its resourceVersion; retried on
    /// conflict. Finalizers of other controllers are kept whatever they became meanwhile.
    EditFinalizers {
        /// Type.
        resource: ResourceType,
        /// Name.
        name: String,
        /// Finalizers to add.
        add: Vec<String>,
        /// Finalizers to remove.
        remove: Vec<String>,
    },
    /// Set fields and conditions of a NodeClaim's status: read, merge conditions by type (keeping
    /// lastTransitionTime when the status is unchanged), write with resourceVersion; retried on
    /// conflict.
    SetNodeClaimStatus {
        /// NodeClaim name.
        name: String,
        /// Top-level status fields to set (`providerID`, `nodeName`, `capacity`, ...).
        fields: serde_json::Map<String, Value>,
        /// Conditions to set.
        conditions: Vec<ConditionUpdate>,
    },
    /// Merge-patch the status of the object the previous `Create` of the same action made (its
    /// name is generated; a create drops `status`, so Karpenter's initial conditions and the
    /// launch-time capacity go in a second write to the `status` subresource).
    StatusOfCreated {
        /// Type.
        resource: ResourceType,
        /// Top-level status fields (`capacity`, `allocatable`).
        fields: serde_json::Map<String, Value>,
        /// Conditions to set (lastTransitionTime is the time of the write).
        conditions: Vec<ConditionUpdate>,
    },
    /// Remove status conditions of these types from a cluster-scoped object (Karpenter clears
    /// `Drifted` and `Consolidatable` when they no longer hold); read-modify-write.
    ClearConditions {
        /// Type.
        resource: ResourceType,
        /// Name.
        name: String,
        /// Condition types to remove.
        types: Vec<String>,
    },
    /// Set top-level status fields and conditions of a cluster-scoped object (NodePool
    /// `status.resources`, `status.nodes`); read-modify-write.
    SetStatus {
        /// Type.
        resource: ResourceType,
        /// Name.
        name: String,
        /// Top-level status fields.
        fields: serde_json::Map<String, Value>,
        /// Conditions to set.
        conditions: Vec<ConditionUpdate>,
    },
    /// Set the status conditions of a cluster-scoped object (node class Ready).
    SetConditions {
        /// Type.
        resource: ResourceType,
        /// Name.
        name: String,
        /// Conditions to set.
        conditions: Vec<ConditionUpdate>,
    },
    /// Delete an object.
    Delete {
        /// Which cluster.
        cluster: ClusterRole,
        /// Type.
        resource: ResourceType,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// A UID precondition (the object deleted must be the one planned on).
        uid: Option<String>,
        /// `gracePeriodSeconds` of the delete (None: the object's own).
        grace_period_seconds: Option<i64>,
    },
    /// Evict a pod through the Eviction API (respects PodDisruptionBudgets), then record what
    /// came of it as core's terminator does (`terminator/eviction.go` Queue.Reconcile): an
    /// `Evicted` Event on the pod when it went ([`super::events::evicted`]), a `FailedDraining`
    /// Warning on its Node when a PodDisruptionBudget refused ([`super::events::failed_draining`]).
    Evict {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// A UID precondition (the pod evicted must be the one planned on).
        uid: Option<String>,
        /// The Node being drained.
        node: String,
        /// The claim's disruption reason, for the `Evicted` Event.
        reason: String,
    },
    /// Record an Event about the object the previous `Create` of the same action made, or naming
    /// it (its name is generated): Karpenter's `Nominated` on the pods a claim is for, its
    /// `DisruptionLaunching` on a replacement claim.
    EventForCreated {
        /// The object the Event is on (type, namespace, name); None: the created object itself.
        on: Option<(ResourceType, String, String)>,
        /// `Normal` or `Warning`.
        event_type: String,
        /// CamelCase reason.
        reason: String,
        /// Message; [`CREATED_NAME`] stands for the created object's name.
        message: String,
        /// Sent through core's token bucket for nominations (5 a second, bursts of 10), so a
        /// claim for hundreds of pods does not make hundreds of Events at once.
        rate_limited: bool,
    },
    /// Record a Kubernetes Event on an object of the workload cluster.
    Event {
        /// Type of the object the event is about.
        resource: ResourceType,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// `Normal` or `Warning`.
        event_type: String,
        /// CamelCase reason.
        reason: String,
        /// Message.
        message: String,
    },
}
