//! Listing the workload and management clusters into a [`Snapshot`] (the same loader the
//! offline commands use). Placeholder until the shell lands: reports that live mode is missing.

use crate::error::{Error, Result};
use crate::model::snapshot::Snapshot;

/// Lists everything the core needs from both clusters. `namespace` restricts the Cluster API
/// objects to the cluster's namespace on the management cluster.
pub async fn live_snapshot(
    workload: &kube::Client,
    management: &kube::Client,
    namespace: Option<&str>,
) -> Result<Snapshot> {
    let _ = (workload, management, namespace);
    Err(Error::NotImplemented("reading a live cluster"))
}

/// Runs a future on a fresh current-thread runtime (the offline commands are synchronous).
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Io)?;
    Ok(rt.block_on(future))
}
