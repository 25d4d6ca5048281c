//! The controller loop of `run`: observe -> plan -> act, once or continuously, in the kube-rs
//! controller style: a [`Context`] carries the clients, executor, config and metrics; a pass
//! returns its results as values; [`Backoff`] is the error policy.
//!
//! Continuous mode: watchers feed reflector stores; any event opens a batch window that closes
//! after `--batch-idle-duration` without a new event or `--batch-max-duration` at most; then one
//! pass plans from the stores and acts. Clocks decide too (timeouts, `consolidateAfter`, a
//! command's validation delay): a pass also runs when the last plan's next clock runs out
//! ([`wait_before_next`]), and every [`RESYNC`] without events. With `--leader-elect` only the Lease
//! holder acts; others keep their stores warm.
//!
//! # Guarantees
//! - Passes never overlap, and shutdown (SIGTERM/SIGINT) waits for the running pass to finish
//!   its writes, then releases the Lease.
//! - Read your own writes: after a pass, the next waits (up to [`READ_YOUR_WRITES`]) until the
//!   stores show every object its successful writes left (created NodeClaims, replicas,
//!   delete-machine marks, taints, status) at least at the resourceVersion answered, whether
//!   the pass as a whole succeeded or not, so a lagging watch cannot make the core plan them
//!   twice. A rollback never takes off a mark that a successful scale-down relied on.
//! - No pass plans while a store of [`DECISION_STORES`] is re-listing (its watch restarted or
//!   its resourceVersion expired): the reflector still serves the objects of before.
//! - A replica that takes the Lease over plans its first pass from a fresh (quorum) listing of
//!   both clusters, not from its stores, which may not show the previous leader's last writes.
//! - One failure stays local across passes: a failed action backs off on its own object
//!   ([`ObjectBackoff`]: 100 ms doubling to 10 s per target, as core's eviction queue), while
//!   the rest of the pass and the next passes run at the normal cadence.
//! - A pass that cannot read its view (the snapshot fails) is retried after an exponential
//!   backoff of the controller (1 s doubling to 60 s), reset by the next pass that reads one.
//!
//! # Errors
//! A `--once` pass fails with the first refused action ([`Error::Apply`]) or the snapshot error;
//! in continuous mode refused actions are logged and retried per object.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use tokio::sync::{Notify, watch};
use tracing::{debug, error, info, warn};

use super::api::object_key;
use super::apply::{ActionOutcome, ActionResult, Executor, Written};
use super::backoff::ObjectBackoff;
use super::leader::{Gate, Leadership, LeaseLock, RENEW_DEADLINE, RENEW_INTERVAL};
use super::list::Clients;
use super::metrics::Metrics;
use super::watch::{Stores, start as start_watches};
use crate::controller::{self, Config, Plan};
use crate::error::{Error, Result};
use crate::model::snapshot::Snapshot;

/// Re-plan at least this often, even without events.
pub const RESYNC: Duration = Duration::from_secs(10);
/// How long to wait for our own creations to show in the stores.
pub const READ_YOUR_WRITES: Duration = Duration::from_secs(10);

/// The stores every decision reads: while one of them is re-listing (its view may be stale),
/// no pass plans. Disruption reads all of them; provisioning all but pods and
/// PodDisruptionBudgets, which alone could let it proceed; waiting for them too costs a
/// re-list's time and keeps one rule. Mirrors core's `cluster.Synced` check at the top of
/// `provisioning/provisioner.go` `Provisioner.Reconcile` and `disruption/controller.go`
/// `Controller.Reconcile` (core's Synced also waits for every NodeClaim to have a providerID;
/// here a claim waits minutes for its Machine, so that part is not followed).
pub const DECISION_STORES: &[&str] = &[
    "pods",
    "nodes",
    "nodeclaims",
    "machines",
    "machinesets",
    "machinedeployments",
    "poddisruptionbudgets",
];

