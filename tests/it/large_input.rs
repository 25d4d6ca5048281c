//! Large dumps load (issue 12 item 2): a 20,000-pod `kubectl get pods -A -o yaml` List, one YAML
//! document, read from stdin, generated here with the fields such a dump carries for a running pod.

use assert_cmd::Command;
use karpenter_capi::model::load::{Source, load_sources};

const PODS: usize = 20_000;

/// `kubectl get pods -A -o yaml` of `n` running pods on 100 nodes, as one `List` document.
fn pod_list(n: usize) -> String {
    let mut out = String::with_capacity(n * 700);
    out.push_str("apiVersion: v1\nitems:\n");
    for i in 0..n {
        let ns = format!("team-{}", i % 40);
        out.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: app-{i}\n    namespace: {ns}\n    uid: 00000000-0000-0000-0000-{i:012}\n    \
             labels:\n      app: app-{app}\n      pod-template-hash: 7c9d8\n    ownerReferences:\n    - apiVersion: apps/v1\n      kind: ReplicaSet\n      \
             name: app-{app}-7c9d8\n      uid: 11111111-0000-0000-0000-{app:012}\n      controller: true\n  spec:\n    nodeName: node-{node}\n    \
             containers:\n    - name: app\n      image: registry.example.com/app-{app}:v1\n      resources:\n        requests: {{cpu: 100m, memory: 128Mi}}\n        \
             limits: {{memory: 256Mi}}\n  status:\n    phase: Running\n    podIP: 10.1.{a}.{b}\n    qosClass: Burstable\n",
            app = i % 200,
            node = i % 100,
            a = i / 256 % 256,
            b = i % 256,
        ));
    }
    out.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    out
}

#[test]
fn a_20000_pod_list_loads_as_one_document() {
    let text = pod_list(PODS);
    let started = std::time::Instant::now();
    let (snapshot, notes) = load_sources(&[Source {
        name: "<stdin>".to_string(),
        text,
    }])
    .unwrap();
    assert_eq!(snapshot.pods.len(), PODS);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(snapshot.pods.iter().all(|p| !p.is_pending()));
    let last = snapshot
        .pods
        .iter()
        .find(|p| p.demand.name == format!("app-{}", PODS - 1))
        .expect("the last pod of the List");
    assert_eq!(last.demand.namespace, format!("team-{}", (PODS - 1) % 40));
    eprintln!("loaded {PODS} pods in {:?}", started.elapsed());
}

#[test]
fn a_20000_pod_list_loads_from_stdin() {
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .args([
            "explain",
            "pod",
            "team-39/app-19999",
            "-f",
            "-",
            "-o",
            "json",
        ])
        .env("NO_COLOR", "1")
        .write_stdin(pod_list(PODS))
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pod"], "team-39/app-19999", "{v}");
    assert_eq!(v["node"], "node-99", "{v}");
}
