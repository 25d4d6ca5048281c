//! Karpenter's Events for what this controller does, as writes: the same reasons, message shapes
//! and objects as core, so `kubectl get events` and alerts built on them read as under Karpenter.
//! Reasons are core's `pkg/events/reason.go`; each builder names the core file it mirrors. The
//! shell records them (deduplicated like core's recorder, see `kube::apply`).

use super::write::{CREATED_NAME, Write};
use crate::vocab::kinds;

/// Core's `DisruptionTerminating`, on the Node and its NodeClaim a disruption starts on.
pub(crate) const DISRUPTION_TERMINATING: &str = "DisruptionTerminating";
/// Core's `DisruptionBlocked`, on a Node and NodeClaim disruption may not touch.
pub(crate) const DISRUPTION_BLOCKED: &str = "DisruptionBlocked";
/// Core's `DisruptionLaunching`, on a replacement NodeClaim.
pub(crate) const DISRUPTION_LAUNCHING: &str = "DisruptionLaunching";
/// Core's `Nominated`, on a pod a new NodeClaim is for.
pub(crate) const NOMINATED: &str = "Nominated";
/// Core's `Evicted`, on a pod evicted from a node being disrupted.
pub(crate) const EVICTED: &str = "Evicted";
/// Core's `FailedDraining`, a Warning on a Node whose drain a PodDisruptionBudget refused.
pub(crate) const FAILED_DRAINING: &str = "FailedDraining";
/// Core's `UnregisteredTaintMissing`, a Warning on a NodeClaim whose Node joined without the
/// `karpenter.sh/unregistered` taint.
pub const UNREGISTERED_TAINT_MISSING: &str = "UnregisteredTaintMissing";

fn normal(
    resource: kinds::ResourceType,
    namespace: &str,
    name: &str,
    reason: &str,
    message: String,
) -> Write {
    Write::Event {
        resource,
        namespace: namespace.to_string(),
        name: name.to_string(),
        event_type: "Normal".to_string(),
        reason: reason.to_string(),
        message,
    }
}