/// What a pass needs.
pub struct Context {
    /// Workload and management clients.
    pub clients: Clients,
    /// Carries out actions.
    pub executor: Executor,
    /// Core settings.
    pub config: Config,
    /// The Cluster API namespace (`-n`).
    pub namespace: Option<String>,
    /// The one Cluster whose MachineDeployments and Machines are listed and watched
    /// (`--cluster-name`); None: every Cluster in the namespace.
    pub cluster_name: Option<String>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Plan and log, never write.
    pub dry_run: bool,
    /// What the last consolidation searches concluded (core's in-memory `IsConsolidated`
    /// state): a cache of this process, lost harmlessly on restart.
    pub consolidation: std::sync::Mutex<controller::ConsolidationMemo>,
}

impl Context {
    /// A context over these clients.
    pub fn new(
        clients: Clients,
        config: Config,
        namespace: Option<String>,
        dry_run: bool,
    ) -> Context {
        Context {
            executor: Executor::new(clients.clone()),
            clients,
            config,
            namespace,
            cluster_name: None,
            metrics: Arc::new(Metrics::new()),
            dry_run,
            consolidation: std::sync::Mutex::default(),
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone)]
pub struct PassReport {
    /// The plan.
    pub plan: Plan,
    /// Per-action results (empty in dry run).
    pub results: Vec<ActionResult>,
}

impl PassReport {
    /// The NodeClaims the pass created (names).
    pub fn created_claims(&self) -> Vec<String> {
        self.results
            .iter()
            .flat_map(|r| r.created.iter())
            .filter_map(|c| c.strip_prefix("NodeClaim/"))
            .map(str::to_string)
            .collect()
    }

    /// How many of the pass's actions were applied.
    pub fn applied(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome == ActionOutcome::Applied)
            .count()
    }

    /// The pass as an error when an action failed.
    pub fn into_result(self) -> Result<PassReport> {
        let failed: Vec<&ActionResult> = self.results.iter().filter(|r| r.failed()).collect();
        let Some(first) = failed.first() else {
            return Ok(self);
        };
        let skipped = self
            .results
            .iter()
            .filter(|r| r.outcome == ActionOutcome::Skipped)
            .count();
        let error = match &first.outcome {
            ActionOutcome::Failed {
                error,
                rollback_errors,
                ..
            } if rollback_errors.is_empty() => error.clone(),
            ActionOutcome::Failed {
                error,
                rollback_errors,
                ..
            } => format!(
                "{error}\n  rollback also failed: {}",
                rollback_errors.join("; ")
            ),
            _ => String::new(),
        };
        Err(Error::Apply(format!(
            "{} {} failed ({} of {} actions; {skipped} after it not attempted): {error}",
            first.action,
            first.target,
            failed.len(),
            self.results.len()
        )))
    }
}

/// Plans from a snapshot and, unless dry run, acts. Action failures are in the report.
pub async fn pass(ctx: &Context, snapshot: &Snapshot) -> PassReport {
    pass_holding(ctx, snapshot, &BTreeSet::new()).await
}

