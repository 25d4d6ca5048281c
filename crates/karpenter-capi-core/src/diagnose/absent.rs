//! What is not there at all: no NodePool, no member MachineDeployment, no controller. Each is an
//! error on a live cluster (nothing can be provisioned without it), and on an empty cluster's dump
//! (none of the three, no NodeClaim, Machine, Node, MachineDeployment or RBAC object): a dump of one part of a setup is judged on
//! that part.

use super::controller::is_controller_pod;
use super::{Area, Cause, Finding, Severity};
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::MEMBER_LABEL;

/// Adds an error per missing piece; `live` when the clusters themselves were listed.
pub(crate) fn check(snapshot: &Snapshot, live: bool, out: &mut Vec<Finding>) {
    let no_pool = snapshot.implicit_nodepool || snapshot.nodepools.is_empty();
    let no_member = snapshot.machine_deployments.iter().all(|md| !md.member);
    let no_controller = !snapshot.pods.iter().any(|p| is_controller_pod(p));
    // A dump is empty when it holds none of the setup and nothing of a node's life either: a
    // dump of one NodeClaim's chain is judged on that chain.
    let empty = no_pool
        && no_member
        && no_controller
        && snapshot.nodeclaims.is_empty()
        && snapshot.machines.is_empty()
        && snapshot.nodes.is_empty()
        && snapshot.machine_deployments.is_empty()
        && !snapshot
            .objects
            .iter()
            .any(|o| o.group() == "rbac.authorization.k8s.io");
    if !live && !empty {
        return;
    }
    if no_pool {
        out.push(Finding::new(
            Area::Setup,
            Cause::NodePoolMissing,
            Severity::Error,
            "NodePool",
            "there is no NodePool: the controller provisions nothing",
            "kubectl karpenter-capi init generates one (apply its workload bundle)",
        ));
    }
    // With a NodePool, the per-pool check already names the pool that selects nothing.
    if no_member && no_pool {
        out.push(Finding::new(
            Area::Setup,
            Cause::NoMemberMachineDeployments,
            Severity::Error,
            "MachineDeployment",
            format!(
                "no MachineDeployment has {MEMBER_LABEL} on metadata.labels ({} MachineDeployment(s) in the input): there is no flavor to provision",
                snapshot.machine_deployments.len()
            ),
            "kubectl karpenter-capi init generates one per flavor (apply its management bundle)",
        ));
    }
    if no_controller {
        out.push(Finding::new(
            Area::Controller,
            Cause::ControllerMissing,
            Severity::Error,
            "Deployment",
            "no controller pod or Deployment: nothing acts on pending pods",
            "kubectl karpenter-capi init generates the controller Deployment (apply its workload bundle)",
        ));
    }
}
