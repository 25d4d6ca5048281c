//! `minValues` under Karpenter's default `Strict` policy, for `cost` and the controller. A new
//! node of a plan stands for a NodeClaim whose instance-type options are every flavor of its
//! NodePool still able to hold all of the node's pods (their labels, taints, host ports,
//! summed requests and topology domain); the claim may exist only while those options keep at
//! least the pool's `minValues` distinct values of each key. So a pod does not join a node it
//! would narrow below that (core v1.14 `nodeclaim.go` `CanAdd` → `filterInstanceTypesByRequirements`
//! → `InstanceTypes.SatisfiesMinValues`), and a NodePool whose options for the pod alone miss it
//! is passed over for the next one (`scheduler.go` `addToNewNodeClaim`, which tries the
//! templates in weight order and keeps the first that takes the pod).

use std::collections::BTreeSet;

use super::catalog::Offering;
use super::fit::{Unfit, static_ok};
use super::strategy::Budget;
use crate::model::labels::Labels;
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::vocab::keys;

/// The NodePools that set `minValues`, with the offerings a claim of theirs may list.
#[derive(Debug, Clone)]
pub(crate) struct MinValues {
    pools: Vec<PoolMin>,
}

/// One NodePool's `minValues` and offerings.
#[derive(Debug, Clone)]
struct PoolMin {
    name: String,
    /// Per key, the largest `minValues` given for it (as Karpenter merges requirements).
    min: Vec<(String, usize)>,
    /// The pool's offerings within its limits and max sizes when planning starts (core
    /// `scheduler.go` `Solve` filters the options by remaining resources before `CanAdd`).
    offerings: Vec<Offering>,
}

/// What a new node of a pool with `minValues` keeps: the pool (its place in [`MinValues`]) and
/// the offerings still able to hold every pod placed on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClaimOptions {
    /// The pool.
    pub(crate) pool: usize,
    /// Indices into the pool's offerings.
    pub(crate) options: Vec<usize>,
}

impl MinValues {
    /// The pools of the snapshot that set `minValues`, each with its offerings among `offerings`
    /// (every offering, not one per group of interchangeable ones: a key such as the zone counts
    /// flavors a planner may treat as one). None when no pool sets `minValues`.
    pub(crate) fn new(
        snapshot: &Snapshot,
        offerings: &[Offering],
        budget: &Budget,
    ) -> Option<MinValues> {
        let pools: Vec<PoolMin> = snapshot
            .nodepools
            .iter()
            .filter(|p| !p.min_values.is_empty())
            .map(|p| PoolMin {
                name: p.name.clone(),
                min: p.min_values.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                offerings: offerings
                    .iter()
                    .filter(|o| o.node_pool == p.name && budget.check(o).is_ok())
                    .cloned()
                    .collect(),
            })
            .collect();
        (!pools.is_empty()).then_some(MinValues { pools })
    }

    /// A fresh claim of this pool, every offering still an option; None when the pool sets no
    /// `minValues`.
    pub(crate) fn start(&self, pool: &str) -> Option<ClaimOptions> {
        let at = self.pools.iter().position(|p| p.name == pool)?;
        Some(ClaimOptions {
            pool: at,
            options: (0..self.pools[at].offerings.len()).collect(),
        })
    }

    /// The options a claim keeps when a pod of this demand joins it on a node with these labels,
    /// the claim's pods then requesting `total` in all.
    pub(crate) fn narrowed(
        &self,
        claim: &ClaimOptions,
        demand: &PodDemand,
        node_labels: &Labels,
        total: &Resources,
    ) -> Vec<usize> {
        let offerings = &self.pools[claim.pool].offerings;
        claim
            .options
            .iter()
            .copied()
            .filter(|&o| holds(demand, &offerings[o], Some(node_labels), total))
            .collect()
    }

    /// Why a claim of this pool with these options may not exist, if it may not: the first key
    /// (by name) with fewer distinct values than its `minValues`.
    pub(crate) fn unmet(&self, claim: &ClaimOptions, options: &[usize]) -> Option<Unfit> {
        let pool = &self.pools[claim.pool];
        unmet_among(
            &pool.name,
            &pool.min,
            options.iter().map(|&o| &pool.offerings[o]),
        )
    }

    /// Why a claim of this pool holding only a pod of this demand may not exist, if it may not
    /// (the pod's NodePool gate). None also when the pool sets no `minValues`.
    pub(crate) fn unmet_alone(&self, pool: &str, demand: &PodDemand) -> Option<Unfit> {
        let p = self.pools.iter().find(|p| p.name == pool)?;
        unmet_among(
            &p.name,
            &p.min,
            p.offerings
                .iter()
                .filter(|o| holds(demand, o, None, &demand.requests)),
        )
    }
}

/// The first key of `min` whose distinct values among `options` are fewer than its minimum, as
/// a reason (core `InstanceTypes.SatisfiesMinValues`).
pub(crate) fn unmet_among<'a>(
    pool: &str,
    min: &[(String, usize)],
    options: impl Iterator<Item = &'a Offering> + Clone,
) -> Option<Unfit> {
    min.iter().find_map(|(key, min)| {
        let distinct: BTreeSet<&String> = options
            .clone()
            .filter_map(|o| label_value(o, key))
            .collect();
        (distinct.len() < *min).then(|| Unfit::MinValuesUnmet {
            node_pool: pool.to_string(),
            key: key.clone(),
            min: *min,
            found: distinct.len(),
        })
    })
}

