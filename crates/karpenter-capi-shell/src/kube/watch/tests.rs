//! Tests of the reflector stores: compaction, the snapshot they build, pod events and sync flags.

use kube::runtime::watcher::Event;
use serde_json::json;

use super::*;
use crate::controller::{self, Config};
use crate::kube::list::snapshot_from_values;
use crate::model::snapshot::PodRecord;

fn pod(name: &str, node: Option<&str>) -> serde_json::Value {
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name, "creationTimestamp": "2026-11-30T09:00:00Z",
            "annotations": {LAST_APPLIED_ANNOTATION: "{...}", "keep": "me"}, "managedFields": [{"manager": "kubectl"}]},
        "spec": {"containers": [{"name": "c", "image": "app", "env": [{"name": "A", "value": "1"}],
            "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "3"}}}],
            "volumes": [{"name": "v", "emptyDir": {}}]},
        "status": {"phase": "Pending", "containerStatuses": [{"name": "c"}],
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
        p["status"] = json!({"phase": "Running"});
    }
    p
}

/// `pod_event` on one watch event, `old` the stored pod before it.
fn event_of(
    kind: &str,
    new: &serde_json::Value,
    old: Option<&serde_json::Value>,
) -> Option<String> {
    let obj: DynamicObject = serde_json::from_value(new.clone()).unwrap();
    let event = match kind {
        "apply" => Event::Apply(obj),
        "list" => Event::InitApply(obj),
        "delete" => Event::Delete(obj),
        _ => Event::InitDone,
    };
    pod_event(&event, old)
}

#[test]
fn pod_events_are_binds_leaves_terminal_phases_and_deletes() {
    let pending = pod("p", None);
    let bound = pod("p", Some("node-1"));
    let node = Some("node-1".to_string());
    // Bind: pending -> bound is an event on the node it is bound to.
    assert_eq!(event_of("apply", &bound, Some(&pending)), node);
    // An update that changes nothing that counts (a label) is none.
    let mut relabelled = bound.clone();
    relabelled["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(event_of("apply", &relabelled, Some(&bound)), None);
    // A pod first seen already bound (created with nodeName) counts; first seen in a
    // (re-)list does not.
    assert_eq!(event_of("apply", &bound, None), node);
    assert_eq!(event_of("list", &bound, None), None);
    // Terminal phase: once, on the transition.
    for phase in ["Succeeded", "Failed"] {
        let mut done = bound.clone();
        done["status"]["phase"] = json!(phase);
        assert_eq!(event_of("apply", &done, Some(&bound)), node, "{phase}");
        assert_eq!(event_of("apply", &done, Some(&done)), None, "{phase}");
    }
    // Leaving: terminating (deletionTimestamp set), once.
    let mut leaving = bound.clone();
    leaving["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:00:00Z");
    assert_eq!(event_of("apply", &leaving, Some(&bound)), node);
    assert_eq!(event_of("apply", &leaving, Some(&leaving)), None);
    // Deleted from a node: an event there; a pending pod deleted is none.
    assert_eq!(event_of("delete", &bound, Some(&bound)), node);
    assert_eq!(event_of("delete", &pending, Some(&pending)), None);
    // DaemonSet pods never count, whatever happens to them.
    let mut daemon = bound.clone();
    daemon["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u"}]);
    let mut daemon_pending = pending.clone();
    daemon_pending["metadata"]["ownerReferences"] = daemon["metadata"]["ownerReferences"].clone();
    assert_eq!(event_of("apply", &daemon, Some(&daemon_pending)), None);
    assert_eq!(event_of("delete", &daemon, Some(&daemon)), None);
    // The other node of another pod: the event names the pod's own node.
    let elsewhere = pod("q", Some("node-2"));
    assert_eq!(
        event_of("apply", &elsewhere, Some(&pod("q", None))),
        Some("node-2".to_string())
    );
    // Watch bookkeeping is no pod event.
    assert_eq!(event_of("init-done", &bound, Some(&bound)), None);
}

