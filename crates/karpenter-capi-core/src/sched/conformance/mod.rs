//! Tests of the scheduling rules of issue 25 (host ports, DaemonSets, pod-level resources,
//! NodePool template labels, multi-valued requirements, PreferNoSchedule), each rule on several
//! inputs through every strategy it concerns, asserting flavors, counts and labels.

mod affinity_groups;
mod batches;
mod beta_labels;
mod claims;
mod compat;
mod daemonsets;
mod existing_nodes;
mod host_ports;
mod in_flight;
mod initialized;
mod karpenter_capi_zones;
mod min_values;
mod multi_valued;
mod pod_resources;
mod pools;
mod prefer_no_schedule;
mod provisioning_cases;
mod requirements;
mod scheduling_logic;
mod sizing;
mod template_labels;
mod topology_cases;
mod truncation;
mod volume_usage;
mod volumes;
mod zonal_spread;

use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::{Placement, StrategyName, by_name};

/// A member MachineDeployment `name` of `cpu` vCPU and `cpu * 4` GiB at `price`/h, with extra
/// `labels` (a `k=v,...` list, may be empty) and extra `metadata` annotation lines.
fn flavor(name: &str, cpu: u32, price: &str, labels: &str) -> String {
    let extra = if labels.is_empty() {
        String::new()
    } else {
        format!(",{labels}")
    };
    format!(
        "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: {name}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {}Gi\n    capacity.cluster-autoscaler.kubernetes.io/price: '{price}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type={name}{extra}\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n",
        cpu * 4
    )
}

/// A pending pod `name` in `default` with labels (flow-map body), one container of `cpu`
/// (a quantity) and 128Mi, its container's extra fields `container` (`, ports: [...]`) and
/// extra spec lines `spec`.
fn pod(name: &str, labels: &str, cpu: &str, container: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{{labels}}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}', memory: 128Mi}}}}{container}}}]{spec}\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n"
    )
}

/// A container port binding `host_port` (protocol and host IP when given).
fn port(host_port: u16, protocol: Option<&str>, host_ip: Option<&str>) -> String {
    let mut out = format!("{{containerPort: {host_port}, hostPort: {host_port}");
    if let Some(p) = protocol {
        out.push_str(&format!(", protocol: {p}"));
    }
    if let Some(ip) = host_ip {
        out.push_str(&format!(", hostIP: '{ip}'"));
    }
    out.push('}');
    out
}

fn snap(text: &str) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap()
}

fn plan(s: &Snapshot, strategy: StrategyName) -> Placement {
    let pending: Vec<usize> = (0..s.pods.len())
        .filter(|&i| s.pods[i].is_pending())
        .collect();
    by_name(strategy).plan(s, &pending)
}

/// Pod names per new node (each sorted, nodes sorted), with the node's instance type first.
fn nodes(s: &Snapshot, p: &Placement) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = p
        .new_nodes
        .iter()
        .map(|n| {
            let mut names: Vec<String> = n
                .pods
                .iter()
                .map(|&i| s.pods[i].demand.name.clone())
                .collect();
            names.sort();
            (n.offering.flavor.instance_type.clone(), names)
        })
        .collect();
    out.sort();
    out
}

/// Names of the pods left unschedulable, sorted.
fn unschedulable(s: &Snapshot, p: &Placement) -> Vec<String> {
    let mut out: Vec<String> = p
        .unschedulable
        .iter()
        .map(|(i, _)| s.pods[*i].demand.name.clone())
        .collect();
    out.sort();
    out
}

/// Every strategy.
const ALL: [StrategyName; 3] = [
    StrategyName::Cost,
    StrategyName::KarpenterCapi,
    StrategyName::LeastWaste,
];

/// A DaemonSet `name` in `kube-system` whose pod requests `cpu` (a quantity) and 64Mi, with
/// its container's extra fields `container` and extra pod spec lines `spec`.
fn daemonset(name: &str, cpu: &str, container: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: {name}, namespace: kube-system}}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}', memory: 64Mi}}}}{container}}}]{spec}\n"
    )
}

/// The pods of a plan's single new node, or a panic naming the plan.
fn single(s: &Snapshot, p: &Placement) -> (String, Vec<String>) {
    let got = nodes(s, p);
    assert_eq!(got.len(), 1, "{:?}: {got:?}", p.strategy);
    got[0].clone()
}
