//! The cluster as a plan grows: existing and planned nodes with their free resources, the pods
//! on them, and the topology index that required pod (anti-)affinity is checked against.

use std::collections::{BTreeSet, HashMap};

use super::catalog::Offering;
use super::fit::{Unfit, static_fit, static_ok};
use crate::model::labels::{Labels, keys};
use crate::model::pod::AffinityTerm;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::model::taints::Taint;

/// Where a node in the plan comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOrigin {
    /// An existing Node (index into the snapshot's nodes).
    Existing(usize),
    /// A node launched but not yet registered, of this offering (index into the offerings).
    InFlight(usize),
    /// A new node of this offering.
    New(usize),
}

/// A node during planning.
#[derive(Debug, Clone)]
pub struct PlanNode {
    /// Where it comes from.
    pub origin: NodeOrigin,
    /// Name (hostname label) — synthetic for new nodes.
    pub name: String,
    /// Labels, including the hostname.
    pub labels: Labels,
    /// Taints pods must tolerate.
    pub taints: Vec<Taint>,
    /// Cordoned nodes take no pods.
    pub cordoned: bool,
    /// Free allocatable.
    pub free: Resources,
    /// Requests of the pods placed by this plan.
    pub requested: Resources,
    /// Pods placed by this plan (snapshot pod indices).
    pub pods: Vec<usize>,
    /// Host ports in use.
    pub ports: BTreeSet<String>,
}

/// The evolving cluster.
#[derive(Debug, Clone)]
pub struct ClusterState<'a> {
    snapshot: &'a Snapshot,
    /// Nodes, existing first.
    pub nodes: Vec<PlanNode>,
    /// Topology keys any pod's required (anti-)affinity uses.
    topology_keys: BTreeSet<String>,
    /// Pods (snapshot indices) per topology key, then per domain value.
    residents: HashMap<String, HashMap<String, Vec<usize>>>,
    /// Every pod placed or bound, for "no matching pod anywhere" affinity checks.
    all_residents: Vec<usize>,
    new_count: usize,
}

impl<'a> ClusterState<'a> {
    /// The existing nodes of the snapshot with their bound pods subtracted, then the in-flight
    /// NodeClaims (launched or launching, no Node yet) as empty nodes of their offering, so
    /// pending pods count on them before any new node is planned.
    pub fn new(snapshot: &'a Snapshot, offerings: &[Offering]) -> ClusterState<'a> {
        let topology_keys: BTreeSet<String> = snapshot
            .pods
            .iter()
            .flat_map(|p| {
                p.demand
                    .anti_affinity
                    .iter()
                    .chain(p.demand.affinity.iter())
            })
            .map(|t| t.topology_key.clone())
            .collect();
        let mut state = ClusterState {
            snapshot,
            nodes: Vec::new(),
            topology_keys,
            residents: HashMap::new(),
            all_residents: Vec::new(),
            new_count: 0,
        };
        let mut by_name = HashMap::new();
        for (i, n) in snapshot.nodes.iter().enumerate() {
            by_name.insert(n.name.as_str(), state.nodes.len());
            // A node still being initialized for a NodeClaim is counted as Karpenter does: its
            // ephemeral and startup taints are about to go.
            let initializing = snapshot.nodeclaims.iter().find(|c| {
                !c.deleting
                    && !c.condition_true("Initialized")
                    && c.provider_id.is_some()
                    && c.provider_id == n.provider_id
            });
            let taints = match initializing {
                Some(c) => n
                    .taints
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
                labels: n.labels.clone(),
                taints,
                cordoned: n.unschedulable,
                free: n.allocatable.clone(),
                requested: Resources::default(),
                pods: Vec::new(),
                ports: BTreeSet::new(),
            });
        }
        for (pi, p) in snapshot.pods.iter().enumerate() {
            if p.terminal {
                continue;
            }
            if let Some(ni) = p.node_name.as_deref().and_then(|n| by_name.get(n)).copied() {
                let node = &mut state.nodes[ni];
                node.free.sub(&p.demand.requests);
                node.ports.extend(p.demand.host_ports.iter().cloned());
                state.index_resident(pi, ni);
            }
        }
        for claim in snapshot.in_flight_claims() {
            let Some(md) = snapshot.claim_machine_deployment(claim) else {
                continue;
            };
            let found = offerings.iter().position(|o| {
                o.flavor.machine_deployment == md
                    && (o.node_pool.is_empty() || Some(&o.node_pool) == claim.node_pool.as_ref())
            });
            if let Some(o) = found {
                state.open(
                    &offerings[o],
                    NodeOrigin::InFlight(o),
                    Some(claim.name.clone()),
                );
            }
        }
        state
    }

    /// The snapshot this state plans over.
    pub fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    fn index_resident(&mut self, pod: usize, node: usize) {
        if self.topology_keys.is_empty() {
            return;
        }
        for key in &self.topology_keys {
            if let Some(v) = self.nodes[node].labels.get(key) {
                let domains = self.residents.entry(key.clone()).or_default();
                match domains.get_mut(v) {
                    Some(list) => list.push(pod),
                    None => {
                        domains.insert(v.clone(), vec![pod]);
                    }
                }
            }
        }
        self.all_residents.push(pod);
    }

