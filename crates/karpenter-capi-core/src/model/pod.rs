//! A pod as the scheduler sees it ([`PodDemand`]): effective requests, node selection,
//! tolerations, pod (anti-)affinity, topology spread, preferences, volumes and host ports, read
//! from a Pod or a pod template.

use k8s_openapi::api::core::v1::{Container, NodeSelectorTerm, PodAffinityTerm, PodSpec};
use serde::Serialize;

use super::constraints::{
    self, ClaimRef, SpreadConstraint, VolumeRequirement, WeightedNodeTerm, WeightedTerm,
};
use super::hostport::HostPort;
use super::labels::{LabelSelector, Labels, Operator, Requirement, normalized_key};
use super::resources::Resources;
use super::taints::Toleration;
use crate::vocab::keys;

/// A required pod (anti-)affinity term, with its namespaces resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct AffinityTerm {
    /// Which pods the term is about.
    pub(crate) selector: LabelSelector,
    /// The topology domain (`kubernetes.io/hostname`, `topology.kubernetes.io/zone`, ...).
    pub(crate) topology_key: String,
    /// Namespaces the selected pods may be in; empty means every namespace.
    pub(crate) namespaces: Vec<String>,
}

impl AffinityTerm {
    /// Whether the term selects a pod with these labels in this namespace.
    pub fn selects(&self, namespace: &str, labels: &Labels) -> bool {
        (self.namespaces.is_empty() || self.namespaces.iter().any(|n| n == namespace))
            && self.selector.matches(labels)
    }
}

/// Everything about a pod that decides where it can run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDemand {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Labels, for pod (anti-)affinity.
    pub labels: Labels,
    /// Effective requests, including one pod slot: pod-level cpu and memory requests
    /// (`spec.resources`) in place of the containers' when set, plus overhead.
    pub requests: Resources,
    /// The requests counted from the containers alone (plus overhead), when pod-level
    /// resources replaced them in [`PodDemand::requests`]: what Karpenter v1.5 counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) container_requests: Option<Resources>,
    /// `spec.nodeSelector` as `In` requirements, ANDed with the affinity terms.
    pub(crate) node_selector: Vec<Requirement>,
    /// Required node affinity: a node must satisfy one of these terms (empty: no constraint).
    pub(crate) node_affinity: Vec<Vec<Requirement>>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
    /// Required pod anti-affinity terms.
    pub anti_affinity: Vec<AffinityTerm>,
    /// Required pod affinity terms.
    pub(crate) affinity: Vec<AffinityTerm>,
    /// Host ports its containers take on the node.
    pub host_ports: Vec<HostPort>,
    /// Topology spread constraints (`ScheduleAnyway` ones until relaxed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) spread: Vec<SpreadConstraint>,
    /// Preferred pod affinity terms, heaviest first; treated as required until relaxed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) preferred_affinity: Vec<WeightedTerm>,
    /// Preferred pod anti-affinity terms, heaviest first; treated as required until relaxed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) preferred_anti_affinity: Vec<WeightedTerm>,
    /// Preferred node affinity terms, heaviest first; the first is treated as required until
    /// relaxed (Karpenter's order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) preferred_node_affinity: Vec<WeightedNodeTerm>,
    /// PreferNoSchedule taints keep it off as NoSchedule ones do: set by Karpenter's planning
    /// until its last relaxation step ([`crate::sched::strategy::Relaxing`]); the
    /// kube-scheduler (false) only prefers other nodes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) prefer_no_schedule_hard: bool,
    /// PersistentVolumeClaims its volumes use.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) claims: Vec<ClaimRef>,
    /// Where those volumes let it run (resolved by the loader from PVs and StorageClasses).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volume_requirements: Vec<VolumeRequirement>,
    /// `spec.runtimeClassName` of a spec whose `spec.overhead` is unset (no admission filled it
    /// in: a written input or a template): the loader adds that RuntimeClass's fixed overhead
    /// to the requests once every object is in ([`PodDemand::add_overhead`]), then clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runtime_class: Option<String>,
    /// The pod asks for Dynamic Resource Allocation (`spec.resourceClaims`, or a container's
    /// or init container's `resources.claims`): it schedules nowhere, as in core v1.14 with its
    /// default `--ignore-dra-requests` (`scheduler.go`), so no node is provisioned for it and
    /// its node is never consolidated or drifted (its pods would have no home).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) dynamic_resources: bool,
}

