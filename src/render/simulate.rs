//! Rendering a [`SimulationReport`]: a comparison table of the strategies (one strategy: its
//! nodes in detail), the savings, and the pods that fit nowhere with their reasons.

use crate::cli::OutputFormat;
use crate::error::Result;
use crate::model::flavor::Price;
use crate::model::quantity::{format_memory, format_millis};
use crate::render::table::Table;
use crate::render::{Printer, Style, paint};
use crate::sched::report::{SimulationReport, StrategyReport};
use crate::sim::compare::ConsolidationReport;

/// Prints the report per the printer's format; `no_headers` drops the tables' header lines.
pub fn print_report(printer: &Printer, report: &SimulationReport, no_headers: bool) -> Result<()> {
    match printer.format {
        OutputFormat::Json | OutputFormat::Yaml => printer.structured(report),
        OutputFormat::Table | OutputFormat::Wide => {
            let wide = printer.format == OutputFormat::Wide;
            let text = NO_HEADERS.with(|h| {
                h.set(no_headers);
                let text = report_text(report, wide, printer.color);
                h.set(false);
                text
            });
            printer.write(&text)
        }
    }
}

thread_local! {
    /// `--no-headers` for the tables [`report_text`] builds (set only around one call, so the
    /// text functions the tests call keep their signatures).
    static NO_HEADERS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A table with `header`, headless under `--no-headers`.
fn table(header: &[&str]) -> Table {
    Table::new(header).without_header(NO_HEADERS.with(std::cell::Cell::get))
}

/// Width at which the NEW NODES cell wraps onto more lines (between node groups).
const NODES_CELL_WIDTH: usize = 40;

/// `3x c3-8 + 1x c3-16`: node groups by count, most first (then by name), wrapped between groups
/// so a catalog of many flavors keeps the table narrow.
fn nodes_summary(s: &StrategyReport) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for n in &s.nodes {
        match counts.iter_mut().find(|(t, _)| *t == n.instance_type) {
            Some((_, c)) => *c += 1,
            None => counts.push((n.instance_type.clone(), 1)),
        }
    }
    if counts.is_empty() {
        return "-".to_string();
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::new();
    let mut line = 0;
    for (i, (t, c)) in counts.iter().enumerate() {
        let part = format!("{c}x {t}");
        if i > 0 {
            if line + 3 + part.len() > NODES_CELL_WIDTH {
                out.push_str(" +\n");
                line = 0;
            } else {
                out.push_str(" + ");
                line += 3;
            }
        }
        line += part.len();
        out.push_str(&part);
    }
    out
}

fn extra(p: Option<Price>, base: Option<Price>, color: bool) -> String {
    match (p, base) {
        (Some(extra), Some(base)) if extra.0 > 0 => {
            let pct = if base.0 > 0 {
                format!(
                    " (+{}%)",
                    (i128::from(extra.0) * 100 + i128::from(base.0) / 2) / i128::from(base.0)
                )
            } else {
                String::new()
            };
            paint(color, &format!("+{extra}{pct}"), Style::Bad)
        }
        (Some(extra), _) if extra.0 < 0 => {
            paint(color, &format!("-{}", Price(-extra.0)), Style::Warn)
        }
        (Some(_), _) => "same".to_string(),
        (None, _) => "-".to_string(),
    }
}

/// The report as text.
pub fn report_text(report: &SimulationReport, wide: bool, color: bool) -> String {
    let mut out = String::new();
    let cost = report
        .strategies
        .iter()
        .find(|s| s.strategy == "cost")
        .map(|s| s.totals.price_per_hour);
    if report.strategies.len() == 1 {
        out.push_str(&detail_table(&report.strategies[0], wide));
    } else {
        let mut t = table(&[
            "STRATEGY",
            "NEW NODES",
            "VCPU",
            "MEMORY",
            "PRICE/H",
            "VS COST",
            "UNSCHEDULABLE",
        ]);
        for s in &report.strategies {
            let name = if s.strategy == "cost" {
                paint(color, &s.strategy, Style::Good)
            } else {
                s.strategy.clone()
            };
            t.row(vec![
                name,
                nodes_summary(s),
                format_millis(s.totals.cpu_millis),
                format_memory(s.totals.memory_bytes),
                s.totals.price_per_hour.to_string(),
                if s.strategy == "cost" {
                    "-".to_string()
                } else {
                    extra(s.extra_vs_cost_per_hour, cost, color)
                },
                s.unschedulable.len().to_string(),
            ]);
        }
        out.push_str(&t.render());
        let savings: Vec<String> = report
            .strategies
            .iter()
            .filter_map(|s| {
                s.extra_vs_cost_per_hour
                    .filter(|e| e.0 > 0)
                    .map(|e| format!("{e}/h vs {}", s.strategy))
            })
            .collect();
        if !savings.is_empty() {
            out.push_str(&format!(
                "\ncost saves {} ({}/month at 730 h).\n",
                savings.join(", "),
                monthly(report)
            ));
        }
        if wide {
            for s in &report.strategies {
                out.push_str(&format!("\n{}:\n", s.strategy));
                out.push_str(&detail_table(s, true));
            }
        }
    }
    for s in &report.strategies {
        if let (Some(bound), Some(pct)) = (s.lower_bound_per_hour, s.percent_above_lower_bound) {
            out.push_str(&format!(
                "\n{} is within {pct:.1} % of a lower bound ({bound}/h) for the new nodes.\n",
                s.strategy
            ));
        }
    }
    out.push_str(&unschedulable_text(report, color));
    out
}

/// The pods that fit nowhere, each with its reasons printed once for all the strategies that
/// give the same ones: `Unschedulable with cost, karpenter-capi, least-waste:`.
fn unschedulable_text(report: &SimulationReport, color: bool) -> String {
    // (pod, reasons) -> the strategies that report exactly that, in report order.
    let mut entries: Vec<(&str, &[String], Vec<&str>)> = Vec::new();
    for s in &report.strategies {
        for u in &s.unschedulable {
            match entries
                .iter_mut()
                .find(|(p, r, _)| *p == u.pod && *r == u.reasons.as_slice())
            {
                Some((_, _, strategies)) => strategies.push(&s.strategy),
                None => entries.push((&u.pod, &u.reasons, vec![&s.strategy])),
            }
        }
    }
    // The strategies that share them -> their pods and reasons.
    type Group<'a> = (Vec<&'a str>, Vec<(&'a str, &'a [String])>);
    let mut groups: Vec<Group> = Vec::new();
    for (pod, reasons, strategies) in entries {
        match groups.iter_mut().find(|(s, _)| *s == strategies) {
            Some((_, pods)) => pods.push((pod, reasons)),
            None => groups.push((strategies, vec![(pod, reasons)])),
        }
    }
    let mut out = String::new();
    for (strategies, pods) in groups {
        out.push_str(&format!(
            "\nUnschedulable with {}:\n",
            strategies.join(", ")
        ));
        for (pod, reasons) in pods {
            out.push_str(&format!("  {}\n", paint(color, pod, Style::Bad)));
            for r in reasons {
                out.push_str(&format!("    - {r}\n"));
            }
        }
    }
    out
}

