//! Continuous mode under failure (issue 24), against the in-memory API with the failure
//! injected: a dry-run replica beside a live one, finalizer edits racing another writer, one
//! failing eviction among healthy work, a hung Lease renewal, stale stores, and watch health.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeApi;
use karpenter_capi::kube::leader::Gate;
use karpenter_capi::kube::metrics::Metrics;
use karpenter_capi::kube::reconciler::{LeaseTiming, lead};
use karpenter_capi::vocab::names::{DRY_RUN_LEASE_NAME, LEASE_NAME};
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{
    Machine, MachineDeployment, Node, NodeClaim, NodeClass, NodePool, Object, Pod,
};
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
#[tokio::test(start_paused = true)]
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

/// A member MachineDeployment `c3-8` in `namespace` (4 vCPU, 8G, 0.1/h), at 0 replicas.
pub(crate) fn c3_8(namespace: &str) -> MachineDeployment {
    MachineDeployment::new(namespace, "c3-8")
        .member()
        .capacity("4", "8G")
        .node_labels("node.kubernetes.io/instance-type=c3-8")
        .price("0.1")
}

/// A ready node class, a NodePool and one empty member MachineDeployment.
pub(crate) fn world() -> World {
    World::empty()
        .add(NodeClass::new("default").ready_since("2026-11-30T10:00:00Z"))
        .add(NodePool::new("default"))
        .add(c3_8("capi"))
}

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
    let mut c = NodeClaim::new(name, "default")
        .set("/spec/resources/requests/cpu", "1")
        .build();
    common::merge(&mut c, extra);
    c
}

/// Rule 5, removal: a deleting claim's finalizer comes off by a read-modify-write carrying the
/// resourceVersion. Another controller's finalizer, there when the pass read the cluster, and
/// one added between the executor's read and its write, both survive; the claim stays.
#[tokio::test]
async fn removing_our_finalizer_keeps_a_finalizer_added_between_read_and_write() {
    let fake = FakeApi::new();
    fake.seed_world(&world());
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
    fake.seed_world(&world());
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

/// A node `node-1` (4 vCPU, Machine `capi/m-1` of `md-4`) whose NodeClaim `c-1` a user deleted:
/// it drains. On it, pod `stuck` and pod `ok`. NodePool `default` never consolidates.
fn draining_world() -> FakeApi {
    let fake = FakeApi::new();
    let pid = "openstack:///1";
    let world = World::empty()
        .add(NodeClass::new("default").ready_since("2026-11-30T10:00:00Z"))
        .add(NodePool::new("default").expire_after("Never").set(
            "/spec/disruption",
            json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}),
        ))
        .add(
            MachineDeployment::new("capi", "md-4")
                .set("/metadata/generation", 1)
                .member()
                .capacity("4", "8G")
                .node_labels("node.kubernetes.io/instance-type=c-4")
                .price("0.1")
                .replicas(1)
                .selecting()
                .set("/status", json!({"observedGeneration": 1, "replicas": 1})),
        )
        .add(
            Machine::new("capi", "m-1")
                .deployment("md-4")
                .member()
                .provider_id(pid)
                .node("node-1"),
        )
        .add(
            Node::new("node-1")
                .label("karpenter.sh/nodepool", "default")
                .provider_id(pid)
                .capacity("4", "8G", "110")
                .ready(),
        )
        .add(
            NodeClaim::new("c-1", "default")
                .finalizer("karpenter.sh/termination")
                .deleting("2026-11-30T10:30:00Z")
                .instance_type("c-4")
                .machine("capi/m-1")
                .machine_deployment("capi/md-4")
                .initialized(pid, "node-1", "2026-11-30T09:00:00Z"),
        );
    fake.seed_world(&world);
    for name in ["stuck", "ok"] {
        fake.seed(Pod::new("default", name).on("node-1").cpu("100m").build());
    }
    fake
}

fn pending(name: &str) -> Value {
    // Too big to share a node beside the draining node's pod, which is provisioned for too
    // (core's provisioner schedules the pods of deleting nodes).
    Pod::new("default", name).cpu("3950m").pending().build()
}

/// Claims created by the controller (not the seeded `c-1`).
fn created_claims(fake: &FakeApi) -> usize {
    fake.all("karpenter.sh", "nodeclaims")
        .iter()
        .filter(|c| c["metadata"]["name"] != "c-1")
        .count()
}

