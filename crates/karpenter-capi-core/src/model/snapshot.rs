//! The [`Snapshot`]: everything the core may look at, built the same way from scenario files,
//! `kubectl get -o yaml` dumps or a live listing.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::flavor::{Flavor, FlavorProblem};
use super::labels::Labels;
use super::nodepool::{NodeClass, NodePool};
use super::object::RawObject;
use super::pod::PodDemand;
use super::resources::Resources;
use super::taints::Taint;
use crate::vocab::keys;

/// A pod and its scheduling state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRecord {
    /// What the pod needs; shared by every copy of the snapshot (trials copy snapshots often,
    /// and change a demand only when relaxing it: `Arc::make_mut`).
    #[serde(serialize_with = "serialize_shared")]
    pub demand: std::sync::Arc<PodDemand>,
    /// Its effective limits (nothing where none is set): Karpenter's node metrics sum them.
    #[serde(skip)]
    pub(crate) limits: super::resources::Resources,
    /// The node it is bound to.
    pub node_name: Option<String>,
    /// Kubernetes marked it `PodScheduled=False/Unschedulable`, or it has no status at all
    /// (hand-written or expanded from a workload).
    pub(crate) marked_unschedulable: bool,
    /// It has a nominatedNodeName (preemption in progress).
    pub(crate) nominated: bool,
    /// Owned by a DaemonSet or a Node (static pod).
    pub daemon: bool,
    /// Succeeded or Failed.
    pub(crate) terminal: bool,
    /// Being deleted (`metadata.deletionTimestamp`): never evicted again.
    pub(crate) terminating: bool,
    /// `metadata.deletionTimestamp`, when reported: a pod terminating for over a minute no
    /// longer holds a drain, and one due past its claim's deadline is deleted again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deleted_at: Option<Timestamp>,
    /// Its `Ready` condition is `False` (a PodDisruptionBudget with
    /// `unhealthyPodEvictionPolicy: AlwaysAllow` does not hold such a pod).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) not_ready: bool,
    /// `spec.terminationGracePeriodSeconds`, when set (the API server defaults it to 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) grace_seconds: Option<i64>,
    /// A static pod's mirror (`kubernetes.io/config.mirror` or owned by its Node): never evicted.
    pub(crate) mirror: bool,
    /// `metadata.uid`: the precondition of its eviction or forced delete.
    pub uid: Option<String>,
    /// Has scheduling gates.
    pub(crate) gated: bool,
    /// `kind/name` of its controller owner, if any.
    pub(crate) owner: Option<String>,
    /// Creation time.
    pub(crate) created: Option<Timestamp>,
    /// `status.startTime` (when the kubelet started it), when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<Timestamp>,
    /// Annotations (shared by every copy of the snapshot, like the demand).
    #[serde(serialize_with = "serialize_shared")]
    pub annotations: std::sync::Arc<Labels>,
    /// Priority class name.
    pub(crate) priority_class: Option<String>,
    /// `spec.priority` (the admission controller resolves it from the priority class), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) priority: Option<i32>,
    /// `status.phase`, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) phase: Option<String>,
    /// Containers with their images and what the kubelet reports about them (`doctor` judges
    /// the controller's own pods by these).
    #[serde(
        skip_serializing_if = "no_containers",
        serialize_with = "serialize_shared"
    )]
    pub containers: std::sync::Arc<Vec<ContainerRecord>>,
}

fn no_containers(containers: &std::sync::Arc<Vec<ContainerRecord>>) -> bool {
    containers.is_empty()
}

/// Serializes a shared value as the value itself.
fn serialize_shared<T: Serialize, S: serde::Serializer>(
    value: &std::sync::Arc<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    value.as_ref().serialize(serializer)
}

/// One container of a pod: its image and, when the pod has a status, its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecord {
    /// Container name.
    pub(crate) name: String,
    /// Image reference.
    pub(crate) image: String,
    /// `command` then `args`, as written (`doctor` reads the controller's flags from them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// `ready` from the container status.
    pub ready: bool,
    /// Restarts so far.
    pub restart_count: i32,
    /// `state.waiting` as (reason, message), e.g. `ImagePullBackOff`, `CrashLoopBackOff`.
    pub waiting: Option<(String, String)>,
    /// `lastState.terminated` as (reason, exit code).
    pub last_terminated: Option<(String, i32)>,
}

/// One unit of eviction cost in the fixed point of [`PodRecord::eviction_cost`]: 2^27, so a
/// deletion cost (an integer over 2^27) and a priority (an integer over 2^25) add exactly.
pub const EVICTION_COST_ONE: i64 = 1 << 27;

