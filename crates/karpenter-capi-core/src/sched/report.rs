//! The serializable result of a simulation: per strategy, the new nodes with their pods,
//! allocatable and requests, totals, savings and the pods that fit nowhere with their reasons.

use serde::Serialize;

use super::strategy::Placement;
use crate::model::flavor::Price;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;

/// The comparison of one or more strategies.
#[derive(Debug, Clone, Serialize)]
pub struct SimulationReport {
    /// One entry per strategy, in the order run.
    pub strategies: Vec<StrategyReport>,
}

/// One strategy's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyReport {
    /// `cost`, `karpenter-capi` or `least-waste`.
    pub strategy: String,
    /// New nodes.
    pub nodes: Vec<NodeReport>,
    /// Pods placed on existing nodes: `namespace/name` -> node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_existing_nodes: Vec<ExistingPlacement>,
    /// Totals over the new nodes.
    pub totals: Totals,
    /// How much more per hour this strategy costs than `cost` (absent for `cost` itself or
    /// when `cost` was not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_vs_cost_per_hour: Option<Price>,
    /// A lower bound on the price per hour of the new nodes any plan needs for the pods left
    /// after existing room (`cost` only: the value of its LP relaxation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound_per_hour: Option<Price>,
    /// How far this plan's price is above that bound, in percent (one decimal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent_above_lower_bound: Option<f64>,
    /// Pods that fit nowhere.
    pub unschedulable: Vec<UnschedulablePod>,
    /// Whether the optimizer's wall-clock safety net stopped it before its work budget did
    /// (`cost` only): the plan then depends on the machine's speed. Absent when not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

/// A new node.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    /// `namespace/name` of the MachineDeployment.
    pub machine_deployment: String,
    /// Instance type.
    pub instance_type: String,
    /// NodePool (empty for Cluster Autoscaler, which has none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub node_pool: String,
    /// Price per hour.
    pub price_per_hour: Price,
    /// Pods placed on it.
    pub pods: Vec<String>,
    /// Capacity minus DaemonSet overhead.
    pub allocatable: Resources,
    /// Requests of the pods placed.
    pub requested: Resources,
}

/// A pod placed on an existing node.
#[derive(Debug, Clone, Serialize)]
pub struct ExistingPlacement {
    /// `namespace/name`.
    pub pod: String,
    /// The node.
    pub node: String,
}

/// Totals over the new nodes of a strategy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Number of new nodes.
    pub nodes: usize,
    /// Summed CPU capacity.
    pub cpu_millis: i64,
    /// Summed memory capacity.
    pub memory_bytes: i64,
    /// Summed price per hour.
    pub price_per_hour: Price,
}

/// A pod that fits nowhere.
#[derive(Debug, Clone, Serialize)]
pub struct UnschedulablePod {
    /// `namespace/name`.
    pub pod: String,
    /// One reason per flavor (`c3-4: needs 3100m cpu, c3-4 has 1900m allocatable`).
    pub reasons: Vec<String>,
}

impl StrategyReport {
    /// Builds the report of one placement.
    pub fn from_placement(snapshot: &Snapshot, p: &Placement) -> StrategyReport {
        let pod_key = |i: usize| snapshot.pods[i].demand.key();
        let capacity = p.capacity();
        StrategyReport {
            strategy: p.strategy.as_str().to_string(),
            nodes: p
                .new_nodes
                .iter()
                .map(|n| NodeReport {
                    machine_deployment: n.offering.flavor.machine_deployment.clone(),
                    instance_type: n.offering.flavor.instance_type.clone(),
                    node_pool: n.offering.node_pool.clone(),
                    price_per_hour: n.offering.flavor.price,
                    pods: n.pods.iter().map(|&i| pod_key(i)).collect(),
                    allocatable: n.offering.allocatable.clone(),
                    requested: n.requested.clone(),
                })
                .collect(),
            on_existing_nodes: p
                .on_existing
                .iter()
                .chain(p.on_in_flight.iter())
                .map(|(i, node)| ExistingPlacement {
                    pod: pod_key(*i),
                    node: node.clone(),
                })
                .collect(),
            totals: Totals {
                nodes: p.new_nodes.len(),
                cpu_millis: capacity.cpu_millis,
                memory_bytes: capacity.memory_bytes,
                price_per_hour: p.price(),
            },
            extra_vs_cost_per_hour: None,
            lower_bound_per_hour: p.lower_bound,
            percent_above_lower_bound: p.lower_bound.and_then(|lb| percent_above(p.price(), lb)),
            unschedulable: p
                .unschedulable
                .iter()
                .map(|(i, reasons)| UnschedulablePod {
                    pod: pod_key(*i),
                    reasons: reasons.iter().map(|r| r.to_string()).collect(),
                })
                .collect(),
            cut_short: p.cut_short,
        }
    }
}

/// `(price - bound) / bound` in percent, to one decimal; none for a zero bound.
pub(crate) fn percent_above(price: Price, bound: Price) -> Option<f64> {
    (bound.0 > 0).then(|| {
        let tenths =
            (i128::from(price.0 - bound.0) * 1000 + i128::from(bound.0) / 2) / i128::from(bound.0);
        tenths as f64 / 10.0
    })
}

impl SimulationReport {
    /// Builds the report of several placements, with each one's extra cost over `cost`.
    pub(crate) fn new(snapshot: &Snapshot, placements: &[Placement]) -> SimulationReport {
        let mut strategies: Vec<StrategyReport> = placements
            .iter()
            .map(|p| StrategyReport::from_placement(snapshot, p))
            .collect();
        if let Some(cost) = strategies
            .iter()
            .find(|s| s.strategy == "cost")
            .map(|s| s.totals.price_per_hour)
        {
            for s in strategies.iter_mut().filter(|s| s.strategy != "cost") {
                s.extra_vs_cost_per_hour = Some(Price(s.totals.price_per_hour.0 - cost.0));
            }
        }
        SimulationReport { strategies }
    }
}
