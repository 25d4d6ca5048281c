//! Continuous mode under failure (issue 24), against the in-memory API with the failure
//! injected: a dry-run replica beside a live one, finalizer edits racing another writer, one
//! failing eviction among healthy work, a hung Lease renewal, stale stores, and watch health.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeApi;
use karpenter_capi::kube::leader::{DRY_RUN_LEASE_NAME, Gate, LEASE_NAME};
use karpenter_capi::kube::metrics::Metrics;
use karpenter_capi::kube::reconciler::{LeaseTiming, lead};
use serde_json::{Value, json};
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

const WORLD: &str = r#"
apiVersion: karpenter.cluster.x-k8s.io/v1alpha1
kind: ClusterAPINodeClass
metadata: {name: default}
spec: {}
status:
  conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2026-11-30T10:00:00Z"}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}
      requirements: []
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: c3-8
  namespace: capi
  labels: {node.cluster.x-k8s.io/karpenter-member: ""}
  annotations:
    capacity.cluster-autoscaler.kubernetes.io/cpu: "4"
    capacity.cluster-autoscaler.kubernetes.io/memory: 8G
    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=c3-8
    capacity.cluster-autoscaler.kubernetes.io/price: "0.1"
spec: {clusterName: capi, replicas: 0}
"#;

fn clients(fake: &FakeApi) -> karpenter_capi::kube::list::Clients {
    let client = fake.client();
    karpenter_capi::kube::list::Clients {
        workload: client.clone(),
        management: client,
    }
}

/// One `run --once` pass against the fake; the plan's (action, target) pairs.
async fn once(fake: &FakeApi) -> Vec<(String, String)> {
    let ctx = karpenter_capi::kube::reconciler::Context::new(
        clients(fake),
        karpenter_capi::controller::Config::default(),
        Some("capi".to_string()),
        false,
    );
    let c = clients(fake);
    let snapshot = karpenter_capi::kube::list::live_snapshot_in(
        &c.workload,
        &c.management,
        Some("capi"),
        None,
    )
    .await
    .unwrap();
    let report = karpenter_capi::kube::reconciler::pass(&ctx, &snapshot).await;
    assert!(
        report.results.iter().all(|r| !r.failed()),
        "{:?}",
        report.results
    );
    report
        .plan
        .actions
        .iter()
        .map(|a| (a.name().to_string(), a.target().to_string()))
        .collect()
}

fn finalizers(fake: &FakeApi, claim: &str) -> Option<Value> {
    fake.get("karpenter.sh", "nodeclaims", "", claim)
        .map(|c| c["metadata"]["finalizers"].clone())
}

fn claim(name: &str, extra: Value) -> Value {
    let mut c = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
                 "requirements": [], "resources": {"requests": {"cpu": "1"}}}
    });
    common::merge(&mut c, extra);
    c
}

/// Rule 5, removal: a deleting claim's finalizer comes off by a read-modify-write carrying the
/// resourceVersion. Another controller's finalizer, there when the pass read the cluster, and
/// one added between the executor's read and its write, both survive; the claim stays.
#[tokio::test]
async fn removing_our_finalizer_keeps_a_finalizer_added_between_read_and_write() {
    let fake = FakeApi::new();
    fake.seed_yaml(WORLD);
    fake.seed(claim(
        "c-1",
        json!({"metadata": {"deletionTimestamp": "2026-11-30T10:30:00Z",
            "finalizers": ["karpenter.sh/termination", "other.example/a"]}}),
    ));
    fake.race(
        "PATCH",
        "/nodeclaims/c-1",
        "karpenter.sh",
        "nodeclaims",
        "",
        "c-1",
        |c| {
            c["metadata"]["finalizers"]
                .as_array_mut()
                .unwrap()
                .push(json!("other.example/b"))
        },
    );
    let plan = once(&fake).await;
    assert!(plan.contains(&(
        "removeNodeClaimFinalizer".to_string(),
        "NodeClaim/c-1".to_string()
    )));
    assert_eq!(
        finalizers(&fake, "c-1"),
        Some(json!(["other.example/a", "other.example/b"])),
        "only ours came off; the claim is still there, held by the others"
    );
    let patches: Vec<(u16, Value)> = fake
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/nodeclaims/c-1"))
        .map(|r| (r.code, r.body["metadata"]["resourceVersion"].clone()))
        .collect();
    assert_eq!(patches.len(), 2, "{patches:?}");
    assert_eq!(patches[0].0, 409, "the first write lost the race");
    assert_eq!(patches[1].0, 200, "re-read and retried");
    assert!(patches.iter().all(|(_, rv)| rv.is_string()));
}

/// Rule 5, addition: a claim made without our finalizer gets it on deletion, appended to the
/// list as read at write time, never replacing another controller's (here one present from the
/// start and one added between the executor's read and its write).
#[tokio::test]
async fn adding_our_finalizer_on_deletion_keeps_every_other_finalizer() {
    let fake = FakeApi::new();
    fake.seed_yaml(WORLD);
    // Not launched for two days: the launch timeout deletes it.
    fake.seed(claim(
        "c-2",
        json!({"metadata": {"finalizers": ["other.example/a"]}}),
    ));
    fake.race(
        "PATCH",
        "/nodeclaims/c-2",
        "karpenter.sh",
        "nodeclaims",
        "",
        "c-2",
        |c| {
            c["metadata"]["finalizers"]
                .as_array_mut()
                .unwrap()
                .push(json!("other.example/b"))
        },
    );
    let plan = once(&fake).await;
    assert!(
        plan.contains(&("deleteNodeClaim".to_string(), "NodeClaim/c-2".to_string())),
        "{plan:?}"
    );
    let c = fake.get("karpenter.sh", "nodeclaims", "", "c-2").unwrap();
    assert_eq!(
        c["metadata"]["finalizers"],
        json!([
            "other.example/a",
            "other.example/b",
            "karpenter.sh/termination"
        ])
    );
    assert!(
        c["metadata"]["deletionTimestamp"].is_string(),
        "then deleted"
    );
    let codes: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/nodeclaims/c-2"))
        .map(|r| r.code)
        .collect();
    assert_eq!(codes, vec![409, 200]);
}
