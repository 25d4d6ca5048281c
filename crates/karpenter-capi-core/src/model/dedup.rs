//! Every object read once: objects from several inputs keyed by API group, kind, namespace and
//! name, the same object given twice used once (with a note), two different objects with one key
//! an error naming both places. Pure: objects in, objects and notes out.
//!
//! The key leaves out the version on purpose: the API server stores one object per group, kind,
//! namespace and name and serves it in every version of its CRD, so a MachineDeployment dumped as
//! `cluster.x-k8s.io/v1beta1` and again as `v1beta2` is one MachineDeployment, not two.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde_json::Value;

use super::object::RawObject;
use crate::error::Error;

/// The objects to use, in input order, and one note per duplicate dropped.
#[derive(Debug, Default)]
pub(crate) struct Unique {
    /// Each object once.
    pub(crate) objects: Vec<RawObject>,
    /// `MachineDeployment capi/md-1 is given twice (a.yaml#1, b.yaml#2); used once`.
    pub(crate) notes: Vec<String>,
}

/// An object given again unchanged: its display name and the origins of both copies.
type Repeat = (String, String, String);

/// Drops repeated objects. Objects without a name (e.g. only `generateName`) are never merged:
/// the API server would give each its own name.
///
/// # Errors
/// Two objects with the same key whose contents differ (in the same version, or with different
/// uids): the error names both origins.
pub(crate) fn unique(objects: Vec<RawObject>) -> Result<Unique, Error> {
    let mut out = Unique::default();
    // Key -> index in `out.objects`.
    let mut seen: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    // Identical repeats per pair of inputs: a whole dump given twice is one note, not one per
    // object.
    let mut repeats: BTreeMap<(String, String), Vec<Repeat>> = BTreeMap::new();
    for obj in objects {
        let Some(name) = obj.meta.name.clone().filter(|n| !n.is_empty()) else {
            out.objects.push(obj);
            continue;
        };
        let key = (
            obj.group().to_string(),
            obj.kind.clone(),
            obj.namespace().to_string(),
            name,
        );
        match seen.entry(key) {
            Entry::Vacant(v) => {
                v.insert(out.objects.len());
                out.objects.push(obj);
            }
            Entry::Occupied(o) => {
                let kept = &mut out.objects[*o.get()];
                match compare(kept, &obj) {
                    Same::Identical => repeats
                        .entry((file_of(&kept.origin), file_of(&obj.origin)))
                        .or_default()
                        .push((kept.display(), kept.origin.clone(), obj.origin.clone())),
                    Same::OtherVersion => {
                        let (first, second) = (kept.api_version.clone(), obj.api_version.clone());
                        let (first_origin, second_origin) =
                            (kept.origin.clone(), obj.origin.clone());
                        if version_rank(obj.version()) > version_rank(kept.version()) {
                            *kept = obj;
                        }
                        out.notes.push(format!(
                            "{} is given as {first} ({first_origin}) and as {second} ({second_origin}): one object served in two versions; used once, as {}",
                            kept.display(),
                            kept.api_version
                        ));
                    }
                    Same::Conflict(why) => {
                        return Err(Error::Object {
                            origin: obj.origin.clone(),
                            object: obj.display(),
                            field: "metadata.name".to_string(),
                            problem: format!(
                                "{} has the same API group, kind, namespace and name but {why}; give each object once (remove one of the two)",
                                kept.origin
                            ),
                        });
                    }
                }
            }
        }
    }
    for ((first, second), objects) in repeats {
        out.notes.push(match objects.as_slice() {
            [(object, a, b)] => format!("{object} is given twice ({a}, {b}); used once"),
            many => {
                let names: Vec<&str> = many.iter().take(3).map(|o| o.0.as_str()).collect();
                let more = if many.len() > 3 {
                    format!(" and {} more", many.len() - 3)
                } else {
                    String::new()
                };
                let inputs = if first == second {
                    format!("twice in {first}")
                } else {
                    format!("in both {first} and {second}")
                };
                format!(
                    "{} objects are given {inputs}; each used once: {}{more}",
                    many.len(),
                    names.join(", ")
                )
            }
        });
    }
    Ok(out)
}

