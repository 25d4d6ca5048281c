//! Pod affinity and anti-affinity (required, and preferred until relaxed) against the pods
//! already in a node's topology domains, with counts kept per term so a check costs a lookup
//! instead of a walk over every pod of a zone (Karpenter keeps the same per-term domain counts
//! in `topologygroup.go`).
//!
//! Search asks "may this pod go there?" millions of times, so the terms are numbered once, each
//! pod knows the numbers of the terms it carries and (from its first placement or check on) of
//! the terms that select it, and a check compares counts without hashing a term or building a
//! message; the reason ([`Unfit`]) is built only when somebody reads it.

use std::sync::{Arc, OnceLock};

use ahash::AHashMap;

use crate::model::labels::Labels;
use crate::model::pod::{AffinityTerm, PodDemand};
use crate::model::snapshot::Snapshot;
use crate::sched::fit::Unfit;

/// A term's number in [`Terms::terms`].
type TermId = u32;

/// The terms a pod carries, by number.
#[derive(Debug, Default)]
struct Carried {
    /// Required anti-affinity.
    anti: Box<[TermId]>,
    /// Preferred anti-affinity (until relaxed).
    preferred_anti: Box<[TermId]>,
    /// Required affinity, each with whether it selects the pod itself.
    affinity: Box<[(TermId, bool)]>,
    /// Preferred affinity, each with whether it selects the pod itself.
    preferred_affinity: Box<[(TermId, bool)]>,
}

/// The terms that select a pod, by number.
#[derive(Debug, Default)]
struct Selected {
    /// Every term that selects it.
    all: Box<[TermId]>,
    /// Those some pod carries as required anti-affinity (the reverse check).
    by_anti: Box<[TermId]>,
}

/// What stays the same while a plan grows, shared by every copy of the index.
#[derive(Debug, Default)]
struct Terms {
    terms: Vec<AffinityTerm>,
    /// Per term: whether some pod carries it as required anti-affinity.
    required_anti: Vec<bool>,
    /// Per snapshot pod.
    carried: Vec<Carried>,
    /// Per snapshot pod, filled when first needed (most pods of a large snapshot are never
    /// placed or checked in a given plan).
    selected: Vec<OnceLock<Selected>>,
}

impl Terms {
    fn selected(&self, pod: usize, demand: &PodDemand) -> &Selected {
        self.selected[pod].get_or_init(|| {
            let all: Vec<TermId> = (0..self.terms.len())
                .filter(|&t| self.terms[t].selects(&demand.namespace, &demand.labels))
                .map(|t| t as TermId)
                .collect();
            let by_anti = all
                .iter()
                .copied()
                .filter(|&t| self.required_anti[t as usize])
                .collect();
            Selected {
                all: all.into(),
                by_anti,
            }
        })
    }
}

/// Numbers terms in order of first appearance.
#[derive(Default)]
struct Numbering<'s> {
    ids: AHashMap<&'s AffinityTerm, TermId>,
    terms: Vec<AffinityTerm>,
    required_anti: Vec<bool>,
}

impl<'s> Numbering<'s> {
    fn id(&mut self, term: &'s AffinityTerm, anti: bool) -> TermId {
        let next = self.terms.len() as TermId;
        let id = *self.ids.entry(term).or_insert(next);
        if id == next {
            self.terms.push(term.clone());
            self.required_anti.push(false);
        }
        self.required_anti[id as usize] |= anti;
        id
    }
}

/// The pods one term selects: per domain (count, first pod), and in total.
#[derive(Debug, Clone, Default)]
struct Domains {
    per_domain: AHashMap<String, (usize, usize)>,
    total: usize,
}

/// Every (anti-)affinity term of the snapshot's pods and what each selects where, plus, per
/// required anti-affinity term, the pods carrying it per domain (for the reverse check).
#[derive(Debug, Clone, Default)]
pub(crate) struct AffinityIndex {
    terms: Arc<Terms>,
    /// Per term.
    selected: Vec<Domains>,
    /// Per term carried as required anti-affinity: per domain, the pods carrying it there.
    carriers: Vec<AHashMap<String, Vec<usize>>>,
}

