//! Rule 8 of issue 10 on the in-memory API: failed, refused, hung and conflicting writes stay local, and a failure between any two writes of a disruption harms nothing.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 8 and the whole sequence on the in-memory API, with failures injected.

/// Polls `f` every 50 ms until it holds (at most `secs` seconds).
async fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..secs * 20 {
        if f() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    f()
}

#[tokio::test]
async fn a_watch_relisting_after_a_restart_holds_the_scale_down_until_it_is_done() {
    // The in-memory API expires the MachineSet watch (410, as after an API server restart) and
    // fails its re-list: kube-runtime's watcher starts over (`Init`) and the store keeps the old
    // objects until `InitDone`. Meanwhile the snapshot says so and no scale-down goes.
    let w = one_empty(1).add(machine_set(4, "md-4-a", 1, 600));
    let fake = fake_of(&w);
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let metrics = std::sync::Arc::new(karpenter_capi::kube::metrics::Metrics::new());
    let notify = std::sync::Arc::new(tokio::sync::Notify::new());
    let (stores, tasks) =
        karpenter_capi::kube::watch::start(&clients, Some(NS), None, notify, metrics)
            .await
            .unwrap();
    stores.wait_until_ready().await;
    // The real clock, as `fake_of` dates the command under way.
    let now = Timestamp::now();
    let scales = |stores: &karpenter_capi::kube::watch::Stores| {
        let snap = stores.snapshot().unwrap();
        let p = plan(&snap, now, &Config::default());
        (
            lines(&p)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            p.notes,
            snap.unsynced,
        )
    };
    let (scaled, _, unsynced) = scales(&stores);
    assert!(scaled && unsynced.is_empty(), "{unsynced:?}");

    fake.fail("GET", "/machinesets", 500, 10_000);
    fake.expire_watches("cluster.x-k8s.io", "machinesets");
    assert!(
        eventually(20, || !stores.unsynced().is_empty()).await,
        "the watcher never re-listed"
    );
    let (scaled, notes, unsynced) = scales(&stores);
    assert_eq!(
        unsynced,
        vec!["management cluster machinesets.cluster.x-k8s.io".to_string()]
    );
    assert!(!scaled, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains(
            "replicas not lowered from 1: stale view: the watches of management cluster machinesets.cluster.x-k8s.io have not re-synced yet"
        )),
        "{notes:?}"
    );

    // The API answers again: the re-list completes and the scale-down goes.
    fake.clear_faults();
    assert!(
        eventually(40, || stores.unsynced().is_empty()).await,
        "the watcher never re-synced"
    );
    let (scaled, notes, _) = scales(&stores);
    assert!(scaled, "{notes:?}");
    for t in tasks {
        t.abort();
    }
}

/// `secs` pass for the controller's own clocks: every command's start (the drain-started record
/// on NodeClaims) moves back, as the passes run at the real clock.
fn time_passes(fake: &FakeApi, secs: i64) {
    for c in fake.all("karpenter.sh", "nodeclaims") {
        let name = c["metadata"]["name"].as_str().unwrap().to_string();
        let Some(t) = c["metadata"]["annotations"]["karpenter-capi/drain-started"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
        else {
            continue;
        };
        let earlier = Timestamp::from_second(t.as_second() - secs)
            .unwrap()
            .to_string();
        fake.mutate("karpenter.sh", "nodeclaims", "", &name, |c| {
            c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(earlier)
        });
    }
}

/// What Cluster API does with replicas: deletes Machines beyond `spec.replicas`, the marked ones
/// first; returns the Machines it deleted that were not marked (wrong victims).
fn capi_reconcile(fake: &FakeApi) -> Vec<String> {
    let mut wrong = Vec::new();
    for md in fake.all("cluster.x-k8s.io", "machinedeployments") {
        let name = md["metadata"]["name"].as_str().unwrap().to_string();
        let want = md["spec"]["replicas"].as_i64().unwrap_or(0);
        let mut alive: Vec<Value> = fake
            .all("cluster.x-k8s.io", "machines")
            .into_iter()
            .filter(|m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == name.as_str()
            })
            .filter(|m| m["metadata"]["deletionTimestamp"].is_null())
            .collect();
        alive.sort_by_key(|m| {
            m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"].is_null()
        });
        for m in alive
            .iter()
            .take((alive.len() as i64 - want).max(0) as usize)
        {
            let n = m["metadata"]["name"].as_str().unwrap();
            if m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"].is_null() {
                wrong.push(n.to_string());
            }
            fake.remove("cluster.x-k8s.io", "machines", NS, n);
        }
    }
    wrong
}

