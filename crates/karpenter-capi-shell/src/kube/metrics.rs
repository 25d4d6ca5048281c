//! The controller's Prometheus metrics and the small HTTP endpoint serving them with `/healthz`
//! and `/readyz` on `--metrics-bind-address`.
//!
//! `/healthz` (liveness) means the work this replica is there for still moves: on the replica that
//! acts (the leader, or the only one), a reconcile pass must have completed within
//! [`LIVENESS_BOUND`] of the last one (or of when it started acting), else 503, so the kubelet
//! restarts a wedged controller; a follower is healthy while its leader-election loop runs
//! (an attempt at least every [`LEASE_LOOP_BOUND`]). Before the watches have synced there is no
//! pass to wait for: healthy.
//!
//! `/readyz` answers 200 once every watch has listed its objects, 503 before, and 503 again
//! while a watch has been failing for longer than [`WATCH_FAILURE_BOUND`] (naming the resource
//! and the last error): its store is going stale and passes plan on it. The same watches are
//! what the leader publishes on its Lease for `doctor` ([`Metrics::failing_watches`]). It does not depend
//! on leadership: a standby is ready to take over, and a rolling update of the one-replica
//! Deployment would stall if the new pod had to lead before it counted as ready.
//!
//! # Errors
//! [`serve`] fails only when the address cannot be bound; a failing connection is logged.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// tokio's clock (the wall clock in production): the health bounds follow paused time in tests.
use tokio::time::Instant;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tracing::{debug, info};

use super::apply::{ActionOutcome, ActionResult};
use crate::controller::karpenter_metrics::{self as km, Count, Gauges};
use crate::controller::termination_metrics::{self as tm, Observation, Observed};
use crate::diagnose::watches::FailingWatch;
use crate::error::{Error, Result};

type Labels = Vec<(String, String)>;

/// The longest the acting replica may go without completing a reconcile pass before `/healthz`
/// fails: passes run at least every 10 s (resync) plus the batch window, and a failed pass waits
/// at most 60 s before the next, so three minutes means the loop is stuck, not busy.
pub const LIVENESS_BOUND: Duration = Duration::from_secs(180);
/// The longest a follower's leader-election loop may go without an attempt (each attempt is
/// bounded by the renew deadline and they run every renew interval).
pub const LEASE_LOOP_BOUND: Duration = Duration::from_secs(60);

/// How long a watch may keep failing (each retry refused, with the watcher's backoff) before
/// `/readyz` fails: the watcher's backoff tops out at 30 s, so two minutes is several failed
/// retries in a row, not one blip.
pub const WATCH_FAILURE_BOUND: Duration = Duration::from_secs(120);

/// A watch failing since `since` (monotonic, tokio's clock so paused-time tests can move it;
/// `since_wall` for the Lease), with its last error.
#[derive(Debug, Clone)]
struct WatchFailure {
    since: tokio::time::Instant,
    since_wall: jiff::Timestamp,
    error: String,
}

