//! Issue 24 rule 7, `doctor`'s half: a watch failing for longer than the bound is published by
//! the leader on its Lease (riding on the renewals, its value changing only with the health)
//! and `doctor` (live) reports it, naming the resource, the error and since when. Against the
//! in-memory API with the pod list failing, on paused tokio time.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeApi;
use karpenter_capi::controller::Config;
use karpenter_capi::diagnose::watches::{FailingWatch, decode};
use karpenter_capi::diagnose::{self, AccessSource, Cause, Severity};
use karpenter_capi::kube::leader::{Gate, LeaseLock};
use karpenter_capi::kube::metrics::Metrics;
use karpenter_capi::kube::reconciler::{Context, LeaseTiming, Window, lead, run_continuous};
use karpenter_capi::vocab::keys::WATCH_HEALTH_ANNOTATION;
use karpenter_capi::vocab::names::{LEASE_NAME, WORKLOAD_IDENTITY};
use tokio::sync::watch;

use crate::shell_continuous::world;

/// The controller's failing watches as its Lease says, if it says.
fn published(fake: &FakeApi) -> Option<Vec<FailingWatch>> {
    let lease = fake.get(
        "coordination.k8s.io",
        "leases",
        WORKLOAD_IDENTITY,
        LEASE_NAME,
    )?;
    let value = lease["metadata"]["annotations"][WATCH_HEALTH_ANNOTATION].as_str()?;
    Some(decode(value).expect("the annotation decodes"))
}

fn lease_updates(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "PUT" && r.path.contains("/leases/"))
        .count()
}

#[tokio::test(start_paused = true)]
async fn a_watch_failing_past_the_bound_is_on_the_lease_and_doctor_names_it() {
    let fake = FakeApi::new();
    fake.seed_world(&world());
    let client = fake.client();
    let mut ctx = Context::new(
        karpenter_capi::kube::list::Clients {
            workload: client.clone(),
            management: client.clone(),
        },
        Config::default(),
        Some("capi".to_string()),
        false,
    );
    let bound = Duration::from_secs(60);
    ctx.metrics = Arc::new(Metrics::new().with_watch_failure_bound(bound));
    let ctx = Arc::new(ctx);
    let (stop_tx, stop_rx) = watch::channel(false);
    let (lead_tx, lead_rx) = watch::channel(false);
    let leader = tokio::spawn(lead(
        LeaseLock::new(client.clone(), WORKLOAD_IDENTITY, "ctl-1".to_string()),
        ctx.metrics.clone(),
        lead_tx,
        Gate::elected(),
        LeaseTiming::default(),
        stop_rx.clone(),
    ));
    let window = Window {
        idle: Duration::from_millis(30),
        max: Duration::from_millis(200),
        resync: Duration::from_secs(10),
    };
    let task = tokio::spawn(run_continuous(ctx.clone(), window, lead_rx, stop_rx));
    while ctx.metrics.readiness().is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(published(&fake), None, "healthy: no annotation");

    fake.fail("GET", "/api/v1/pods", 500, usize::MAX);
    let failed_at = jiff::Timestamp::now();
    fake.expire_watches("", "pods");
    // Within the bound: several renewals, still nothing published.
    tokio::time::sleep(bound / 2).await;
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path == "/api/v1/pods" && r.code == 500),
        "the re-list fails"
    );
    assert_eq!(published(&fake), None, "within the bound");

    // Past the bound (plus a renewal): the Lease names the watch, its error and since when.
    tokio::time::sleep(bound / 2 + Duration::from_secs(6)).await;
    let failing = published(&fake).expect("published past the bound");
    assert_eq!(failing.len(), 1, "{failing:?}");
    assert_eq!(failing[0].resource, "workload cluster pods");
    assert!(
        failing[0].error.contains("etcdserver: request timed out"),
        "{failing:?}"
    );
    let lag = failing[0].since.as_second() - failed_at.as_second();
    assert!(
        (0..=5).contains(&lag),
        "since {} vs {failed_at}",
        failing[0].since
    );
    // Renewals go on at their cadence; the value does not churn with them.
    let updates = lease_updates(&fake);
    tokio::time::sleep(Duration::from_secs(16)).await;
    assert_eq!(published(&fake), Some(failing.clone()));
    let renewals = lease_updates(&fake) - updates;
    assert!(
        (3..=4).contains(&renewals),
        "one write per 5 s renewal, none of its own: {renewals} in 16 s"
    );

    // The watch recovers: the next renewal takes the annotation off.
    fake.clear_faults();
    let mut waited = Duration::ZERO;
    while published(&fake).is_some() {
        assert!(
            waited < Duration::from_secs(120),
            "still published: {:?}; readiness {:?}; pod requests {:?}",
            published(&fake),
            ctx.metrics.readiness(),
            fake.requests()
                .iter()
                .filter(|r| r.path.contains("pods"))
                .map(|r| (r.method.clone(), r.query.clone(), r.code))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        waited += Duration::from_secs(1);
    }

    // It fails again, past the bound; then the controller stops dead (no release, as a
    // process killed or hung holding the Lease would) and the API recovers for `doctor`.
    fake.fail("GET", "/api/v1/pods", 500, usize::MAX);
    fake.expire_watches("", "pods");
    tokio::time::sleep(bound + Duration::from_secs(6)).await;
    let failing = published(&fake).expect("published again");
    task.abort();
    leader.abort();
    fake.clear_faults();
    drop(stop_tx);

    // doctor, live, reads it back as one error per failing watch.
    let now = jiff::Timestamp::now();
    let loaded = karpenter_capi::input::load_live(&client, &client, "User/test", None, now, true)
        .await
        .unwrap();
    let report = diagnose::run(
        &loaded.snapshot,
        now,
        &Config::default(),
        AccessSource::RbacObjects,
    );
    let watch: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.cause == Cause::WatchFailing)
        .collect();
    assert_eq!(watch.len(), 1, "{:#?}", report.findings);
    assert_eq!(watch[0].severity, Severity::Error);
    assert_eq!(watch[0].subject, "Lease/karpenter-capi/karpenter-capi");
    assert!(
        watch[0].message.starts_with(&format!(
            "the controller's watch of workload cluster pods has been failing since {} (",
            failing[0].since
        )),
        "{}",
        watch[0].message
    );
    assert!(
        watch[0].message.contains("etcdserver: request timed out"),
        "{}",
        watch[0].message
    );
}
