//! Objects whose shape differs from what Karpenter and its Cluster API provider write, left by an
//! older version of this controller or by hand: NodeClaims missing their offering's labels, hash
//! stamps of another version, membership labels with a value, flavors without an instance-type
//! label; and Nodes smaller than the flavor their claim was made for.

use super::{Area, Cause, Finding, Severity, subject};
use crate::controller::drift::HASH_VERSION;
use crate::model::flavor::member_label_value;
use crate::model::labels::is_restricted_label;
use crate::model::snapshot::Snapshot;
use crate::vocab::keys;
use crate::vocab::keys::HASH_VERSION_ANNOTATION;
use crate::vocab::keys::MEMBER_LABEL;

/// Runs the shape checks. NodeClaim findings go to the NodeClaims area, the others to Setup.
pub(crate) fn check(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    for md in &snapshot.machine_deployments {
        let (ns, name) = (md.object.namespace(), md.object.name());
        if let Some(value) = member_label_value(&md.object) {
            out.push(Finding::new(
                Area::Setup,
                Cause::MemberLabelWithValue,
                Severity::Error,
                subject("MachineDeployment", ns, name),
                format!(
                    "{MEMBER_LABEL} has the value {value:?}: upstream lists members by the label with the empty value, so this MachineDeployment is no member (here either)"
                ),
                format!(
                    "kubectl label machinedeployment -n {ns} {name} --overwrite {MEMBER_LABEL}="
                ),
            ));
        }
        if md.member
            && let Ok(f) = &md.flavor
            && !f.labels.contains_key(keys::INSTANCE_TYPE)
        {
            out.push(Finding::new(
                Area::Setup,
                Cause::InstanceTypeLabelMissing,
                Severity::Warning,
                subject("MachineDeployment", ns, name),
                format!(
                    "no {} label in capacity.cluster-autoscaler.kubernetes.io/labels: we name the flavor {:?} after the MachineDeployment (upstream leaves the instance type empty), and the Node's own label may differ",
                    keys::INSTANCE_TYPE, f.instance_type
                ),
                format!(
                    "kubectl annotate machinedeployment -n {ns} {name} --overwrite capacity.cluster-autoscaler.kubernetes.io/labels={}=<the cloud's instance type>{}",
                    keys::INSTANCE_TYPE,
                    md.object
                        .meta
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(crate::vocab::capacity::LABELS))
                        .map(|l| format!(",{l}"))
                        .unwrap_or_default()
                ),
            ));
        }
    }
    let index = crate::model::snapshot::MachineIndex::new(snapshot);
    for claim in snapshot.nodeclaims.iter().filter(|c| !c.deleting) {
        // The controller's consistency check (core `nodeclaim/consistency`), read the same way.
        if let Some(issues) = crate::controller::consistency::issues(snapshot, &index, claim)
            && !issues.is_empty()
        {
            out.push(Finding::new(
                Area::NodeClaims,
                Cause::InconsistentNodeShape,
                Severity::Warning,
                subject("NodeClaim", "", &claim.name),
                format!(
                    "its Node is not what its MachineDeployment's capacity annotations promise: {}",
                    issues.join("; ")
                ),
                "make the MachineDeployment's capacity annotations say what its nodes really have (or find why this node came up smaller); the scheduler plans with the annotations".to_string(),
            ));
        }
        if let Some(version) = claim
            .annotations
            .get(HASH_VERSION_ANNOTATION)
            .filter(|v| *v != HASH_VERSION)
        {
            out.push(Finding::new(
                Area::NodeClaims,
                Cause::ForeignHashVersion,
                Severity::Warning,
                subject("NodeClaim", "", &claim.name),
                format!(
                    "{HASH_VERSION_ANNOTATION} is {version:?}, not ours ({HASH_VERSION}): its karpenter.sh/nodepool-hash cannot be compared with ours, so it is never judged drifted by it"
                ),
                format!(
                    "nothing to do while `run` runs: it re-stamps the claim with our hash and {HASH_VERSION}; if Karpenter itself also manages NodePool {}, run only one of the two",
                    claim.node_pool.as_deref().unwrap_or("?")
                ),
            ));
        }
        let Some(pool) = claim
            .node_pool
            .as_ref()
            .and_then(|p| snapshot.nodepools.iter().find(|np| &np.name == p))
        else {
            continue;
        };
        let Some(flavor) = snapshot
            .claim_machine_deployment(claim)
            .and_then(|md| snapshot.machine_deployments.iter().find(|m| m.key() == md))
            .and_then(|m| m.flavor.as_ref().ok())
        else {
            continue;
        };
        let mut expected = flavor.labels.clone();
        expected.extend(pool.node_labels());
        // What the loop needs is a node without the label; a Node that has it (Cluster API or
        // the cloud set it) is not at risk.
        let node = snapshot.nodes.iter().find(|n| {
            claim.node_name.as_ref() == Some(&n.name)
                || (claim.provider_id.is_some() && n.provider_id == claim.provider_id)
        });
        let missing: Vec<String> = expected
            .iter()
            .filter(|(k, _)| !is_restricted_label(k))
            .filter(|(k, v)| claim.labels.get(*k) != Some(*v))
            .filter(|(k, v)| node.is_none_or(|n| n.labels.get(*k) != Some(*v)))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !missing.is_empty() {
            out.push(Finding::new(
                Area::NodeClaims,
                Cause::NodeClaimMissingOfferingLabels,
                Severity::Warning,
                subject("NodeClaim", "", &claim.name),
                format!(
                    "lacks labels of its offering ({}): a pod that needs one gets a node without it, the node is Empty and removed, and a new claim is made, forever",
                    missing.join(", ")
                ),
                format!(
                    "kubectl label nodeclaim {} --overwrite {} (and the same on its Node); claims created by this version carry them",
                    claim.name,
                    missing.join(" ")
                ),
            ));
        }
    }
}
