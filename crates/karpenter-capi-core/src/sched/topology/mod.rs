//! Topology spread constraints as kube-scheduler and Karpenter count them (Karpenter's
//! `provisioning/scheduling/topologygroup.go`, `topology.go`, `topologynodefilter.go`).
//!
//! Pods whose constraints count the same pods over the same nodes share a [`Group`]: its
//! eligible domains (the values of the topology key on existing and in-flight nodes and on the
//! flavors' labels, for nodes the constraint's node filter admits) and how many selected pods
//! each holds, counting bound pods, then every placement of the plan. A pod may go into a
//! domain when `count(domain) + (1 if it selects itself) - min(counts) <= maxSkew`, where the
//! minimum is 0 for the hostname key (a new node is always a fresh domain) and when there are
//! fewer eligible domains than `minDomains`.

pub(crate) mod affinity;
pub(crate) mod place;

use std::collections::HashMap;
use std::sync::Arc;

use super::catalog::Offering;
use super::fit::Unfit;
use crate::model::constraints::SpreadConstraint;
use crate::model::labels::{LabelSelector, Labels, Requirement};
use crate::model::pod::PodDemand;
use crate::model::snapshot::Snapshot;
use crate::model::taints::{Taint, Toleration, first_untolerated};
use crate::vocab::keys;

/// Which nodes a constraint counts: `nodeAffinityPolicy` and `nodeTaintsPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct NodeFilter {
    /// The owner's node selector and required node-affinity terms (Honor).
    requirements: Option<(Vec<Requirement>, Vec<Vec<Requirement>>)>,
    /// The owner's tolerations (Honor).
    tolerations: Option<Vec<Toleration>>,
}

impl NodeFilter {
    fn of(pod: &PodDemand, c: &SpreadConstraint) -> NodeFilter {
        NodeFilter {
            requirements: c
                .honor_node_affinity
                .then(|| (pod.node_selector.clone(), pod.node_affinity.clone())),
            tolerations: c.honor_node_taints.then(|| pod.tolerations.clone()),
        }
    }

    fn admits(&self, labels: &Labels, taints: &[Taint]) -> bool {
        if let Some((selector, terms)) = &self.requirements {
            if !selector.iter().all(|r| r.matches(labels)) {
                return false;
            }
            if !terms.is_empty() && !terms.iter().any(|t| t.iter().all(|r| r.matches(labels))) {
                return false;
            }
        }
        match &self.tolerations {
            Some(t) => first_untolerated(taints, t).is_none(),
            None => true,
        }
    }
}

/// Pods counted alike over nodes filtered alike, and the count per domain.
#[derive(Debug, Clone)]
struct Group {
    key: String,
    namespace: String,
    selector: LabelSelector,
    filter: NodeFilter,
    /// Every eligible domain and its count.
    counts: HashMap<String, i32>,
}

impl Group {
    fn selects(&self, pod: &PodDemand) -> bool {
        pod.namespace == self.namespace && self.selector.matches(&pod.labels)
    }

    /// The smallest count, and (eligible, minDomains) when there are too few domains.
    fn min(&self, c: &SpreadConstraint) -> (i32, Option<(i32, i32)>) {
        if self.key == keys::HOSTNAME {
            return (0, None);
        }
        let eligible = i32::try_from(self.counts.len()).unwrap_or(i32::MAX);
        match c.min_domains {
            Some(m) if eligible < m => (0, Some((eligible, m))),
            _ => (self.counts.values().copied().min().unwrap_or(0), None),
        }
    }
}

/// The numbers of a violated constraint: the count the pod would make in the domain, the
/// smallest count, and (eligible, minDomains) when there are too few domains.
#[derive(Debug, Clone, Copy)]
struct Skew {
    count: i32,
    min: i32,
    short: Option<(i32, i32)>,
}

/// Every spread group of the pods being planned, and their counts as the plan grows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spread {
    groups: Vec<Group>,
    /// Per pod with constraints (snapshot index): its groups, in the order of its constraints.
    owned: Arc<ahash::AHashMap<usize, Vec<usize>>>,
}