/// The value of a label key on an offering's nodes; the instance type is its flavor's name.
pub(crate) fn label_value<'a>(o: &'a Offering, key: &str) -> Option<&'a String> {
    if key == keys::INSTANCE_TYPE {
        return Some(&o.flavor.instance_type);
    }
    o.labels.get(key)
}

/// Whether an offering can still be the claim's instance type once a pod of this demand is on
/// it: the pod's node requirements and tolerations admit it, its host ports are free of the
/// offering's DaemonSets', the claim's `total` requests fit its allocatable, and, on a node
/// already in a topology domain, it lies in that domain on every key the pod's spread or pod
/// (anti-)affinity reads (core narrows the claim's requirements to the domain it chose).
fn holds(demand: &PodDemand, o: &Offering, node: Option<&Labels>, total: &Resources) -> bool {
    if !total.fits_in(&o.allocatable)
        || crate::model::hostport::first_clash(&demand.host_ports, &o.ports).is_some()
    {
        return false;
    }
    let static_fit = match node.filter(|_| demand.requires_label(keys::HOSTNAME)) {
        Some(node) => {
            let mut labels = o.labels.clone();
            if let Some(h) = node.get(keys::HOSTNAME) {
                labels.insert(keys::HOSTNAME.to_string(), h.clone());
            }
            static_ok(demand, &labels, &o.taints, &o.allocatable)
        }
        None => static_ok(demand, &o.labels, &o.taints, &o.allocatable),
    };
    static_fit
        && node.is_none_or(|node| {
            topology_keys(demand)
                .filter(|k| *k != keys::HOSTNAME)
                .all(|k| o.labels.get(k) == node.get(k))
        })
}

/// The topology keys of a pod's spread constraints and pod (anti-)affinity terms.
fn topology_keys(demand: &PodDemand) -> impl Iterator<Item = &str> {
    demand.spread.iter().map(|c| c.topology_key.as_str()).chain(
        demand
            .affinity
            .iter()
            .chain(&demand.anti_affinity)
            .chain(demand.preferred_affinity.iter().map(|w| &w.term))
            .chain(demand.preferred_anti_affinity.iter().map(|w| &w.term))
            .map(|t| t.topology_key.as_str()),
    )
}

/// Karpenter v1.14 sends at most this many instance types in a NodeClaim (`MaxInstanceTypes`
/// in core `provisioning/scheduling/nodeclaimtemplate.go`; its test suites lower it to 60, the
/// v1.5 value the `karpenter-capi` strategy keeps), cheapest first.
pub(crate) const MAX_INSTANCE_TYPES: usize = 600;

/// The instance types a NodeClaim for this planned node lists when its NodePool sets
/// `minValues`: every flavor of the pool (within its limits) that holds all the node's pods,
/// cheapest first (then by name), at most [`MAX_INSTANCE_TYPES`]; the planned flavor is among
/// them, being one that holds them. None when the pool sets no `minValues`. Core's claim lists
/// its remaining `InstanceTypeOptions` the same way (`nodeclaimtemplate.go` `ToNodeClaim`), and
/// its provider launches the cheapest; ours launches the planned flavor's MachineDeployment.
pub(crate) fn claim_instance_types(
    snapshot: &Snapshot,
    node: &super::strategy::NewNode,
) -> Option<Vec<String>> {
    claim_list(snapshot, node, MAX_INSTANCE_TYPES).map(|l| l.instance_types)
}

/// Why the NodeClaim for this planned node may not be created, if it may not: its instance
/// types, truncated to [`MAX_INSTANCE_TYPES`] cheapest first, keep fewer than the pool's
/// `minValues` distinct values of a key (core `scheduler.go` `Results.TruncateInstanceTypes`
/// → `InstanceTypes.Truncate`, under the default `Strict` policy: the claim is dropped and its
/// pods stay pending with that reason). The plan checks `minValues` over every option; only the
/// truncation can break it, on a key other than the instance type (`minValues` is at most 50).
pub fn truncation_unmet(snapshot: &Snapshot, node: &super::strategy::NewNode) -> Option<Unfit> {
    truncation_unmet_within(snapshot, node, MAX_INSTANCE_TYPES)
}

/// [`truncation_unmet`] with the list cut at `max` instance types.
pub fn truncation_unmet_within(
    snapshot: &Snapshot,
    node: &super::strategy::NewNode,
    max: usize,
) -> Option<Unfit> {
    claim_list(snapshot, node, max)?.unmet
}

/// A claim's instance types (at most `max`, cheapest first) and the `minValues` they miss.
struct ClaimList {
    instance_types: Vec<String>,
    unmet: Option<Unfit>,
}

