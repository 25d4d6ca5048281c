//! Shared test helpers for `init`: the seed's OVH inputs, and validation of generated documents
//! against the upstream CRD fixtures (CRD kinds) or k8s-openapi types (built-in kinds).
#![allow(dead_code)]

use std::path::PathBuf;

use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::render::Document;
use karpenter_capi::bundle::{FlavorSpec, SetupInput, flavor, infra};
use karpenter_capi::model::duration::NillableDuration;
use serde_json::Value;

/// The shared fixtures directory (`../shared/fixtures` from the crate root).
pub fn fixtures() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    assert!(
        dir.is_dir(),
        "this test reads {}: the project's shared fixtures (upstream CRDs, scenarios), kept in `shared/` \
         beside the repository, not inside it; run from a checkout that has ../shared (as CI lays it out)",
        dir.display()
    );
    dir
}

/// The seed's three OVH flavors, priced as in ../shared/fixtures/scenarios.
pub const OVH_FLAVORS: [&str; 3] = [
    "c3-4:cpu=2,memory=4G,price=0.05,zone=nova",
    "c3-8:cpu=4,memory=8G,price=0.1,zone=nova",
    "c3-16:cpu=8,memory=16G,price=0.2,zone=nova",
];

/// The `init` flags of the seed's OVH setup (without --capi-version).
pub fn ovh_args() -> Vec<String> {
    let mut args: Vec<String> = [
        "init",
        "-n",
        "capi-ovh",
        "--cluster-name",
        "capi-ovh",
        "--kubernetes-version",
        "v1.36.1",
        "--infrastructure-kind",
        "OpenStackMachineTemplate",
        "--machine-image",
        "ubuntu-2404-noble",
        "--image",
        "ghcr.io/example/kubectl-karpenter-capi:v0.1.0",
        "--yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for f in OVH_FLAVORS {
        args.push("--flavor".to_string());
        args.push(f.to_string());
    }
    args
}

/// A setup input for the given version, provider and flavors.
pub fn input(capi: CapiVersion, kind: &str, flavors: &[&str]) -> SetupInput {
    let infra = infra::find(kind).unwrap();
    SetupInput {
        cluster_name: "capi-ovh".to_string(),
        namespace: "capi-ovh".to_string(),
        kubernetes_version: "v1.36.1".to_string(),
        capi_version: capi,
        infra,
        flavors: flavors
            .iter()
            .map(|f| flavor::parse_flag(f).unwrap())
            .collect::<Vec<FlavorSpec>>(),
        node_taints: vec![],
        image: "ghcr.io/example/kubectl-karpenter-capi:v0.1.0".to_string(),
        expected_pods: 5_000,
        expected_nodes: 500,
        machine_image: Some("ubuntu-2404-noble".to_string()),
        clone_from: None,
        controller_namespace: "karpenter-capi".to_string(),
        consolidation_policy: "WhenEmptyOrUnderutilized".to_string(),
        consolidate_after: "30s".parse::<NillableDuration>().unwrap(),
        expire_after: "720h".parse::<NillableDuration>().unwrap(),
        separate_management: false,
        management_kubeconfig: None,
    }
}

/// Every CRD fixture, parsed.
pub fn crds() -> Vec<Value> {
    let dir = fixtures().join("crds");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push(serde_saphyr::from_str::<Value>(&text).unwrap());
        }
    }
    out
}

/// The `openAPIV3Schema` of `group`/`version` `kind`, if a fixture serves it.
pub fn crd_schema(crds: &[Value], api_version: &str, kind: &str) -> Option<Value> {
    let (group, version) = api_version.split_once('/')?;
    let crd = crds.iter().find(|c| {
        c.pointer("/spec/group").and_then(Value::as_str) == Some(group)
            && c.pointer("/spec/names/kind").and_then(Value::as_str) == Some(kind)
    })?;
    let versions = crd.pointer("/spec/versions")?.as_array()?;
    let v = versions
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))?;
    v.pointer("/schema/openAPIV3Schema").cloned()
}

/// Whether a fixture defines this kind at all (in any version).
pub fn has_crd(crds: &[Value], api_version: &str, kind: &str) -> bool {
    let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or("");
    crds.iter().any(|c| {
        c.pointer("/spec/group").and_then(Value::as_str) == Some(group)
            && c.pointer("/spec/names/kind").and_then(Value::as_str) == Some(kind)
    })
}

/// Turns a structural CRD schema into a strict JSON Schema: int-or-string becomes
/// `anyOf [integer, string]`, and every object with `properties` rejects unknown fields unless it
/// preserves them (`x-kubernetes-preserve-unknown-fields`) or says otherwise.
pub fn strictify(schema: &mut Value) {
    if let Value::Object(map) = schema {
        if map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            map.remove("type");
            if !map.contains_key("anyOf") {
                map.insert(
                    "anyOf".to_string(),
                    serde_json::json!([{"type": "integer"}, {"type": "string"}]),
                );
            }
        }
        let preserve = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        if map.contains_key("properties") && !map.contains_key("additionalProperties") && !preserve
        {
            map.insert("additionalProperties".to_string(), Value::Bool(false));
        }
        for (_, v) in map.iter_mut() {
            strictify(v);
        }
    } else if let Value::Array(items) = schema {
        for v in items {
            strictify(v);
        }
    }
}

/// Validates a CRD-backed document; returns the errors as text.
pub fn validate_crd(schema: &Value, doc: &Document) -> Vec<String> {
    let mut schema = schema.clone();
    strictify(&mut schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(&doc.value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<(), String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &back == value {
        Ok(())
    } else {
        Err(format!(
            "fields lost in a round trip through the k8s-openapi type (unknown or misplaced):\n  generated: {value}\n  typed:     {back}"
        ))
    }
}

/// Strictly deserializes a built-in document into its k8s-openapi type: deserialize, re-serialize,
/// compare, so unknown or misplaced fields fail. `None` when the kind is not a known built-in.
pub fn validate_builtin(doc: &Document) -> Option<Result<(), String>> {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Namespace, Secret, Service, ServiceAccount};
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    let v = &doc.value;
    Some(match (doc.api_version.as_str(), doc.kind.as_str()) {
        ("v1", "Namespace") => roundtrip::<Namespace>(v),
        ("v1", "ServiceAccount") => roundtrip::<ServiceAccount>(v),
        ("v1", "Secret") => roundtrip::<Secret>(v),
        ("rbac.authorization.k8s.io/v1", "Role") => roundtrip::<Role>(v),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => roundtrip::<RoleBinding>(v),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => roundtrip::<ClusterRole>(v),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            roundtrip::<ClusterRoleBinding>(v)
        }
        ("apps/v1", "Deployment") => roundtrip::<Deployment>(v),
        ("v1", "Service") => roundtrip::<Service>(v),
        ("policy/v1", "PodDisruptionBudget") => roundtrip::<PodDisruptionBudget>(v),
        _ => return None,
    })
}
