//! Ours: the real [`controller::plan`] run as `run` runs it — a pass after the cluster has been
//! quiet for the batch-idle duration (1 s) or at most the batch-max duration (10 s) after the
//! first change — with the plan carried out through [`apply_plan`] as `run`'s executor does
//! (actions, then status; finalizers honoured; the Machines observed, so every guard of
//! termination and garbage collection runs).
//!
//! `run` also plans when one of the controller's clocks runs out (the plan's `next_due`: a
//! batch window closing, a launch or registration timeout, `consolidateAfter` since a node went
//! quiet, `expireAfter`, a command's validation delay and minimum drain time,
//! `terminationGracePeriod`), and on a 10 s resync (`kube::reconciler::RESYNC`), which opens a
//! batch window like any event. The replay runs the clock passes, and the resync passes (on the
//! grid every 10 s from T+0) only while a disruption is under way or a consolidation search goes
//! on; [`Resync::Always`] runs every resync pass, to show the two give the same actions.

use super::{Agent, at, earliest};
use crate::controller::{self, Config};
use crate::model::duration::GoDuration;
use crate::sched::strategy::StrategyName;
use crate::sim::Ms;
use crate::sim::apply::apply_plan;
use crate::sim::ceil_to;
use crate::sim::cluster::{Mode, SimCluster};

/// `run`'s resync period.
pub(crate) const RESYNC: Ms = 10_000;

/// Which of `run`'s resync passes the replay runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resync {
    /// Only those where a clock of the controller can change its mind (the default).
    WhenDue,
    /// Every one (a pass every 10 s): slow, for checking [`Resync::WhenDue`].
    Always,
}

/// Our controller.
pub(crate) struct Ours {
    config: Config,
    resync: Resync,
    first_change: Option<Ms>,
    debounce: Option<Ms>,
    timer: Option<Ms>,
    passes: usize,
    /// The consolidation memo `run` keeps between passes (core `IsConsolidated`), kept the
    /// same way here.
    memo: controller::ConsolidationMemo,
    /// Whether the memo is kept between passes (false: every pass searches, as before the memo,
    /// to measure what it changes).
    remember: bool,
    /// Every action carried out, with its time (`name target`).
    pub(crate) log: Vec<(Ms, String)>,
}

impl Ours {
    /// With these settings.
    pub(crate) fn new(config: Config) -> Ours {
        Ours::with_resync(config, Resync::WhenDue)
    }

    /// With these settings and resync passes.
    pub(crate) fn with_resync(config: Config, resync: Resync) -> Ours {
        Ours {
            config,
            resync,
            first_change: None,
            debounce: None,
            timer: None,
            passes: 0,
            memo: controller::ConsolidationMemo::default(),
            remember: true,
            log: Vec::new(),
        }
    }

    /// This controller with a consolidation memo that forgets after every pass: every pass
    /// searches in full.
    #[cfg(test)]
    pub(crate) fn forgetting(mut self) -> Ours {
        self.remember = false;
        self
    }

    /// Opens (or extends) the batch window, as an event or a resync does in `run`.
    fn open_window(&mut self, now: Ms) {
        let first = *self.first_change.get_or_insert(now);
        self.debounce = Some(
            (now + Self::ms(self.config.batch_idle)).min(first + Self::ms(self.config.batch_max)),
        );
    }

    fn ms(d: GoDuration) -> Ms {
        d.as_secs_i64().saturating_mul(1000)
    }

    fn rearm(&self, c: &mut SimCluster) {
        c.set_wake(earliest([self.debounce, self.timer]));
    }

    /// When `run` plans next without an event: at the plan's next due clock (its sleep ends a
    /// batch-idle duration before, so the pass lands on it), and at the next resync tick while
    /// a disruption is under way or a consolidation search goes on (or every tick, under
    /// [`Resync::Always`]).
    fn wake(&self, c: &SimCluster, plan: &controller::Plan) -> Option<Ms> {
        let now = c.now;
        let idle = Self::ms(self.config.batch_idle);
        let due = plan.next_due.map(|t| (at(c, t) - idle).max(now));
        let tick =
            (self.resync == Resync::Always || !plan.pending.is_empty() || self.memo.resuming())
                .then(|| ceil_to(now + 1, RESYNC));
        earliest([due, tick])
    }
}

impl Agent for Ours {
    fn strategy(&self) -> StrategyName {
        StrategyName::Cost
    }

    fn mode(&self) -> Mode {
        Mode {
            karpenter: true,
            claim_finalizer: false,
        }
    }

    fn on_change(&mut self, c: &mut SimCluster) {
        self.open_window(c.now);
        self.rearm(c);
    }

    fn on_wake(&mut self, c: &mut SimCluster) {
        if self.timer.is_some_and(|t| t <= c.now) {
            // A resync or a clock: it opens a batch window like an event, unless one is open
            // (`run` waits for them only between windows).
            self.timer = None;
            if self.debounce.is_none() {
                self.open_window(c.now);
            }
        }
        if self.debounce.is_none_or(|t| t > c.now) {
            self.rearm(c);
            return;
        }
        // What `run`'s pod watch would have seen: the latest pod event per node.
        c.snap.pod_events = c
            .last_pod_event
            .iter()
            .map(|(node, at)| (node.clone(), c.ts(*at)))
            .collect();
        let (plan, memo) = controller::plan_with(&c.snap, c.ts(c.now), &self.config, &self.memo);
        if self.remember {
            self.memo = memo;
        }
        self.passes += 1;
        let now = c.now;
        let done = apply_plan(c, &plan);
        self.log.extend(done.into_iter().map(|a| (now, a)));
        self.first_change = None;
        self.debounce = None;
        // A consolidation search stopped at its trial cap goes on at the next resync pass.
        self.timer = self.wake(c, &plan);
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}