fn claim_list(
    snapshot: &Snapshot,
    node: &super::strategy::NewNode,
    max: usize,
) -> Option<ClaimList> {
    let options = claim_options(snapshot, node)?;
    let instance_types = cheapest_types(&options.offerings, max);
    let unmet = options.unmet_among_types(&instance_types);
    Some(ClaimList {
        instance_types,
        unmet,
    })
}

/// Why a consolidation may not replace the nodes `removed` (NodeClaim, price) by this planned node,
/// if it may not: its claim's options, cut to [`MAX_INSTANCE_TYPES`], then kept only where an
/// instance type's dearest option is cheaper than the nodes removed (and, replacing several,
/// cheaper than any of them of a type among the options), miss its pool's `minValues` (core
/// `disruption/consolidation.go` `computeConsolidation` and `multinodeconsolidation.go`
/// `filterOutSameInstanceType`, both through `NodeClaim.RemoveInstanceTypeOptionsByPriceAndMinValues`).
/// None when the pool sets no `minValues`. `snapshot` is the cluster with the removed nodes,
/// `view` the one without them that the replacement was planned on.
pub fn replacement_unmet<'a>(
    snapshot: &Snapshot,
    view: &Snapshot,
    node: &super::strategy::NewNode,
    removed: impl Iterator<Item = (&'a str, crate::model::flavor::Price)> + Clone,
) -> Option<Unfit> {
    let options = claim_options(view, node)?;
    let types = cheapest_types(&options.offerings, MAX_INSTANCE_TYPES);
    let mut cap: i64 = removed.clone().map(|(_, p)| p.0).sum();
    if removed.clone().count() > 1 {
        for (claim, price) in removed {
            if instance_type_of(snapshot, claim).is_some_and(|t| types.contains(&t)) {
                cap = cap.min(price.0);
            }
        }
    }
    let cheaper: Vec<String> = types
        .into_iter()
        .filter(|t| {
            options
                .offerings
                .iter()
                .filter(|o| &o.flavor.instance_type == t)
                .all(|o| o.flavor.price.0 < cap)
        })
        .collect();
    options.unmet_among_types(&cheaper)
}

/// The instance type of a NodeClaim's node: its MachineDeployment's flavor's, else its label.
fn instance_type_of(snapshot: &Snapshot, claim: &str) -> Option<String> {
    let record = snapshot.nodeclaims.iter().find(|c| c.name == claim)?;
    snapshot
        .claim_machine_deployment(record)
        .and_then(|md| {
            snapshot
                .machine_deployments
                .iter()
                .find(|m| m.key() == md)
                .and_then(|m| m.flavor.as_ref().ok())
                .map(|f| f.instance_type.clone())
        })
        .or_else(|| record.labels.get(keys::INSTANCE_TYPE).cloned())
}

/// The offerings a planned node's claim may list (those of its pool that hold all its pods,
/// and the planned one), cheapest first, with the pool's `minValues`.
struct Options {
    pool: String,
    min: Vec<(String, usize)>,
    offerings: Vec<Offering>,
}

impl Options {
    /// The first `minValues` the options of these instance types miss.
    fn unmet_among_types(&self, types: &[String]) -> Option<Unfit> {
        unmet_among(
            &self.pool,
            &self.min,
            self.offerings
                .iter()
                .filter(|o| types.contains(&o.flavor.instance_type)),
        )
    }
}

fn claim_options(snapshot: &Snapshot, node: &super::strategy::NewNode) -> Option<Options> {
    let pool = snapshot
        .nodepools
        .iter()
        .find(|p| p.name == node.offering.node_pool)?;
    if pool.min_values.is_empty() {
        return None;
    }
    let (offerings, _) = super::catalog::offerings(snapshot, true);
    let mv = MinValues::new(snapshot, &offerings, &Budget::new(snapshot))?;
    let mut claim = mv.start(&node.offering.node_pool)?;
    let mut labels = node.offering.labels.clone();
    labels.insert(keys::HOSTNAME.to_string(), node.name.clone());
    let mut total = Resources::default();
    for &p in &node.pods {
        let demand = &snapshot.pods[p].demand;
        total.add(&demand.requests);
        claim.options = mv.narrowed(&claim, demand, &labels, &total);
    }
    let pool = &mv.pools[claim.pool];
    let mut options: Vec<Offering> = claim
        .options
        .iter()
        .map(|&o| pool.offerings[o].clone())
        .collect();
    if !options
        .iter()
        .any(|o| o.flavor.instance_type == node.offering.flavor.instance_type)
    {
        options.push(node.offering.clone());
    }
    options.sort_by(|a, b| {
        (a.flavor.price.0, &a.flavor.instance_type)
            .cmp(&(b.flavor.price.0, &b.flavor.instance_type))
    });
    Some(Options {
        pool: pool.name.clone(),
        min: pool.min.clone(),
        offerings: options,
    })
}

/// The instance types of these offerings (sorted cheapest first), each as cheap as its cheapest
/// offering (core `InstanceTypes.OrderByPrice`), at most `max`.
fn cheapest_types(offerings: &[Offering], max: usize) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    for o in offerings {
        if types.len() == max {
            break;
        }
        if !types.contains(&o.flavor.instance_type) {
            types.push(o.flavor.instance_type.clone());
        }
    }
    types
}
