//! Memory of continuous mode at scale: fills the reflector stores the controller keeps with
//! 5,000 pods, 500 nodes, 500 NodeClaims and Machines and 50 member MachineDeployments (objects
//! shaped like real API objects), then runs controller passes (snapshot + plan) over them, and
//! reports the peak resident set size (VmHWM from /proc/self/status).
//!
//! Run: `cargo run --example memory [PODS [NODES]]` (default 5,000 and 500; add `--release` for
//! plan times; memory is the same). Two sizes give the per-pod and per-node figures `init
//! --expected-pods` sizes the Deployment's memory with.

use std::time::Instant;

use karpenter_capi::controller::{self, Config};
use karpenter_capi::kube::list::OBSERVED;
use karpenter_capi::kube::watch::{Stores, compact, store_for};
use kube::api::DynamicObject;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};

/// Pods and nodes of the run (arguments 1 and 2).
static SIZE: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();

fn pods() -> usize {
    SIZE.get().map_or(5_000, |s| s.0)
}

fn nodes() -> usize {
    SIZE.get().map_or(500, |s| s.1)
}
const MDS: usize = 50;

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

fn md(i: usize) -> Value {
    let cpu = 2 + (i % 8) * 2;
    let name = format!("capi-karpenter-f{i:02}");
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": "capi", "uid": format!("md-{i}"), "resourceVersion": "1", "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"node.cluster.x-k8s.io/karpenter-member": "", "cluster.x-k8s.io/cluster-name": "capi"},
            "annotations": {
                "capacity.cluster-autoscaler.kubernetes.io/cpu": cpu.to_string(),
                "capacity.cluster-autoscaler.kubernetes.io/memory": format!("{}Gi", cpu * 4),
                "capacity.cluster-autoscaler.kubernetes.io/maxPods": "110",
                "capacity.cluster-autoscaler.kubernetes.io/labels": format!("kubernetes.io/arch=amd64,topology.kubernetes.io/zone=zone-{},node.kubernetes.io/instance-type=f{i:02},karpenter.sh/capacity-type=on-demand", i % 3),
                "capacity.cluster-autoscaler.kubernetes.io/price": format!("0.{:02}", 5 + i),
                "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "100"}},
        "spec": {"clusterName": "capi", "replicas": 10,
            "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": name}},
            "template": {"metadata": {"labels": {"cluster.x-k8s.io/deployment-name": name}},
                "spec": {"clusterName": "capi", "version": "v1.36.1",
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "capi-karpenter"}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": name}}}},
        "status": {"replicas": 10, "readyReplicas": 10, "availableReplicas": 10, "observedGeneration": 3,
            "conditions": [{"type": "Available", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-01T00:00:00Z"}]}
    })
}

fn node(i: usize) -> Value {
    let f = i % MDS;
    let cpu = 2 + (f % 8) * 2;
    let images: Vec<Value> = (0..25)
        .map(|k| json!({"names": [format!("registry.example.com/team-{k}/service-{k}@sha256:{:064x}", k * 7919 + i), format!("registry.example.com/team-{k}/service-{k}:v1.{k}.0")], "sizeBytes": 100_000_000 + k * 1_000_000}))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": format!("node-{i:03}"), "uid": format!("node-{i}"), "resourceVersion": "1", "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": format!("node-{i:03}"), "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": format!("f{f:02}"), "topology.kubernetes.io/zone": format!("zone-{}", f % 3),
                "karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
                "karpenter.sh/capacity-type": "on-demand", "karpenter.cluster.x-k8s.io/clusterapinodeclass": "default"},
            "annotations": {"cluster.x-k8s.io/machine": format!("capi-karpenter-f{f:02}-{i:05}"), "cluster.x-k8s.io/cluster-namespace": "capi",
                "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"providerID": format!("openstack:///{i:08}"), "podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256)},
        "status": {"capacity": {"cpu": cpu.to_string(), "memory": format!("{}Gi", cpu * 4), "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": format!("{}m", cpu * 1000 - 100), "memory": format!("{}Mi", cpu * 4096 - 512), "pods": "110", "ephemeral-storage": "95Gi"},
            "conditions": (["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"].iter().map(|t| json!({"type": t, "status": if *t == "Ready" {"True"} else {"False"},
                "reason": format!("Kubelet{t}"), "message": format!("kubelet reports {t}"), "lastHeartbeatTime": "2026-11-30T10:00:00Z", "lastTransitionTime": "2026-11-01T00:00:00Z"})).collect::<Vec<_>>()),
            "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 256, i % 256)}, {"type": "Hostname", "address": format!("node-{i:03}")}],
            "nodeInfo": {"machineID": format!("{i:032x}"), "systemUUID": format!("{i:032x}"), "bootID": format!("{i:032x}"), "kernelVersion": "6.8.0-45-generic",
                "osImage": "Ubuntu 24.04.1 LTS", "containerRuntimeVersion": "containerd://2.0.0", "kubeletVersion": "v1.36.1", "operatingSystem": "linux", "architecture": "amd64"},
            "images": images}
    })
}

