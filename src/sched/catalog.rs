//! The catalog of what can be provisioned: one [`Offering`] per (NodePool, member flavor) pair
//! the pool accepts, with the new node's labels, taints, DaemonSet overhead and allocatable.

use serde::Serialize;

use super::fit::{Unfit, static_fit};
use crate::model::flavor::Flavor;
use crate::model::labels::{Labels, keys};
use crate::model::nodepool::NodePool;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::model::taints::Taint;

/// A flavor as offered by one NodePool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Offering {
    /// Index of the NodePool in the snapshot.
    #[serde(skip)]
    pub pool_index: usize,
    /// NodePool name.
    pub node_pool: String,
    /// NodePool weight.
    pub weight: i32,
    /// The flavor.
    pub flavor: Flavor,
    /// Labels of a new node (without its hostname).
    pub labels: Labels,
    /// Taints a pod must tolerate (NodePool taints, plus the flavor's when honoured).
    pub taints: Vec<Taint>,
    /// DaemonSet pods that would run on each new node, `namespace/name`.
    pub daemonsets: Vec<String>,
    /// Their summed requests.
    pub overhead: Resources,
    /// Capacity minus DaemonSet overhead.
    pub allocatable: Resources,
}

/// A flavor a NodePool does not offer, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excluded {
    /// NodePool.
    pub node_pool: String,
    /// Instance type.
    pub instance_type: String,
    /// Why.
    pub unfit: Unfit,
}

/// Builds the offerings of every NodePool, in NodePool order (weight descending, then name),
/// then flavor input order. `flavor_taints` says whether the flavors' `taints` annotation applies
/// (Cluster Autoscaler reads it; the upstream Karpenter provider ignores it).
pub fn offerings(snapshot: &Snapshot, flavor_taints: bool) -> (Vec<Offering>, Vec<Excluded>) {
    let mut out = Vec::new();
    let mut excluded = Vec::new();
    for (pool_index, pool) in snapshot.nodepools.iter().enumerate() {
        for md in snapshot.members_of(pool) {
            let Ok(flavor) = &md.flavor else { continue };
            match offering(snapshot, pool_index, pool, flavor, flavor_taints) {
                Ok(o) => out.push(o),
                Err(unfit) => excluded.push(Excluded {
                    node_pool: pool.name.clone(),
                    instance_type: flavor.instance_type.clone(),
                    unfit,
                }),
            }
        }
    }
    (out, excluded)
}

/// A flavor offered without any NodePool (Cluster Autoscaler's view: node groups only).
pub fn bare_offerings(snapshot: &Snapshot) -> Vec<Offering> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for md in snapshot.all_members() {
        let Ok(flavor) = &md.flavor else { continue };
        if !seen.insert(flavor.machine_deployment.clone()) {
            continue;
        }
        let labels = flavor.labels.clone();
        out.push(with_daemonsets(
            snapshot,
            Offering {
                pool_index: 0,
                node_pool: String::new(),
                weight: 0,
                flavor: flavor.clone(),
                labels,
                taints: flavor.taints.clone(),
                daemonsets: Vec::new(),
                overhead: Resources::default(),
                allocatable: Resources::default(),
            },
        ));
    }
    out
}

fn offering(
    snapshot: &Snapshot,
    pool_index: usize,
    pool: &NodePool,
    flavor: &Flavor,
    flavor_taints: bool,
) -> Result<Offering, Unfit> {
    // A pool requirement on a key the flavor does not define is compatible: the node takes the
    // pool's value. On a key it defines, the flavor's value must satisfy it.
    for r in &pool.requirements {
        if let Some(v) = flavor.labels.get(&r.key)
            && !r.matches_value(Some(v))
        {
            return Err(Unfit::NodePoolRequirement {
                node_pool: pool.name.clone(),
                requirement: r.to_string(),
                value: Some(v.clone()),
            });
        }
    }
    let mut labels = flavor.labels.clone();
    for (k, v) in pool.node_labels() {
        labels.entry(k).or_insert(v);
    }
    labels.insert(keys::NODEPOOL.to_string(), pool.name.clone());
    let mut taints = pool.taints.clone();
    if flavor_taints {
        taints.extend(flavor.taints.iter().cloned());
    }
    Ok(with_daemonsets(
        snapshot,
        Offering {
            pool_index,
            node_pool: pool.name.clone(),
            weight: pool.weight,
            flavor: flavor.clone(),
            labels,
            taints,
            daemonsets: Vec::new(),
            overhead: Resources::default(),
            allocatable: Resources::default(),
        },
    ))
}

/// Adds the DaemonSets whose pods would schedule on the offering's nodes (by labels, taints
/// and their own resources), and computes allocatable.
fn with_daemonsets(snapshot: &Snapshot, mut o: Offering) -> Offering {
    let mut overhead = Resources::default();
    let mut names = Vec::new();
    for ds in &snapshot.daemonsets {
        let mut probe_labels = o.labels.clone();
        probe_labels.insert(keys::HOSTNAME.to_string(), "new-node".to_string());
        if static_fit(&ds.pod, &probe_labels, &o.taints, &o.flavor.capacity).is_ok() {
            overhead.add(&ds.pod.requests);
            names.push(ds.name.clone());
        }
    }
    o.allocatable = o.flavor.capacity.minus(&overhead);
    o.overhead = overhead;
    o.daemonsets = names;
    o
}

/// Checks that the snapshot has a usable catalog: every member MachineDeployment has valid
/// capacity annotations and there is at least one. The error names the file, object and field.
pub fn validate(snapshot: &Snapshot) -> Result<(), crate::error::Error> {
    let members = snapshot.all_members();
    for md in &members {
        if let Err(p) = &md.flavor {
            return Err(md.object.error(p.field.clone(), p.problem.clone()));
        }
    }
    if members.is_empty() {
        let total = snapshot.machine_deployments.len();
        return Err(crate::error::Error::usage(format!(
            "no flavors: {} MachineDeployment(s) read, none is a member. Label member MachineDeployments with \
             `{}: \"\"` on metadata.labels (matching the ClusterAPINodeClass scalableResourceSelector, if set) and give them \
             capacity annotations ({}, {})",
            total,
            crate::model::flavor::MEMBER_LABEL,
            crate::model::flavor::annotations::CPU,
            crate::model::flavor::annotations::MEMORY
        )));
    }
    Ok(())
}

/// Warnings about the catalog the user should see (default prices).
pub fn warnings(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .all_members()
        .iter()
        .filter_map(|md| md.flavor.as_ref().ok())
        .filter(|f| f.price_source == crate::model::flavor::PriceSource::DefaultModel)
        .map(|f| {
            format!(
                "MachineDeployment {} has no price annotation ({}): using the default model \
                 (0.02/vCPU-hour + 0.0025/GiB-hour + 1.00/GPU-hour) = {}/h",
                f.machine_deployment,
                crate::model::flavor::annotations::PRICE,
                f.price
            )
        })
        .collect()
}
