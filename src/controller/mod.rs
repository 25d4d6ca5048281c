//! The pure reconcile core: snapshot + now + config -> a [`Plan`] of [`Action`]s, and the API
//! writes each action implies. No I/O, no clock: `now` is an argument.

pub mod action;
pub mod write;

use jiff::Timestamp;
use serde::Serialize;

pub use action::Action;

use crate::model::duration::GoDuration;
use crate::model::snapshot::Snapshot;

/// Controller settings (the `run` flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Close a batch after this long without a new pending pod.
    pub batch_idle: GoDuration,
    /// Close a batch after this long at most.
    pub batch_max: GoDuration,
    /// Delete a NodeClaim not launched within this long.
    pub launch_timeout: GoDuration,
    /// Delete a NodeClaim not registered within this long.
    pub registration_timeout: GoDuration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            batch_idle: GoDuration(1),
            batch_max: GoDuration(10),
            launch_timeout: GoDuration(300),
            registration_timeout: GoDuration(900),
        }
    }
}

/// What one reconcile pass wants changed, in order. Empty on a converged cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// The actions.
    pub actions: Vec<Action>,
    /// Things worth telling the operator that are not changes (skipped NodePools, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Plans one reconcile pass. (Provisioning, binding, registration and liveness are filled in
/// by their modules.)
pub fn plan(snapshot: &Snapshot, now: Timestamp, config: &Config) -> Plan {
    let _ = (snapshot, now, config);
    Plan::default()
}