    /// Adds a node of an offering (new or in flight) and returns its index.
    pub fn open(&mut self, offering: &Offering, origin: NodeOrigin, name: Option<String>) -> usize {
        self.new_count += 1;
        let name = name
            .unwrap_or_else(|| format!("{}-new-{}", offering.flavor.instance_type, self.new_count));
        let mut labels = offering.labels.clone();
        labels.insert(keys::HOSTNAME.to_string(), name.clone());
        self.nodes.push(PlanNode {
            origin,
            name,
            labels,
            taints: offering.taints.clone(),
            cordoned: false,
            free: offering.allocatable.clone(),
            requested: Resources::default(),
            pods: Vec::new(),
            ports: BTreeSet::new(),
        });
        self.nodes.len() - 1
    }

    /// Removes the last node if it holds no pods (a speculative node that took nothing).
    pub fn close_if_empty(&mut self, node: usize) {
        if node + 1 == self.nodes.len() && self.nodes[node].pods.is_empty() {
            self.nodes.pop();
        }
    }

    /// Whether a pod (snapshot index) can go on a node now.
    pub fn fits(&self, pod: usize, node: usize) -> Result<(), Unfit> {
        let n = &self.nodes[node];
        if n.cordoned {
            return Err(Unfit::Cordoned);
        }
        let demand = &self.snapshot.pods[pod].demand;
        static_fit(demand, &n.labels, &n.taints, &n.free)?;
        if let Some(port) = demand.host_ports.iter().find(|p| n.ports.contains(*p)) {
            return Err(Unfit::HostPortInUse { port: port.clone() });
        }
        if self.topology_keys.is_empty() {
            return Ok(());
        }
        self.topology_fit(pod, &n.labels)
    }

    /// Whether a pod can go on a node now: [`ClusterState::fits`] as a yes or no, without
    /// building a reason (the hot path of search).
    pub fn can_place(&self, pod: usize, node: usize) -> bool {
        let n = &self.nodes[node];
        if n.cordoned {
            return false;
        }
        let demand = &self.snapshot.pods[pod].demand;
        static_ok(demand, &n.labels, &n.taints, &n.free)
            && !demand.host_ports.iter().any(|p| n.ports.contains(p))
            && (self.topology_keys.is_empty() || self.topology_block(pod, &n.labels).is_none())
    }

    /// Required pod anti-affinity (both directions) and pod affinity against the pods already
    /// in the node's topology domains.
    pub fn topology_fit(&self, pod: usize, labels: &Labels) -> Result<(), Unfit> {
        match self.topology_block(pod, labels) {
            None => Ok(()),
            Some(TopologyBlock::AntiAffinity { other, key }) => Err(Unfit::AntiAffinity {
                pod: self.snapshot.pods[other].demand.key(),
                topology_key: key.to_string(),
            }),
            Some(TopologyBlock::Affinity { key }) => Err(Unfit::AffinityUnsatisfied {
                topology_key: key.to_string(),
            }),
        }
    }

    /// What blocks a pod in these labels' topology domains, without allocating.
    fn topology_block<'s>(&'s self, pod: usize, labels: &Labels) -> Option<TopologyBlock<'s>> {
        let pods = &self.snapshot.pods;
        let me = &pods[pod].demand;
        let in_domain = |key: &str| -> &[usize] {
            labels
                .get(key)
                .and_then(|v| self.residents.get(key).and_then(|d| d.get(v)))
                .map(Vec::as_slice)
                .unwrap_or(&[])
        };
        for term in &me.anti_affinity {
            if let Some(&other) = in_domain(&term.topology_key)
                .iter()
                .find(|&&o| selects(term, &pods[o].demand))
            {
                return Some(TopologyBlock::AntiAffinity {
                    other,
                    key: &term.topology_key,
                });
            }
        }
        for key in &self.topology_keys {
            for &other in in_domain(key) {
                let od = &pods[other].demand;
                if od
                    .anti_affinity
                    .iter()
                    .any(|t| &t.topology_key == key && selects(t, me))
                {
                    return Some(TopologyBlock::AntiAffinity { other, key });
                }
            }
        }
        for term in &me.affinity {
            let here = in_domain(&term.topology_key)
                .iter()
                .any(|&o| selects(term, &pods[o].demand));
            if here {
                continue;
            }
            let anywhere = self
                .all_residents
                .iter()
                .any(|&o| selects(term, &pods[o].demand));
            if anywhere || !selects(term, me) {
                return Some(TopologyBlock::Affinity {
                    key: &term.topology_key,
                });
            }
        }
        None
    }

    /// Places a pod on a node (the caller checked [`ClusterState::fits`]).
    pub fn place(&mut self, pod: usize, node: usize) {
        let demand = &self.snapshot.pods[pod].demand;
        let n = &mut self.nodes[node];
        n.free.sub(&demand.requests);
        n.requested.add(&demand.requests);
        n.ports.extend(demand.host_ports.iter().cloned());
        n.pods.push(pod);
        self.index_resident(pod, node);
    }

    /// Whether any pod uses required pod (anti-)affinity on a topology other than the hostname
    /// (constraints that span nodes).
    pub fn has_cross_node_constraints(&self) -> bool {
        self.snapshot.pods.iter().any(|p| {
            !p.demand.affinity.is_empty()
                || p.demand
                    .anti_affinity
                    .iter()
                    .any(|t| t.topology_key != keys::HOSTNAME)
        })
    }
}

/// What blocks a pod topologically (indices and borrowed keys: no allocation).
enum TopologyBlock<'s> {
    /// A pod (snapshot index) in the domain repels or is repelled on `key`.
    AntiAffinity { other: usize, key: &'s str },
    /// No pod the affinity term on `key` needs is in the domain.
    Affinity { key: &'s str },
}

fn selects(term: &AffinityTerm, pod: &crate::model::pod::PodDemand) -> bool {
    term.selects(&pod.namespace, &pod.labels)
}
