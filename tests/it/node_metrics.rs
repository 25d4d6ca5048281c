//! Karpenter's per-node gauges and cluster utilization on the exposition, against core v1.14.1
//! `pkg/controllers/metrics/node` (`suite_test.go`, conformance rows O-MNODE-001..004): every
//! Node's allocatable, pod and DaemonSet requests and limits, system overhead and age, labelled
//! by Karpenter's well-known labels, `node_name`, `phase` and `managed`; series of a Node that is
//! gone go with it.

use crate::controller_disruption::NOW;

use jiff::Timestamp;
use karpenter_capi::controller::karpenter_metrics::gauges;
use karpenter_capi::kube::metrics::Metrics;
use karpenter_capi::model::load::{Source, snapshot_from_sources};

/// Core's test node: allocatable 100 pods, 5000 CPU, 32Gi, created an hour before NOW.
const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: node-1, creationTimestamp: '2026-11-30T09:00:00Z', labels: {karpenter.sh/nodepool: default, topology.kubernetes.io/zone: gra1}}\nspec: {providerID: 'openstack:///n1'}\nstatus: {allocatable: {pods: '100', cpu: '5000', memory: 32Gi}}\n";

/// A NodeClaim whose providerID is node-1's: it manages the node.
const CLAIM: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-1, labels: {karpenter.sh/nodepool: default}}\nspec: {nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}, requirements: []}\nstatus: {providerID: 'openstack:///n1', nodeName: node-1}\n";

/// A DaemonSet pod (100m / 128Mi, limits 200m / 256Mi) and an application pod (2 CPU / 4Gi,
/// limited to 4 CPU) on node-1, and a finished pod that counts for nothing.
const PODS: &str = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: agent-1, namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, controller: true}]}\nspec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 200m, memory: 256Mi}}}]}\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: default}\nspec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: '2', memory: 4Gi}, limits: {cpu: '4'}}}]}\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: done, namespace: default}\nspec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: '8'}}}]}\nstatus: {phase: Succeeded}\n";

fn exposition(text: &str) -> String {
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    let m = Metrics::new();
    m.karpenter
        .set_gauges(&gauges(&s, NOW.parse::<Timestamp>().unwrap()));
    m.render()
}

