//! The status a pass writes (issue 11 item 7): NodeClaim conditions and NodePool status on the in-memory API.

use super::*;

// ---------------------------------------------------------------------------------------------
// What `kubectl get nodeclaims,nodepools` shows (issue 11 item 7): the status values a pass
// writes, asserted on the in-memory API after a real pass.

/// The status conditions of an object as `type=status/reason`, sorted.
fn conditions(obj: &Value) -> Vec<String> {
    let mut c: Vec<String> = obj["status"]["conditions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    format!(
                        "{}={}/{}",
                        c["type"].as_str().unwrap_or(""),
                        c["status"].as_str().unwrap_or(""),
                        c["reason"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    c.sort();
    c
}

#[tokio::test]
async fn a_pass_writes_consolidatable_drifted_and_the_nodepool_status() {
    // node-1 busy and quiet for an hour (consolidateAfter 30s): Consolidatable. node-2 drifted
    // but protected by do-not-disrupt: Drifted, not disrupted. c-3 saw a pod event 10 s ago: not
    // Consolidatable (a stale True is cleared). All three nodes are the pool's: 3 x (4 cpu, 8G,
    // 110 pods).
    let mut w = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .pod("a", Some(1), "1")
        .pod("b", Some(2), "1")
        .pod("c", Some(3), "1")
        .with("NodeClaim", "c-2", stamp_stale)
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        })
        .with("NodeClaim", "c-3", |c| {
            // The pass runs at the real clock.
            let recent = Timestamp::from_second(Timestamp::now().as_second() - 10).unwrap();
            c["status"]["lastPodEventTime"] = json!(recent.to_string());
            c["status"]["conditions"].as_array_mut().unwrap().push(
                json!({"type": "Consolidatable", "status": "True", "reason": "Consolidatable"}),
            );
        });
    for i in 1..=3 {
        w = w.with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("default")
        });
    }
    let p = w.plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    let fake = fake_of(&w);
    run_pass(&fake).await.unwrap();
    let claim = |n: &str| fake.get("karpenter.sh", "nodeclaims", "", n).unwrap();
    // Each Node is of its flavor's shape: core's consistency check finds it so.
    let base = [
        "ConsistentStateFound=True/ConsistentStateFound",
        "Initialized=True/",
        "Launched=True/",
        "Registered=True/",
    ];
    let with = |extra: &[&str]| {
        let mut v: Vec<String> = base.iter().chain(extra).map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(
        conditions(&claim("c-1")),
        with(&["Consolidatable=True/Consolidatable"])
    );
    assert_eq!(
        conditions(&claim("c-2")),
        with(&[
            "Consolidatable=True/Consolidatable",
            "Drifted=True/NodePoolDrifted"
        ])
    );
    assert_eq!(conditions(&claim("c-3")), with(&[]));
    let pool = fake
        .get("karpenter.sh", "nodepools", "", "default")
        .unwrap();
    assert_eq!(pool["status"]["nodes"], json!(3), "{pool:#}");
    assert_eq!(
        pool["status"]["resources"],
        json!({"cpu": "12", "memory": "24000000000", "pods": "330", "ephemeral-storage": "0", "nodes": "3"}),
        "{pool:#}"
    );
    assert_eq!(
        conditions(&pool),
        vec![
            "Ready=True/Ready",
            "ValidationSucceeded=True/ValidationSucceeded"
        ]
    );
    // Converged: the next pass writes no status again.
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let status_writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains("/status"))
        .collect();
    assert_eq!(status_writes, Vec::<String>::new());

    // The node class goes missing: the pool's Ready turns False with the reason and message.
    fake.remove(
        "karpenter.cluster.x-k8s.io",
        "clusterapinodeclasses",
        "",
        "default",
    );
    run_pass(&fake).await.unwrap();
    let pool = fake
        .get("karpenter.sh", "nodepools", "", "default")
        .unwrap();
    assert_eq!(
        conditions(&pool),
        vec![
            "Ready=False/NodeClassNotReady",
            "ValidationSucceeded=True/ValidationSucceeded"
        ]
    );
    let ready = &pool["status"]["conditions"][0];
    assert_eq!(ready["message"], "ClusterAPINodeClass default not found");
}