/// When the loops last showed progress (monotonic).
#[derive(Debug, Default)]
struct Progress {
    /// The watches synced (the reconcile loop started).
    synced: Option<Instant>,
    /// This replica started acting (leader, or no leader election).
    acting_since: Option<Instant>,
    /// A reconcile pass (successful or not) completed.
    last_pass: Option<Instant>,
    /// The leader-election loop made an attempt; `None` without leader election.
    lease_loop: Option<Instant>,
}
/// Everything the controller counts.
pub struct Metrics {
    registry: Registry,
    /// Reconcile passes, by result (`ok`, `error`).
    pub passes: Family<Labels, Counter>,
    /// Actions, by action name and outcome (`applied`, `failed`, `skipped`, `planned` in dry run).
    pub actions: Family<Labels, Counter>,
    /// Errors, by stage (`observe`, `plan`, `act`, `watch`, `leader`).
    pub errors: Family<Labels, Counter>,
    /// Provisionable pods seen by the last pass.
    pub pending_pods: Gauge,
    /// NodeClaims seen by the last pass.
    pub node_claims: Gauge,
    /// Time to compute one plan, in seconds.
    pub plan_duration: Histogram,
    /// Time of one whole pass (observe, plan, act), in seconds.
    pub pass_duration: Histogram,
    /// 1 while this replica holds the leader Lease (or runs without leader election).
    pub leader: Gauge,
    /// Values clamped and objects skipped in the last pass (see `model::odd`), by treatment.
    pub odd_values: Family<Labels, Gauge>,
    /// Karpenter's metrics, under their own names (`karpenter_...`).
    pub karpenter: KarpenterMetrics,
    ready: AtomicBool,
    progress: Mutex<Progress>,
    liveness_bound: Duration,
    lease_loop_bound: Duration,
    /// The watches failing now, by `<cluster> cluster <resource>`.
    watch_failures: Mutex<std::collections::BTreeMap<String, WatchFailure>>,
    watch_failure_bound: Duration,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh registry: ours under the `karpenter_capi` prefix, Karpenter's under `karpenter`.
    pub fn new() -> Metrics {
        let mut root = Registry::default();
        let karpenter = KarpenterMetrics::register(root.sub_registry_with_prefix("karpenter"));
        let registry = root.sub_registry_with_prefix("karpenter_capi");
        let passes = Family::<Labels, Counter>::default();
        let actions = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let pending_pods = Gauge::default();
        let node_claims = Gauge::default();
        let plan_duration = Histogram::new(exponential_buckets(0.0005, 2.0, 14));
        let pass_duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        let leader = Gauge::default();
        let odd_values = Family::<Labels, Gauge>::default();
        registry.register(
            "reconcile_passes",
            "Reconcile passes (observe, plan, act) by result",
            passes.clone(),
        );
        registry.register(
            "actions",
            "Planned actions by action and outcome",
            actions.clone(),
        );
        registry.register("errors", "Errors by stage", errors.clone());
        registry.register(
            "pending_pods",
            "Provisionable pods in the last pass",
            pending_pods.clone(),
        );
        registry.register(
            "nodeclaims",
            "NodeClaims in the last pass",
            node_claims.clone(),
        );
        registry.register(
            "plan_duration_seconds",
            "Time to compute one plan",
            plan_duration.clone(),
        );
        registry.register(
            "pass_duration_seconds",
            "Time of one reconcile pass",
            pass_duration.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica acts (holds the Lease)",
            leader.clone(),
        );
        registry.register(
            "odd_values",
            "Values the API accepted but the controller cannot hold exactly, in the last pass, by treatment (clamped, skipped)",
            odd_values.clone(),
        );
        Metrics {
            odd_values,
            registry: root,
            karpenter,
            passes,
            actions,
            errors,
            pending_pods,
            node_claims,
            plan_duration,
            pass_duration,
            leader,
            ready: AtomicBool::new(false),
            progress: Mutex::new(Progress::default()),
            liveness_bound: LIVENESS_BOUND,
            lease_loop_bound: LEASE_LOOP_BOUND,
            watch_failures: Mutex::default(),
            watch_failure_bound: WATCH_FAILURE_BOUND,
        }
    }

    /// Metrics with other liveness bounds (tests shorten them).
    pub fn with_liveness_bounds(mut self, pass: Duration, lease_loop: Duration) -> Metrics {
        self.liveness_bound = pass;
        self.lease_loop_bound = lease_loop;
        self
    }

    /// Metrics with another watch failure bound (tests shorten it).
    pub fn with_watch_failure_bound(mut self, bound: Duration) -> Metrics {
        self.watch_failure_bound = bound;
        self
    }

    /// The watch of `what` failed with `error` (kept failing since its first failure).
    pub fn watch_failed(&self, what: &str, error: &str) {
        if let Ok(mut w) = self.watch_failures.lock() {
            let entry = w.entry(what.to_string()).or_insert_with(|| WatchFailure {
                since: tokio::time::Instant::now(),
                since_wall: jiff::Timestamp::now(),
                error: String::new(),
            });
            entry.error = error.to_string();
        }
    }

    /// The watch of `what` delivered an event: it works.
    pub fn watch_ok(&self, what: &str) {
        if let Ok(mut w) = self.watch_failures.lock()
            && !w.is_empty()
        {
            w.remove(what);
        }
    }

    /// The watches failing for longer than the bound, by resource: what fails `/readyz`, and
    /// what the leader publishes on its Lease for `doctor`.
    pub fn failing_watches(&self) -> Vec<FailingWatch> {
        let Ok(w) = self.watch_failures.lock() else {
            return Vec::new();
        };
        w.iter()
            .filter(|(_, f)| f.since.elapsed() > self.watch_failure_bound)
            .map(|(what, f)| FailingWatch {
                resource: what.clone(),
                error: f.error.clone(),
                since: f.since_wall,
            })
            .collect()
    }