fn nodeclaim(i: usize) -> Value {
    let f = i % MDS;
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("default-{i:05}"), "uid": format!("nc-{i}"), "resourceVersion": "1", "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": format!("f{f:02}"), "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": format!("zone-{}", f % 3), "karpenter.sh/capacity-type": "on-demand"},
            "annotations": {"cluster.x-k8s.io/machine": format!("capi/capi-karpenter-f{f:02}-{i:05}"), "karpenter-capi/machine-deployment": format!("capi/capi-karpenter-f{f:02}"),
                "karpenter.sh/nodepool-hash": "1234567890", "karpenter.sh/nodepool-hash-version": "v3"},
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default", "uid": "np-1", "blockOwnerDeletion": true}]},
        "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [format!("f{f:02}")]}],
            "resources": {"requests": {"cpu": "1", "memory": "1Gi", "pods": "5"}}},
        "status": {"providerID": format!("openstack:///{i:08}"), "nodeName": format!("node-{i:03}"),
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}, "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110"},
            "conditions": (["Launched", "Registered", "Initialized", "Ready"].iter().map(|t| json!({"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": "2026-11-01T00:05:00Z"})).collect::<Vec<_>>())}
    })
}

fn machine(i: usize) -> Value {
    let f = i % MDS;
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("capi-karpenter-f{f:02}-{i:05}"), "namespace": "capi", "uid": format!("m-{i}"), "resourceVersion": "1", "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"cluster.x-k8s.io/deployment-name": format!("capi-karpenter-f{f:02}"), "cluster.x-k8s.io/cluster-name": "capi",
                "node.cluster.x-k8s.io/karpenter-member": "", "cluster.x-k8s.io/set-name": format!("capi-karpenter-f{f:02}-abc")},
            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet", "name": format!("capi-karpenter-f{f:02}-abc"), "uid": "ms", "controller": true}]},
        "spec": {"clusterName": "capi", "providerID": format!("openstack:///{i:08}"), "version": "v1.36.1",
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": format!("cfg-{i}")}, "dataSecretName": format!("cfg-{i}")},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": format!("osm-{i}")}},
        "status": {"phase": "Running", "nodeRef": {"name": format!("node-{i:03}")}, "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 256, i % 256)}],
            "conditions": (["Available", "Ready", "BootstrapConfigReady", "InfrastructureReady", "NodeReady", "NodeHealthy"].iter().map(|t| json!({"type": t, "status": "True", "reason": t, "lastTransitionTime": "2026-11-01T00:05:00Z"})).collect::<Vec<_>>())}
    })
}

fn pod(i: usize) -> Value {
    let bound = !i.is_multiple_of(50); // 100 pending pods, the rest running
    let app = format!("app-{}", i % 200);
    let mut status = json!({"phase": "Running", "podIP": format!("10.1.{}.{}", i / 256, i % 256), "hostIP": format!("10.0.{}.{}", (i % nodes()) / 256, (i % nodes()) % 256),
        "startTime": "2026-11-30T09:00:00Z", "qosClass": "Burstable",
        "conditions": (["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].iter().map(|t| json!({"type": t, "status": "True", "lastTransitionTime": "2026-11-30T09:00:00Z"})).collect::<Vec<_>>()),
        "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "started": true, "image": format!("registry.example.com/{app}:v1.2.3"),
            "imageID": format!("registry.example.com/{app}@sha256:{:064x}", i), "containerID": format!("containerd://{:064x}", i),
            "state": {"running": {"startedAt": "2026-11-30T09:00:05Z"}}}]});
    if !bound {
        status = json!({"phase": "Pending", "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/500 nodes are available: 500 Insufficient cpu.", "lastTransitionTime": "2026-11-30T10:00:00Z"}]});
    }
    let mut spec = json!({
        "containers": [{"name": "app", "image": format!("registry.example.com/{app}:v1.2.3"), "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "APP", "value": app}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "schedulerName": "default-scheduler",
        "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": app}}}],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}]
    });
    if bound {
        spec["nodeName"] = json!(format!("node-{:03}", i % nodes()));
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{app}-{i:05}"), "namespace": format!("team-{}", i % 20), "uid": format!("{:032x}", i), "resourceVersion": "1",
            "creationTimestamp": "2026-11-30T09:00:00Z", "generateName": format!("{app}-"),
            "labels": {"app": app, "pod-template-hash": "5d8f7c9b6", "team": format!("team-{}", i % 20), "tier": "backend"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-29T08:00:00Z", "prometheus.io/scrape": "true",
                "kubectl.kubernetes.io/last-applied-configuration": "x".repeat(1500)},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-5d8f7c9b6"), "uid": format!("rs-{}", i % 200), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T09:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"x": "y".repeat(1000)}}}}]},
        "spec": spec,
        "status": status
    })
}

