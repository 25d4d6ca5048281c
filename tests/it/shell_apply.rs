//! The executor against the in-memory API: each action's writes land as the API would store
//! them, conflicts are retried, failures roll back and stop the pass, and a second pass finishes.

use crate::common;

use std::collections::BTreeMap;

use common::FakeApi;
use karpenter_capi::controller::{Action, Plan};
use karpenter_capi::kube::apply::{ActionOutcome, Executor};
use karpenter_capi::kube::list::Clients;
use karpenter_capi::model::Price;
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{
    Machine, MachineDeployment, Node, NodeClaim, NodeClass, Object, Pod,
};
use serde_json::{Value, json};

/// A member MachineDeployment with one Machine, its Node not yet registered (both startup
/// taints), the NodeClaim launched for it, the node class and a pod on the node.
fn objects() -> World {
    World::empty()
        .add(MachineDeployment::new("capi-ovh", "c3-8").member())
        .add(Machine::new("capi-ovh", "c3-8-abcde").deployment("c3-8"))
        .add(
            Node::new("node-1")
                .provider_id("openstack:///1111")
                .taint("karpenter.sh/unregistered", "NoExecute")
                .taint("node.cluster.x-k8s.io/uninitialized", "NoSchedule"),
        )
        .add(NodeClaim::new("default-x7k2p", "default").set(
            "/status",
            json!({"providerID": "openstack:///1111", "conditions": [{"type": "Launched", "status": "True",
                "reason": "Launched", "message": "", "lastTransitionTime": "2026-11-30T10:01:00Z"}]}),
        ))
        .add(NodeClass::new("default"))
        .add(Pod::new("default", "web-0").on("node-1").image("pause"))
}

fn world() -> (FakeApi, Executor) {
    let fake = FakeApi::new();
    fake.seed_world(&objects());
    let client = fake.client();
    let exec = Executor::new(Clients {
        workload: client.clone(),
        management: client,
    });
    (fake, exec)
}

fn now() -> jiff::Timestamp {
    "2026-11-30T10:05:00Z".parse().unwrap()
}

fn plan(actions: Vec<Action>) -> Plan {
    Plan {
        actions,
        ..Plan::default()
    }
}

fn create_claim() -> Action {
    Action::CreateNodeClaim {
        target: "NodeClaim/default-".into(),
        node_pool: "default".into(),
        machine_deployment: "capi-ovh/c3-8".into(),
        instance_type: "c3-8".into(),
        pods: vec!["default/big-0".into()],
        price_per_hour: Price(100_000_000),
        reason: "Provisioning".into(),
        manifest: json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodeClaim",
            "metadata": {
                "generateName": "default-",
                "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c3-8"},
                "annotations": {"karpenter-capi/machine-deployment": "capi-ovh/c3-8"}
            },
            "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
                     "resources": {"requests": {"cpu": "3100m"}}}
        }),
    }
}

fn scale(from: i64, replicas: i64, rollback: &[&str]) -> Action {
    Action::ScaleMachineDeployment {
        target: "MachineDeployment/capi-ovh/c3-8".into(),
        machine_deployment: "capi-ovh/c3-8".into(),
        from,
        replicas,
        rollback_machines: rollback.iter().map(|s| s.to_string()).collect(),
        resource_version: None,
        api_version: "cluster.x-k8s.io/v1beta2".into(),
    }
}

fn claim(node_claim: &str) -> Action {
    Action::ClaimMachine {
        target: "Machine/capi-ovh/c3-8-abcde".into(),
        machine: "capi-ovh/c3-8-abcde".into(),
        node_claim: node_claim.into(),
        api_version: "cluster.x-k8s.io/v1beta2".into(),
    }
}

fn register() -> Action {
    Action::RegisterNode {
        target: "Node/node-1".into(),
        node: "node-1".into(),
        node_claim: "default-x7k2p".into(),
        labels: [("karpenter.sh/nodepool".to_string(), "default".to_string())].into(),
        annotations: BTreeMap::new(),
        taints: vec!["dedicated=ml:NoSchedule".into()],
        node_claim_uid: Some("uid-4".into()),
        status: serde_json::from_value(
            json!({"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3800m"}}),
        )
        .unwrap(),
        unregistered_taint_missing: false,
    }
}