    /// `Ok` when `/readyz` answers 200, else why not (see the module docs).
    pub fn readiness(&self) -> std::result::Result<(), String> {
        if !self.ready.load(Ordering::SeqCst) {
            return Err("watches not synced yet".to_string());
        }
        let Ok(w) = self.watch_failures.lock() else {
            return Err("metrics state poisoned by a panic".to_string());
        };
        let failing: Vec<String> = w
            .iter()
            .filter(|(_, f)| f.since.elapsed() > self.watch_failure_bound)
            .map(|(what, f)| {
                format!(
                    "the watch of {what} has been failing for {}s (bound {}s): {}",
                    f.since.elapsed().as_secs(),
                    self.watch_failure_bound.as_secs(),
                    f.error
                )
            })
            .collect();
        if failing.is_empty() {
            Ok(())
        } else {
            Err(failing.join("\n"))
        }
    }

    fn progress(&self, f: impl FnOnce(&mut Progress)) {
        if let Ok(mut p) = self.progress.lock() {
            f(&mut p);
        }
    }

    /// A reconcile pass completed (whatever its result).
    pub fn pass_completed(&self) {
        self.progress(|p| p.last_pass = Some(Instant::now()));
    }

    /// The leader-election loop made an attempt.
    pub fn lease_loop_alive(&self) {
        self.progress(|p| p.lease_loop = Some(Instant::now()));
    }

    /// This replica starts or stops acting.
    pub fn set_acting(&self, acting: bool) {
        self.progress(|p| match (acting, p.acting_since) {
            (true, None) => p.acting_since = Some(Instant::now()),
            (false, _) => p.acting_since = None,
            _ => {}
        });
    }

    /// `Ok` while the loops this replica runs make progress, else why not (see the module docs).
    pub fn health(&self) -> std::result::Result<(), String> {
        let Ok(p) = self.progress.lock() else {
            return Err("metrics state poisoned by a panic".to_string());
        };
        let now = Instant::now();
        if let Some(since) = p.acting_since
            && let Some(synced) = p.synced
        {
            let reference = [Some(since), Some(synced), p.last_pass]
                .into_iter()
                .flatten()
                .max()
                .unwrap_or(since);
            let idle = now.saturating_duration_since(reference);
            if idle > self.liveness_bound {
                return Err(format!(
                    "no reconcile pass completed for {}s (bound {}s): the loop is stuck",
                    idle.as_secs(),
                    self.liveness_bound.as_secs()
                ));
            }
            return Ok(());
        }
        if let Some(last) = p.lease_loop {
            let idle = now.saturating_duration_since(last);
            if idle > self.lease_loop_bound {
                return Err(format!(
                    "the leader-election loop made no attempt for {}s (bound {}s)",
                    idle.as_secs(),
                    self.lease_loop_bound.as_secs()
                ));
            }
        }
        Ok(())
    }

    /// Publishes the clamped values and skipped objects of a pass.
    pub fn oddities(&self, oddities: &[crate::model::odd::Oddity]) {
        use crate::model::odd::Treatment;
        for (treatment, label) in [
            (Treatment::Clamped, "clamped"),
            (Treatment::Skipped, "skipped"),
        ] {
            let n = oddities.iter().filter(|o| o.treatment == treatment).count();
            self.odd_values
                .get_or_create(&vec![("treatment".to_string(), label.to_string())])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Counts an error at a stage.
    pub fn error(&self, stage: &str) {
        self.errors
            .get_or_create(&vec![("stage".to_string(), stage.to_string())])
            .inc();
    }

    /// Counts a pass.
    pub fn pass(&self, ok: bool) {
        self.passes
            .get_or_create(&vec![(
                "result".to_string(),
                if ok { "ok" } else { "error" }.to_string(),
            )])
            .inc();
    }

    /// Counts a pass that did not plan because a store it reads is re-listing.
    pub fn pass_waiting(&self) {
        self.passes
            .get_or_create(&vec![("result".to_string(), "stale".to_string())])
            .inc();
    }

    /// Counts the executed actions by outcome.
    pub fn record(&self, results: &[ActionResult]) {
        for r in results {
            let outcome = match r.outcome {
                ActionOutcome::Applied => "applied",
                ActionOutcome::Failed { .. } => "failed",
                ActionOutcome::Skipped => "skipped",
                ActionOutcome::BackingOff => "backing_off",
            };
            self.action(r.action, outcome);
        }
    }

    /// Counts one action with an outcome.
    pub fn action(&self, action: &str, outcome: &str) {
        self.actions
            .get_or_create(&vec![
                ("action".to_string(), action.to_string()),
                ("outcome".to_string(), outcome.to_string()),
            ])
            .inc();
    }

    /// Marks the controller ready (watches synced) or not.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
        self.progress(|p| p.synced = ready.then(Instant::now));
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.readiness().is_ok()
    }

    /// The metrics in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode_registry(&mut out, &self.registry);
        // The summaries `prometheus_client` has no type for, then the end of the exposition.
        self.karpenter.encode_summaries(&mut out);
        let _ = encode_eof(&mut out);
        out
    }
}

