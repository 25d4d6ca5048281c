//! `status`'s view of a cluster as data (eks-node-viewer's job for Cluster API): per NodePool and
//! node the flavor, zone, age, pods, requests against allocatable and price per hour; the
//! NodeClaims in flight; why each pending pod is pending; and what the running nodes cost per
//! hour against what each strategy would pay for the current pods now. Pure: a [`Snapshot`] in,
//! a [`ClusterStatus`] out; the command line renders it.

mod cost;
mod pending;
pub mod selector;

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use serde::Serialize;

use crate::model::flavor::{Flavor, Price};
use crate::model::labels::Requirement;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::resources::Resources;
use crate::model::snapshot::{NodeRecord, Snapshot};
use crate::vocab::keys;

pub(crate) use cost::CostSummary;
pub use pending::{PendingPod, PendingReason};

/// The NodePool name rows use for nodes no NodePool manages (control plane, static workers).
pub const UNMANAGED: &str = "";

/// Everything `status` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// The time ages are measured at.
    pub(crate) now: Timestamp,
    /// The currency prices are in, when the user named one (prices carry no unit otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// One row per NodePool (input order), then one for unmanaged nodes when there are any.
    pub node_pools: Vec<PoolStatus>,
    /// Every node shown, grouped by NodePool in the order of `node_pools`, by name within one.
    pub nodes: Vec<NodeStatus>,
    /// NodeClaims launching, registering, initializing or being removed.
    pub in_flight: Vec<ClaimStatus>,
    /// Pending pods and why.
    pub pending: Vec<PendingPod>,
    /// What the nodes cost now, against each strategy.
    pub cost: CostSummary,
}

impl ClusterStatus {
    /// Whether two views show the same cluster, ages and the evaluation time aside: `status -w`
    /// prints a new view only when this changes, not every time a clock ticks.
    pub fn same_state(&self, other: &ClusterStatus) -> bool {
        self.without_clock() == other.without_clock()
    }

    fn without_clock(&self) -> ClusterStatus {
        let mut s = self.clone();
        s.now = Timestamp::UNIX_EPOCH;
        s.nodes.iter_mut().for_each(|n| n.age_seconds = None);
        s.in_flight.iter_mut().for_each(|c| c.age_seconds = None);
        s.pending.iter_mut().for_each(|p| p.age_seconds = None);
        s
    }
}

/// One NodePool's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolStatus {
    /// Name ([`UNMANAGED`] for nodes no NodePool manages).
    pub name: String,
    /// Nodes shown.
    pub nodes: usize,
    /// Pods on them (not finished).
    pub pods: usize,
    /// Their summed requests.
    pub requested: Resources,
    /// The nodes' summed allocatable.
    pub allocatable: Resources,
    /// The nodes' summed price per hour (nodes of unknown price count 0).
    pub price_per_hour: Price,
    /// NodeClaims of the pool in flight.
    pub in_flight: usize,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Name.
    pub name: String,
    /// NodePool ([`UNMANAGED`] when none).
    pub node_pool: String,
    /// Its NodeClaim, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_claim: Option<String>,
    /// Instance type (the node's label, else its flavor's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// Zone label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Its MachineDeployment (`namespace/name`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_deployment: Option<String>,
    /// Creation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) created: Option<Timestamp>,
    /// Seconds since creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<i64>,
    /// `Ready` condition: None when not reported.
    pub ready: Option<bool>,
    /// Cordoned.
    pub unschedulable: bool,
    /// Being deleted.
    pub deleting: bool,
    /// Pods on it (not finished), DaemonSet pods included.
    pub pods: usize,
    /// Their summed requests.
    pub requested: Resources,
    /// `status.allocatable`.
    pub allocatable: Resources,
    /// Its flavor's price per hour, when its flavor is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_hour: Option<Price>,
    /// Labels (for `-l` and custom columns).
    #[serde(skip)]
    pub(crate) labels: BTreeMap<String, String>,
}

/// Where a NodeClaim in flight is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClaimPhase {
    /// No providerID yet: the Machine is being created.
    Launching,
    /// Launched; its Node has not registered.
    Registering,
    /// Registered; not initialized (startup taints, readiness).
    Initializing,
    /// Being deleted while its Node is still there: its pods are being evicted.
    Draining,
    /// Being deleted, its Node gone: waiting for the Machine to go.
    Terminating,
}

