//! The cluster as a plan grows: existing and planned nodes with their free resources, the pods
//! on them, the topology index that pod (anti-)affinity is checked against, and the topology
//! spread counts ([`Spread`]).

use std::collections::HashMap;

use std::sync::Arc;

use super::catalog::{Offering, daemon_runs_on};
use super::fit::{Unfit, static_fit, static_ok};
use super::min_values::{ClaimOptions, MinValues};
use super::topology::Spread;
use super::topology::affinity::AffinityIndex;
use crate::model::hostport::{HostPort, first_clash};
use crate::model::labels::Labels;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::model::taints::Taint;
use crate::vocab::keys;

/// Where a node in the plan comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeOrigin {
    /// An existing Node (index into the snapshot's nodes).
    Existing(usize),
    /// A node launched but not yet registered, of this offering (index into the offerings).
    InFlight(usize),
    /// A new node of this offering.
    New(usize),
}

/// A node during planning.
#[derive(Debug, Clone)]
pub(crate) struct PlanNode {
    /// Where it comes from.
    pub(crate) origin: NodeOrigin,
    /// Name (hostname label) — synthetic for new nodes.
    pub(crate) name: String,
    /// Labels, including the hostname.
    pub(crate) labels: Labels,
    /// Taints pods must tolerate.
    pub(crate) taints: Vec<Taint>,
    /// Cordoned nodes take no pods.
    pub(crate) cordoned: bool,
    /// Free allocatable.
    pub(crate) free: Resources,
    /// Requests of the pods placed by this plan.
    pub(crate) requested: Resources,
    /// Pods placed by this plan (snapshot pod indices).
    pub(crate) pods: Vec<usize>,
    /// Host ports in use (the pods' and, on a new node, its DaemonSets').
    pub(crate) ports: Vec<HostPort>,
    /// On a new node of a pool with `minValues` (when the plan tracks them): the offerings its
    /// NodeClaim may still list.
    pub(crate) claim: Option<ClaimOptions>,
}

/// The evolving cluster.
#[derive(Debug, Clone)]
pub(crate) struct ClusterState<'a> {
    snapshot: &'a Snapshot,
    /// Nodes, existing first.
    pub(crate) nodes: Vec<PlanNode>,
    /// Pod (anti-)affinity terms and what they select per domain.
    affinity: AffinityIndex,
    /// Topology spread groups and their counts.
    spread: Spread,
    new_count: usize,
    /// While a trial runs ([`ClusterState::begin_trial`]): what to undo.
    journal: Option<Journal>,
    /// The NodePools' `minValues`, when the plan keeps them ([`ClusterState::track_min_values`]).
    min_values: Option<Arc<MinValues>>,
}

/// What a trial changed, to undo it: the node count and name counter before it, the nodes that
/// existed before it as they were when it first placed a pod on them, and its placements.
#[derive(Debug, Clone)]
struct Journal {
    nodes: usize,
    new_count: usize,
    saved: Vec<(usize, PlanNode)>,
    placed: Vec<(usize, usize)>,
}