/// Two empty nodes on two MachineDeployments and a pending pod: a failure on one node's
/// disruption leaves the other node's disruption and the provisioning untouched.
#[tokio::test]
async fn one_failed_write_stays_local_to_its_node_and_machine_deployment() {
    // The pending pod fits only a new 16-cpu node.
    let w = World::new("WhenEmpty")
        .md(4, 1)
        .md(8, 1)
        .md(16, 0)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .pod("pending", None, "12");
    // Both empty nodes' commands under way (validated).
    let w = tainted(tainted(w, "node-1", "Empty"), "node-2", "Empty");
    let fake = fake_of(&w);
    fake.fail("PATCH", "/machines/m-1", 500, 1);
    let r = run_pass(&fake).await;
    assert!(r.is_err(), "a failed action fails the pass (exit 2)");
    let writes = fake.writes();
    // Provisioning ran first, and node-2's whole sequence went through.
    assert!(
        writes[0].starts_with("POST /apis/karpenter.sh/v1/nodeclaims 201"),
        "{writes:#?}"
    );
    assert!(
        writes
            .iter()
            .any(|w| w
                == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/m-2 200"),
        "{writes:#?}"
    );
    assert!(
        writes
            .iter()
            .any(|w| w == "DELETE /apis/karpenter.sh/v1/nodeclaims/c-2 200")
    );
    assert!(writes.iter().any(|w| w == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-8/scale 200"));
    // node-1: the mark failed, so neither its claim's deletion nor md-4's scale-down ran.
    assert!(
        !writes
            .iter()
            .any(|w| w.contains("nodeclaims/c-1") && w.starts_with("DELETE")),
        "{writes:#?}"
    );
    assert!(
        !writes
            .iter()
            .any(|w| w.contains("machinedeployments/md-4/scale")),
        "{writes:#?}"
    );
    assert_eq!(capi_reconcile(&fake), Vec::<String>::new());
    // The next pass retries node-1.
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let writes = fake.writes();
    assert!(writes.iter().any(|w| w == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-4/scale 200"), "{writes:#?}");
}

/// Evictions and forced deletes carry the UID of the pod planned on (rule 5): a pod deleted and
/// re-created under the same name since the listing (a StatefulSet pod) is neither evicted nor
/// deleted by that plan; the API server refuses with 409 and the executor counts the planned pod
/// as gone. The next pass, which lists the new pod, evicts it. The in-memory API enforces the
/// precondition as the API server does.
#[tokio::test]
async fn a_pod_recreated_under_the_same_name_is_not_evicted_by_a_stale_plan() {
    use karpenter_capi::kube::apply::{ActionOutcome, Executor};
    // node-1 expired (forceful), its claim deleted: web goes at once.
    let w = deleted(
        tainted(idle(1).pod("web", Some(1), "1"), "node-1", "Expired"),
        "node-1",
    );
    let p = w.plan();
    assert_eq!(evictions(&p), vec!["evictPod Pod/default/web"]);
    let fake = fake_of(&w);
    fake.mutate("", "pods", "default", "web", |p| {
        p["metadata"]["uid"] = json!("uid-web-recreated")
    });
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let results = Executor::new(clients.clone())
        .execute(&p, NOW.parse().unwrap())
        .await;
    let evicted = results.iter().find(|r| r.action == "evictPod").unwrap();
    assert!(
        matches!(evicted.outcome, ActionOutcome::Applied),
        "{:?}",
        evicted.outcome
    );
    let refused: Vec<(String, u16)> = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/pods/web/eviction"))
        .map(|r| {
            (
                r.body["deleteOptions"]["preconditions"]["uid"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                r.code,
            )
        })
        .collect();
    assert_eq!(refused, vec![("uid-web".to_string(), 409)]);
    let pod = fake
        .get("", "pods", "default", "web")
        .expect("the re-created pod stays");
    assert_eq!(pod["metadata"]["uid"], "uid-web-recreated");
    // A forced delete with the stale UID is refused the same way.
    let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(clients.workload.clone(), "default");
    let stale = kube::api::DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("uid-web".to_string()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = api.delete("web", &stale).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err:?}"
    );
    assert!(fake.get("", "pods", "default", "web").is_some());
    // The next pass plans on the pod as it is now and evicts it.
    fake.clear_log();
    let _ = run_pass(&fake).await;
    let evictions: Vec<(String, u16)> = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/pods/web/eviction"))
        .map(|r| {
            (
                r.body["deleteOptions"]["preconditions"]["uid"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                r.code,
            )
        })
        .collect();
    assert_eq!(evictions, vec![("uid-web-recreated".to_string(), 201)]);
    assert!(fake.get("", "pods", "default", "web").is_none());
}

/// One pass planned on the in-memory API's current state and applied by an executor that gives
/// up on a write after `deadline`.
async fn pass_with_deadline(
    fake: &FakeApi,
    deadline: std::time::Duration,
) -> Vec<karpenter_capi::kube::apply::ActionResult> {
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client.clone(),
    };
    let snap = karpenter_capi::kube::list::live_snapshot(&client, &client, Some(NS))
        .await
        .unwrap();
    let now = Timestamp::now();
    let p = plan(&snap, now, &Config::default());
    karpenter_capi::kube::apply::Executor::new(clients)
        .with_write_deadline(deadline)
        .execute(&p, now)
        .await
}

/// Rule 8 with the failures an eviction really meets: a validating webhook refusing it (403) and
/// an API server that never answers. Node A's drift stops at its eviction; node B's emptiness
/// (another MachineDeployment) and the provisioning for a pending pod go through in the same
/// pass; the next pass retries A's eviction.
#[tokio::test]
async fn a_refused_or_hung_eviction_on_one_node_leaves_the_others_alone() {
    use karpenter_capi::kube::apply::ActionOutcome;
    // node-1 (md-4) drifted, its claim deleted, its pod fits on node-3: draining; node-2
    // (md-8) empty, its command validated; a pending pod needs a new 16-cpu node.
    let w = World::new("WhenEmpty")
        .md(4, 2)
        .md(8, 1)
        .md(16, 0)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .machine(4, 3, true, true)
        .pod("a", Some(1), "1")
        .pod("c", Some(3), "1")
        .pod("pending", None, "12")
        .with("NodeClaim", "c-1", stamp_stale);
    let w = tainted(
        deleted(tainted(w, "node-1", "Drifted"), "node-1"),
        "node-2",
        "Empty",
    );
    for (what, inject) in [
        ("refused by a webhook (403)", 403u16),
        ("never answered", 0),
    ] {
        let fake = fake_of(&w);
        if inject == 0 {
            fake.hang("POST", "/pods/a/eviction", 1);
        } else {
            fake.fail("POST", "/pods/a/eviction", inject, 1);
        }
        let results = pass_with_deadline(&fake, std::time::Duration::from_secs(1)).await;
        let outcome = |action: &str, target: &str| {
            results
                .iter()
                .find(|r| r.action == action && r.target == target)
                .map(|r| match r.outcome {
                    ActionOutcome::Applied => "applied",
                    ActionOutcome::Failed { .. } => "failed",
                    ActionOutcome::Skipped => "skipped",
                    ActionOutcome::BackingOff => "backing off",
                })
                .unwrap_or_else(|| panic!("{what}: no {action} {target} in {results:#?}"))
        };
        assert_eq!(outcome("evictPod", "Pod/default/a"), "failed", "{what}");
        for (action, target) in [
            ("markMachineForDeletion", "Machine/capi-ovh/m-2"),
            ("deleteNodeClaim", "NodeClaim/c-2"),
            ("scaleMachineDeployment", "MachineDeployment/capi-ovh/md-8"),
            ("scaleMachineDeployment", "MachineDeployment/capi-ovh/md-16"),
        ] {
            assert_eq!(
                outcome(action, target),
                "applied",
                "{what}: {action} {target}"
            );
        }
        let created = results
            .iter()
            .find(|r| r.action == "createNodeClaim")
            .unwrap_or_else(|| panic!("{what}: {results:#?}"));
        assert_eq!(created.outcome, ActionOutcome::Applied, "{what}");
        let writes = fake.writes();
        assert!(
            writes[0].starts_with("POST /apis/karpenter.sh/v1/nodeclaims 201"),
            "{what}: provisioning first: {writes:#?}"
        );
        let code = if inject == 0 { 0 } else { 403 };
        assert!(
            writes.contains(&format!(
                "POST /api/v1/namespaces/default/pods/a/eviction {code}"
            )),
            "{what}: {writes:#?}"
        );
        assert!(fake.get("", "pods", "default", "a").is_some(), "{what}");
        // c-2 is being deleted (its finalizer comes off once its Machine goes).
        let c2 = fake.get("karpenter.sh", "nodeclaims", "", "c-2").unwrap();
        assert!(c2["metadata"]["deletionTimestamp"].is_string(), "{what}");
        assert_eq!(capi_reconcile(&fake), Vec::<String>::new(), "{what}");
        // The next pass retries A: node-1 is still tainted, its pod is evicted now.
        fake.clear_log();
        pass_with_deadline(&fake, std::time::Duration::from_secs(1)).await;
        assert!(
            fake.writes()
                .contains(&"POST /api/v1/namespaces/default/pods/a/eviction 201".to_string()),
            "{what}: {:#?}",
            fake.writes()
        );
        assert!(fake.get("", "pods", "default", "a").is_none(), "{what}");
    }
}

/// The writes of node-1's disruption that succeeded, in the order sent, named.
fn disruption_steps(fake: &FakeApi) -> Vec<String> {
    let mut out = Vec::new();
    for r in fake.requests() {
        if !(200..300).contains(&r.code) {
            continue;
        }
        let b = &r.body;
        let step = match (r.method.as_str(), r.path.as_str()) {
            ("PATCH", "/api/v1/nodes/node-1") if b.pointer("/spec/taints").is_some() => {
                let tainted = b["spec"]["taints"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["key"] == "karpenter.sh/disrupted"));
                if tainted {
                    "taint node-1"
                } else {
                    "untaint node-1"
                }
                .to_string()
            }
            ("PATCH", "/api/v1/nodes/node-1")
                if b.pointer("/metadata/finalizers") == Some(&json!([])) =>
            {
                "node-1 finalizer off".to_string()
            }
            ("POST", p) if p.ends_with("/pods/web/eviction") => "evict web".to_string(),
            ("PATCH", p) if p.ends_with("/machines/m-1") => {
                match b.pointer("/metadata/annotations/cluster.x-k8s.io~1delete-machine") {
                    Some(Value::String(_)) => "mark m-1".to_string(),
                    Some(Value::Null) => "unmark m-1".to_string(),
                    _ => continue,
                }
            }
            ("DELETE", "/apis/karpenter.sh/v1/nodeclaims/c-1") => "delete c-1".to_string(),
            ("PATCH", p) if p.ends_with("/machinedeployments/md-4/scale") => {
                format!("scale md-4 to {}", b["spec"]["replicas"])
            }
            ("PATCH", "/apis/karpenter.sh/v1/nodeclaims/c-1")
                if b.pointer("/metadata/finalizers") == Some(&json!([])) =>
            {
                "c-1 finalizer off".to_string()
            }
            _ => continue,
        };
        out.push(step);
    }
    out
}

/// Each step of a disruption only in its place, whatever failed and was retried: the claim
/// deleted only while its node is tainted; web evicted only from a tainted node whose claim is
/// deleted (nothing is evicted before); the Machine marked only once web is gone; replicas
/// lowered only while the Machine is marked; the finalizers last; and every step done at last,
/// first done in the documented order.
fn assert_in_order(steps: &[String], what: &str) {
    let (mut tainted, mut deleted, mut evicted, mut marked, mut scaled) =
        (false, false, false, false, false);
    for s in steps {
        match s.as_str() {
            "taint node-1" => tainted = true,
            "untaint node-1" => tainted = false,
            "evict web" => {
                assert!(
                    tainted && deleted,
                    "{what}: web evicted from an untainted node or before its claim was deleted: {steps:?}"
                );
                evicted = true;
            }
            "mark m-1" => assert!(evicted, "{what}: m-1 marked before web left: {steps:?}"),
            "unmark m-1" => {}
            "delete c-1" => {
                assert!(
                    tainted,
                    "{what}: c-1 deleted before its node was tainted: {steps:?}"
                );
                deleted = true;
            }
            "scale md-4 to 1" => {
                assert!(
                    marked,
                    "{what}: replicas lowered with m-1 unmarked: {steps:?}"
                );
                scaled = true;
            }
            "c-1 finalizer off" | "node-1 finalizer off" => {
                assert!(
                    scaled,
                    "{what}: {s} before replicas were lowered: {steps:?}"
                )
            }
            other => panic!("{what}: unexpected step {other}: {steps:?}"),
        }
        match s.as_str() {
            "mark m-1" => marked = true,
            "unmark m-1" => marked = false,
            _ => {}
        }
    }
    let mut first: Vec<&str> = Vec::new();
    for s in steps {
        if !first.contains(&s.as_str()) && !s.starts_with("un") {
            first.push(s);
        }
    }
    assert_eq!(
        first,
        vec![
            "taint node-1",
            "delete c-1",
            "evict web",
            "mark m-1",
            "scale md-4 to 1",
            "c-1 finalizer off",
            "node-1 finalizer off"
        ],
        "{what}: {steps:?}"
    );
}

/// A disruption's writes, each failing once in turn: whatever the failure, only the planned
/// Machine is ever removed, no pod is evicted without a home, and a few more passes converge to
/// the same end state (nothing leaked: no claim, no Machine, no finalizer left behind).
#[tokio::test]
async fn a_failure_between_any_two_writes_of_a_disruption_harms_nothing() {
    // node-1 drifted; its 1-cpu pod fits on node-2: drained, then removed.
    let w = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "2")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("Node", "node-1", |n| {
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"])
        });
    // The writes of an undisturbed run (half a minute between passes).
    let reference = fake_of(&w);
    let mut all = Vec::new();
    for _ in 0..8 {
        let _ = run_pass(&reference).await;
        capi_reconcile(&reference);
        time_passes(&reference, 30);
    }
    for r in reference.requests() {
        if r.method != "GET" && !r.path.contains("/events") {
            all.push((r.method.clone(), r.path.clone()));
        }
    }
    // The documented order (`controller::disruption`, `controller::termination`): taint, delete
    // the claim (termination drains it), evict, mark the exact Machine, lower replicas; the
    // claim's finalizer once the Machine is being deleted, the Node's once it is gone.
    assert_eq!(
        disruption_steps(&reference),
        vec![
            "taint node-1",
            "delete c-1",
            "evict web",
            "mark m-1",
            "scale md-4 to 1",
            "c-1 finalizer off",
            "node-1 finalizer off"
        ]
    );
    assert!(all.len() >= 5, "{all:?}");
    let end_machines = names(&reference, "cluster.x-k8s.io", "machines");
    assert_eq!(end_machines, vec!["m-2"]);
    for (k, (method, path)) in all.iter().enumerate() {
        let fake = fake_of(&w);
        fake.fail(method, path, 500, 1);
        for _ in 0..10 {
            let _ = run_pass(&fake).await;
            time_passes(&fake, 30);
            assert_eq!(
                capi_reconcile(&fake),
                Vec::<String>::new(),
                "failure at write {k} {method} {path}: a Machine not marked was deleted"
            );
            // busy never moves: node-2 is never drained.
            assert!(
                fake.get("", "pods", "default", "busy").is_some(),
                "failure at write {k}"
            );
            let md = fake
                .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
                .unwrap();
            assert!(
                md["spec"]["replicas"].as_i64().unwrap() >= 1,
                "failure at write {k}"
            );
        }
        assert_eq!(
            names(&fake, "cluster.x-k8s.io", "machines"),
            end_machines,
            "failure at write {k} {method} {path}"
        );
        assert_in_order(
            &disruption_steps(&fake),
            &format!("failure at write {k} {method} {path}"),
        );
        assert_eq!(
            names(&fake, "karpenter.sh", "nodeclaims"),
            vec!["c-2"],
            "failure at write {k} {method} {path}"
        );
        let node1 = fake.get("", "nodes", "", "node-1");
        assert!(
            node1.is_none()
                || node1.unwrap()["metadata"]["finalizers"]
                    .as_array()
                    .is_none_or(|f| f.is_empty()),
            "failure at write {k}"
        );
    }
}

/// The world's objects on the in-memory API with every timestamp moved from [`NOW`] to the real
/// now (the passes there run at the real clock).
fn fake_at_real_now(w: &World) -> FakeApi {
    fn shift(v: &mut Value, by: i64) {
        match v {
            Value::String(s) => {
                if let Ok(t) = s.parse::<Timestamp>() {
                    *s = Timestamp::from_second(t.as_second() + by)
                        .unwrap()
                        .to_string();
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| shift(x, by)),
            Value::Object(m) => m.values_mut().for_each(|x| shift(x, by)),
            _ => {}
        }
    }
    let by = Timestamp::now().as_second() - NOW.parse::<Timestamp>().unwrap().as_second();
    let fake = FakeApi::new();
    // A Deployment is read from files only (`simulate`); the controller reads its pods.
    for o in w.objects().iter().filter(|o| o["kind"] != "Deployment") {
        let mut o = o.clone();
        shift(&mut o, by);
        fake.seed(o);
    }
    fake
}

/// What the call-off of a consolidation command wrote, in order, named.
fn call_off_steps(fake: &FakeApi) -> Vec<String> {
    let mut out = Vec::new();
    for r in fake.requests() {
        if r.method == "GET" || !(200..300).contains(&r.code) {
            continue;
        }
        out.push(format!("{} {}", r.method, r.path));
    }
    out
}

/// A consolidation command whose replacement is no longer needed is called off: the replacement
/// claim deleted, then the candidate untainted (deliberate difference 10). Each of those writes
/// failing once in turn: no pod is ever evicted, no Machine marked or removed, and the passes
/// that follow finish the call-off, ending as the undisturbed run does (the untaint first, a
/// failed delete left the replacement behind for good).
#[tokio::test]
async fn a_failure_between_the_writes_of_a_call_off_harms_nothing() {
    // node-1 (a c3-8 holding web-1) is being replaced by default-r, still launching; node-2,
    // empty and initialized ten minutes ago, now has room for web-1.
    let w = World::from_yaml(&crate::controller_disruption::replacing("{}", 600));
    let reference = fake_at_real_now(&w);
    let _ = run_pass(&reference).await;
    // The call-off's writes come first in the pass: the replacement deleted (an Event, its
    // reason recorded, the delete), then the candidate untainted (with a Warning Event) and its
    // claim's command annotations cleared.
    let writes = call_off_steps(&reference);
    assert_eq!(
        writes[..6],
        [
            "POST /api/v1/namespaces/default/events",
            "PATCH /apis/karpenter.sh/v1/nodeclaims/default-r",
            "DELETE /apis/karpenter.sh/v1/nodeclaims/default-r",
            "PATCH /api/v1/nodes/node-1",
            "POST /api/v1/namespaces/default/events",
            "PATCH /apis/karpenter.sh/v1/nodeclaims/default-1",
        ]
    );
    for _ in 0..3 {
        let _ = run_pass(&reference).await;
    }
    let end = |fake: &FakeApi| {
        let node1 = fake.get("", "nodes", "", "node-1").unwrap();
        (
            names(fake, "karpenter.sh", "nodeclaims"),
            names(fake, "cluster.x-k8s.io", "machines"),
            names(fake, "", "pods"),
            node1["spec"]["taints"].clone(),
        )
    };
    let expected = end(&reference);
    assert_eq!(
        expected,
        (
            vec!["default-1".to_string(), "default-2".to_string()],
            vec!["m-1".to_string(), "m-2".to_string()],
            vec![
                "cilium-1".to_string(),
                "cilium-2".to_string(),
                "web-1".to_string()
            ],
            json!([])
        )
    );
    for (k, write) in writes[..6].iter().enumerate() {
        let (method, path) = write.split_once(' ').unwrap();
        let fake = fake_at_real_now(&w);
        fake.fail(method, path, 500, 1);
        for _ in 0..4 {
            let _ = run_pass(&fake).await;
            assert_eq!(
                capi_reconcile(&fake),
                Vec::<String>::new(),
                "failure at {write}: a Machine not marked was deleted"
            );
        }
        let harmful: Vec<String> = call_off_steps(&fake)
            .into_iter()
            .filter(|s| s.ends_with("/eviction") || s.contains("/machines/"))
            .collect();
        assert!(harmful.is_empty(), "failure at {write}: {harmful:?}");
        assert_eq!(end(&fake), expected, "failure at {write} (write {k})");
    }
}