fn mark(machine: &str) -> Action {
    Action::MarkMachineForDeletion {
        target: format!("Machine/{machine}"),
        machine: machine.into(),
        node_claim: Some("default-x7k2p".into()),
        reason: "RegistrationTimeout".into(),
        api_version: "cluster.x-k8s.io/v1beta2".into(),
    }
}

fn annotations(v: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(
        v.pointer("/metadata/annotations")
            .cloned()
            .unwrap_or(json!({})),
    )
    .unwrap()
}

#[tokio::test]
async fn create_scale_and_claim_land_as_written() {
    let (fake, exec) = world();
    let results = exec
        .execute(&plan(vec![create_claim(), scale(0, 1, &[])]), now())
        .await;
    assert_eq!(
        results
            .iter()
            .map(|r| r.outcome.clone())
            .collect::<Vec<_>>(),
        vec![ActionOutcome::Applied, ActionOutcome::Applied]
    );
    let created = &results[0].created;
    assert_eq!(created.len(), 1);
    let name = created[0].strip_prefix("NodeClaim/").unwrap().to_string();
    assert!(
        name.starts_with("default-") && name.len() == "default-".len() + 5,
        "{name}"
    );

    // Read back: the claim as planned, replicas through the scale subresource.
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &name).unwrap();
    assert_eq!(
        nc["metadata"]["labels"],
        json!({"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c3-8"})
    );
    assert_eq!(nc["spec"]["resources"]["requests"]["cpu"], "3100m");
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 1);
    let writes = fake
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect::<Vec<_>>();
    assert_eq!(
        writes.iter().map(|r| r.line()).collect::<Vec<_>>(),
        vec![
            "POST /apis/karpenter.sh/v1/nodeclaims",
            // Karpenter's Nominated on the pod the claim is for, naming the generated claim.
            "POST /api/v1/namespaces/default/events",
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/c3-8/scale"
        ]
    );
    assert!(
        writes
            .iter()
            .all(|r| r.query.contains("fieldManager=karpenter-capi")),
        "{writes:?}"
    );
    assert_eq!(writes[1].body["reason"], "Nominated");
    assert_eq!(writes[1].body["type"], "Normal");
    assert_eq!(
        writes[1].body["message"],
        format!("Pod should schedule on: nodeclaim/{name}")
    );
    assert_eq!(
        writes[1].body["involvedObject"],
        json!({"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "big-0"})
    );
    assert_eq!(writes[2].body, json!({"spec": {"replicas": 1}}));
    assert!(
        writes[2]
            .content_type
            .starts_with("application/merge-patch+json")
    );

    // Claim: the NodeClaim annotated first, then the Machine labelled.
    fake.clear_log();
    let results = exec.execute(&plan(vec![claim(&name)]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert_eq!(
        fake.writes(),
        vec![
            format!("PATCH /apis/karpenter.sh/v1/nodeclaims/{name} 200"),
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/c3-8-abcde 200"
                .to_string(),
        ]
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &name).unwrap();
    assert_eq!(
        annotations(&nc)
            .get("cluster.x-k8s.io/machine")
            .map(String::as_str),
        Some("capi-ovh/c3-8-abcde")
    );
    let m = fake
        .get("cluster.x-k8s.io", "machines", "capi-ovh", "c3-8-abcde")
        .unwrap();
    assert_eq!(
        m["metadata"]["labels"],
        json!({"cluster.x-k8s.io/deployment-name": "c3-8", "node.cluster.x-k8s.io/karpenter-member": ""})
    );

    // Scaling again to the same value is harmless: absolute, never +1.
    exec.execute(&plan(vec![scale(1, 1, &[])]), now()).await;
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 1);
}

#[tokio::test]
async fn register_node_retries_a_conflict_by_rereading() {
    let (fake, exec) = world();
    // Another writer wins the first race: the first patch of the Node gets a 409.
    fake.fail("PATCH", "/api/v1/nodes/node-1", 409, 1);
    let results = exec.execute(&plan(vec![register()]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    let log: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.line(), r.code))
        .collect();
    assert_eq!(
        log,
        vec![
            "GET /api/v1/nodes/node-1 200",
            "PATCH /api/v1/nodes/node-1 409",
            "GET /api/v1/nodes/node-1 200",
            "PATCH /api/v1/nodes/node-1 200",
            "GET /apis/karpenter.sh/v1/nodeclaims/default-x7k2p 200",
            "PATCH /apis/karpenter.sh/v1/nodeclaims/default-x7k2p/status 200",
        ]
    );
    // The node patch is guarded by the resourceVersion it was computed from.
    let node_patch = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "PATCH")
        .unwrap();
    assert!(
        node_patch.body["metadata"]["resourceVersion"].is_string(),
        "{}",
        node_patch.body
    );

    let node = fake.get("", "nodes", "", "node-1").unwrap();
    assert_eq!(
        node["metadata"]["labels"],
        json!({"kubernetes.io/hostname": "node-1", "karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true"})
    );
    assert_eq!(
        node["spec"]["taints"],
        json!([{"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}, {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])
    );
    assert_eq!(
        node["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    assert_eq!(
        node["metadata"]["ownerReferences"],
        json!([{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x7k2p", "uid": "uid-4", "blockOwnerDeletion": true}])
    );
    let nc = fake
        .get("karpenter.sh", "nodeclaims", "", "default-x7k2p")
        .unwrap();
    assert_eq!(nc["status"]["nodeName"], "node-1");
    assert_eq!(nc["status"]["allocatable"], json!({"cpu": "3800m"}));
    let conds = nc["status"]["conditions"].as_array().unwrap();
    assert_eq!(conds[0]["type"], "Launched");
    assert_eq!(
        conds[0]["lastTransitionTime"], "2026-11-30T10:01:00Z",
        "unchanged conditions keep their time"
    );
    assert_eq!(conds[1]["type"], "Registered");
    assert_eq!(conds[1]["status"], "True");
    assert_eq!(conds[1]["lastTransitionTime"], "2026-11-30T10:05:00Z");

    // Applying the same action again writes nothing: the node and the status already say it.
    fake.clear_log();
    let results = exec.execute(&plan(vec![register()]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert_eq!(fake.writes(), Vec::<String>::new());
}

#[tokio::test]
async fn persistent_conflicts_give_up_after_five_attempts() {
    let (fake, exec) = world();
    fake.fail("PATCH", "/api/v1/nodes/node-1", 409, 100);
    let results = exec
        .execute(&plan(vec![register(), scale(0, 1, &[])]), now())
        .await;
    match &results[0].outcome {
        ActionOutcome::Failed { write, error, .. } => {
            assert_eq!(*write, 0);
            assert!(
                error.starts_with(
                    "workload cluster: patch nodes node-1: the object has been modified"
                ),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
    // One failure stays local: the scale of an unrelated MachineDeployment still runs.
    assert_eq!(results[1].outcome, ActionOutcome::Applied);
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.contains("/nodes/"))
            .count(),
        5
    );
}

#[tokio::test]
async fn failed_scale_rolls_back_the_delete_machine_mark() {
    let (fake, exec) = world();
    fake.mutate(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi-ovh",
        "c3-8",
        |md| md["spec"]["replicas"] = json!(2),
    );
    fake.fail("PATCH", "/machinedeployments/c3-8/scale", 500, 1);
    let results = exec
        .execute(
            &plan(vec![
                mark("capi-ovh/c3-8-abcde"),
                scale(2, 1, &["capi-ovh/c3-8-abcde"]),
            ]),
            now(),
        )
        .await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    match &results[1].outcome {
        ActionOutcome::Failed {
            write,
            error,
            rollback_errors,
        } => {
            assert_eq!(*write, 0);
            assert_eq!(
                error,
                "management cluster: patch machinedeployments.cluster.x-k8s.io/scale capi-ovh/c3-8: etcdserver: request timed out (500)"
            );
            assert!(rollback_errors.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // Annotate, then scale (refused), then the annotation is removed again.
    assert_eq!(
        fake.writes(),
        vec![
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/c3-8-abcde 200",
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/c3-8/scale 500",
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/c3-8-abcde 200",
        ]
    );
    let patches: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("c3-8-abcde"))
        .map(|r| r.body)
        .collect();
    assert_eq!(
        patches[0],
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": "RegistrationTimeout", "karpenter-capi/marked-for": "default-x7k2p"}}})
    );
    assert_eq!(
        patches[1],
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": null, "karpenter-capi/marked-for": null}}})
    );
    let m = fake
        .get("cluster.x-k8s.io", "machines", "capi-ovh", "c3-8-abcde")
        .unwrap();
    assert!(!annotations(&m).contains_key("cluster.x-k8s.io/delete-machine"));
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 2);
}

#[tokio::test]
async fn an_error_mid_plan_skips_only_what_shares_its_objects_and_the_next_pass_finishes() {
    let (fake, exec) = world();
    fake.fail("PATCH", "/scale", 503, 1);
    let results = exec
        .execute(
            &plan(vec![
                create_claim(),
                scale(0, 1, &[]),
                scale(1, 2, &[]),
                claim("default-x7k2p"),
            ]),
            now(),
        )
        .await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert!(results[1].failed());
    // The same MachineDeployment's next scale is skipped; the unrelated binding runs.
    assert_eq!(results[2].outcome, ActionOutcome::Skipped);
    assert_eq!(results[3].outcome, ActionOutcome::Applied);
    assert_eq!(fake.all("karpenter.sh", "nodeclaims").len(), 2);
    assert_eq!(
        fake.get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
            .unwrap()["spec"]["replicas"],
        0
    );
    let m = fake
        .get("cluster.x-k8s.io", "machines", "capi-ovh", "c3-8-abcde")
        .unwrap();
    assert_eq!(
        m["metadata"]["labels"],
        json!({"cluster.x-k8s.io/deployment-name": "c3-8", "node.cluster.x-k8s.io/karpenter-member": ""})
    );

    // The next pass re-plans the same absolute writes (the claim now exists, so no new create).
    let results = exec
        .execute(&plan(vec![scale(0, 1, &[]), claim("default-x7k2p")]), now())
        .await;
    assert!(
        results.iter().all(|r| r.outcome == ActionOutcome::Applied),
        "{results:?}"
    );
    assert_eq!(
        fake.get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
            .unwrap()["spec"]["replicas"],
        1
    );
    let nc = fake
        .get("karpenter.sh", "nodeclaims", "", "default-x7k2p")
        .unwrap();
    assert_eq!(
        annotations(&nc)["cluster.x-k8s.io/machine"],
        "capi-ovh/c3-8-abcde"
    );
}

#[tokio::test]
async fn delete_records_an_event_and_accepts_an_absent_claim() {
    let (fake, exec) = world();
    let delete = |name: &str| Action::DeleteNodeClaim {
        target: format!("NodeClaim/{name}"),
        node_claim: name.into(),
        reason: "RegistrationTimeout".into(),
        message: "Node not registered with cluster within 15m0s".into(),
        machine: None,
        add_finalizer: false,
    };
    let results = exec
        .execute(
            &plan(vec![delete("default-x7k2p"), delete("gone-12345")]),
            now(),
        )
        .await;
    assert!(
        results.iter().all(|r| r.outcome == ActionOutcome::Applied),
        "{results:?}"
    );
    assert!(
        fake.get("karpenter.sh", "nodeclaims", "", "default-x7k2p")
            .is_none()
    );
    let events = fake.all("", "events");
    assert_eq!(events.len(), 2);
    let e = &events
        .iter()
        .find(|e| e["involvedObject"]["name"] == "default-x7k2p")
        .unwrap();
    assert_eq!(e["metadata"]["namespace"], "default");
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["reason"], "RegistrationTimeout");
    assert_eq!(
        e["message"],
        "Node not registered with cluster within 15m0s"
    );
    assert_eq!(
        e["involvedObject"],
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x7k2p"})
    );
    assert_eq!(e["source"]["component"], "karpenter-capi");
}

#[tokio::test]
async fn an_event_that_cannot_be_recorded_does_not_block_the_delete() {
    let (fake, exec) = world();
    fake.fail("POST", "/events", 403, 1);
    let results = exec
        .execute(
            &plan(vec![Action::DeleteNodeClaim {
                target: "NodeClaim/default-x7k2p".into(),
                node_claim: "default-x7k2p".into(),
                reason: "LaunchTimeout".into(),
                message: "no providerID".into(),
                machine: None,
                add_finalizer: false,
            }]),
            now(),
        )
        .await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert!(
        fake.get("karpenter.sh", "nodeclaims", "", "default-x7k2p")
            .is_none()
    );
}

#[tokio::test]
async fn launch_and_node_class_ready_set_status_through_the_subresource() {
    let (fake, exec) = world();
    let launch = Action::LaunchNodeClaim {
        target: "NodeClaim/default-x7k2p".into(),
        node_claim: "default-x7k2p".into(),
        machine: "capi-ovh/c3-8-abcde".into(),
        provider_id: "openstack:///2222".into(),
    };
    let ready = Action::SetNodeClassReady {
        target: "ClusterAPINodeClass/default".into(),
        node_class: "default".into(),
    };
    let results = exec
        .execute(&plan(vec![launch, ready.clone()]), now())
        .await;
    assert!(
        results.iter().all(|r| r.outcome == ActionOutcome::Applied),
        "{results:?}"
    );
    let nc = fake
        .get("karpenter.sh", "nodeclaims", "", "default-x7k2p")
        .unwrap();
    assert_eq!(nc["status"]["providerID"], "openstack:///2222");
    assert_eq!(
        nc["status"]["conditions"][0]["message"],
        "Machine capi-ovh/c3-8-abcde has providerID openstack:///2222"
    );
    let class = fake
        .get(
            "karpenter.cluster.x-k8s.io",
            "clusterapinodeclasses",
            "",
            "default",
        )
        .unwrap();
    assert_eq!(
        class["status"]["conditions"],
        json!([{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-11-30T10:05:00Z"}])
    );
    assert!(fake.requests().iter().any(|r| r.line()
        == "PATCH /apis/karpenter.cluster.x-k8s.io/v1alpha1/clusterapinodeclasses/default/status"));
    fake.clear_log();
    exec.execute(&plan(vec![ready]), now()).await;
    assert_eq!(
        fake.writes(),
        Vec::<String>::new(),
        "already Ready: nothing to write"
    );
}

#[tokio::test]
async fn eviction_goes_through_the_eviction_api() {
    let (fake, exec) = world();
    let evict = Action::EvictPod {
        target: "Pod/default/web-0".into(),
        pod: "default/web-0".into(),
        node: "node-1".into(),
        reason: "Empty".into(),
        uid: None,
    };
    fake.fail("POST", "/pods/web-0/eviction", 429, 1);
    // A PodDisruptionBudget refusing (429) is not a failure that stops the pass: the pod stays,
    // the node stays tainted, and the next pass evicts again.
    let results = exec.execute(&plan(vec![evict.clone()]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert!(fake.get("", "pods", "default", "web-0").is_some());
    let results = exec.execute(&plan(vec![evict]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert!(fake.get("", "pods", "default", "web-0").is_none());
    // The last request but the Events it records.
    let last = fake
        .requests()
        .into_iter()
        .rfind(|r| !r.line().ends_with("/events"))
        .unwrap();
    assert_eq!(
        last.line(),
        "POST /api/v1/namespaces/default/pods/web-0/eviction"
    );
    assert_eq!(last.body["metadata"]["name"], "web-0");
}

#[tokio::test]
async fn a_create_with_a_fixed_name_is_a_server_side_apply() {
    let (fake, exec) = world();
    let Action::CreateNodeClaim { manifest, .. } = create_claim() else {
        unreachable!()
    };
    let mut manifest = manifest;
    manifest["metadata"]["name"] = json!("default-fixed");
    let write = karpenter_capi::controller::write::Write::Create {
        cluster: karpenter_capi::error::ClusterRole::Workload,
        resource: karpenter_capi::vocab::kinds::NODE_CLAIM,
        object: manifest,
    };
    for _ in 0..2 {
        let created = exec.execute_write(&write, now()).await.unwrap();
        assert_eq!(created.as_deref(), Some("NodeClaim/default-fixed"));
    }
    let reqs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert_eq!(reqs.len(), 2, "applied twice, created once");
    assert!(
        reqs.iter().all(
            |r| r.line() == "PATCH /apis/karpenter.sh/v1/nodeclaims/default-fixed"
                && r.content_type.starts_with("application/apply-patch")
                && r.query.contains("fieldManager=karpenter-capi")
                && r.query.contains("force=true")
        ),
        "{reqs:?}"
    );
    assert_eq!(fake.all("karpenter.sh", "nodeclaims").len(), 2);
}

/// A claim for many pods nominates them through core's bucket (bursts of 10), not one Event per
/// pod at once; a replacement claim gets `DisruptionLaunching` on itself instead.
#[tokio::test]
async fn nominations_are_rate_limited_and_a_replacement_announces_its_launch() {
    let (fake, exec) = world();
    let mut many = create_claim();
    if let Action::CreateNodeClaim { pods, .. } = &mut many {
        *pods = (0..40).map(|i| format!("default/web-{i}")).collect();
    }
    let mut replacement = create_claim();
    if let Action::CreateNodeClaim { reason, .. } = &mut replacement {
        *reason = "Drifted".to_string();
    }
    let results = exec.execute(&plan(vec![many, replacement]), now()).await;
    assert!(results.iter().all(|r| r.outcome == ActionOutcome::Applied));
    let events = fake.all("", "events");
    let nominated = events.iter().filter(|e| e["reason"] == "Nominated").count();
    assert_eq!(nominated, 10, "the burst, then 5 a second");
    let replacement = results[1].created[0].strip_prefix("NodeClaim/").unwrap();
    let launching: Vec<(&str, &str, &str)> = events
        .iter()
        .filter(|e| e["reason"] == "DisruptionLaunching")
        .map(|e| {
            (
                e["involvedObject"]["kind"].as_str().unwrap(),
                e["involvedObject"]["name"].as_str().unwrap(),
                e["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        launching,
        vec![("NodeClaim", replacement, "Launching NodeClaim: Drifted")]
    );
}

/// Core's terminator (`terminator/eviction.go` Queue.Reconcile, `events.go` NodeFailedToDrain):
/// an eviction a PodDisruptionBudget refuses (429), or the API server refuses for a pod under two
/// budgets (500), records a `FailedDraining` Warning on the Node in core's words and no
/// `Evicted`; an eviction that goes records `Evicted` on the pod.
#[tokio::test]
async fn a_refused_eviction_records_failed_draining_on_the_node() {
    use karpenter_capi::kube::apply::MULTIPLE_PDBS_MESSAGE;
    let (fake, exec) = world();
    let evict = Action::EvictPod {
        target: "Pod/default/web-0".into(),
        pod: "default/web-0".into(),
        node: "node-1".into(),
        reason: "Expired".into(),
        uid: None,
    };
    let drain_events = |fake: &FakeApi| -> Vec<(String, String, String, String)> {
        fake.all("", "events")
            .iter()
            .filter(|e| e["reason"] == "FailedDraining" || e["reason"] == "Evicted")
            .map(|e| {
                let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
                (
                    s(&e["involvedObject"]["kind"]),
                    s(&e["involvedObject"]["name"]),
                    s(&e["type"]),
                    s(&e["message"]),
                )
            })
            .collect()
    };
    let refused = |why: &str| {
        (
            "Node".to_string(),
            "node-1".to_string(),
            "Warning".to_string(),
            format!("Failed to drain node, {why} (Pod=default/web-0)"),
        )
    };
    fake.fail("POST", "/pods/web-0/eviction", 429, 1);
    let results = exec.execute(&plan(vec![evict.clone()]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert_eq!(
        drain_events(&fake),
        vec![refused("evicting pod violates a PDB")]
    );
    fake.fail_with(
        "POST",
        "/pods/web-0/eviction",
        500,
        "InternalError",
        MULTIPLE_PDBS_MESSAGE,
        1,
    );
    let results = exec.execute(&plan(vec![evict.clone()]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert_eq!(
        drain_events(&fake),
        vec![
            refused("evicting pod violates a PDB"),
            refused("eviction does not support multiple PDBs")
        ]
    );
    assert!(fake.get("", "pods", "default", "web-0").is_some());
    let results = exec.execute(&plan(vec![evict]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert!(fake.get("", "pods", "default", "web-0").is_none());
    assert_eq!(
        drain_events(&fake).last(),
        Some(&(
            "Pod".to_string(),
            "web-0".to_string(),
            "Normal".to_string(),
            "Evicted pod: Expired".to_string()
        ))
    );
    assert_eq!(drain_events(&fake).len(), 3);
}

/// Core's terminator: evicting a pod that is already gone (404) is a silent success, with no
/// Event (T-TERMINATOR-001).
#[tokio::test]
async fn evicting_a_pod_already_gone_succeeds_silently() {
    let (fake, exec) = world();
    let evict = Action::EvictPod {
        target: "Pod/default/ghost".into(),
        pod: "default/ghost".into(),
        node: "node-1".into(),
        reason: "Expired".into(),
        uid: None,
    };
    let results = exec.execute(&plan(vec![evict]), now()).await;
    assert_eq!(results[0].outcome, ActionOutcome::Applied);
    assert_eq!(fake.all("", "events").len(), 0);
}

#[tokio::test]
async fn a_mark_or_unmark_of_a_machine_that_is_gone_fails_naming_it_and_holds_its_scale_down() {
    // K-MACH-015, K-MACH-018: the provider's mark and unmark of a Machine that is not stored
    // fail, naming it. Ours: a merge patch answered 404 fails its action, and the scale-down
    // that counted on that Machine is not sent (Cluster API would pick another victim).
    let (fake, exec) = world();
    fake.mutate(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi-ovh",
        "c3-8",
        |md| md["spec"]["replicas"] = json!(2),
    );
    fake.remove("cluster.x-k8s.io", "machines", "capi-ovh", "c3-8-abcde");
    let results = exec
        .execute(
            &plan(vec![
                mark("capi-ovh/c3-8-abcde"),
                scale(2, 1, &["capi-ovh/c3-8-abcde"]),
                Action::UnmarkMachine {
                    target: "Machine/capi-ovh/gone".into(),
                    machine: "capi-ovh/gone".into(),
                    message: "no NodeClaim of ours is being removed with it".into(),
                    api_version: "cluster.x-k8s.io/v1beta2".into(),
                },
            ]),
            now(),
        )
        .await;
    for (i, name) in [(0, "c3-8-abcde"), (2, "gone")] {
        match &results[i].outcome {
            ActionOutcome::Failed {
                write: 0, error, ..
            } => {
                assert!(
                    error.starts_with(&format!(
                        "management cluster: patch machines.cluster.x-k8s.io capi-ovh/{name}"
                    )) && error.ends_with("(404)"),
                    "{error}"
                );
            }
            other => panic!("{i}: {other:?}"),
        }
    }
    assert_eq!(results[1].outcome, ActionOutcome::Skipped);
    assert_eq!(
        fake.get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", "c3-8")
            .unwrap()["spec"]["replicas"],
        2
    );
    assert!(!fake.writes().iter().any(|w| w.contains("/scale")));
}
