//! The continuous controller as a process: both clusters connected, the metrics endpoint, leader
//! election on a Lease, the reconcile loop, and a clean stop on SIGTERM/SIGINT. Built from plain
//! settings; the command line only fills them in.

use std::sync::Arc;

use tokio::sync::watch;
use tracing::info;

use super::client::{ClusterTarget, connect};
use super::leader::{Gate, LeaseLock};
use super::list::Clients;
use super::metrics;
use super::reconciler::{Context, LeaseTiming, Window, lead, run_continuous, stopped};
use crate::controller::Config;
use crate::error::Result;

/// What the continuous controller runs with.
#[derive(Debug, Clone)]
pub struct DaemonSettings {
    /// The namespace of the Cluster API objects (`None`: every namespace).
    pub namespace: Option<String>,
    /// The Cluster API Cluster this controller serves, if named.
    pub cluster_name: Option<String>,
    /// The core's settings.
    pub config: Config,
    /// Plan and report, never write.
    pub dry_run: bool,
    /// Compete for a Lease before acting.
    pub leader_elect: bool,
    /// The namespace of that Lease.
    pub leader_election_namespace: String,
    /// Where `/metrics`, `/healthz` and `/readyz` are served.
    pub metrics_bind_address: String,
}

/// Connects to both clusters; a self-hosted cluster gets one client and one connection pool.
pub async fn connect_both(workload: &ClusterTarget, management: &ClusterTarget) -> Result<Clients> {
    let w = connect(workload).await?;
    let m = if management.same_as(workload) {
        w.clone()
    } else {
        connect(management).await?
    };
    Ok(Clients {
        workload: w,
        management: m,
    })
}

/// Connects to both clusters and runs the continuous controller until SIGTERM/SIGINT, on a
/// runtime of its own: two worker threads keep the metrics endpoint answering during a plan.
pub fn run_blocking(
    workload: &ClusterTarget,
    management: &ClusterTarget,
    settings: DaemonSettings,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(crate::error::Error::Io)?;
    rt.block_on(async {
        let clients = connect_both(workload, management).await?;
        run(clients, settings).await
    })
}

/// Runs the continuous controller until SIGTERM/SIGINT.
pub async fn run(clients: Clients, settings: DaemonSettings) -> Result<()> {
    let listener = metrics::bind(&settings.metrics_bind_address).await?;
    let mut ctx = Context::new(
        clients.clone(),
        settings.config.clone(),
        settings.namespace.clone(),
        settings.dry_run,
    );
    ctx.cluster_name = settings.cluster_name.clone();
    // With leader election every write checks that this replica's Lease is still valid.
    let gate = if settings.leader_elect {
        Gate::elected()
    } else {
        Gate::open()
    };
    ctx.executor = ctx.executor.clone().with_gate(gate.clone());
    let ctx = Arc::new(ctx);
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        info!("shutting down");
        stop_tx.send_replace(true);
    });
    let server = tokio::spawn(metrics::serve(listener, ctx.metrics.clone(), {
        let mut rx = stop_rx.clone();
        async move { stopped(&mut rx).await }
    }));
    let (leading_tx, leading_rx) = watch::channel(!settings.leader_elect);
    let leader = if settings.leader_elect {
        // A dry run competes for its own Lease, never the live controller's.
        let lock = LeaseLock::for_mode(
            clients.workload.clone(),
            &settings.leader_election_namespace,
            LeaseLock::default_identity(),
            settings.dry_run,
        );
        info!(identity = %lock.identity, namespace = %settings.leader_election_namespace, lease = %lock.name, "leader election");
        Some(tokio::spawn(lead(
            lock,
            ctx.metrics.clone(),
            leading_tx,
            gate,
            LeaseTiming::default(),
            stop_rx.clone(),
        )))
    } else {
        ctx.metrics.leader.set(1);
        drop(leading_tx);
        None
    };
    info!(dry_run = settings.dry_run, "controller started");
    let window = Window::from_config(&settings.config);
    let result = run_continuous(ctx, window, leading_rx, stop_rx).await;
    if let Some(l) = leader {
        // The leader task releases the Lease when it sees the shutdown.
        let _ = l.await;
    }
    let _ = server.await;
    result
}

/// Resolves on SIGINT, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    // Without a signal handler, only Ctrl-C; if even that fails, run until killed.
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
