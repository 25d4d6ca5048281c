//! The fields each known kind has: for the Karpenter and Cluster API kinds a compact tree of field
//! names taken from their CRDs' OpenAPI schemas (generated into `known.json` from the CRD fixtures
//! by `tests/it/generated.rs`, so it cannot drift from them), for Kubernetes' own kinds the
//! k8s-openapi types themselves (see `core_kinds`).
//!
//! A tree is JSON: an object maps each field to the tree below it (`"*"` alone: a map whose keys
//! are free, each holding that tree), `true` is open (`x-kubernetes-preserve-unknown-fields`, or
//! an object with no properties), `0` a leaf. Lists are transparent: a list's tree is its items'.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The generated trees, one per `apiVersion/Kind` (every served version of every CRD fixture).
const KNOWN: &str = include_str!("known.json");

/// The tree of `apiVersion` + `kind`, if the kind's CRD is one we know.
pub fn tree(api_version: &str, kind: &str) -> Option<&'static Value> {
    static TREES: OnceLock<Map<String, Value>> = OnceLock::new();
    TREES
        .get_or_init(|| serde_json::from_str(KNOWN).unwrap_or_default())
        .get(&format!("{api_version}/{kind}"))
}

/// The trees of one CustomResourceDefinition, keyed `group/version/Kind`, for every served
/// version (what `known.json` holds, one line per key).
pub fn trees_of_crd(crd: &Value) -> Vec<(String, Value)> {
    let spec = &crd["spec"];
    let (Some(group), Some(kind)) = (spec["group"].as_str(), spec["names"]["kind"].as_str()) else {
        return Vec::new();
    };
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .filter_map(|v| {
            let name = v["name"].as_str()?;
            let schema = v["schema"].get("openAPIV3Schema")?;
            Some((format!("{group}/{name}/{kind}"), tree_of(schema)))
        })
        .collect()
}

/// The tree of one structural schema node.
fn tree_of(schema: &Value) -> Value {
    if schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true) {
        return Value::Bool(true);
    }
    if schema["x-kubernetes-int-or-string"].as_bool() == Some(true) {
        return Value::from(0);
    }
    match schema["type"].as_str() {
        Some("array") => schema.get("items").map_or(Value::Bool(true), tree_of),
        Some("object") => {
            if let Some(props) = schema["properties"].as_object() {
                Value::Object(props.iter().map(|(k, s)| (k.clone(), tree_of(s))).collect())
            } else {
                match schema.get("additionalProperties") {
                    Some(Value::Object(items)) => {
                        let mut m = Map::new();
                        m.insert("*".to_string(), tree_of(&Value::Object(items.clone())));
                        Value::Object(m)
                    }
                    // No properties: nothing to check against (an embedded resource, a free map).
                    _ => Value::Bool(true),
                }
            }
        }
        _ => Value::from(0),
    }
}

/// `known.json`'s text for these CRDs: one `"apiVersion/Kind": tree` line per served version,
/// sorted, so a regenerated file diffs by kind.
pub fn known_json(crds: &[Value]) -> String {
    let mut all: Vec<(String, Value)> = crds.iter().flat_map(trees_of_crd).collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let lines: Vec<String> = all
        .iter()
        .map(|(k, t)| format!("{}: {}", Value::String(k.clone()), t))
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crd_schema_becomes_a_tree_of_field_names() {
        let crd = serde_json::json!({"spec": {"group": "g.io", "names": {"kind": "K"}, "versions": [
            {"name": "v1", "served": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "port": {"x-kubernetes-int-or-string": true},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "bare": {"type": "object"}
                }}}}}},
            {"name": "v0", "served": false, "schema": {"openAPIV3Schema": {"type": "object"}}}
        ]}});
        let trees = trees_of_crd(&crd);
        assert_eq!(trees.len(), 1);
        assert_eq!(trees[0].0, "g.io/v1/K");
        assert_eq!(
            trees[0].1,
            serde_json::json!({"spec": {"replicas": 0, "port": 0, "items": {"a": 0},
                "labels": {"*": 0}, "free": true, "bare": true}})
        );
    }
}
