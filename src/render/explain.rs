//! `explain`'s answers as trees: a pod's flavors (fit, or the reason with numbers) and each
//! strategy's choice; a NodeClaim's timeline, Machine, Node and blocking cause.

use crate::diagnose::Severity;
use crate::diagnose::explain::{ClaimExplanation, Outcome as Choice, PodExplanation};
use crate::model::quantity::{format_memory, format_millis};
use crate::render::Style;
use crate::render::tree::Tree;

fn pad(text: &str, width: usize) -> String {
    format!("{text:<width$}")
}

/// The pod explanation as a tree: flavors (fit or the reason), then each strategy's choice.
pub fn pod_tree(e: &PodExplanation) -> Tree {
    let r = &e.requests;
    let state = match &e.node {
        Some(node) => format!("bound to node {node}"),
        None => "pending".to_string(),
    };
    let mut root = Tree::styled(format!("Pod {}", e.pod), Style::Bold).span(
        format!(
            "  {state}, requests {} cpu, {} memory",
            format_millis(r.cpu_millis),
            format_memory(r.memory_bytes)
        ),
        None,
    );
    let multi_pool = e
        .flavors
        .iter()
        .map(|f| &f.node_pool)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let label = |pool: &str, t: &str| {
        if multi_pool {
            format!("{pool}/{t}")
        } else {
            t.to_string()
        }
    };
    let width = e
        .flavors
        .iter()
        .map(|f| label(&f.node_pool, &f.instance_type).len())
        .max()
        .unwrap_or(0);
    if !e.constraints.is_empty() {
        let mut c = Tree::new("Constraints (preferences are required until relaxed)");
        for line in &e.constraints {
            c.push(Tree::new(line.clone()));
        }
        root.push(c);
    }
    if !e.nodes.is_empty() {
        // Enough to see why; JSON has them all.
        const SHOWN: usize = 20;
        let mut nodes = Tree::new("Existing nodes");
        let width = e
            .nodes
            .iter()
            .take(SHOWN)
            .map(|n| n.node.len())
            .max()
            .unwrap_or(0);
        for n in e.nodes.iter().take(SHOWN) {
            let name = pad(&n.node, width);
            nodes.push(if n.fits {
                Tree::new(format!("{name}  ")).span("fits", Some(Style::Good))
            } else {
                Tree::new(format!("{name}  "))
                    .span("does not fit", Some(Style::Bad))
                    .span(format!("  {}", n.reason.as_deref().unwrap_or("")), None)
            });
        }
        if e.nodes.len() > SHOWN {
            nodes.push(Tree::new(format!(
                "... {} more (-o json lists all)",
                e.nodes.len() - SHOWN
            )));
        }
        root.push(nodes);
    }
    let mut flavors = Tree::new("Flavors");
    if e.flavors.is_empty() {
        flavors.push(Tree::styled(
            "no flavor offered: no NodePool has a valid member MachineDeployment",
            Style::Bad,
        ));
    }
    for f in &e.flavors {
        let name = pad(&label(&f.node_pool, &f.instance_type), width);
        let line = if f.fits {
            Tree::new(format!("{name}  "))
                .span("fits", Some(Style::Good))
                .span(format!("          {}/h", f.price_per_hour), None)
        } else {
            Tree::new(format!("{name}  "))
                .span("does not fit", Some(Style::Bad))
                .span(format!("  {}", f.reason.as_deref().unwrap_or("")), None)
        };
        flavors.push(line);
    }
    root.push(flavors);
    if e.node.is_none() {
        let mut strategies = Tree::new(format!("Strategies (batch of {} pending pod(s))", e.batch));
        let width = e
            .strategies
            .iter()
            .map(|s| s.strategy.len())
            .max()
            .unwrap_or(0);
        let type_width = e
            .strategies
            .iter()
            .filter_map(|s| match &s.outcome {
                Choice::NewNode { instance_type, .. } => Some(instance_type.len()),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        for s in &e.strategies {
            let name = pad(s.strategy, width);
            let line = match &s.outcome {
                Choice::NewNode { instance_type, price_per_hour, pods_on_node, .. } => Tree::new(format!("{name}  "))
                    .span(pad(instance_type, type_width), Some(Style::Good))
                    .span(
                        format!(
                            "  {price_per_hour}/h (node shared by {pods_on_node} pod(s); batch {}/h)",
                            s.batch_price_per_hour
                        ),
                        None,
                    ),
                Choice::ExistingNode { node } => Tree::new(format!("{name}  existing node ")).span(node.clone(), Some(Style::Good)),
                Choice::InFlightNode { node } => {
                    Tree::new(format!("{name}  in-flight node ")).span(node.clone(), Some(Style::Warn))
                }
                Choice::Unschedulable { reasons } => {
                    let mut t = Tree::new(format!("{name}  ")).span("unschedulable", Some(Style::Bad));
                    for reason in reasons {
                        t.push(Tree::new(reason.clone()));
                    }
                    t
                }
            };
            let mut line = line;
            for note in &s.relaxed {
                line.push(Tree::styled(format!("relaxed: {note}"), Style::Warn));
            }
            if let Some(sizing) = &s.sizing {
                line.push(Tree::new(sizing.to_string()));
            }
            strategies.push(line);
        }
        root.push(strategies);
    }
    root
}

/// The NodeClaim explanation as a tree: timeline, Machine, Node, blocking cause.
pub fn claim_tree(e: &ClaimExplanation) -> Tree {
    let mut root = Tree::styled(format!("NodeClaim {}", e.nodeclaim), Style::Bold).span(
        format!(
            "  {}{}, age {}",
            e.node_pool
                .as_deref()
                .map(|p| format!("NodePool {p}"))
                .unwrap_or_else(|| "no NodePool label".to_string()),
            e.instance_type
                .as_deref()
                .map(|t| format!(", {t}"))
                .unwrap_or_default(),
            e.age
        ),
        None,
    );
    let mut timeline = Tree::new("Timeline");
    for s in &e.timeline {
        let style = match s.status.as_str() {
            "True" => Style::Good,
            "False" => Style::Bad,
            _ => Style::Warn,
        };
        let status = if s.status.is_empty() {
            "not reported"
        } else {
            s.status.as_str()
        };
        let mut line =
            Tree::new(format!("{:<12}", s.step)).span(format!("{status:<13}"), Some(style));
        if let Some(after) = &s.after {
            line = line.span(format!("{:<8}", format!("+{after}")), None);
            if let Some(at) = s.at {
                line = line.span(format!("({at})"), Some(Style::Dim));
            }
        } else if !s.reason.is_empty() {
            line = line.span(format!("{}: {}", s.reason, s.message), None);
        }
        timeline.push(line);
    }
    root.push(timeline);
    root.push(match &e.machine {
        Some(m) => Tree::new(format!("Machine {}", m.name)).span(
            format!(
                "  phase {}, providerID {}, node {}",
                m.phase.as_deref().unwrap_or("-"),
                m.provider_id.as_deref().unwrap_or("-"),
                m.node.as_deref().unwrap_or("-")
            ),
            None,
        ),
        None => Tree::new("Machine ").span("none", Some(Style::Bad)),
    });
    if e.nodes.is_empty() {
        root.push(Tree::new("Node ").span("none", Some(Style::Warn)));
    }
    for n in &e.nodes {
        let style = if n.ready == "True" {
            Style::Good
        } else {
            Style::Bad
        };
        root.push(
            Tree::new(format!("Node {}  Ready=", n.name))
                .span(n.ready.clone(), Some(style))
                .span(format!(", taints [{}]", n.taints.join(", ")), None),
        );
    }
    let f = &e.finding;
    let style = crate::render::doctor::severity_style(f.severity);
    let mut cause = Tree::new("Cause: ").span(format!("{} ({})", f.cause, f.severity), Some(style));
    cause.push(Tree::new(f.message.clone()));
    if f.severity != Severity::Ok {
        cause.push(Tree::new("fix: ").span(f.remedy.clone(), Some(Style::Bold)));
    }
    root.push(cause);
    root
}
