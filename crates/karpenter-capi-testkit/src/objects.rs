//! Typed builders of the API objects test worlds are made of, each with the defaults most tests
//! want, so a test names only what it is about. Each builds a plain `serde_json::Value` (the
//! object as the API server serves it); [`Object::set`] reaches any field the methods do not.

use serde_json::{Value, json};

/// What every builder shares: its object, and metadata edits.
pub trait Object: Sized {
    /// The object being built.
    fn value_mut(&mut self) -> &mut Value;
    /// The object built.
    fn build(self) -> Value;

    /// Sets the field at the JSON pointer `path` (e.g. `/spec/replicas`), creating the objects
    /// on the way.
    fn set(mut self, path: &str, value: impl Into<Value>) -> Self {
        let mut at = self.value_mut();
        for key in path.split('/').skip(1) {
            let key = key.replace("~1", "/").replace("~0", "~");
            if let Value::Array(list) = at {
                let len = list.len();
                at = match key.parse::<usize>() {
                    Ok(i) if i < len => &mut list[i],
                    _ => panic!("{path}: no item {key} in a list of {len}"),
                };
                continue;
            }
            if !at.is_object() {
                *at = json!({});
            }
            let Value::Object(map) = at else {
                unreachable!("made an object above")
            };
            at = map.entry(key).or_insert(Value::Null);
        }
        *at = value.into();
        self
    }
    /// Adds a label.
    fn label(mut self, key: &str, value: &str) -> Self {
        self.value_mut()["metadata"]["labels"][key] = json!(value);
        self
    }
    /// Adds an annotation.
    fn annotation(mut self, key: &str, value: &str) -> Self {
        self.value_mut()["metadata"]["annotations"][key] = json!(value);
        self
    }
    /// Sets `metadata.creationTimestamp`.
    fn created(mut self, at: &str) -> Self {
        self.value_mut()["metadata"]["creationTimestamp"] = json!(at);
        self
    }
    /// Sets `metadata.uid`.
    fn uid(mut self, uid: &str) -> Self {
        self.value_mut()["metadata"]["uid"] = json!(uid);
        self
    }
    /// Adds a finalizer.
    fn finalizer(mut self, name: &str) -> Self {
        let v = self.value_mut();
        match v["metadata"]["finalizers"].as_array_mut() {
            Some(list) => list.push(json!(name)),
            None => v["metadata"]["finalizers"] = json!([name]),
        }
        self
    }
    /// Sets `metadata.deletionTimestamp`.
    fn deleting(mut self, since: &str) -> Self {
        self.value_mut()["metadata"]["deletionTimestamp"] = json!(since);
        self
    }
}

macro_rules! builder {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[must_use]
        pub struct $name(Value);

        impl Object for $name {
            fn value_mut(&mut self) -> &mut Value {
                &mut self.0
            }
            fn build(self) -> Value {
                self.0
            }
        }

        impl From<$name> for Value {
            fn from(b: $name) -> Value {
                b.0
            }
        }
    };
}

/// The reference of a NodePool or NodeClaim to the `ClusterAPINodeClass` `name`.
pub fn node_class_ref(name: &str) -> Value {
    json!({"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": name})
}

/// A Ready condition (`type` True), as the status conditions list holds it.
fn condition(type_: &str) -> Value {
    json!({"type": type_, "status": "True"})
}

builder!(
    /// A `ClusterAPINodeClass` with an empty spec.
    NodeClass
);

impl NodeClass {
    /// `name`, with no status.
    pub fn new(name: &str) -> NodeClass {
        NodeClass(
            json!({"apiVersion": "karpenter.cluster.x-k8s.io/v1alpha1", "kind": "ClusterAPINodeClass",
            "metadata": {"name": name}, "spec": {}}),
        )
    }
    /// With a `Ready` condition.
    pub fn ready(self) -> NodeClass {
        self.set("/status", json!({"conditions": [condition("Ready")]}))
    }
    /// With a `Ready` condition as the controller writes it (reason, empty message, `since`).
    pub fn ready_since(self, since: &str) -> NodeClass {
        self.set(
            "/status",
            json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                "message": "", "lastTransitionTime": since}]}),
        )
    }
}

builder!(
    /// A `NodePool` referring to the node class `default`, with no requirements.
    NodePool
);

