//! Rule 4 of issue 10: the NodeClaim finalizer, garbage collection, and deletions by users and by Cluster API.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 4: NodeClaim finalizer, garbage collection, user deletions.

#[test]
fn a_deleting_claim_keeps_its_finalizer_until_its_machine_is_being_deleted() {
    let deleting = |w: World| {
        w.with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
    };
    // A user deleted the claim of a node with a pod: drained at once (forceful), no home check;
    // its pod is provisioned for in the same pass.
    let p = deleting(idle(1).pod("web", Some(1), "1")).plan();
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1",
            "evictPod Pod/default/web"
        ]
    );
    // Machine being deleted: the finalizer comes off.
    let p = deleting(one_empty(0))
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5));
        })
        .plan();
    assert_eq!(lines(&p), vec!["removeNodeClaimFinalizer NodeClaim/c-1"]);
}

#[test]
fn a_claim_whose_machine_vanished_is_garbage_collected_only_when_machines_were_seen() {
    let vanished = |ready: &str| {
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("a", Some(1), "1")
            .pod("b", Some(2), "1")
            .with("Node", "node-1", |n| {
                n["status"]["conditions"][0]["status"] = json!(ready)
            })
    };
    let mut w = vanished("False");
    w.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    let p = w.plan();
    assert!(
        lines(&p).contains(&"deleteNodeClaim NodeClaim/c-1".to_string()),
        "{:?}",
        lines(&p)
    );
    let json = serde_json::to_value(&p).unwrap();
    let gc = json["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "deleteNodeClaim")
        .unwrap();
    assert_eq!(gc["reason"], "GarbageCollected");
    // Whatever the consolidation policy: also under WhenEmptyOrUnderutilized.
    let mut w2 = w.clone();
    w2 = w2.with("NodePool", "default", |np| {
        np["spec"]["disruption"]["consolidationPolicy"] = json!("WhenEmptyOrUnderutilized")
    });
    assert!(lines(&w2.plan()).contains(&"deleteNodeClaim NodeClaim/c-1".to_string()));
    // Node still Ready: not collected.
    let mut w = vanished("True");
    w.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    assert!(
        !lines(&w.plan())
            .iter()
            .any(|l| l.starts_with("deleteNodeClaim"))
    );
    // No Machines in the input at all: the Machine list is missing, nothing is collected.
    let mut w = vanished("False");
    w.objects_mut().retain(|o| o["kind"] != "Machine");
    assert!(
        !lines(&w.plan())
            .iter()
            .any(|l| l.starts_with("deleteNodeClaim"))
    );
}

#[test]
fn kubectl_delete_node_is_a_disruption_request_but_cluster_api_deleting_it_is_not() {
    let node_deleted = idle(1)
        .pod("web", Some(1), "1")
        .with("Node", "node-1", |n| {
            n["metadata"]["deletionTimestamp"] = json!(ago(5));
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        });
    let p = node_deleted.plan();
    // Its pod is provisioned for in the same pass.
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "deleteNodeClaim NodeClaim/c-1"
        ]
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][1]["reason"], "NodeDeleted");
    // Cluster API deletes the Machine (and then its Node): nothing to do, finalizer kept.
    let p = node_deleted
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5))
        })
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
        .plan();
    // Its pod still needs a home: provisioned for as a deleting node's.
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "removeNodeClaimFinalizer NodeClaim/c-1"
        ]
    );
}

