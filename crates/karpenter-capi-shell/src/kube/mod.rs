//! The shell around the core: kubeconfig resolution, listing both clusters into a Snapshot,
//! watches, and executing the core's writes. It never decides.
//!
//! - [`client`]: which kubeconfig/context reaches the workload and the management cluster.
//! - [`list`]: one listing of both clusters into a `Snapshot` (`run --once`, `doctor`, `explain`).
//! - [`watch`]: watchers and reflector stores for continuous mode, trimmed and compacted.
//! - [`apply`]: the executor of `Action::steps` (field manager `karpenter-capi`); [`recorder`]:
//!   Event de-duplication as Karpenter's recorder does it.
//! - [`reconciler`]: the observe -> plan -> act loop, batch window, backoff; [`backoff`]: the
//!   per-object retry delays of failed actions.
//! - [`daemon`]: the continuous controller as a process (metrics endpoint, Lease, loop, signals).
//! - [`leader`]: leader election on a Lease; [`metrics`]: Prometheus, `/healthz`, `/readyz`.
//! - [`errors`]: API errors as messages naming cluster, verb, resource and the fix.
//! - [`permissions`]: the only API calls the shell makes, per cluster; [`access`]: checking them.

pub mod access;
pub mod api;
pub mod apply;
pub mod backoff;
pub mod client;
pub mod daemon;
pub mod edit;
pub mod errors;
pub mod init;
pub mod leader;
pub mod list;
pub mod metrics;
pub mod reconciler;
pub mod recorder;
pub mod trace;
pub mod uninstall;
pub mod watch;
