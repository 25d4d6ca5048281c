//! The autoscaler controller's own pods (ours or the upstream Karpenter provider): can its image
//! be pulled, does it stay up. A controller pod is one with a container image or an
//! `app.kubernetes.io/name` label containing `karpenter`.

use super::{Area, Cause, Finding, Severity, subject};
use crate::model::snapshot::{ContainerRecord, PodRecord, Snapshot};

const AREA: Area = Area::Controller;
/// Waiting reasons that mean the image cannot be pulled.
const PULL_FAILURES: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "RegistryUnavailable",
];
/// Waiting reasons that mean the container cannot start or keeps dying.
const START_FAILURES: &[&str] = &[
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// Whether a pod runs the autoscaler controller.
pub fn is_controller_pod(pod: &PodRecord) -> bool {
    let named = |s: &str| s.to_ascii_lowercase().contains("karpenter");
    pod.demand
        .labels
        .get("app.kubernetes.io/name")
        .is_some_and(|n| named(n))
        || pod.containers.iter().any(|c| named(image_name(&c.image)))
}

/// The repository part of an image reference (without registry host, tag or digest).
fn image_name(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last)
}

/// Runs the controller checks.
pub(crate) fn check(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    for pod in snapshot.pods.iter().filter(|p| is_controller_pod(p)) {
        // A pod expanded from a workload template has no status: nothing to judge.
        if pod.phase.is_none() {
            continue;
        }
        out.push(judge(pod));
    }
}

fn judge(pod: &PodRecord) -> Finding {
    let (ns, name) = (&pod.demand.namespace, &pod.demand.name);
    let subj = subject("Pod", ns, name);
    let workload = pod
        .owner
        .as_deref()
        .map(|o| o.split('/').next_back().unwrap_or(o))
        .unwrap_or(name);
    let waiting = |c: &ContainerRecord, set: &[&str]| {
        c.waiting
            .as_ref()
            .filter(|(r, _)| set.contains(&r.as_str()))
            .cloned()
    };
    if let Some((c, (reason, message))) = pod
        .containers
        .iter()
        .find_map(|c| waiting(c, PULL_FAILURES).map(|w| (c, w)))
    {
        return Finding::new(
            AREA,
            Cause::ControllerImagePullFailed,
            Severity::Error,
            subj,
            format!(
                "container {} cannot pull {}: {reason}{}",
                c.name,
                c.image,
                if message.is_empty() {
                    String::new()
                } else {
                    format!(" ({message})")
                }
            ),
            format!(
                "the upstream provider publishes no pullable image: build and push one, then `kubectl set image -n {ns} deployment/{} {}=<your image>` (add an imagePullSecret if the registry is private)",
                deployment_of(workload),
                c.name
            ),
        );
    }
    if let Some((c, (reason, message))) = pod
        .containers
        .iter()
        .find_map(|c| waiting(c, START_FAILURES).map(|w| (c, w)))
    {
        let last = c
            .last_terminated
            .as_ref()
            .map(|(r, code)| format!(", last exit {code} ({r})"))
            .unwrap_or_default();
        return Finding::new(
            AREA,
            Cause::ControllerNotRunning,
            Severity::Error,
            subj,
            format!(
                "container {} is {reason} after {} restart(s){last}{}",
                c.name,
                c.restart_count,
                if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                }
            ),
            format!(
                "`kubectl logs -n {ns} {name} -c {} --previous` shows why it exits",
                c.name
            ),
        );
    }
    match pod.phase.as_deref() {
        Some("Running") if pod.containers.iter().all(|c| c.ready) => {
            Finding::new(AREA, Cause::ControllerRunning, Severity::Ok, subj, format!("running, {} container(s) ready", pod.containers.len()), "")
        }
        Some("Running") => Finding::new(
            AREA,
            Cause::ControllerNotRunning,
            Severity::Warning,
            subj,
            format!(
                "running but not ready: {}",
                pod.containers.iter().filter(|c| !c.ready).map(|c| format!("{} ({} restart(s))", c.name, c.restart_count)).collect::<Vec<_>>().join(", ")
            ),
            format!("`kubectl describe pod -n {ns} {name}`: readiness probe and logs"),
        ),
        Some("Pending") if pod.node_name.is_none() => Finding::new(
            AREA,
            Cause::ControllerNotRunning,
            if pod.marked_unschedulable { Severity::Error } else { Severity::Warning },
            subj,
            if pod.marked_unschedulable {
                "Pending: the scheduler finds no node for it (the autoscaler cannot provision its own node)".to_string()
            } else {
                "Pending: not scheduled yet".to_string()
            },
            "run the controller on nodes it does not manage (a toleration or nodeSelector for the control plane or a static pool)".to_string(),
        ),
        other => Finding::new(
            AREA,
            Cause::ControllerNotRunning,
            Severity::Error,
            subj,
            format!("phase {}", other.unwrap_or("unknown")),
            format!("`kubectl describe pod -n {ns} {name}`"),
        ),
    }
}

/// A ReplicaSet's name without its pod-template-hash suffix.
fn deployment_of(owner: &str) -> &str {
    match owner.rsplit_once('-') {
        Some((base, hash))
            if hash.len() >= 5 && hash.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            base
        }
        _ => owner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_and_owners() {
        assert_eq!(
            image_name("ghcr.io/qjoly/karpenter-clusterapi-controller:poc"),
            "karpenter-clusterapi-controller"
        );
        assert_eq!(
            image_name("gcr.io/k8s-staging/karpenter@sha256:abc"),
            "karpenter"
        );
        assert_eq!(image_name("quay.io/cilium/cilium:v1.18.0"), "cilium");
        assert_eq!(deployment_of("karpenter-5d8f7c9b8d"), "karpenter");
        assert_eq!(deployment_of("karpenter"), "karpenter");
    }
}
