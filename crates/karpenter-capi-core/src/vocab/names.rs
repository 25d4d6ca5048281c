//! The names of the objects this tool creates or competes for: the field manager of every write,
//! the leader-election Leases, and the generated identities, Secrets and Services `init` renders
//! and `doctor` looks for.

/// The field manager of every write.
pub const FIELD_MANAGER: &str = "karpenter-capi";
/// The Lease's name.
pub const LEASE_NAME: &str = "karpenter-capi";
/// The Lease `run --dry-run --leader-elect` competes for instead: a dry-run replica never takes
/// or holds the live controller's Lease (a dry-run winner would leave the real controller idle),
/// yet dry-run replicas still elect one of themselves to log the plan.
pub const DRY_RUN_LEASE_NAME: &str = "karpenter-capi-dry-run";
/// The controller's ServiceAccount, Role and RoleBinding on the management cluster.
pub fn management_identity(cluster: &str) -> String {
    format!("{cluster}-karpenter-capi")
}
/// The controller's ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment on the
/// workload cluster.
pub const WORKLOAD_IDENTITY: &str = "karpenter-capi";
/// Its leader-election Role and RoleBinding.
pub const LEADER_ELECTION: &str = "karpenter-capi-leader-election";
/// The Secret with the management kubeconfig.
pub const MANAGEMENT_KUBECONFIG_SECRET: &str = "karpenter-capi-management-kubeconfig";
/// The key of the kubeconfig in that Secret.
pub(crate) const MANAGEMENT_KUBECONFIG_KEY: &str = "kubeconfig";
/// The key of a minted token in that Secret (the kubeconfig's `tokenFile`).
pub(crate) const MANAGEMENT_TOKEN_KEY: &str = "token";
/// Where the Deployment mounts it.
pub(crate) const MANAGEMENT_KUBECONFIG_DIR: &str = "/etc/karpenter-capi/management";
/// The NodePool and ClusterAPINodeClass.
pub(crate) const NODEPOOL: &str = "default";
/// The Service (and optional ServiceMonitor) of the controller's `/metrics`.
pub const METRICS_SERVICE: &str = "karpenter-capi-metrics";

/// The NodeClaim condition core's consistency controller sets (`ConditionTypeConsistentStateFound`):
/// True while the claim's Node is what was expected, False when a check failed.
pub const CONSISTENT_STATE_FOUND: &str = "ConsistentStateFound";
/// Its reason when False (core `nodeclaim/consistency/controller.go`).
pub const CONSISTENCY_CHECK_FAILED: &str = "ConsistencyCheckFailed";
/// Core's `FailedConsistencyCheck` Event reason (`pkg/events/reason.go`), a Warning on the claim.
pub const FAILED_CONSISTENCY_CHECK: &str = "FailedConsistencyCheck";
