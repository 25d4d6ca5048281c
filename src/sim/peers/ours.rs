//! Ours: the real [`controller::plan`] run as `run` runs it — a pass after the cluster has been
//! quiet for the batch-idle duration (1 s) or at most the batch-max duration (10 s) after the
//! first change — with every action applied through [`apply_all`]. Between changes, a pass runs
//! only when one of the controller's clocks can change its mind: a batch window closing, a
//! launch or registration timeout, `consolidateAfter` since a node went quiet, `expireAfter`,
//! `terminationGracePeriod` of a drain, or a 10 s resync while a disruption is under way.

use super::{Agent, at, batch_closes, consolidate_after, earliest};
use crate::controller::action::DRAIN_STARTED_ANNOTATION;
use crate::controller::{self, Config};
use crate::model::duration::{GoDuration, NillableDuration};
use crate::sched::strategy::StrategyName;
use crate::sim::Ms;
use crate::sim::apply::apply_all;
use crate::sim::cluster::{Mode, SimCluster};

/// Our controller.
pub struct Ours {
    config: Config,
    first_change: Option<Ms>,
    debounce: Option<Ms>,
    timer: Option<Ms>,
    passes: usize,
}

impl Ours {
    /// With these settings.
    pub fn new(config: Config) -> Ours {
        Ours {
            config,
            first_change: None,
            debounce: None,
            timer: None,
            passes: 0,
        }
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
        // One second of slack: the controller compares whole seconds.
        let slack = 1_000;
        let mut times: Vec<Ms> = Vec::new();
        times.extend(batch_closes(
            c,
            Self::ms(self.config.batch_idle),
            Self::ms(self.config.batch_max),
        ));
        for claim in c.snap.nodeclaims.iter().filter(|x| !x.deleting) {
            let created = claim.created.map_or(0, |t| at(c, t));
            let launched = claim.condition_true("Launched") || claim.provider_id.is_some();
            if !launched {
                times.push(created + Self::ms(self.config.launch_timeout) + slack);
            }
            if !claim.condition_true("Registered") {
                times.push(created + Self::ms(self.config.registration_timeout) + slack);
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
                    times.push(quiet + after + slack);
                }
                let expire = claim
                    .expire_after
                    .as_deref()
                    .or(pool.expire_after.as_deref())
                    .unwrap_or("720h");
                if let Ok(NillableDuration::After(d)) = expire.parse::<NillableDuration>() {
                    times.push(created + Self::ms(d) + slack);
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
                    times.push(at(c, started) + Self::ms(g) + slack);
                }
            }
        }
        if pending_disruption {
            times.push(now + 10_000);
        }
        times.into_iter().filter(|t| *t > now).min()
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
        let first = *self.first_change.get_or_insert(c.now);
        self.debounce = Some(
            (c.now + Self::ms(self.config.batch_idle)).min(first + Self::ms(self.config.batch_max)),
        );
        self.rearm(c);
    }

    fn on_wake(&mut self, c: &mut SimCluster) {
        // What `run`'s pod watch would have seen: the latest pod event per node.
        c.snap.pod_events = c
            .last_pod_event
            .iter()
            .map(|(node, at)| (node.clone(), c.ts(*at)))
            .collect();
        let plan = controller::plan(&c.snap, c.ts(c.now), &self.config);
        self.passes += 1;
        apply_all(c, &plan.actions);
        self.first_change = None;
        self.debounce = None;
        self.timer = self.due(c, !plan.pending.is_empty());
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}
