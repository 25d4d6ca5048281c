//! `simulate`: read a scenario (files, stdin, or the built-in one), run the strategies and print
//! the comparison.

use crate::cli::{GlobalArgs, SimulateArgs, StrategyName};
use crate::controller::consolidation::{self, ConsolidationOutcome};
use crate::error::{Outcome, Result};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::render::Printer;
use crate::render::simulate::print_report;
use crate::render::table::Table;
use crate::sched::catalog;
use crate::sched::report::SimulationReport;
use crate::sched::strategy;

/// The built-in scenario: the seed article's eight 1-vCPU pods on the c3-4/c3-8/c3-16 catalog.
pub const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/default.yaml");

/// Runs `simulate`.
pub fn run(global: &GlobalArgs, args: SimulateArgs, printer: &Printer) -> Result<Outcome> {
    let snapshot = if args.live {
        super::doctor::load(global, &args.source, false)?.snapshot
    } else if args.source.files.is_empty() {
        snapshot_from_sources(&[Source {
            name: "built-in scenario (seed-8x1cpu)".to_string(),
            text: DEFAULT_SCENARIO.to_string(),
        }])?
    } else {
        super::source::snapshot(&args.source)?
    };
    if args.consolidate {
        let report = consolidate(&snapshot, args.strategy)?;
        for w in notes(&snapshot) {
            printer.note(&w)?;
        }
        print_consolidation(printer, &report)?;
        return Ok(Outcome::Success);
    }
    let report = simulate(&snapshot, args.strategy)?;
    for w in notes(&snapshot) {
        printer.note(&w)?;
    }
    print_report(printer, &report)?;
    Ok(Outcome::Success)
}

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
    let placements: Vec<_> = names
        .iter()
        .map(|&n| strategy::by_name(n).plan(snapshot, &pending))
        .collect();
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

fn print_consolidation(printer: &Printer, report: &ConsolidationReport) -> Result<()> {
    if matches!(
        printer.format,
        crate::cli::OutputFormat::Json | crate::cli::OutputFormat::Yaml
    ) {
        return printer.structured(report);
    }
    let mut t = Table::new(&[
        "STRATEGY",
        "REMOVE",
        "REPLACE WITH",
        "PRICE/H BEFORE",
        "AFTER",
        "SAVING/H",
    ]);
    for o in &report.consolidation {
        t.row(vec![
            o.strategy.clone(),
            if o.remove.is_empty() {
                "-".to_string()
            } else {
                o.remove.join(",")
            },
            if o.replacements.is_empty() {
                "-".to_string()
            } else {
                o.replacements
                    .iter()
                    .map(|r| r.instance_type.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            },
            o.price_per_hour_before.to_string(),
            o.price_per_hour_after.to_string(),
            o.saving_per_hour.to_string(),
        ]);
    }
    printer.write(&t.render())
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