/// [`pass`], not attempting the actions whose target is in `held` (objects backing off).
pub async fn pass_holding(
    ctx: &Context,
    snapshot: &Snapshot,
    held: &BTreeSet<String>,
) -> PassReport {
    let now = snapshot.now.unwrap_or_else(Timestamp::now);
    ctx.metrics.pending_pods.set(
        snapshot
            .pods
            .iter()
            .filter(|p| p.is_provisionable())
            .count() as i64,
    );
    ctx.metrics
        .node_claims
        .set(snapshot.nodeclaims.len() as i64);
    ctx.metrics.oddities(&snapshot.oddities);
    ctx.metrics
        .karpenter
        .set_gauges(&controller::karpenter_metrics::gauges(snapshot, now));
    let started = Instant::now();
    let memo = ctx
        .consolidation
        .lock()
        .map(|m| m.clone())
        .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
    let (plan, memo) = controller::plan_with(snapshot, now, &ctx.config, &memo);
    match ctx.consolidation.lock() {
        Ok(mut m) => *m = memo,
        Err(poisoned) => *poisoned.into_inner() = memo,
    }
    let took = started.elapsed().as_secs_f64();
    ctx.metrics.plan_duration.observe(took);
    ctx.metrics.karpenter.scheduled(took);
    debug!(actions = plan.actions.len(), "planned");
    if ctx.dry_run {
        for a in &plan.actions {
            info!(
                action = a.name(),
                target = a.target(),
                "would apply (dry run)"
            );
            ctx.metrics.action(a.name(), "planned");
        }
        return PassReport {
            plan,
            results: Vec::new(),
        };
    }
    ctx.executor.forget_marks_except(
        &snapshot
            .machines
            .iter()
            .map(|m| m.key())
            .collect::<BTreeSet<String>>(),
    );
    let results = ctx.executor.execute_holding(&plan, now, held).await;
    ctx.metrics.record(&results);
    // Karpenter's counters count what was done: the actions whose writes all succeeded (and
    // the evictions the API server accepted).
    let outcomes: Vec<bool> = results.iter().map(ActionResult::done).collect();
    let applied = controller::karpenter_metrics::applied(&plan, &outcomes);
    ctx.metrics
        .karpenter
        .count(&controller::karpenter_metrics::counts(
            applied.iter().copied(),
            snapshot,
        ));
    ctx.metrics
        .karpenter
        .observe(&controller::termination_metrics::observations(
            applied.iter().copied(),
            snapshot,
            now,
        ));
    PassReport { plan, results }
}

/// Exponential backoff with jitter (backon): about 1 s doubling to 60 s, each delay spread by up
/// to its own length so replicas that failed together do not retry together.
#[derive(Debug)]
pub struct Backoff {
    delays: backon::ExponentialBackoff,
}

impl Default for Backoff {
    fn default() -> Backoff {
        use backon::BackoffBuilder as _;
        Backoff {
            delays: backon::ExponentialBuilder::default()
                .with_min_delay(Duration::from_secs(1))
                .with_max_delay(Duration::from_secs(60))
                .with_factor(2.0)
                .with_jitter()
                .without_max_times()
                .build(),
        }
    }
}

impl Backoff {
    /// The delay before the next retry.
    pub fn next_delay(&mut self) -> Duration {
        self.delays.next().unwrap_or(Duration::from_secs(60))
    }

    /// Back to the start after a success.
    pub fn reset(&mut self) {
        *self = Backoff::default();
    }
}

/// Batch window settings.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Close after this long without an event.
    pub idle: Duration,
    /// Close after this long at most.
    pub max: Duration,
    /// Plan at least this often.
    pub resync: Duration,
}

impl Window {
    /// From the core config's batch durations.
    pub fn from_config(config: &Config) -> Window {
        Window {
            idle: Duration::from_secs(config.batch_idle.as_secs()),
            max: Duration::from_secs(config.batch_max.as_secs()),
            resync: RESYNC,
        }
    }
}

/// How long the loop waits for an event before planning again: the resync, or less when a
/// clock of the last plan runs out sooner (`Plan::next_due`), so that the pass, a batch-idle
/// duration after the wait, lands on it.
pub fn wait_before_next(window: &Window, next_due: Option<Timestamp>, now: Timestamp) -> Duration {
    let Some(due) = next_due else {
        return window.resync;
    };
    let until = Duration::try_from(due.duration_since(now)).unwrap_or(Duration::ZERO);
    until.saturating_sub(window.idle).min(window.resync)
}

/// Resolves when `shutdown` turns true.
pub async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    // An error means the sender is gone: treat as shutdown.
    let _ = shutdown.wait_for(|s| *s).await;
}

