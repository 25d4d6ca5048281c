//! The resource types this tool lists and writes: group, version, kind, plural and scope of
//! each, the one table the shell builds its API handles from and the plan's writes name.

use serde::Serialize;

/// A Kubernetes resource type: what the API server calls it and how it is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResourceType {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

impl ResourceType {
    /// `group/version` or `version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// karpenter.sh/v1 NodeClaim.
pub const NODE_CLAIM: ResourceType = ResourceType {
    group: "karpenter.sh",
    version: "v1",
    kind: "NodeClaim",
    plural: "nodeclaims",
    namespaced: false,
};
/// karpenter.sh/v1 NodePool.
pub const NODE_POOL: ResourceType = ResourceType {
    group: "karpenter.sh",
    version: "v1",
    kind: "NodePool",
    plural: "nodepools",
    namespaced: false,
};
/// ClusterAPINodeClass.
pub const NODE_CLASS: ResourceType = ResourceType {
    group: "karpenter.cluster.x-k8s.io",
    version: "v1alpha1",
    kind: "ClusterAPINodeClass",
    plural: "clusterapinodeclasses",
    namespaced: false,
};
/// Core Node.
pub const NODE: ResourceType = ResourceType {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    namespaced: false,
};
/// Core Pod.
pub const POD: ResourceType = ResourceType {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    namespaced: true,
};
/// Cluster API MachineDeployment (the version is the one the object was read with).
pub const MACHINE_DEPLOYMENT: ResourceType = ResourceType {
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    kind: "MachineDeployment",
    plural: "machinedeployments",
    namespaced: true,
};
/// Cluster API Machine.
pub const MACHINE: ResourceType = ResourceType {
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    kind: "Machine",
    plural: "machines",
    namespaced: true,
};
/// Cluster API MachineSet (read only: rollouts hold scale-downs back).
pub const MACHINE_SET: ResourceType = ResourceType {
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    kind: "MachineSet",
    plural: "machinesets",
    namespaced: true,
};
/// Cluster API Cluster (read only: a paused Cluster holds scale-downs back).
pub const CLUSTER: ResourceType = ResourceType {
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    kind: "Cluster",
    plural: "clusters",
    namespaced: true,
};
/// apps/v1 DaemonSet (listed only).
pub const DAEMON_SET: ResourceType = ResourceType {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    plural: "daemonsets",
    namespaced: true,
};
/// policy/v1 PodDisruptionBudget (listed only).
pub const POD_DISRUPTION_BUDGET: ResourceType = ResourceType {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    namespaced: true,
};
/// core/v1 PersistentVolumeClaim (listed only: volume topology).
pub const PERSISTENT_VOLUME_CLAIM: ResourceType = ResourceType {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    namespaced: true,
};
/// core/v1 PersistentVolume (listed only: volume topology).
pub const PERSISTENT_VOLUME: ResourceType = ResourceType {
    group: "",
    version: "v1",
    kind: "PersistentVolume",
    plural: "persistentvolumes",
    namespaced: false,
};
/// storage.k8s.io/v1 StorageClass (listed only: volume topology).
pub const STORAGE_CLASS: ResourceType = ResourceType {
    group: "storage.k8s.io",
    version: "v1",
    kind: "StorageClass",
    plural: "storageclasses",
    namespaced: false,
};
/// node.k8s.io/v1 RuntimeClass (listed only: `overhead.podFixed` sizes the pods and DaemonSets
/// naming it whose `spec.overhead` is unset).
pub const RUNTIME_CLASS: ResourceType = ResourceType {
    group: "node.k8s.io",
    version: "v1",
    kind: "RuntimeClass",
    plural: "runtimeclasses",
    namespaced: false,
};
/// Cluster API bootstrap KubeadmConfigTemplate (listed only).
pub const KUBEADM_CONFIG_TEMPLATE: ResourceType = ResourceType {
    group: "bootstrap.cluster.x-k8s.io",
    version: "v1beta2",
    kind: "KubeadmConfigTemplate",
    plural: "kubeadmconfigtemplates",
    namespaced: true,
};