/// Lines (notes, warnings) each once, in first-seen order, a repeated one with its count
/// (`... (3 times)`): the same note about every copy of a repeated input reads once.
pub fn counted(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        let n = counts.entry(line.clone()).or_insert(0);
        if *n == 0 {
            order.push(line);
        }
        *n += 1;
    }
    order
        .into_iter()
        .map(|line| match counts.get(&line) {
            Some(&n) if n > 1 => format!("{line} ({n} times)"),
            _ => line,
        })
        .collect()
}

/// The input an object came from, without its document number (`a.yaml#3` -> `a.yaml`).
fn file_of(origin: &str) -> String {
    origin
        .rsplit_once('#')
        .map_or(origin, |(file, _)| file)
        .to_string()
}

enum Same {
    /// The same text (or the same uid and resourceVersion): a repeated input.
    Identical,
    /// The same stored object read in another version of its API.
    OtherVersion,
    /// Two different objects; says how they differ.
    Conflict(String),
}

fn compare(a: &RawObject, b: &RawObject) -> Same {
    let uid = |o: &RawObject| o.meta.uid.clone().filter(|u| !u.is_empty());
    let rv = |o: &RawObject| o.meta.resource_version.clone().filter(|u| !u.is_empty());
    if let (Some(x), Some(y)) = (uid(a), uid(b))
        && x != y
    {
        return Same::Conflict(format!("another uid ({y} here, {x} there)"));
    }
    if a.api_version != b.api_version {
        return Same::OtherVersion;
    }
    if a.value == b.value {
        return Same::Identical;
    }
    // Two reads of the same revision can differ only in fields the server fills per request
    // (managedFields order, a List's wrapper); the revision says they are one object.
    if let (Some(x), Some(y)) = (rv(a), rv(b))
        && x == y
        && uid(a).is_some()
        && uid(a) == uid(b)
    {
        return Same::Identical;
    }
    Same::Conflict(format!(
        "different contents ({})",
        first_difference(&a.value, &b.value)
    ))
}

/// The first field where two JSON values differ, as a dotted path (`spec.replicas`).
fn first_difference(a: &Value, b: &Value) -> String {
    fn walk(a: &Value, b: &Value, path: &mut Vec<String>) -> bool {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                for k in keys {
                    // Label and annotation keys hold dots: bracketed, as field paths print them.
                    path.push(if k.contains(['.', '/']) {
                        format!("[{k}]")
                    } else {
                        k.clone()
                    });
                    match (x.get(k), y.get(k)) {
                        (Some(p), Some(q)) if p == q => {}
                        (Some(p), Some(q)) => {
                            walk(p, q, path);
                            return true;
                        }
                        _ => return true,
                    }
                    path.pop();
                }
                false
            }
            (Value::Array(x), Value::Array(y)) => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    if p != q {
                        path.push(format!("[{i}]"));
                        walk(p, q, path);
                        return true;
                    }
                }
                x.len() != y.len()
            }
            _ => a != b,
        }
    }
    let mut path = Vec::new();
    walk(a, b, &mut path);
    let mut out = String::new();
    for part in path {
        if !out.is_empty() && !part.starts_with('[') {
            out.push('.');
        }
        out.push_str(&part);
    }
    if out.is_empty() {
        "the whole object".to_string()
    } else {
        out
    }
}

