//! Unknown fields found with their lines, for CRD kinds, built-in kinds, lists and metadata.

use super::*;

fn found(text: &str) -> Vec<(String, usize)> {
    unknown_fields(&Source {
        name: "t.yaml".to_string(),
        text: text.to_string(),
    })
    .into_iter()
    .map(|u| {
        assert_eq!(u.file, "t.yaml");
        (u.path, u.line)
    })
    .collect()
}

#[test]
fn a_misspelt_pod_field_is_named_with_its_line() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  lables: {a: b}\nspec:\n  containers:\n  - name: c\n    image: x\n    imagePullPolic: Always\n    resources:\n      requests: {cpu: 1}\n  nodeSelectr: {}\n";
    assert_eq!(
        found(text),
        vec![
            ("metadata.lables".to_string(), 5),
            ("spec.containers[0].imagePullPolic".to_string(), 10),
            ("spec.nodeSelectr".to_string(), 13),
        ]
    );
}

#[test]
fn a_list_is_judged_item_by_item_across_documents() {
    let text = "apiVersion: v1\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec:\n    replica: 5\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n}\nkind: List\n---\napiVersion: v1\nkind: Node\nmetadata: {name: m}\nspec:\n  unschedulable: true\n  taint: []\n";
    assert_eq!(
        found(text),
        vec![
            ("spec.replica".to_string(), 7),
            ("spec.taint".to_string(), 18)
        ]
    );
}

#[test]
fn kinds_without_a_schema_and_clean_objects_yield_nothing() {
    assert!(found("apiVersion: example.com/v1\nkind: Gadget\nspec: {whatever: 1}\n").is_empty());
    assert!(
        found("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n  containers: [{name: c, image: x}]\n").is_empty()
    );
    // Status is the server's: a newer server's status fields are no typo.
    assert!(
        found(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  declaredFeatures: [x]\n"
        )
        .is_empty()
    );
    // Not YAML: left to the loader.
    assert!(found("a: [\n").is_empty());
}

#[test]
fn json_input_is_judged_too() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"p\"},\n \"spec\": {\"containers\": [], \"bogus\": 1}}\n";
    assert_eq!(found(text), vec![("spec.bogus".to_string(), 3)]);
}