impl NodePool {
    /// `name`: node class `default`, `requirements: []`, no disruption settings.
    pub fn new(name: &str) -> NodePool {
        NodePool(
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"spec": {"nodeClassRef": node_class_ref("default"), "requirements": []}}}}),
        )
    }
    /// Adds a requirement of the template.
    pub fn requirement(mut self, key: &str, operator: &str, values: &[&str]) -> NodePool {
        let r = json!({"key": key, "operator": operator, "values": values});
        match self.0["spec"]["template"]["spec"]["requirements"].as_array_mut() {
            Some(list) => list.push(r),
            None => self.0["spec"]["template"]["spec"]["requirements"] = json!([r]),
        }
        self
    }
    /// The template's `expireAfter`.
    pub fn expire_after(self, after: &str) -> NodePool {
        self.set("/spec/template/spec/expireAfter", after)
    }
    /// `spec.weight`.
    pub fn weight(self, weight: i64) -> NodePool {
        self.set("/spec/weight", weight)
    }
    /// `spec.disruption`: the consolidation policy and `consolidateAfter`, one budget of `nodes`.
    pub fn disruption(self, policy: &str, consolidate_after: &str, nodes: &str) -> NodePool {
        self.set(
            "/spec/disruption",
            json!({"consolidationPolicy": policy, "consolidateAfter": consolidate_after,
                "budgets": [{"nodes": nodes}]}),
        )
    }
    /// `spec.limits`.
    pub fn limits(self, limits: Value) -> NodePool {
        self.set("/spec/limits", limits)
    }
}

builder!(
    /// A `DaemonSet` whose template requests some CPU.
    DaemonSet
);

impl DaemonSet {
    /// `namespace/name`, selecting and labelling its pods `k8s-app: <name>`, one container
    /// requesting `cpu`.
    pub fn new(namespace: &str, name: &str, cpu: &str) -> DaemonSet {
        DaemonSet(
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"k8s-app": name}}, "template": {"metadata": {"labels": {"k8s-app": name}},
              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}}),
        )
    }
    /// Its pods tolerate every taint.
    pub fn tolerate_all(self) -> DaemonSet {
        self.set(
            "/spec/template/spec/tolerations",
            json!([{"operator": "Exists"}]),
        )
    }
}

builder!(
    /// A Cluster API `MachineDeployment` (v1beta2).
    MachineDeployment
);

/// The Cluster Autoscaler's capacity annotations a member MachineDeployment describes its
/// Machines with.
const CAPACITY: &str = "capacity.cluster-autoscaler.kubernetes.io/";

impl MachineDeployment {
    /// `namespace/name` in the cluster named like the namespace, at `replicas: 0`, not a member.
    pub fn new(namespace: &str, name: &str) -> MachineDeployment {
        MachineDeployment(
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterName": namespace, "replicas": 0}}),
        )
    }
    /// Labelled a member of the autoscaler (`node.cluster.x-k8s.io/karpenter-member`).
    pub fn member(self) -> MachineDeployment {
        self.label("node.cluster.x-k8s.io/karpenter-member", "")
    }
    /// The capacity annotations: `cpu` and `memory` (quantities as written).
    pub fn capacity(self, cpu: &str, memory: &str) -> MachineDeployment {
        self.annotation(&format!("{CAPACITY}cpu"), cpu)
            .annotation(&format!("{CAPACITY}memory"), memory)
    }
    /// The `maxPods` capacity annotation.
    pub fn max_pods(self, pods: &str) -> MachineDeployment {
        self.annotation(&format!("{CAPACITY}maxPods"), pods)
    }
    /// The node labels annotation (`k=v,k=v`).
    pub fn node_labels(self, labels: &str) -> MachineDeployment {
        self.annotation(&format!("{CAPACITY}labels"), labels)
    }
    /// The price annotation (per hour, as written).
    pub fn price(self, price: &str) -> MachineDeployment {
        self.annotation(&format!("{CAPACITY}price"), price)
    }
    /// `spec.replicas`.
    pub fn replicas(self, replicas: i64) -> MachineDeployment {
        self.set("/spec/replicas", replicas)
    }
    /// `spec.clusterName` (and the template's).
    pub fn cluster(mut self, cluster: &str) -> MachineDeployment {
        self.0["spec"]["clusterName"] = json!(cluster);
        if self.0["spec"]["template"]["spec"].is_object() {
            self.0["spec"]["template"]["spec"]["clusterName"] = json!(cluster);
        }
        self
    }
    /// Selects its Machines by `cluster.x-k8s.io/deployment-name`, with a Machine template in
    /// its cluster.
    pub fn selecting(mut self) -> MachineDeployment {
        let name = self.0["metadata"]["name"].clone();
        let cluster = self.0["spec"]["clusterName"].clone();
        self.0["spec"]["selector"] =
            json!({"matchLabels": {"cluster.x-k8s.io/deployment-name": name}});
        self.0["spec"]["template"] = json!({"spec": {"clusterName": cluster}});
        self
    }
    /// The Kubernetes version of the Machine template.
    pub fn version(self, version: &str) -> MachineDeployment {
        self.set("/spec/template/spec/version", version)
    }
    /// `metadata.resourceVersion`, `metadata.generation` and `status.observedGeneration`
    /// (a view in sync at `generation`).
    pub fn observed(self, resource_version: &str, generation: i64) -> MachineDeployment {
        self.set("/metadata/resourceVersion", resource_version)
            .set("/metadata/generation", generation)
            .set("/status/observedGeneration", generation)
    }
}

