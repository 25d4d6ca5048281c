//! Cluster API Machines as the controller and `doctor` read them (v1beta1 and v1beta2): owning
//! MachineDeployment, claim label, delete mark, providerID, node, readiness and failures.

use jiff::Timestamp;
use serde::Serialize;

use super::condition::{Condition, conditions_at};
use super::labels::Labels;
use super::object::RawObject;
use crate::vocab::keys::DELETE_MACHINE_ANNOTATION;
use crate::vocab::keys::DEPLOYMENT_NAME_LABEL;
use crate::vocab::keys::MARKED_FOR_ANNOTATION;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::SET_NAME_LABEL;
use crate::vocab::reasons::DisruptionReason;

/// The `delete-machine` values earlier versions wrote (the reason alone): their marks are ours.
const OUR_MARK_REASONS: &[&str] = &[
    DisruptionReason::Empty.as_str(),
    DisruptionReason::Underutilized.as_str(),
    DisruptionReason::Drifted.as_str(),
    DisruptionReason::Expired.as_str(),
    "Deleted",
    "NodeDeleted",
    "ScaleDown",
    "LaunchTimeout",
    "RegistrationTimeout",
];

/// A Machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineRecord {
    /// Namespace.
    pub(crate) namespace: String,
    /// Name.
    pub(crate) name: String,
    /// apiVersion it was read with.
    pub(crate) api_version: String,
    /// Labels.
    pub(crate) labels: Labels,
    /// Creation time.
    pub(crate) created: Option<Timestamp>,
    /// Being deleted.
    pub(crate) deleting: bool,
    /// Its MachineDeployment's name (label).
    pub(crate) deployment: Option<String>,
    /// Claimed by a NodeClaim (membership label on the Machine).
    pub(crate) claimed: bool,
    /// Carries `cluster.x-k8s.io/delete-machine`.
    pub(crate) marked_for_deletion: bool,
    /// That mark is ours (see [`MARKED_FOR_ANNOTATION`]).
    pub(crate) marked_by_us: bool,
    /// `spec.providerID`.
    pub(crate) provider_id: Option<String>,
    /// `status.nodeRef.name`.
    pub(crate) node_name: Option<String>,
    /// `status.phase`.
    pub(crate) phase: Option<String>,
    /// Status conditions.
    pub(crate) conditions: Vec<Condition>,
    /// A terminal failure reported by the Machine (`reason: message`).
    pub(crate) failure: Option<String>,
    /// Its MachineSet (controller owner reference, else the `cluster.x-k8s.io/set-name` label).
    pub(crate) machine_set: Option<String>,
}

/// A failure reported only through conditions (Cluster API v1beta2, where `failureReason` and
/// `failureMessage` are gone): `InfrastructureReady` or `BootstrapConfigReady` False with a
/// reason that names a failure (`InstanceCreateFailed`, `...Error`), as `Type=False (reason):
/// message`. A reason like `InstanceNotReady` or `WaitingForBootstrapData` is progress, not a
/// failure.
fn condition_failure(conditions: &[Condition]) -> Option<String> {
    conditions
        .iter()
        .filter(|c| {
            matches!(
                c.type_.as_str(),
                "InfrastructureReady" | "BootstrapConfigReady"
            )
        })
        .filter(|c| c.status == "False")
        .find(|c| {
            let r = c.reason.to_ascii_lowercase();
            r.ends_with("failed") || r.ends_with("error") || r.ends_with("failure")
        })
        .map(|c| format!("{}=False ({}): {}", c.type_, c.reason, c.message))
}

impl MachineRecord {
    /// Reads a Machine.
    pub(crate) fn from_object(obj: &RawObject) -> MachineRecord {
        let labels = obj.meta.labels.clone().unwrap_or_default();
        let annotations = obj.meta.annotations.clone().unwrap_or_default();
        let s = |p: &str| obj.str_at(p).filter(|v| !v.is_empty()).map(str::to_string);
        let failure = match (
            s("/status/failureReason").or_else(|| s("/status/deprecated/v1beta1/failureReason")),
            s("/status/failureMessage").or_else(|| s("/status/deprecated/v1beta1/failureMessage")),
        ) {
            (None, None) => None,
            (r, m) => Some(format!(
                "{}: {}",
                r.unwrap_or_default(),
                m.unwrap_or_default()
            )),
        };
        // A v1beta1 Machine carries its v1beta2 conditions under `status.v1beta2`; those win
        // by type (they are where providers report failures since Cluster API v1.9).
        let mut conditions = conditions_at(&obj.value, "/status/conditions");
        for c in conditions_at(&obj.value, "/status/v1beta2/conditions") {
            match conditions.iter_mut().find(|x| x.type_ == c.type_) {
                Some(x) => *x = c,
                None => conditions.push(c),
            }
        }
        let failure = failure.or_else(|| condition_failure(&conditions));
        let machine_set = obj
            .meta
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.kind == "MachineSet")
            .map(|r| r.name.clone())
            .or_else(|| labels.get(SET_NAME_LABEL).cloned());
        MachineRecord {
            machine_set,
            namespace: obj.namespace().to_string(),
            name: obj.name().to_string(),
            api_version: obj.api_version.clone(),
            deployment: labels.get(DEPLOYMENT_NAME_LABEL).cloned(),
            claimed: labels.contains_key(MEMBER_LABEL),
            marked_for_deletion: annotations.contains_key(DELETE_MACHINE_ANNOTATION),
            marked_by_us: annotations.contains_key(MARKED_FOR_ANNOTATION)
                || annotations
                    .get(DELETE_MACHINE_ANNOTATION)
                    .is_some_and(|v| OUR_MARK_REASONS.contains(&v.as_str())),
            labels,
            created: obj.meta.creation_timestamp.as_ref().map(|t| t.0),
            deleting: obj.meta.deletion_timestamp.is_some(),
            provider_id: s("/spec/providerID"),
            node_name: s("/status/nodeRef/name"),
            phase: s("/status/phase"),
            conditions,
            failure,
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `namespace/deployment` of its MachineDeployment, if labelled.
    pub(crate) fn deployment_key(&self) -> Option<String> {
        self.deployment
            .as_ref()
            .map(|d| format!("{}/{}", self.namespace, d))
    }

    /// Counts toward a MachineDeployment's live replicas (not being deleted or marked).
    pub(crate) fn is_live(&self) -> bool {
        !self.deleting && !self.marked_for_deletion
    }
}