fn start(
    fake: &FakeApi,
    window: karpenter_capi::kube::reconciler::Window,
) -> (
    Arc<karpenter_capi::kube::reconciler::Context>,
    watch::Sender<bool>,
    tokio::task::JoinHandle<karpenter_capi::Result<()>>,
) {
    let ctx = Arc::new(karpenter_capi::kube::reconciler::Context::new(
        clients(fake),
        karpenter_capi::controller::Config::default(),
        Some("capi".to_string()),
        false,
    ));
    let (_lead_tx, lead_rx) = watch::channel(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(karpenter_capi::kube::reconciler::run_continuous(
        ctx.clone(),
        window,
        lead_rx,
        stop_rx,
    ));
    (ctx, stop_tx, task)
}

/// The production cadence: batches close after 1 s idle (10 s at most), a pass every 10 s.
fn production_window() -> karpenter_capi::kube::reconciler::Window {
    karpenter_capi::kube::reconciler::Window {
        idle: Duration::from_secs(1),
        max: Duration::from_secs(10),
        resync: Duration::from_secs(10),
    }
}

/// Rule 3: the eviction of one pod answered 500 on every attempt backs off on that pod alone
/// (100 ms doubling to 10 s between its attempts); the other pod on the node is evicted in the
/// first pass, and ten pending pods, arriving 2 s apart, each get a NodeClaim within the batch
/// window (about 1 s), never waiting out a controller-wide backoff (which grew to 60 s).
#[tokio::test(start_paused = true)]
async fn a_failing_eviction_backs_off_alone_while_other_pods_get_nodes_on_time() {
    let fake = draining_world();
    fake.fail("POST", "/pods/stuck/eviction", 500, usize::MAX);
    let (ctx, stop, task) = start(&fake, production_window());
    eventually("the other pod evicted", || {
        fake.get("", "pods", "default", "ok").is_none()
    })
    .await;
    assert!(fake.get("", "pods", "default", "stuck").is_some());
    let mut waits = Vec::new();
    for i in 0..10 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let before = created_claims(&fake);
        let added = tokio::time::Instant::now();
        fake.seed(pending(&format!("p-{i}")));
        eventually(&format!("a claim for p-{i}"), || {
            created_claims(&fake) > before
        })
        .await;
        waits.push(added.elapsed());
    }
    let slowest = waits.iter().max().unwrap();
    assert!(
        *slowest <= Duration::from_millis(1500),
        "every pending pod got its claim within the batch window: {waits:?}"
    );
    let attempts: Vec<tokio::time::Instant> = fake
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/pods/stuck/eviction"))
        .map(|r| r.at)
        .collect();
    assert!(
        attempts.len() >= 5,
        "retried in later passes: {} attempts",
        attempts.len()
    );
    for (k, pair) in attempts.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        let backoff = karpenter_capi::kube::backoff::ObjectBackoff::delay(k as u32 + 1);
        assert!(
            gap >= backoff,
            "attempt {} came {gap:?} after the previous, before its {backoff:?} backoff",
            k + 2
        );
    }
    assert!(ctx.metrics.is_ready());
    stop.send_replace(true);
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Rule 3: the API server's 500 for a pod under several PodDisruptionBudgets is a PDB block,
/// as a 429 is: not a failed action (nothing backs off), retried by the next pass.
#[tokio::test]
async fn an_eviction_refused_for_several_pdbs_is_a_pdb_block_not_a_failure() {
    use karpenter_capi::controller::write::Write;
    use karpenter_capi::kube::apply::{Executor, MULTIPLE_PDBS_MESSAGE};
    let fake = draining_world();
    let executor = Executor::new(clients(&fake));
    let evict = Write::Evict {
        namespace: "default".to_string(),
        name: "stuck".to_string(),
        uid: None,
        node: "node-1".to_string(),
        reason: "Deleted".to_string(),
    };
    fake.fail_with(
        "POST",
        "/pods/stuck/eviction",
        500,
        "InternalError",
        MULTIPLE_PDBS_MESSAGE,
        1,
    );
    let now = jiff::Timestamp::now();
    assert!(executor.execute_write(&evict, now).await.unwrap().is_none());
    assert!(
        fake.get("", "pods", "default", "stuck").is_some(),
        "not evicted"
    );
    // Any other 500 stays a failure.
    fake.fail("POST", "/pods/stuck/eviction", 500, 1);
    let err = executor.execute_write(&evict, now).await.unwrap_err();
    assert!(
        err.to_string().contains("etcdserver: request timed out"),
        "{err}"
    );
    // Accepted on the next try.
    executor.execute_write(&evict, now).await.unwrap();
    assert!(fake.get("", "pods", "default", "stuck").is_none());
}