/// Why a pod may not go somewhere, as numbers (no allocation); [`AffinityIndex::check`] turns
/// it into an [`Unfit`].
#[derive(Debug, Clone, Copy)]
enum Block {
    /// The pod's required anti-affinity term selects `pod`, already in the domain.
    Anti { term: TermId, pod: usize },
    /// The pod's preferred anti-affinity term selects `pod`, already in the domain.
    PreferredAnti { term: TermId, pod: usize },
    /// `pod`, in the domain, carries a required anti-affinity term that selects this pod.
    Repelled { term: TermId, pod: usize },
    /// No pod the required affinity term selects is in the domain.
    Affinity { term: TermId },
    /// No pod the preferred affinity term selects is in the domain.
    PreferredAffinity { term: TermId },
}

impl AffinityIndex {
    /// The terms of every pod (bound pods' required anti-affinity included).
    pub(crate) fn new(snapshot: &Snapshot) -> AffinityIndex {
        // No term anywhere (the common case): the empty index, without numbering every pod.
        if snapshot.pods.iter().all(|p| {
            let d = &p.demand;
            d.anti_affinity.is_empty()
                && d.preferred_anti_affinity.is_empty()
                && d.affinity.is_empty()
                && d.preferred_affinity.is_empty()
        }) {
            return AffinityIndex::default();
        }
        let mut numbering = Numbering::default();
        let mut carried = Vec::with_capacity(snapshot.pods.len());
        for p in &snapshot.pods {
            let d = &p.demand;
            let mut anti: Vec<TermId> = Vec::with_capacity(d.anti_affinity.len());
            for t in &d.anti_affinity {
                let t = numbering.id(t, true);
                if !anti.contains(&t) {
                    anti.push(t);
                }
            }
            let preferred_anti: Vec<TermId> = d
                .preferred_anti_affinity
                .iter()
                .map(|w| numbering.id(&w.term, false))
                .collect();
            let own = |t: &AffinityTerm| t.selects(&d.namespace, &d.labels);
            let affinity: Vec<(TermId, bool)> = d
                .affinity
                .iter()
                .map(|t| (numbering.id(t, false), own(t)))
                .collect();
            let preferred_affinity: Vec<(TermId, bool)> = d
                .preferred_affinity
                .iter()
                .map(|w| (numbering.id(&w.term, false), own(&w.term)))
                .collect();
            carried.push(Carried {
                anti: anti.into(),
                preferred_anti: preferred_anti.into(),
                affinity: affinity.into(),
                preferred_affinity: preferred_affinity.into(),
            });
        }
        let Numbering {
            terms,
            required_anti,
            ..
        } = numbering;
        if terms.is_empty() {
            return AffinityIndex::default();
        }
        let count = terms.len();
        let selected = (0..snapshot.pods.len()).map(|_| OnceLock::new()).collect();
        AffinityIndex {
            terms: Arc::new(Terms {
                terms,
                required_anti,
                carried,
                selected,
            }),
            selected: vec![Domains::default(); count],
            carriers: vec![AHashMap::new(); count],
        }
    }