impl PodRecord {
    /// What evicting this pod costs, in units of 2^-27 ([`EVICTION_COST_ONE`] is a cost of 1):
    /// 1, plus its `controller.kubernetes.io/pod-deletion-cost` over 2^27, plus its priority over
    /// 2^25, clamped to [-10, 10]. Mirrors Karpenter's `EvictionCost` (`utils/disruption`) in
    /// exact integers: a deletion cost that is not an integer is rounded to the nearest (so at
    /// most 2^-28 off Karpenter's float), and one that does not parse adds nothing (Karpenter
    /// logs it and adds nothing).
    pub fn eviction_cost(&self) -> i64 {
        const LIMIT: i64 = 10 * EVICTION_COST_ONE;
        let deletion = self
            .annotations
            .get(crate::vocab::keys::POD_DELETION_COST)
            .and_then(|v| {
                v.parse::<i64>().ok().or_else(|| {
                    v.parse::<f64>()
                        .ok()
                        .filter(|f| !f.is_nan())
                        // Past +-2^40 the clamp below decides anyway.
                        .map(|f| f.clamp(-(2f64.powi(40)), 2f64.powi(40)).round() as i64)
                })
            })
            .unwrap_or(0)
            .clamp(-(1 << 40), 1 << 40);
        let priority = i64::from(self.priority.unwrap_or(0)) * 4;
        (EVICTION_COST_ONE + deletion + priority).clamp(-LIMIT, LIMIT)
    }

    /// Pending for the purpose of simulation: not bound, not finished, not a daemon pod.
    pub fn is_pending(&self) -> bool {
        self.node_name.is_none() && !self.terminal && !self.daemon && !self.gated && !self.nominated
    }

    /// Provisionable in Karpenter's sense: pending and marked unschedulable by the scheduler.
    pub fn is_provisionable(&self) -> bool {
        self.is_pending() && self.marked_unschedulable
    }
}

/// An existing Node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRecord {
    /// Name.
    pub name: String,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// Labels.
    pub(crate) labels: Labels,
    /// Annotations (shared by every copy of the snapshot, like the demand).
    #[serde(serialize_with = "serialize_shared")]
    pub annotations: std::sync::Arc<Labels>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// `status.allocatable`.
    pub allocatable: Resources,
    /// `status.capacity`.
    pub(crate) capacity: Resources,
    /// `spec.providerID`.
    pub(crate) provider_id: Option<String>,
    /// `Ready` condition: Some(true) when True.
    pub ready: Option<bool>,
    /// `spec.unschedulable` (cordoned).
    pub(crate) unschedulable: bool,
    /// Creation time.
    pub(crate) created: Option<Timestamp>,
    /// Being deleted (`metadata.deletionTimestamp`), held by a finalizer.
    pub(crate) deleting: bool,
    /// `metadata.deletionTimestamp`: core's termination duration counts from it.
    #[serde(skip)]
    pub(crate) deleted_at: Option<jiff::Timestamp>,
}

impl NodeRecord {
    /// Whether it carries `karpenter.sh/disrupted` (a disruption command or a drain is under
    /// way: core's `MarkedForDeletion`).
    pub(crate) fn disrupted(&self) -> bool {
        self.taints
            .iter()
            .any(|t| t.key == crate::vocab::keys::DISRUPTED_TAINT_KEY)
    }
}

/// A DaemonSet's pod, as overhead on every node it would run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct DaemonSetRecord {
    /// `namespace/name`.
    pub(crate) name: String,
    /// Its pod template.
    pub(crate) pod: PodDemand,
}

/// A MachineDeployment, member or not, with the flavor it offers (or why it offers none).
#[derive(Debug, Clone)]
pub struct MachineDeploymentRecord {
    /// The object.
    pub object: RawObject,
    /// Carries the membership label on `metadata.labels`.
    pub member: bool,
    /// Its flavor, or the problem with its annotations.
    pub flavor: Result<Flavor, FlavorProblem>,
}

impl MachineDeploymentRecord {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.object.namespace(), self.object.name())
    }
}

/// What a NodePool's node class is, as its readiness reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClassState {
    /// There (or none is named): this controller reports it Ready.
    Ready,
    /// Being deleted.
    Terminating,
    /// Not in the input.
    Missing,
}