impl PodDemand {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `self.key().cmp(&other.key())` without building either key (queue sorts compare
    /// pods by it often).
    pub(crate) fn cmp_key(&self, other: &PodDemand) -> std::cmp::Ordering {
        if self.namespace == other.namespace {
            return self.name.cmp(&other.name);
        }
        self.namespace
            .bytes()
            .chain(*b"/")
            .chain(self.name.bytes())
            .cmp(
                other
                    .namespace
                    .bytes()
                    .chain(*b"/")
                    .chain(other.name.bytes()),
            )
    }

    /// Whether any node requirement of the pod (selector, required or preferred node affinity,
    /// volume topology) is about this label key.
    pub(crate) fn requires_label(&self, key: &str) -> bool {
        self.node_selector
            .iter()
            .chain(self.node_affinity.iter().flatten())
            .chain(
                self.preferred_node_affinity
                    .iter()
                    .flat_map(|t| &t.requirements),
            )
            .chain(
                self.volume_requirements
                    .iter()
                    .flat_map(|v| v.alternatives.iter().flatten()),
            )
            .any(|r| r.key == key)
    }

    /// Whether the pod's node selector and required node affinity accept these labels; the
    /// first unmet requirement otherwise.
    pub fn node_requirement_unmet(&self, labels: &Labels) -> Option<&Requirement> {
        if let Some(r) = self.node_selector.iter().find(|r| !r.matches(labels)) {
            return Some(r);
        }
        if self.node_affinity.is_empty() {
            return None;
        }
        // Any one term may match; report the first failing requirement of the first term.
        let mut first_failure = None;
        for term in &self.node_affinity {
            match term.iter().find(|r| !r.matches(labels)) {
                None => return None,
                Some(r) => {
                    first_failure.get_or_insert(r);
                }
            }
        }
        first_failure
    }

    /// Adds a pod overhead (a RuntimeClass's `overhead.podFixed`) to the requests, both the
    /// effective ones and the containers-only ones v1.5 counts, as the API server's
    /// RuntimeClass admission would have set `spec.overhead`.
    pub(crate) fn add_overhead(&mut self, overhead: &Resources) {
        self.requests.add(overhead);
        if let Some(c) = &mut self.container_requests {
            c.add(overhead);
        }
    }

    /// Whether the pod has preferences left to relax.
    pub(crate) fn has_preferences(&self) -> bool {
        !self.preferred_affinity.is_empty()
            || !self.preferred_anti_affinity.is_empty()
            || !self.preferred_node_affinity.is_empty()
            || self.spread.iter().any(|c| !c.hard)
    }

    /// Whether any constraint of the pod depends on pods on other nodes (affinity, non-hostname
    /// anti-affinity, preferred terms, topology spread).
    pub(crate) fn has_topology(&self) -> bool {
        !self.affinity.is_empty()
            || !self.spread.is_empty()
            || !self.preferred_affinity.is_empty()
            || !self.preferred_anti_affinity.is_empty()
            || self
                .anti_affinity
                .iter()
                .any(|t| t.topology_key != keys::HOSTNAME)
    }

    /// Drops one preference, in Karpenter's order (`preferences.go`): the heaviest preferred
    /// pod affinity term, then pod anti-affinity term, then node affinity term, then a
    /// `ScheduleAnyway` spread constraint. Returns what was dropped, or None when nothing is left.
    pub(crate) fn relax(&mut self) -> Option<String> {
        if !self.preferred_affinity.is_empty() {
            let t = self.preferred_affinity.remove(0);
            return Some(format!(
                "dropped preferred pod affinity (weight {}) to {} on {}",
                t.weight, t.term.selector, t.term.topology_key
            ));
        }
        if !self.preferred_anti_affinity.is_empty() {
            let t = self.preferred_anti_affinity.remove(0);
            return Some(format!(
                "dropped preferred pod anti-affinity (weight {}) to {} on {}",
                t.weight, t.term.selector, t.term.topology_key
            ));
        }
        if !self.preferred_node_affinity.is_empty() {
            let t = self.preferred_node_affinity.remove(0);
            let reqs: Vec<String> = t.requirements.iter().map(ToString::to_string).collect();
            return Some(format!(
                "dropped preferred node affinity (weight {}) {}",
                t.weight,
                reqs.join(", ")
            ));
        }
        if let Some(i) = self.spread.iter().position(|c| !c.hard) {
            let c = self.spread.remove(i);
            return Some(format!("dropped topology spread {}", c.describe()));
        }
        None
    }

    /// Reads a pod spec (of a Pod or a template). `field` prefixes error locations.
    pub(crate) fn from_spec(
        namespace: &str,
        name: &str,
        labels: Labels,
        spec: &PodSpec,
        field: &str,
    ) -> Result<PodDemand, (String, String)> {
        let container_requests = effective_requests(spec, field)?;
        let requests = with_pod_level(spec, &container_requests, field)?;
        let container_requests = (requests != container_requests).then_some(container_requests);
        let node_selector = spec
            .node_selector
            .iter()
            .flatten()
            .map(|(k, v)| Requirement {
                key: normalized_key(k).to_string(),
                operator: Operator::In,
                values: vec![v.clone()],
            })
            .collect();
        let mut node_affinity = Vec::new();
        let mut affinity = Vec::new();
        let mut anti_affinity = Vec::new();
        let mut preferred_affinity = Vec::new();
        let mut preferred_anti_affinity = Vec::new();
        let mut preferred_node_affinity = Vec::new();
        let spread = constraints::spread_constraints(spec, &labels, field)?;
        if let Some(aff) = &spec.affinity {
            let na = aff.node_affinity.as_ref();
            for (i, t) in na
                .and_then(|na| {
                    na.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .into_iter()
                .flatten()
                .enumerate()
            {
                preferred_node_affinity.push(WeightedNodeTerm {
                    weight: t.weight,
                    requirements: node_selector_term(
                        &t.preference,
                        &format!("{field}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"),
                    )?,
                });
            }
            let weighted = |terms: Option<
                &Vec<k8s_openapi::api::core::v1::WeightedPodAffinityTerm>,
            >,
                            what: &str|
             -> Result<Vec<WeightedTerm>, (String, String)> {
                terms
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, t)| {
                        Ok(WeightedTerm {
                            weight: t.weight,
                            term: affinity_term(
                                namespace,
                                &t.pod_affinity_term,
                                &format!("{field}.affinity.{what}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm"),
                            )?,
                        })
                    })
                    .collect()
            };
            preferred_affinity = weighted(
                aff.pod_affinity.as_ref().and_then(|p| {
                    p.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
                "podAffinity",
            )?;
            preferred_anti_affinity = weighted(
                aff.pod_anti_affinity.as_ref().and_then(|p| {
                    p.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
                "podAntiAffinity",
            )?;
            constraints::heaviest_first(&mut preferred_affinity, |t| t.weight);
            constraints::heaviest_first(&mut preferred_anti_affinity, |t| t.weight);
            constraints::heaviest_first(&mut preferred_node_affinity, |t| t.weight);
            if let Some(terms) = aff.node_affinity.as_ref().and_then(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .as_ref()
            }) {
                for (i, term) in terms.node_selector_terms.iter().enumerate() {
                    node_affinity.push(node_selector_term(
                        term,
                        &format!("{field}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"),
                    )?);
                }
            }
            if let Some(terms) = aff.pod_affinity.as_ref().and_then(|pa| {
                pa.required_during_scheduling_ignored_during_execution
                    .as_ref()
            }) {
                for (i, t) in terms.iter().enumerate() {
                    affinity.push(affinity_term(
                        namespace,
                        t,
                        &format!("{field}.affinity.podAffinity[{i}]"),
                    )?);
                }
            }
            if let Some(terms) = aff.pod_anti_affinity.as_ref().and_then(|pa| {
                pa.required_during_scheduling_ignored_during_execution
                    .as_ref()
            }) {
                for (i, t) in terms.iter().enumerate() {
                    anti_affinity.push(affinity_term(
                        namespace,
                        t,
                        &format!("{field}.affinity.podAntiAffinity[{i}]"),
                    )?);
                }
            }
        }
        let tolerations = spec
            .tolerations
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, t)| {
                Toleration::from_k8s(t).map_err(|e| (format!("{field}.tolerations[{i}]"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let host_ports = spec
            .containers
            .iter()
            .flat_map(|c| c.ports.iter().flatten())
            .filter_map(|p| {
                p.host_port
                    .filter(|hp| *hp > 0)
                    .map(|hp| HostPort::new(p.protocol.as_deref(), hp, p.host_ip.as_deref()))
            })
            .collect();
        Ok(PodDemand {
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels,
            requests,
            container_requests,
            node_selector,
            node_affinity,
            tolerations,
            anti_affinity,
            affinity,
            host_ports,
            spread,
            preferred_affinity,
            preferred_anti_affinity,
            preferred_node_affinity,
            prefer_no_schedule_hard: false,
            claims: constraints::claims(spec, name),
            volume_requirements: Vec::new(),
            runtime_class: spec
                .runtime_class_name
                .clone()
                .filter(|_| spec.overhead.is_none()),
            dynamic_resources: spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty())
                || spec
                    .containers
                    .iter()
                    .chain(spec.init_containers.iter().flatten())
                    .any(|c| {
                        c.resources
                            .as_ref()
                            .and_then(|r| r.claims.as_ref())
                            .is_some_and(|c| !c.is_empty())
                    }),
        })
    }
}

fn container_requests(c: &Container, field: &str) -> Result<Resources, (String, String)> {
    let Some(res) = &c.resources else {
        return Ok(Resources::default());
    };
    // A limit without a request defaults the request to the limit (API server defaulting).
    let mut list: std::collections::BTreeMap<&str, &str> = res
        .limits
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.0.as_str()))
        .collect();
    for (k, v) in res.requests.iter().flatten() {
        list.insert(k.as_str(), v.0.as_str());
    }
    Resources::from_quantities(list)
        .map_err(|(name, e)| (format!("{field}.resources.requests[{name}]"), e.to_string()))
}

/// Kubernetes' effective pod request: max(sum of containers and sidecars, each init container
/// plus the sidecars started before it) plus pod overhead, plus one pod slot.
fn effective_requests(spec: &PodSpec, field: &str) -> Result<Resources, (String, String)> {
    let mut sum = Resources::default();
    for (i, c) in spec.containers.iter().enumerate() {
        sum.add(&container_requests(c, &format!("{field}.containers[{i}]"))?);
    }
    let mut sidecars = Resources::default();
    let mut init_peak = Resources::default();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let r = container_requests(c, &format!("{field}.initContainers[{i}]"))?;
        if c.restart_policy.as_deref() == Some("Always") {
            sidecars.add(&r);
            init_peak.max(&sidecars);
        } else {
            init_peak.max(&sidecars.plus(&r));
        }
    }
    let mut total = sum.plus(&sidecars);
    total.max(&init_peak);
    if let Some(overhead) = &spec.overhead {
        let o =
            Resources::from_quantities(overhead.iter().map(|(k, v)| (k.as_str(), v.0.as_str())))
                .map_err(|(name, e)| (format!("{field}.overhead[{name}]"), e.to_string()))?;
        total.add(&o);
    }
    total.pods = 1;
    Ok(total)
}

/// Kubernetes' effective pod limits (`k8s.io/component-helpers/resource` `PodLimits`, which core
/// v1.14 `utils/resources` `Ceiling` calls and its node metrics sum): the containers' and
/// sidecars' limits, or an init container's with the sidecars started before it when higher;
/// a pod-level cpu or memory limit in place of the containers'; the overhead added to each
/// resource that has a limit. What the limits of requests-only pods are: nothing.
pub(crate) fn effective_limits(spec: &PodSpec) -> Resources {
    let limits = |c: &Container| {
        let list = c.resources.as_ref().and_then(|r| r.limits.as_ref());
        Resources::from_quantities(
            list.into_iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), v.0.as_str())),
        )
        .unwrap_or_default()
    };
    let mut total = Resources::default();
    for c in &spec.containers {
        total.add(&limits(c));
    }
    let mut sidecars = Resources::default();
    let mut init_peak = Resources::default();
    for c in spec.init_containers.iter().flatten() {
        let l = limits(c);
        if c.restart_policy.as_deref() == Some("Always") {
            total.add(&l);
            sidecars.add(&l);
            init_peak.max(&sidecars);
        } else {
            init_peak.max(&sidecars.plus(&l));
        }
    }
    total.max(&init_peak);
    if let Some(pod) = spec.resources.as_ref().and_then(|r| r.limits.as_ref()) {
        let read = |name: &str| {
            pod.get(name)
                .and_then(|q| Resources::from_quantities([(name, q.0.as_str())]).ok())
        };
        if let Some(r) = read(super::resources::CPU) {
            total.cpu_millis = r.cpu_millis;
        }
        if let Some(r) = read(super::resources::MEMORY) {
            total.memory_bytes = r.memory_bytes;
        }
    }
    if let Some(overhead) = &spec.overhead {
        let o =
            Resources::from_quantities(overhead.iter().map(|(k, v)| (k.as_str(), v.0.as_str())))
                .unwrap_or_default();
        let bump = |l: &mut i64, o: i64| {
            if *l != 0 {
                *l = l.saturating_add(o);
            }
        };
        bump(&mut total.cpu_millis, o.cpu_millis);
        bump(&mut total.memory_bytes, o.memory_bytes);
        bump(
            &mut total.ephemeral_storage_bytes,
            o.ephemeral_storage_bytes,
        );
        for (k, v) in &o.extended {
            if let Some(l) = total.extended.get_mut(k) {
                bump(l, *v);
            }
        }
    }
    total.pods = 0;
    total
}

