//! Turning kube errors into messages that name the cluster, the resource, the verb, and what to
//! do: unreachable clusters, missing CRDs, forbidden RBAC.
//!
//! # Errors
//! Every function here returns an [`Error::Cluster`]; `main` prints it with its hint and exits 2.

use crate::error::{ClusterRole, Error};

/// Maps a kube error for `verb` on `resource` (e.g. `list`, `machinedeployments.cluster.x-k8s.io`)
/// in `namespace` (empty: cluster-wide) to an [`Error::Cluster`] with a hint.
pub fn cluster_error(
    cluster: ClusterRole,
    verb: &str,
    resource: &str,
    namespace: &str,
    err: kube::Error,
) -> Error {
    let action = if namespace.is_empty() {
        format!("{verb} {resource}")
    } else {
        format!("{verb} {resource} in namespace {namespace}")
    };
    let (message, hint) = match &err {
        kube::Error::Api(status) => {
            let hint = match status.code {
                401 => Some(
                    "the credentials were rejected: refresh the kubeconfig's token or certificate"
                        .to_string(),
                ),
                403 => Some(format!(
                    "the identity lacks `{verb}` on `{resource}`{}: grant it (the RBAC `kubectl karpenter-capi init` generates has it)",
                    if namespace.is_empty() {
                        String::new()
                    } else {
                        format!(" in {namespace}")
                    }
                )),
                404 if (verb == "list" || verb == "watch") && is_builtin(resource) => {
                    Some(format!(
                        "the built-in API {resource} is not served: is the {cluster} cluster's server address a Kubernetes API server?"
                    ))
                }
                404 if verb == "list" || verb == "watch" => Some(format!(
                    "the {resource} API is not served: is its CRD installed on the {cluster} cluster?"
                )),
                409 => Some("the object changed meanwhile; the next pass retries".to_string()),
                _ => None,
            };
            (format!("{} ({})", status.message, status.code), hint)
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => (
            connection_message(cluster, &with_causes(&err)),
            Some(format!(
                "the {cluster} cluster is unreachable: check the server address, network and --{}context",
                match cluster {
                    ClusterRole::Workload => "",
                    ClusterRole::Management => "management-",
                }
            )),
        ),
        other => (other.to_string(), None),
    };
    Error::Cluster {
        cluster,
        action,
        message,
        hint,
    }
}

/// A failed connection as kubectl says it, naming the server and the context:
/// `the connection to the server 10.0.0.1:6443 (context admin@capi) was refused`, or that it did
/// not answer within --request-timeout; the underlying causes follow.
fn connection_message(cluster: ClusterRole, causes: &str) -> String {
    let Some(endpoint) = super::client::endpoint(cluster) else {
        return causes.to_string();
    };
    let lower = causes.to_ascii_lowercase();
    let context = endpoint
        .context
        .as_deref()
        .map(|c| format!(" (context {c})"))
        .unwrap_or_default();
    let server = &endpoint.server;
    if lower.contains("connection refused") {
        format!("the connection to the server {server}{context} was refused: {causes}")
    } else if lower.contains("timed out") || lower.contains("elapsed") || lower.contains("timeout")
    {
        match endpoint.request_timeout {
            Some(t) => format!(
                "the server {server}{context} did not answer within {}s (--request-timeout): {causes}",
                t.as_secs()
            ),
            None => format!("the server {server}{context} did not answer in time: {causes}"),
        }
    } else {
        format!("cannot reach the server {server}{context}: {causes}")
    }
}

/// An error and its chain of causes (`client error (Connect): tcp connect error: Connection
/// refused`): the innermost cause is usually the one that says what to fix.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// The HTTP status of an API error, if it is one.
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Like [`cluster_error`] for a write to one object: the action names the object
/// (`patch machines.cluster.x-k8s.io capi/m-1`), the hint names the resource.
pub fn object_error(
    cluster: ClusterRole,
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    err: kube::Error,
) -> Error {
    match cluster_error(cluster, verb, resource, namespace, err) {
        Error::Cluster {
            cluster,
            message,
            hint,
            ..
        } => {
            let key = if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}/{name}")
            };
            Error::Cluster {
                cluster,
                action: format!("{verb} {resource} {key}"),
                message,
                hint,
            }
        }
        other => other,
    }
}

