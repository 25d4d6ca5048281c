//! The pure part of the read-modify-write writes: the merge patch that turns the object as read
//! into the object as wanted (Node edits, status conditions), or nothing when it already is.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::controller::write::ConditionUpdate;
use crate::model::taints::Taint;

/// The changes of an `EditNode` write.
pub(crate) struct NodeEdit<'a> {
    pub(crate) add_labels: &'a BTreeMap<String, String>,
    pub(crate) add_taints: &'a [Taint],
    pub(crate) remove_taint_keys: &'a [String],
    pub(crate) add_finalizers: &'a [String],
    pub(crate) remove_finalizers: &'a [String],
    pub(crate) add_owner_references: &'a [Value],
}

impl NodeEdit<'_> {
    /// The merge patch turning `node` into the edited node, or None when it already is.
    pub(crate) fn patch(&self, node: &Value) -> Option<Value> {
        let mut meta = Map::new();
        let labels = node.pointer("/metadata/labels").and_then(Value::as_object);
        let changed_labels: Map<String, Value> = self
            .add_labels
            .iter()
            .filter(|(k, v)| {
                labels.and_then(|l| l.get(*k)).and_then(Value::as_str) != Some(v.as_str())
            })
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        if !changed_labels.is_empty() {
            meta.insert("labels".to_string(), Value::Object(changed_labels));
        }

        let list = |pointer: &str| {
            node.pointer(pointer)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        if let Some(new_finalizers) =
            edited_finalizers(node, self.add_finalizers, self.remove_finalizers)
        {
            meta.insert("finalizers".to_string(), Value::Array(new_finalizers));
        }

        let owners = list("/metadata/ownerReferences");
        let mut new_owners = owners.clone();
        for o in self.add_owner_references {
            let same = |x: &Value| match (o.get("uid"), x.get("uid")) {
                (Some(a), Some(b)) => a == b,
                _ => x.get("kind") == o.get("kind") && x.get("name") == o.get("name"),
            };
            if !new_owners.iter().any(same) {
                new_owners.push(o.clone());
            }
        }
        if new_owners != owners {
            meta.insert("ownerReferences".to_string(), Value::Array(new_owners));
        }

        let taints = list("/spec/taints");
        let key_of = |t: &Value| {
            t.get("key")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let effect_of = |t: &Value| {
            t.get("effect")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let mut new_taints: Vec<Value> = taints
            .iter()
            .filter(|t| !self.remove_taint_keys.contains(&key_of(t)))
            .cloned()
            .collect();
        for t in self.add_taints {
            let wanted = taint_json(t);
            // A taint is identified by key and effect; a different value is replaced.
            match new_taints
                .iter_mut()
                .find(|x| key_of(x) == t.key && effect_of(x) == t.effect.to_string())
            {
                Some(x) if x.get("value").and_then(Value::as_str).unwrap_or("") == t.value => {}
                Some(x) => *x = wanted,
                None => new_taints.push(wanted),
            }
        }
        let mut patch = Map::new();
        if new_taints != taints {
            patch.insert("spec".to_string(), json!({ "taints": new_taints }));
        }
        if !meta.is_empty() {
            patch.insert("metadata".to_string(), Value::Object(meta));
        }
        (!patch.is_empty()).then_some(Value::Object(patch))
    }
}

/// The finalizer list of `obj` as read, with `remove` taken out and `add` appended when missing;
/// every other entry kept in place. None when the list already is so.
fn edited_finalizers(obj: &Value, add: &[String], remove: &[String]) -> Option<Vec<Value>> {
    let finalizers = obj
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut edited: Vec<Value> = finalizers
        .iter()
        .filter(|f| !f.as_str().is_some_and(|f| remove.iter().any(|r| r == f)))
        .cloned()
        .collect();
    for f in add {
        if !edited.iter().any(|x| x.as_str() == Some(f)) {
            edited.push(json!(f));
        }
    }
    (edited != finalizers).then_some(edited)
}

/// The merge patch of an `EditFinalizers` write: the whole list (a merge patch replaces
/// arrays), so it must go with the resourceVersion it was computed from. None: nothing to do.
pub(crate) fn finalizers_patch(obj: &Value, add: &[String], remove: &[String]) -> Option<Value> {
    edited_finalizers(obj, add, remove).map(|f| json!({"metadata": {"finalizers": f}}))
}

fn taint_json(t: &Taint) -> Value {
    let mut m = Map::new();
    m.insert("key".to_string(), json!(t.key));
    if !t.value.is_empty() {
        m.insert("value".to_string(), json!(t.value));
    }
    m.insert("effect".to_string(), json!(t.effect.to_string()));
    Value::Object(m)
}

/// The status merge patch setting `fields` and merging `conditions` by type: a condition whose
/// status is unchanged keeps its lastTransitionTime; a new or changed one gets `now`. None when
/// the status already says all of it.
pub(crate) fn status_patch(
    obj: &Value,
    fields: &Map<String, Value>,
    conditions: &[ConditionUpdate],
    now: Timestamp,
) -> Option<Value> {
    let status = obj
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut new_status = status.clone();
    for (k, v) in fields {
        new_status.insert(k.clone(), v.clone());
    }
    if !conditions.is_empty() {
        let generation = obj.pointer("/metadata/generation").cloned();
        let mut list = status
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for c in conditions {
            let existing = list
                .iter_mut()
                .find(|x| x.get("type").and_then(Value::as_str) == Some(c.type_.as_str()));
            let same_status = existing.as_ref().is_some_and(|x| {
                x.get("status").and_then(Value::as_str) == Some(c.status.as_str())
            });
            let transition = match &existing {
                Some(x) if same_status => x
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or_else(|| json!(stamp(now))),
                _ => json!(stamp(now)),
            };
            let mut cond = json!({
                "type": c.type_,
                "status": c.status,
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": transition,
            });
            if let Some(g) = &generation {
                cond["observedGeneration"] = g.clone();
            }
            match existing {
                Some(x) => *x = cond,
                None => list.push(cond),
            }
        }
        new_status.insert("conditions".to_string(), Value::Array(list));
    }
    (new_status != status).then(|| json!({ "status": new_status }))
}

/// RFC 3339 in whole seconds, as Kubernetes writes `metav1.Time`.
fn stamp(now: Timestamp) -> String {
    now.round(jiff::Unit::Second).unwrap_or(now).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(type_: &str, status: &str) -> ConditionUpdate {
        ConditionUpdate {
            type_: type_.into(),
            status: status.into(),
            reason: type_.into(),
            message: String::new(),
        }
    }

    #[test]
    fn unchanged_condition_keeps_its_transition_time() {
        let obj = json!({"metadata": {"generation": 2}, "status": {"conditions": [
            {"type": "Launched", "status": "True", "reason": "Launched", "message": "", "lastTransitionTime": "2026-11-30T10:00:00Z", "observedGeneration": 2}
        ]}});
        let now: Timestamp = "2026-11-30T11:00:00Z".parse().unwrap();
        assert_eq!(
            status_patch(&obj, &Map::new(), &[cond("Launched", "True")], now),
            None,
            "nothing to change"
        );
        let p = status_patch(
            &obj,
            &Map::new(),
            &[cond("Launched", "True"), cond("Registered", "True")],
            now,
        )
        .unwrap();
        assert_eq!(
            p["status"]["conditions"][0]["lastTransitionTime"],
            "2026-11-30T10:00:00Z"
        );
        assert_eq!(
            p["status"]["conditions"][1]["lastTransitionTime"],
            "2026-11-30T11:00:00Z"
        );
        assert_eq!(p["status"]["conditions"][1]["observedGeneration"], 2);
        let p = status_patch(&obj, &Map::new(), &[cond("Launched", "False")], now).unwrap();
        assert_eq!(
            p["status"]["conditions"][0]["lastTransitionTime"],
            "2026-11-30T11:00:00Z"
        );
    }

    #[test]
    fn finalizer_edits_keep_every_other_finalizer_in_place() {
        let ours = vec!["karpenter.sh/termination".to_string()];
        let obj = json!({"metadata": {"finalizers": ["a.example/x", "karpenter.sh/termination", "b.example/y"]}});
        assert_eq!(
            finalizers_patch(&obj, &[], &ours),
            Some(json!({"metadata": {"finalizers": ["a.example/x", "b.example/y"]}}))
        );
        assert_eq!(finalizers_patch(&obj, &ours, &[]), None, "already there");
        let without = json!({"metadata": {"finalizers": ["a.example/x"]}});
        assert_eq!(
            finalizers_patch(&without, &ours, &[]),
            Some(json!({"metadata": {"finalizers": ["a.example/x", "karpenter.sh/termination"]}}))
        );
        assert_eq!(finalizers_patch(&without, &[], &ours), None, "not there");
        assert_eq!(
            finalizers_patch(&json!({"metadata": {}}), &ours, &[]),
            Some(json!({"metadata": {"finalizers": ["karpenter.sh/termination"]}}))
        );
    }

    /// Core `nodeclaim/lifecycle/registration.go` (L-REG-004): registering a Node that already
    /// carries the claim's owner reference adds no second one; another owner is kept beside it.
    #[test]
    fn node_edit_adds_an_owner_reference_once() {
        let owner = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x", "uid": "u-1", "blockOwnerDeletion": true});
        let owners = [owner.clone()];
        let edit = NodeEdit {
            add_labels: &BTreeMap::new(),
            add_taints: &[],
            remove_taint_keys: &[],
            add_finalizers: &[],
            remove_finalizers: &[],
            add_owner_references: &owners,
        };
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u-9"});
        let bare = json!({"metadata": {"name": "n", "ownerReferences": [other.clone()]}});
        assert_eq!(
            edit.patch(&bare),
            Some(json!({"metadata": {"ownerReferences": [other.clone(), owner.clone()]}}))
        );
        // Already owned (the same UID, whatever else the stored reference says): nothing.
        let owned = json!({"metadata": {"name": "n", "ownerReferences": [other,
            {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x", "uid": "u-1"}]}});
        assert_eq!(edit.patch(&owned), None);
        // The claim recreated under the same name (a new UID) is a new owner.
        let stale = json!({"metadata": {"name": "n", "ownerReferences": [
            {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x", "uid": "u-0"}]}});
        assert_eq!(
            edit.patch(&stale).unwrap()["metadata"]["ownerReferences"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn node_edit_replaces_taint_value_and_skips_when_done() {
        let labels: BTreeMap<String, String> =
            [("karpenter.sh/registered".to_string(), "true".to_string())].into();
        let taints = vec![Taint::parse("dedicated=gpu:NoSchedule").unwrap()];
        let remove = vec!["karpenter.sh/unregistered".to_string()];
        let fins = vec!["karpenter.sh/termination".to_string()];
        let edit = NodeEdit {
            add_labels: &labels,
            add_taints: &taints,
            remove_taint_keys: &remove,
            add_finalizers: &fins,
            remove_finalizers: &[],
            add_owner_references: &[],
        };
        let node = json!({"metadata": {"name": "n"}, "spec": {"taints": [
            {"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
            {"key": "dedicated", "value": "cpu", "effect": "NoSchedule"}
        ]}});
        let p = edit.patch(&node).unwrap();
        assert_eq!(
            p,
            json!({"metadata": {"labels": {"karpenter.sh/registered": "true"}, "finalizers": ["karpenter.sh/termination"]},
                   "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}})
        );
        let done = json!({"metadata": {"name": "n", "labels": {"karpenter.sh/registered": "true"}, "finalizers": ["karpenter.sh/termination"]},
                          "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}});
        assert_eq!(edit.patch(&done), None);
    }
}