#[tokio::test]
async fn a_disruption_sets_disruption_reason_on_its_claim() {
    // node-1 empty (Empty), node-2 drifted with a pod that fits on node-3.
    let w = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .pod("web", Some(2), "1")
        .pod("c", Some(3), "1")
        .with("NodeClaim", "c-2", stamp_stale);
    let fake = fake_of(&w);
    run_pass(&fake).await.unwrap();
    // The status write each claim got when its node was tainted.
    let reasons = |claim: &str| -> Vec<String> {
        fake.requests()
            .iter()
            .filter(|r| {
                r.method == "PATCH" && r.path.ends_with(&format!("/nodeclaims/{claim}/status"))
            })
            .flat_map(|r| {
                r.body["status"]["conditions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|c| c["type"] == "DisruptionReason")
            .map(|c| {
                format!(
                    "{}/{}",
                    c["status"].as_str().unwrap(),
                    c["reason"].as_str().unwrap()
                )
            })
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect()
    };
    assert_eq!(reasons("c-1"), vec!["True/Empty"]);
    assert_eq!(reasons("c-2"), vec!["True/Drifted"]);
    assert_eq!(reasons("c-3"), Vec::<String>::new());
    // c-2 still exists (its drain is under way) and shows it.
    let c2 = fake.get("karpenter.sh", "nodeclaims", "", "c-2").unwrap();
    assert!(
        conditions(&c2).contains(&"DisruptionReason=True/Drifted".to_string()),
        "{:?}",
        conditions(&c2)
    );
}

#[test]
fn a_pool_whose_node_class_is_missing_provisions_nothing_from_the_first_pass() {
    // K-CP-002, K-CP-030: the provider refuses a claim whose ClusterAPINodeClass does not
    // resolve. The pass that first finds `default` missing (another class exists) creates no
    // claim and reports the pool Ready=False; the control, with the class, provisions.
    let w = World::new("WhenEmpty").md(4, 0).pod("web", None, "1");
    let names = |p: &Plan| -> Vec<String> { lines(p) };
    assert!(names(&w.plan()).contains(&"createNodeClaim NodeClaim/default-".to_string()));
    let missing = w
        .retain(|o| o["kind"] != "ClusterAPINodeClass")
        .add(karpenter_capi_testkit::objects::NodeClass::new("other").ready());
    let p = missing.plan();
    assert!(
        !names(&p).iter().any(|l| l.starts_with("createNodeClaim")),
        "{:?}",
        names(&p)
    );
    assert!(
        p.status.iter().any(|a| matches!(
            a,
            Action::UpdateNodePoolStatus { node_pool, ready: false, message, .. }
                if node_pool == "default" && message == "ClusterAPINodeClass default not found"
        )),
        "{:?}",
        p.status
    );
}

#[test]
fn a_pool_whose_node_class_is_terminating_provisions_nothing() {
    // M-READY-006: core's NodePool readiness reports a node class being deleted
    // (NodeClassTerminating): the pool is not Ready and provisions nothing, from this pass on.
    let w = World::new("WhenEmpty").md(4, 0).pod("web", None, "1");
    let terminating = w.with("ClusterAPINodeClass", "default", |c| {
        c["metadata"]["deletionTimestamp"] = json!(ago(30));
        c["metadata"]["finalizers"] = json!(["example.com/hold"]);
    });
    let p = terminating.plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("createNodeClaim")),
        "{:?}",
        lines(&p)
    );
    assert!(
        p.status.iter().any(|a| matches!(
            a,
            Action::UpdateNodePoolStatus { node_pool, ready: false, message, .. }
                if node_pool == "default" && message == "ClusterAPINodeClass default is terminating"
        )),
        "{:?}",
        p.status
    );
}

#[test]
fn the_nodepool_counter_follows_claims_and_nodes() {
    // M-COUNT-003/005/006/009/010, core's `updateNodePoolResources`: a launched claim counts by
    // its own status.capacity until its Node is there, then by the Node's; a claim or Node being
    // deleted counts nothing; removing the last one brings the counts back to zeros; each pool
    // counts its own.
    let counted = |w: &World, pool: &str| -> (i64, String) {
        let p = w.plan();
        p.status
            .iter()
            .find_map(|a| match a {
                Action::UpdateNodePoolStatus {
                    node_pool,
                    nodes,
                    resources,
                    ..
                } if node_pool == pool => Some((*nodes, resources["cpu"].clone())),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no status for {pool}: {:?}", p.status))
    };
    let labelled = |w: World, i: usize, pool: &str| {
        w.with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["labels"]["karpenter.sh/nodepool"] = json!(pool)
        })
    };
    let empty = World::new("WhenEmpty").md(4, 2);
    assert_eq!(counted(&empty, "default"), (0, "0".to_string()));
    // Launched, no Node yet: its own capacity.
    let launched = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, false, true)
        .with("NodeClaim", "c-1", |c| {
            c["status"]["providerID"] = json!("openstack:///1");
            c["status"]["capacity"] = json!({"cpu": "4", "memory": "8G", "pods": "110"});
        });
    assert_eq!(counted(&launched, "default"), (1, "4".to_string()));
    // Two initialized nodes of 4 cores.
    let two = labelled(
        labelled(
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, true)
                .machine(4, 2, true, true),
            1,
            "default",
        ),
        2,
        "default",
    );
    assert_eq!(counted(&two, "default"), (2, "8".to_string()));
    // One Node, then one claim, being deleted: it no longer counts.
    let node_going = two.clone().with("Node", "node-1", |n| {
        n["metadata"]["deletionTimestamp"] = json!(ago(5));
        n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    });
    assert_eq!(counted(&node_going, "default"), (1, "4".to_string()));
    let claim_going = two.clone().with("NodeClaim", "c-1", |c| {
        c["metadata"]["deletionTimestamp"] = json!(ago(5))
    });
    assert_eq!(counted(&claim_going, "default"), (1, "4".to_string()));
    // Both gone: zeros again.
    let gone = two
        .clone()
        .retain(|o| !["Node", "NodeClaim", "Machine"].contains(&o["kind"].as_str().unwrap_or("")));
    assert_eq!(counted(&gone, "default"), (0, "0".to_string()));
    // Two pools each count their own.
    let other = labelled(two, 2, "other")
        .with("NodeClaim", "c-2", |c| {
            c["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("other")
        })
        .add(NodePool::new("other"));
    assert_eq!(counted(&other, "default"), (1, "4".to_string()));
    assert_eq!(counted(&other, "other"), (1, "4".to_string()));
}

