//! Continuous mode under failure (issue 24), against the in-memory API with the failure
//! injected.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeApi;
use karpenter_capi::kube::leader::{DRY_RUN_LEASE_NAME, Gate, LEASE_NAME};
use karpenter_capi::kube::metrics::Metrics;
use karpenter_capi::kube::reconciler::{LeaseTiming, lead};
use tokio::sync::watch;

async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn run_args(argv: &[&str]) -> karpenter_capi::cli::RunArgs {
    let cli = karpenter_capi::cli::try_parse_from(argv).unwrap();
    match cli.command {
        karpenter_capi::cli::Command::Run(args) => args,
        other => panic!("not run: {other:?}"),
    }
}

fn holder(fake: &FakeApi, lease: &str) -> Option<String> {
    fake.get("coordination.k8s.io", "leases", "kube-system", lease)
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
}

/// Rule 6: `run --dry-run --leader-elect` competes for its own Lease. A dry-run replica started
/// first, and a live one beside it: both lead (each its own Lease), the live controller is never
/// left idle, and the live Lease names only the live replica throughout.
#[tokio::test]
async fn a_dry_run_replica_never_takes_the_live_controllers_lease() {
    let fake = FakeApi::new();
    let dry = run_args(&[
        "kubectl-karpenter_capi",
        "run",
        "--dry-run",
        "--leader-elect",
    ]);
    let live = run_args(&["kubectl-karpenter_capi", "run", "--leader-elect"]);
    let timing = LeaseTiming {
        interval: Duration::from_millis(100),
        deadline: Duration::from_millis(500),
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut replicas = Vec::new();
    for (args, identity) in [(&dry, "dry"), (&live, "live")] {
        let lock = karpenter_capi::cmd::run::lease_lock(fake.client(), args, identity.to_string());
        let gate = Gate::elected();
        let (tx, rx) = watch::channel(false);
        let task = tokio::spawn(lead(
            lock,
            Arc::new(Metrics::new()),
            tx,
            gate.clone(),
            timing,
            stop_rx.clone(),
        ));
        // The dry run gets a head start: with one Lease it would have won.
        if identity == "dry" {
            eventually("the dry run to lead", || *rx.borrow()).await;
        }
        replicas.push((gate, rx, task));
    }
    eventually("the live replica to lead", || *replicas[1].1.borrow()).await;
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            replicas
                .iter()
                .all(|(gate, rx, _)| *rx.borrow() && gate.is_open())
        );
        assert_eq!(holder(&fake, LEASE_NAME).as_deref(), Some("live"));
        assert_eq!(holder(&fake, DRY_RUN_LEASE_NAME).as_deref(), Some("dry"));
    }
    assert!(
        fake.requests()
            .iter()
            .filter(|r| r.method != "GET"
                && (r.path.ends_with(&format!("/leases/{LEASE_NAME}"))
                    || r.body["metadata"]["name"] == LEASE_NAME))
            .all(|r| r.body["spec"]["holderIdentity"] == "live"),
        "the dry run never wrote the live Lease"
    );
    stop_tx.send_replace(true);
    for (_, _, task) in replicas {
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap();
    }
    // Both released their own Lease on the way out.
    assert_eq!(holder(&fake, LEASE_NAME), None);
    assert_eq!(holder(&fake, DRY_RUN_LEASE_NAME), None);
}