/// Kubernetes' version priority (GA over beta over alpha, then the higher number), as
/// apimachinery's `CompareKubeAwareVersionStrings` orders versions; anything else ranks lowest.
fn version_rank(version: &str) -> (u8, u32, u32) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u32>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    let minor = |t: &str| t.parse::<u32>().ok();
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(n) = tail.strip_prefix("beta").and_then(minor) {
        (2, major, n)
    } else if let Some(n) = tail.strip_prefix("alpha").and_then(minor) {
        (1, major, n)
    } else {
        (0, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use karpenter_capi_testkit::Edit;

    fn obj(text: &str, origin: &str) -> RawObject {
        let value: Value = serde_saphyr::from_str(text).unwrap();
        RawObject::from_value(value, origin).unwrap()
    }

    const MD1: &str = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: md, namespace: capi, uid: u1}\nspec: {replicas: 1}\n";
    const MD2: &str = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata: {name: md, namespace: capi, uid: u1}\nspec: {replicas: 1}\n";

    #[test]
    fn the_same_object_twice_is_used_once_with_a_note() {
        let u = unique(vec![obj(MD2, "a.yaml#1"), obj(MD2, "b.yaml#4")]).unwrap();
        assert_eq!(u.objects.len(), 1);
        assert_eq!(
            u.notes,
            vec!["MachineDeployment capi/md is given twice (a.yaml#1, b.yaml#4); used once"]
        );
    }

    #[test]
    fn repeated_lines_read_once_with_their_count() {
        let lines = ["b", "a", "b", "c", "b"].map(String::from);
        assert_eq!(counted(lines), ["b (3 times)", "a", "c"]);
    }

    #[test]
    fn a_dump_given_twice_is_one_note_with_a_count() {
        let objects: Vec<RawObject> = ["a.yaml", "b.yaml"]
            .iter()
            .flat_map(|file| {
                (0..5).map(move |i| {
                    obj(
                        &format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"),
                        &format!("{file}#{}", i + 1),
                    )
                })
            })
            .collect();
        let u = unique(objects).unwrap();
        assert_eq!(u.objects.len(), 5);
        assert_eq!(
            u.notes,
            vec![
                "5 objects are given in both a.yaml and b.yaml; each used once: Node n0, Node n1, Node n2 and 2 more"
            ]
        );
    }

    #[test]
    fn two_versions_of_one_object_are_one_object_in_the_newer_version() {
        let u = unique(vec![obj(MD2, "b.yaml#1"), obj(MD1, "a.yaml#1")]).unwrap();
        assert_eq!(u.objects.len(), 1);
        assert_eq!(u.objects[0].api_version, "cluster.x-k8s.io/v1beta2");
        let u = unique(vec![obj(MD1, "a.yaml#1"), obj(MD2, "b.yaml#1")]).unwrap();
        assert_eq!(u.objects[0].api_version, "cluster.x-k8s.io/v1beta2");
        assert_eq!(u.objects[0].origin, "b.yaml#1");
        assert_eq!(
            u.notes,
            vec![
                "MachineDeployment capi/md is given as cluster.x-k8s.io/v1beta1 (a.yaml#1) and as cluster.x-k8s.io/v1beta2 (b.yaml#1): one object served in two versions; used once, as cluster.x-k8s.io/v1beta2"
            ]
        );
    }

    #[test]
    fn different_objects_with_one_key_name_both_places() {
        let other = MD2.edit("replicas: 1", "replicas: 3");
        let err = unique(vec![obj(MD2, "a.yaml#1"), obj(&other, "b.yaml#2")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "b.yaml#2: MachineDeployment capi/md: metadata.name: a.yaml#1 has the same API group, kind, namespace and name but different contents (spec.replicas); give each object once (remove one of the two)"
        );
        let other_uid = MD1.edit("u1", "u2");
        let err = unique(vec![obj(MD2, "a.yaml#1"), obj(&other_uid, "b.yaml#2")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("another uid (u2 here, u1 there)"), "{err}");
    }

    #[test]
    fn other_kinds_groups_and_namespaces_are_other_objects() {
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: md, namespace: capi}\n";
        let elsewhere = MD2.edit("namespace: capi", "namespace: other");
        let u = unique(vec![
            obj(MD2, "a#1"),
            obj(cm, "a#2"),
            obj(&elsewhere, "a#3"),
        ])
        .unwrap();
        assert_eq!(u.objects.len(), 3);
        assert!(u.notes.is_empty());
    }

    #[test]
    fn versions_rank_as_kubernetes_orders_them() {
        assert!(version_rank("v1") > version_rank("v1beta2"));
        assert!(version_rank("v1beta2") > version_rank("v1beta1"));
        assert!(version_rank("v1beta1") > version_rank("v1alpha3"));
        assert!(version_rank("v2") > version_rank("v1"));
        assert!(version_rank("v1alpha1") > version_rank("foo"));
    }
}
