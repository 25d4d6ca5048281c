//! The single list of API permissions `run` uses on each cluster. `init` renders the RBAC from
//! it, `doctor` compares an identity's rights against it, and the shell only calls what it names.
//!
//! Exactly what `run` calls, no more: `tests/it/shell_run.rs` records every request the controller
//! makes against the in-memory API over a whole lifecycle (watch, provision, bind, launch,
//! register, initialize, drain, scale down, leader election) and compares the set with these
//! lists both ways.

use serde::Serialize;

/// One RBAC rule: verbs on resources of one API group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Permission {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Resource (plural), optionally `resource/subresource`.
    pub resource: &'static str,
    /// Verbs.
    pub verbs: &'static [&'static str],
}

/// What `run` does on the management cluster, in the cluster's namespace only (a Role).
pub const MANAGEMENT: &[Permission] = &[
    Permission {
        group: "cluster.x-k8s.io",
        resource: "machinedeployments",
        verbs: &["list", "watch"],
    },
    // Replicas are set with a merge patch of the scale subresource (never a read-modify-update).
    Permission {
        group: "cluster.x-k8s.io",
        resource: "machinedeployments/scale",
        verbs: &["patch"],
    },
    Permission {
        group: "cluster.x-k8s.io",
        resource: "machines",
        verbs: &["list", "watch", "patch"],
    },
    // Read only: a MachineDeployment rolling out (several MachineSets with replicas) or a paused
    // Cluster holds scale-downs back, so Cluster API deletes the exact Machine marked.
    Permission {
        group: "cluster.x-k8s.io",
        resource: "machinesets",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "cluster.x-k8s.io",
        resource: "clusters",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "bootstrap.cluster.x-k8s.io",
        resource: "kubeadmconfigtemplates",
        verbs: &["list", "watch"],
    },
];

/// What `run` does on the workload cluster (a ClusterRole: these objects are cluster-scoped or
/// span namespaces).
pub const WORKLOAD: &[Permission] = &[
    Permission {
        group: "karpenter.sh",
        resource: "nodepools",
        verbs: &["get", "list", "watch"],
    },
    // status.resources, status.nodes and Ready (read-modify-write, as on NodeClaims).
    Permission {
        group: "karpenter.sh",
        resource: "nodepools/status",
        verbs: &["patch"],
    },
    Permission {
        group: "karpenter.sh",
        resource: "nodeclaims",
        verbs: &["get", "list", "watch", "create", "patch", "delete"],
    },
    Permission {
        group: "karpenter.sh",
        resource: "nodeclaims/status",
        verbs: &["patch"],
    },
    Permission {
        group: "karpenter.cluster.x-k8s.io",
        resource: "clusterapinodeclasses",
        verbs: &["get", "list", "watch"],
    },
    Permission {
        group: "karpenter.cluster.x-k8s.io",
        resource: "clusterapinodeclasses/status",
        verbs: &["patch"],
    },
    Permission {
        group: "",
        resource: "nodes",
        verbs: &["get", "list", "watch", "patch"],
    },
    // delete: pods still on a disrupted node once its terminationGracePeriod has elapsed.
    Permission {
        group: "",
        resource: "pods",
        verbs: &["list", "watch", "delete"],
    },
    Permission {
        group: "",
        resource: "pods/eviction",
        verbs: &["create"],
    },
    Permission {
        group: "apps",
        resource: "daemonsets",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "policy",
        resource: "poddisruptionbudgets",
        verbs: &["list", "watch"],
    },
    // Volume topology: where a pending pod's volumes let it run.
    Permission {
        group: "",
        resource: "persistentvolumeclaims",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "",
        resource: "persistentvolumes",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "storage.k8s.io",
        resource: "storageclasses",
        verbs: &["list", "watch"],
    },
    // Pod overhead: a RuntimeClass's `overhead.podFixed` sizes a DaemonSet that has no pod yet.
    Permission {
        group: "node.k8s.io",
        resource: "runtimeclasses",
        verbs: &["list", "watch"],
    },
    Permission {
        group: "",
        resource: "events",
        verbs: &["create"],
    },
];

/// Leader election, in the controller's own namespace (a Role).
pub const LEADER_ELECTION: &[Permission] = &[Permission {
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: &["get", "create", "update"],
}];

/// What `init kubeconfig` (and `init --apply` with a separate management cluster) needs of the
/// identity running it on the management cluster, in the Cluster's namespace, besides applying
/// the bundle: a TokenRequest for the controller's ServiceAccount. Never granted to the
/// controller (it could then extend its own credential); `doctor` reports it there as excess.
pub const INIT_TOKEN: &[Permission] = &[Permission {
    group: "",
    resource: "serviceaccounts/token",
    verbs: &["create"],
}];

/// Whether a permission list grants `verb` on `group`/`resource`.
pub fn allows(list: &[Permission], group: &str, resource: &str, verb: &str) -> bool {
    list.iter()
        .any(|p| p.group == group && p.resource == resource && p.verbs.contains(&verb))
}