#[test]
fn compacted_objects_expand_to_the_object_minus_the_noise() {
    let mut obj: DynamicObject = serde_json::from_value(pod("p", None)).unwrap();
    obj.types = None; // as list items of built-in types arrive
    compact(&mut obj, "Pod");
    assert!(obj.data.is_string(), "one string holds the body");
    let v = expand(&obj, &crate::vocab::kinds::POD);
    assert_eq!(v["apiVersion"], "v1");
    assert_eq!(v["kind"], "Pod");
    assert_eq!(v["metadata"]["annotations"], json!({"keep": "me"}));
    assert!(v["metadata"].get("managedFields").is_none());
    assert_eq!(
        v["spec"],
        json!({"containers": [{"name": "c", "image": "app", "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "3"}}}]})
    );
    assert_eq!(
        v["status"],
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]})
    );
}

#[test]
fn trimming_keeps_every_field_the_pod_and_node_models_read() {
    let full = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2026-11-30T09:00:00Z", "labels": {"app": "a"},
            "annotations": {"karpenter.sh/do-not-disrupt": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}]},
        "spec": {
            "priorityClassName": "high", "nodeSelector": {"disk": "ssd"}, "schedulingGates": [],
            "overhead": {"cpu": "50m"},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a"}}}]}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}],
            "initContainers": [{"name": "side", "image": "s", "restartPolicy": "Always", "env": [{"name": "X", "value": "1"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
            "containers": [{"name": "c", "image": "i", "command": ["run"], "env": [{"name": "Y", "value": "2"}],
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
                "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}]},
        "status": {"phase": "Pending", "nominatedNodeName": "",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}], "containerStatuses": []}
    });
    let mut obj: DynamicObject = serde_json::from_value(full.clone()).unwrap();
    compact(&mut obj, "Pod");
    let trimmed = expand(&obj, &crate::vocab::kinds::POD);
    let mut a = snapshot_from_values(vec![(full, "workload cluster")], Vec::new()).unwrap();
    let b = snapshot_from_values(vec![(trimmed, "workload cluster")], Vec::new()).unwrap();
    // Container args are read by `doctor` only (the controller's flags), which lists
    // instead of watching: the stores need not keep them.
    assert_eq!(a.pods[0].containers[0].args, ["run"]);
    std::sync::Arc::make_mut(&mut std::sync::Arc::make_mut(&mut a.pods[0]).containers)[0]
        .args
        .clear();
    assert_eq!(a.pods, b.pods);

    let node = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n", "labels": {"zone": "a"}, "annotations": {"x": "y"}, "creationTimestamp": "2026-11-30T09:00:00Z"},
        "spec": {"providerID": "openstack:///1", "unschedulable": true, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}], "images": [{"names": ["i"], "sizeBytes": 1}], "volumesInUse": ["v"]}
    });
    let mut obj: DynamicObject = serde_json::from_value(node.clone()).unwrap();
    compact(&mut obj, "Node");
    let trimmed = expand(&obj, &crate::vocab::kinds::NODE);
    assert!(trimmed["status"].get("images").is_none());
    let a = snapshot_from_values(vec![(node, "workload cluster")], Vec::new()).unwrap();
    let b = snapshot_from_values(vec![(trimmed, "workload cluster")], Vec::new()).unwrap();
    assert_eq!(a.nodes, b.nodes);
}

