//! Rule 7: pod-level resources (`spec.resources`): in `cost` (and so the controller) pod-level
//! cpu and memory requests replace the containers' sum, overhead added; `karpenter-capi`
//! keeps Karpenter v1.5's container-only sum.

use super::{flavor, nodes, plan, pod, single, snap};
use crate::model::load::{Source, snapshot_from_sources};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

fn catalog() -> String {
    flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "") + &flavor("c8", 8, "0.14", "")
}

#[test]
fn pod_level_requests_replace_the_containers_in_cost_only() {
    // (what, pod spec lines, cost's cpu and memory request, karpenter-capi's cpu)
    let cases = [
        (
            "pod-level cpu",
            "\n  resources: {requests: {cpu: '3'}}",
            (3000, 128 << 20),
            500,
        ),
        (
            "pod-level memory",
            "\n  resources: {requests: {memory: 10Gi}}",
            (500, 10 << 30),
            500,
        ),
        (
            "pod-level cpu plus overhead",
            "\n  resources: {requests: {cpu: 1800m}}\n  overhead: {cpu: 250m}",
            (2050, 128 << 20),
            750,
        ),
        (
            "pod-level limit standing for the request",
            "\n  resources: {limits: {cpu: '3', memory: 1Gi}}",
            (3000, 1 << 30),
            500,
        ),
    ];
    for (what, spec, (cpu, memory), capi_cpu) in cases {
        let s = snap(&(catalog() + &pod("p", "app: p", "500m", "", spec)));
        assert_eq!(s.pods[0].demand.requests.cpu_millis, cpu, "{what}");
        assert_eq!(s.pods[0].demand.requests.memory_bytes, memory, "{what}");
        let p = plan(&s, Cost);
        assert_eq!(
            single(&s, &p),
            ("c4".to_string(), vec!["p".to_string()]),
            "{what}"
        );
        assert_eq!(p.new_nodes[0].requested.cpu_millis, cpu, "{what}");
        let p = plan(&s, KarpenterCapi);
        assert_eq!(
            single(&s, &p),
            ("c2".to_string(), vec!["p".to_string()]),
            "{what}"
        );
        assert_eq!(p.new_nodes[0].requested.cpu_millis, capi_cpu, "{what}");
    }
}

/// Ten pods of 100m containers and 1 vCPU pod-level: `cost` packs 10 vCPU (a c8 and a c2),
/// `karpenter-capi` 1 vCPU (one c2).
#[test]
fn a_batch_is_packed_by_its_pod_level_requests() {
    let mut text = catalog();
    for i in 0..10 {
        text += &pod(
            &format!("p-{i}"),
            "app: p",
            "100m",
            "",
            "\n  resources: {requests: {cpu: '1'}}",
        );
    }
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(
        p.node_counts(),
        vec![("c2".to_string(), 1), ("c8".to_string(), 1)]
    );
    let sizes: Vec<usize> = nodes(&s, &p).iter().map(|(_, pods)| pods.len()).collect();
    assert_eq!(sizes, vec![2, 8]);
    let p = plan(&s, KarpenterCapi);
    assert_eq!(p.node_counts(), vec![("c2".to_string(), 1)]);
}

/// A bad pod-level quantity is an error naming the field, for a Pod and a template.
#[test]
fn a_bad_pod_level_quantity_names_its_field() {
    let cases = [
        (
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c}]\n  resources: {requests: {cpu: 2x}}\n",
            "spec.resources.requests[cpu]",
        ),
        (
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec:\n      containers: [{name: c}]\n      resources: {limits: {memory: 1Qi}}\n",
            "spec.template.spec.resources.limits[memory]",
        ),
    ];
    for (text, field) in cases {
        let err = snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: catalog() + text,
        }])
        .unwrap_err()
        .to_string();
        assert!(err.contains(field), "{field}: {err}");
    }
}
