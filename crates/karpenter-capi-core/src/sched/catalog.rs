//! The catalog of what can be provisioned: one [`Offering`] per (NodePool, member flavor) pair
//! the pool accepts, with the new node's labels, taints, DaemonSet overhead and allocatable.

use serde::Serialize;

use super::fit::{Unfit, static_fit};
use crate::model::flavor::Flavor;
use crate::model::hostport::HostPort;
use crate::model::labels::{Labels, Operator, Requirement, WELL_KNOWN};
use crate::model::nodepool::NodePool;
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::model::taints::{Taint, first_untolerated};
use crate::vocab::keys;

/// A flavor as offered by one NodePool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Offering {
    /// Index of the NodePool in the snapshot.
    #[serde(skip)]
    pub(crate) pool_index: usize,
    /// NodePool name.
    pub(crate) node_pool: String,
    /// NodePool weight.
    pub(crate) weight: i32,
    /// The flavor.
    pub flavor: Flavor,
    /// Labels of a new node (without its hostname).
    pub labels: Labels,
    /// Taints a pod must tolerate (NodePool taints, plus the flavor's when honoured).
    pub(crate) taints: Vec<Taint>,
    /// DaemonSet pods that would run on each new node, `namespace/name`.
    pub(crate) daemonsets: Vec<String>,
    /// Their summed requests.
    pub(crate) overhead: Resources,
    /// Their host ports, taken on every new node of the offering.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<HostPort>,
    /// Capacity minus DaemonSet overhead.
    pub allocatable: Resources,
}

/// A flavor a NodePool does not offer, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excluded {
    /// NodePool.
    pub(crate) node_pool: String,
    /// Instance type.
    pub(crate) instance_type: String,
    /// Why.
    pub(crate) unfit: Unfit,
}

/// Where a DaemonSet is judged to run on an offering's new nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DaemonScope {
    /// Per flavor, against the new node's labels and taints, whatever its size (core v1.14
    /// `scheduler.go` `buildDaemonOverheadGroups`, `isDaemonPodCompatible` per instance type).
    Flavor,
    /// Per NodePool, against its template's requirements, labels and taints only (core v1.5
    /// `scheduler.go` `getDaemonOverhead`, `isDaemonPodCompatible`): the same on every flavor
    /// of the pool.
    NodePool,
    /// Per node group, only where the DaemonSet's pod also fits the node's capacity (Cluster
    /// Autoscaler's template node runs the scheduler's predicates on its DaemonSet pods).
    NodeGroup,
}

/// Builds the offerings of every NodePool, in NodePool order (weight descending, then name),
/// then flavor input order. `flavor_taints` says whether the flavors' `taints` annotation applies
/// (Cluster Autoscaler reads it; the upstream Karpenter provider ignores it). DaemonSets are
/// judged per flavor ([`DaemonScope::Flavor`]).
pub fn offerings(snapshot: &Snapshot, flavor_taints: bool) -> (Vec<Offering>, Vec<Excluded>) {
    offerings_with(snapshot, flavor_taints, DaemonScope::Flavor)
}

