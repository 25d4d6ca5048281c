//! Ours: the real [`controller::plan`] run as `run` runs it — a pass after the cluster has been
//! quiet for the batch-idle duration (1 s) or at most the batch-max duration (10 s) after the
//! first change — with the plan carried out through [`apply_plan`] as `run`'s executor does
//! (actions, then status; finalizers honoured; the Machines observed, so every guard of
//! termination and garbage collection runs).
//!
//! `run` also re-plans on a 10 s resync (`kube::reconciler::RESYNC`), which opens a batch
//! window like any event. The replay runs those resync passes only while one of the
//! controller's clocks can change its mind — a batch window closing, a launch or registration
//! timeout, `consolidateAfter` since a node went quiet, `expireAfter`, `terminationGracePeriod`
//! of a drain, a disruption under way — on the resync grid (every 10 s from T+0): the tick whose
//! pass comes just before the clock's time and the one after. [`Resync::Always`] runs every
//! resync pass, to show the two give the same actions.

use super::{Agent, at, batch_closes, consolidate_after, earliest};
use crate::controller::{self, Config};
use crate::model::duration::{GoDuration, NillableDuration};
use crate::sched::strategy::StrategyName;
use crate::sim::Ms;
use crate::sim::apply::apply_plan;
use crate::sim::ceil_to;
use crate::sim::cluster::{Mode, SimCluster};
use crate::vocab::keys::DRAIN_STARTED_ANNOTATION;

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

    /// The resync ticks that catch a clock due at `t`: the one whose pass (a batch-idle
    /// duration later) comes at or just before `t`, and the next.
    fn ticks_for(&self, t: Ms) -> [Ms; 2] {
        let idle = Self::ms(self.config.batch_idle);
        let first = ceil_to(t - idle - 1_000, RESYNC);
        [first, first + RESYNC]
    }

    fn ms(d: GoDuration) -> Ms {
        d.as_secs_i64().saturating_mul(1000)
    }

    fn rearm(&self, c: &mut SimCluster) {
        c.set_wake(earliest([self.debounce, self.timer]));
    }

    /// The next time the controller's decisions can change without any cluster change.
    fn due(&self, c: &SimCluster, pending_disruption: bool) -> Option<Ms> {
        let now = c.now;
        if self.resync == Resync::Always {
            return Some(ceil_to(now + 1, RESYNC));
        }
        let mut times: Vec<Ms> = Vec::new();
        times.extend(batch_closes(
            c,
            Self::ms(self.config.batch_idle),
            Self::ms(self.config.batch_max),
        ));
        for claim in c.snap.nodeclaims.iter().filter(|x| !x.deleting) {
            let created = claim.created.map_or(0, |t| at(c, t));
            // The deadline of the liveness clock the controller reads (`lifecycle::liveness_clock`);
            // its start does not depend on the `now` passed.
            if let Some(clock) =
                crate::controller::lifecycle::liveness_clock(claim, c.base, &self.config)
            {
                times.push(clock.since.map_or(0, |t| at(c, t)) + Self::ms(clock.limit));
            }
            let pool = claim
                .node_pool
                .as_ref()
                .and_then(|p| c.snap.nodepools.iter().find(|np| &np.name == p));
            if let Some(pool) = pool {
                if claim.condition_true("Initialized")
                    && let Some(after) = consolidate_after(pool)
                {
                    let initialized = claim
                        .conditions
                        .iter()
                        .find(|x| x.type_ == "Initialized")
                        .and_then(|x| x.last_transition_time);
                    // A pod event the watch saw counts before the claim's status shows it.
                    let seen = claim
                        .node_name
                        .as_ref()
                        .and_then(|n| c.last_pod_event.get(n))
                        .copied();
                    let quiet = [initialized, claim.last_pod_event, claim.created]
                        .into_iter()
                        .flatten()
                        .map(|t| at(c, t))
                        .chain(seen)
                        .max()
                        .unwrap_or(0);
                    times.push(quiet + after);
                }
                let expire = claim
                    .expire_after
                    .as_deref()
                    .or(pool.expire_after.as_deref())
                    .unwrap_or("720h");
                if let Ok(NillableDuration::After(d)) = expire.parse::<NillableDuration>() {
                    times.push(created + Self::ms(d));
                }
                let grace = claim
                    .termination_grace_period
                    .as_deref()
                    .or(pool.termination_grace_period.as_deref());
                if let (Some(g), Some(started)) = (
                    grace.and_then(|g| g.parse::<GoDuration>().ok()),
                    claim
                        .annotations
                        .get(DRAIN_STARTED_ANNOTATION)
                        .and_then(|s| s.parse::<jiff::Timestamp>().ok()),
                ) {
                    times.push(at(c, started) + Self::ms(g));
                }
            }
        }
        let mut ticks: Vec<Ms> = times.into_iter().flat_map(|t| self.ticks_for(t)).collect();
        if pending_disruption {
            ticks.push(ceil_to(now + 1, RESYNC));
        }
        ticks.into_iter().filter(|t| *t > now).min()
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
            // A resync: it opens a batch window like an event.
            self.timer = None;
            self.open_window(c.now);
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
        self.timer = self.due(c, !plan.pending.is_empty() || self.memo.resuming());
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}
