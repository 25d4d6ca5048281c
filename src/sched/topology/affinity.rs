//! Pod affinity and anti-affinity (required, and preferred until relaxed) against the pods
//! already in a node's topology domains, with counts kept per term so a check costs a lookup
//! instead of a walk over every pod of a zone (Karpenter keeps the same per-term domain counts
//! in `topologygroup.go`).

use std::collections::HashMap;

use crate::model::labels::Labels;
use crate::model::pod::{AffinityTerm, PodDemand};
use crate::model::snapshot::Snapshot;
use crate::sched::fit::Unfit;

/// The pods one term selects: per domain (count, first pod), and in total.
#[derive(Debug, Clone)]
struct TermCount {
    term: AffinityTerm,
    per_domain: HashMap<String, (usize, usize)>,
    total: usize,
}

/// Every (anti-)affinity term of the snapshot's pods and what each selects where, plus the pods
/// with required anti-affinity per key and domain (for the reverse check).
#[derive(Debug, Clone, Default)]
pub struct AffinityIndex {
    terms: Vec<TermCount>,
    ids: HashMap<AffinityTerm, usize>,
    /// Per topology key, per domain: pods whose required anti-affinity uses that key.
    repelling: HashMap<String, HashMap<String, Vec<usize>>>,
    /// Keys some required anti-affinity uses.
    anti_keys: Vec<String>,
}

impl AffinityIndex {
    /// The terms of every pod (bound pods' required anti-affinity included).
    pub fn new(snapshot: &Snapshot) -> AffinityIndex {
        let mut index = AffinityIndex::default();
        for p in &snapshot.pods {
            let d = &p.demand;
            let terms = d
                .affinity
                .iter()
                .chain(d.anti_affinity.iter())
                .chain(d.preferred_affinity.iter().map(|w| &w.term))
                .chain(d.preferred_anti_affinity.iter().map(|w| &w.term));
            for t in terms {
                if !index.ids.contains_key(t) {
                    index.ids.insert(t.clone(), index.terms.len());
                    index.terms.push(TermCount {
                        term: t.clone(),
                        per_domain: HashMap::new(),
                        total: 0,
                    });
                }
            }
            for t in &d.anti_affinity {
                if !index.anti_keys.contains(&t.topology_key) {
                    index.anti_keys.push(t.topology_key.clone());
                }
            }
        }
        index
    }

    /// Whether no pod has any term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Records a pod (snapshot index `pod`) on a node with these labels.
    pub fn record(&mut self, pod: usize, demand: &PodDemand, labels: &Labels) {
        for t in &mut self.terms {
            if t.term.selects(&demand.namespace, &demand.labels) {
                t.total += 1;
                if let Some(v) = labels.get(&t.term.topology_key) {
                    match t.per_domain.get_mut(v) {
                        Some(e) => e.0 += 1,
                        None => {
                            t.per_domain.insert(v.clone(), (1, pod));
                        }
                    }
                }
            }
        }
        for term in &demand.anti_affinity {
            if let Some(v) = labels.get(&term.topology_key) {
                let list = self
                    .repelling
                    .entry(term.topology_key.clone())
                    .or_default()
                    .entry(v.clone())
                    .or_default();
                if !list.contains(&pod) {
                    list.push(pod);
                }
            }
        }
    }

    fn here(&self, term: &AffinityTerm, labels: &Labels) -> Option<(usize, usize)> {
        let t = &self.terms[*self.ids.get(term)?];
        labels
            .get(&term.topology_key)
            .and_then(|v| t.per_domain.get(v))
            .copied()
    }

    fn anywhere(&self, term: &AffinityTerm) -> bool {
        self.ids.get(term).is_some_and(|&i| self.terms[i].total > 0)
    }

    /// Whether `demand` (pod `pod`) may go on a node with these labels.
    pub fn check(
        &self,
        snapshot: &Snapshot,
        pod: usize,
        demand: &PodDemand,
        labels: &Labels,
    ) -> Result<(), Unfit> {
        let pods = &snapshot.pods;
        for term in &demand.anti_affinity {
            if let Some((_, first)) = self.here(term, labels) {
                return Err(Unfit::AntiAffinity {
                    pod: pods[first].demand.key(),
                    topology_key: term.topology_key.clone(),
                });
            }
        }
        for w in &demand.preferred_anti_affinity {
            if let Some((_, first)) = self.here(&w.term, labels) {
                return Err(Unfit::PreferredAntiAffinity {
                    pod: pods[first].demand.key(),
                    topology_key: w.term.topology_key.clone(),
                });
            }
        }
        for key in &self.anti_keys {
            let Some(v) = labels.get(key) else { continue };
            for &other in self
                .repelling
                .get(key)
                .and_then(|d| d.get(v))
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let od = &pods[other].demand;
                if other != pod
                    && od.anti_affinity.iter().any(|t| {
                        &t.topology_key == key && t.selects(&demand.namespace, &demand.labels)
                    })
                {
                    return Err(Unfit::AntiAffinity {
                        pod: od.key(),
                        topology_key: key.clone(),
                    });
                }
            }
        }
        // Affinity: a selected pod in the domain; or none anywhere yet and the pod selects
        // itself (the first of a self-affine group may go anywhere).
        let lonely = |term: &AffinityTerm| {
            self.anywhere(term) || !term.selects(&demand.namespace, &demand.labels)
        };
        for term in &demand.affinity {
            if self.here(term, labels).is_none() && lonely(term) {
                return Err(Unfit::AffinityUnsatisfied {
                    topology_key: term.topology_key.clone(),
                });
            }
        }
        for w in &demand.preferred_affinity {
            if self.here(&w.term, labels).is_none() && lonely(&w.term) {
                return Err(Unfit::PreferredAffinityUnsatisfied {
                    topology_key: w.term.topology_key.clone(),
                });
            }
        }
        Ok(())
    }
}