/// The series of one metric, sorted (a family's exposition order is its hash map's).
fn series(text: &str, name: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// node-1's labels as core writes them, before `resource_type`.
fn node_labels(managed: bool) -> String {
    format!(
        r#"nodepool="default",zone="gra1",region="",instance_type="",arch="",os="",capacity_type="",windows_build="",node_name="node-1",phase="",managed="{managed}""#
    )
}

/// O-MNODE-001 and O-MNODE-002: one allocatable series per resource, CPU in cores; `managed`
/// when a NodeClaim carries the Node's providerID.
#[test]
fn allocatable_per_resource_and_managed_when_claimed() {
    let m = exposition(NODE);
    let l = node_labels(false);
    assert_eq!(
        series(&m, "karpenter_nodes_allocatable"),
        vec![
            format!(r#"karpenter_nodes_allocatable{{{l},resource_type="cpu"}} 5000.0"#),
            format!(r#"karpenter_nodes_allocatable{{{l},resource_type="memory"}} 34359738368.0"#),
            format!(r#"karpenter_nodes_allocatable{{{l},resource_type="pods"}} 100.0"#),
        ]
    );
    let m = exposition(&format!("{NODE}{CLAIM}"));
    let l = node_labels(true);
    assert!(
        series(&m, "karpenter_nodes_allocatable").contains(&format!(
            r#"karpenter_nodes_allocatable{{{l},resource_type="cpu"}} 5000.0"#
        )),
        "{m}"
    );
}

/// O-MNODE-003: the node's age, and each allocatable resource's cluster utilization, 0 with no
/// pods; with pods, requests and limits per node (DaemonSet pods apart too) and the
/// utilization they make.
#[test]
fn lifetime_requests_limits_and_cluster_utilization() {
    let m = exposition(NODE);
    let l = node_labels(false);
    assert_eq!(
        series(&m, "karpenter_nodes_current_lifetime_seconds"),
        vec![format!(
            r#"karpenter_nodes_current_lifetime_seconds{{{l}}} 3600.0"#
        )]
    );
    assert_eq!(
        series(&m, "karpenter_cluster_utilization_percent"),
        vec![
            r#"karpenter_cluster_utilization_percent{resource_type="cpu"} 0.0"#,
            r#"karpenter_cluster_utilization_percent{resource_type="memory"} 0.0"#,
            r#"karpenter_cluster_utilization_percent{resource_type="pods"} 0.0"#,
        ]
    );
    assert_eq!(
        series(&m, "karpenter_nodes_total_pod_requests"),
        Vec::<String>::new()
    );

    let m = exposition(&format!("{NODE}{PODS}"));
    let mi = 1u64 << 20;
    // (gauge, CPU, memory, pods): both pods' requests and limits, then the DaemonSet pod's.
    for (gauge, cpu, memory, pods) in [
        ("total_pod_requests", "2.1", 4096 * mi + 128 * mi, "2.0"),
        ("total_pod_limits", "4.2", 256 * mi, "2.0"),
        ("total_daemon_requests", "0.1", 128 * mi, "1.0"),
        ("total_daemon_limits", "0.2", 256 * mi, "1.0"),
    ] {
        let name = format!("karpenter_nodes_{gauge}");
        assert_eq!(
            series(&m, &name),
            vec![
                format!(r#"{name}{{{l},resource_type="cpu"}} {cpu}"#),
                format!(r#"{name}{{{l},resource_type="memory"}} {memory}.0"#),
                format!(r#"{name}{{{l},resource_type="pods"}} {pods}"#),
            ]
        );
    }
    // 2.1 of 5000 CPU, 4.125Gi of 32Gi, 2 of 100 pods.
    assert_eq!(
        series(&m, "karpenter_cluster_utilization_percent"),
        vec![
            r#"karpenter_cluster_utilization_percent{resource_type="cpu"} 0.042"#,
            r#"karpenter_cluster_utilization_percent{resource_type="memory"} 12.890625"#,
            r#"karpenter_cluster_utilization_percent{resource_type="pods"} 2.0"#,
        ]
    );
    // A Node reporting its capacity: the overhead is capacity less allocatable.
    let with_capacity = NODE.replace(
        "status: {allocatable",
        "status: {capacity: {pods: '110', cpu: '5001', memory: 33Gi}, allocatable",
    );
    let m = exposition(&with_capacity);
    assert_eq!(
        series(&m, "karpenter_nodes_system_overhead"),
        vec![
            format!(r#"karpenter_nodes_system_overhead{{{l},resource_type="cpu"}} 1.0"#),
            format!(
                r#"karpenter_nodes_system_overhead{{{l},resource_type="memory"}} {}.0"#,
                1024 * mi
            ),
            format!(r#"karpenter_nodes_system_overhead{{{l},resource_type="pods"}} 10.0"#),
        ]
    );
}

/// O-MNODE-004: a Node that is gone takes its series with it at the next pass.
#[test]
fn a_deleted_nodes_series_go() {
    let s = |text: &str| {
        snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: text.to_string(),
        }])
        .unwrap()
    };
    let now = NOW.parse::<Timestamp>().unwrap();
    let m = Metrics::new();
    m.karpenter.set_gauges(&gauges(&s(NODE), now));
    assert_eq!(series(&m.render(), "karpenter_nodes_allocatable").len(), 3);
    let other = NODE.replace("node-1", "node-2").replace("n1", "n2");
    m.karpenter.set_gauges(&gauges(&s(&other), now));
    let text = m.render();
    let all: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("karpenter_nodes_")
                && !l.starts_with("karpenter_nodes_created")
                && !l.starts_with("karpenter_nodes_terminated")
                && !l.starts_with("karpenter_nodes_drained")
                && !l.starts_with("karpenter_nodes_lifetime")
                && !l.starts_with("karpenter_nodes_termination")
        })
        .collect();
    assert!(
        all.iter().all(|l| l.contains(r#"node_name="node-2""#)),
        "{all:?}"
    );
    assert!(!all.is_empty());
}