/// Rule 4: a write still in flight when this replica's Lease validity runs out (the renewal
/// hangs, the write hangs) is abandoned then, not after the 30 s write deadline: no write of a
/// replica lands after another may have taken over; the next write is refused before it is sent.
#[tokio::test(start_paused = true)]
async fn a_hung_renewal_bounds_a_hung_write_by_the_lease_time_left() {
    use karpenter_capi::controller::write::Write;
    use karpenter_capi::kube::apply::{Executor, WRITE_DEADLINE};
    use karpenter_capi::kube::leader::{LEASE_DURATION, LeaseLock};
    let fake = draining_world();
    let lock = LeaseLock::new(fake.client(), "kube-system", "a".to_string());
    let gate = Gate::elected();
    let (lead_tx, lead_rx) = watch::channel(false);
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(lead(
        lock,
        Arc::new(Metrics::new()),
        lead_tx,
        gate.clone(),
        LeaseTiming::default(),
        stop_rx,
    ));
    eventually("leadership", || *lead_rx.borrow()).await;
    // Every renewal from now on hangs, and so does the write.
    fake.hang("PUT", "/leases/karpenter-capi", usize::MAX);
    fake.hang("PATCH", "/nodes/node-1", usize::MAX);
    let executor = Executor::new(clients(&fake)).with_gate(gate.clone());
    let label = Write::MergePatch {
        cluster: karpenter_capi::error::ClusterRole::Workload,
        resource: karpenter_capi::vocab::kinds::NODE,
        namespace: String::new(),
        name: "node-1".to_string(),
        patch: json!({"metadata": {"labels": {"a": "b"}}}),
    };
    // Half-way through the validity of the last renewal.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let until = gate.valid_until().unwrap();
    let left = gate.time_left().unwrap();
    assert!(left < LEASE_DURATION && left < WRITE_DEADLINE, "{left:?}");
    let sent = tokio::time::Instant::now();
    let err = executor
        .execute_write(&label, jiff::Timestamp::now())
        .await
        .unwrap_err();
    let took = sent.elapsed();
    assert_eq!(took, left, "abandoned exactly when the Lease ran out");
    assert!(tokio::time::Instant::now() >= until);
    assert_eq!(
        err.to_string(),
        format!(
            "abandoned after {}s, when this replica's leader Lease ran out: mergePatch node-1",
            left.as_secs_f64()
        )
    );
    // Leadership is gone; the next write is refused before it is sent.
    assert!(!gate.is_open());
    let patches = fake
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/nodes/node-1"))
        .count();
    let err = executor
        .execute_write(&label, jiff::Timestamp::now())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "not written: this replica no longer holds the leader Lease"
    );
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.ends_with("/nodes/node-1"))
            .count(),
        patches
    );
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .unwrap()
        .unwrap();
}

