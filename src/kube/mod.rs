//! The shell around the core: kubeconfig resolution, listing both clusters into a Snapshot,
//! watches, and executing the core's writes. It never decides.

pub mod access;
pub mod client;
pub mod errors;
pub mod list;
pub mod permissions;