/// Everything the core may look at.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Pods, each shared between copies of the snapshot (a consolidation trial copies the
    /// snapshot per candidate; its few changed pods are copied on write: `Arc::make_mut`).
    pub pods: Vec<std::sync::Arc<PodRecord>>,
    /// Nodes.
    pub nodes: Vec<NodeRecord>,
    /// DaemonSets.
    pub(crate) daemonsets: Vec<DaemonSetRecord>,
    /// NodePools (an implicit `default` pool when the input had none).
    pub nodepools: Vec<NodePool>,
    /// ClusterAPINodeClasses.
    pub(crate) nodeclasses: Vec<NodeClass>,
    /// MachineDeployments.
    pub machine_deployments: Vec<MachineDeploymentRecord>,
    /// Our NodeClaims (their `nodeClassRef` is a `ClusterAPINodeClass`, or names none).
    pub nodeclaims: Vec<super::nodeclaim::NodeClaimRecord>,
    /// Another Karpenter's NodeClaims (another `nodeClassRef`): never acted on; their Nodes are
    /// never ours to release (core `utils/nodeclaim` IsManaged).
    pub foreign_claims: Vec<super::nodeclaim::NodeClaimRecord>,
    /// Machines.
    pub machines: Vec<super::machine::MachineRecord>,
    /// PersistentVolumeClaims.
    pub volume_claims: Vec<super::volume::ClaimRecord>,
    /// PersistentVolumes (their node affinity).
    pub volumes: Vec<super::volume::TopologyRecord>,
    /// StorageClasses (their allowed topologies).
    pub storage_classes: Vec<super::volume::TopologyRecord>,
    /// Every other object, kept for the checks that need them (templates, RBAC, PDBs ...).
    pub objects: Vec<RawObject>,
    /// The time the snapshot is evaluated at.
    pub now: Option<Timestamp>,
    /// Things the user should know about the input (defaults applied, objects ignored).
    pub warnings: Vec<String>,
    /// Values clamped and objects skipped because the core cannot hold them exactly (each is
    /// also in `warnings`).
    pub oddities: Vec<super::odd::Oddity>,
    /// Kinds not used by the core, with counts.
    pub(crate) skipped: BTreeMap<String, usize>,
    /// True when the NodePool list was empty and `default` was implied.
    pub implicit_nodepool: bool,
    /// The latest pod event the watches saw per node (a pod bound to it, or one on it going
    /// terminal, terminating or deleted), for `status.lastPodEventTime`. Empty for a listing
    /// or files: only a watch sees events.
    pub pod_events: BTreeMap<String, Timestamp>,
    /// The Machines were listed (a live listing, or an input holding at least one Machine): only
    /// then may a Machine's absence mean it is gone.
    pub machines_observed: bool,
    /// Watched kinds (`<cluster> <resource>`) whose watch has not completed its initial list,
    /// or its re-list after a restart (kube-runtime's `Init` seen, `InitDone` not yet): their
    /// objects may be stale, so no scale-down acts on them. Empty for a listing or files.
    pub unsynced: Vec<String>,
}