fn monthly(report: &SimulationReport) -> String {
    let max_extra = report
        .strategies
        .iter()
        .filter_map(|s| s.extra_vs_cost_per_hour)
        .map(|p| p.0)
        .max()
        .unwrap_or(0);
    // Display only: cents are enough for a monthly figure.
    format!("up to {:.2}", Price(max_extra.saturating_mul(730)).as_f64())
}

/// `used/total` in one unit: whole cores when both are, else millicores.
fn cpu_pair(used: i64, total: i64) -> String {
    if used % 1000 == 0 && total % 1000 == 0 {
        format!("{}/{}", used / 1000, total / 1000)
    } else {
        format!("{used}m/{total}m")
    }
}

fn detail_table(s: &StrategyReport, wide: bool) -> String {
    let mut header = vec![
        "NODE",
        "INSTANCE TYPE",
        "MACHINEDEPLOYMENT",
        "PODS",
        "CPU REQ/ALLOC",
        "MEMORY REQ/ALLOC",
        "PRICE/H",
    ];
    if wide {
        header.push("POD NAMES");
    }
    let mut t = table(&header);
    for (i, n) in s.nodes.iter().enumerate() {
        let mut row = vec![
            format!("new-{}", i + 1),
            n.instance_type.clone(),
            n.machine_deployment.clone(),
            n.pods.len().to_string(),
            cpu_pair(n.requested.cpu_millis, n.allocatable.cpu_millis),
            format!(
                "{}/{}",
                format_memory(n.requested.memory_bytes),
                format_memory(n.allocatable.memory_bytes)
            ),
            n.price_per_hour.to_string(),
        ];
        if wide {
            row.push(n.pods.join(","));
        }
        t.row(row);
    }
    let mut out = if t.is_empty() {
        "No new nodes.\n".to_string()
    } else {
        t.render()
    };
    out.push_str(&format!(
        "Total ({}): {} node(s), {} vCPU, {} memory, {}/h\n",
        s.strategy,
        s.totals.nodes,
        format_millis(s.totals.cpu_millis),
        format_memory(s.totals.memory_bytes),
        s.totals.price_per_hour
    ));
    for e in &s.on_existing_nodes {
        out.push_str(&format!("  {} -> existing node {}\n", e.pod, e.node));
    }
    out
}

