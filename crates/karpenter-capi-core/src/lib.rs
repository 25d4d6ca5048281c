//! The pure core of `kubectl karpenter-capi`: every decision the tool makes, over a
//! [`model::Snapshot`], with no network, file system, async runtime, terminal or command line in
//! its dependency tree.
//!
//! - [`model`]: the cluster as read (pods, nodes, NodePools, NodeClaims, Machines), parsed and checked.
//! - [`sched`]: fit, topology and the three provisioning strategies.
//! - [`controller`]: one pass of the controller as a plan of writes ([`controller::plan`]).
//! - [`diagnose`]: `doctor`'s and `explain`'s findings.
//! - [`sim`]: the strategies replayed over time against simulated Cluster API and kubelets.
//! - [`bundle`]: the manifests `init` generates.
//! - [`vocab`]: every name shared with the API server, defined once.

pub mod bundle;
pub mod controller;
pub mod diagnose;
pub mod error;
pub mod model;
pub mod parallel;
pub mod sched;
pub mod sim;
pub mod status;
pub mod vocab;

pub use error::{Error, Result};
