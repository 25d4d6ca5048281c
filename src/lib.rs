//! The command line of `kubectl karpenter-capi`: flags ([`cli`]), one glue module per subcommand
//! ([`cmd`]), output ([`render`]) and shell completion ([`complete`]), over the pure core
//! (`karpenter-capi-core`, re-exported here as its rooms) and the I/O shell (`karpenter-capi-shell`).

pub mod cli;
pub mod cmd;
pub mod complete;
pub mod render;

pub use karpenter_capi_core::{
    Error, Result, bundle, controller, diagnose, error, model, parallel, sched, sim, status, vocab,
};
pub use karpenter_capi_shell::{files, input, kube};
