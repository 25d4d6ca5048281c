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
//! - [`status`]: `status`'s view of a cluster as data; [`parallel`]: independent work on every
//!   core; [`error`]: the [`Error`] every room returns.
//! - [`rng`]: the deterministic generator the generated traces are drawn from; the testkit
//!   compiles the same file, so every generated test and bench input is drawn from it too (`pub`
//!   so that the helpers only tests use are not dead code here).
//!
//! These rooms are the deliberate API: an item is `pub` only when the shell, the command line,
//! the integration tests, the benches or the examples use it; everything else is `pub(crate)`,
//! so the compiler says when the API grows.

pub mod bundle;
pub mod controller;
pub mod diagnose;
pub mod error;
pub mod model;
pub mod parallel;
pub mod rng;
pub mod sched;
pub mod sim;
pub mod status;
pub mod vocab;

pub use error::{Error, Result};