impl ClaimPhase {
    /// The phase's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimPhase::Launching => "Launching",
            ClaimPhase::Registering => "Registering",
            ClaimPhase::Initializing => "Initializing",
            ClaimPhase::Draining => "Draining",
            ClaimPhase::Terminating => "Terminating",
        }
    }
}

/// One NodeClaim in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatus {
    /// Name.
    pub name: String,
    /// NodePool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// Instance type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// Where it is.
    pub phase: ClaimPhase,
    /// Its Node, when registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// Seconds since creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<i64>,
    /// Its flavor's price per hour, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_hour: Option<Price>,
}

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only nodes whose labels meet all of these (`-l`); NodePool totals count only them.
    pub selector: Vec<Requirement>,
    /// The currency to label prices with.
    pub currency: Option<String>,
    /// Skip the strategies' plans for the current pods (large clusters under `-w`).
    pub skip_comparison: bool,
}

/// Builds the status of the snapshot at `now`.
pub fn build(snapshot: &Snapshot, now: Timestamp, options: &Options) -> ClusterStatus {
    let by_node = pods_by_node(snapshot);
    let all: Vec<NodeStatus> = snapshot
        .nodes
        .iter()
        .map(|n| node_status(snapshot, n, &by_node, now))
        .collect();
    let cost = cost::summary(snapshot, &all, options.skip_comparison);
    let mut nodes: Vec<NodeStatus> = all
        .into_iter()
        .filter(|n| options.selector.iter().all(|r| r.matches(&n.labels)))
        .collect();
    let in_flight = in_flight(snapshot, now);
    let mut pools: Vec<PoolStatus> = snapshot
        .nodepools
        .iter()
        .filter(|p| !(snapshot.implicit_nodepool && p.name == "default"))
        .map(|p| empty_pool(&p.name))
        .collect();
    for n in &nodes {
        if !pools.iter().any(|p| p.name == n.node_pool) {
            pools.push(empty_pool(&n.node_pool));
        }
        if let Some(pool) = pools.iter_mut().find(|p| p.name == n.node_pool) {
            pool.nodes += 1;
            pool.pods += n.pods;
            pool.requested.add(&n.requested);
            pool.allocatable.add(&n.allocatable);
            pool.price_per_hour.0 += n.price_per_hour.map_or(0, |p| p.0);
        }
    }
    for c in &in_flight {
        if let Some(pool) = pools
            .iter_mut()
            .find(|p| Some(&p.name) == c.node_pool.as_ref())
        {
            pool.in_flight += 1;
        }
    }
    // Unmanaged nodes last, each pool's nodes together, by name within a pool.
    if let Some(i) = pools.iter().position(|p| p.name == UNMANAGED) {
        let unmanaged = pools.remove(i);
        pools.push(unmanaged);
    }
    let order: HashMap<&str, usize> = pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    nodes.sort_by(|a, b| {
        (order.get(a.node_pool.as_str()), &a.name).cmp(&(order.get(b.node_pool.as_str()), &b.name))
    });
    let pending = pending::pending(snapshot, now);
    ClusterStatus {
        now,
        currency: options.currency.clone(),
        node_pools: pools,
        nodes,
        in_flight,
        pending,
        cost,
    }
}

fn empty_pool(name: &str) -> PoolStatus {
    PoolStatus {
        name: name.to_string(),
        nodes: 0,
        pods: 0,
        requested: Resources::default(),
        allocatable: Resources::default(),
        price_per_hour: Price(0),
        in_flight: 0,
    }
}

/// Pod count and summed requests per node name (finished pods hold nothing).
fn pods_by_node(snapshot: &Snapshot) -> HashMap<&str, (usize, Resources)> {
    let mut out: HashMap<&str, (usize, Resources)> = HashMap::new();
    for p in &snapshot.pods {
        if p.terminal {
            continue;
        }
        if let Some(node) = p.node_name.as_deref() {
            let entry = out.entry(node).or_default();
            entry.0 += 1;
            entry.1.add(&p.demand.requests);
        }
    }
    out
}

fn age(created: Option<Timestamp>, now: Timestamp) -> Option<i64> {
    created.map(|c| (now.as_second() - c.as_second()).max(0))
}

/// The NodeClaim of a node: by node name, else by providerID.
fn claim_of<'a>(snapshot: &'a Snapshot, node: &NodeRecord) -> Option<&'a NodeClaimRecord> {
    snapshot
        .nodeclaims
        .iter()
        .find(|c| c.node_name.as_deref() == Some(node.name.as_str()))
        .or_else(|| {
            node.provider_id.as_deref().and_then(|pid| {
                snapshot
                    .nodeclaims
                    .iter()
                    .find(|c| c.provider_id.as_deref() == Some(pid))
            })
        })
}

