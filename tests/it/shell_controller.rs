//! The continuous controller against the in-memory API (watch streams included): it syncs,
//! reports ready, reconciles on change, acts only as leader, and stops cleanly; plus the Lease
//! protocol and the metrics endpoint.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeApi;
use karpenter_capi::controller::Config;
use karpenter_capi::kube::leader::{Leadership, LeaseLock};
use karpenter_capi::kube::list::Clients;
use karpenter_capi::kube::metrics::{self, Metrics};
use karpenter_capi::kube::reconciler::{Context, Window, run_continuous};
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{NodeClass, NodePool, Object, Pod};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::shell_continuous::c3_8;

/// A node class, a NodePool and one empty member MachineDeployment `capi/c3-8`.
fn world() -> World {
    World::empty()
        .add(NodeClass::new("default"))
        .add(NodePool::new("default"))
        .add(c3_8("capi"))
}

fn pending_pod(name: &str) -> Value {
    Pod::new("default", name)
        .image("pause")
        .cpu("3")
        .pending()
        .build()
}

fn window() -> Window {
    Window {
        idle: Duration::from_millis(30),
        max: Duration::from_millis(200),
        resync: Duration::from_millis(300),
    }
}

async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn start(
    fake: &FakeApi,
    leading: bool,
) -> (
    Arc<Context>,
    watch::Sender<bool>,
    watch::Sender<bool>,
    tokio::task::JoinHandle<karpenter_capi::Result<()>>,
) {
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let ctx = Arc::new(Context::new(
        clients,
        Config::default(),
        Some("capi".to_string()),
        false,
    ));
    let (lead_tx, lead_rx) = watch::channel(leading);
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(run_continuous(ctx.clone(), window(), lead_rx, stop_rx));
    (ctx, lead_tx, stop_tx, task)
}

fn replicas(fake: &FakeApi) -> Value {
    fake.get("cluster.x-k8s.io", "machinedeployments", "capi", "c3-8")
        .unwrap()["spec"]["replicas"]
        .clone()
}

#[tokio::test(start_paused = true)]
async fn continuous_mode_reconciles_on_watch_events_and_stops_cleanly() {
    let fake = FakeApi::new();
    fake.seed_world(&world());
    let (ctx, _lead, stop, task) = start(&fake, true);
    eventually("ready", || ctx.metrics.is_ready()).await;
    // The first pass after the sync marks the node class Ready; no pods, no claims.
    eventually("node class Ready", || {
        fake.get(
            "karpenter.cluster.x-k8s.io",
            "clusterapinodeclasses",
            "",
            "default",
        )
        .unwrap()["status"]["conditions"][0]["status"]
            == "True"
    })
    .await;
    assert!(fake.all("karpenter.sh", "nodeclaims").is_empty());

    // A pod turns pending: the watch wakes the loop, which provisions for it.
    fake.seed(pending_pod("big-0"));
    eventually("a NodeClaim", || {
        fake.all("karpenter.sh", "nodeclaims").len() == 1
    })
    .await;
    eventually("replicas 1", || replicas(&fake) == 1).await;

    // More events and resyncs do not create a second claim or overshoot replicas.
    fake.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-0"}, "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}}));
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(fake.all("karpenter.sh", "nodeclaims").len(), 1);
    assert_eq!(replicas(&fake), 1);
    let text = ctx.metrics.render();
    assert!(
        text.contains(
            "karpenter_capi_actions_total{action=\"createNodeClaim\",outcome=\"applied\"} 1"
        ),
        "{text}"
    );
    assert!(text.contains("karpenter_capi_pending_pods 1"), "{text}");

    stop.send_replace(true);
    let result = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("stops promptly")
        .unwrap();
    assert!(result.is_ok(), "{result:?}");
    assert!(!ctx.metrics.is_ready());
}