impl Snapshot {
    /// The member MachineDeployments of a NodePool: those with the membership label (empty
    /// value), narrowed by its node class's `scalableResourceSelector` when set. A deliberate
    /// difference: upstream's `machinedeployment.go` List passes the label and then the
    /// selector to controller-runtime, whose `ListOptions` replaces the first by the second, so
    /// there a selector alone decides. Here the label stays required, so a broad selector (a
    /// Cluster's name, which `doctor` suggests to scope a node class) never hands an unlabelled
    /// MachineDeployment, and through adoption its nodes, to the autoscaler
    /// (docs/conformance.md, deliberate difference 8).
    pub(crate) fn members_of<'a>(
        &'a self,
        pool: &NodePool,
    ) -> impl Iterator<Item = &'a MachineDeploymentRecord> + 'a {
        let selector = pool
            .node_class
            .as_ref()
            .and_then(|name| self.nodeclasses.iter().find(|c| &c.name == name))
            .and_then(|c| c.selector.clone());
        self.machine_deployments.iter().filter(move |md| {
            md.member
                && selector
                    .as_ref()
                    .is_none_or(|sel| sel.matches(&super::object::labels_of(&md.object.meta)))
        })
    }

    /// The state of `pool`'s node class: the one thing both its `Ready` status and whether it
    /// provisions are read from.
    pub(crate) fn node_class_of(&self, pool: &NodePool) -> ClassState {
        let Some(name) = pool.node_class.as_ref() else {
            return ClassState::Ready;
        };
        match self.nodeclasses.iter().find(|c| &c.name == name) {
            Some(c) if c.deleting => ClassState::Terminating,
            Some(_) => ClassState::Ready,
            None => ClassState::Missing,
        }
    }

    /// Whether provisioning may create NodeClaims for `pool` now: [`NodePool::provisions`], and
    /// its node class is there and not being deleted. A pool naming a ClusterAPINodeClass the
    /// input lacks provisions nothing from this pass on, not only once its `Ready=False` has
    /// been written (the provider's `Create` refuses a claim whose class does not resolve,
    /// `resolveNodeClassFromNodePool`; core's readiness, `NodeClassTerminating`); an input with
    /// no node class at all (a hand-written file) is not judged missing. A pool failing
    /// Karpenter's runtime validation is not Ready either, from this pass on.
    pub(crate) fn provisions(&self, pool: &NodePool) -> bool {
        let class = match self.node_class_of(pool) {
            ClassState::Missing => self.nodeclasses.is_empty(),
            ClassState::Terminating => false,
            ClassState::Ready => true,
        };
        pool.provisions() && class && super::pool_validation::runtime_problems(pool).is_empty()
    }

    /// Every member MachineDeployment of any pool (deduplicated, in input order).
    pub(crate) fn all_members(&self) -> Vec<&MachineDeploymentRecord> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for pool in &self.nodepools {
            for md in self.members_of(pool) {
                if seen.insert(md.key()) {
                    out.push(md);
                }
            }
        }
        out
    }

    /// Objects of a kind kept in [`Snapshot::objects`].
    pub(crate) fn objects_of<'a>(
        &'a self,
        kind: &'a str,
    ) -> impl Iterator<Item = &'a RawObject> + 'a {
        self.objects.iter().filter(move |o| o.kind == kind)
    }
}

impl Snapshot {
    /// The MachineDeployment (`namespace/name`) a NodeClaim is for: our annotation, else its
    /// bound Machine's deployment, else the member of its NodePool with its instance type (and
    /// zone, when labelled).
    pub(crate) fn claim_machine_deployment(
        &self,
        claim: &super::nodeclaim::NodeClaimRecord,
    ) -> Option<String> {
        if let Some(md) = &claim.machine_deployment {
            return Some(md.clone());
        }
        if let Some(m) = claim
            .machine
            .as_ref()
            .and_then(|k| self.machines.iter().find(|m| &m.key() == k))
            && let Some(d) = m.deployment_key()
        {
            return Some(d);
        }
        let it = claim.instance_type.as_ref()?;
        let zone = claim.labels.get(keys::ZONE);
        let pool = claim
            .node_pool
            .as_ref()
            .and_then(|p| self.nodepools.iter().find(|np| &np.name == p));
        let candidates: Vec<&MachineDeploymentRecord> = match pool {
            Some(p) => self.members_of(p).collect(),
            None => self.all_members(),
        };
        candidates
            .into_iter()
            .filter_map(|md| md.flavor.as_ref().ok())
            .find(|f| &f.instance_type == it && zone.is_none_or(|z| f.zone() == Some(z.as_str())))
            .map(|f| f.machine_deployment.clone())
    }

    /// NodeClaims launched or launching whose Node is not in the snapshot yet (not deleting).
    pub(crate) fn in_flight_claims(
        &self,
    ) -> impl Iterator<Item = &super::nodeclaim::NodeClaimRecord> + '_ {
        // Sets built once: a scan of the nodes per claim is quadratic at thousands of nodes.
        let names: std::collections::HashSet<&str> =
            self.nodes.iter().map(|n| n.name.as_str()).collect();
        let provider_ids: std::collections::HashSet<&str> = self
            .nodes
            .iter()
            .filter_map(|n| n.provider_id.as_deref())
            .collect();
        self.nodeclaims.iter().filter(move |c| {
            !c.deleting
                && !c.node_name.as_deref().is_some_and(|n| names.contains(n))
                && !c
                    .provider_id
                    .as_deref()
                    .is_some_and(|p| provider_ids.contains(p))
        })
    }
}

/// The Nodes of a snapshot by name and by providerID, built once per pass: finding a claim's
/// Node by scanning every Node is quadratic at thousands of claims (10,000 claims × 10,000
/// Nodes in one pass).
#[derive(Debug)]
pub(crate) struct NodeIndex<'a> {
    nodes: &'a [NodeRecord],
    by_name: std::collections::HashMap<&'a str, usize>,
    by_provider_id: std::collections::HashMap<&'a str, usize>,
}

