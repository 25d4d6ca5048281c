//! Kubeconfig resolution in one place: which client talks to the workload cluster and which to
//! the management cluster (explicit file, named context, else inferred: $KUBECONFIG,
//! ~/.kube/config, in-cluster).

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::error::{ClusterRole, Error, Result};

/// The connection settings the command line gives (kubectl's flags), as plain values: the shell
/// never sees the parser's types.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// `--management-kubeconfig`.
    pub management_kubeconfig: Option<PathBuf>,
    /// `--management-context`.
    pub management_context: Option<String>,
    /// `--request-timeout`; zero keeps the client's defaults.
    pub request_timeout: Duration,
}

/// How to reach one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterTarget {
    /// Which cluster this is.
    pub role: ClusterRole,
    /// Explicit kubeconfig file.
    pub kubeconfig: Option<PathBuf>,
    /// Explicit context.
    pub context: Option<String>,
    /// `--request-timeout`: the longest one request may take; `None` keeps the client's defaults.
    pub request_timeout: Option<Duration>,
}

/// Where a cluster's client talks to, for messages: `10.0.0.1:6443`, the context, the timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port` of the API server.
    pub server: String,
    /// The kubeconfig context used, when known.
    pub context: Option<String>,
    /// `--request-timeout`, when set.
    pub request_timeout: Option<Duration>,
}

/// The endpoint of each cluster this process connected to. Errors are built far from
/// [`connect`] (deep in listing and applying), and a kube error does not carry its server; this
/// is the one place that knows it, written once per cluster at connect time.
static ENDPOINTS: Mutex<Vec<(ClusterRole, Endpoint)>> = Mutex::new(Vec::new());

/// The endpoint `connect` recorded for `cluster`, if it connected.
pub fn endpoint(cluster: ClusterRole) -> Option<Endpoint> {
    let endpoints = ENDPOINTS.lock().unwrap_or_else(|e| e.into_inner());
    endpoints
        .iter()
        .find(|(c, _)| *c == cluster)
        .map(|(_, e)| e.clone())
}

fn record_endpoint(cluster: ClusterRole, endpoint: Endpoint) {
    let mut endpoints = ENDPOINTS.lock().unwrap_or_else(|e| e.into_inner());
    endpoints.retain(|(c, _)| *c != cluster);
    endpoints.push((cluster, endpoint));
}

impl ClusterTarget {
    /// The workload cluster per `--kubeconfig` / `--context`.
    pub fn workload(global: &Connection) -> ClusterTarget {
        ClusterTarget {
            role: ClusterRole::Workload,
            kubeconfig: global.kubeconfig.clone(),
            context: global.context.clone(),
            request_timeout: timeout(global),
        }
    }

    /// The management cluster per `--management-kubeconfig` / `--management-context`; without
    /// either, the workload cluster's settings (a self-hosted cluster).
    pub fn management(global: &Connection) -> ClusterTarget {
        if global.management_kubeconfig.is_none() && global.management_context.is_none() {
            return ClusterTarget {
                role: ClusterRole::Management,
                ..ClusterTarget::workload(global)
            };
        }
        ClusterTarget {
            role: ClusterRole::Management,
            kubeconfig: global
                .management_kubeconfig
                .clone()
                .or_else(|| global.kubeconfig.clone()),
            context: global.management_context.clone(),
            request_timeout: timeout(global),
        }
    }

    /// Whether both targets resolve to the same settings (self-hosted).
    pub fn same_as(&self, other: &ClusterTarget) -> bool {
        self.kubeconfig == other.kubeconfig && self.context == other.context
    }

    /// What was tried, for error messages.
    pub fn describe(&self) -> String {
        let file = self
            .kubeconfig
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "$KUBECONFIG, ~/.kube/config or in-cluster config".to_string());
        match &self.context {
            Some(c) => format!("{file}, context {c:?}"),
            None => file,
        }
    }
}

fn timeout(global: &Connection) -> Option<Duration> {
    (global.request_timeout.as_secs() > 0)
        .then(|| Duration::from_secs(global.request_timeout.as_secs()))
}