#[tokio::test(start_paused = true)]
async fn a_follower_observes_but_never_writes() {
    let fake = FakeApi::new();
    fake.seed_world(&world());
    fake.seed(pending_pod("big-0"));
    let (ctx, lead, stop, task) = start(&fake, false);
    eventually("ready", || ctx.metrics.is_ready()).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(fake.writes(), Vec::<String>::new());
    // Becoming leader: it acts on the next pass.
    lead.send_replace(true);
    eventually("a NodeClaim", || {
        fake.all("karpenter.sh", "nodeclaims").len() == 1
    })
    .await;
    stop.send_replace(true);
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn continuous_mode_retries_when_a_crd_is_missing_and_stops_on_signal() {
    let fake = FakeApi::new().without("nodepools");
    let (ctx, _lead, stop, task) = start(&fake, true);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!ctx.metrics.is_ready());
    assert!(
        ctx.metrics
            .render()
            .contains("karpenter_capi_errors_total{stage=\"observe\"} 1"),
        "{}",
        ctx.metrics.render()
    );
    stop.send_replace(true);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("stops during the backoff")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn lease_is_acquired_renewed_contended_taken_over_and_released() {
    let fake = FakeApi::new();
    let a = LeaseLock::new(fake.client(), "kube-system", "a".to_string());
    let b = LeaseLock::new(fake.client(), "kube-system", "b".to_string());
    let t0: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
    let at = |s: i64| t0.checked_add(jiff::SignedDuration::from_secs(s)).unwrap();

    assert_eq!(a.try_acquire(t0).await.unwrap(), Leadership::Leading);
    let lease = fake
        .get(
            "coordination.k8s.io",
            "leases",
            "kube-system",
            "karpenter-capi",
        )
        .unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "a");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 15);
    assert_eq!(lease["spec"]["leaseTransitions"], 0);

    assert_eq!(
        b.try_acquire(at(5)).await.unwrap(),
        Leadership::Following("a".to_string())
    );
    assert_eq!(a.try_acquire(at(5)).await.unwrap(), Leadership::Leading);
    assert_eq!(
        b.try_acquire(at(19)).await.unwrap(),
        Leadership::Following("a".to_string()),
        "renewed at 5s, valid to 20s"
    );
    // a stops renewing: b takes over after expiry, with a transition.
    assert_eq!(b.try_acquire(at(21)).await.unwrap(), Leadership::Leading);
    let lease = fake
        .get(
            "coordination.k8s.io",
            "leases",
            "kube-system",
            "karpenter-capi",
        )
        .unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "b");
    assert_eq!(lease["spec"]["leaseTransitions"], 1);
    assert_eq!(
        a.try_acquire(at(22)).await.unwrap(),
        Leadership::Following("b".to_string())
    );
    // Updates are guarded by resourceVersion: a racing writer makes us a follower, not a second leader.
    fake.fail("PUT", "/leases/karpenter-capi", 409, 1);
    assert!(matches!(
        b.try_acquire(at(23)).await.unwrap(),
        Leadership::Following(_)
    ));
    // Release: a standby takes over at once.
    b.release().await.unwrap();
    assert_eq!(a.try_acquire(at(24)).await.unwrap(), Leadership::Leading);
    let puts = fake
        .requests()
        .iter()
        .filter(|r| r.method == "PUT")
        .all(|r| r.body["metadata"]["resourceVersion"].is_string());
    assert!(puts, "every update carries the resourceVersion read");
}

#[tokio::test]
async fn metrics_endpoint_serves_metrics_health_and_readiness() {
    let m = Arc::new(Metrics::new());
    m.action("createNodeClaim", "applied");
    m.pass(true);
    m.plan_duration.observe(0.004);
    let listener = metrics::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let server = tokio::spawn(metrics::serve(listener, m.clone(), async move {
        let _ = stop_rx.wait_for(|s| *s).await;
    }));
    let get = |path: &'static str| async move {
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            )
            .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        })
        .await
        .unwrap()
    };
    assert!(get("/healthz").await.starts_with("HTTP/1.1 200 OK"));
    assert!(get("/readyz").await.starts_with("HTTP/1.1 503"));
    m.set_ready(true);
    assert!(get("/readyz").await.starts_with("HTTP/1.1 200 OK"));
    let body = get("/metrics").await;
    assert!(
        body.contains(
            "karpenter_capi_actions_total{action=\"createNodeClaim\",outcome=\"applied\"} 1"
        ),
        "{body}"
    );
    assert!(
        body.contains("karpenter_capi_reconcile_passes_total{result=\"ok\"} 1"),
        "{body}"
    );
    assert!(
        body.contains("karpenter_capi_plan_duration_seconds_count 1"),
        "{body}"
    );
    assert!(get("/nope").await.starts_with("HTTP/1.1 404"));
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(2), server)
        .await
        .unwrap()
        .unwrap();
    let bad = metrics::bind("nonsense").await.unwrap_err().to_string();
    assert_eq!(
        bad,
        "--metrics-bind-address \"nonsense\" is not an address:port (invalid socket address syntax), e.g. 0.0.0.0:8080"
    );
}

