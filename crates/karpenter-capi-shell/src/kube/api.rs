//! Dynamic API handles for the resource types the shell lists and writes: every call goes
//! through an `Api<DynamicObject>` built from a [`ResourceType`], so unknown fields of newer API
//! versions survive a read-modify-write untouched.

use crate::vocab::kinds;
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

use crate::error::ClusterRole;
use crate::vocab::kinds::ResourceType;

/// The kube-rs description of a resource type.
pub fn api_resource(rt: &ResourceType) -> ApiResource {
    ApiResource {
        group: rt.group.to_string(),
        version: rt.version.to_string(),
        api_version: rt.api_version(),
        kind: rt.kind.to_string(),
        plural: rt.plural.to_string(),
    }
}

/// A dynamic API handle: namespaced when the type is namespaced and `namespace` is not empty,
/// else across the cluster.
pub fn dynamic_api(
    client: &kube::Client,
    rt: &ResourceType,
    namespace: &str,
) -> Api<DynamicObject> {
    let ar = api_resource(rt);
    if rt.namespaced && !namespace.is_empty() {
        Api::namespaced_with(client.clone(), namespace, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

/// The RBAC-style name of a resource: `pods`, `machinedeployments.cluster.x-k8s.io`.
pub fn resource_name(rt: &ResourceType) -> String {
    if rt.group.is_empty() {
        rt.plural.to_string()
    } else {
        format!("{}.{}", rt.plural, rt.group)
    }
}

/// `namespace/name` or `name`, for messages.
pub fn object_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// An object as plain JSON with `apiVersion` and `kind` set (list items of built-in types
/// come without them).
pub fn to_value(mut obj: DynamicObject, rt: &ResourceType) -> Value {
    if obj.types.is_none() {
        obj.types = Some(kube::api::TypeMeta {
            api_version: rt.api_version(),
            kind: rt.kind.to_string(),
        });
    }
    serde_json::to_value(obj).unwrap_or(Value::Null)
}

/// Like [`to_value`] for a borrowed object (a reflector store's), without copying it first.
pub fn value_of(obj: &DynamicObject, rt: &ResourceType) -> Value {
    let mut v = serde_json::to_value(obj).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.entry("apiVersion")
            .or_insert_with(|| Value::String(rt.api_version()));
        m.entry("kind")
            .or_insert_with(|| Value::String(rt.kind.to_string()));
    }
    v
}

/// Which cluster a resource type is read from.
pub fn cluster_of(rt: &ResourceType) -> ClusterRole {
    if rt.group.ends_with("cluster.x-k8s.io") && rt.group != kinds::NODE_CLASS.group {
        ClusterRole::Management
    } else {
        ClusterRole::Workload
    }
}
