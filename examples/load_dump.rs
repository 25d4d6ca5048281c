//! The loader on a `kubectl get pods -A -o yaml` dump of a large cluster: one `List` document of
//! N pods shaped like real API output (managedFields, env, volumes, status), loaded as `-f` does
//! (parse, then build the snapshot). Reports the input size, the time of each step and the peak
//! resident set size (VmHWM from /proc/self/status).
//!
//! Run: `cargo run --release --example load_dump -- write 20000 dump.yaml [json]`, then
//! `cargo run --release --example load_dump -- load dump.yaml` (two processes, so the peak is
//! the loader's alone).

use std::time::Instant;

use karpenter_capi::model::load::{Source, build_snapshot, parse_source};
use serde_json::json;

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn pod(i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("web-{i}"), "namespace": format!("ns-{}", i % 40),
            "uid": format!("00000000-0000-0000-0000-{i:012}"), "resourceVersion": format!("{}", 1000 + i),
            "creationTimestamp": "2026-11-30T09:00:00Z", "generateName": "web-",
            "labels": {"app": format!("app-{}", i % 300), "pod-template-hash": "7d9f8c6b5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("app-{}-7d9f8c6b5", i % 300), "uid": "rs", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T09:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:resources": {".": {}, "f:requests": {}}}}}}}]
        },
        "spec": {
            "nodeName": format!("node-{}", i % 700),
            "containers": [{"name": "app", "image": "registry.example/app:1.2.3",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
            "volumes": [{"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "serviceAccountName": "default", "priority": 0
        },
        "status": {
            "phase": "Running", "podIP": "10.0.0.1", "hostIP": "192.168.0.1", "startTime": "2026-11-30T09:00:01Z", "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-30T09:00:05Z"},
                           {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T09:00:00Z"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "registry.example/app:1.2.3", "imageID": "sha256:abc",
                "containerID": "containerd://abc", "started": true, "state": {"running": {"startedAt": "2026-11-30T09:00:04Z"}}}]
        }
    })
}

// An example binary's main: its report is its output.
#[allow(clippy::print_stdout, clippy::print_stderr)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("write") => {
            let pods: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
            let path = args
                .get(2)
                .cloned()
                .unwrap_or_else(|| "dump.yaml".to_string());
            let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                "items": (0..pods).map(pod).collect::<Vec<_>>()});
            let text = if args.get(3).map(String::as_str) == Some("json") {
                serde_json::to_string_pretty(&list).unwrap_or_default()
            } else {
                serde_saphyr::to_string(&list).unwrap_or_default()
            };
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("{path}: {e}");
            }
        }
        Some("load") => {
            let path = args
                .get(1)
                .cloned()
                .unwrap_or_else(|| "dump.yaml".to_string());
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{path}: {e}");
                    return;
                }
            };
            let before = status_kib("VmRSS:");
            let mb = text.len() as f64 / 1e6;
            let source = Source { name: path, text };
            let started = Instant::now();
            let objects = match parse_source(&source) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{e}");
                    return;
                }
            };
            let parsed = started.elapsed();
            let snapshot = match build_snapshot(objects) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return;
                }
            };
            let built = started.elapsed() - parsed;
            println!(
                "{} ({mb:.1} MB): parse {:.2} s, build {:.2} s; {} pods; RSS with the text read {} MiB, peak {} MiB",
                source.name,
                parsed.as_secs_f64(),
                built.as_secs_f64(),
                snapshot.pods.len(),
                before / 1024,
                status_kib("VmHWM:") / 1024
            );
        }
        _ => eprintln!("usage: load_dump write N FILE [json] | load_dump load FILE"),
    }
}
