//! The shell around the core: kubeconfig resolution, listing both clusters into a Snapshot,
//! watches, and executing the core's writes. It never decides.

pub mod api;
pub mod apply;
pub mod client;
pub mod errors;
pub mod leader;
pub mod list;
pub mod metrics;
pub mod permissions;
pub mod reconciler;
pub mod watch;
