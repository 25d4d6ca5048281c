//! Which actions of a plan belong together, for the executor's failure locality: an action's
//! scopes are the objects it touches or depends on, as `Kind/name` keys (see
//! `kube::apply`'s guarantees).

use serde_json::Value;

use super::action::Action;

impl Action {
    /// The objects this action belongs with (`Kind/name` keys). When an action fails, the
    /// executor skips every later action sharing a key with it (or with an action skipped so):
    /// the rest of its own disruption decision, other actions on the same node, and scales of
    /// the same MachineDeployment; everything else runs.
    pub fn scopes(&self) -> Vec<String> {
        let claim = |c: &str| format!("NodeClaim/{c}");
        let node = |n: &str| format!("Node/{n}");
        let machine = |m: &str| format!("Machine/{m}");
        match self {
            Action::CreateNodeClaim {
                machine_deployment,
                manifest,
                ..
            } => {
                let mut out = vec![format!("MachineDeployment/{machine_deployment}")];
                if let Some(list) = manifest
                    .pointer("/metadata/annotations/karpenter-capi~1replaces")
                    .and_then(Value::as_str)
                {
                    out.extend(list.split(',').filter(|n| !n.is_empty()).map(node));
                }
                out
            }
            Action::ScaleMachineDeployment {
                machine_deployment,
                rollback_machines,
                ..
            } => std::iter::once(format!("MachineDeployment/{machine_deployment}"))
                .chain(rollback_machines.iter().map(|m| machine(m)))
                .collect(),
            Action::ClaimMachine {
                machine: m,
                node_claim,
                ..
            } => vec![machine(m), claim(node_claim)],
            Action::LaunchNodeClaim { node_claim, .. } => vec![claim(node_claim)],
            Action::RegisterNode {
                node: n,
                node_claim,
                ..
            }
            | Action::InitializeNodeClaim {
                node: n,
                node_claim,
                ..
            } => vec![node(n), claim(node_claim)],
            Action::DeleteNodeClaim {
                node_claim,
                machine: m,
                ..
            } => std::iter::once(claim(node_claim))
                .chain(m.as_deref().map(machine))
                .collect(),
            Action::MarkMachineForDeletion {
                machine: m,
                node_claim,
                ..
            } => std::iter::once(machine(m))
                .chain(node_claim.as_deref().map(claim))
                .collect(),
            Action::SetNodeClassReady { target, .. } | Action::WarnNodePool { target, .. } => {
                vec![target.clone()]
            }
            Action::TaintNode {
                node: n,
                node_claim,
                ..
            } => std::iter::once(node(n))
                .chain(node_claim.as_deref().map(claim))
                .collect(),
            Action::AbortDisruption {
                node: n,
                node_claim,
                replacements,
                ..
            } => std::iter::once(node(n))
                .chain(node_claim.as_deref().map(claim))
                .chain(replacements.iter().map(|r| claim(r)))
                .collect(),
            Action::ReportDisruptionBlocked {
                node: n,
                node_claim,
                ..
            } => vec![node(n), claim(node_claim)],
            Action::EvictPod { node: n, .. }
            | Action::ExcludeFromLoadBalancers { node: n, .. }
            | Action::DeletePod { node: n, .. }
            | Action::RemoveNodeFinalizer { node: n, .. } => {
                vec![node(n)]
            }
            Action::SetTerminationTimestamp { node_claim, .. } => vec![claim(node_claim)],
            Action::ReportInvalidDoNotDisrupt { target, .. } => vec![target.clone()],
            Action::UnmarkMachine { machine: m, .. } => vec![machine(m)],
            Action::RemoveNodeClaimFinalizer { node_claim, .. } => vec![claim(node_claim)],
            Action::AdoptMachine {
                machine: m,
                node: n,
                node_claim,
                ..
            } => vec![machine(m), node(n), claim(node_claim)],
            Action::StampNodeClaimHash { node_claim, .. }
            | Action::SetNodeClaimConditions { node_claim, .. }
            | Action::SetConsistentState { node_claim, .. }
            | Action::RecordPodEvent { node_claim, .. } => vec![claim(node_claim)],
            Action::HydrateNodeClassLabel {
                node_claim,
                node: n,
                ..
            } => match n {
                Some(n) => vec![node(n)],
                None => vec![claim(node_claim)],
            },
            Action::UpdateNodePoolStatus { target, .. } => vec![target.clone()],
        }
    }
}
