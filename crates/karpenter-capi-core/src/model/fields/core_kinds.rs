//! Kubernetes' own kinds judged by the k8s-openapi types themselves: deserialized through
//! `serde_ignored`, every field a type skips is one the API server does not know (kubectl's
//! schema for these kinds is the same OpenAPI document the types are generated from).

use k8s_openapi::api::{apps, batch, coordination, core, policy, rbac, scheduling, storage};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::Seg;

/// Notes the unknown fields of `value`, an object of `apiVersion` + `kind`, into `found`;
/// false if the kind is none of the built-in kinds judged here.
pub(super) fn judge(
    api_version: &str,
    kind: &str,
    value: &Value,
    found: &mut Vec<Vec<Seg>>,
) -> bool {
    macro_rules! kinds {
        ($($api:literal, $kind:literal => $ty:ty;)*) => {
            match (api_version, kind) {
                $(($api, $kind) => check::<$ty>(value, &[], found),)*
                _ => return false,
            }
        };
    }
    kinds! {
        "v1", "Pod" => core::v1::Pod;
        "v1", "Node" => core::v1::Node;
        "v1", "Namespace" => core::v1::Namespace;
        "v1", "ConfigMap" => core::v1::ConfigMap;
        "v1", "Secret" => core::v1::Secret;
        "v1", "Service" => core::v1::Service;
        "v1", "ServiceAccount" => core::v1::ServiceAccount;
        "v1", "PersistentVolume" => core::v1::PersistentVolume;
        "v1", "PersistentVolumeClaim" => core::v1::PersistentVolumeClaim;
        "apps/v1", "Deployment" => apps::v1::Deployment;
        "apps/v1", "ReplicaSet" => apps::v1::ReplicaSet;
        "apps/v1", "StatefulSet" => apps::v1::StatefulSet;
        "apps/v1", "DaemonSet" => apps::v1::DaemonSet;
        "batch/v1", "Job" => batch::v1::Job;
        "batch/v1", "CronJob" => batch::v1::CronJob;
        "policy/v1", "PodDisruptionBudget" => policy::v1::PodDisruptionBudget;
        "scheduling.k8s.io/v1", "PriorityClass" => scheduling::v1::PriorityClass;
        "storage.k8s.io/v1", "StorageClass" => storage::v1::StorageClass;
        "storage.k8s.io/v1", "CSINode" => storage::v1::CSINode;
        "coordination.k8s.io/v1", "Lease" => coordination::v1::Lease;
        "rbac.authorization.k8s.io/v1", "ClusterRole" => rbac::v1::ClusterRole;
        "rbac.authorization.k8s.io/v1", "ClusterRoleBinding" => rbac::v1::ClusterRoleBinding;
        "rbac.authorization.k8s.io/v1", "Role" => rbac::v1::Role;
        "rbac.authorization.k8s.io/v1", "RoleBinding" => rbac::v1::RoleBinding;
    }
    true
}

/// Notes the unknown fields of an object's `metadata` (at `path`).
pub(super) fn judge_metadata(value: &Value, path: &[Seg], found: &mut Vec<Vec<Seg>>) {
    check::<ObjectMeta>(value, path, found);
}

/// Deserializes `value` as `T`, noting each field `T` skips below `path`. A value of the wrong
/// type stops the check there (the loader reports it); what was found before it stays.
fn check<T: serde::de::DeserializeOwned>(value: &Value, path: &[Seg], found: &mut Vec<Vec<Seg>>) {
    let _: Result<T, _> = serde_ignored::deserialize(value, |p| {
        let mut full = path.to_vec();
        segments(&p, &mut full);
        found.push(full);
    });
}

/// `serde_ignored`'s path as our segments (options and newtypes are no step of their own).
fn segments(p: &serde_ignored::Path, out: &mut Vec<Seg>) {
    use serde_ignored::Path;
    match p {
        Path::Root => {}
        Path::Seq { parent, index } => {
            segments(parent, out);
            out.push(Seg::Index(*index));
        }
        Path::Map { parent, key } => {
            segments(parent, out);
            out.push(Seg::Key(key.clone()));
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent, out),
    }
}