/// One HTTP answer: status and body for a path.
pub fn respond(metrics: &Metrics, path: &str) -> (u16, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    match path {
        "/metrics" => (
            200,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.render(),
        ),
        "/healthz" | "/livez" => match metrics.health() {
            Ok(()) => (200, TEXT, "ok\n".to_string()),
            Err(why) => (503, TEXT, format!("{why}\n")),
        },
        "/readyz" => match metrics.readiness() {
            Ok(()) => (200, TEXT, "ok\n".to_string()),
            Err(why) => (503, TEXT, format!("{why}\n")),
        },
        _ => (
            404,
            TEXT,
            "not found: try /metrics, /healthz or /readyz\n".to_string(),
        ),
    }
}

/// Binds `addr` (fails fast on a bad address or a port in use).
pub async fn bind(addr: &str) -> Result<TcpListener> {
    let parsed: SocketAddr = addr.parse().map_err(|e| {
        Error::usage(format!(
            "--metrics-bind-address {addr:?} is not an address:port ({e}), e.g. 0.0.0.0:8080"
        ))
    })?;
    TcpListener::bind(parsed)
        .await
        .map_err(|e| Error::usage(format!("--metrics-bind-address {addr}: cannot listen: {e}")))
}

/// Serves `/metrics`, `/healthz` and `/readyz` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, "serving /metrics, /healthz, /readyz");
    }
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let (code, content_type, body) = respond(&metrics, req.uri().path());
                let response = Response::builder()
                    .status(code)
                    .header("content-type", content_type)
                    .body(Full::new(Bytes::from(body)));
                async move { response }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await
            {
                debug!(error = %e, "metrics connection");
            }
        });
    }
}

type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;
type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

/// Core's duration buckets (`pkg/metrics/constants.go` `DurationBuckets`), so dashboards'
/// `le` values match.
const DURATION_BUCKETS: [f64; 45] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0, 120.0, 150.0, 300.0, 450.0, 600.0,
];

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

fn lifetime_histogram() -> Histogram {
    Histogram::new(tm::LIFETIME_BUCKETS)
}

mod summary;

/// Karpenter's metrics for what this controller does (names, label keys and values from core;
/// see `controller::karpenter_metrics`, which decides every value; this only records).
pub struct KarpenterMetrics {
    counters: Vec<(km::Counter, Family<Labels, Counter>)>,
    /// `karpenter_nodepools_usage`.
    pub nodepool_usage: Family<Labels, FloatGauge>,
    /// `karpenter_nodepools_limit`.
    pub nodepool_limit: Family<Labels, FloatGauge>,
    /// `karpenter_pods_state`.
    pub pods_state: Family<Labels, Gauge>,
    /// The per-node gauges (`karpenter_nodes_allocatable` ...).
    nodes: Vec<(km::NodeGauge, Family<Labels, FloatGauge>)>,
    /// `karpenter_cluster_utilization_percent`.
    pub cluster_utilization: Family<Labels, FloatGauge>,
    /// `karpenter_scheduler_scheduling_duration_seconds{controller}` (core
    /// `provisioning/scheduling/metrics.go`).
    pub scheduling_duration: HistogramFamily,
    /// `karpenter_provisioner_scheduling_duration_seconds`: the name before core v1, which
    /// published dashboards still query.
    pub provisioner_scheduling_duration: Histogram,
    /// `karpenter_nodes_termination_duration_seconds{nodepool}` (a summary, rendered apart).
    pub termination_duration: summary::Summary,
    /// `karpenter_nodes_lifetime_duration_seconds{nodepool}`.
    pub lifetime_duration: HistogramFamily,
}