impl Spread {
    /// The groups of every unbound pod's constraints, with their domains registered from the
    /// nodes (`labels`, `taints` of each) and the offerings. Counts start at 0: the caller
    /// records the bound pods.
    pub(crate) fn new(
        snapshot: &Snapshot,
        nodes: &[(&Labels, &[Taint])],
        offerings: &[Offering],
    ) -> Spread {
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<(String, String, LabelSelector, NodeFilter), usize> = HashMap::new();
        let mut owned = ahash::AHashMap::new();
        for (pi, p) in snapshot.pods.iter().enumerate() {
            if p.demand.spread.is_empty() || p.terminal || p.node_name.is_some() {
                continue;
            }
            let mut mine = Vec::with_capacity(p.demand.spread.len());
            for c in &p.demand.spread {
                let filter = NodeFilter::of(&p.demand, c);
                let id = (
                    c.topology_key.clone(),
                    p.demand.namespace.clone(),
                    c.selector.clone(),
                    filter,
                );
                let g = match index.get(&id) {
                    Some(&g) => g,
                    None => {
                        let mut group = Group {
                            key: id.0.clone(),
                            namespace: id.1.clone(),
                            selector: id.2.clone(),
                            filter: id.3.clone(),
                            counts: HashMap::new(),
                        };
                        if group.key != keys::HOSTNAME {
                            register(&mut group, nodes, offerings);
                        }
                        groups.push(group);
                        index.insert(id, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                mine.push(g);
            }
            owned.insert(pi, mine);
        }
        Spread {
            groups,
            owned: Arc::new(owned),
        }
    }

    /// Whether any pod has a spread constraint.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Counts a pod placed or bound on a node with these labels and taints.
    pub(crate) fn record(&mut self, pod: &PodDemand, labels: &Labels, taints: &[Taint]) {
        for g in &mut self.groups {
            if let Some(domain) = labels.get(&g.key)
                && g.selects(pod)
                && g.filter.admits(labels, taints)
            {
                match g.counts.get_mut(domain) {
                    Some(n) => *n += 1,
                    None => {
                        g.counts.insert(domain.clone(), 1);
                    }
                }
            }
        }
    }

    /// Takes back a [`Spread::record`] of a pod on a node with these labels and taints. A
    /// hostname domain left at 0 goes (a node's domain exists while it holds a counted pod or
    /// was registered); the other keys' domains were all registered and stay.
    pub(crate) fn unrecord(&mut self, pod: &PodDemand, labels: &Labels, taints: &[Taint]) {
        for g in &mut self.groups {
            if let Some(domain) = labels.get(&g.key)
                && g.selects(pod)
                && g.filter.admits(labels, taints)
                && let Some(n) = g.counts.get_mut(domain)
            {
                *n -= 1;
                if *n == 0 && g.key == keys::HOSTNAME {
                    g.counts.remove(domain);
                }
            }
        }
    }

    /// The first of the pod's constraints a node with these labels would violate: its index,
    /// and its [`Skew`] there, or `None` for a missing key. No allocation:
    /// search asks this for every candidate node.
    fn violated(
        &self,
        pod: usize,
        demand: &PodDemand,
        labels: &Labels,
    ) -> Option<(usize, Option<Skew>)> {
        let mine = self.owned.get(&pod)?;
        for (i, (c, &g)) in demand.spread.iter().zip(mine).enumerate() {
            let group = &self.groups[g];
            let Some(domain) = labels.get(&c.topology_key) else {
                return Some((i, None));
            };
            let count =
                group.counts.get(domain).copied().unwrap_or(0) + i32::from(group.selects(demand));
            let (min, short) = group.min(c);
            if count - min > c.max_skew {
                return Some((i, Some(Skew { count, min, short })));
            }
        }
        None
    }

    /// [`Spread::check`] as a yes or no, without building a reason.
    pub(crate) fn admits(&self, pod: usize, demand: &PodDemand, labels: &Labels) -> bool {
        self.is_empty() || self.violated(pod, demand, labels).is_none()
    }

    /// Whether the pod (snapshot index) may go on a node with these labels, by its own spread
    /// constraints; the first one violated otherwise, with its numbers.
    pub(crate) fn check(
        &self,
        pod: usize,
        demand: &PodDemand,
        labels: &Labels,
    ) -> Result<(), Unfit> {
        let Some((i, numbers)) = self.violated(pod, demand, labels) else {
            return Ok(());
        };
        let c = &demand.spread[i];
        match numbers {
            None => Err(Unfit::SpreadKeyMissing {
                topology_key: c.topology_key.clone(),
            }),
            Some(Skew { count, min, short }) => Err(Unfit::SpreadSkew {
                topology_key: c.topology_key.clone(),
                domain: labels.get(&c.topology_key).cloned().unwrap_or_default(),
                count,
                min,
                max_skew: c.max_skew,
                selector: self.groups[self.owned[&pod][i]].selector.to_string(),
                hard: c.hard,
                min_domains: short,
            }),
        }
    }
}

/// Registers the group's domains (count 0): the key's values on the nodes and offerings the
/// group's filter admits.
fn register(group: &mut Group, nodes: &[(&Labels, &[Taint])], offerings: &[Offering]) {
    let candidates = nodes
        .iter()
        .map(|(l, t)| (*l, *t))
        .chain(offerings.iter().map(|o| (&o.labels, o.taints.as_slice())));
    for (labels, taints) in candidates {
        if let Some(v) = labels.get(&group.key)
            && !group.counts.contains_key(v)
            && group.filter.admits(labels, taints)
        {
            group.counts.insert(v.clone(), 0);
        }
    }
}

#[cfg(test)]
mod tests;
