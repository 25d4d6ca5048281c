//! What the NodePools' nodes cost per hour, against what each strategy would pay for the current
//! pods now: every workload pod on those nodes or pending planned onto fresh nodes, as if no
//! NodePool had a node yet (the same `sim::compare::simulate` `simulate` runs), so the figures
//! compare like with like. Nodes no NodePool manages (control plane, static workers) stay, with
//! their pods, and are priced apart. Always over the whole cluster, whatever `-l` shows.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;

use super::{NodeStatus, UNMANAGED};
use crate::model::flavor::Price;
use crate::model::snapshot::{PodRecord, Snapshot};
use crate::sched::strategy::StrategyName;

/// The cost now and per strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostSummary {
    /// The NodePools' nodes, summed (nodes of unknown price count 0).
    pub current_per_hour: Price,
    /// The nodes no NodePool manages, summed where their flavor is known.
    pub(crate) unmanaged_per_hour: Price,
    /// Nodes whose price is unknown (no flavor found for them), managed or not.
    pub unpriced_nodes: usize,
    /// Workload pods planned from scratch by each strategy.
    pub pods_planned: usize,
    /// Per strategy, in `StrategyName::ALL` order; empty when skipped or when the catalog is
    /// unusable (see `comparison_problem`).
    pub strategies: Vec<StrategyCost>,
    /// Why there is no comparison, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison_problem: Option<String>,
}

/// What one strategy would pay for the current pods.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyCost {
    /// The strategy.
    pub strategy: StrategyName,
    /// Nodes it would run.
    pub nodes: usize,
    /// Their price per hour.
    pub price_per_hour: Price,
    /// `price_per_hour - current_per_hour`: negative when it would be cheaper than now.
    pub delta_per_hour: Price,
    /// Pods it could place nowhere.
    pub unschedulable: usize,
}

/// The cost summary of every node; with `skip`, no strategy is run.
pub(super) fn summary(snapshot: &Snapshot, nodes: &[NodeStatus], skip: bool) -> CostSummary {
    let sum = |managed: bool| {
        Price(
            nodes
                .iter()
                .filter(|n| (n.node_pool != UNMANAGED) == managed)
                .filter_map(|n| n.price_per_hour)
                .map(|p| p.0)
                .sum(),
        )
    };
    let current = sum(true);
    let unpriced = nodes.iter().filter(|n| n.price_per_hour.is_none()).count();
    let managed: HashSet<&str> = nodes
        .iter()
        .filter(|n| n.node_pool != UNMANAGED)
        .map(|n| n.name.as_str())
        .collect();
    let scratch = from_scratch(snapshot, &managed);
    let pods_planned = scratch.pods.iter().filter(|p| p.is_pending()).count();
    let mut out = CostSummary {
        current_per_hour: current,
        unmanaged_per_hour: sum(false),
        unpriced_nodes: unpriced,
        pods_planned,
        strategies: Vec::new(),
        comparison_problem: None,
    };
    if skip {
        out.comparison_problem = Some("skipped (--no-compare)".to_string());
        return out;
    }
    match crate::sim::compare::simulate(&scratch, None) {
        Ok(report) => {
            out.strategies = StrategyName::ALL
                .iter()
                .zip(report.strategies)
                .map(|(&strategy, s)| StrategyCost {
                    strategy,
                    nodes: s.totals.nodes,
                    price_per_hour: s.totals.price_per_hour,
                    delta_per_hour: Price(s.totals.price_per_hour.0 - current.0),
                    unschedulable: s.unschedulable.len(),
                })
                .collect();
        }
        Err(e) => out.comparison_problem = Some(e.to_string()),
    }
    out
}

/// The snapshot as if no NodePool had a node: the `managed` nodes and every NodeClaim gone, and
/// every workload pod on those nodes or waiting (not gated, finished, terminating, mirror or a
/// DaemonSet's) pending and marked unschedulable. Unmanaged nodes keep their pods.
fn from_scratch(snapshot: &Snapshot, managed: &HashSet<&str>) -> Snapshot {
    let mut scratch = snapshot.clone();
    scratch.nodes.retain(|n| !managed.contains(n.name.as_str()));
    scratch.nodeclaims.clear();
    scratch.foreign_claims.clear();
    scratch.machines.clear();
    let on_managed = |p: &PodRecord| p.node_name.as_deref().is_some_and(|n| managed.contains(n));
    scratch
        .pods
        .retain(|p| !p.terminal && !p.terminating && ((!p.daemon && !p.mirror) || !on_managed(p)));
    // In name order: a live listing and a dump of one cluster order objects differently, and
    // least-waste's choice depends on the order it meets pods.
    scratch.pods.sort_by_key(|p| p.demand.key());
    // Likewise the flavors: between equally good flavors least-waste takes the first it meets.
    scratch.machine_deployments.sort_by_key(|md| md.key());
    for p in &mut scratch.pods {
        if on_managed(p) || (p.node_name.is_none() && !p.daemon) {
            let p = Arc::make_mut(p);
            p.node_name = None;
            p.nominated = false;
            p.marked_unschedulable = true;
        }
    }
    scratch
}
