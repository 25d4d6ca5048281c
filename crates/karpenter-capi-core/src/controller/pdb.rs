//! PodDisruptionBudgets as the eviction API and Karpenter core see them (`utils/pdb/pdb.go`
//! Limits): which budget holds a pod, a pod under two or more budgets can never be evicted, a
//! budget with `unhealthyPodEvictionPolicy: AlwaysAllow` lets not-ready pods go, and which
//! budgets block a pod whatever the disruptions allowed (`maxUnavailable: 0` or `0%`,
//! `minAvailable: 100%`); and the home a leaving node's pods need, without the pods no eviction
//! moves now (`IsCurrentlyReschedulable`).

use jiff::Timestamp;
use serde_json::Value;

use super::consolidation::{Home, home};
use super::drain::{do_not_disrupt_active, evictable, reschedulable};
use crate::model::labels::LabelSelector;
use crate::model::snapshot::{PodRecord, Snapshot};

/// One PodDisruptionBudget, as far as evictions care.
#[derive(Debug, Clone)]
struct Budget {
    namespace: String,
    name: String,
    /// None: `spec.selector` absent (selects nothing).
    selector: Option<LabelSelector>,
    disruptions_allowed: i64,
    fully_blocking: bool,
    always_allow_unhealthy: bool,
}

/// Why PodDisruptionBudgets hold a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PdbBlock {
    /// One budget allows no disruption now (`namespace/name`).
    NoDisruptionsAllowed(String),
    /// Two or more budgets cover the pod: the eviction API refuses it whatever they allow.
    Multiple(Vec<String>),
}

impl std::fmt::Display for PdbBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PdbBlock::NoDisruptionsAllowed(key) => {
                write!(
                    f,
                    "pdb prevents pod evictions (PodDisruptionBudget=[{key}])"
                )
            }
            PdbBlock::Multiple(keys) => write!(
                f,
                "eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{}])",
                keys.join(" ")
            ),
        }
    }
}

/// The PodDisruptionBudgets of a snapshot, read once per pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pdbs {
    budgets: Vec<Budget>,
}

fn is_fully_blocking(spec: Option<&Value>) -> bool {
    let at = |k: &str| spec.and_then(|s| s.get(k));
    matches!(at("maxUnavailable"), Some(Value::Number(n)) if n.as_i64() == Some(0))
        || at("maxUnavailable").and_then(Value::as_str) == Some("0%")
        || at("minAvailable").and_then(Value::as_str) == Some("100%")
}

impl Pdbs {
    /// Reads every PodDisruptionBudget of the snapshot. A budget whose selector cannot be read
    /// selects nothing (the API server would have refused it).
    pub(crate) fn new(snapshot: &Snapshot) -> Pdbs {
        let budgets = snapshot
            .objects_of("PodDisruptionBudget")
            .map(|o| {
                let spec = o.value.get("spec");
                let selector = o
                    .typed::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(
                        "/spec/selector",
                        "spec.selector",
                    )
                    .ok()
                    .flatten()
                    .and_then(|s| LabelSelector::from_k8s(&s).ok());
                Budget {
                    namespace: o.namespace().to_string(),
                    name: o.name().to_string(),
                    selector,
                    disruptions_allowed: o
                        .value
                        .pointer("/status/disruptionsAllowed")
                        .and_then(Value::as_i64)
                        .unwrap_or(0),
                    fully_blocking: is_fully_blocking(spec),
                    always_allow_unhealthy: spec
                        .and_then(|s| s.get("unhealthyPodEvictionPolicy"))
                        .and_then(Value::as_str)
                        == Some("AlwaysAllow"),
                }
            })
            .collect();
        Pdbs { budgets }
    }

    fn matching<'a>(&'a self, p: &'a PodRecord) -> impl Iterator<Item = &'a Budget> + 'a {
        self.budgets.iter().filter(move |b| {
            b.namespace == p.demand.namespace
                && b.selector
                    .as_ref()
                    .is_some_and(|s| s.matches(&p.demand.labels))
        })
    }

    /// What holds an eviction of this pod now (core `isEvictable`): nothing for a pod no drain
    /// evicts anyway; two or more budgets; else the first budget allowing no disruption
    /// (`fully`: only a budget that blocks whatever it allows), unless the pod is not ready
    /// and its budget lets unhealthy pods go.
    fn hold(&self, p: &PodRecord, now: Timestamp, fully: bool) -> Option<PdbBlock> {
        if !evictable(p, now) {
            return None;
        }
        let matching: Vec<&Budget> = self.matching(p).collect();
        if matching.len() > 1 {
            let mut keys: Vec<String> = matching
                .iter()
                .map(|b| format!("{}/{}", b.namespace, b.name))
                .collect();
            keys.sort();
            return Some(PdbBlock::Multiple(keys));
        }
        let b = matching.first()?;
        if b.always_allow_unhealthy && p.not_ready {
            return None;
        }
        let blocks = if fully {
            b.fully_blocking
        } else {
            b.disruptions_allowed <= 0
        };
        blocks.then(|| PdbBlock::NoDisruptionsAllowed(format!("{}/{}", b.namespace, b.name)))
    }

    /// Why budgets keep these pods from being evicted now, if they do (core `CanEvictPods`):
    /// DaemonSet pods count like any other.
    pub(crate) fn blocks(&self, pods: &[&PodRecord], now: Timestamp) -> Option<PdbBlock> {
        pods.iter().find_map(|p| self.hold(p, now, false))
    }

    /// Whether a budget blocks this pod whatever it allows (core `isFullyBlocked`).
    pub(crate) fn fully_blocked(&self, p: &PodRecord, now: Timestamp) -> bool {
        self.hold(p, now, true).is_some()
    }
}

/// Whether the leaving of `nodes` gives their pods a home, as core's `disruption/helpers.go`
/// SimulateScheduling sees it: pods no eviction can move now (an active `do-not-disrupt`, a
/// budget that blocks whatever it allows, two budgets; `utils/pdb/pdb.go`
/// IsCurrentlyReschedulable) stay out of the simulation, so no room is made or required for
/// them. They stay until the claim's deadline deletes them (only a drift whose claim has a
/// terminationGracePeriod takes such a node at all).
pub(super) fn home_for_movable(
    snapshot: &Snapshot,
    nodes: &[String],
    pdbs: &Pdbs,
    now: Timestamp,
) -> Home {
    let held = |p: &PodRecord| {
        p.node_name.as_ref().is_some_and(|n| nodes.contains(n))
            && reschedulable(p)
            && (do_not_disrupt_active(p, now) || pdbs.fully_blocked(p, now))
    };
    if !snapshot.pods.iter().any(|p| held(p)) {
        return home(snapshot, nodes);
    }
    let mut view = snapshot.clone();
    for p in view.pods.iter_mut() {
        if held(p) {
            std::sync::Arc::make_mut(p).terminal = true;
        }
    }
    home(&view, nodes)
}