builder!(
    /// A Cluster API `Cluster` (v1beta2) with an empty spec.
    Cluster
);

impl Cluster {
    /// `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> Cluster {
        Cluster(
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace}, "spec": {}}),
        )
    }
    /// `spec.paused`.
    pub fn paused(self) -> Cluster {
        self.set("/spec/paused", true)
    }
}

builder!(
    /// A Cluster API `MachineSet` (v1beta2).
    MachineSet
);

impl MachineSet {
    /// `namespace/name` of the MachineDeployment `deployment` (in the cluster named like the
    /// namespace), with `replicas` in spec and status.
    pub fn new(namespace: &str, name: &str, deployment: &str, replicas: i64) -> MachineSet {
        MachineSet(
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
            "metadata": {"name": name, "namespace": namespace,
              "labels": {"cluster.x-k8s.io/deployment-name": deployment}},
            "spec": {"clusterName": namespace, "replicas": replicas}, "status": {"replicas": replicas}}),
        )
    }
}

builder!(
    /// A Cluster API `Machine` (v1beta2).
    Machine
);

impl Machine {
    /// `namespace/name` in the cluster named like the namespace, with no provider ID or Node.
    pub fn new(namespace: &str, name: &str) -> Machine {
        Machine(
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterName": namespace}}),
        )
    }
    /// Owned by the MachineDeployment `name` (`cluster.x-k8s.io/deployment-name`).
    pub fn deployment(self, name: &str) -> Machine {
        self.label("cluster.x-k8s.io/deployment-name", name)
    }
    /// Labelled a member of the autoscaler.
    pub fn member(self) -> Machine {
        self.label("node.cluster.x-k8s.io/karpenter-member", "")
    }
    /// `spec.providerID`.
    pub fn provider_id(self, id: &str) -> Machine {
        self.set("/spec/providerID", id)
    }
    /// `spec.clusterName`.
    pub fn cluster(self, cluster: &str) -> Machine {
        self.set("/spec/clusterName", cluster)
    }
    /// `status.nodeRef`: its Node.
    pub fn node(self, node: &str) -> Machine {
        self.set("/status/nodeRef", json!({"name": node}))
    }
}

builder!(
    /// A `Node`.
    Node
);

impl Node {
    /// `name`, labelled with its hostname, with no capacity yet.
    pub fn new(name: &str) -> Node {
        Node(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}))
    }
    /// `status.capacity` and `status.allocatable`, both `cpu`, `memory` and `pods`.
    pub fn capacity(mut self, cpu: &str, memory: &str, pods: &str) -> Node {
        let r = json!({"cpu": cpu, "memory": memory, "pods": pods});
        self.0["status"]["capacity"] = r.clone();
        self.0["status"]["allocatable"] = r;
        self
    }
    /// `spec.providerID`.
    pub fn provider_id(self, id: &str) -> Node {
        self.set("/spec/providerID", id)
    }
    /// A `Ready` condition.
    pub fn ready(self) -> Node {
        self.set("/status/conditions", json!([condition("Ready")]))
    }
    /// Adds a taint.
    pub fn taint(mut self, key: &str, effect: &str) -> Node {
        let t = json!({"key": key, "effect": effect});
        match self.0["spec"]["taints"].as_array_mut() {
            Some(list) => list.push(t),
            None => self.0["spec"]["taints"] = json!([t]),
        }
        self
    }
}

builder!(
    /// A Karpenter `NodeClaim`.
    NodeClaim
);