#[tokio::test]
async fn continuous_mode_watches_two_clusters() {
    let workload = FakeApi::new();
    let management = FakeApi::new();
    let (capi, rest) = world().split_management();
    management.seed_world(&capi);
    workload.seed_world(&rest);
    let clients = Clients {
        workload: workload.client(),
        management: management.client(),
    };
    let ctx = Arc::new(Context::new(
        clients,
        Config::default(),
        Some("capi".to_string()),
        false,
    ));
    let (_lead, lead_rx) = watch::channel(true);
    let (stop, stop_rx) = watch::channel(false);
    let task = tokio::spawn(run_continuous(ctx.clone(), window(), lead_rx, stop_rx));
    eventually("ready", || ctx.metrics.is_ready()).await;
    workload.seed(pending_pod("big-0"));
    eventually("a NodeClaim on the workload cluster", || {
        workload.all("karpenter.sh", "nodeclaims").len() == 1
    })
    .await;
    eventually("replicas 1 on the management cluster", || {
        replicas(&management) == 1
    })
    .await;
    assert!(
        workload
            .requests()
            .iter()
            .all(|r| !r.path.contains("/apis/cluster.x-k8s.io/"))
    );
    assert!(
        management.requests().iter().any(
            |r| r.query.contains("watch=true") && r.path.ends_with("/namespaces/capi/machines")
        )
    );
    stop.send_replace(true);
    task.await.unwrap().unwrap();
}