impl<'a> NodeIndex<'a> {
    /// Indexes the snapshot's Nodes (the first of duplicate names or providerIDs wins, as a
    /// scan in order would find it).
    pub(crate) fn new(snapshot: &'a Snapshot) -> NodeIndex<'a> {
        let mut by_name = std::collections::HashMap::with_capacity(snapshot.nodes.len());
        let mut by_provider_id = std::collections::HashMap::with_capacity(snapshot.nodes.len());
        for (i, n) in snapshot.nodes.iter().enumerate() {
            by_name.entry(n.name.as_str()).or_insert(i);
            if let Some(pid) = n.provider_id.as_deref() {
                by_provider_id.entry(pid).or_insert(i);
            }
        }
        NodeIndex {
            nodes: &snapshot.nodes,
            by_name,
            by_provider_id,
        }
    }

    /// A claim's Node: the first Node named as its `status.nodeName` or carrying its
    /// providerID (the same Node a scan in order finds).
    pub(crate) fn of_claim(
        &self,
        claim: &super::nodeclaim::NodeClaimRecord,
    ) -> Option<&'a NodeRecord> {
        self.find(claim.node_name.as_deref(), claim.provider_id.as_deref())
    }

    /// The first Node with this name or this providerID.
    pub(crate) fn find(
        &self,
        name: Option<&str>,
        provider_id: Option<&str>,
    ) -> Option<&'a NodeRecord> {
        let by_name = name.and_then(|n| self.by_name.get(n).copied());
        let by_pid = provider_id.and_then(|p| self.by_provider_id.get(p).copied());
        let i = match (by_name, by_pid) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        self.nodes.get(i)
    }

    /// The Node of this name.
    pub(crate) fn named(&self, name: &str) -> Option<&'a NodeRecord> {
        self.by_name.get(name).and_then(|&i| self.nodes.get(i))
    }
}

/// The Machines of a snapshot by `namespace/name`, and the Nodes by providerID (all of them, in
/// order), built once per pass: a claim's Machine or Nodes found by scanning every Machine or
/// Node is quadratic at thousands of claims.
#[derive(Debug)]
pub struct MachineIndex<'a> {
    machines: &'a [super::machine::MachineRecord],
    by_key: std::collections::HashMap<String, usize>,
    nodes_by_provider_id: std::collections::HashMap<&'a str, Vec<&'a NodeRecord>>,
}

impl<'a> MachineIndex<'a> {
    /// Indexes the snapshot's Machines (the first of duplicate keys wins, as a scan in order
    /// would find it) and Nodes.
    pub fn new(snapshot: &'a Snapshot) -> MachineIndex<'a> {
        let mut by_key = std::collections::HashMap::with_capacity(snapshot.machines.len());
        for (i, m) in snapshot.machines.iter().enumerate() {
            // A claim names its Machine as `namespace/name`, split at the first `/`: a
            // namespace holding one (never so in a cluster) could not be named.
            if !m.namespace.contains('/') {
                by_key
                    .entry(format!("{}/{}", m.namespace, m.name))
                    .or_insert(i);
            }
        }
        let mut nodes_by_provider_id: std::collections::HashMap<&str, Vec<&NodeRecord>> =
            std::collections::HashMap::with_capacity(snapshot.nodes.len());
        for n in &snapshot.nodes {
            if let Some(pid) = n.provider_id.as_deref() {
                nodes_by_provider_id.entry(pid).or_default().push(n);
            }
        }
        MachineIndex {
            machines: &snapshot.machines,
            by_key,
            nodes_by_provider_id,
        }
    }

    /// The Machine a claim's annotation names, if it exists (`lifecycle::bound_machine`).
    pub fn bound(
        &self,
        claim: &super::nodeclaim::NodeClaimRecord,
    ) -> Option<&'a super::machine::MachineRecord> {
        let key = claim.machine.as_deref().filter(|k| k.contains('/'))?;
        self.by_key.get(key).and_then(|&i| self.machines.get(i))
    }