    /// Whether no pod has any term.
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.terms.is_empty()
    }

    /// Records a pod (snapshot index `pod`, whose demand is `demand`) on a node with these labels.
    pub(crate) fn record(&mut self, pod: usize, demand: &PodDemand, labels: &Labels) {
        if self.is_empty() {
            return;
        }
        let AffinityIndex {
            terms,
            selected,
            carriers,
        } = self;
        for &t in terms.selected(pod, demand).all.iter() {
            let d = &mut selected[t as usize];
            d.total += 1;
            if let Some(v) = labels.get(&terms.terms[t as usize].topology_key) {
                match d.per_domain.get_mut(v.as_str()) {
                    Some(e) => e.0 += 1,
                    None => {
                        d.per_domain.insert(v.clone(), (1, pod));
                    }
                }
            }
        }
        for &t in terms.carried[pod].anti.iter() {
            if let Some(v) = labels.get(&terms.terms[t as usize].topology_key) {
                let domains = &mut carriers[t as usize];
                match domains.get_mut(v.as_str()) {
                    Some(list) => {
                        if !list.contains(&pod) {
                            list.push(pod);
                        }
                    }
                    None => {
                        domains.insert(v.clone(), vec![pod]);
                    }
                }
            }
        }
    }

    /// Takes back the last [`AffinityIndex::record`] of this pod on a node with these labels
    /// (records are taken back in reverse order, so each domain's first pod stays right).
    pub(crate) fn unrecord(&mut self, pod: usize, demand: &PodDemand, labels: &Labels) {
        if self.is_empty() {
            return;
        }
        let AffinityIndex {
            terms,
            selected,
            carriers,
        } = self;
        for &t in terms.selected(pod, demand).all.iter() {
            let d = &mut selected[t as usize];
            d.total = d.total.saturating_sub(1);
            if let Some(v) = labels.get(&terms.terms[t as usize].topology_key)
                && let Some(e) = d.per_domain.get_mut(v.as_str())
            {
                e.0 -= 1;
                if e.0 == 0 {
                    d.per_domain.remove(v.as_str());
                }
            }
        }
        for &t in terms.carried[pod].anti.iter() {
            if let Some(v) = labels.get(&terms.terms[t as usize].topology_key)
                && let Some(list) = carriers[t as usize].get_mut(v.as_str())
            {
                if let Some(at) = list.iter().rposition(|&o| o == pod) {
                    list.remove(at);
                }
                if list.is_empty() {
                    carriers[t as usize].remove(v.as_str());
                }
            }
        }
    }

    /// (count, first pod) the term selects in the node's domain of its key.
    fn here(&self, term: TermId, labels: &Labels) -> Option<(usize, usize)> {
        let t = term as usize;
        labels
            .get(&self.terms.terms[t].topology_key)
            .and_then(|v| self.selected[t].per_domain.get(v.as_str()))
            .copied()
    }

    /// The first constraint that keeps pod `pod` off a node with these labels.
    fn block(&self, pod: usize, demand: &PodDemand, labels: &Labels) -> Option<Block> {
        let carried = &self.terms.carried[pod];
        for &term in carried.anti.iter() {
            if let Some((_, first)) = self.here(term, labels) {
                return Some(Block::Anti { term, pod: first });
            }
        }
        for &term in carried.preferred_anti.iter() {
            if let Some((_, first)) = self.here(term, labels) {
                return Some(Block::PreferredAnti { term, pod: first });
            }
        }
        for &term in self.terms.selected(pod, demand).by_anti.iter() {
            let t = term as usize;
            let Some(v) = labels.get(&self.terms.terms[t].topology_key) else {
                continue;
            };
            if let Some(&other) = self.carriers[t]
                .get(v.as_str())
                .and_then(|list| list.iter().find(|&&o| o != pod))
            {
                return Some(Block::Repelled { term, pod: other });
            }
        }
        // Affinity: a selected pod in the domain; or none anywhere yet and the pod selects
        // itself (the first of a self-affine group may go anywhere).
        let unmet = |term: TermId, selects_itself: bool| {
            self.here(term, labels).is_none()
                && (self.selected[term as usize].total > 0 || !selects_itself)
        };
        for &(term, own) in carried.affinity.iter() {
            if unmet(term, own) {
                return Some(Block::Affinity { term });
            }
        }
        for &(term, own) in carried.preferred_affinity.iter() {
            if unmet(term, own) {
                return Some(Block::PreferredAffinity { term });
            }
        }
        None
    }

    /// Whether pod `pod` (of `demand`) may go on a node with these labels: [`Self::check`] as a
    /// yes or no, without building a reason.
    pub(crate) fn admits(&self, pod: usize, demand: &PodDemand, labels: &Labels) -> bool {
        self.is_empty() || self.block(pod, demand, labels).is_none()
    }

    /// Whether `demand` (pod `pod`) may go on a node with these labels; the reason otherwise.
    pub(crate) fn check(
        &self,
        snapshot: &Snapshot,
        pod: usize,
        demand: &PodDemand,
        labels: &Labels,
    ) -> Result<(), Unfit> {
        if self.is_empty() {
            return Ok(());
        }
        let key = |term: TermId| self.terms.terms[term as usize].topology_key.clone();
        let name = |pod: usize| snapshot.pods[pod].demand.key();
        match self.block(pod, demand, labels) {
            None => Ok(()),
            Some(Block::Anti { term, pod } | Block::Repelled { term, pod }) => {
                Err(Unfit::AntiAffinity {
                    pod: name(pod),
                    topology_key: key(term),
                })
            }
            Some(Block::PreferredAnti { term, pod }) => Err(Unfit::PreferredAntiAffinity {
                pod: name(pod),
                topology_key: key(term),
            }),
            Some(Block::Affinity { term }) => Err(Unfit::AffinityUnsatisfied {
                topology_key: key(term),
            }),
            Some(Block::PreferredAffinity { term }) => Err(Unfit::PreferredAffinityUnsatisfied {
                topology_key: key(term),
            }),
        }
    }
}
