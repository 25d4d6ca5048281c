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

#[test]
fn every_document_of_a_large_file_is_judged_and_a_broken_one_silences_no_other() {
    // More than the YAML reader's default of 1,024 documents per stream: each is read apart.
    let mut text = String::new();
    for i in 0..1_500 {
        text.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n---\n"
        ));
    }
    text.push_str("apiVersion: v1\nkind: Node\nmetadata: {name: last}\nspec: {taint: []}\n");
    assert_eq!(found(&text), vec![("spec.taint".to_string(), 6_004)]);
    // A document that does not parse (the loader reports it) leaves the others judged.
    let text = "apiVersion: v1\nkind: Node\nspec: {taint: []}\n---\nkind: [\n---\napiVersion: v1\nkind: Node\nspec: {taints: [], podCDIR: x}\n";
    assert_eq!(
        found(text),
        vec![
            ("spec.taint".to_string(), 3),
            ("spec.podCDIR".to_string(), 9)
        ]
    );
    assert_eq!(
        found(&text.replace("podCDIR", "podCIDR")),
        vec![("spec.taint".to_string(), 3)]
    );
}

#[test]
fn a_kubectl_list_judged_item_by_item_on_every_core_gives_the_lines_read_whole() {
    let mut text = "apiVersion: v1\nitems:\n".to_string();
    for i in 0..300 {
        let typo = if i % 7 == 3 { "    nodeNme: x\n" } else { "" };
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p{i}\n  spec:\n    containers:\n    - name: c\n{typo}# between items\n\n"
        ));
    }
    text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    assert!(list_items(&text).is_some());
    let got = found(&text);
    let whole: Vec<(String, usize)> =
        serde_saphyr::from_str_with_options::<DocFindings>(&text, options(text.len()))
            .unwrap()
            .0;
    assert_eq!(got.len(), 43);
    assert_eq!(got, whole);
    assert_eq!(got[0], ("spec.nodeNme".to_string(), 37));
}