/// Stores holding `objects`, fed as the watchers feed them (compacted), and their writers
/// (which must outlive the stores' use).
fn stores_of(objects: &[serde_json::Value]) -> (Stores, Vec<Writer<DynamicObject>>) {
    let mut entries = Vec::new();
    let mut writers = Vec::new();
    for l in OBSERVED {
        let (store, mut writer) = store_for(&l.resource);
        writer.apply_watcher_event(&Event::Init);
        for v in objects.iter().filter(|v| {
            v["kind"] == l.resource.kind
                && v["apiVersion"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(l.resource.group)
        }) {
            let mut o: DynamicObject = serde_json::from_value(v.clone()).unwrap();
            compact(&mut o, l.resource.kind);
            writer.apply_watcher_event(&Event::InitApply(o));
        }
        writer.apply_watcher_event(&Event::InitDone);
        entries.push((*l, l.resource, store));
        writers.push(writer);
    }
    (Stores::from_parts(entries, Vec::new()), writers)
}

/// Objects as an API server returns them: managedFields, last-applied, a Node's images and
/// node info, every status a kubelet writes, a pod with a sidecar, a claim and all the
/// defaults the API server fills in.
fn realistic_cluster() -> Vec<serde_json::Value> {
    let managed = json!([{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T09:00:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}]);
    let conditions = |types: &[&str], time: &str| -> serde_json::Value {
        types
            .iter()
            .map(|t| {
                json!({"type": t, "status": "True", "reason": t, "message": "m",
            "lastHeartbeatTime": time, "lastTransitionTime": time})
            })
            .collect()
    };
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-1", "uid": "n1", "resourceVersion": "41", "creationTimestamp": "2026-11-30T08:00:00Z",
            "labels": {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a", "karpenter.sh/nodepool": "default",
                "node.kubernetes.io/instance-type": "f00", "karpenter.sh/registered": "true"},
            "annotations": {LAST_APPLIED_ANNOTATION: "{\"big\": true}", "cluster.x-k8s.io/machine": "m-1", "node.alpha.kubernetes.io/ttl": "0"},
            "finalizers": ["karpenter.sh/termination"], "managedFields": managed},
        "spec": {"providerID": "openstack:///1", "podCIDR": "10.0.0.0/24", "taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110", "ephemeral-storage": "95Gi"},
            "conditions": conditions(&["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"], "2026-11-30T09:59:00Z"),
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.36.1", "architecture": "amd64", "machineID": "x"},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": ["registry.example.com/app@sha256:0123", "registry.example.com/app:v1"], "sizeBytes": 100000000}]}});
    let claim = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-1", "uid": "c1", "resourceVersion": "42", "creationTimestamp": "2026-11-30T08:00:00Z",
            "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "f00"},
            "annotations": {"cluster.x-k8s.io/machine": "capi/m-1", LAST_APPLIED_ANNOTATION: "{}"},
            "finalizers": ["karpenter.sh/termination"], "managedFields": managed},
        "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["f00"]}],
            "resources": {"requests": {"cpu": "1"}}, "expireAfter": "720h"},
        "status": {"providerID": "openstack:///1", "nodeName": "node-1", "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110"}, "lastPodEventTime": "2026-11-30T09:30:00Z",
            "conditions": conditions(&["Launched", "Registered", "Initialized", "Ready"], "2026-11-30T08:05:00Z")}});
    let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": "m-1", "namespace": "capi", "uid": "m1", "resourceVersion": "43", "creationTimestamp": "2026-11-30T08:00:00Z",
            "labels": {"cluster.x-k8s.io/deployment-name": "capi-karpenter-f00", "node.cluster.x-k8s.io/karpenter-member": ""},
            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet", "name": "ms", "uid": "ms", "controller": true}],
            "managedFields": managed},
        "spec": {"clusterName": "capi", "providerID": "openstack:///1",
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "cfg"}},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": "osm"}},
        "status": {"phase": "Running", "nodeRef": {"name": "node-1"}, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "conditions": conditions(&["Available", "Ready", "NodeHealthy"], "2026-11-30T08:05:00Z")}});
    let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "metadata": {"name": "capi-karpenter-f00", "namespace": "capi", "uid": "md", "resourceVersion": "44", "generation": 3,
            "labels": {"node.cluster.x-k8s.io/karpenter-member": "", "cluster.x-k8s.io/cluster-name": "capi"},
            "annotations": {LAST_APPLIED_ANNOTATION: "{\"spec\": {}}",
                "capacity.cluster-autoscaler.kubernetes.io/cpu": "4", "capacity.cluster-autoscaler.kubernetes.io/memory": "16Gi",
                "capacity.cluster-autoscaler.kubernetes.io/maxPods": "110",
                "capacity.cluster-autoscaler.kubernetes.io/labels": "topology.kubernetes.io/zone=a,node.kubernetes.io/instance-type=f00",
                "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "10"},
            "managedFields": managed},
        "spec": {"clusterName": "capi", "replicas": 1, "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "capi-karpenter-f00"}},
            "template": {"spec": {"clusterName": "capi", "version": "v1.36.1",
                "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "t"}},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "f00"}}}},
        "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 3,
            "conditions": conditions(&["Available"], "2026-11-30T08:05:00Z")}});
    let pod = |name: &str, bound: bool| {
        let mut p = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team", "uid": format!("uid-{name}"), "resourceVersion": "45", "generateName": "web-",
                "creationTimestamp": "2026-11-30T09:00:00Z", "labels": {"app": "web", "pod-template-hash": "h"},
                "annotations": {LAST_APPLIED_ANNOTATION: "x".repeat(200), "karpenter.sh/do-not-disrupt": "true", "prometheus.io/scrape": "true"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-h", "uid": "rs", "controller": true}],
                "managedFields": managed},
            "spec": {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority",
                "schedulerName": "default-scheduler", "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "serviceAccountName": "web",
                "serviceAccount": "web", "enableServiceLinks": true, "terminationGracePeriodSeconds": 30,
                "securityContext": {"runAsNonRoot": true}, "imagePullSecrets": [{"name": "pull"}], "nodeSelector": {"topology.kubernetes.io/zone": "a"},
                "overhead": {"cpu": "10m"}, "schedulingGates": [],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
                    "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}}}],
                "initContainers": [{"name": "proxy", "image": "proxy:1", "restartPolicy": "Always", "imagePullPolicy": "IfNotPresent",
                    "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}, "env": [{"name": "A", "value": "1"}]}],
                "containers": [{"name": "web", "image": "web:1", "imagePullPolicy": "Always", "command": ["/web"], "args": ["--port=8080"],
                    "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": 8080}}, "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": format!("data-{name}")}},
                    {"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"]}}}},
                    {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]},
            "status": {"phase": "Pending", "qosClass": "Burstable",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes",
                    "lastProbeTime": null, "lastTransitionTime": "2026-11-30T09:00:01Z"}]}});
        if bound {
            p["spec"]["nodeName"] = json!("node-1");
            p["status"] = json!({"phase": "Running", "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}], "hostIP": "10.0.0.1",
                "startTime": "2026-11-30T09:00:02Z", "qosClass": "Burstable",
                "conditions": conditions(&["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"], "2026-11-30T09:00:03Z"),
                "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "web:1", "imageID": "sha", "state": {"running": {}}}]});
        }
        p
    };
    vec![
        node,
        claim,
        machine,
        md,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a", "managedFields": managed},
            "spec": {"csi": {"driver": "d", "volumeHandle": "h"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-web-0", "namespace": "team",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv-a"}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"}, "provisioner": "d",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]}),
        pod("web-0", false),
        pod("web-1", true),
    ]
}

/// Every record the core reads is the same from the stores' trimmed, compacted objects as
/// from the objects as listed, and what writes send back (resourceVersion, uid, finalizers,
/// labels and annotations but last-applied, which nothing reads) survives. Container args and statuses are `doctor`'s, which
/// lists instead of watching.
#[test]
fn stores_keep_everything_the_snapshot_and_the_writes_read() {
    let objects = realistic_cluster();
    let full = objects
        .iter()
        .map(|v| (v.clone(), "workload cluster"))
        .collect();
    let listed = snapshot_from_values(full, Vec::new()).unwrap();
    let (stores, _writers) = stores_of(&objects);
    let stored = stores.snapshot().unwrap();

    let doctors = |s: &Snapshot| -> Vec<PodRecord> {
        s.pods
            .iter()
            .map(|p| PodRecord::clone(p))
            .map(|mut p| {
                std::sync::Arc::make_mut(&mut p.annotations).remove(LAST_APPLIED_ANNOTATION);
                for c in std::sync::Arc::make_mut(&mut p.containers).iter_mut() {
                    c.args.clear();
                    (c.ready, c.restart_count) = (false, 0);
                    (c.waiting, c.last_terminated) = (None, None);
                }
                p
            })
            .collect()
    };
    assert_eq!(stored.pods.len(), 2);
    assert_eq!(doctors(&stored), doctors(&listed));
    assert!(
        listed
            .pods
            .iter()
            .all(|p| !p.demand.volume_requirements.is_empty())
    );
    assert_eq!(stored.pods[0].uid.as_deref(), Some("uid-web-0"));
    let mut nodes = listed.nodes.clone();
    std::sync::Arc::make_mut(&mut nodes[0].annotations).remove(LAST_APPLIED_ANNOTATION);
    assert_eq!(stored.nodes, nodes);
    assert_eq!(stored.nodes[0].finalizers, ["karpenter.sh/termination"]);
    let mut claims = listed.nodeclaims.clone();
    claims[0].annotations.remove(LAST_APPLIED_ANNOTATION);
    assert_eq!(stored.nodeclaims, claims);
    assert_eq!(stored.machines, listed.machines);
    assert_eq!(stored.volume_claims, listed.volume_claims);
    assert_eq!(stored.volumes, listed.volumes);
    assert_eq!(stored.storage_classes, listed.storage_classes);
    assert_eq!(stored.nodepools, listed.nodepools);
    assert_eq!(stored.warnings, listed.warnings);
    assert_eq!(stored.machines_observed, listed.machines_observed);
    // MachineDeployments are kept whole (the controller reads them as objects): only
    // managedFields and last-applied go, and the resourceVersion a scale sends stays.
    let (a, b) = (
        &listed.machine_deployments[0],
        &stored.machine_deployments[0],
    );
    assert_eq!((a.member, &a.flavor), (b.member, &b.flavor));
    assert_eq!(b.object.meta.resource_version.as_deref(), Some("44"));
    assert_eq!(b.object.meta.generation, Some(3));
    let mut whole = a.object.value.clone();
    whole["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    whole["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(LAST_APPLIED_ANNOTATION);
    assert_eq!(b.object.value, whole);

    let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
    let a = controller::plan(&listed, now, &Config::default());
    let b = controller::plan(&stored, now, &Config::default());
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        serde_json::to_value(&b).unwrap()
    );
    // What was dropped is gone from the stores.
    let text = format!(
        "{:?}",
        stores
            .entries
            .iter()
            .flat_map(|(_, _, s)| s.state())
            .collect::<Vec<_>>()
    );
    for gone in [
        "managedFields",
        "last-applied",
        "sizeBytes",
        "kubeletVersion",
        "qosClass",
        "dnsPolicy",
        "readinessProbe",
        "projected",
        "MemoryPressure",
        "ContainersReady",
    ] {
        assert!(!text.contains(gone), "{gone} is still stored");
    }
}

/// A pending pod whose claim is bound to a volume of zone `b`: the stores keep the claim
/// volume (the others are dropped) and the snapshot resolves it against the claim and the
/// volume, as a full listing does; before, continuous mode planned such pods in any zone.
#[test]
fn stores_resolve_pod_volumes_like_a_full_listing() {
    let mut claimed = pod("db-0", None);
    claimed["spec"]["volumes"] = json!([
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "cfg"}}]);
    let objects = vec![
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-1", "managedFields": [{"manager": "x"}]},
            "spec": {"capacity": {"storage": "1Gi"}, "csi": {"driver": "d", "volumeHandle": "h"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-db-0", "namespace": "default",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv-1", "storageClassName": "zonal"}}),
        claimed,
        pod("web", None),
    ];
    let full = objects
        .iter()
        .map(|v| (v.clone(), "workload cluster"))
        .collect();
    let listed = snapshot_from_values(full, Vec::new()).unwrap();
    let (stores, _writers) = stores_of(&objects);
    let stored = stores.snapshot().unwrap();
    let db = |s: &Snapshot| {
        s.pods
            .iter()
            .find(|p| p.demand.name == "db-0")
            .unwrap()
            .demand
            .volume_requirements
            .clone()
    };
    assert_eq!(db(&listed).len(), 1, "the claim's volume restricts the pod");
    assert_eq!(db(&stored), db(&listed));
    assert_eq!(stored.warnings, listed.warnings);
    for (a, b) in listed.pods.iter().zip(&stored.pods) {
        assert_eq!(a.demand, b.demand);
    }
}