/// A renewal that never returns cannot keep a replica leading: leadership and the write gate
/// drop by timer when the last successful renewal's validity runs out, before the Lease could
/// expire for the others; each hung attempt is abandoned at the deadline and retried; a write
/// attempted then is refused unsent. (Shortened timings with the production ratios: 2 s Lease,
/// renewal every 0.5 s, each bounded by 1 s.)
#[tokio::test(start_paused = true)]
async fn a_hung_lease_renewal_drops_leadership_within_the_lease_duration() {
    use karpenter_capi::controller::write::Write;
    use karpenter_capi::kube::apply::Executor;
    use karpenter_capi::kube::leader::{Gate, LEASE_DURATION, RENEW_DEADLINE};
    use karpenter_capi::kube::reconciler::{LeaseTiming, lead};
    use karpenter_capi::vocab::kinds::NODE;

    assert!(RENEW_DEADLINE < LEASE_DURATION);
    let lease = Duration::from_secs(2);
    let fake = FakeApi::new();
    let lock = LeaseLock::new(fake.client(), "kube-system", "a".to_string()).with_duration(lease);
    let gate = Gate::elected();
    assert!(!gate.is_open(), "closed before the first renewal");
    let metrics = Arc::new(Metrics::new());
    let (lead_tx, lead_rx) = watch::channel(false);
    let (stop_tx, stop_rx) = watch::channel(false);
    let timing = LeaseTiming {
        interval: Duration::from_millis(500),
        deadline: Duration::from_secs(1),
    };
    let task = tokio::spawn(lead(
        lock,
        metrics.clone(),
        lead_tx,
        gate.clone(),
        timing,
        stop_rx,
    ));
    eventually("leadership", || *lead_rx.borrow()).await;
    assert!(gate.is_open());
    // From now on the API server swallows every renewal.
    fake.hang("PUT", "/leases/karpenter-capi", usize::MAX);
    let hung = tokio::time::Instant::now();
    let until = gate.valid_until().unwrap();
    assert!(
        until < hung + lease,
        "the gate closes {:?} after the hang, within the {lease:?} lease",
        until - hung
    );
    eventually("leadership to drop", || !*lead_rx.borrow()).await;
    assert!(
        tokio::time::Instant::now() >= until,
        "dropped by the timer, not earlier"
    );
    assert!(!gate.is_open());
    assert_eq!(metrics.leader.get(), 0);
    eventually("a second hung attempt (the first was abandoned)", || {
        fake.requests()
            .iter()
            .filter(|r| r.method == "PUT" && r.code == 0)
            .count()
            >= 2
    })
    .await;
    // A write now is refused before it is sent.
    let client = fake.client();
    let executor = Executor::new(Clients {
        workload: client.clone(),
        management: client,
    })
    .with_gate(gate.clone());
    fake.clear_log();
    let err = executor
        .execute_write(
            &Write::Delete {
                cluster: karpenter_capi::error::ClusterRole::Workload,
                resource: NODE,
                namespace: String::new(),
                name: "n".to_string(),
                uid: None,
                grace_period_seconds: None,
            },
            jiff::Timestamp::now(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "not written: this replica no longer holds the leader Lease"
    );
    assert!(fake.requests().iter().all(|r| r.path.contains("/leases/")));
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
}

/// `/healthz` on the acting replica fails once no reconcile pass has completed within the
/// bound (here a pass hangs on a write that never returns); on a follower it stays healthy.
#[tokio::test(start_paused = true)]
async fn healthz_fails_when_the_reconcile_loop_is_wedged() {
    let fake = FakeApi::new();
    fake.seed_world(&world());
    fake.seed(pending_pod("p-0"));
    // Creating the NodeClaim never returns: the first pass is stuck.
    fake.hang("POST", "/nodeclaims", usize::MAX);
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let mut ctx = Context::new(clients, Config::default(), Some("capi".to_string()), false);
    ctx.metrics = Arc::new(
        Metrics::new().with_liveness_bounds(Duration::from_millis(800), Duration::from_secs(60)),
    );
    let ctx = Arc::new(ctx);
    let (_lead_tx, lead_rx) = watch::channel(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(run_continuous(ctx.clone(), window(), lead_rx, stop_rx));
    eventually("ready", || ctx.metrics.is_ready()).await;
    assert_eq!(metrics::respond(&ctx.metrics, "/healthz").0, 200);
    eventually("the POST to hang", || {
        fake.requests()
            .iter()
            .any(|r| r.method == "POST" && r.code == 0)
    })
    .await;
    eventually("/healthz to fail", || {
        metrics::respond(&ctx.metrics, "/healthz").0 == 503
    })
    .await;
    let (_, _, body) = metrics::respond(&ctx.metrics, "/healthz");
    assert!(
        body.starts_with("no reconcile pass completed for ") && body.contains("the loop is stuck"),
        "{body}"
    );
    // Readiness is about the caches only.
    assert_eq!(metrics::respond(&ctx.metrics, "/readyz").0, 200);
    // A follower (not acting) is healthy without passes.
    ctx.metrics.set_acting(false);
    assert_eq!(metrics::respond(&ctx.metrics, "/healthz").0, 200);
    stop_tx.send_replace(true);
    task.abort();
}

/// A follower is healthy while its lease loop runs, and `/healthz` fails once that loop is stale
/// (here wedged on a Lease read that never returns, with a per-attempt deadline longer than the
/// bound), so the kubelet restarts a replica that could never take over.
#[tokio::test(start_paused = true)]
async fn healthz_fails_on_a_follower_whose_lease_loop_is_stale() {
    use karpenter_capi::kube::leader::Gate;
    use karpenter_capi::kube::reconciler::{LeaseTiming, lead};

    let fake = FakeApi::new();
    // Another replica holds the Lease: this one follows.
    let other = LeaseLock::new(fake.client(), "kube-system", "other".to_string());
    assert!(matches!(
        other.try_acquire(jiff::Timestamp::now()).await.unwrap(),
        Leadership::Leading
    ));
    let lock = LeaseLock::new(fake.client(), "kube-system", "b".to_string());
    let metrics = Arc::new(
        Metrics::new().with_liveness_bounds(Duration::from_secs(60), Duration::from_secs(1)),
    );
    let (lead_tx, lead_rx) = watch::channel(false);
    let (stop_tx, stop_rx) = watch::channel(false);
    let timing = LeaseTiming {
        interval: Duration::from_millis(200),
        deadline: Duration::from_secs(60),
    };
    let task = tokio::spawn(lead(
        lock,
        metrics.clone(),
        lead_tx,
        Gate::elected(),
        timing,
        stop_rx,
    ));
    eventually("a follower's attempt", || {
        fake.requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.ends_with("/leases/karpenter-capi"))
            .count()
            >= 3
    })
    .await;
    assert!(!*lead_rx.borrow(), "following, not leading");
    assert_eq!(metrics.leader.get(), 0);
    assert_eq!(
        metrics::respond(&metrics, "/healthz"),
        (200, "text/plain; charset=utf-8", "ok\n".to_string())
    );
    // From now on every Lease read hangs: the loop's next attempt never completes.
    fake.hang("GET", "/leases/karpenter-capi", usize::MAX);
    eventually("/healthz to fail", || {
        metrics::respond(&metrics, "/healthz").0 == 503
    })
    .await;
    let (_, _, body) = metrics::respond(&metrics, "/healthz");
    let idle = body
        .strip_prefix("the leader-election loop made no attempt for ")
        .and_then(|r| r.strip_suffix("s (bound 1s)\n"))
        .and_then(|s| s.parse::<u64>().ok());
    assert!(idle.is_some_and(|s| s >= 1), "{body}");
    // Readiness stays about the caches (none synced here), not the Lease.
    assert_eq!(metrics::respond(&metrics, "/readyz").0, 503);
    stop_tx.send_replace(true);
    task.abort();
}