impl<'a> ClusterState<'a> {
    /// The existing nodes of the snapshot with their bound pods subtracted, then the in-flight
    /// NodeClaims (launched or launching, no Node yet) as empty nodes of their offering, so
    /// pending pods count on them before any new node is planned.
    pub(crate) fn new(snapshot: &'a Snapshot, offerings: &[Offering]) -> ClusterState<'a> {
        let mut state = ClusterState {
            snapshot,
            nodes: Vec::new(),
            affinity: AffinityIndex::new(snapshot),
            spread: Spread::default(),
            new_count: 0,
            journal: None,
            min_values: None,
        };
        // Looked up once per bound pod: a fast hash (lookups only, so its seed changes nothing).
        let mut by_name = ahash::AHashMap::with_capacity(snapshot.nodes.len());
        // Claims still initializing by providerID (the first one, as a scan in order would
        // find it): one pass over the claims, not one per node (trials build this state often).
        let mut initializing_by_pid = HashMap::new();
        for c in snapshot
            .nodeclaims
            .iter()
            .filter(|c| !c.deleting && !c.condition_true("Initialized"))
        {
            if let Some(pid) = c.provider_id.as_deref() {
                initializing_by_pid.entry(pid).or_insert(c);
            }
        }
        let initializing_of = |n: &crate::model::snapshot::NodeRecord| {
            n.provider_id
                .as_deref()
                .and_then(|pid| initializing_by_pid.get(pid).copied())
        };
        // Initialized nodes first, then the ones still initializing, each in snapshot order:
        // every strategy tries standing nodes in this order, so a pod goes to a node that is
        // ready for it before one still coming up (mirrors core `scheduler.go`
        // `sortExistingNodes`; in-flight claims, never initialized, come after both).
        let mut order: Vec<usize> = (0..snapshot.nodes.len()).collect();
        order.sort_by_key(|&i| initializing_of(&snapshot.nodes[i]).is_some());
        for i in order {
            let n = &snapshot.nodes[i];
            by_name.insert(n.name.as_str(), state.nodes.len());
            // A node still being initialized for a NodeClaim is counted as Karpenter does: its
            // ephemeral and startup taints are about to go. Initialization is the claim's
            // Initialized condition: a Node labelled initialized whose claim is not yet (the
            // label got ahead of the claim) is still coming up, and its not-ready and
            // unreachable taints are not held against pods.
            let initializing = initializing_of(n);
            // Until its Node is registered, a claim's node is seen through the claim, as core's
            // `pkg/controllers/state/statenode.go` (`Labels`, `Taints`: the NodeClaim's while
            // neither registered nor initialized): the kubelet's Node lacks the labels only the
            // flavor has (the MachineDeployment's capacity labels), which registration copies.
            // Judged by the Node's labels, a pending pod that selects such a label would not fit
            // on the node launched for it, and would get a second claim in the very pass that
            // registers the first.
            let unregistered = initializing.filter(|_| {
                ![keys::REGISTERED_LABEL, keys::INITIALIZED_LABEL]
                    .iter()
                    .any(|k| n.labels.get(*k).is_some_and(|v| v == "true"))
            });
            let labels = match unregistered {
                Some(c) => {
                    let mut labels = c.labels.clone();
                    labels.insert(
                        keys::HOSTNAME.to_string(),
                        n.labels
                            .get(keys::HOSTNAME)
                            .cloned()
                            .unwrap_or_else(|| n.name.clone()),
                    );
                    labels
                }
                None => n.labels.clone(),
            };
            let own_taints = match unregistered {
                Some(c) => &c.taints,
                None => &n.taints,
            };
            let taints = match initializing {
                Some(c) => own_taints
                    .iter()
                    .filter(|t| {
                        !crate::model::taints::is_joining(&t.key)
                            && !c.startup_taints.iter().any(|s| s.key == t.key)
                    })
                    .cloned()
                    .collect(),
                None => n.taints.clone(),
            };
            state.nodes.push(PlanNode {
                origin: NodeOrigin::Existing(i),
                name: n.name.clone(),
                labels,
                taints,
                // A Node being deleted takes no pods (core's scheduler skips nodes marked for
                // deletion): planned onto it they would be pending again when it goes.
                cordoned: n.unschedulable || n.deleting,
                free: match initializing {
                    Some(c) => claimed_allocatable(snapshot, c, &n.allocatable),
                    None => n.allocatable.clone(),
                },
                requested: Resources::default(),
                pods: Vec::new(),
                ports: Vec::new(),
                claim: None,
            });
        }
        // What the DaemonSet pods bound to each node request (core `StateNode.DaemonSetRequests`).
        let mut daemon_bound = vec![Resources::default(); state.nodes.len()];
        for (pi, p) in snapshot.pods.iter().enumerate() {
            if p.terminal {
                continue;
            }
            if let Some(ni) = p.node_name.as_deref().and_then(|n| by_name.get(n)).copied() {
                let node = &mut state.nodes[ni];
                node.free.sub(&p.demand.requests);
                node.ports.extend(p.demand.host_ports.iter().cloned());
                if p.owner
                    .as_deref()
                    .is_some_and(|o| o.starts_with("DaemonSet/"))
                {
                    daemon_bound[ni].add(&p.demand.requests);
                }
                state.index_resident(pi, ni);
            }
        }
        if !snapshot.daemonsets.is_empty() {
            for (node, bound) in state.nodes.iter_mut().zip(&daemon_bound) {
                node.free.sub(&daemon_room_left(snapshot, node, bound));
            }
        }
        for claim in snapshot.in_flight_claims() {
            let Some(md) = snapshot.claim_machine_deployment(claim) else {
                continue;
            };
            let of_claim = |o: &Offering| {
                o.flavor.machine_deployment == md
                    && (o.node_pool.is_empty() || Some(&o.node_pool) == claim.node_pool.as_ref())
            };
            // Of a flavor offered with several values of a pool requirement, the one the
            // claim's labels name.
            let found = offerings
                .iter()
                .position(|o| {
                    of_claim(o)
                        && o.labels
                            .iter()
                            .all(|(k, v)| claim.labels.get(k).is_none_or(|c| c == v))
                })
                .or_else(|| offerings.iter().position(of_claim));
            if let Some(o) = found {
                state.open(
                    &offerings[o],
                    NodeOrigin::InFlight(o),
                    Some(claim.name.clone()),
                );
            }
        }
        if snapshot.pods.iter().any(|p| !p.demand.spread.is_empty()) {
            let nodes: Vec<(&Labels, &[Taint])> = state
                .nodes
                .iter()
                .map(|n| (&n.labels, n.taints.as_slice()))
                .collect();
            let mut spread = Spread::new(snapshot, &nodes, offerings);
            if !spread.is_empty() {
                // Bound pods count where they run, unless finished or terminating (mirrors
                // core `topology.go` `IgnoredForTopology`): a pod being deleted, a drained one
                // among them, no longer holds its domain against the pods replacing it.
                for p in snapshot
                    .pods
                    .iter()
                    .filter(|p| !p.terminal && !p.terminating)
                {
                    if let Some(&ni) = p.node_name.as_deref().and_then(|n| by_name.get(n)) {
                        let node = &state.nodes[ni];
                        spread.record(&p.demand, &node.labels, &node.taints);
                    }
                }
            }
            state.spread = spread;
        }
        state
    }

    /// The snapshot this state plans over.
    pub(crate) fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    fn index_resident(&mut self, pod: usize, node: usize) {
        if !self.affinity.is_empty() {
            let demand = &self.snapshot.pods[pod].demand;
            self.affinity.record(pod, demand, &self.nodes[node].labels);
        }
    }

    /// Adds a node of an offering (new or in flight) and returns its index.
    pub(crate) fn open(
        &mut self,
        offering: &Offering,
        origin: NodeOrigin,
        name: Option<String>,
    ) -> usize {
        self.new_count += 1;
        let name = name
            .unwrap_or_else(|| format!("{}-new-{}", offering.flavor.instance_type, self.new_count));
        let mut labels = offering.labels.clone();
        labels.insert(keys::HOSTNAME.to_string(), name.clone());
        let claim = match (origin, &self.min_values) {
            (NodeOrigin::New(_), Some(mv)) => mv.start(&offering.node_pool),
            _ => None,
        };
        self.nodes.push(PlanNode {
            origin,
            name,
            labels,
            taints: offering.taints.clone(),
            cordoned: false,
            free: offering.allocatable.clone(),
            requested: Resources::default(),
            pods: Vec::new(),
            ports: offering.ports.clone(),
            claim,
        });
        self.nodes.len() - 1
    }

    /// Removes the last node if it holds no pods (a speculative node that took nothing).
    pub(crate) fn close_if_empty(&mut self, node: usize) {
        if node + 1 == self.nodes.len() && self.nodes[node].pods.is_empty() {
            self.nodes.pop();
        }
    }

    /// Whether a pod (snapshot index) can go on a node now.
    pub(crate) fn fits(&self, pod: usize, node: usize) -> Result<(), Unfit> {
        let n = &self.nodes[node];
        if n.cordoned {
            return Err(Unfit::Cordoned);
        }
        let demand = &self.snapshot.pods[pod].demand;
        static_fit(demand, &n.labels, &n.taints, &n.free)?;
        if let Some(port) = first_clash(&demand.host_ports, &n.ports) {
            return Err(Unfit::HostPortInUse {
                port: port.to_string(),
            });
        }
        if let Some(unfit) = self.claim_unmet(pod, node) {
            return Err(unfit);
        }
        if self.affinity.is_empty() && self.spread.is_empty() {
            return Ok(());
        }
        self.topology_fit(pod, &n.labels)
    }

    /// Keeps the NodePools' `minValues` from here on: each new node then tracks the offerings
    /// its NodeClaim may list, and takes no pod that would leave them short ([`MinValues`]).
    pub(crate) fn track_min_values(&mut self, min_values: Option<Arc<MinValues>>) {
        self.min_values = min_values;
    }

    /// The options the node's claim would keep with the pod on it, when it tracks them.
    fn claim_after(&self, pod: usize, node: usize) -> Option<(&ClaimOptions, Vec<usize>)> {
        let mv = self.min_values.as_deref()?;
        let n = &self.nodes[node];
        let claim = n.claim.as_ref()?;
        let demand = &self.snapshot.pods[pod].demand;
        let total = n.requested.plus(&demand.requests);
        Some((claim, mv.narrowed(claim, demand, &n.labels, &total)))
    }

    /// Why the node's claim may not take the pod under its pool's `minValues`, if it may not.
    pub(crate) fn claim_unmet(&self, pod: usize, node: usize) -> Option<Unfit> {
        let mv = self.min_values.as_deref()?;
        let (claim, options) = self.claim_after(pod, node)?;
        mv.unmet(claim, &options)
    }

    /// Whether a pod can go on a node now: [`ClusterState::fits`] as a yes or no, without
    /// building a reason for the static part (the hot path of search).
    pub(crate) fn can_place(&self, pod: usize, node: usize) -> bool {
        let n = &self.nodes[node];
        if n.cordoned {
            return false;
        }
        let demand = &self.snapshot.pods[pod].demand;
        static_ok(demand, &n.labels, &n.taints, &n.free)
            && first_clash(&demand.host_ports, &n.ports).is_none()
            && self.affinity.admits(pod, demand, &n.labels)
            && self.spread.admits(pod, demand, &n.labels)
            && (n.claim.is_none() || self.claim_unmet(pod, node).is_none())
    }

    /// Pod anti-affinity (required both directions, preferred of the pod itself), pod affinity
    /// (required and preferred) against the pods already in the node's topology domains, and
    /// the pod's topology spread constraints.
    pub(crate) fn topology_fit(&self, pod: usize, labels: &Labels) -> Result<(), Unfit> {
        let demand = &self.snapshot.pods[pod].demand;
        self.affinity.check(self.snapshot, pod, demand, labels)?;
        self.spread.check(pod, demand, labels)
    }

    /// [`ClusterState::topology_fit`] as a yes or no, without building a reason.
    pub(crate) fn topology_admits(&self, pod: usize, labels: &Labels) -> bool {
        let demand = &self.snapshot.pods[pod].demand;
        self.affinity.admits(pod, demand, labels) && self.spread.admits(pod, demand, labels)
    }

    /// Starts a trial: [`ClusterState::open`], [`ClusterState::place`] and
    /// [`ClusterState::close_if_empty`] from here on are undone by
    /// [`ClusterState::end_trial`], at the cost of what they changed rather than a copy of the
    /// whole cluster (a search tries hundreds of alternatives on one state).
    pub(crate) fn begin_trial(&mut self) {
        debug_assert!(self.journal.is_none(), "trials do not nest");
        self.journal = Some(Journal {
            nodes: self.nodes.len(),
            new_count: self.new_count,
            saved: Vec::new(),
            placed: Vec::new(),
        });
    }

    /// Undoes everything since [`ClusterState::begin_trial`]: placements in reverse order, then
    /// the nodes it opened and the nodes it touched.
    pub(crate) fn end_trial(&mut self) {
        let Some(journal) = self.journal.take() else {
            return;
        };
        for &(pod, node) in journal.placed.iter().rev() {
            let demand = &self.snapshot.pods[pod].demand;
            let n = &self.nodes[node];
            if !self.affinity.is_empty() {
                self.affinity.unrecord(pod, demand, &n.labels);
            }
            if !self.spread.is_empty() {
                self.spread.unrecord(demand, &n.labels, &n.taints);
            }
        }
        self.nodes.truncate(journal.nodes);
        for (i, node) in journal.saved {
            self.nodes[i] = node;
        }
        self.new_count = journal.new_count;
    }

    /// Places a pod on a node (the caller checked [`ClusterState::fits`]).
    pub(crate) fn place(&mut self, pod: usize, node: usize) {
        if let Some(j) = &mut self.journal {
            if node < j.nodes && !j.saved.iter().any(|(i, _)| *i == node) {
                j.saved.push((node, self.nodes[node].clone()));
            }
            j.placed.push((pod, node));
        }
        let narrowed = self.claim_after(pod, node).map(|(_, options)| options);
        let demand = &self.snapshot.pods[pod].demand;
        let n = &mut self.nodes[node];
        if let (Some(claim), Some(options)) = (&mut n.claim, narrowed) {
            claim.options = options;
        }
        n.free.sub(&demand.requests);
        n.requested.add(&demand.requests);
        n.ports.extend(demand.host_ports.iter().cloned());
        n.pods.push(pod);
        if !self.spread.is_empty() {
            let n = &self.nodes[node];
            self.spread.record(demand, &n.labels, &n.taints);
        }
        self.index_resident(pod, node);
    }

    /// The nodes that stand before any new one (existing and in flight), in order.
    pub(crate) fn standing_nodes(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&n| !matches!(self.nodes[n].origin, NodeOrigin::New(_)))
            .collect()
    }

