//! When one of the controller's clocks next changes a decision with nothing else changing, so
//! that `run` plans again right then rather than at its next resync (controller-runtime's
//! `RequeueAfter`, which core's controllers return for the same clocks).

use jiff::{SignedDuration, Timestamp};

use super::Config;
use super::candidates::quiet_since;
use super::command::{MIN_DRAIN_SECS, VALIDATION_DELAY_SECS};
use super::disruption::expire_after;
use super::drain::termination_deadline;
use super::lifecycle::liveness_clock;
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::DRAIN_STARTED_ANNOTATION;

/// The earliest time after `now` at which a clock the plan reads runs out: the provisioning
/// batch window closing, a launch or registration timeout, a node's `consolidateAfter`,
/// `expireAfter`, a deleting claim's `terminationGracePeriod` deadline, and a disruption
/// command's validation delay and minimum drain time (from when it started; `started` are the
/// claims whose commands this pass starts). None: nothing is timed, the resync is enough.
pub(crate) fn next_due<'a>(
    snapshot: &Snapshot,
    now: Timestamp,
    config: &Config,
    started: impl IntoIterator<Item = &'a str>,
) -> Option<Timestamp> {
    let secs = |d: GoDuration| SignedDuration::from_secs(d.as_secs_i64());
    let mut times: Vec<Timestamp> = Vec::new();
    // The batch of pending pods closes `batch_idle` after the newest, `batch_max` after the
    // oldest (`provision::batch_closed`).
    let created = snapshot
        .pods
        .iter()
        .filter(|p| p.is_provisionable())
        .filter_map(|p| p.created);
    if let (Some(newest), Some(oldest)) = (created.clone().max(), created.min()) {
        times.extend(
            [
                newest.checked_add(secs(config.batch_idle)),
                oldest.checked_add(secs(config.batch_max)),
            ]
            .into_iter()
            .flatten()
            .min(),
        );
    }
    let started: Vec<&str> = started.into_iter().collect();
    for claim in &snapshot.nodeclaims {
        // A drain under way (a command, or the termination of a deleted claim): the command's
        // validation and the minimum drain time count from its start.
        let drain_started = if started.contains(&claim.name.as_str()) {
            Some(now)
        } else {
            claim
                .annotations
                .get(DRAIN_STARTED_ANNOTATION)
                .and_then(|t| t.parse::<Timestamp>().ok())
        };
        if let Some(drain_started) = drain_started {
            for after in [VALIDATION_DELAY_SECS, MIN_DRAIN_SECS] {
                times.extend(drain_started.checked_add(SignedDuration::from_secs(after)));
            }
        }
        // A deleting claim's `terminationGracePeriod` deadline (termination's own).
        if claim.deleting {
            times.extend(termination_deadline(claim, None));
            continue;
        }
        // Timeouts fire once the time waited exceeds the limit (`LivenessClock::timed_out`).
        if let Some(clock) = liveness_clock(claim, now, config)
            && let Some(since) = clock.since
        {
            times.extend(since.checked_add(secs(clock.limit) + SignedDuration::from_secs(1)));
        }
        let pool = claim
            .node_pool
            .as_deref()
            .and_then(|p| snapshot.nodepools.iter().find(|np| np.name == p));
        if let Some(pool) = pool
            && claim.condition_true("Initialized")
            && let Some(Ok(NillableDuration::After(after))) = pool
                .consolidate_after
                .as_deref()
                .map(str::parse::<NillableDuration>)
            && let Some(quiet) = quiet_since(snapshot, claim)
        {
            times.extend(quiet.checked_add(secs(after)));
        }
        // Expiry: older than `expireAfter` (`disruption::expire`).
        if let (Ok(NillableDuration::After(d)), Some(created)) = (
            expire_after(snapshot, claim).parse::<NillableDuration>(),
            claim.created,
        ) {
            times.extend(created.checked_add(secs(d) + SignedDuration::from_secs(1)));
        }
    }
    // Decisions compare whole seconds: a time inside the current second is due now.
    times
        .into_iter()
        .filter(|t| t.as_second() > now.as_second())
        .min()
}

#[cfg(test)]
mod tests {
    use karpenter_capi_testkit::World;
    use karpenter_capi_testkit::world::{NOW, ago};
    use serde_json::json;

    use crate::controller::{Config, plan};
    use crate::model::load::{Source, snapshot_from_sources};