/// Rule 4: a replica that takes over re-reads both clusters before acting. The previous leader
/// created a NodeClaim for the pending pod and scaled its MachineDeployment just before it lost
/// the Lease, and this replica's watches have not shown either yet: its first pass as leader
/// plans from a fresh listing and creates no second claim.
#[tokio::test(start_paused = true)]
async fn a_new_leader_re_reads_the_clusters_before_acting() {
    let seed = |fake: &FakeApi| {
        fake.seed_world(&world());
        fake.seed(pending("web"));
    };
    // What the previous leader wrote, made on a twin cluster.
    let twin = FakeApi::new();
    seed(&twin);
    once(&twin).await;
    let written = twin.all("karpenter.sh", "nodeclaims");
    assert_eq!(written.len(), 1);
    let fake = FakeApi::new();
    seed(&fake);
    let window = karpenter_capi::kube::reconciler::Window {
        idle: Duration::from_millis(30),
        max: Duration::from_millis(200),
        resync: Duration::from_millis(300),
    };
    let ctx = Arc::new(karpenter_capi::kube::reconciler::Context::new(
        clients(&fake),
        karpenter_capi::controller::Config::default(),
        Some("capi".to_string()),
        false,
    ));
    let (lead_tx, lead_rx) = watch::channel(false);
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(karpenter_capi::kube::reconciler::run_continuous(
        ctx.clone(),
        window,
        lead_rx,
        stop_rx,
    ));
    eventually("ready", || ctx.metrics.is_ready()).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(fake.writes().is_empty(), "a follower never writes");
    // The previous leader's writes, which the watches do not show.
    fake.seed_unwatched(written[0].clone());
    fake.mutate_unwatched(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi",
        "c3-8",
        |md| md["spec"]["replicas"] = json!(1),
    );
    fake.clear_log();
    lead_tx.send_replace(true);
    eventually("a pass as leader", || {
        fake.requests()
            .iter()
            .any(|r| r.path == "/apis/karpenter.sh/v1/nodeclaims" && !r.query.contains("watch"))
    })
    .await;
    // Then the watches catch up.
    let name = written[0]["metadata"]["name"].as_str().unwrap().to_string();
    fake.mutate("karpenter.sh", "nodeclaims", "", &name, |_| {});
    fake.mutate(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi",
        "c3-8",
        |_| {},
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    let claims = fake.all("karpenter.sh", "nodeclaims");
    assert_eq!(
        claims.len(),
        1,
        "no second claim for the pod: {:?}",
        claims
            .iter()
            .map(|c| &c["metadata"]["name"])
            .collect::<Vec<_>>()
    );
    assert!(
        !fake
            .writes()
            .iter()
            .any(|w| w.starts_with("POST /apis/karpenter.sh/v1/nodeclaims")),
        "{:?}",
        fake.writes()
    );
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Stores holding `objects` as the watchers feed them (compacted), with the stores of `stale`
/// (plural names) re-listing; and their writers, which must outlive the stores' use.
fn stores_of(
    objects: &[Value],
    stale: &[&str],
) -> (
    karpenter_capi::kube::watch::Stores,
    Vec<karpenter_capi::kube::watch::StoreWriter<kube::api::DynamicObject>>,
) {
    use karpenter_capi::kube::list::OBSERVED;
    use karpenter_capi::kube::watch::{Stores, compact, store_for};
    use kube::runtime::watcher::Event;
    let mut entries = Vec::new();
    let mut writers = Vec::new();
    for l in OBSERVED {
        let (store, mut writer) = store_for(&l.resource);
        writer.apply_watcher_event(&Event::Init);
        for v in objects.iter().filter(|v| {
            v["kind"] == l.resource.kind
                && v["apiVersion"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(l.resource.group)
        }) {
            let mut o: kube::api::DynamicObject = serde_json::from_value(v.clone()).unwrap();
            compact(&mut o, l.resource.kind);
            writer.apply_watcher_event(&Event::InitApply(o));
        }
        writer.apply_watcher_event(&Event::InitDone);
        entries.push((*l, l.resource, store));
        writers.push(writer);
    }
    let stores = Stores::from_parts(entries, Vec::new());
    for (l, flag) in OBSERVED.iter().zip(stores.synced()) {
        if stale.contains(&l.resource.plural) {
            flag.observe(&Event::<kube::api::DynamicObject>::Init);
        }
    }
    (stores, writers)
}

/// Runs the reconcile loop over `stores` (writes go to `fake`) for `secs` of (paused) time;
/// returns the metrics text.
async fn run_loop(
    fake: &FakeApi,
    stores: &karpenter_capi::kube::watch::Stores,
    secs: u64,
) -> String {
    let ctx = karpenter_capi::kube::reconciler::Context::new(
        clients(fake),
        karpenter_capi::controller::Config::default(),
        Some("capi".to_string()),
        false,
    );
    let notify = tokio::sync::Notify::new();
    let (_lead_tx, lead_rx) = watch::channel(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    let window = production_window();
    let stopper = async {
        tokio::time::sleep(Duration::from_secs(secs)).await;
        stop_tx.send_replace(true);
    };
    let (result, ()) = tokio::join!(
        karpenter_capi::kube::reconciler::reconcile_loop(
            &ctx, stores, &notify, window, lead_rx, stop_rx
        ),
        stopper
    );
    result.unwrap();
    ctx.metrics.render()
}

/// The objects of `fake` (what a complete listing shows).
fn everything(fake: &FakeApi) -> Vec<Value> {
    common::all_types()
        .iter()
        .flat_map(|t| fake.all(t.group, t.plural))
        .collect()
}

/// An empty node `node-1` (its claim `c-1` initialized two days ago) of a NodePool consolidating
/// empty nodes after 30 s, its Empty command started a minute ago (tainted, past its 15 s
/// validation): the claim's deletion, the mark and the scale-down are due.
fn empty_node_world() -> FakeApi {
    let fake = draining_world();
    for pod in ["stuck", "ok"] {
        fake.remove("", "pods", "default", pod);
    }
    // Commands are timed by the wall clock, which paused tokio time does not stop.
    let started = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() - 60)
        .unwrap()
        .to_string();
    fake.mutate("karpenter.sh", "nodeclaims", "", "c-1", |c| {
        let meta = c["metadata"].as_object_mut().unwrap();
        meta.remove("deletionTimestamp");
        c["metadata"]["annotations"]["karpenter-capi/disruption-reason"] = json!("Empty");
        c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(started);
    });
    fake.mutate("", "nodes", "", "node-1", |n| {
        n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    });
    fake.mutate("karpenter.sh", "nodepools", "", "default", |p| {
        p["spec"]["disruption"] = json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s", "budgets": [{"nodes": "100%"}]});
    });
    fake
}

/// A command's validation delay is a clock the loop wakes for: `node-1`'s Empty command started
/// 13 s ago (wall clock), so the first pass (after the 1 s batch window) waits for its 15 s
/// validation, and the next pass, which the plan's next clock brings 2 s later instead of the
/// 10 s resync, deletes the claim. Real time: the commands are timed by the wall clock.
#[tokio::test]
async fn the_loop_plans_again_when_a_command_is_due_for_validation_not_at_the_resync() {
    let fake = empty_node_world();
    let started = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() - 13)
        .unwrap()
        .to_string();
    fake.mutate("karpenter.sh", "nodeclaims", "", "c-1", |c| {
        c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(started);
    });
    let (stores, mut writers) = stores_of(&everything(&fake), &[]);
    let began = std::time::Instant::now();
    // The watches show each write within 100 ms (without waking the loop: no event is sent).
    let watching = async {
        for _ in 0..45 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            catch_up(&fake, &mut writers);
        }
    };
    let ((), _) = tokio::join!(watching, run_loop(&fake, &stores, 5));
    let deletes = fake
        .requests()
        .iter()
        .filter(|r| r.method == "DELETE" && r.path.ends_with("/nodeclaims/c-1"))
        .count();
    assert_eq!(deletes, 1, "{:?}", fake.writes());
    // Well before a resync pass could have come (10 s).
    assert!(began.elapsed() < Duration::from_secs(8));
}

/// Rule 1, disruption: while any store a disruption decision reads is re-listing, no pass
/// plans. The stale pod store shows `node-1` empty; in fact pod `web` was bound to it meanwhile.
/// With every store synced the same view deletes `c-1` (the Empty decision is real); with any
/// of the seven re-listing, nothing is written, and once the re-list shows `web`, nothing is
/// disrupted.
#[tokio::test(start_paused = true)]
async fn no_disruption_decision_on_a_store_being_re_listed() {
    let deleted = |fake: &FakeApi| {
        fake.writes()
            .iter()
            .any(|w| w.starts_with("DELETE /apis/karpenter.sh/v1/nodeclaims/c-1"))
    };
    // The control: synced, empty node: Empty deletes its claim.
    let fake = empty_node_world();
    let (stores, _w) = stores_of(&everything(&fake), &[]);
    run_loop(&fake, &stores, 5).await;
    assert!(deleted(&fake), "{:?}", fake.writes());

    for stale in karpenter_capi::kube::reconciler::DECISION_STORES {
        let fake = empty_node_world();
        let view = everything(&fake);
        // The pod the stale view misses.
        fake.seed(Pod::new("default", "web").on("node-1").cpu("1").build());
        let (stores, _w) = stores_of(&view, &[stale]);
        let metrics = run_loop(&fake, &stores, 30).await;
        assert!(
            fake.writes().is_empty(),
            "{stale} re-listing: {:?}",
            fake.writes()
        );
        assert!(
            metrics.contains("karpenter_capi_reconcile_passes_total{result=\"stale\"}"),
            "{stale}: the passes waited"
        );
        // The re-list completes and shows the pod: the node is busy, nothing is disrupted.
        let (stores, _w) = stores_of(&everything(&fake), &[]);
        run_loop(&fake, &stores, 5).await;
        assert!(!deleted(&fake), "{stale}: {:?}", fake.writes());
    }
}

/// Rule 1, provisioning: a pending pod whose NodeClaim the previous pass created, which a
/// re-listing NodeClaim store does not show yet. With the stores synced and no claim the pod
/// gets one; while any of the NodeClaim, Node, Machine, MachineSet or MachineDeployment stores
/// re-lists, no claim is created (no second claim for the pod).
#[tokio::test(start_paused = true)]
async fn no_provisioning_on_a_claim_or_capacity_store_being_re_listed() {
    let world = || {
        let fake = FakeApi::new();
        fake.seed_world(&world());
        fake.seed(pending("web"));
        fake
    };
    let created = |fake: &FakeApi| {
        fake.writes()
            .iter()
            .filter(|w| w.starts_with("POST /apis/karpenter.sh/v1/nodeclaims"))
            .count()
    };
    let fake = world();
    let (stores, _w) = stores_of(&everything(&fake), &[]);
    run_loop(&fake, &stores, 5).await;
    assert_eq!(created(&fake), 1, "the control provisions");
    let made = fake.all("karpenter.sh", "nodeclaims");

    for stale in [
        "nodeclaims",
        "nodes",
        "machines",
        "machinesets",
        "machinedeployments",
    ] {
        let fake = world();
        let view = everything(&fake);
        fake.seed(made[0].clone());
        let (stores, _w) = stores_of(&view, &[stale]);
        run_loop(&fake, &stores, 30).await;
        assert_eq!(created(&fake), 0, "{stale} re-listing: {:?}", fake.writes());
    }
}

/// Feeds every object `fake` holds now into the stores, as a watch catching up would.
fn catch_up(
    fake: &FakeApi,
    writers: &mut [karpenter_capi::kube::watch::StoreWriter<kube::api::DynamicObject>],
) {
    use karpenter_capi::kube::list::OBSERVED;
    use kube::runtime::watcher::Event;
    for (l, writer) in OBSERVED.iter().zip(writers.iter_mut()) {
        let ty = common::all_types()
            .into_iter()
            .find(|t| t.plural == l.resource.plural)
            .unwrap();
        for v in fake.all(ty.group, ty.plural) {
            let mut o: kube::api::DynamicObject = serde_json::from_value(v).unwrap();
            karpenter_capi::kube::watch::compact(&mut o, l.resource.kind);
            writer.apply_watcher_event(&Event::Apply(o));
        }
    }
}

fn scale_codes(fake: &FakeApi) -> Vec<u16> {
    fake.requests()
        .iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/machinedeployments/md-4/scale"))
        .map(|r| r.code)
        .collect()
}

fn unmarks(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| {
            r.method == "PATCH"
                && r.path.ends_with("/machines/m-1")
                && r.body
                    .pointer("/metadata/annotations/cluster.x-k8s.io~1delete-machine")
                    .is_some_and(Value::is_null)
        })
        .count()
}