/// Pod-level resources (`spec.resources`, on by default since Kubernetes 1.34): a pod-level
/// cpu or memory request replaces the containers' for that resource, a pod-level limit without
/// a request standing for it (API defaulting); overhead is still added. Other resources stay
/// the containers'. Mirrors `k8s.io/component-helpers/resource` `PodRequests`, which core
/// v1.14 `utils/resources` `Ceiling` calls.
fn with_pod_level(
    spec: &PodSpec,
    containers: &Resources,
    field: &str,
) -> Result<Resources, (String, String)> {
    let Some(res) = &spec.resources else {
        return Ok(containers.clone());
    };
    let read = |list: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
                part: &str|
     -> Result<Resources, (String, String)> {
        let pairs = list
            .into_iter()
            .flatten()
            .filter(|(k, _)| {
                k.as_str() == super::resources::CPU || k.as_str() == super::resources::MEMORY
            })
            .map(|(k, v)| (k.as_str(), v.0.as_str()));
        Resources::from_quantities(pairs)
            .map_err(|(name, e)| (format!("{field}.resources.{part}[{name}]"), e.to_string()))
    };
    let requests = read(res.requests.as_ref(), "requests")?;
    let limits = read(res.limits.as_ref(), "limits")?;
    let set = |name: &str| res.requests.as_ref().is_some_and(|r| r.contains_key(name));
    let limited = |name: &str| res.limits.as_ref().is_some_and(|r| r.contains_key(name));
    let overhead = match &spec.overhead {
        Some(o) => Resources::from_quantities(o.iter().map(|(k, v)| (k.as_str(), v.0.as_str())))
            .map_err(|(name, e)| (format!("{field}.overhead[{name}]"), e.to_string()))?,
        None => Resources::default(),
    };
    let mut out = containers.clone();
    let cpu = super::resources::CPU;
    let memory = super::resources::MEMORY;
    if set(cpu) || limited(cpu) {
        let pod = if set(cpu) {
            requests.cpu_millis
        } else {
            limits.cpu_millis
        };
        out.cpu_millis = pod.saturating_add(overhead.cpu_millis);
    }
    if set(memory) || limited(memory) {
        let pod = if set(memory) {
            requests.memory_bytes
        } else {
            limits.memory_bytes
        };
        out.memory_bytes = pod.saturating_add(overhead.memory_bytes);
    }
    Ok(out)
}