    /// Places a pod on the first of `standing` ([`ClusterState::standing_nodes`]) that takes
    /// it now; returns whether one did. Strategies call this for every pod, before new nodes,
    /// as core `scheduler.go` `add` does: a node the pod's topology turned away before the
    /// batch may take it once the batch has filled other domains (a zone spread that allows a
    /// second pod on the in-flight claim of zone a once zone b has one).
    pub(crate) fn place_on_standing(&mut self, pod: usize, standing: &[usize]) -> bool {
        let requests = &self.snapshot.pods[pod].demand.requests;
        let found = standing
            .iter()
            .copied()
            .find(|&n| requests.fits_in(&self.nodes[n].free) && self.can_place(pod, n));
        if let Some(n) = found {
            self.place(pod, n);
        }
        found.is_some()
    }

    /// Whether any pod has constraints that span nodes: pod affinity, anti-affinity on a
    /// topology other than the hostname, preferred pod (anti-)affinity, topology spread.
    pub(crate) fn has_cross_node_constraints(&self) -> bool {
        self.snapshot.pods.iter().any(|p| p.demand.has_topology())
    }
}

/// The room an existing node keeps for the DaemonSet pods that would run on it but are not
/// bound yet: the requests of every DaemonSet judged to run there (its taints and labels, as
/// for a new node: [`daemon_runs_on`]) less what the DaemonSet pods bound to it request, never
/// below zero per resource (a DaemonSet pod our estimate did not expect takes its own room and
/// frees none). Mirrors core `scheduling/existingnode.go` `NewExistingNode` with `scheduler.go`
/// `calculateExistingNodeClaims` (v1.5 and v1.14 alike).
fn daemon_room_left(snapshot: &Snapshot, node: &PlanNode, bound: &Resources) -> Resources {
    let mut expected = Resources::default();
    for ds in &snapshot.daemonsets {
        if daemon_runs_on(&ds.pod, &node.labels, &node.taints) {
            expected.add(&ds.pod.requests);
        }
    }
    let mut left = expected.minus(bound);
    for v in [
        &mut left.cpu_millis,
        &mut left.memory_bytes,
        &mut left.ephemeral_storage_bytes,
        &mut left.pods,
    ] {
        *v = (*v).max(0);
    }
    left.extended.retain(|_, v| *v > 0);
    left
}

