//! Every label, annotation, taint and finalizer key this tool shares with the API server:
//! Kubernetes' well-known labels, Karpenter's and Cluster API's keys, and our own
//! (`karpenter-capi/...`), each defined once.

/// The instance type (flavor) of a node.
pub(crate) const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
/// The zone of a node.
pub(crate) const ZONE: &str = "topology.kubernetes.io/zone";
/// The node's hostname: unique per node.
pub(crate) const HOSTNAME: &str = "kubernetes.io/hostname";
/// The region of a node.
pub(crate) const REGION: &str = "topology.kubernetes.io/region";
/// The deprecated beta alias of [`ZONE`].
pub(crate) const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// The deprecated beta alias of [`REGION`].
pub(crate) const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// The deprecated beta alias of [`ARCH`].
pub(crate) const BETA_ARCH: &str = "beta.kubernetes.io/arch";
/// The deprecated beta alias of [`OS`].
pub(crate) const BETA_OS: &str = "beta.kubernetes.io/os";
/// The deprecated beta alias of [`INSTANCE_TYPE`].
pub(crate) const BETA_INSTANCE_TYPE: &str = "beta.kubernetes.io/instance-type";
/// Each deprecated alias with the stable key a requirement on it is read as (core
/// `pkg/apis/v1/labels.go` `NormalizedLabels`).
pub(crate) const NORMALIZED_LABELS: [(&str, &str); 5] = [
    (BETA_ZONE, ZONE),
    (BETA_REGION, REGION),
    (BETA_ARCH, ARCH),
    (BETA_OS, OS),
    (BETA_INSTANCE_TYPE, INSTANCE_TYPE),
];
/// The PersistentVolumeClaim annotation the volume binder sets once the claim is bound to its
/// volume; a claim naming a volume without it is not bound yet (kube-scheduler's binder).
pub(crate) const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";
/// CPU architecture.
pub(crate) const ARCH: &str = "kubernetes.io/arch";
/// Operating system.
pub(crate) const OS: &str = "kubernetes.io/os";
/// Karpenter's capacity type (on-demand, spot, reserved).
pub(crate) const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// The NodePool a node belongs to.
pub(crate) const NODEPOOL: &str = "karpenter.sh/nodepool";
/// Annotation that blocks disruption of a node or a pod (`"true"`).
pub(crate) const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";
/// Pod annotation ranking how much deleting the pod costs (Kubernetes' ReplicaSet scale-down
/// hint, an integer); Karpenter weighs it into a pod's eviction cost.
pub(crate) const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// The label naming a Machine's MachineDeployment.
pub(crate) const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
/// The label naming a Machine's MachineSet.
pub(crate) const SET_NAME_LABEL: &str = "cluster.x-k8s.io/set-name";
/// The annotation that makes CAPI delete this Machine first on scale-down.
pub const DELETE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/delete-machine";
/// Our annotation beside `cluster.x-k8s.io/delete-machine`: the mark is ours, for this NodeClaim
/// (or `surplus`). A mark without it is someone else's.
pub(crate) const MARKED_FOR_ANNOTATION: &str = "karpenter-capi/marked-for";
/// The NodeClaim annotation naming its Machine (`namespace/name`), shared with the upstream provider.
pub const MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/machine";
/// Our annotation naming the MachineDeployment a NodeClaim was planned on (`namespace/name`).
pub(crate) const MACHINE_DEPLOYMENT_ANNOTATION: &str = "karpenter-capi/machine-deployment";
/// Karpenter's NodePool hash annotation.
pub(crate) const NODEPOOL_HASH_ANNOTATION: &str = "karpenter.sh/nodepool-hash";
/// The membership label on a MachineDeployment's `metadata.labels`.
pub(crate) const MEMBER_LABEL: &str = "node.cluster.x-k8s.io/karpenter-member";
/// Karpenter's taint on a node that has not been adopted yet.
pub(crate) const UNREGISTERED_TAINT_KEY: &str = "karpenter.sh/unregistered";
/// Karpenter's taint on a node being disrupted.
pub(crate) const DISRUPTED_TAINT_KEY: &str = "karpenter.sh/disrupted";
/// The well-known Node label that takes a node out of cloud load balancers' targets (Kubernetes'
/// service controller checks for the key); core's terminator sets it on a terminating Node.
pub const EXCLUDE_FROM_LOAD_BALANCERS_LABEL: &str =
    "node.kubernetes.io/exclude-from-external-load-balancers";