impl NodeClaim {
    /// `name` of the NodePool `pool` (label), node class `default`, `requirements: []`.
    pub fn new(name: &str, pool: &str) -> NodeClaim {
        NodeClaim(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool}},
            "spec": {"nodeClassRef": node_class_ref("default"), "requirements": []}}))
    }
    /// The `node.kubernetes.io/instance-type` label.
    pub fn instance_type(self, flavor: &str) -> NodeClaim {
        self.label("node.kubernetes.io/instance-type", flavor)
    }
    /// Bound to the Machine `namespace/name` (`cluster.x-k8s.io/machine`).
    pub fn machine(self, machine: &str) -> NodeClaim {
        self.annotation("cluster.x-k8s.io/machine", machine)
    }
    /// Launched in the MachineDeployment `namespace/name` (`karpenter-capi/machine-deployment`).
    pub fn machine_deployment(self, md: &str) -> NodeClaim {
        self.annotation("karpenter-capi/machine-deployment", md)
    }
    /// The status of a claim launched, not registered.
    pub fn launched(self) -> NodeClaim {
        self.set("/status", json!({"conditions": [condition("Launched")]}))
    }
    /// The status of a claim registered as `node` with `provider_id`, initialized at
    /// `initialized_at`.
    pub fn initialized(self, provider_id: &str, node: &str, initialized_at: &str) -> NodeClaim {
        self.set(
            "/status",
            json!({"providerID": provider_id, "nodeName": node, "conditions": [
                condition("Launched"), condition("Registered"),
                {"type": "Initialized", "status": "True", "lastTransitionTime": initialized_at}]}),
        )
    }
}

builder!(
    /// A `Pod` with one container.
    Pod
);

impl Pod {
    /// `namespace/name`, phase Running, one container `c` with no requests.
    pub fn new(namespace: &str, name: &str) -> Pod {
        Pod(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Running"}}))
    }
    /// The container requests `cpu`.
    pub fn cpu(self, cpu: &str) -> Pod {
        self.set("/spec/containers/0/resources/requests/cpu", cpu)
    }
    /// The container requests `memory`.
    pub fn memory(self, memory: &str) -> Pod {
        self.set("/spec/containers/0/resources/requests/memory", memory)
    }
    /// The container's image.
    pub fn image(self, image: &str) -> Pod {
        self.set("/spec/containers/0/image", image)
    }
    /// Bound to `node`.
    pub fn on(self, node: &str) -> Pod {
        self.set("/spec/nodeName", node)
    }
    /// Pending and unschedulable (`PodScheduled` False, `Unschedulable`).
    pub fn pending(self) -> Pod {
        self.set(
            "/status",
            json!({"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}),
        )
    }
    /// Controlled by the DaemonSet `name` (uid `uid`).
    pub fn daemon_set(self, name: &str, uid: &str) -> Pod {
        self.set(
            "/metadata/ownerReferences",
            json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": uid, "controller": true}]),
        )
    }
    /// Tolerates every taint.
    pub fn tolerate_all(self) -> Pod {
        self.set("/spec/tolerations", json!([{"operator": "Exists"}]))
    }
    /// Tolerates the taint `key` (any value and effect).
    pub fn toleration(self, key: &str) -> Pod {
        self.set(
            "/spec/tolerations",
            json!([{"key": key, "operator": "Exists"}]),
        )
    }
    /// `spec.priorityClassName`.
    pub fn priority_class(self, class: &str) -> Pod {
        self.set("/spec/priorityClassName", class)
    }
}

builder!(
    /// A `PodDisruptionBudget` (policy/v1).
    Pdb
);

impl Pdb {
    /// `namespace/name` selecting the pods labelled `key: value`, with no limit yet.
    pub fn new(namespace: &str, name: &str, key: &str, value: &str) -> Pdb {
        Pdb(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {key: value}}}}),
        )
    }
    /// `spec.maxUnavailable`.
    pub fn max_unavailable(self, n: impl Into<Value>) -> Pdb {
        self.set("/spec/maxUnavailable", n)
    }
    /// `spec.minAvailable`.
    pub fn min_available(self, n: impl Into<Value>) -> Pdb {
        self.set("/spec/minAvailable", n)
    }
    /// `status.disruptionsAllowed`.
    pub fn allowed(self, n: i64) -> Pdb {
        self.set("/status/disruptionsAllowed", n)
    }
}