/// Runs the continuous controller until `shutdown`: starts the watchers (retrying with backoff),
/// waits for them to sync, then reconciles on change. `leading` says whether this replica may act.
pub async fn run_continuous(
    ctx: Arc<Context>,
    window: Window,
    leading: watch::Receiver<bool>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<()> {
    let notify = Arc::new(Notify::new());
    let mut backoff = Backoff::default();
    let (stores, tasks) = loop {
        match start_watches(
            &ctx.clients,
            ctx.namespace.as_deref(),
            ctx.cluster_name.as_deref(),
            notify.clone(),
            ctx.metrics.clone(),
        )
        .await
        {
            Ok(started) => break started,
            Err(e) => {
                ctx.metrics.error("observe");
                let delay = backoff.next_delay();
                error!(error = %e, retry_in = ?delay, "cannot watch the clusters");
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = stopped(&mut shutdown) => return Ok(()),
                }
            }
        }
    };
    backoff.reset();
    tokio::select! {
        _ = stores.wait_until_ready() => {}
        _ = stopped(&mut shutdown) => { abort(tasks); return Ok(()) }
    }
    info!(objects = stores.len(), "watches synced");
    ctx.metrics.set_ready(true);
    ctx.metrics.set_acting(*leading.borrow());
    let result = reconcile_loop(&ctx, &stores, &notify, window, leading, shutdown).await;
    abort(tasks);
    ctx.metrics.set_ready(false);
    result
}

fn abort(tasks: Vec<tokio::task::JoinHandle<()>>) {
    for t in tasks {
        t.abort();
    }
}