/// Builds a client for a cluster. Does not contact the cluster.
pub async fn connect(target: &ClusterTarget) -> Result<kube::Client> {
    install_crypto_provider();
    let mut config = config(target).await?;
    if let Some(t) = target.request_timeout {
        // kubectl's --request-timeout bounds the whole request; connecting, sending and waiting
        // for the answer each get that long here.
        config.connect_timeout = Some(t);
        config.read_timeout = Some(t);
        config.write_timeout = Some(t);
    }
    let url = &config.cluster_url;
    let server = match (url.host(), url.port_u16()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) if url.scheme_str() == Some("http") => format!("{h}:80"),
        (Some(h), None) => format!("{h}:443"),
        _ => url.to_string(),
    };
    record_endpoint(
        target.role,
        Endpoint {
            server,
            context: match &target.context {
                Some(c) => Some(c.clone()),
                None => current_context(target),
            },
            request_timeout: target.request_timeout,
        },
    );
    let log = super::trace::RequestLog::new(&config.cluster_url);
    let client = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| load_error(target, e.to_string()))?;
    Ok(client.with_layer(&log).build())
}

/// The kubeconfig's current context, for messages; `None` in-cluster or when unreadable.
fn current_context(target: &ClusterTarget) -> Option<String> {
    let file = match &target.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).ok()?,
        None => Kubeconfig::read().ok()?,
    };
    file.current_context.filter(|c| !c.is_empty())
}

/// Resolves a cluster's kube config (explicit file, named context, else inferred), e.g. for its
/// server URL. Does not contact the cluster.
pub async fn config(target: &ClusterTarget) -> Result<kube::Config> {
    let fail = |message: String| load_error(target, message);
    let options = KubeConfigOptions {
        context: target.context.clone(),
        ..Default::default()
    };
    let config = match (&target.kubeconfig, &target.context) {
        (Some(path), _) => {
            let file = Kubeconfig::read_from(path).map_err(|e| fail(e.to_string()))?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(|e| fail(e.to_string()))?
        }
        (None, Some(_)) => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| fail(e.to_string()))?,
        (None, None) => kube::Config::infer()
            .await
            .map_err(|e| fail(e.to_string()))?,
    };
    Ok(config)
}

fn load_error(target: &ClusterTarget, message: String) -> Error {
    Error::Cluster {
        cluster: target.role,
        action: format!("load kubeconfig ({})", target.describe()),
        message,
        hint: Some(match target.role {
            ClusterRole::Workload => {
                "pass --kubeconfig/--context for the workload cluster".to_string()
            }
            ClusterRole::Management => {
                "pass --management-kubeconfig/--management-context for the management cluster"
                    .to_string()
            }
        }),
    }
}

/// Makes ring rustls' process-wide provider. Without this, a build where some other crate also
/// enables rustls's aws-lc-rs provider would panic on the first client.
fn install_crypto_provider() {
    // An error only means a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use serde_json::Value;

    use crate::bundle::kubeconfig;
    use crate::vocab::keys::TOKEN_EXPIRES_ANNOTATION;

    // The kubeconfigs `init` renders (in the core) are read back with kube's own parser, the one
    // the controller connects with.
    #[test]
    fn renders_a_token_kubeconfig_kube_can_read() {
        let text = kubeconfig::render(&kubeconfig::TokenKubeconfig {
            server: "https://mgmt.example:6443".to_string(),
            ca_base64: Some("Q0E=".to_string()),
            token: "tok".to_string(),
            token_file: None,
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
        assert_eq!(kubeconfig::kubeconfig_token(&text).as_deref(), Some("tok"));
        let expires: Timestamp = "2026-12-30T10:00:00Z".parse().unwrap();
        let k = kubeconfig::TokenKubeconfig {
            server: "https://mgmt.example:6443".to_string(),
            ca_base64: None,
            token: "tok".to_string(),
            token_file: None,
            namespace: "capi-ovh".to_string(),
            user: "capi-ovh-karpenter-capi".to_string(),
        };
        let c = kubeconfig::ControllerCredential::minted(&k, expires).unwrap();
        let secret = kubeconfig::secret("karpenter-capi", &c).unwrap();
        let v: Value = serde_saphyr::from_str(&secret).unwrap();
        assert_eq!(
            v["metadata"]["name"],
            "karpenter-capi-management-kubeconfig"
        );
        assert_eq!(
            v["metadata"]["annotations"][TOKEN_EXPIRES_ANNOTATION],
            "2026-12-30T10:00:00Z"
        );
        assert_eq!(v["stringData"]["token"], "tok");
        // In the cluster the kubeconfig reads the token from the mounted file beside it, so a
        // rotated Secret reaches the running controller (kube rereads token files every minute).
        let in_cluster = v["stringData"]["kubeconfig"].as_str().unwrap();
        let parsed = kube::config::Kubeconfig::from_yaml(in_cluster).unwrap();
        let user = parsed.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(
            user.token_file.as_deref(),
            Some("/etc/karpenter-capi/management/token")
        );
        assert!(user.token.is_none());
        assert_eq!(kubeconfig::kubeconfig_token(in_cluster), None);
    }
}