/// The first letter upper-cased, as core's messages print a reason (`cases.Title` on a one-word
/// CamelCase reason) and a sentence (`pretty.Sentence`).
pub fn sentence(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `DisruptionTerminating` on the Node and on its NodeClaim (core `disruption/events/events.go`
/// `Terminating`).
pub(crate) fn disruption_terminating(node: &str, claim: Option<&str>, reason: &str) -> Vec<Write> {
    let reason = sentence(reason);
    let mut out = vec![normal(
        kinds::NODE,
        "",
        node,
        DISRUPTION_TERMINATING,
        format!("Disrupting Node: {reason}"),
    )];
    out.extend(claim.map(|c| {
        normal(
            kinds::NODE_CLAIM,
            "",
            c,
            DISRUPTION_TERMINATING,
            format!("Disrupting NodeClaim: {reason}"),
        )
    }));
    out
}

/// `DisruptionBlocked` on the Node and on its NodeClaim, with why as core words it (core
/// `disruption/events/events.go` `Blocked`; the message is the validation error as a sentence).
pub(crate) fn disruption_blocked(node: &str, claim: &str, why: &str) -> Vec<Write> {
    let message = sentence(why);
    vec![
        normal(kinds::NODE, "", node, DISRUPTION_BLOCKED, message.clone()),
        normal(kinds::NODE_CLAIM, "", claim, DISRUPTION_BLOCKED, message),
    ]
}

/// `Nominated` on each pod (`namespace/name`) a new NodeClaim is for, naming the claim (core
/// `provisioning/scheduling/events.go` `NominatePodEvent`).
pub(crate) fn nominated(pods: &[String]) -> Vec<Write> {
    pods.iter()
        .map(|p| {
            let (namespace, name) = p.split_once('/').unwrap_or(("", p.as_str()));
            Write::EventForCreated {
                on: Some((kinds::POD, namespace.to_string(), name.to_string())),
                event_type: "Normal".to_string(),
                reason: NOMINATED.to_string(),
                message: format!("Pod should schedule on: nodeclaim/{CREATED_NAME}"),
                rate_limited: true,
            }
        })
        .collect()
}

/// `DisruptionLaunching` on a replacement NodeClaim (core `disruption/events/events.go`
/// `Launching`).
pub(crate) fn disruption_launching(reason: &str) -> Write {
    Write::EventForCreated {
        on: None,
        event_type: "Normal".to_string(),
        reason: DISRUPTION_LAUNCHING.to_string(),
        message: format!("Launching NodeClaim: {}", sentence(reason)),
        rate_limited: false,
    }
}

/// `FailedDraining`, a Warning on the Node being drained, when the eviction of a pod
/// (`namespace/name`) was refused by a PodDisruptionBudget (429) or because two budgets cover it
/// (`several`; the API server's 500), with core's words (`terminator/events/events.go`
/// NodeFailedToDrain, from `terminator/eviction.go` Queue.Reconcile).
pub fn failed_draining(node: &str, pod: &str, several: bool) -> Write {
    let why = if several {
        "eviction does not support multiple PDBs"
    } else {
        "evicting pod violates a PDB"
    };
    Write::Event {
        resource: kinds::NODE,
        namespace: String::new(),
        name: node.to_string(),
        event_type: "Warning".to_string(),
        reason: FAILED_DRAINING.to_string(),
        message: format!("Failed to drain node, {why} (Pod={pod})"),
    }
}

/// `UnregisteredTaintMissing`, a Warning on the claim registering `node` when that Node joined
/// without the `karpenter.sh/unregistered:NoExecute` taint (core `nodeclaim/lifecycle`
/// registration.go, UnregisteredTaintMissingEvent): registration goes on, but pods could land on
/// the node before its labels and taints were synced.
pub fn unregistered_taint_missing(claim: &str, node: &str) -> Write {
    Write::Event {
        resource: kinds::NODE_CLAIM,
        namespace: String::new(),
        name: claim.to_string(),
        event_type: "Warning".to_string(),
        reason: UNREGISTERED_TAINT_MISSING.to_string(),
        message: format!(
            "Node {node} joined without the {} taint: pods may have been scheduled to it before registration synced its labels and taints",
            crate::vocab::keys::UNREGISTERED_TAINT
        ),
    }
}

/// `Evicted` on a pod (`namespace/name`) evicted for a disruption reason (core
/// `termination/terminator/events/events.go` `EvictPod`; the reason is the claim's
/// `DisruptionReason`).
pub fn evicted(pod: &str, reason: &str) -> Write {
    let (namespace, name) = pod.split_once('/').unwrap_or(("", pod));
    normal(
        kinds::POD,
        namespace,
        name,
        EVICTED,
        format!("Evicted pod: {reason}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(w: &Write) -> (String, String, String, String) {
        match w {
            Write::Event {
                resource,
                name,
                reason,
                message,
                ..
            } => (
                resource.kind.to_string(),
                name.clone(),
                reason.clone(),
                message.clone(),
            ),
            Write::EventForCreated {
                on,
                reason,
                message,
                ..
            } => (
                on.as_ref()
                    .map_or("created".to_string(), |o| o.0.kind.to_string()),
                on.as_ref()
                    .map_or(String::new(), |o| format!("{}/{}", o.1, o.2)),
                reason.clone(),
                message.clone(),
            ),
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn messages_read_as_core_writes_them() {
        let t: Vec<_> = disruption_terminating("n1", Some("default-abc"), "Underutilized")
            .iter()
            .map(text)
            .collect();
        assert_eq!(
            t,
            vec![
                (
                    "Node".into(),
                    "n1".into(),
                    "DisruptionTerminating".into(),
                    "Disrupting Node: Underutilized".into()
                ),
                (
                    "NodeClaim".into(),
                    "default-abc".into(),
                    "DisruptionTerminating".into(),
                    "Disrupting NodeClaim: Underutilized".into()
                ),
            ]
        );
        let b: Vec<_> = disruption_blocked(
            "n1",
            "c1",
            "disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation",
        )
        .iter()
        .map(text)
        .collect();
        assert_eq!(
            b[0].3,
            "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation"
        );
        assert_eq!(
            (b[1].0.as_str(), b[1].2.as_str()),
            ("NodeClaim", "DisruptionBlocked")
        );
        assert_eq!(
            text(&nominated(&["default/web-0".to_string()])[0]),
            (
                "Pod".into(),
                "default/web-0".into(),
                "Nominated".into(),
                "Pod should schedule on: nodeclaim/{created}".into()
            )
        );
        assert_eq!(
            text(&disruption_launching("Drifted")).3,
            "Launching NodeClaim: Drifted"
        );
        assert_eq!(text(&evicted("ns/p", "Empty")).3, "Evicted pod: Empty");
        assert_eq!(sentence(""), "");
    }
}