/// Cluster API deletes a Machine and its Node (a MachineHealthCheck remediation, a rollout, a
/// `kubectl delete machine`) while our NodeClaim is alive: Cluster API drains and removes the
/// node itself, so the plan neither drains it, nor deletes its claim as a user request, nor picks
/// it for a disruption of its own; once the Machine is gone the claim is garbage-collected.
#[test]
fn cluster_api_deleting_a_machine_and_its_node_takes_no_disruption_action() {
    let capi_deletes = |w: World, i: usize| {
        w.with("Machine", &format!("m-{i}"), |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(20));
            m["metadata"]["finalizers"] = json!(["machine.cluster.x-k8s.io"]);
        })
        .with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["deletionTimestamp"] = json!(ago(5));
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        })
    };
    let touches_1 = |p: &Plan| -> Vec<String> {
        let v = serde_json::to_value(p).unwrap();
        v["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                let t = a["target"].as_str().unwrap();
                t == "Node/node-1"
                    || t == "NodeClaim/c-1"
                    || t.ends_with("/m-1")
                    || a["node"] == "node-1"
            })
            .map(|a| {
                format!(
                    "{} {}",
                    a["action"].as_str().unwrap(),
                    a["target"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Empty (emptiness would pick it), WhenEmpty: no action at all.
    let p = capi_deletes(idle(1), 1).plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    // With pods and room on node-2, under WhenEmptyOrUnderutilized: node-1 is neither tainted nor
    // drained nor consolidated, its claim is not deleted (it is no user deletion).
    let busy = World::new("WhenEmptyOrUnderutilized")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("a", Some(1), "500m")
        .pod("b", Some(2), "500m");
    let p = capi_deletes(busy.clone(), 1).plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Without Cluster API deleting it, the same node-1 is consolidated: the state above does
    // exercise the rule.
    assert!(
        !touches_1(&busy.plan()).is_empty(),
        "{:?}",
        lines(&busy.plan())
    );
    // Drifted and NotReady (Cluster API drained it): still nothing, not garbage-collected while
    // its Machine exists.
    let p = capi_deletes(busy.clone(), 1)
        .with("NodeClaim", "c-1", stamp_stale)
        .with("Node", "node-1", |n| {
            n["status"]["conditions"][0]["status"] = json!("False")
        })
        .plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Only the Machine being deleted (the Node not yet): the same.
    let p = busy
        .clone()
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(20))
        })
        .plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Once Cluster API removed the Machine and the Node is NotReady: garbage-collected.
    let mut gone = capi_deletes(busy, 1).with("Node", "node-1", |n| {
        n["status"]["conditions"][0]["status"] = json!("False")
    });
    gone.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    let p = gone.plan();
    let json = serde_json::to_value(&p).unwrap();
    let gc: Vec<(&str, &str)> = json["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "deleteNodeClaim")
        .map(|a| (a["target"].as_str().unwrap(), a["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(gc, vec![("NodeClaim/c-1", "GarbageCollected")]);
}

#[test]
fn the_node_finalizer_stays_until_the_machine_is_gone() {
    let w = World::new("WhenEmpty")
        .md(4, 0)
        .machine(4, 1, true, false)
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5))
        })
        .with("Node", "node-1", |n| {
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"])
        });
    assert_eq!(lines(&w.plan()), Vec::<String>::new());
    let mut gone = w.machine(4, 2, false, false);
    gone.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    assert!(lines(&gone.plan()).contains(&"removeNodeFinalizer Node/node-1".to_string()));
}

#[test]
fn a_deleting_claim_whose_machine_is_gone_is_released_only_when_machines_were_seen() {
    // K-CP-004, K-CP-010: the provider answers "not found" for a claim whose Machine is gone,
    // and core then lets the claim go. Ours releases its finalizer when the Machines were listed
    // (m-2 is there) and marks or scales nothing; with no Machine in the input at all its
    // absence proves nothing, so the finalizer stays and a note says why.
    let w = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("b", Some(2), "1")
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        });
    let mut gone = w.clone();
    gone.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    let p = gone.plan();
    assert_eq!(lines(&p), vec!["removeNodeClaimFinalizer NodeClaim/c-1"]);
    let mut unseen = w;
    unseen.objects_mut().retain(|o| o["kind"] != "Machine");
    let p = unseen.plan();
    assert!(
        !lines(&p).contains(&"removeNodeClaimFinalizer NodeClaim/c-1".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(has_note(
        &p,
        "NodeClaim c-1: its Machine capi-ovh/m-1 was not observed; its finalizer stays"
    ));
}
