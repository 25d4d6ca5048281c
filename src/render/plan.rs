//! Rendering a controller [`Plan`]: one line per action in tables, the documented shape in JSON
//! and YAML.

use crate::cli::OutputFormat;
use crate::controller::{Action, Plan};
use crate::error::Result;
use crate::render::Printer;
use crate::render::table::Table;

/// Prints the plan per the printer's format.
pub fn print_plan(printer: &Printer, plan: &Plan) -> Result<()> {
    match printer.format {
        OutputFormat::Json | OutputFormat::Yaml => printer.structured(&plan_value(plan)),
        OutputFormat::Table | OutputFormat::Wide => printer.write(&plan_table(plan)),
    }
}

/// Prints a live pass's plan, then (tables only, when it had actions) how many were applied;
/// `applied` is `(applied, attempted)`, `None` for a dry run.
pub fn print_pass(printer: &Printer, plan: &Plan, applied: Option<(usize, usize)>) -> Result<()> {
    print_plan(printer, plan)?;
    if let Some((applied, attempted)) = applied
        && !plan.actions.is_empty()
        && matches!(printer.format, OutputFormat::Table | OutputFormat::Wide)
    {
        printer.line(&format!("Applied {applied} of {attempted} action(s)."))?;
    }
    Ok(())
}

/// The plan as JSON, each action with the exact API writes it makes (`writes`): the full
/// objects it creates (a NodeClaim with its labels, requirements, resources and the status
/// written after it) and the patches it sends, so an operator can review them before a run.
pub fn plan_value(plan: &Plan) -> serde_json::Value {
    let mut value = serde_json::to_value(plan).unwrap_or_default();
    for (key, list) in [
        ("actions", &plan.actions),
        ("pending", &plan.pending),
        ("status", &plan.status),
    ] {
        if let Some(items) = value.get_mut(key).and_then(|v| v.as_array_mut()) {
            for (item, action) in items.iter_mut().zip(list) {
                item["writes"] = serde_json::to_value(action.steps().writes).unwrap_or_default();
            }
        }
    }
    value
}

/// The plan as a table (or a one-line "nothing to do").
pub fn plan_table(plan: &Plan) -> String {
    let mut out = String::new();
    if plan.actions.is_empty() {
        out.push_str("No changes: the cluster is converged.\n");
    } else {
        out.push_str(&actions_table(&plan.actions));
    }
    if !plan.pending.is_empty() {
        out.push_str("\nLater, once drains finish:\n");
        out.push_str(&actions_table(&plan.pending));
    }
    if !plan.status.is_empty() {
        // Kept to one line: `-o yaml` lists them with their writes.
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for a in &plan.status {
            *kinds.entry(a.name()).or_default() += 1;
        }
        let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        out.push_str(&format!("Status updates: {}\n", parts.join(", ")));
    }
    for note in &plan.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if plan.cut_short {
        out.push_str("note: an optimizer search hit its wall-clock safety net before its work budget: this plan depends on the machine's speed\n");
    }
    out
}

/// Numbered actions with their target and details.
fn actions_table(actions: &[Action]) -> String {
    let mut t = Table::new(&["#", "ACTION", "TARGET", "DETAILS"]);
    for (i, a) in actions.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string(),
            a.name().to_string(),
            a.target().to_string(),
            details(a),
        ]);
    }
    t.render()
}