fn owned(labels: &km::LabelSet) -> Labels {
    labels
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

impl KarpenterMetrics {
    fn register(registry: &mut Registry) -> KarpenterMetrics {
        let counters: Vec<(km::Counter, Family<Labels, Counter>)> = km::Counter::ALL
            .iter()
            .map(|c| (*c, Family::default()))
            .collect();
        for (c, family) in &counters {
            registry.register(c.name(), c.help(), family.clone());
        }
        let m = KarpenterMetrics {
            counters,
            nodepool_usage: Family::default(),
            nodepool_limit: Family::default(),
            pods_state: Family::default(),
            nodes: km::NodeGauge::ALL
                .iter()
                .map(|g| (*g, Family::default()))
                .collect(),
            cluster_utilization: Family::default(),
            scheduling_duration: Family::new_with_constructor(duration_histogram),
            provisioner_scheduling_duration: duration_histogram(),
            termination_duration: summary::Summary::new(
                &tm::SUMMARY_QUANTILES,
                Duration::from_secs(tm::SUMMARY_MAX_AGE_SECS),
            ),
            lifetime_duration: Family::new_with_constructor(lifetime_histogram),
        };
        registry.register(
            "nodepools_usage",
            "Resources provisioned for a nodepool, by nodepool and resource type",
            m.nodepool_usage.clone(),
        );
        registry.register(
            "nodepools_limit",
            "Limits of a nodepool, by nodepool and resource type",
            m.nodepool_limit.clone(),
        );
        registry.register(
            "pods_state",
            "Pod state: 1 per pod, labelled by name, namespace, owner, node, nodepool, zone, architecture, capacity type, instance type, phase and readiness",
            m.pods_state.clone(),
        );
        for (g, family) in &m.nodes {
            registry.register(g.name(), g.help(), family.clone());
        }
        registry.register(
            "cluster_utilization_percent",
            "Utilization of allocatable resources by pod requests",
            m.cluster_utilization.clone(),
        );
        registry.register(
            "scheduler_scheduling_duration_seconds",
            "Duration of scheduling simulations used for provisioning and disruption, in seconds",
            m.scheduling_duration.clone(),
        );
        registry.register(
            "provisioner_scheduling_duration_seconds",
            "Duration of scheduling simulations, in seconds (the name before Karpenter v1)",
            m.provisioner_scheduling_duration.clone(),
        );
        registry.register(
            Observed::NodesLifetimeDuration.name(),
            Observed::NodesLifetimeDuration.help(),
            m.lifetime_duration.clone(),
        );
        m
    }

    /// Records what the applied actions of a pass observed.
    pub fn observe(&self, observations: &[Observation]) {
        for o in observations {
            match o.metric {
                Observed::NodesTerminationDuration => self
                    .termination_duration
                    .observe(&owned(&o.labels), o.seconds),
                Observed::NodesLifetimeDuration => self
                    .lifetime_duration
                    .get_or_create(&owned(&o.labels))
                    .observe(o.seconds),
            }
        }
    }

    /// Appends the summaries in the OpenMetrics text format.
    fn encode_summaries(&self, out: &mut String) {
        let o = Observed::NodesTerminationDuration;
        self.termination_duration.encode(
            &format!("karpenter_{}", o.name()),
            &format!("{}.", o.help()),
            out,
        );
    }

    /// Adds what the applied actions of a pass counted.
    pub fn count(&self, counts: &[Count]) {
        for c in counts {
            if let Some((_, family)) = self.counters.iter().find(|(k, _)| *k == c.counter) {
                family.get_or_create(&owned(&c.labels)).inc_by(c.by);
            }
        }
    }

    /// Replaces the gauges with a pass's (series of objects gone since disappear).
    pub fn set_gauges(&self, g: &Gauges) {
        for (family, rows) in [
            (&self.nodepool_usage, &g.nodepool_usage),
            (&self.nodepool_limit, &g.nodepool_limit),
        ] {
            family.clear();
            for (labels, value) in rows {
                family.get_or_create(&owned(labels)).set(*value);
            }
        }
        self.pods_state.clear();
        for labels in &g.pods_state {
            self.pods_state.get_or_create(&owned(labels)).set(1);
        }
        for (_, family) in &self.nodes {
            family.clear();
        }
        for (gauge, labels, value) in &g.nodes {
            if let Some((_, family)) = self.nodes.iter().find(|(k, _)| k == gauge) {
                family.get_or_create(&owned(labels)).set(*value);
            }
        }
        self.cluster_utilization.clear();
        for (labels, value) in &g.cluster_utilization {
            self.cluster_utilization
                .get_or_create(&owned(labels))
                .set(*value);
        }
    }

    /// One scheduling simulation (a plan) took this long.
    pub fn scheduled(&self, seconds: f64) {
        self.scheduling_duration
            .get_or_create(&vec![("controller".to_string(), "provisioner".to_string())])
            .observe(seconds);
        self.provisioner_scheduling_duration.observe(seconds);
    }
}
