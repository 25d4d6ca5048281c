//! The I/O shell of `kubectl karpenter-capi`: Kubernetes clients, listings, watches, the executor
//! of the core's writes, leader election and the metrics endpoint. It decides nothing: every
//! choice comes from [`karpenter_capi_core`].

// The shell's modules name the core's rooms as `crate::model`, `crate::controller`, ... as they
// did when both were one crate.
use karpenter_capi_core::{bundle, controller, diagnose, error, model, vocab};

pub mod files;
pub mod input;
pub mod kube;