/// The flavor a MachineDeployment (`namespace/name`) offers.
fn flavor_of<'a>(snapshot: &'a Snapshot, md: &str) -> Option<&'a Flavor> {
    snapshot
        .machine_deployments
        .iter()
        .find(|r| r.key() == md)
        .and_then(|r| r.flavor.as_ref().ok())
}

/// The MachineDeployment of a node: its NodeClaim's, else its Machine's (by nodeRef or
/// providerID), else the one member whose flavor has the node's instance type and zone.
fn node_machine_deployment(
    snapshot: &Snapshot,
    node: &NodeRecord,
    claim: Option<&NodeClaimRecord>,
) -> Option<String> {
    if let Some(md) = claim.and_then(|c| snapshot.claim_machine_deployment(c)) {
        return Some(md);
    }
    let machine = snapshot.machines.iter().find(|m| {
        m.node_name.as_deref() == Some(node.name.as_str())
            || (m.provider_id.is_some() && m.provider_id == node.provider_id)
    });
    if let Some(md) = machine.and_then(|m| m.deployment_key()) {
        return Some(md);
    }
    let it = node.labels.get(keys::INSTANCE_TYPE)?;
    let zone = node.labels.get(keys::ZONE);
    let mut matching = snapshot
        .all_members()
        .into_iter()
        .filter_map(|md| md.flavor.as_ref().ok())
        .filter(|f| &f.instance_type == it && zone.is_none_or(|z| f.zone() == Some(z.as_str())));
    match (matching.next(), matching.next()) {
        (Some(f), None) => Some(f.machine_deployment.clone()),
        _ => None,
    }
}

fn node_status(
    snapshot: &Snapshot,
    node: &NodeRecord,
    by_node: &HashMap<&str, (usize, Resources)>,
    now: Timestamp,
) -> NodeStatus {
    let claim = claim_of(snapshot, node);
    let md = node_machine_deployment(snapshot, node, claim);
    let flavor = md.as_deref().and_then(|m| flavor_of(snapshot, m));
    let (pods, requested) = by_node.get(node.name.as_str()).cloned().unwrap_or_default();
    NodeStatus {
        name: node.name.clone(),
        node_pool: node
            .labels
            .get(keys::NODEPOOL)
            .cloned()
            .or_else(|| claim.and_then(|c| c.node_pool.clone()))
            .unwrap_or_default(),
        node_claim: claim.map(|c| c.name.clone()),
        instance_type: node
            .labels
            .get(keys::INSTANCE_TYPE)
            .cloned()
            .or_else(|| flavor.map(|f| f.instance_type.clone())),
        zone: node.labels.get(keys::ZONE).cloned(),
        machine_deployment: md,
        created: node.created,
        age_seconds: age(node.created, now),
        ready: node.ready,
        unschedulable: node.unschedulable,
        deleting: node.deleting,
        pods,
        requested,
        allocatable: node.allocatable.clone(),
        price_per_hour: flavor.map(|f| f.price),
        labels: node.labels.clone(),
    }
}

/// The NodeClaims not yet initialized, or being deleted, oldest first.
fn in_flight(snapshot: &Snapshot, now: Timestamp) -> Vec<ClaimStatus> {
    let node_names: std::collections::HashSet<&str> =
        snapshot.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut out: Vec<ClaimStatus> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| {
            let has_node = c
                .node_name
                .as_deref()
                .is_some_and(|n| node_names.contains(n));
            let phase = if c.deleting {
                if has_node {
                    ClaimPhase::Draining
                } else {
                    ClaimPhase::Terminating
                }
            } else if !(c.condition_true("Launched") || c.provider_id.is_some()) {
                ClaimPhase::Launching
            } else if !(c.condition_true("Registered") || has_node) {
                ClaimPhase::Registering
            } else if !c.condition_true("Initialized") {
                ClaimPhase::Initializing
            } else {
                return None;
            };
            Some(ClaimStatus {
                name: c.name.clone(),
                node_pool: c.node_pool.clone(),
                instance_type: c.instance_type.clone(),
                phase,
                node: c.node_name.clone(),
                age_seconds: age(c.created, now),
                price_per_hour: snapshot
                    .claim_machine_deployment(c)
                    .and_then(|md| flavor_of(snapshot, &md))
                    .map(|f| f.price),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.age_seconds
            .cmp(&a.age_seconds)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests;
