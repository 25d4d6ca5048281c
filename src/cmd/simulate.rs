//! `simulate`: read a scenario (files, stdin, or the built-in one), run the strategies and print
//! the comparison.

use crate::cli::{GlobalArgs, SimulateArgs, StrategyName};
use crate::error::{Error, Outcome, Result};
use crate::model::dedup::counted;
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::render::Printer;
use crate::render::simulate::{print_consolidation, print_report};
use crate::sched::catalog;
use crate::sim::compare::{consolidate, notes, simulate};
use crate::sim::{Trace, replay_all, trace};

pub use crate::sim::trace::DEFAULT_SCENARIO;

/// Runs `simulate`.
pub fn run(global: &GlobalArgs, args: SimulateArgs, printer: &Printer) -> Result<Outcome> {
    if args.timeline {
        return timeline(&args, printer);
    }
    let selector = crate::status::selector::parse(args.selector.as_deref().unwrap_or(""))
        .map_err(|e| Error::usage(format!("-l: {e}")))?;
    let mut snapshot = if args.live {
        super::doctor::load(
            global,
            &args.source,
            global.namespace.as_deref(),
            false,
            printer,
        )?
        .snapshot
    } else if args.source.files.is_empty() {
        if let Some(config) = kubeconfig_set(global) {
            printer.note(&format!(
                "simulating the built-in scenario (seed-8x1cpu), not the cluster of {config}: \
                 pass --live to read it, or -f for a file"
            ))?;
        }
        snapshot_from_sources(&[Source {
            name: "built-in scenario (seed-8x1cpu)".to_string(),
            text: DEFAULT_SCENARIO.to_string(),
        }])?
    } else {
        super::source::snapshot(&args.source, printer)?
    };
    // -l narrows the pending pods only: the running ones still hold their nodes.
    if !selector.is_empty() {
        snapshot
            .pods
            .retain(|p| !p.is_pending() || selector.iter().all(|r| r.matches(&p.demand.labels)));
    }
    if args.consolidate {
        let report = consolidate(&snapshot, args.strategy)?;
        for w in counted(notes(&snapshot)) {
            printer.note(&w)?;
        }
        print_consolidation(printer, &report, args.no_headers)?;
        return Ok(Outcome::Success);
    }
    let report = simulate(&snapshot, args.strategy)?;
    for w in counted(notes(&snapshot)) {
        printer.note(&w)?;
    }
    print_report(printer, &report, args.no_headers)?;
    Ok(Outcome::Success)
}

/// The kubeconfig the user has set (`--kubeconfig`, else `$KUBECONFIG`), which `simulate` without
/// `--live` or `-f` does not read: named so the fallback to the built-in scenario is not a surprise.
fn kubeconfig_set(global: &GlobalArgs) -> Option<String> {
    global
        .kubeconfig
        .as_ref()
        .map(|p| format!("--kubeconfig {}", p.display()))
        .or_else(|| {
            std::env::var("KUBECONFIG")
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| format!("KUBECONFIG={v}"))
        })
}

/// The trace and scenario `--timeline` replays: `--trace` names a built-in trace (which brings
/// its scenario unless -f gives one) or a file; without it, -f's pending workloads, or the seed
/// report's first run.
pub fn timeline_inputs(args: &SimulateArgs, printer: &Printer) -> Result<(Trace, Snapshot)> {
    let files = &args.source.files;
    let scenario_from_files = || super::source::snapshot(&args.source, printer);
    let built_in = |name: &str| -> Result<(Trace, Snapshot)> {
        let trace = trace::built_in(name)
            .ok_or_else(|| Error::usage(format!("unknown built-in trace {name:?}")))?;
        let snapshot = if files.is_empty() {
            snapshot_from_sources(&[Source {
                name: format!("built-in scenario of trace {name}"),
                text: trace::built_in_scenario(name)
                    .unwrap_or(DEFAULT_SCENARIO)
                    .to_string(),
            }])?
        } else {
            scenario_from_files()?
        };
        Ok((trace, snapshot))
    };
    match args.trace.as_deref() {
        Some(name) if trace::built_in(name).is_some() => built_in(name),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::Input {
                path: path.to_string(),
                problem: format!(
                    "cannot read the trace: {e} (built-in traces: {})",
                    trace::BUILT_IN
                        .iter()
                        .map(|b| b.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
            let trace = trace::parse(path, &text)?;
            let snapshot = if files.is_empty() {
                snapshot_from_sources(&[Source {
                    name: "built-in scenario (seed-8x1cpu)".to_string(),
                    text: DEFAULT_SCENARIO.to_string(),
                }])?
            } else {
                scenario_from_files()?
            };
            Ok((trace, snapshot))
        }
        None if files.is_empty() => built_in("seed-first-run"),
        None => {
            let snapshot = scenario_from_files()?;
            Ok((trace::from_scenario(&snapshot, 10 * 60_000), snapshot))
        }
    }
}

fn timeline(args: &SimulateArgs, printer: &Printer) -> Result<Outcome> {
    let (trace, snapshot) = timeline_inputs(args, printer)?;
    catalog::validate(&snapshot)?;
    for w in counted(notes(&snapshot)) {
        printer.note(&w)?;
    }
    let names: Vec<StrategyName> = match args.strategy {
        Some(s) => vec![s],
        None => StrategyName::ALL.to_vec(),
    };
    // Drawn on a terminal only, and only once the replay has taken a second.
    let mut bar = printer.bar("replaying {msg:>14} [{bar:40}] {pos}/{len} simulated s");
    let result = replay_all(&snapshot, &trace, &names, &mut |s, now, horizon| {
        bar.update(
            u64::try_from(now / 1000).unwrap_or(0),
            u64::try_from(horizon / 1000).unwrap_or(0),
            s.as_str(),
        );
    });
    bar.finish();
    let timeline = result?;
    if let Some(path) = &args.chart {
        let svg = crate::render::chart::svg(&timeline).map_err(|e| Error::Input {
            path: path.display().to_string(),
            problem: format!("cannot draw the chart: {e}"),
        })?;
        write_file(path, &svg)?;
        printer.note(&format!("chart written to {}", path.display()))?;
    }
    if matches!(
        printer.format,
        crate::cli::OutputFormat::Json | crate::cli::OutputFormat::Yaml
    ) {
        printer.structured(&timeline)?;
    } else {
        printer.write(&crate::render::timeline::render_with(
            &timeline,
            args.no_headers,
        ))?;
    }
    Ok(Outcome::Success)
}

/// Writes a file whole or not at all: a temporary file beside it, then a rename.
fn write_file(path: &std::path::Path, text: &str) -> Result<()> {
    let err = |e: std::io::Error| Error::Input {
        path: path.display().to_string(),
        problem: format!("cannot write: {e}"),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "chart.svg".to_string());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}
