//! Issue 10 done-when through the real binary: replayed dumps planned with `run --once --dry-run -o json -f STATE.yaml --now T`, the JSON asserted exactly.

use super::*;

// ---------------------------------------------------------------------------------------------
// Issue 10 done-when: the safe plans through the real binary, as an operator replays a dump
// (`run --once --dry-run -o json -f STATE.yaml --now T`), the JSON asserted exactly.

/// Runs the binary on `w` as of `NOW`: the JSON plan.
fn cli_plan(w: &World, tag: &str) -> Value {
    let path = std::env::temp_dir().join(format!(
        "karpenter-capi-safety-{tag}-{}.yaml",
        std::process::id()
    ));
    std::fs::write(&path, w.text()).unwrap();
    let out = assert_cmd::Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .args([
            "run",
            "--once",
            "--dry-run",
            "-o",
            "json",
            "--now",
            NOW,
            "-f",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The actions of a JSON plan with the fields that say what is done to what.
fn decided(plan: &Value) -> Value {
    let keep = [
        "action",
        "target",
        "machine",
        "node",
        "nodeClaim",
        "nodePool",
        "reason",
        "from",
        "replicas",
    ];
    Value::Array(
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                Value::Object(
                    a.as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| keep.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            })
            .collect(),
    )
}

#[test]
fn cli_a_populated_machine_deployment_labelled_member_is_adopted_nothing_deleted() {
    // Three Machines with Nodes and no claims, pods on two; replicas as seen, and higher (a
    // Machine being created): adopted in place, no Machine marked, no scale, no taint.
    for replicas in [3, 5] {
        let w = World::new("WhenEmptyOrUnderutilized")
            .md(4, replicas)
            .machine(4, 1, true, false)
            .machine(4, 2, true, false)
            .machine(4, 3, true, false)
            .pod("web-1", Some(1), "500m")
            .pod("web-2", Some(2), "1");
        let plan = cli_plan(&w, &format!("adopt-{replicas}"));
        let adopt = |i: u32| {
            json!({"action": "adoptMachine", "target": format!("Machine/capi-ovh/m-{i}"),
                "machine": format!("capi-ovh/m-{i}"), "node": format!("node-{i}"),
                "nodeClaim": format!("node-{i}"), "nodePool": "default"})
        };
        assert_eq!(
            decided(&plan),
            json!([adopt(1), adopt(2), adopt(3)]),
            "replicas {replicas}"
        );
        assert!(
            plan["pending"].as_array().is_none_or(|a| a.is_empty()),
            "replicas {replicas}: {}",
            plan["pending"]
        );
    }
}

#[test]
fn cli_a_stale_view_or_a_rollout_lowers_no_replicas_and_says_why() {
    // The command under way (tainted a minute ago) carried out: mark and delete.
    let drain = |reason: &str| {
        json!([
            {"action": "markMachineForDeletion", "target": "Machine/capi-ovh/m-1", "machine": "capi-ovh/m-1", "nodeClaim": "c-1", "reason": reason},
            {"action": "deleteNodeClaim", "target": "NodeClaim/c-1", "nodeClaim": "c-1", "reason": reason},
        ])
    };
    let cases: Vec<(&str, World, &str)> = vec![
        (
            "generation",
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["metadata"]["generation"] = json!(2);
            }),
            "MachineDeployment capi-ovh/md-4: replicas not lowered from 1: status.observedGeneration 1 is behind metadata.generation 2; the marked Machine(s) m-1 wait",
        ),
        (
            "machinesets",
            one_empty(1).add(machine_set(4, "md-4-a", 2, 600)),
            "stale view: 1 Machines seen, its MachineSets report 2",
        ),
        (
            "rollout",
            one_empty(2)
                .add(machine_set(4, "md-4-a", 1, 600))
                .add(machine_set(4, "md-4-b", 1, 60))
                .machine(4, 9, false, false)
                .with("Machine", "m-9", |m| {
                    m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"] = json!("");
                }),
            "rolling out: MachineSets md-4-a, md-4-b have replicas",
        ),
    ];
    for (tag, w, note) in cases {
        let plan = cli_plan(&w, tag);
        assert_eq!(decided(&plan), drain("Empty"), "{tag}");
        let notes: Vec<&str> = plan["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(notes.iter().any(|n| n.contains(note)), "{tag}: {notes:?}");
    }
    // The same node with a consistent view: the scale goes, by exactly the Machine marked.
    let plan = cli_plan(&one_empty(1).add(machine_set(4, "md-4-a", 1, 600)), "fresh");
    let mut expected = drain("Empty");
    expected
        .as_array_mut()
        .unwrap()
        .push(json!({"action": "scaleMachineDeployment",
        "target": "MachineDeployment/capi-ovh/md-4", "from": 1, "replicas": 0}));
    assert_eq!(decided(&plan), expected);
    assert!(
        plan["notes"].as_array().is_none_or(|a| a.is_empty()),
        "{}",
        plan["notes"]
    );
}

/// Rule 2: the scale carries the `resourceVersion` read, so another writer's change in between
/// gives a 409; it is not retried blindly (the replicas computed are stale): the pass reports the
/// failure, unmarks the Machine, and the next pass re-plans from the MachineDeployment as it now
/// is, lowering it by exactly the Machine it marks again.
#[tokio::test]
async fn a_conflict_on_the_scale_is_reported_not_retried_and_the_next_pass_replans() {
    let w = one_empty(1).add(machine_set(4, "md-4-a", 1, 600));
    let fake = fake_of(&w);
    let md_path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-4";
    let m1 = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/m-1";
    fake.fail("PATCH", &format!("{md_path}/scale"), 409, 1);
    let err = run_pass(&fake).await.unwrap_err().to_string();
    assert!(
        err.starts_with("scaleMachineDeployment MachineDeployment/capi-ovh/md-4 failed")
            && err.contains("(409)"),
        "{err}"
    );
    let scales: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains("/scale"))
        .collect();
    assert_eq!(
        scales,
        vec![format!("PATCH {md_path}/scale 409")],
        "one attempt, no blind retry"
    );
    let machine_writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains(m1) || w.contains("/scale"))
        .collect();
    assert_eq!(
        machine_writes,
        vec![
            format!("PATCH {m1} 200"),
            format!("PATCH {md_path}/scale 409"),
            format!("PATCH {m1} 200"),
        ],
        "marked, the scale refused, unmarked"
    );
    let m = fake.get("cluster.x-k8s.io", "machines", NS, "m-1").unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_none(),
        "{m}"
    );
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 1);

    // The writer that caused the conflict raised replicas to 2 (its Machine not created yet).
    fake.mutate("cluster.x-k8s.io", "machinedeployments", NS, "md-4", |md| {
        md["spec"]["replicas"] = json!(2)
    });
    fake.mutate("cluster.x-k8s.io", "machinesets", NS, "md-4-a", |ms| {
        ms["spec"]["replicas"] = json!(2)
    });
    let rv = fake
        .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
        .unwrap()["metadata"]["resourceVersion"]
        .clone();
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let scales: Vec<(String, u16, Value)> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/scale"))
        .map(|r| (r.path.clone(), r.code, r.body.clone()))
        .collect();
    assert_eq!(
        scales,
        vec![(
            format!("{md_path}/scale"),
            200,
            json!({"spec": {"replicas": 1}, "metadata": {"resourceVersion": rv}})
        )],
        "re-planned from 2, lowered by the one Machine marked, with the new resourceVersion"
    );
    let m = fake.get("cluster.x-k8s.io", "machines", NS, "m-1").unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_some(),
        "{m}"
    );
}