    /// The Nodes with this providerID, in order.
    pub fn nodes_for(&self, provider_id: &str) -> Vec<&'a NodeRecord> {
        self.nodes_by_provider_id
            .get(provider_id)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, pid: Option<&str>) -> NodeRecord {
        NodeRecord {
            name: name.to_string(),
            finalizers: Vec::new(),
            labels: Labels::default(),
            annotations: Default::default(),
            taints: Vec::new(),
            allocatable: Resources::default(),
            capacity: Resources::default(),
            provider_id: pid.map(str::to_string),
            ready: Some(true),
            unschedulable: false,
            created: None,
            deleting: false,
            deleted_at: None,
        }
    }

    #[test]
    fn the_node_index_finds_the_node_a_scan_in_order_finds() {
        let snapshot = Snapshot {
            nodes: vec![
                node("a", Some("p:a")),
                node("b", Some("p:shared")),
                node("c", Some("p:shared")),
                node("a", Some("p:dup-name")),
            ],
            ..Snapshot::default()
        };
        let index = NodeIndex::new(&snapshot);
        let scan = |name: Option<&str>, pid: Option<&str>| {
            snapshot.nodes.iter().position(|n| {
                name == Some(n.name.as_str()) || (pid.is_some() && n.provider_id.as_deref() == pid)
            })
        };
        let at = |n: Option<&NodeRecord>| {
            n.and_then(|n| snapshot.nodes.iter().position(|m| std::ptr::eq(m, n)))
        };
        for (name, pid) in [
            (Some("c"), Some("p:shared")),
            (Some("a"), None),
            (None, Some("p:dup-name")),
            (Some("x"), Some("p:none")),
            (None, None),
            (Some("c"), Some("p:a")),
        ] {
            assert_eq!(
                at(index.find(name, pid)),
                scan(name, pid),
                "{name:?} {pid:?}"
            );
        }
    }

    #[test]
    fn the_machine_index_finds_what_a_scan_in_order_finds() {
        let machine = |ns: &str, name: &str, pid: &str| {
            format!(
                "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {{clusterName: c, providerID: '{pid}'}}\n"
            )
        };
        let claim = |name: &str, machine: &str| {
            format!(
                "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: {name}, annotations: {{cluster.x-k8s.io/machine: '{machine}'}}}}\nspec: {{requirements: []}}\n"
            )
        };
        let node = |name: &str, pid: &str| {
            format!(
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nspec: {{providerID: '{pid}'}}\n"
            )
        };
        let text = [
            machine("capi", "a", "p:1"),
            machine("other", "a", "p:2"),
            machine("capi", "b", "p:3"),
            claim("c1", "capi/a"),
            claim("c2", "other/a"),
            claim("c3", "capi/zz"),
            claim("c4", "noslash"),
            claim("c5", "capi/b"),
            claim("c6", "/a"),
            // Malformed references name no Machine (the provider's ParseMachineAnnotation
            // refuses them; K-PROVS-003..010): a second slash, an empty or blank part, no
            // trimming, and an empty value (read as no annotation).
            claim("c7", "capi/a/x"),
            claim("c8", "capi/"),
            claim("c9", "/"),
            claim("c10", "  /a"),
            claim("c11", "capi/  "),
            claim("c12", " capi / a "),
            claim("c13", ""),
            node("n1", "p:1"),
            node("n2", "p:3"),
            node("n3", "p:1"),
        ]
        .concat();
        let snapshot = crate::model::load::snapshot_from_sources(&[crate::model::load::Source {
            name: "t.yaml".into(),
            text,
        }])
        .unwrap();
        let index = MachineIndex::new(&snapshot);
        let found: Vec<Option<String>> = snapshot
            .nodeclaims
            .iter()
            .map(|c| {
                index
                    .bound(c)
                    .map(super::super::machine::MachineRecord::key)
            })
            .collect();
        let scanned: Vec<Option<String>> = snapshot
            .nodeclaims
            .iter()
            .map(|c| crate::controller::lifecycle::bound_machine(&snapshot, c).map(|m| m.key()))
            .collect();
        assert_eq!(found, scanned);
        assert_eq!(
            found,
            [
                Some("capi/a"),
                Some("other/a"),
                None,
                None,
                Some("capi/b"),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None
            ]
            .map(|k| k.map(str::to_string))
        );
        assert_eq!(snapshot.nodeclaims[12].machine, None);
        let names = |pid: &str| -> Vec<String> {
            index
                .nodes_for(pid)
                .iter()
                .map(|n| n.name.clone())
                .collect()
        };
        assert_eq!(names("p:1"), ["n1", "n3"]);
        assert_eq!(names("p:9"), Vec::<String>::new());
        assert_eq!(
            names("p:1"),
            crate::controller::lifecycle::nodes_for(&snapshot, "p:1")
                .iter()
                .map(|n| n.name.clone())
                .collect::<Vec<_>>()
        );
    }
}
