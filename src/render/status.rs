//! `status` on screen: the NodePool, node, claim, pending-pod and cost tables (more columns with
//! `-o wide`), or the model as JSON/YAML, `kind/name` lines, a JSONPath template or custom
//! columns over the nodes. Writes into any `Write`; the caller owns stdout.

use std::io::Write;

use serde_json::Value;

use super::table::Table;
use super::{Style, paint, structured_text};
use crate::cli::{OutputFormat, OutputMode};
use crate::error::{Error, Result};
use crate::model::flavor::Price;
use crate::model::quantity::{format_memory, format_millis};
use crate::model::resources::Resources;
use crate::status::{ClusterStatus, NodeStatus, PendingReason, UNMANAGED};

/// How to show it.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The `-o` choice.
    pub mode: OutputMode,
    /// `--no-headers`.
    pub no_headers: bool,
    /// ANSI colors.
    pub color: bool,
}

/// Writes the status as the view asks.
pub fn write(out: &mut impl Write, status: &ClusterStatus, view: &View) -> Result<()> {
    let text = match &view.mode {
        OutputMode::Table => tables(status, false, view),
        OutputMode::Wide => tables(status, true, view),
        OutputMode::Json => structured_text(OutputFormat::Json, status)?,
        OutputMode::Yaml => structured_text(OutputFormat::Yaml, status)?,
        OutputMode::Name => names(status),
        OutputMode::JsonPath(template) => jsonpath(&to_value(status)?, template)?,
        OutputMode::CustomColumns(columns) => custom_columns(status, columns, view.no_headers)?,
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// kubectl's `duration.HumanDuration`: `45s`, `3m20s`, `80m`, `5h30m`, `26h`, `3d4h`, `40d`.
pub fn human_age(secs: i64) -> String {
    let (m, h) = (secs / 60, secs / 3600);
    match secs {
        s if s < 0 => "0s".to_string(),
        s if s < 120 => format!("{s}s"),
        _ if m < 10 && secs % 60 != 0 => format!("{m}m{}s", secs % 60),
        _ if m < 180 => format!("{m}m"),
        _ if h < 8 && m % 60 != 0 => format!("{h}h{}m", m % 60),
        _ if h < 48 => format!("{h}h"),
        _ if h < 24 * 8 && h % 24 != 0 => format!("{}d{}h", h / 24, h % 24),
        _ if h < 24 * 365 * 2 => format!("{}d", h / 24),
        _ if h < 24 * 365 * 8 && (h / 24) % 365 != 0 => {
            format!("{}y{}d", h / 24 / 365, (h / 24) % 365)
        }
        _ => format!("{}y", h / 24 / 365),
    }
}

fn age(secs: Option<i64>) -> String {
    secs.map_or_else(|| "<unknown>".to_string(), human_age)
}

/// `used/allocatable (pct%)`, as eks-node-viewer shows a node's bar.
fn usage(used: i64, total: i64, fmt: fn(i64) -> String) -> String {
    let pct = if total > 0 {
        (i128::from(used) * 100 / i128::from(total)).to_string()
    } else {
        "-".to_string()
    };
    format!("{}/{} ({pct}%)", fmt(used), fmt(total))
}

fn cpu(r: &Resources, a: &Resources) -> String {
    usage(r.cpu_millis, a.cpu_millis, format_millis)
}

fn memory(r: &Resources, a: &Resources) -> String {
    usage(r.memory_bytes, a.memory_bytes, format_memory)
}

fn price(p: Option<Price>) -> String {
    p.map_or_else(|| "-".to_string(), |p| p.to_string())
}

fn signed(p: Price) -> String {
    if p.0 < 0 {
        format!("-{}", Price(-p.0))
    } else {
        format!("+{p}")
    }
}

fn pool_name(name: &str) -> &str {
    if name == UNMANAGED { "<none>" } else { name }
}

fn node_state(n: &NodeStatus) -> String {
    let mut parts = vec![match n.ready {
        Some(true) => "Ready",
        Some(false) => "NotReady",
        None => "Unknown",
    }];
    if n.unschedulable {
        parts.push("SchedulingDisabled");
    }
    if n.deleting {
        parts.push("Deleting");
    }
    parts.join(",")
}

fn render_table(t: &Table, no_headers: bool) -> String {
    let text = t.render();
    if no_headers {
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    } else {
        text
    }
}

/// The human view: NodePools, nodes, claims in flight, pending pods, cost; empty sections left
/// out, one blank line between sections.
fn tables(s: &ClusterStatus, wide: bool, view: &View) -> String {
    let unit = s
        .currency
        .as_deref()
        .map_or("PRICE/H".to_string(), |c| format!("PRICE/H ({c})"));
    let mut sections = Vec::new();
    let mut pools = Table::new(&[
        "NODEPOOL",
        "NODES",
        "PODS",
        "CPU",
        "MEMORY",
        &unit,
        "IN FLIGHT",
    ]);
    for p in &s.node_pools {
        pools.row(vec![
            pool_name(&p.name).to_string(),
            p.nodes.to_string(),
            p.pods.to_string(),
            cpu(&p.requested, &p.allocatable),
            memory(&p.requested, &p.allocatable),
            p.price_per_hour.to_string(),
            p.in_flight.to_string(),
        ]);
    }
    sections.push(render_table(&pools, view.no_headers));
    let mut header = vec![
        "NODE", "NODEPOOL", "FLAVOR", "ZONE", "AGE", "PODS", "CPU", "MEMORY",
    ];
    header.push(&unit);
    if wide {
        header.extend(["STATUS", "NODECLAIM", "MACHINEDEPLOYMENT"]);
    }
    let mut nodes = Table::new(&header);
    for n in &s.nodes {
        let mut row = vec![
            n.name.clone(),
            pool_name(&n.node_pool).to_string(),
            n.instance_type.clone().unwrap_or_else(|| "-".to_string()),
            n.zone.clone().unwrap_or_else(|| "-".to_string()),
            age(n.age_seconds),
            n.pods.to_string(),
            cpu(&n.requested, &n.allocatable),
            memory(&n.requested, &n.allocatable),
            price(n.price_per_hour),
        ];
        if wide {
            row.push(node_state(n));
            row.push(n.node_claim.clone().unwrap_or_else(|| "-".to_string()));
            row.push(
                n.machine_deployment
                    .clone()
                    .unwrap_or_else(|| "-".to_string()),
            );
        }
        nodes.row(row);
    }
    if !nodes.is_empty() {
        sections.push(render_table(&nodes, view.no_headers));
    }
    let mut claims = Table::new(&["NODECLAIM", "NODEPOOL", "FLAVOR", "PHASE", "AGE", &unit]);
    for c in &s.in_flight {
        claims.row(vec![
            c.name.clone(),
            c.node_pool.clone().unwrap_or_else(|| "-".to_string()),
            c.instance_type.clone().unwrap_or_else(|| "-".to_string()),
            paint(view.color, c.phase.as_str(), Style::Warn),
            age(c.age_seconds),
            price(c.price_per_hour),
        ]);
    }
    if !claims.is_empty() {
        sections.push(render_table(&claims, view.no_headers));
    }
    let mut pending = Table::new(&["PENDING POD", "AGE", "REASON"]);
    for p in &s.pending {
        pending.row(vec![
            p.pod.clone(),
            age(p.age_seconds),
            pending_reason(&p.reason, wide, view.color),
        ]);
    }
    if !pending.is_empty() {
        sections.push(render_table(&pending, view.no_headers));
    }
    sections.push(cost_table(s, &unit, view));
    let mut text = sections.join("\n");
    for note in cost_notes(s) {
        text.push_str(&note);
        text.push('\n');
    }
    text
}

/// The reason in a few words; with `wide`, every rejection.
fn pending_reason(r: &PendingReason, wide: bool, color: bool) -> String {
    let name = r.as_str();
    match r {
        PendingReason::SchedulingGated | PendingReason::Nominated => name.to_string(),
        PendingReason::WaitingForNodeClaim { node_claim } => format!("{name} {node_claim}"),
        PendingReason::FitsExistingNode { node } => format!("{name} {node}"),
        PendingReason::WouldProvision {
            instance_type,
            node_pool,
        } => format!("{name} {node_pool}/{instance_type}"),
        PendingReason::Unschedulable { rejections } => {
            let head = paint(color, name, Style::Bad);
            match rejections.as_slice() {
                [] => head,
                [first, rest @ ..] if !wide && !rest.is_empty() => {
                    format!("{head}: {first} (+{} more)", rest.len())
                }
                all => format!(
                    "{head}: {}",
                    all.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }
        }
    }
}

fn cost_table(s: &ClusterStatus, unit: &str, view: &View) -> String {
    let c = &s.cost;
    let mut t = Table::new(&["COST", "NODES", unit, "VS NOW"]);
    let managed = s.nodes.iter().filter(|n| n.node_pool != UNMANAGED).count();
    t.row(vec![
        "now (NodePools' nodes)".to_string(),
        managed.to_string(),
        c.current_per_hour.to_string(),
        String::new(),
    ]);
    for sc in &c.strategies {
        let delta = signed(sc.delta_per_hour);
        let delta = if sc.delta_per_hour.0 < 0 {
            paint(view.color, &delta, Style::Good)
        } else {
            delta
        };
        t.row(vec![
            format!("{} for the current pods", sc.strategy.as_str()),
            sc.nodes.to_string(),
            sc.price_per_hour.to_string(),
            delta,
        ]);
    }
    render_table(&t, view.no_headers)
}

fn cost_notes(s: &ClusterStatus) -> Vec<String> {
    let c = &s.cost;
    let mut out = Vec::new();
    if let Some(p) = &c.comparison_problem {
        out.push(format!("no strategy comparison: {p}"));
    }
    if let Some(u) = c.strategies.iter().find(|x| x.unschedulable > 0) {
        out.push(format!(
            "{} of {} pods fit no flavor under any strategy",
            u.unschedulable, c.pods_planned
        ));
    }
    if c.unpriced_nodes > 0 {
        out.push(format!(
            "{} node(s) without a known flavor price count 0",
            c.unpriced_nodes
        ));
    }
    out
}

/// `nodepool/NAME`, `node/NAME` and `nodeclaim/NAME` (claims in flight) lines.
fn names(s: &ClusterStatus) -> String {
    let mut out = String::new();
    for p in s.node_pools.iter().filter(|p| p.name != UNMANAGED) {
        out.push_str(&format!("nodepool/{}\n", p.name));
    }
    for n in &s.nodes {
        out.push_str(&format!("node/{}\n", n.name));
    }
    for c in &s.in_flight {
        out.push_str(&format!("nodeclaim/{}\n", c.name));
    }
    out
}

/// kubectl's JSONPath template: text with `{expression}`s, each a path from the root (`.a.b`,
/// `.items[*].name`, `$.x`) or a quoted string (`{"\n"}`); several results are joined by
/// spaces, strings printed bare. `range`/`end` are not supported.
pub fn jsonpath(value: &Value, template: &str) -> Result<String> {
    let bad = |problem: String| Error::usage(format!("-o jsonpath={template}: {problem}"));
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| bad("unclosed {".to_string()))?;
        let expr = after[..close].trim();
        rest = &after[close + 1..];
        if let Some(literal) = expr.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
            out.push_str(&literal.replace("\\n", "\n").replace("\\t", "\t"));
            continue;
        }
        if expr.starts_with("range") || expr == "end" {
            return Err(bad(
                "range/end is not supported; use -o json with jq".to_string()
            ));
        }
        out.push_str(&query(value, expr).map_err(bad)?.join(" "));
    }
    out.push_str(rest);
    Ok(out)
}

