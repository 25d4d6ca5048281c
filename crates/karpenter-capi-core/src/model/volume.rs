//! PersistentVolumeClaims, PersistentVolumes and StorageClasses, as far as they restrict where a
//! pod can run: a claim bound to a volume with node affinity pins the pod to that volume's
//! zone(s); an unbound claim whose StorageClass has `allowedTopologies` restricts it to those.
//! Mirrors Karpenter's `provisioning/scheduling/volumetopology.go`.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use serde::Serialize;

use super::constraints::{VolumeProblem, VolumeRequirement};
use super::labels::{Operator, Requirement, normalized_key};
use super::object::RawObject;
use super::pod::term_expressions;
use super::snapshot::Snapshot;
use crate::error::Error;
use crate::vocab::keys;

/// A PersistentVolumeClaim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    /// Namespace.
    pub(crate) namespace: String,
    /// Name.
    pub(crate) name: String,
    /// `spec.volumeName`: the volume it is bound to.
    pub(crate) volume_name: Option<String>,
    /// `spec.storageClassName`.
    pub(crate) storage_class: Option<String>,
    /// Being deleted (`metadata.deletionTimestamp`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) deleting: bool,
    /// `status.phase` is `Lost`: its volume is gone.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) lost: bool,
    /// Carries the binder's `pv.kubernetes.io/bind-completed` annotation.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) bind_completed: bool,
}

/// Where a PersistentVolume or StorageClass lets pods run: alternatives (ORed) of
/// requirements (ANDed); empty when it does not restrict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopologyRecord {
    /// Name.
    pub(crate) name: String,
    /// Alternatives.
    pub(crate) alternatives: Vec<Vec<Requirement>>,
    /// A PersistentVolume being deleted (`metadata.deletionTimestamp`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) deleting: bool,
    /// A StorageClass whose `volumeBindingMode` is `Immediate`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) immediate: bool,
}

/// Reads a PersistentVolumeClaim.
pub(crate) fn claim_record(obj: &RawObject) -> Result<ClaimRecord, Error> {
    let pvc: PersistentVolumeClaim = serde::Deserialize::deserialize(&obj.value)
        .map_err(|e| obj.error("spec", e.to_string()))?;
    let spec = pvc.spec.unwrap_or_default();
    Ok(ClaimRecord {
        namespace: obj.namespace().to_string(),
        name: obj.name().to_string(),
        volume_name: spec.volume_name.filter(|v| !v.is_empty()),
        storage_class: spec.storage_class_name.filter(|v| !v.is_empty()),
        deleting: obj.meta.deletion_timestamp.is_some(),
        lost: pvc
            .status
            .and_then(|s| s.phase)
            .is_some_and(|p| p == "Lost"),
        bind_completed: obj
            .meta
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(keys::BIND_COMPLETED_ANNOTATION)),
    })
}

/// Reads a PersistentVolume's `spec.nodeAffinity.required`. For local and hostPath volumes the
/// hostname requirement is dropped, as Karpenter does: the node it names may be replaced.
pub(crate) fn volume_record(obj: &RawObject) -> Result<TopologyRecord, Error> {
    let pv: PersistentVolume = serde::Deserialize::deserialize(&obj.value)
        .map_err(|e| obj.error("spec", e.to_string()))?;
    let spec = pv.spec.unwrap_or_default();
    let node_local = spec.local.is_some() || spec.host_path.is_some();
    let mut alternatives = Vec::new();
    let terms = spec
        .node_affinity
        .and_then(|a| a.required)
        .map(|r| r.node_selector_terms)
        .unwrap_or_default();
    for (i, term) in terms.iter().enumerate() {
        let field = format!("spec.nodeAffinity.required.nodeSelectorTerms[{i}]");
        // Only the matchExpressions: a volume's matchFields could name only an existing node
        // (metadata.name), and are not read.
        let mut reqs = term_expressions(term, &field).map_err(|(f, e)| obj.error(f, e))?;
        let had = !reqs.is_empty();
        if node_local {
            reqs.retain(|r| r.key != keys::HOSTNAME);
        }
        if !reqs.is_empty() || (had && node_local) {
            alternatives.push(reqs);
        }
    }
    // An alternative with no requirement left means "anywhere".
    if alternatives.iter().any(Vec::is_empty) {
        alternatives.clear();
    }
    Ok(TopologyRecord {
        name: obj.name().to_string(),
        alternatives,
        deleting: obj.meta.deletion_timestamp.is_some(),
        immediate: false,
    })
}