fn node_selector_term(
    term: &NodeSelectorTerm,
    field: &str,
) -> Result<Vec<Requirement>, (String, String)> {
    let mut out = term_expressions(term, field)?;
    // matchFields only supports metadata.name, which a node that does not exist yet never has.
    for f in term.match_fields.iter().flatten() {
        out.push(Requirement {
            key: format!("metadata.name ({})", f.key),
            operator: Operator::In,
            values: f.values.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

/// The `matchExpressions` of a node selector term at `field` as requirements (keys normalized);
/// an unknown operator is an error naming its field. Pods' node affinity and volumes' node
/// affinity (`volume.rs`) both read their terms' expressions here.
pub(super) fn term_expressions(
    term: &NodeSelectorTerm,
    field: &str,
) -> Result<Vec<Requirement>, (String, String)> {
    let mut out = Vec::new();
    for (i, e) in term.match_expressions.iter().flatten().enumerate() {
        let operator = Operator::parse(&e.operator).ok_or_else(|| {
            (
                format!("{field}.matchExpressions[{i}].operator"),
                format!(
                    "unknown operator {:?} (valid: In, NotIn, Exists, DoesNotExist, Gt, Lt)",
                    e.operator
                ),
            )
        })?;
        out.push(Requirement {
            key: normalized_key(&e.key).to_string(),
            operator,
            values: e.values.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

fn affinity_term(
    namespace: &str,
    t: &PodAffinityTerm,
    field: &str,
) -> Result<AffinityTerm, (String, String)> {
    let selector = match &t.label_selector {
        Some(s) => LabelSelector::from_k8s(s).map_err(|e| (format!("{field}.labelSelector"), e))?,
        // A term without a selector selects no pods.
        None => LabelSelector {
            requirements: vec![Requirement::new("\u{0}no-selector", Operator::Exists, &[])],
        },
    };
    let namespaces = match (&t.namespaces, &t.namespace_selector) {
        // An empty namespaceSelector ({}) means every namespace.
        (_, Some(ns))
            if ns.match_labels.as_ref().is_none_or(|m| m.is_empty())
                && ns.match_expressions.as_ref().is_none_or(|m| m.is_empty()) =>
        {
            Vec::new()
        }
        (Some(list), _) if !list.is_empty() => list.clone(),
        _ => vec![namespace.to_string()],
    };
    Ok(AffinityTerm {
        selector,
        topology_key: t.topology_key.clone(),
        namespaces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> PodSpec {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn effective_requests_follow_kubernetes() {
        let s = spec(
            "containers:\n- name: a\n  resources: {requests: {cpu: 500m, memory: 256Mi}}\n- name: b\n  resources: {limits: {cpu: '1', memory: 1Gi}}\ninitContainers:\n- name: init\n  resources: {requests: {cpu: '2'}}\n",
        );
        let p = PodDemand::from_spec("ns", "p", Labels::new(), &s, "spec").unwrap();
        assert_eq!(
            p.requests.cpu_millis, 2000,
            "init container peak wins over 1500m"
        );
        assert_eq!(p.requests.memory_bytes, 256 * (1 << 20) + (1 << 30));
        assert_eq!(p.requests.pods, 1);
    }

    #[test]
    fn effective_limits_follow_kubernetes() {
        // Containers 1 CPU + 2 CPU limits, memory limited on one only; a sidecar adds 500m; an
        // init container of 4 CPU beside the sidecar wins; overhead only where a limit is set.
        let s = spec(
            "containers:\n- name: a\n  resources: {limits: {cpu: '1', memory: 1Gi}}\n- name: b\n  resources: {requests: {cpu: 300m}, limits: {cpu: '2'}}\n- name: c\n  resources: {requests: {memory: 1Gi}}\ninitContainers:\n- name: side\n  restartPolicy: Always\n  resources: {limits: {cpu: 500m}}\n- name: init\n  resources: {limits: {cpu: '4'}}\noverhead: {cpu: 100m, ephemeral-storage: 1Gi}\n",
        );
        let l = effective_limits(&s);
        assert_eq!(
            l.cpu_millis, 4600,
            "init 4 CPU + sidecar 500m + overhead 100m"
        );
        assert_eq!(l.memory_bytes, 1 << 30);
        assert_eq!(l.ephemeral_storage_bytes, 0, "no limit, no overhead");
        assert_eq!(l.pods, 0);
        // Without the init container: 1 + 2 + 0.5 + 0.1.
        let s = spec(
            "containers:\n- name: a\n  resources: {limits: {cpu: '1'}}\n- name: b\n  resources: {limits: {cpu: '2'}}\ninitContainers:\n- name: side\n  restartPolicy: Always\n  resources: {limits: {cpu: 500m}}\noverhead: {cpu: 100m}\nresources: {limits: {memory: 2Gi}}\n",
        );
        let l = effective_limits(&s);
        assert_eq!(l.cpu_millis, 3600);
        assert_eq!(l.memory_bytes, 2 << 30, "the pod-level limit");
    }

    #[test]
    fn invalid_quantity_names_the_field() {
        let s = spec("containers:\n- name: a\n  resources: {requests: {cpu: 4x}}\n");
        let (field, msg) = PodDemand::from_spec("ns", "p", Labels::new(), &s, "spec").unwrap_err();
        assert_eq!(field, "spec.containers[0].resources.requests[cpu]");
        assert!(msg.contains("\"4x\""), "{msg}");
    }

    #[test]
    fn affinity_terms_and_node_requirements() {
        let s = spec(
            "containers: [{name: a}]\nnodeSelector: {disk: ssd}\naffinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n      - matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]\n  podAntiAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n    - labelSelector: {matchLabels: {app: web}}\n      topologyKey: kubernetes.io/hostname\n",
        );
        let p = PodDemand::from_spec("default", "p", Labels::new(), &s, "spec").unwrap();
        assert_eq!(p.anti_affinity.len(), 1);
        assert_eq!(p.anti_affinity[0].namespaces, vec!["default".to_string()]);
        let mut labels: Labels = [("disk".to_string(), "ssd".to_string())].into();
        labels.insert("kubernetes.io/arch".into(), "amd64".into());
        assert_eq!(
            p.node_requirement_unmet(&labels).unwrap().to_string(),
            "kubernetes.io/arch In [arm64]"
        );
        labels.insert("kubernetes.io/arch".into(), "arm64".into());
        assert!(p.node_requirement_unmet(&labels).is_none());
        labels.remove("disk");
        assert_eq!(p.node_requirement_unmet(&labels).unwrap().key, "disk");
    }
}
