//! Kubeconfig resolution in one place: which client talks to the workload cluster and which to
//! the management cluster (explicit file, named context, else inferred: $KUBECONFIG,
//! ~/.kube/config, in-cluster).

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cli::GlobalArgs;
use crate::error::{ClusterRole, Error, Result};

/// How to reach one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterTarget {
    /// Which cluster this is.
    pub role: ClusterRole,
    /// Explicit kubeconfig file.
    pub kubeconfig: Option<PathBuf>,
    /// Explicit context.
    pub context: Option<String>,
}

impl ClusterTarget {
    /// The workload cluster per `--kubeconfig` / `--context`.
    pub fn workload(global: &GlobalArgs) -> ClusterTarget {
        ClusterTarget {
            role: ClusterRole::Workload,
            kubeconfig: global.kubeconfig.clone(),
            context: global.context.clone(),
        }
    }

    /// The management cluster per `--management-kubeconfig` / `--management-context`; without
    /// either, the workload cluster's settings (a self-hosted cluster).
    pub fn management(global: &GlobalArgs) -> ClusterTarget {
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

/// Builds a client for a cluster. Does not contact the cluster.
pub async fn connect(target: &ClusterTarget) -> Result<kube::Client> {
    install_crypto_provider();
    let config = config(target).await?;
    kube::Client::try_from(config).map_err(|e| load_error(target, e.to_string()))
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

/// Makes ring rustls' process-wide provider. Without this, a build where rustls also has
/// aws-lc-rs enabled (every test build: kube-fake-client pulls it in) panics on the first client.
fn install_crypto_provider() {
    // An error only means a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
