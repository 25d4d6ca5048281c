//! Karpenter NodeClaims as the controller and `doctor` read them: pool, flavor, bound Machine,
//! providerID, node, conditions and age.

use jiff::Timestamp;
use serde::Serialize;

use super::condition::{Condition, conditions_at};
use super::labels::Labels;
use super::object::RawObject;
use super::resources::Resources;
use crate::vocab::keys;
use crate::vocab::keys::MACHINE_ANNOTATION;
use crate::vocab::keys::MACHINE_DEPLOYMENT_ANNOTATION;

/// A NodeClaim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimRecord {
    /// Name.
    pub name: String,
    /// UID (for the Node's owner reference).
    pub(crate) uid: Option<String>,
    /// Labels.
    pub(crate) labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// Creation time.
    pub(crate) created: Option<Timestamp>,
    /// Being deleted.
    pub deleting: bool,
    /// `metadata.deletionTimestamp`, when being deleted: `terminationGracePeriod` counts from it.
    pub(crate) deleted_at: Option<Timestamp>,
    /// `karpenter.sh/nodepool` label.
    pub(crate) node_pool: Option<String>,
    /// `node.kubernetes.io/instance-type` label.
    pub(crate) instance_type: Option<String>,
    /// The bound Machine (`namespace/name`) from the annotation.
    pub(crate) machine: Option<String>,
    /// The MachineDeployment it was planned on (our annotation), if any.
    pub(crate) machine_deployment: Option<String>,
    /// `status.providerID`.
    pub(crate) provider_id: Option<String>,
    /// `status.nodeName`.
    pub node_name: Option<String>,
    /// `spec.resources.requests`.
    pub(crate) requests: Resources,
    /// `status.capacity` (what the launched instance has, before its Node reports it).
    pub(crate) capacity: Resources,
    /// Status conditions.
    pub(crate) conditions: Vec<Condition>,
    /// `metadata.generation` (the API server bumps it on spec changes and on deletion).
    #[serde(skip)]
    pub(crate) generation: Option<i64>,
    /// `spec.startupTaints` as `key=value:Effect`.
    pub(crate) startup_taints: Vec<super::taints::Taint>,
    /// `spec.taints`.
    pub(crate) taints: Vec<super::taints::Taint>,
    /// `status.lastPodEventTime`: when a pod last arrived on or left its node.
    pub(crate) last_pod_event: Option<Timestamp>,
    /// `spec.expireAfter` as written.
    pub(crate) expire_after: Option<String>,
    /// `spec.terminationGracePeriod` as written.
    pub(crate) termination_grace_period: Option<String>,
    /// `metadata.finalizers`.
    pub(crate) finalizers: Vec<String>,
    /// `spec.nodeClassRef.name` when the ref is a ClusterAPINodeClass (ours).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node_class: Option<String>,
    /// The keys of `spec.requirements`: what the claim's NodePool required when the claim was
    /// made (we, upstream Karpenter and adoption all copy the pool's requirements there). Empty
    /// when the claim records none. Drift by a requirement key the claim's labels lack is judged
    /// only against these ([`crate::controller::drift::drift_reason`]).
    #[serde(skip)]
    pub requirement_keys: Vec<String>,
}

impl NodeClaimRecord {
    /// Reads a NodeClaim leniently (status may be partial on a young claim).
    pub(crate) fn from_object(obj: &RawObject) -> NodeClaimRecord {
        let labels = obj.meta.labels.clone().unwrap_or_default();
        let annotations = obj.meta.annotations.clone().unwrap_or_default();
        let s = |p: &str| obj.str_at(p).filter(|v| !v.is_empty()).map(str::to_string);
        let quantities = |pointer: &str| {
            obj.value
                .pointer(pointer)
                .and_then(|r| r.as_object())
                .map(|m| {
                    let pairs: Vec<(String, String)> = m
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| v.to_string()),
                            )
                        })
                        .collect();
                    Resources::from_quantities(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                        .unwrap_or_default()
                })
                .unwrap_or_default()
        };
        let requests = quantities("/spec/resources/requests");
        let taints_at = |p: &str| -> Vec<super::taints::Taint> {
            obj.typed::<Vec<k8s_openapi::api::core::v1::Taint>>(p, "")
                .ok()
                .flatten()
                .unwrap_or_default()
                .iter()
                .filter_map(|t| super::taints::Taint::from_k8s(t).ok())
                .collect()
        };
        NodeClaimRecord {
            name: obj.name().to_string(),
            uid: obj.meta.uid.clone(),
            node_pool: labels.get(keys::NODEPOOL).cloned(),
            instance_type: labels.get(keys::INSTANCE_TYPE).cloned(),
            machine: annotations
                .get(MACHINE_ANNOTATION)
                .cloned()
                .filter(|m| !m.is_empty()),
            machine_deployment: annotations.get(MACHINE_DEPLOYMENT_ANNOTATION).cloned(),
            labels,
            annotations,
            created: obj.meta.creation_timestamp.as_ref().map(|t| t.0),
            deleting: obj.meta.deletion_timestamp.is_some(),
            deleted_at: obj.meta.deletion_timestamp.as_ref().map(|t| t.0),
            provider_id: s("/status/providerID"),
            node_name: s("/status/nodeName"),
            requests,
            capacity: quantities("/status/capacity"),
            conditions: conditions_at(&obj.value, "/status/conditions"),
            generation: obj.meta.generation,
            startup_taints: taints_at("/spec/startupTaints"),
            taints: taints_at("/spec/taints"),
            last_pod_event: obj
                .str_at("/status/lastPodEventTime")
                .and_then(|t| t.parse().ok()),
            expire_after: s("/spec/expireAfter"),
            termination_grace_period: s("/spec/terminationGracePeriod"),
            finalizers: obj.meta.finalizers.clone().unwrap_or_default(),
            node_class: (obj.str_at("/spec/nodeClassRef/kind")
                == Some(crate::vocab::kinds::NODE_CLASS.kind)
                && obj.str_at("/spec/nodeClassRef/group")
                    == Some(crate::vocab::kinds::NODE_CLASS.group))
            .then(|| s("/spec/nodeClassRef/name"))
            .flatten(),
            requirement_keys: obj
                .value
                .pointer("/spec/requirements")
                .and_then(|r| r.as_array())
                .map(|rs| {
                    rs.iter()
                        .filter_map(|r| r.get("key").and_then(|k| k.as_str()))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether a condition of this type is `True`.
    pub fn condition_true(&self, type_: &str) -> bool {
        super::condition::find(&self.conditions, type_).is_some_and(Condition::is_true)
    }
}
