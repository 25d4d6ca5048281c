//! The kubeconfig `init kubeconfig` mints for the controller's management ServiceAccount, and
//! the workload Secret that carries it. Pure: token and CA in, YAML out.

use serde_json::json;

use super::render::names;
use crate::error::Error;

/// What a kubeconfig for a ServiceAccount token needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenKubeconfig {
    /// The API server URL, as the controller reaches it.
    pub server: String,
    /// The cluster CA bundle, base64 (as in the token Secret's `ca.crt`, re-encoded), if any.
    pub ca_base64: Option<String>,
    /// The bearer token (plain text).
    pub token: String,
    /// The namespace the context defaults to (the Cluster API namespace).
    pub namespace: String,
    /// The ServiceAccount's name (names the user and context).
    pub user: String,
}

/// Renders the kubeconfig YAML.
pub fn render(k: &TokenKubeconfig) -> Result<String, Error> {
    let mut cluster = json!({"server": k.server});
    if let Some(ca) = &k.ca_base64 {
        cluster["certificate-authority-data"] = json!(ca);
    }
    let value = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "management", "cluster": cluster}],
        "users": [{"name": k.user, "user": {"token": k.token}}],
        "contexts": [{"name": k.user, "context": {"cluster": "management", "user": k.user, "namespace": k.namespace}}],
        "current-context": k.user,
    });
    serde_saphyr::to_string(&value).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// The workload-cluster Secret holding a management kubeconfig, as YAML.
pub fn secret(controller_namespace: &str, kubeconfig: &str) -> Result<String, Error> {
    let value = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": names::MANAGEMENT_KUBECONFIG_SECRET,
            "namespace": controller_namespace,
            "labels": {"app.kubernetes.io/name": "karpenter-capi"},
        },
        "stringData": {names::MANAGEMENT_KUBECONFIG_KEY: kubeconfig},
    });
    serde_saphyr::to_string(&value).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_token_kubeconfig_kube_can_read() {
        let text = render(&TokenKubeconfig {
            server: "https://mgmt.example:6443".to_string(),
            ca_base64: Some("Q0E=".to_string()),
            token: "tok".to_string(),
            namespace: "capi-ovh".to_string(),
            user: "capi-ovh-karpenter-capi".to_string(),
        })
        .unwrap();
        let parsed = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(
            parsed.current_context.as_deref(),
            Some("capi-ovh-karpenter-capi")
        );
        let cluster = parsed.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://mgmt.example:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Q0E="));
        let ctx = parsed.contexts[0].context.as_ref().unwrap();
        assert_eq!(ctx.namespace.as_deref(), Some("capi-ovh"));
        let secret = secret("karpenter-capi", &text).unwrap();
        assert!(
            secret.contains("name: karpenter-capi-management-kubeconfig"),
            "{secret}"
        );
    }
}
