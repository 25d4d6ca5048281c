//! Turning kube errors into messages that name the cluster, the resource, the verb, and what to
//! do: unreachable clusters, missing CRDs, forbidden RBAC.

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
                404 if verb == "list" || verb == "watch" => Some(format!(
                    "the {resource} API is not served: is its CRD installed on the {cluster} cluster?"
                )),
                409 => Some("the object changed meanwhile; the next pass retries".to_string()),
                _ => None,
            };
            (format!("{} ({})", status.message, status.code), hint)
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => (
            err.to_string(),
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

/// The HTTP status of an API error, if it is one.
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