/// The value core's terminator gives [`EXCLUDE_FROM_LOAD_BALANCERS_LABEL`].
pub const EXCLUDE_FROM_LOAD_BALANCERS_VALUE: &str = "karpenter";
/// Our NodeClaim annotation recording when the drain of its node started (RFC 3339).
pub(crate) const DRAIN_STARTED_ANNOTATION: &str = "karpenter-capi/drain-started";
/// Karpenter's NodeClaim annotation: when its node must be gone, the claim's deletion time plus
/// its `terminationGracePeriod` (RFC 3339).
pub(crate) const TERMINATION_TIMESTAMP_ANNOTATION: &str =
    "karpenter.sh/nodeclaim-termination-timestamp";
/// Karpenter's Node and NodeClaim finalizer.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// Our NodeClaim annotation recording why its node is being disrupted (voluntary reasons wait for
/// a home for the pods; forceful ones drain at once).
pub(crate) const DISRUPTION_REASON_ANNOTATION: &str = "karpenter-capi/disruption-reason";
/// Our NodeClaim annotation: how many replacements its disruption command waits for.
pub(crate) const REPLACEMENTS_ANNOTATION: &str = "karpenter-capi/replacements";
/// The taint every node must register with so Karpenter adopts it.
pub(crate) const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered:NoExecute";
/// Karpenter's annotation naming the version of the hash in [`NODEPOOL_HASH_ANNOTATION`].
pub(crate) const HASH_VERSION_ANNOTATION: &str = "karpenter.sh/nodepool-hash-version";
/// Our NodeClaim annotation recording when a Machine was adopted (RFC 3339).
pub(crate) const ADOPTED_ANNOTATION: &str = "karpenter-capi/adopted";
/// The node-class label Karpenter puts on nodes: `<group>/<lowercase kind>`.
pub(crate) const NODE_CLASS_LABEL: &str = "karpenter.cluster.x-k8s.io/clusterapinodeclass";
/// Our NodeClaim annotation: a hash of its MachineDeployment's `spec.template` at creation.
pub(crate) const TEMPLATE_HASH_ANNOTATION: &str = "karpenter-capi/machine-template-hash";
/// The annotation on a replacement NodeClaim naming the nodes it replaces (comma-separated).
pub(crate) const REPLACES_ANNOTATION: &str = "karpenter-capi/replaces";
/// Our annotation on the leader-election Lease: the controller's watches failing for longer
/// than the bound, as JSON (`diagnose::watches`); absent while every watch works. `doctor`
/// reads it, since it cannot see a running controller's memory.
pub const WATCH_HEALTH_ANNOTATION: &str = "karpenter-capi/watch-health";
/// Cluster API's pause annotation (on a Cluster or any of its objects).
pub(crate) const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// Cluster API's label naming a Machine's or MachineDeployment's Cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Label Karpenter puts on a node it adopted.
pub(crate) const REGISTERED_LABEL: &str = "karpenter.sh/registered";
/// Label Karpenter puts on a node once its NodeClaim is initialized.
pub const INITIALIZED_LABEL: &str = "karpenter.sh/initialized";
/// Node label by which a user asks Karpenter not to copy the NodeClaim's taints onto the Node at
/// registration.
pub(crate) const DO_NOT_SYNC_TAINTS_LABEL: &str = "karpenter.sh/do-not-sync-taints";
/// CAPI's taint on a Node until the Machine controller has synced its labels.
pub(crate) const CAPI_UNINITIALIZED_TAINT_KEY: &str = "node.cluster.x-k8s.io/uninitialized";
/// The node lifecycle controller's taint on a Node that is not Ready.
pub(crate) const NOT_READY_TAINT_KEY: &str = "node.kubernetes.io/not-ready";
/// The annotation on the kubeconfig Secret saying when its token expires (RFC 3339).
pub const TOKEN_EXPIRES_ANNOTATION: &str = "karpenter-capi.sh/token-expires";
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The type of a legacy, never-expiring ServiceAccount token Secret.
pub const LEGACY_TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
/// Names the ServiceAccount of a legacy token Secret.
pub(crate) const SERVICE_ACCOUNT_ANNOTATION: &str = "kubernetes.io/service-account.name";