/// A Node's allocatable while its NodeClaim initializes: any resource it still reports as zero
/// (a device plugin not up yet: `nvidia.com/gpu: 0`) counts with its flavor's amount, as core
/// v1.14 `state/statenode.go` `Allocatable` fills zero quantities from the claim's (ours is the
/// flavor's capacity). Without it a GPU pod waiting for that very node would buy a second one.
fn claimed_allocatable(
    snapshot: &Snapshot,
    claim: &crate::model::nodeclaim::NodeClaimRecord,
    reported: &Resources,
) -> Resources {
    let mut out = reported.clone();
    let Some(capacity) = snapshot.claim_machine_deployment(claim).and_then(|md| {
        snapshot
            .machine_deployments
            .iter()
            .find(|m| m.key() == md)
            .and_then(|m| m.flavor.as_ref().ok())
            .map(|f| &f.capacity)
    }) else {
        return out;
    };
    for (mine, theirs) in [
        (&mut out.cpu_millis, capacity.cpu_millis),
        (&mut out.memory_bytes, capacity.memory_bytes),
        (
            &mut out.ephemeral_storage_bytes,
            capacity.ephemeral_storage_bytes,
        ),
        (&mut out.pods, capacity.pods),
    ] {
        if *mine == 0 {
            *mine = theirs;
        }
    }
    for (k, v) in &capacity.extended {
        let e = out.extended.entry(k.clone()).or_insert(0);
        if *e == 0 {
            *e = *v;
        }
    }
    out
}
