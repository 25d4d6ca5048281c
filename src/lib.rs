//! `kubectl karpenter-capi`: a pure scheduling and reconcile core over a [`model::Snapshot`],
//! wrapped by a thin command-line and Kubernetes shell.
//!
//! The core modules (`model`, `sched`, `controller`, `diagnose`) never touch the network, the file
//! system or an async runtime; `kube` and `cmd` are the shell around them.

pub mod cli;
pub mod cmd;
pub mod complete;
pub mod controller;
pub mod diagnose;
pub mod error;
pub mod kube;
pub mod model;
pub mod parallel;
pub mod render;
pub mod sched;
pub mod setup;
pub mod sim;

pub use error::{Error, Result};