    fn due_in(world: World) -> Option<i64> {
        let snap = snapshot_from_sources(&[Source {
            name: "w".into(),
            text: world.text(),
        }])
        .unwrap();
        let now: jiff::Timestamp = NOW.parse().unwrap();
        plan(&snap, now, &Config::default())
            .next_due
            .map(|t| t.as_second() - now.as_second())
    }

    /// Node `node-1` busy with a pod, another pod pending since `pending_since` seconds ago
    /// (None: no pending pod); nothing else is timed (the pool never expires, its node is busy).
    fn busy(pending_since: Option<i64>) -> World {
        let w = World::new("WhenEmpty")
            .md(4, 1)
            .machine(4, 1, true, true)
            .pod("web", Some(1), "500m");
        match pending_since {
            Some(s) => w.pod("new", None, "500m").with("Pod", "new", |p| {
                p["metadata"]["creationTimestamp"] = json!(ago(s))
            }),
            None => w,
        }
    }

    #[test]
    fn nothing_timed_leaves_it_to_the_resync() {
        // The busy node's consolidateAfter ran out long ago: no clock of the cluster ahead.
        let snap = snapshot_from_sources(&[Source {
            name: "w".into(),
            text: busy(None).text(),
        }])
        .unwrap();
        let now: jiff::Timestamp = NOW.parse().unwrap();
        assert_eq!(super::next_due(&snap, now, &Config::default(), []), None);
        assert_eq!(due_in(busy(None)), None);
        // Under WhenEmptyOrUnderutilized the pass searches, finds nothing (a node of the only
        // flavor, its pod nowhere else to go) and settles: core searches again 5 minutes later
        // (`ConsolidationState` moving by itself), a clock of the plan.
        let underutilized = World::new("WhenEmptyOrUnderutilized")
            .md(4, 1)
            .machine(4, 1, true, true)
            .pod("web", Some(1), "500m");
        assert_eq!(due_in(underutilized), Some(300));
    }

    #[test]
    fn a_pending_batch_closes_a_batch_idle_after_its_newest_pod() {
        // Created now: the batch closes in 1 s (idle), before its 10 s max.
        assert_eq!(due_in(busy(Some(0))), Some(1));
    }

    #[test]
    fn a_node_that_went_quiet_is_due_at_its_consolidate_after() {
        // The pod left node-1 10 s ago: the node is consolidatable 20 s from now (30 s).
        let w = World::new("WhenEmpty")
            .md(4, 1)
            .machine(4, 1, true, true)
            .with("NodeClaim", "c-1", |c| {
                c["status"]["lastPodEventTime"] = json!(ago(10));
            });
        assert_eq!(due_in(w), Some(20));
    }

    #[test]
    fn a_command_under_way_is_due_at_its_validation_and_minimum_drain() {
        // An Empty command started 8 s ago: validated 15 s after its start, 7 s from now.
        let command = |started: i64| {
            World::new("WhenEmpty")
                .md(4, 1)
                .machine(4, 1, true, true)
                .with("NodeClaim", "c-1", move |c| {
                    c["metadata"]["annotations"] = json!({
                        "karpenter-capi/disruption-reason": "Empty",
                        "karpenter-capi/drain-started": ago(started),
                    });
                })
                .with("Node", "node-1", |n| {
                    n["spec"]["taints"] =
                        json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
                })
        };
        assert_eq!(due_in(command(8)), Some(7));
        // Started 2 s ago: the minimum drain time (5 s) comes first.
        assert_eq!(due_in(command(2)), Some(3));
    }

    #[test]
    fn a_claim_is_due_the_second_after_its_expire_after() {
        // Created an hour ago, expiring after 61 minutes: deleted once older (core's expiration
        // controller requeues for that moment), 1 min 1 s from now (before the forced search).
        let w = busy(None).with("NodePool", "default", |p| {
            p["spec"]["template"]["spec"]["expireAfter"] = json!("61m");
        });
        assert_eq!(due_in(w), Some(61));
    }

    #[test]
    fn a_command_started_by_this_pass_is_due_at_its_validation() {
        // node-1 has been empty for an hour: this pass starts its Empty command (tainted now);
        // the next clocks are its minimum drain time and validation, 5 and 15 s from now.
        let w = World::new("WhenEmpty").md(4, 1).machine(4, 1, true, true);
        assert_eq!(due_in(w), Some(5));
    }
}