#[test]
fn stores_plan_like_a_full_listing() {
    let seed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/scenarios/seed-3cpu.yaml"
    ));
    let Ok(seed) = seed else { return };
    let mut objects: Vec<serde_json::Value> = seed
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str::<serde_json::Value>(d).unwrap())
        .filter(|v| v["kind"] != "Deployment")
        .collect();
    // Some pods bound, some pending, in no particular order.
    for i in (0..257).rev() {
        objects.push(pod(
            &format!("p-{i:04}"),
            (i % 3 != 0).then_some("elsewhere"),
        ));
    }
    // A live listing comes sorted by namespace and name, as etcd keys are.
    let key = |v: &serde_json::Value| {
        (
            v["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            v["metadata"]["name"].as_str().unwrap_or("").to_string(),
        )
    };
    objects.sort_by_key(key);
    let full: Vec<(serde_json::Value, &'static str)> = objects
        .iter()
        .map(|v| (v.clone(), "workload cluster"))
        .collect();
    let listed = snapshot_from_values(full, Vec::new()).unwrap();

    let (stores, _writers) = stores_of(&objects);
    let stored = stores.snapshot().unwrap();
    assert_eq!(stored.pods.len(), listed.pods.len());
    let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
    let a = controller::plan(&listed, now, &Config::default());
    let b = controller::plan(&stored, now, &Config::default());
    assert!(!a.actions.is_empty());
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        serde_json::to_value(&b).unwrap()
    );
}

/// M-PODEV-002: a pod event recorded for a Node that is not in the stores is dropped (its claim
/// gets no lastPodEventTime from it), and one for a Node that is there reaches the snapshot.
#[test]
fn pod_events_of_nodes_that_are_gone_are_dropped() {
    let t: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
    let (stores, _writers) = stores_of(&realistic_cluster());
    stores.record_pod_event("node-1", t);
    stores.record_pod_event("node-9", t);
    let snapshot = stores.snapshot().unwrap();
    assert_eq!(
        snapshot.pod_events.keys().collect::<Vec<_>>(),
        vec!["node-1"]
    );
    let without_nodes: Vec<serde_json::Value> = realistic_cluster()
        .into_iter()
        .filter(|v| v["kind"] != "Node")
        .collect();
    let (stores, _writers) = stores_of(&without_nodes);
    stores.record_pod_event("node-1", t);
    assert!(stores.snapshot().unwrap().pod_events.is_empty());
}