/// Core's `nodeclaim/hydration` and `node/hydration` (M-HYDNC-001, M-HYDN-001): a claim of ours
/// and the Node of a registered one get `karpenter.cluster.x-k8s.io/clusterapinodeclass` (the
/// claim's `nodeClassRef.name`) when they lack it or carry another value; a claim being deleted
/// is left alone; once labelled, the next pass writes nothing for it.
#[tokio::test]
async fn claims_and_their_nodes_get_the_node_class_label() {
    const KEY: &str = "karpenter.cluster.x-k8s.io/clusterapinodeclass";
    let w = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .pod("a", Some(1), "1")
        .pod("b", Some(2), "1")
        .pod("c", Some(3), "1")
        // c-2 carries another class's name on its Node.
        .with("NodeClaim", "c-2", |c| {
            c["metadata"]["labels"][KEY] = json!("default")
        })
        .with("Node", "node-2", |n| {
            n["metadata"]["labels"][KEY] = json!("old")
        })
        // c-3 is being deleted.
        .with("NodeClaim", "c-3", |c| {
            c["metadata"]["deletionTimestamp"] = json!("2026-11-30T09:00:00Z");
            c["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        });
    let fake = fake_of(&w);
    run_pass(&fake).await.unwrap();
    // The writes that carried the label, by path.
    let labelled = |fake: &crate::common::FakeApi| -> Vec<String> {
        let mut out: Vec<String> = fake
            .requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.body.to_string().contains(KEY))
            .map(|r| r.path.clone())
            .collect();
        out.sort();
        out
    };
    assert_eq!(
        labelled(&fake),
        vec![
            "/api/v1/nodes/node-1",
            "/api/v1/nodes/node-2",
            "/apis/karpenter.sh/v1/nodeclaims/c-1"
        ]
    );
    let label = |kind: &str, name: &str| {
        let (group, plural) = if kind == "NodeClaim" {
            ("karpenter.sh", "nodeclaims")
        } else {
            ("", "nodes")
        };
        fake.get(group, plural, "", name).unwrap()["metadata"]["labels"][KEY].clone()
    };
    assert_eq!(label("NodeClaim", "c-1"), json!("default"));
    assert_eq!(label("Node", "node-1"), json!("default"));
    assert_eq!(label("Node", "node-2"), json!("default"));
    assert_eq!(label("Node", "node-3"), Value::Null);
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    assert_eq!(labelled(&fake), Vec::<String>::new());
}