/// [`offerings`] with the DaemonSets judged in this scope.
pub(crate) fn offerings_with(
    snapshot: &Snapshot,
    flavor_taints: bool,
    scope: DaemonScope,
) -> (Vec<Offering>, Vec<Excluded>) {
    let mut out = Vec::new();
    let mut excluded = Vec::new();
    for (pool_index, pool) in snapshot.nodepools.iter().enumerate() {
        // A NodePool reported not Ready or whose node class is missing, being deleted or static
        // provisions nothing ([`Snapshot::provisions`]).
        if !snapshot.provisions(pool) {
            continue;
        }
        for md in snapshot.members_of(pool) {
            let Ok(flavor) = &md.flavor else { continue };
            match offering(snapshot, pool_index, pool, flavor, flavor_taints, scope) {
                Ok(o) => out.extend(o),
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
pub(crate) fn bare_offerings(snapshot: &Snapshot) -> Vec<Offering> {
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
            DaemonScope::NodeGroup,
            None,
            Offering {
                pool_index: 0,
                node_pool: String::new(),
                weight: 0,
                flavor: flavor.clone(),
                labels,
                taints: flavor.taints.clone(),
                daemonsets: Vec::new(),
                overhead: Resources::default(),
                ports: Vec::new(),
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
    scope: DaemonScope,
) -> Result<Vec<Offering>, Unfit> {
    // A pool requirement on a key the flavor does not define is compatible: the node takes the
    // pool's value. On a key it defines, the flavor's value must satisfy it.
    // The capacity type a flavor does not state is on-demand, the provider's single offering
    // (provider `cloudprovider.go`): a pool requiring spot offers it nothing.
    let on_demand = "on-demand".to_string();
    for r in &pool.requirements {
        let have = match flavor.labels.get(&r.key) {
            None if r.key == keys::CAPACITY_TYPE => Some(&on_demand),
            have => have,
        };
        if let Some(v) = have
            && !r.matches_value(Some(v))
        {
            return Err(Unfit::NodePoolRequirement {
                node_pool: pool.name.clone(),
                requirement: r.to_string(),
                value: Some(v.clone()),
            });
        }
    }
    // On a key the flavor does not define, the pool's requirements must admit some value
    // together (core: contradictory requirements leave no instance type).
    for r in &pool.requirements {
        if flavor.labels.contains_key(&r.key) || r.key == keys::INSTANCE_TYPE {
            continue;
        }
        let on_key: Vec<&Requirement> = pool
            .requirements
            .iter()
            .filter(|q| q.key == r.key)
            .collect();
        if !satisfiable(&on_key) {
            return Err(Unfit::NodePoolRequirement {
                node_pool: pool.name.clone(),
                requirement: on_key
                    .iter()
                    .map(|q| q.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                value: None,
            });
        }
    }
    // Template labels are requirements too (core `nodeclaimtemplate.go` adds them as `In`):
    // a flavor with another value is out, and so is one lacking a well-known key (its nodes
    // would not carry the zone or architecture the pool promises). A custom key the flavor
    // lacks is the NodeClaim's to give: the claim's label goes onto the Node.
    for (k, v) in &pool.labels {
        let have = if k == keys::INSTANCE_TYPE {
            Some(&flavor.instance_type)
        } else if k == keys::CAPACITY_TYPE {
            Some(flavor.labels.get(k).unwrap_or(&on_demand))
        } else {
            flavor.labels.get(k)
        };
        let refused = match have {
            Some(have) => have != v,
            None => WELL_KNOWN.contains(&k.as_str()),
        };
        if refused {
            return Err(Unfit::NodePoolRequirement {
                node_pool: pool.name.clone(),
                requirement: format!("{k} In [{v}] (template label)"),
                value: have.cloned(),
            });
        }
    }
    let mut labels = flavor.labels.clone();
    for (k, v) in pool.node_labels() {
        labels.entry(k).or_insert(v);
    }
    // Its NodeClaim says on-demand when nothing set the capacity type
    // (`provision::claim_labels`), so a pod may select it.
    labels
        .entry(keys::CAPACITY_TYPE.to_string())
        .or_insert_with(|| on_demand.clone());
    // Karpenter's restricted labels never reach a NodeClaim (`provision::claim_labels` drops
    // them), so no Node of the offering carries them: a pod requiring one must not be planned
    // onto it (core `IsRestrictedLabel`).
    labels.retain(|k, _| !crate::model::labels::is_restricted_label(k));
    labels.insert(keys::NODEPOOL.to_string(), pool.name.clone());
    let mut taints = pool.taints.clone();
    if flavor_taints {
        taints.extend(flavor.taints.iter().cloned());
    }
    Ok(chosen_values(pool, &labels)
        .into_iter()
        .map(|chosen| {
            let mut labels = labels.clone();
            labels.extend(chosen);
            with_daemonsets(
                snapshot,
                scope,
                Some(pool),
                Offering {
                    pool_index,
                    node_pool: pool.name.clone(),
                    weight: pool.weight,
                    flavor: flavor.clone(),
                    labels,
                    taints: taints.clone(),
                    daemonsets: Vec::new(),
                    overhead: Resources::default(),
                    ports: Vec::new(),
                    allocatable: Resources::default(),
                },
            )
        })
        .collect())
}

/// At most this many value combinations of multi-valued pool requirements are offered per
/// flavor; beyond, later keys take their smallest value only.
const MAX_VALUE_COMBINATIONS: usize = 64;

/// The labels a new node may take for the pool's multi-valued `In` requirements on custom keys
/// these labels (the flavor's and the pool's) do not define: one set per combination of allowed
/// values, smallest values first, so a pod that asks for none gets the smallest of each
/// (core keeps the requirement and labels the claim with `Requirement.Any()`; we choose
/// deterministically and narrow the claim to it). One empty set when there are none.
fn chosen_values(pool: &NodePool, labels: &Labels) -> Vec<Labels> {
    let mut combinations = vec![Labels::new()];
    let mut keys: Vec<&str> = pool
        .requirements
        .iter()
        .filter(|r| r.operator == Operator::In && !labels.contains_key(&r.key))
        // Well-known keys the provider leaves undefined (the capacity type, a zone) are not
        // the claim's to choose: the provider's single offering decides them.
        .filter(|r| {
            !WELL_KNOWN.contains(&r.key.as_str())
                && !crate::model::labels::is_restricted_label(&r.key)
        })
        .map(|r| r.key.as_str())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let on_key: Vec<&Requirement> = pool.requirements.iter().filter(|r| r.key == key).collect();
        let mut values: Vec<&String> = on_key
            .iter()
            .filter(|r| r.operator == Operator::In)
            .flat_map(|r| &r.values)
            .filter(|v| on_key.iter().all(|r| r.matches_value(Some(v))))
            .collect();
        values.sort_unstable();
        values.dedup();
        if values.is_empty() {
            continue;
        }
        if combinations.len() * values.len() > MAX_VALUE_COMBINATIONS {
            values.truncate(1);
        }
        combinations = combinations
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.insert(key.to_string(), (*v).clone());
                    c
                })
            })
            .collect();
    }
    combinations
}

/// Adds the DaemonSets whose pods would run on the offering's new nodes ([`DaemonScope`]):
/// their summed requests reserve room (allocatable = capacity − overhead) and their host ports
/// are taken. Where they reserve more than the capacity, no pod fits the offering (core adds
/// the overhead to every pod's requests, which then fit no instance type of that size).
fn with_daemonsets(
    snapshot: &Snapshot,
    scope: DaemonScope,
    pool: Option<&NodePool>,
    mut o: Offering,
) -> Offering {
    let mut overhead = Resources::default();
    let mut names = Vec::new();
    let mut ports = Vec::new();
    let template = pool.map(template_requirements).unwrap_or_default();
    let mut probe_labels = o.labels.clone();
    probe_labels.insert(keys::HOSTNAME.to_string(), "new-node".to_string());
    // Every node Karpenter makes gets its lifecycle labels, so a DaemonSet selecting them runs
    // there (core v1.14 counts it: the labels are well-known to `isDaemonPodCompatible`); they
    // are for judging the DaemonSets only, never the claim's labels. (Cluster Autoscaler's
    // template node has no such labels.)
    if scope == DaemonScope::Flavor {
        for key in [keys::REGISTERED_LABEL, keys::INITIALIZED_LABEL] {
            probe_labels.insert(key.to_string(), "true".to_string());
        }
    }
    for ds in &snapshot.daemonsets {
        let runs = match scope {
            DaemonScope::Flavor => daemon_runs_on(&ds.pod, &probe_labels, &o.taints),
            DaemonScope::NodePool => {
                pool.is_none_or(|p| daemon_runs_in_pool(&ds.pod, p, &template))
            }
            DaemonScope::NodeGroup => {
                static_fit(&ds.pod, &probe_labels, &o.taints, &o.flavor.capacity).is_ok()
            }
        };
        if runs {
            overhead.add(&ds.pod.requests);
            names.push(ds.name.clone());
            ports.extend(ds.pod.host_ports.iter().cloned());
        }
    }
    o.allocatable = o.flavor.capacity.minus(&overhead);
    if !overhead.fits_in(&o.flavor.capacity) {
        // Every pod takes a slot: none is left.
        o.allocatable.pods = o.allocatable.pods.min(-1);
    }
    o.overhead = overhead;
    o.daemonsets = names;
    o.ports = ports;
    o
}

/// Whether a DaemonSet's pod runs on a node with these labels and taints: it tolerates the
/// hard taints (PreferNoSchedule never keeps a DaemonSet pod off), its node selector holds and
/// one of its required node-affinity terms does. Resources and preferences do not decide.
/// Mirrors core v1.14 `scheduler.go` `isDaemonPodCompatible`.
pub(crate) fn daemon_runs_on(pod: &PodDemand, labels: &Labels, taints: &[Taint]) -> bool {
    first_untolerated(taints, &pod.tolerations).is_none()
        && pod.node_requirement_unmet(labels).is_none()
}

/// The requirements of a NodePool's NodeClaim template: the pool's requirements, its template
/// labels and the pool label (core `nodeclaimtemplate.go` `NewNodeClaimTemplate`).
fn template_requirements(pool: &NodePool) -> Vec<Requirement> {
    let mut out = pool.requirements.clone();
    for (k, v) in &pool.labels {
        out.push(Requirement::new(k, Operator::In, &[v]));
    }
    out.push(Requirement::new(
        keys::NODEPOOL,
        Operator::In,
        &[&pool.name],
    ));
    out
}

/// Whether a DaemonSet's pod runs on the nodes of a NodePool as core v1.5 judges it, from the
/// pool alone: it tolerates the pool's hard taints, and its node selector with one of its
/// required node-affinity terms is compatible with the pool's template requirements, a key
/// the template does not define being allowed only for well-known labels or a negative
/// operator. Mirrors core v1.5 `scheduler.go` `isDaemonPodCompatible` (requirements
/// `Compatible` with `AllowUndefinedWellKnownLabels`).
fn daemon_runs_in_pool(pod: &PodDemand, pool: &NodePool, template: &[Requirement]) -> bool {
    if first_untolerated(&pool.taints, &pod.tolerations).is_some() {
        return false;
    }
    let compatible = |r: &Requirement| {
        let mut defined = template.iter().filter(|t| t.key == r.key).peekable();
        if defined.peek().is_none() {
            return WELL_KNOWN.contains(&r.key.as_str())
                || matches!(r.operator, Operator::NotIn | Operator::DoesNotExist);
        }
        defined.all(|t| intersects(t, r))
    };
    pod.node_selector.iter().all(compatible)
        && (pod.node_affinity.is_empty()
            || pod
                .node_affinity
                .iter()
                .any(|term| term.iter().all(compatible)))
}

/// Whether requirements on one key admit a common value, or all hold for an absent label.
fn satisfiable(on_key: &[&Requirement]) -> bool {
    if on_key.iter().all(|r| r.matches_value(None)) {
        return true;
    }
    let mut candidates: Vec<String> = on_key.iter().flat_map(|r| r.values.clone()).collect();
    for r in on_key {
        for v in &r.values {
            if let Ok(n) = v.parse::<i64>() {
                candidates.push(n.saturating_add(1).to_string());
                candidates.push(n.saturating_sub(1).to_string());
            }
        }
    }
    candidates.push("\u{0}other".to_string());
    candidates
        .iter()
        .any(|v| on_key.iter().all(|r| r.matches_value(Some(v))))
}

/// Whether two requirements on one key admit a common value, or are both negative (core
/// `requirements.go` `Intersects`).
fn intersects(a: &Requirement, b: &Requirement) -> bool {
    if a.matches_value(None) && b.matches_value(None) {
        return true;
    }
    let mut candidates: Vec<String> = a.values.iter().chain(&b.values).cloned().collect();
    for v in a.values.iter().chain(&b.values) {
        if let Ok(n) = v.parse::<i64>() {
            candidates.push(n.saturating_add(1).to_string());
            candidates.push(n.saturating_sub(1).to_string());
        }
    }
    // A value neither names, for two negative requirements.
    candidates.push("\u{0}other".to_string());
    candidates
        .iter()
        .any(|v| a.matches_value(Some(v)) && b.matches_value(Some(v)))
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
            crate::vocab::keys::MEMBER_LABEL,
            crate::vocab::capacity::CPU,
            crate::vocab::capacity::MEMORY
        )));
    }
    Ok(())
}

/// Warnings about the catalog the user should see (default prices).
pub(crate) fn warnings(snapshot: &Snapshot) -> Vec<String> {
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
                crate::vocab::capacity::PRICE,
                f.price
            )
        })
        .collect()
}
