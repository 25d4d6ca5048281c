//! The annotation keys read from MachineDeployments to size and price a flavor: Cluster
//! Autoscaler's `capacity.cluster-autoscaler.kubernetes.io/*` scale-from-zero keys, its node-group
//! size bounds, and the price proposals of karpenter-provider-cluster-api.

/// CPU capacity (quantity).
pub(crate) const CPU: &str = "capacity.cluster-autoscaler.kubernetes.io/cpu";
/// Memory capacity (quantity).
pub(crate) const MEMORY: &str = "capacity.cluster-autoscaler.kubernetes.io/memory";
/// Pod capacity (integer, default 110).
pub(crate) const MAX_PODS: &str = "capacity.cluster-autoscaler.kubernetes.io/maxPods";
/// Ephemeral storage capacity (quantity).
pub(crate) const EPHEMERAL_DISK: &str = "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk";
/// GPU count (integer), with [`GPU_TYPE`].
pub(crate) const GPU_COUNT: &str = "capacity.cluster-autoscaler.kubernetes.io/gpu-count";
/// GPU resource name, e.g. `nvidia.com/gpu`.
pub(crate) const GPU_TYPE: &str = "capacity.cluster-autoscaler.kubernetes.io/gpu-type";
/// The would-be node's labels, `k=v,k2=v2`.
pub(crate) const LABELS: &str = "capacity.cluster-autoscaler.kubernetes.io/labels";
/// The would-be node's taints, `k=v:Effect,...`.
pub const TAINTS: &str = "capacity.cluster-autoscaler.kubernetes.io/taints";
/// Price per hour (karpenter-provider-cluster-api PR #92 proposal).
pub const PRICE: &str = "capacity.cluster-autoscaler.kubernetes.io/price";
/// Price per hour (karpenter-provider-cluster-api PR #57 proposal).
pub(crate) const PRICE_ALT: &str = "cluster.x-k8s.io/machine-current-price";
/// Minimum replicas.
pub(crate) const MIN_SIZE: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
/// Maximum replicas.
pub(crate) const MAX_SIZE: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
