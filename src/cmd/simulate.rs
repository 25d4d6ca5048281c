//! `simulate`: read a scenario (files, stdin, or the built-in one), run the strategies and print
//! the comparison.

use crate::cli::{GlobalArgs, SimulateArgs, StrategyName};
use crate::cmd::source::read_sources;
use crate::error::{Outcome, Result};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::render::Printer;
use crate::render::simulate::print_report;
use crate::sched::catalog;
use crate::sched::report::SimulationReport;
use crate::sched::strategy;

/// The built-in scenario: the seed article's eight 1-vCPU pods on the c3-4/c3-8/c3-16 catalog.
pub const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/default.yaml");

/// Runs `simulate`.
pub fn run(global: &GlobalArgs, args: SimulateArgs, printer: &Printer) -> Result<Outcome> {
    let sources = if args.source.files.is_empty() {
        vec![Source {
            name: "built-in scenario (seed-8x1cpu)".to_string(),
            text: DEFAULT_SCENARIO.to_string(),
        }]
    } else {
        read_sources(&args.source.files)?
    };
    let snapshot = snapshot_from_sources(&sources)?;
    if args.consolidate {
        return Err(crate::error::Error::NotImplemented(
            "simulate --consolidate",
        ));
    }
    let _ = global;
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
