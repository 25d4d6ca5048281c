//! `simulate --timeline`: a discrete-event replay of an autoscaler over a load trace, against
//! simulated Cluster API (MachineSets, Machines, infrastructure boot latency per flavor,
//! providerIDs) and kubelets (Nodes joining with the bootstrap template's taints, readiness after
//! a delay, pods bound by a kube-scheduler stand-in using the fit rules of [`crate::sched`]).
//!
//! Ours is the real [`crate::controller::plan`], its actions applied to the simulated cluster
//! through [`apply`]; the peers (upstream karpenter-capi, Cluster Autoscaler) are simulated with
//! their documented loops over the same cluster. Time only moves from event to event: a pass runs
//! when something changed or a timer is due, so a day-long trace costs events, not ticks.
//!
//! Pure: no I/O, no clock; progress is reported through a callback.

pub(crate) mod apply;
pub mod bound;
pub(crate) mod cluster;
pub mod compare;
pub mod engine;
pub mod generated;
pub(crate) mod metrics;
pub(crate) mod params;
pub(crate) mod peers;
pub mod trace;

pub use engine::{Timeline, replay, replay_all};
pub use trace::Trace;

/// Simulated time: milliseconds since the start of the trace.
pub(crate) type Ms = i64;

/// Rounds up to the next multiple of `period` (for loops that run on a fixed period).
pub(crate) fn ceil_to(t: Ms, period: Ms) -> Ms {
    if period <= 0 {
        return t;
    }
    t.div_euclid(period) * period + if t.rem_euclid(period) == 0 { 0 } else { period }
}

#[cfg(test)]
mod generated_tests;
#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod tests;
