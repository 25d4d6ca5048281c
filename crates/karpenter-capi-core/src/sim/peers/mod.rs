//! The autoscalers a replay can run: ours (the real controller), upstream karpenter-capi and
//! Cluster Autoscaler, each reacting to cluster changes and to its own timers.

pub(crate) mod autoscaler;
pub(crate) mod ours;
pub(crate) mod upstream;

use super::Ms;
use super::cluster::{Mode, SimCluster};
use crate::model::duration::NillableDuration;
use crate::model::nodepool::NodePool;
use crate::sched::strategy::StrategyName;

/// An autoscaler under simulation.
pub(crate) trait Agent {
    /// Which strategy it stands for.
    fn strategy(&self) -> StrategyName;
    /// How it shapes the cluster (bootstrap taint, claim finalizer).
    fn mode(&self) -> Mode;
    /// The cluster changed (a watch event) at `c.now`.
    fn on_change(&mut self, c: &mut SimCluster);
    /// Its wake-up time came.
    fn on_wake(&mut self, c: &mut SimCluster);
    /// Reconcile passes run so far.
    fn passes(&self) -> usize;
}

/// The agent for a strategy.
pub(crate) fn agent(strategy: StrategyName) -> Box<dyn Agent> {
    match strategy {
        StrategyName::Cost => Box::new(ours::Ours::new(crate::controller::Config::default())),
        StrategyName::KarpenterCapi => Box::new(upstream::Upstream::default()),
        StrategyName::LeastWaste => Box::new(autoscaler::ClusterAutoscaler::default()),
    }
}

/// The earliest of some optional times.
pub(crate) fn earliest(times: impl IntoIterator<Item = Option<Ms>>) -> Option<Ms> {
    times.into_iter().flatten().min()
}

/// A NodePool's `consolidateAfter` in milliseconds (`None` for `Never` or unparsable; unset
/// means 0, as Karpenter defaults it).
pub(crate) fn consolidate_after(pool: &NodePool) -> Option<Ms> {
    match pool.consolidate_after.as_deref() {
        None => Some(0),
        Some(text) => match text.parse::<NillableDuration>() {
            Ok(NillableDuration::After(d)) => Some(d.as_secs_i64().saturating_mul(1000)),
            _ => None,
        },
    }
}

/// Milliseconds from the start of the replay to a timestamp.
pub(crate) fn at(c: &SimCluster, t: jiff::Timestamp) -> Ms {
    t.as_millisecond() - c.base.as_millisecond()
}

/// The provisioner's batching window (Karpenter's and ours alike): the earliest time the batch
/// of provisionable pods closes — 1 s after the newest pod, 10 s after the oldest.
pub(crate) fn batch_closes(c: &SimCluster, idle: Ms, max: Ms) -> Option<Ms> {
    let created: Vec<Ms> = c
        .snap
        .pods
        .iter()
        .filter(|p| p.is_provisionable())
        .map(|p| p.created.map_or(0, |t| at(c, t)))
        .collect();
    let newest = created.iter().copied().max()?;
    let oldest = created.iter().copied().min()?;
    Some((newest + idle).min(oldest + max))
}