/// Reads a StorageClass's `allowedTopologies` (each term's expressions are `In`).
pub(crate) fn storage_class_record(obj: &RawObject) -> Result<TopologyRecord, Error> {
    let sc: StorageClass = serde::Deserialize::deserialize(&obj.value)
        .map_err(|e| obj.error("spec", e.to_string()))?;
    let alternatives = sc
        .allowed_topologies
        .iter()
        .flatten()
        .map(|t| {
            t.match_label_expressions
                .iter()
                .flatten()
                .map(|e| Requirement {
                    key: normalized_key(&e.key).to_string(),
                    operator: Operator::In,
                    values: e.values.clone(),
                })
                .collect::<Vec<_>>()
        })
        .filter(|reqs| !reqs.is_empty())
        .collect();
    Ok(TopologyRecord {
        name: obj.name().to_string(),
        alternatives,
        deleting: false,
        immediate: sc.volume_binding_mode.as_deref() == Some("Immediate"),
    })
}

/// Why a pending pod's claim keeps it from being provisioned for at all, if it does: the claim
/// or its volume is being deleted, the claim is Lost, it names a volume but is not bound to it
/// yet, or it is unbound with no StorageClass or with an Immediate one (which should have bound
/// it already). Mirrors core `scheduling/volumetopology.go` `ValidatePersistentVolumeClaims`
/// (itself after kube-scheduler's volume binding). A volume or class missing from the input is
/// not a problem here: [`resolve`] warns about it and leaves the pod unpinned.
fn unusable(snapshot: &Snapshot, claim: &ClaimRecord) -> Option<VolumeProblem> {
    if claim.deleting {
        return Some(VolumeProblem::ClaimDeleting);
    }
    if claim.lost {
        return Some(VolumeProblem::ClaimLost);
    }
    match (&claim.volume_name, &claim.storage_class) {
        (Some(v), _) => {
            let volume = snapshot.volumes.iter().find(|r| &r.name == v)?;
            if volume.deleting {
                Some(VolumeProblem::VolumeDeleting)
            } else if !claim.bind_completed {
                Some(VolumeProblem::NotBindCompleted)
            } else {
                None
            }
        }
        (None, None) => Some(VolumeProblem::NoStorageClass),
        (None, Some(sc)) => snapshot
            .storage_classes
            .iter()
            .find(|r| &r.name == sc)
            .filter(|r| r.immediate)
            .map(|_| VolumeProblem::ImmediateUnbound),
    }
}

/// Fills in every pod's volume requirements from the claims, volumes and StorageClasses of the
/// snapshot. A claim, volume or class missing from the input leaves the pod unrestricted by it,
/// with one warning for all pending pods so affected.
pub(crate) fn resolve(snapshot: &mut Snapshot) {
    let mut missing: Vec<String> = Vec::new();
    for pi in 0..snapshot.pods.len() {
        if snapshot.pods[pi].demand.claims.is_empty() {
            continue;
        }
        let pending = snapshot.pods[pi].is_pending();
        let namespace = snapshot.pods[pi].demand.namespace.clone();
        let mut reqs = Vec::new();
        for c in &snapshot.pods[pi].demand.claims {
            let found = snapshot
                .volume_claims
                .iter()
                .find(|r| r.namespace == namespace && r.name == c.name);
            if let Some(problem) = found
                .filter(|_| pending)
                .and_then(|r| unusable(snapshot, r))
            {
                reqs.push(VolumeRequirement {
                    claim: c.name.clone(),
                    source: format!("PersistentVolumeClaim {namespace}/{}", c.name),
                    alternatives: Vec::new(),
                    problem: Some(problem),
                });
                continue;
            }
            let (source, record) = match found {
                Some(ClaimRecord {
                    volume_name: Some(v),
                    ..
                }) => (
                    format!("PersistentVolume {v}"),
                    snapshot.volumes.iter().find(|r| &r.name == v),
                ),
                Some(ClaimRecord {
                    storage_class: Some(sc),
                    ..
                }) => (
                    format!("StorageClass {sc}"),
                    snapshot.storage_classes.iter().find(|r| &r.name == sc),
                ),
                Some(_) => continue,
                None => match &c.storage_class {
                    Some(sc) => (
                        format!("StorageClass {sc}"),
                        snapshot.storage_classes.iter().find(|r| &r.name == sc),
                    ),
                    None => {
                        if pending {
                            missing.push(format!("PersistentVolumeClaim {namespace}/{}", c.name));
                        }
                        continue;
                    }
                },
            };
            match record {
                Some(r) if !r.alternatives.is_empty() => reqs.push(VolumeRequirement {
                    claim: c.name.clone(),
                    source,
                    alternatives: r.alternatives.clone(),
                    problem: None,
                }),
                Some(_) => {}
                None => {
                    if pending {
                        missing.push(source);
                    }
                }
            }
        }
        std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut snapshot.pods[pi]).demand)
            .volume_requirements = reqs;
    }
    if !missing.is_empty() {
        missing.sort();
        missing.dedup();
        snapshot.warnings.push(format!(
            "{} object(s) that pending pods' volumes use are not in the input ({}{}): those volumes \
             are planned as if they allowed any zone",
            missing.len(),
            missing[..missing.len().min(3)].join(", "),
            if missing.len() > 3 { ", ..." } else { "" }
        ));
    }
}