/// The loop over synced stores (separate so tests can drive it with seeded stores).
pub async fn reconcile_loop(
    ctx: &Context,
    stores: &Stores,
    notify: &Notify,
    window: Window,
    leading: watch::Receiver<bool>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<()> {
    let mut backoff = Backoff::default();
    let mut objects = ObjectBackoff::default();
    let mut due = true; // plan once right after the watches synced
    // Until the next pass without an event: the resync, or the last plan's next clock.
    let mut wait = window.resync;
    let mut awaiting: Vec<Written> = Vec::new();
    // Whether the previous pass acted: a replica leading from the start plans from the stores
    // its watches just listed.
    let mut acted = *leading.borrow();
    loop {
        if !due {
            tokio::select! {
                _ = notify.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = stopped(&mut shutdown) => return Ok(()),
            }
        }
        // The batch window: extend while events keep coming, up to the max.
        let opened = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = notify.notified() => continue,
                _ = tokio::time::sleep(window.idle) => break,
                _ = tokio::time::sleep_until(opened + window.max) => break,
                _ = stopped(&mut shutdown) => return Ok(()),
            }
        }
        due = false;
        wait = window.resync;
        let acting = *leading.borrow();
        ctx.metrics.set_acting(acting);
        if !acting {
            debug!("not the leader; not acting");
            acted = false;
            continue;
        }
        // A new leader: the previous one's last writes may not have reached these stores yet
        // (claims awaiting Machines, delete-machine marks, taints), so the first pass re-reads
        // both clusters with a quorum list; what this replica remembered from an earlier term
        // is forgotten.
        let takeover = !acted;
        acted = true;
        if takeover {
            awaiting.clear();
            objects = ObjectBackoff::default();
        }
        // No decision on a view being re-listed (a fresh listing after a takeover needs none).
        let stale = stores.unsynced_among(DECISION_STORES);
        if !takeover && !stale.is_empty() {
            info!(stores = ?stale, "waiting for the watches to re-sync before planning");
            ctx.metrics.pass_waiting();
            ctx.metrics.pass_completed();
            continue;
        }
        // Read your writes: what earlier passes wrote (claims created, replicas, marks, taints,
        // status) must be visible before planning again, or the core would plan it twice.
        let deadline = tokio::time::Instant::now() + READ_YOUR_WRITES;
        awaiting.retain(|w| !stores.shows(w));
        while !awaiting.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::select! {
                _ = notify.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = stopped(&mut shutdown) => return Ok(()),
            }
            awaiting.retain(|w| !stores.shows(w));
        }
        if !awaiting.is_empty() {
            let objects: Vec<String> = awaiting
                .iter()
                .map(|w| format!("{} {}", w.plural, object_key(&w.namespace, &w.name)))
                .collect();
            warn!(
                ?objects,
                "own writes not seen by the watches yet; planning anyway"
            );
            // A write the watch never shows is not waited for twice; the marks a scale-down
            // relies on stay protected by the executor.
            awaiting.clear();
        }
        let started = Instant::now();
        let held = objects.held(tokio::time::Instant::now());
        let view = if takeover {
            info!("took over leadership: re-reading both clusters before acting");
            super::list::live_snapshot_in(
                &ctx.clients.workload,
                &ctx.clients.management,
                ctx.namespace.as_deref(),
                ctx.cluster_name.as_deref(),
            )
            .await
        } else {
            stores.snapshot()
        };
        let outcome = match view {
            Ok(snapshot) => Ok(pass_holding(ctx, &snapshot, &held).await),
            Err(e) => Err(e),
        };
        ctx.metrics
            .pass_duration
            .observe(started.elapsed().as_secs_f64());
        ctx.metrics.pass_completed();
        match outcome {
            Ok(report) => {
                // Whatever else failed, every write that went through is remembered.
                awaiting.extend(ctx.executor.take_written());
                let failed = note_outcomes(&mut objects, &report);
                ctx.metrics.pass(failed == 0);
                if failed > 0 {
                    ctx.metrics.error("act");
                } else if !report.plan.actions.is_empty() {
                    info!(actions = report.plan.actions.len(), "pass applied");
                }
                // An action's failure backs off on its own object, not the controller.
                backoff.reset();
                wait = wait_before_next(&window, report.plan.next_due, Timestamp::now());
                if let Some(at) = report.plan.next_due {
                    debug!(%at, ?wait, "a clock of the plan runs out; planning again then");
                }
            }
            Err(e) => {
                // No view at all: the controller backs off (a failed re-read after a takeover
                // is tried again).
                if takeover {
                    acted = false;
                }
                ctx.metrics.pass(false);
                ctx.metrics.error("observe");
                let delay = backoff.next_delay();
                error!(error = %e, retry_in = ?delay, "pass failed");
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = stopped(&mut shutdown) => return Ok(()),
                }
                due = true;
            }
        }
    }
}

/// Updates the per-object backoff from a pass's results (a failure backs its target off, a
/// success forgets it, a target no longer planned is forgotten) and logs each failure with its
/// retry delay. Returns how many actions failed.
fn note_outcomes(objects: &mut ObjectBackoff, report: &PassReport) -> usize {
    let now = tokio::time::Instant::now();
    let planned: BTreeSet<&str> = report.plan.actions.iter().map(|a| a.target()).collect();
    objects.retain_planned(&planned);
    let mut failed = 0;
    for r in &report.results {
        match &r.outcome {
            ActionOutcome::Applied => objects.succeeded(&r.target),
            ActionOutcome::Failed {
                error,
                rollback_errors,
                ..
            } => {
                failed += 1;
                let delay = objects.failed(&r.target, now);
                error!(action = r.action, target = %r.target, %error, rollback_errors = ?rollback_errors, retry_in = ?delay, "action failed; its object backs off");
            }
            ActionOutcome::Skipped | ActionOutcome::BackingOff => {}
        }
    }
    failed
}