/// The consolidation table (or the structured report) of `simulate --consolidate`.
pub fn print_consolidation(
    printer: &Printer,
    report: &ConsolidationReport,
    no_headers: bool,
) -> Result<()> {
    if matches!(printer.format, OutputFormat::Json | OutputFormat::Yaml) {
        return printer.structured(report);
    }
    NO_HEADERS.with(|h| h.set(no_headers));
    let result = consolidation_text(printer, report);
    NO_HEADERS.with(|h| h.set(false));
    result
}

fn consolidation_text(printer: &Printer, report: &ConsolidationReport) -> Result<()> {
    let mut t = table(&[
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::resources::Resources;
    use crate::sched::report::{NodeReport, Totals, UnschedulablePod};

    fn node(instance_type: &str, price: i64) -> NodeReport {
        NodeReport {
            machine_deployment: format!("capi/{instance_type}"),
            instance_type: instance_type.to_string(),
            node_pool: "default".to_string(),
            price_per_hour: Price(price),
            pods: vec!["default/p".to_string()],
            allocatable: Resources {
                cpu_millis: 4000,
                memory_bytes: 8 << 30,
                pods: 110,
                ..Default::default()
            },
            requested: Resources {
                cpu_millis: 1000,
                memory_bytes: 256 << 20,
                pods: 1,
                ..Default::default()
            },
        }
    }

    fn strategy(name: &str, nodes: Vec<NodeReport>, price: i64) -> StrategyReport {
        StrategyReport {
            strategy: name.to_string(),
            totals: Totals {
                nodes: nodes.len(),
                cpu_millis: 4000 * nodes.len() as i64,
                memory_bytes: (8 << 30) * nodes.len() as i64,
                price_per_hour: Price(price),
            },
            nodes,
            on_existing_nodes: Vec::new(),
            extra_vs_cost_per_hour: None,
            lower_bound_per_hour: None,
            percent_above_lower_bound: None,
            unschedulable: Vec::new(),
            cut_short: false,
        }
    }

    const TENTH: i64 = Price::UNIT / 10;

    #[test]
    fn node_groups_are_sorted_by_count_then_name_and_wrapped() {
        let nodes = [
            "b-flavor", "a-flavor", "b-flavor", "c-flavor", "b-flavor", "a-flavor",
        ]
        .iter()
        .map(|t| node(t, TENTH))
        .collect();
        let s = strategy("cost", nodes, 6 * TENTH);
        assert_eq!(nodes_summary(&s), "3x b-flavor + 2x a-flavor + 1x c-flavor");
        // Long names wrap between groups, never inside one, at most NODES_CELL_WIDTH a line.
        let long: Vec<NodeReport> = (0..5)
            .map(|i| node(&format!("flavor-with-a-long-name-{i}"), TENTH))
            .collect();
        let s = strategy("cost", long, 5 * TENTH);
        let cell = nodes_summary(&s);
        assert_eq!(
            cell,
            "1x flavor-with-a-long-name-0 +\n1x flavor-with-a-long-name-1 +\n1x flavor-with-a-long-name-2 +\n\
             1x flavor-with-a-long-name-3 +\n1x flavor-with-a-long-name-4"
        );
        assert!(cell.lines().all(|l| l.len() <= NODES_CELL_WIDTH), "{cell}");
        assert_eq!(nodes_summary(&strategy("cost", Vec::new(), 0)), "-");
    }

    #[test]
    fn the_comparison_table_wraps_cells_and_keeps_columns_aligned() {
        let cost = strategy(
            "cost",
            (0..3)
                .map(|i| node(&format!("flavor-with-a-long-name-{i}"), TENTH))
                .collect(),
            3 * TENTH,
        );
        let mut upstream = strategy("karpenter-capi", vec![node("c3-16", 4 * TENTH)], 4 * TENTH);
        upstream.extra_vs_cost_per_hour = Some(Price(TENTH));
        let report = SimulationReport {
            strategies: vec![cost, upstream],
        };
        let text = report_text(&report, false, false);
        assert_eq!(
            text,
            "STRATEGY         NEW NODES                        VCPU   MEMORY   PRICE/H   VS COST          UNSCHEDULABLE\n\
             cost             1x flavor-with-a-long-name-0 +   12     24.0Gi   0.3000    -                0\n\
             \x20                1x flavor-with-a-long-name-1 +\n\
             \x20                1x flavor-with-a-long-name-2\n\
             karpenter-capi   1x c3-16                         4      8.0Gi    0.4000    +0.1000 (+33%)   0\n\
             \n\
             cost saves 0.1000/h vs karpenter-capi (up to 73.00/month at 730 h).\n"
        );
    }

    #[test]
    fn reasons_shared_by_strategies_are_printed_once() {
        let reasons = vec!["c3-4: needs 64 cpu, c3-4 has 1900m allocatable".to_string()];
        let other = vec!["c3-8: needs 64 cpu".to_string()];
        let mut strategies: Vec<StrategyReport> = ["cost", "karpenter-capi", "least-waste"]
            .iter()
            .map(|n| strategy(n, Vec::new(), 0))
            .collect();
        for s in &mut strategies {
            s.unschedulable.push(UnschedulablePod {
                pod: "default/huge".to_string(),
                reasons: reasons.clone(),
            });
        }
        // One strategy gives other reasons for a second pod.
        strategies[2].unschedulable.push(UnschedulablePod {
            pod: "default/other".to_string(),
            reasons: other.clone(),
        });
        let report = SimulationReport { strategies };
        let text = unschedulable_text(&report, false);
        assert_eq!(
            text,
            "\nUnschedulable with cost, karpenter-capi, least-waste:\n  default/huge\n    \
             - c3-4: needs 64 cpu, c3-4 has 1900m allocatable\n\
             \nUnschedulable with least-waste:\n  default/other\n    - c3-8: needs 64 cpu\n"
        );
        assert_eq!(text.matches("c3-4: needs 64 cpu").count(), 1);
    }

    #[test]
    fn a_lower_bound_is_reported_with_the_gap() {
        let mut cost = strategy("cost", vec![node("c3-8", TENTH)], TENTH);
        cost.lower_bound_per_hour = Some(Price(98_000_000));
        cost.percent_above_lower_bound = Some(2.04);
        let upstream = strategy("karpenter-capi", vec![node("c3-8", TENTH)], TENTH);
        let text = report_text(
            &SimulationReport {
                strategies: vec![cost, upstream],
            },
            false,
            false,
        );
        assert!(
            text.contains(
                "\ncost is within 2.0 % of a lower bound (0.0980/h) for the new nodes.\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("lower bound").count(), 1, "{text}");
        // Without a bound, no such line.
        let plain = report_text(
            &SimulationReport {
                strategies: vec![strategy("cost", vec![node("c3-8", TENTH)], TENTH)],
            },
            false,
            false,
        );
        assert!(!plain.contains("lower bound"), "{plain}");
        assert!(
            plain.ends_with("Total (cost): 1 node(s), 4 vCPU, 8.0Gi memory, 0.1000/h\n"),
            "{plain}"
        );
        assert!(
            plain.contains("1000m/4000m") || plain.contains("1/4"),
            "{plain}"
        );
        assert!(plain.contains("256Mi/8.0Gi"), "{plain}");
    }
}
