//! The strategies side by side on one snapshot: what each would provision for the pending pods,
//! or what consolidation of the running nodes would do, and what the user should know about the
//! input. `simulate` and `status` show these; nothing here prints.

use crate::controller::consolidation::{self, ConsolidationOutcome};
use crate::error::Result;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog;
use crate::sched::report::SimulationReport;
use crate::sched::strategy::{self, StrategyName};

/// Validates the catalog and runs one strategy or all of them over the pending pods.
pub fn simulate(snapshot: &Snapshot, only: Option<StrategyName>) -> Result<SimulationReport> {
    catalog::validate(snapshot)?;
    let pending: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| snapshot.pods[i].is_pending())
        .collect();
    let names: Vec<StrategyName> = match only {
        Some(s) => vec![s],
        None => StrategyName::ALL.to_vec(),
    };
    // The strategies are independent: each plans on its own core.
    let pending = &pending;
    let placements: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|&n| scope.spawn(move || strategy::by_name(n).plan(snapshot, pending)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    Ok(SimulationReport::new(snapshot, &placements))
}

/// What consolidation of the running nodes would do, per strategy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConsolidationReport {
    /// One outcome per strategy.
    pub consolidation: Vec<ConsolidationOutcome>,
}

/// Runs the consolidation view for one strategy or all three.
pub fn consolidate(snapshot: &Snapshot, only: Option<StrategyName>) -> Result<ConsolidationReport> {
    catalog::validate(snapshot)?;
    let names: Vec<StrategyName> = match only {
        Some(s) => vec![s],
        None => StrategyName::ALL.to_vec(),
    };
    let consolidation = names
        .iter()
        .map(|n| match n {
            StrategyName::Cost => consolidation::simulate_cost(snapshot),
            StrategyName::KarpenterCapi => consolidation::simulate_upstream(snapshot),
            StrategyName::LeastWaste => consolidation::simulate_least_waste(snapshot),
        })
        .collect();
    Ok(ConsolidationReport { consolidation })
}

/// What the user should know about the input.
pub fn notes(snapshot: &Snapshot) -> Vec<String> {
    let mut out = catalog::warnings(snapshot);
    if snapshot.implicit_nodepool {
        out.push("no NodePool in the input: using an implicit NodePool `default` without requirements or limits".to_string());
    }
    if !snapshot.skipped.is_empty() {
        let kinds: Vec<String> = snapshot
            .skipped
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out.push(format!(
            "skipped objects of kinds simulate does not use: {}",
            kinds.join(", ")
        ));
    }
    out.extend(snapshot.warnings.iter().cloned());
    out
}