/// Whether `resource` (`pods`, `daemonsets.apps`, `leases.coordination.k8s.io`) belongs to an API
/// group Kubernetes itself serves (the core group, a one-word group such as `apps` or `policy`, or
/// a `*.k8s.io` group) rather than to a CRD (`nodeclaims.karpenter.sh`,
/// `machines.cluster.x-k8s.io`).
pub fn is_builtin(resource: &str) -> bool {
    match resource.split_once('.') {
        None => true,
        Some((_, group)) => !group.contains('.') || group.ends_with(".k8s.io"),
    }
}

/// The CRD behind `resource` (`nodeclaims.karpenter.sh`) is not served by `cluster` in any of
/// the `versions` tried: says which CRD is missing and what installs it.
pub fn missing_crd(cluster: ClusterRole, resource: &str, versions: &[&str]) -> Error {
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    if is_builtin(resource) {
        // A core or built-in resource (pods, nodes, daemonsets.apps) has no CRD: a 404 means the
        // address is not an API server of a Kubernetes cluster (a proxy, another service, a wrong
        // path prefix), or one too old to serve that version.
        let (what, prefix) = if group.is_empty() {
            ("core", String::new())
        } else {
            ("built-in", format!("{group}/"))
        };
        return Error::Cluster {
            cluster,
            action: format!("list {resource}"),
            message: format!(
                "the server does not serve the {what} API {} (404)",
                versions
                    .iter()
                    .map(|v| format!("{prefix}{v}/{plural}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            hint: Some(format!(
                "check that the {cluster} cluster's kubeconfig points at its Kubernetes API server (server address and path)"
            )),
        };
    }
    let install = match group {
        "karpenter.sh" => format!(
            "install Karpenter's karpenter.sh/v1 CRDs (NodePool, NodeClaim) on the workload cluster: {}",
            crd_install_command()
        ),
        "karpenter.cluster.x-k8s.io" => format!(
            "install the ClusterAPINodeClass CRD (karpenter.cluster.x-k8s.io/v1alpha1) on the workload cluster: {}",
            crd_install_command()
        ),
        "cluster.x-k8s.io" | "bootstrap.cluster.x-k8s.io" => format!(
            "install Cluster API (`clusterctl init`) on the {cluster} cluster, or point \
             --management-kubeconfig/--management-context at the cluster that runs it"
        ),
        _ => format!("install the CRD of {resource} on the {cluster} cluster"),
    };
    Error::Cluster {
        cluster,
        action: format!("list {resource}"),
        message: format!(
            "the CRD {resource} is not installed (no API served for {})",
            versions
                .iter()
                .map(|v| format!("{group}/{v}"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
        hint: Some(install),
    }
}

/// How to install the CRDs of the workload cluster: the base `init --output-dir` writes.
pub fn crd_install_command() -> String {
    format!(
        "`{}` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)",
        crate::bundle::kustomize::apply_crds_command("DIR")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found() -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(
                "the server could not find the requested resource",
                "NotFound",
            )
            .with_code(404)
            .boxed(),
        )
    }

    fn hint_of(e: Error) -> (String, String) {
        match e {
            Error::Cluster { message, hint, .. } => (message, hint.unwrap_or_default()),
            other => panic!("not a cluster error: {other}"),
        }
    }

    #[test]
    fn builtin_groups_are_not_crds() {
        assert!(is_builtin("pods"));
        assert!(is_builtin("daemonsets.apps"));
        assert!(is_builtin("poddisruptionbudgets.policy"));
        assert!(is_builtin("storageclasses.storage.k8s.io"));
        assert!(is_builtin("leases.coordination.k8s.io"));
        assert!(!is_builtin("nodeclaims.karpenter.sh"));
        assert!(!is_builtin("machines.cluster.x-k8s.io"));
        assert!(!is_builtin(
            "clusterapinodeclasses.karpenter.cluster.x-k8s.io"
        ));
    }

    #[test]
    fn a_404_listing_a_core_resource_is_not_a_missing_crd() {
        let (message, hint) = hint_of(cluster_error(
            ClusterRole::Workload,
            "list",
            "pods",
            "",
            not_found(),
        ));
        assert_eq!(
            message,
            "the server could not find the requested resource (404)"
        );
        assert_eq!(
            hint,
            "the built-in API pods is not served: is the workload cluster's server address a Kubernetes API server?"
        );
        assert!(!hint.contains("CRD"), "{hint}");
        let (message, hint) = hint_of(missing_crd(ClusterRole::Workload, "pods", &["v1"]));
        assert_eq!(
            message,
            "the server does not serve the core API v1/pods (404)"
        );
        assert_eq!(
            hint,
            "check that the workload cluster's kubeconfig points at its Kubernetes API server (server address and path)"
        );
        // A built-in group other than core: not a CRD either.
        let (message, hint) = hint_of(missing_crd(
            ClusterRole::Workload,
            "poddisruptionbudgets.policy",
            &["v1"],
        ));
        assert_eq!(
            message,
            "the server does not serve the built-in API policy/v1/poddisruptionbudgets (404)"
        );
        assert!(!hint.contains("CRD"), "{hint}");
        let (_, hint) = hint_of(cluster_error(
            ClusterRole::Workload,
            "watch",
            "daemonsets.apps",
            "",
            not_found(),
        ));
        assert!(
            hint.starts_with("the built-in API daemonsets.apps is not served"),
            "{hint}"
        );
    }

    #[test]
    fn a_404_listing_a_crd_resource_names_the_missing_crd() {
        let (message, hint) = hint_of(cluster_error(
            ClusterRole::Workload,
            "list",
            "nodeclaims.karpenter.sh",
            "",
            not_found(),
        ));
        assert_eq!(
            message,
            "the server could not find the requested resource (404)"
        );
        assert_eq!(
            hint,
            "the nodeclaims.karpenter.sh API is not served: is its CRD installed on the workload cluster?"
        );
        let (message, hint) = hint_of(missing_crd(
            ClusterRole::Management,
            "machinedeployments.cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
        ));
        assert_eq!(
            message,
            "the CRD machinedeployments.cluster.x-k8s.io is not installed (no API served for cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1)"
        );
        assert_eq!(
            hint,
            "install Cluster API (`clusterctl init`) on the management cluster, or point --management-kubeconfig/--management-context at the cluster that runs it"
        );
        let (message, hint) = hint_of(missing_crd(
            ClusterRole::Workload,
            "nodepools.karpenter.sh",
            &["v1"],
        ));
        assert_eq!(
            message,
            "the CRD nodepools.karpenter.sh is not installed (no API served for karpenter.sh/v1)"
        );
        assert_eq!(
            hint,
            "install Karpenter's karpenter.sh/v1 CRDs (NodePool, NodeClaim) on the workload cluster: `kubectl apply --server-side -k DIR/crds` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)"
        );
        let (_, hint) = hint_of(missing_crd(
            ClusterRole::Workload,
            "clusterapinodeclasses.karpenter.cluster.x-k8s.io",
            &["v1alpha1"],
        ));
        assert_eq!(
            hint,
            "install the ClusterAPINodeClass CRD (karpenter.cluster.x-k8s.io/v1alpha1) on the workload cluster: `kubectl apply --server-side -k DIR/crds` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)"
        );
        // A 404 getting one object is that object missing: no CRD hint.
        let (_, hint) = hint_of(cluster_error(
            ClusterRole::Workload,
            "get",
            "nodeclaims.karpenter.sh",
            "",
            not_found(),
        ));
        assert_eq!(hint, "");
    }
}
