//! The `simulate --timeline` table: one row per strategy (and the field report's numbers when
//! the trace is one of its runs) with the milestones, time to Running, nodes and cost.

use super::table::Table;
use crate::sim::engine::{MilestoneSecs, Timeline};

fn s(v: Option<f64>) -> String {
    match v {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}s"),
        Some(x) => format!("{x:.1}s"),
        None => "-".to_string(),
    }
}

fn milestone_cells(m: &MilestoneSecs) -> Vec<String> {
    vec![
        s(m.claim),
        s(m.scale),
        s(m.launched),
        s(m.registered),
        s(m.initialized),
        s(m.running),
        s(m.scaled_to_zero),
    ]
}

/// `1h2m3s` style for a number of seconds.
pub fn human(secs: f64) -> String {
    crate::model::duration::GoDuration(secs.max(0.0).round() as u64).to_string()
}

/// Renders the table and a closing summary line.
pub fn render(t: &Timeline) -> String {
    render_with(t, false)
}

/// [`render`], the table without its header line under `--no-headers`.
pub fn render_with(t: &Timeline, no_headers: bool) -> String {
    let mut table = Table::new(&[
        "STRATEGY",
        "CLAIM",
        "SCALE",
        "LAUNCHED",
        "REGISTERED",
        "INITIALIZED",
        "RUNNING",
        "TO ZERO",
        "P50",
        "P95",
        "MAX",
        "MAX NODES",
        "NODE-HOURS",
        "COST",
        "VS BOUND",
    ])
    .without_header(no_headers);
    if let Some(r) = &t.reference {
        let mut row = vec!["report (upstream)".to_string()];
        let mut cells = milestone_cells(&r.milestones);
        if let Some(z) = cells.last_mut() {
            *z = format!("~{z}");
        }
        row.extend(cells);
        table.row(row);
    }
    for st in &t.strategies {
        let mut row = vec![st.strategy.to_string()];
        row.extend(milestone_cells(&st.milestones));
        row.push(s(st.time_to_running.p50));
        row.push(s(st.time_to_running.p95));
        row.push(s(st.time_to_running.max));
        row.push(st.max_nodes.to_string());
        row.push(format!("{:.2}", st.node_hours));
        row.push(format!("{:.4}", st.cost));
        row.push(
            st.cost_vs_bound
                .map_or_else(|| "-".to_string(), |r| format!("{r:.2}x")),
        );
        table.row(row);
    }
    let mut out = format!(
        "trace {}: replayed {}; milestones from T+0, TO ZERO from when the load left; P50/P95/MAX: pod creation to Running\n\n",
        t.trace,
        human(t.horizon_seconds)
    );
    out.push_str(&table.render());
    match t.lower_bound {
        Some(b) if b > 0.0 => out.push_str(&format!(
            "\nVS BOUND: each COST over {b:.4}, the least any autoscaler could bill (the trace's alive pods, pending ones included, covered fractionally by the cheapest flavors' allocatable minus DaemonSet requests, billed per hour as the Machines are).\n"
        )),
        Some(_) => out.push_str(
            "\nVS BOUND: -, the lower bound is 0 (the scenario's own nodes have room for every pod when pod constraints are ignored).\n",
        ),
        None => {}
    }
    let ours = t.strategies.iter().find(|x| x.strategy == "cost");
    let upstream = t.strategies.iter().find(|x| x.strategy == "karpenter-capi");
    if let (Some(o), Some(u)) = (ours, upstream)
        && let (Some(a), Some(b)) = (o.milestones.scale, u.milestones.scale)
        && a != b
    {
        out.push_str(&format!(
            "\ncost requests the scale-up at T+{} where upstream karpenter-capi does at T+{}.\n",
            s(Some(a)),
            s(Some(b))
        ));
    }
    let warnings: Vec<String> = t
        .strategies
        .iter()
        .flat_map(|st| {
            st.warnings
                .iter()
                .map(move |w| format!("{}: {w}", st.strategy))
        })
        .collect();
    for w in warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