/// Competes for the Lease until `shutdown`, publishing whether this replica leads and opening the
/// write [`Gate`] for as long as each successful renewal is valid; releases the Lease on the way
/// out. Each attempt is bounded by `deadline` ([`RENEW_DEADLINE`]): a hung call counts as failed.
pub async fn lead(
    lock: LeaseLock,
    metrics: Arc<Metrics>,
    leading: watch::Sender<bool>,
    gate: Gate,
    timing: LeaseTiming,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let sent = tokio::time::Instant::now();
        // The watches failing past the bound ride on this renewal for `doctor`.
        lock.set_watch_health(crate::diagnose::watches::encode(&metrics.failing_watches()));
        let attempt = tokio::time::timeout(timing.deadline, lock.try_acquire(Timestamp::now()));
        let outcome = tokio::select! {
            o = attempt => o,
            _ = stopped(&mut shutdown) => break,
        };
        match outcome {
            Ok(Ok(Leadership::Leading)) => gate.grant_until(lock.lead_until_instant(sent)),
            Ok(Ok(Leadership::Following(holder))) => {
                if *leading.borrow() {
                    warn!(%holder, "lost the leader Lease");
                }
                debug!(%holder, "following");
                gate.revoke();
            }
            Ok(Err(e)) => {
                metrics.error("leader");
                warn!(error = %e, "cannot renew the leader Lease");
            }
            Err(_) => {
                metrics.error("leader");
                warn!(deadline = ?timing.deadline, "renewing the leader Lease timed out");
            }
        }
        metrics.lease_loop_alive();
        publish(&gate, &metrics, &leading);
        // Until the next attempt, re-publish as soon as the gate's validity runs out.
        let next = tokio::time::Instant::now() + timing.interval;
        loop {
            let tick = (tokio::time::Instant::now() + Duration::from_millis(100)).min(next);
            tokio::select! {
                _ = tokio::time::sleep_until(tick) => {}
                _ = stopped(&mut shutdown) => break,
            }
            publish(&gate, &metrics, &leading);
            if tokio::time::Instant::now() >= next || *shutdown.borrow() {
                break;
            }
        }
        if *shutdown.borrow() {
            break;
        }
    }
    gate.revoke();
    publish(&gate, &metrics, &leading);
    match tokio::time::timeout(timing.deadline, lock.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => warn!(error = %e, "could not release the leader Lease"),
        Err(_) => warn!("releasing the leader Lease timed out"),
    }
}

fn publish(gate: &Gate, metrics: &Metrics, leading: &watch::Sender<bool>) {
    let is_leader = gate.is_open();
    metrics.leader.set(i64::from(is_leader));
    metrics.set_acting(is_leader);
    if *leading.borrow() != is_leader {
        if !is_leader {
            warn!("leadership dropped: no successful renewal within the lease's validity");
        }
        leading.send_replace(is_leader);
    }
}

/// How often the Lease is renewed and how long one attempt may take.
#[derive(Debug, Clone, Copy)]
pub struct LeaseTiming {
    /// Between attempts.
    pub interval: Duration,
    /// The longest one attempt may take (below the lease duration).
    pub deadline: Duration,
}

impl Default for LeaseTiming {
    fn default() -> LeaseTiming {
        LeaseTiming {
            interval: RENEW_INTERVAL,
            deadline: RENEW_DEADLINE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn the_loop_wakes_a_batch_idle_before_the_next_clock_and_never_past_the_resync() {
        let window = Window {
            idle: Duration::from_secs(1),
            max: Duration::from_secs(10),
            resync: Duration::from_secs(10),
        };
        let now = at(0);
        // Nothing timed: the resync.
        assert_eq!(wait_before_next(&window, None, now), window.resync);
        // A validation due in 4 s: wake in 3 s, the pass lands on it.
        assert_eq!(
            wait_before_next(&window, Some(at(4)), now),
            Duration::from_secs(3)
        );
        // A consolidateAfter 25 s away: the resync comes first.
        assert_eq!(wait_before_next(&window, Some(at(25)), now), window.resync);
        // Due within the batch window, or already: plan at once (the window still idles).
        assert_eq!(wait_before_next(&window, Some(at(1)), now), Duration::ZERO);
        assert_eq!(wait_before_next(&window, Some(at(-5)), now), Duration::ZERO);
    }
}