// An example binary's main: its report is its output, and a failed step ends the measurement.
#[allow(clippy::print_stdout, clippy::print_stderr, clippy::expect_used)]
fn main() {
    let arg = |n: usize, default: usize| {
        std::env::args()
            .nth(n)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let _ = SIZE.set((arg(1, 5_000), arg(2, 500)));
    let before = status_kib("VmRSS:");
    // Generated per type and fed to the store one object at a time, as a watcher's pages are:
    // the generator's JSON never piles up.
    let generate = |plural: &str| -> Box<dyn Iterator<Item = Value>> {
        match plural {
            "nodepools" => Box::new(std::iter::once(
                json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default", "uid": "np-1", "resourceVersion": "1"},
                "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"}, "requirements": [], "expireAfter": "Never"}},
                         "limits": {"cpu": "100000"}, "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}}}),
            )),
            "clusterapinodeclasses" => Box::new(std::iter::once(
                json!({"apiVersion": "karpenter.cluster.x-k8s.io/v1alpha1", "kind": "ClusterAPINodeClass", "metadata": {"name": "default", "uid": "nc", "resourceVersion": "1"},
                "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-11-01T00:00:00Z"}]}}),
            )),
            "daemonsets" => Box::new(std::iter::once(
                json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "cilium", "namespace": "kube-system", "uid": "ds", "resourceVersion": "1"},
                "spec": {"selector": {"matchLabels": {"k8s-app": "cilium"}}, "template": {"metadata": {"labels": {"k8s-app": "cilium"}}, "spec": {"tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "agent", "image": "quay.io/cilium/cilium:v1.18.0", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}}}),
            )),
            "machinedeployments" => Box::new((0..MDS).map(md)),
            "nodes" => Box::new((0..nodes()).map(node)),
            "nodeclaims" => Box::new((0..nodes()).map(nodeclaim)),
            "machines" => Box::new((0..nodes()).map(machine)),
            "pods" => Box::new((0..pods()).map(pod)),
            _ => Box::new(std::iter::empty()),
        }
    };

    // The stores, fed the way the watchers feed them (trimmed).
    let mut entries = Vec::new();
    let mut count = 0;
    for listed in OBSERVED {
        let (store, mut writer) = store_for(&listed.resource);
        writer.apply_watcher_event(&Event::Init);
        // As the watcher's initial list: pages of 500 full objects arrive as one HTTP body each,
        // are decoded, trimmed and compacted, then the page is dropped.
        let mut objects = generate(listed.resource.plural).peekable();
        while objects.peek().is_some() {
            let page: Vec<Value> = objects.by_ref().take(500).collect();
            let body = serde_json::to_vec(
                &json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": page}),
            )
            .expect("serializable");
            drop(page);
            let list: kube::core::ObjectList<DynamicObject> =
                serde_json::from_slice(&body).expect("a list");
            drop(body);
            for mut obj in list.items {
                compact(&mut obj, listed.resource.kind);
                writer.apply_watcher_event(&Event::InitApply(obj));
                count += 1;
            }
        }
        writer.apply_watcher_event(&Event::InitDone);
        eprintln!(
            "after {:<24} RSS {:.1} MiB",
            listed.resource.plural,
            status_kib("VmRSS:") as f64 / 1024.0
        );
        // Writers must outlive the readers' use: keep them with the stores.
        entries.push((*listed, listed.resource, store, writer));
    }
    let stores = Stores::from_parts(
        entries
            .iter()
            .map(|(l, r, s, _)| (*l, *r, s.clone()))
            .collect(),
        Vec::new(),
    );
    let loaded = status_kib("VmRSS:");

    let config = Config::default();
    let mut plan_ms = Vec::new();
    let mut snapshot_ms = Vec::new();
    let mut actions = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let snapshot = stores.snapshot().expect("snapshot");
        snapshot_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let now = snapshot.now.unwrap_or_else(jiff::Timestamp::now);
        let t = Instant::now();
        let plan = controller::plan(&snapshot, now, &config);
        plan_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        actions = plan.actions.len();
    }
    let after = status_kib("VmRSS:");
    let peak = status_kib("VmHWM:");
    println!(
        "objects in stores:        {count} ({} pods, {n} nodes, {n} NodeClaims, {n} Machines, {MDS} MachineDeployments)",
        pods(),
        n = nodes()
    );
    println!(
        "RSS before:               {:.1} MiB",
        before as f64 / 1024.0
    );
    println!(
        "RSS with stores:          {:.1} MiB",
        loaded as f64 / 1024.0
    );
    println!("RSS after 5 passes:       {:.1} MiB", after as f64 / 1024.0);
    println!("peak RSS (VmHWM):         {:.1} MiB", peak as f64 / 1024.0);
    println!(
        "snapshot from stores, ms: {:?}",
        snapshot_ms.iter().map(|m| m.round()).collect::<Vec<_>>()
    );
    println!(
        "plan, ms:                 {:?}",
        plan_ms.iter().map(|m| m.round()).collect::<Vec<_>>()
    );
    println!("actions in the plan:      {actions}");
}