/// Rule 2, read your writes: the Empty decision marks `m-1` and scales `md-4` 1 -> 0; the
/// watches show neither for 14 s. The next pass (10 s later) waits for them instead of planning
/// the same scale-down again off the stale view, and once they show, plans on them: one scale
/// sent, no 409.
#[tokio::test(start_paused = true)]
async fn the_next_pass_waits_for_its_own_scale_and_mark_to_show() {
    let fake = empty_node_world();
    let (stores, mut writers) = stores_of(&everything(&fake), &[]);
    let catching_up = async {
        tokio::time::sleep(Duration::from_secs(15)).await;
        assert_eq!(
            scale_codes(&fake),
            vec![200],
            "one scale before the watches caught up"
        );
        catch_up(&fake, &mut writers);
    };
    let ((), _) = tokio::join!(catching_up, run_loop(&fake, &stores, 40));
    assert_eq!(scale_codes(&fake), vec![200], "{:?}", fake.writes());
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", "capi", "md-4")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 0);
}

/// Rule 2, rollback: the scale-down went through, and the watches never show it; after the
/// read-your-writes bound the same decision is planned again on the stale view and its
/// re-issued scale gets a 409. Its rollback must not take the delete-machine mark off `m-1`:
/// Cluster API is already removing a Machine for the replica change, and without the mark it
/// would pick the victim.
#[tokio::test(start_paused = true)]
async fn a_409_on_a_re_issued_scale_keeps_the_mark_a_successful_scale_relies_on() {
    let fake = empty_node_world();
    let (stores, _writers) = stores_of(&everything(&fake), &[]);
    run_loop(&fake, &stores, 40).await;
    let codes = scale_codes(&fake);
    assert_eq!(codes[0], 200, "{codes:?}");
    assert!(
        codes[1..].contains(&409),
        "re-issued on the stale view: {codes:?}"
    );
    assert_eq!(unmarks(&fake), 0, "{:?}", fake.writes());
    let m = fake
        .get("cluster.x-k8s.io", "machines", "capi", "m-1")
        .unwrap();
    assert!(
        m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"].is_string(),
        "{m}"
    );
    assert_eq!(
        fake.get("cluster.x-k8s.io", "machinedeployments", "capi", "md-4")
            .unwrap()["spec"]["replicas"],
        0
    );
}