fn details(a: &Action) -> String {
    match a {
        Action::CreateNodeClaim {
            node_pool,
            machine_deployment,
            instance_type,
            pods,
            price_per_hour,
            reason,
            ..
        } => format!(
            "{instance_type} from {machine_deployment} (NodePool {node_pool}), ${price_per_hour}/h, {} pod(s), {reason}",
            pods.len()
        ),
        Action::ScaleMachineDeployment { from, replicas, .. } => {
            format!("replicas {from} -> {replicas}")
        }
        Action::ClaimMachine { node_claim, .. } => format!("for NodeClaim {node_claim}"),
        Action::LaunchNodeClaim { provider_id, .. } => format!("providerID {provider_id}"),
        Action::RegisterNode { node_claim, .. } => format!("adopt for NodeClaim {node_claim}"),
        Action::InitializeNodeClaim { node, .. } => format!("node {node} ready"),
        Action::DeleteNodeClaim {
            reason, message, ..
        } => format!("{reason}: {message}"),
        Action::MarkMachineForDeletion { reason, .. } => {
            format!("cluster.x-k8s.io/delete-machine ({reason})")
        }
        Action::SetNodeClassReady { .. } => "Ready=True".to_string(),
        Action::TaintNode {
            taint,
            reason,
            saving_per_hour,
            ..
        } => format!("{taint} ({reason}, saves ${saving_per_hour}/h)"),
        Action::EvictPod { node, reason, .. } => format!("from {node} ({reason})"),
        Action::ExcludeFromLoadBalancers { .. } => {
            use crate::vocab::keys::{
                EXCLUDE_FROM_LOAD_BALANCERS_LABEL, EXCLUDE_FROM_LOAD_BALANCERS_VALUE,
            };
            format!("{EXCLUDE_FROM_LOAD_BALANCERS_LABEL}={EXCLUDE_FROM_LOAD_BALANCERS_VALUE}")
        }
        Action::DeletePod {
            node,
            reason,
            grace_period_seconds,
            ..
        } => format!(
            "from {node} ({reason}, its time runs out before the node's deadline: deleted with gracePeriodSeconds={grace_period_seconds})"
        ),
        Action::SetTerminationTimestamp { time, .. } => {
            format!("karpenter.sh/nodeclaim-termination-timestamp={time}")
        }
        Action::ReportInvalidDoNotDisrupt { message, .. } => message.clone(),
        Action::UnmarkMachine { message, .. } => {
            format!("cluster.x-k8s.io/delete-machine removed ({message})")
        }
        Action::WarnNodePool {
            reason, message, ..
        } => format!("{reason}: {message}"),
        Action::StampNodeClaimHash {
            hash_version,
            previous_version,
            ..
        } => format!(
            "hash version {} -> {hash_version}",
            previous_version.as_deref().unwrap_or("none")
        ),
        Action::SetConsistentState { issues, .. } => {
            if issues.is_empty() {
                "ConsistentStateFound=True".to_string()
            } else {
                format!("ConsistentStateFound=False: {}", issues.join("; "))
            }
        }
        Action::SetNodeClaimConditions { set, clear, .. } => {
            let mut parts: Vec<String> = set
                .iter()
                .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
                .collect();
            parts.extend(clear.iter().map(|c| format!("{c} cleared")));
            parts.join(", ")
        }
        Action::HydrateNodeClassLabel { node_class, .. } => {
            format!("label karpenter.cluster.x-k8s.io/clusterapinodeclass={node_class}")
        }
        Action::RecordPodEvent { node, time, .. } => {
            format!("lastPodEventTime {time} (pod event on {node})")
        }
        Action::UpdateNodePoolStatus { nodes, ready, .. } => format!(
            "nodes {nodes}, Ready={}",
            if *ready { "True" } else { "False" }
        ),
        Action::RemoveNodeFinalizer { .. } | Action::RemoveNodeClaimFinalizer { .. } => {
            "remove karpenter.sh/termination".to_string()
        }
        Action::AbortDisruption { message, .. } => format!("untaint: {message}"),
        Action::ReportDisruptionBlocked { message, .. } => {
            format!(
                "DisruptionBlocked: {}",
                crate::controller::events::sentence(message)
            )
        }
        Action::AdoptMachine {
            node,
            node_claim,
            node_pool,
            ..
        } => format!("node {node} as NodeClaim {node_claim} (NodePool {node_pool})"),
    }
}
