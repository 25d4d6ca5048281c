//! `doctor` on what `init` generates, plus a working NodeClaim (its Machine and Node, the node
//! class Ready as the controller reports it): everything is ok.

use assert_cmd::Command;
use serde_json::{Value, json};

fn bin() -> Command {
    Command::cargo_bin("kubectl-karpenter_capi").unwrap()
}

const WORKING: &str = "
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
  uid: 5a1c
  creationTimestamp: '2026-11-30T10:00:00Z'
  labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64, kubernetes.io/os: linux, node.kubernetes.io/instance-type: c3-8, topology.kubernetes.io/zone: nova}
  annotations: {cluster.x-k8s.io/machine: capi-ovh/capi-ovh-karpenter-c3-8-abcde, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-8}
spec:
  nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [c3-8]}]
status:
  providerID: openstack:///b7e4
  nodeName: capi-ovh-karpenter-c3-8-abcde
  conditions:
  - {type: Launched, status: 'True', reason: Launched, message: '', lastTransitionTime: '2026-11-30T10:01:00Z'}
  - {type: Registered, status: 'True', reason: Registered, message: '', lastTransitionTime: '2026-11-30T10:03:00Z'}
  - {type: Initialized, status: 'True', reason: Initialized, message: '', lastTransitionTime: '2026-11-30T10:04:00Z'}
  - {type: Ready, status: 'True', reason: Ready, message: '', lastTransitionTime: '2026-11-30T10:04:00Z'}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: capi-ovh-karpenter-c3-8-abcde
  namespace: capi-ovh
  creationTimestamp: '2026-11-30T10:00:05Z'
  labels: {cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8, node.cluster.x-k8s.io/karpenter-member: ''}
spec: {clusterName: capi-ovh, providerID: openstack:///b7e4}
status: {phase: Running, nodeRef: {name: capi-ovh-karpenter-c3-8-abcde}}
---
apiVersion: v1
kind: Node
metadata:
  name: capi-ovh-karpenter-c3-8-abcde
  labels: {karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true', karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64, kubernetes.io/os: linux, node.kubernetes.io/instance-type: c3-8, topology.kubernetes.io/zone: nova}
spec: {providerID: openstack:///b7e4}
status:
  capacity: {cpu: '4', memory: 8G, pods: '110'}
  allocatable: {cpu: '4', memory: 8G, pods: '110'}
  conditions: [{type: Ready, status: 'True'}]
";

#[test]
fn init_output_plus_a_working_nodeclaim_is_all_ok() {
    let out = bin()
        .args([
            "init",
            "-n",
            "capi-ovh",
            "--cluster-name",
            "capi-ovh",
            "--kubernetes-version",
            "v1.36.1",
            "--infrastructure-kind",
            "OpenStackMachineTemplate",
            "--machine-image",
            "ubuntu-2404-noble",
            "--image",
            "ghcr.io/example/kubectl-karpenter-capi:v0.1.0",
            "--yes",
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05,zone=nova",
            "--flavor",
            "c3-8:cpu=4,memory=8G,price=0.1,zone=nova",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bundle = String::from_utf8(out.stdout).unwrap();
    // What the cluster shows once the controller runs: the node class Ready, c3-8 at one replica.
    let mut docs: Vec<Value> = Vec::new();
    for doc in bundle
        .split("\n---\n")
        .map(|d| d.trim_start_matches("---\n"))
    {
        let mut v: Value = serde_saphyr::from_str(doc).unwrap();
        if v.is_null() {
            continue;
        }
        if v["kind"] == "ClusterAPINodeClass" {
            v["status"] = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-11-30T09:00:00Z"}]});
        }
        if v["kind"] == "MachineDeployment" && v["metadata"]["name"] == "capi-ovh-karpenter-c3-8" {
            v["spec"]["replicas"] = json!(1);
        }
        docs.push(v);
    }
    let mut text: String = docs.iter().map(|d| format!("---\n{d}\n")).collect();
    text.push_str("---\n");
    text.push_str(WORKING);
    let dir = std::env::temp_dir().join(format!("kkc-doctor-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dump.yaml");
    std::fs::write(&path, text).unwrap();

    let out = bin()
        .args([
            "doctor",
            "--now",
            "2026-11-30T10:30:00Z",
            "-o",
            "json",
            "-f",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let problems: Vec<&Value> = findings.iter().filter(|f| f["severity"] != "ok").collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let causes: Vec<&str> = findings
        .iter()
        .map(|f| f["cause"].as_str().unwrap())
        .collect();
    for expected in [
        "NodeClassReady",
        "NodePoolOk",
        "MachineDeploymentOk",
        "BootstrapTemplateOk",
        "ManagementAccessOk",
        "NodeClaimInitialized",
    ] {
        assert!(
            causes.contains(&expected),
            "{expected} missing from {causes:?}"
        );
    }
}