/// Rule 7: a watch that keeps failing (here the pod list answers 500 after its watch expired)
/// makes `/readyz` fail once it has failed for longer than the bound, naming the resource and
/// the error; it recovers with the watch. A failure shorter than the bound does not.
#[tokio::test(start_paused = true)]
async fn a_watch_failing_longer_than_the_bound_fails_readyz_naming_it() {
    use karpenter_capi::kube::metrics::respond;
    let fake = FakeApi::new();
    fake.seed_world(&world());
    let mut ctx = karpenter_capi::kube::reconciler::Context::new(
        clients(&fake),
        karpenter_capi::controller::Config::default(),
        Some("capi".to_string()),
        false,
    );
    // Longer than kube-runtime's re-list backoff after an expired watch (which can pass 1.5 s),
    // so the first failed re-list is seen inside the bound.
    let bound = Duration::from_secs(6);
    ctx.metrics = Arc::new(Metrics::new().with_watch_failure_bound(bound));
    let ctx = Arc::new(ctx);
    let (_lead_tx, lead_rx) = watch::channel(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    let window = karpenter_capi::kube::reconciler::Window {
        idle: Duration::from_millis(30),
        max: Duration::from_millis(200),
        resync: Duration::from_millis(300),
    };
    let task = tokio::spawn(karpenter_capi::kube::reconciler::run_continuous(
        ctx.clone(),
        window,
        lead_rx,
        stop_rx,
    ));
    eventually("ready", || respond(&ctx.metrics, "/readyz").0 == 200).await;
    fake.fail("GET", "/api/v1/pods", 500, usize::MAX);
    let first = tokio::time::Instant::now();
    fake.expire_watches("", "pods");
    let failing = || {
        fake.requests()
            .iter()
            .any(|r| r.path == "/api/v1/pods" && r.code == 500)
    };
    eventually("the pod re-list to fail", failing).await;
    let within = respond(&ctx.metrics, "/readyz");
    assert_eq!(
        within.0,
        200,
        "within the bound: still ready ({:?} after the expiry): {}",
        first.elapsed(),
        within.2
    );
    eventually("readyz to fail", || {
        respond(&ctx.metrics, "/readyz").0 == 503
    })
    .await;
    assert!(first.elapsed() >= bound);
    let (_, _, body) = respond(&ctx.metrics, "/readyz");
    assert!(
        body.starts_with("the watch of workload cluster pods has been failing for "),
        "{body}"
    );
    assert!(body.contains("(bound 6s)"), "{body}");
    assert!(body.contains("etcdserver: request timed out"), "{body}");
    fake.clear_faults();
    eventually("readyz to recover", || {
        respond(&ctx.metrics, "/readyz").0 == 200
    })
    .await;
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