/// The values at a kubectl-style path (`.a.b`, `a.b`, `$.a`), each as text.
fn query(value: &Value, expr: &str) -> std::result::Result<Vec<String>, String> {
    use jsonpath_rust::JsonPath;
    let path = if expr.starts_with('$') {
        expr.to_string()
    } else if expr.starts_with('.') || expr.starts_with('[') {
        format!("${expr}")
    } else {
        format!("$.{expr}")
    };
    let found = value.query(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(found
        .into_iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect())
}

/// One row per node, a column per `HEADER:PATH` (`<none>` where the path finds nothing).
fn custom_columns(
    s: &ClusterStatus,
    columns: &[(String, String)],
    no_headers: bool,
) -> Result<String> {
    let headers: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
    let mut t = Table::new(&headers);
    for n in &s.nodes {
        let v = to_value(n)?;
        let mut row = Vec::new();
        for (header, path) in columns {
            let found = query(&v, path)
                .map_err(|e| Error::usage(format!("custom column {header}: {e}")))?;
            row.push(if found.is_empty() {
                "<none>".to_string()
            } else {
                found.join(",")
            });
        }
        t.row(row);
    }
    Ok(render_table(&t, no_headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let cases = [
            (45, "45s"),
            (119, "119s"),
            (200, "3m20s"),
            (600, "10m"),
            (4800, "80m"),
            (19800, "5h30m"),
            (93600, "26h"),
            (273600, "3d4h"),
            (3456000, "40d"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_age(secs), text, "{secs}");
        }
    }

    #[test]
    fn jsonpath_templates_print_values_and_literals() {
        let v = serde_json::json!({"a": {"b": 1.5, "c": "x"}, "l": [{"n": "p"}, {"n": "q"}]});
        assert_eq!(jsonpath(&v, "{.a.b}").unwrap(), "1.5");
        assert_eq!(jsonpath(&v, "c={.a.c}{\"\\n\"}").unwrap(), "c=x\n");
        assert_eq!(jsonpath(&v, "{.l[*].n}").unwrap(), "p q");
        assert!(jsonpath(&v, "{range .l[*]}").is_err());
        assert!(jsonpath(&v, "{.a").is_err());
    }
}
