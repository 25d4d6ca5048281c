//! The reconcile core on snapshots: provisioning, idempotence, restarts, binding, registration,
//! initialization, timeouts and limits.

use crate::shared;
use karpenter_capi_testkit::Edit;

use jiff::Timestamp;
use karpenter_capi::controller::{Action, Config, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::model::snapshot::Snapshot;

fn seed_3cpu() -> String {
    shared::read("scenarios/seed-3cpu.yaml")
}

fn snap(extra: &str) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: format!("{}\n---\n{extra}", seed_3cpu()),
    }])
    .unwrap()
}

fn now() -> Timestamp {
    "2026-11-30T10:00:00Z".parse().unwrap()
}

fn names(p: &karpenter_capi::controller::Plan) -> Vec<&str> {
    p.actions.iter().map(|a| a.name()).collect()
}

/// A NodeClaim for c3-8 created `age` seconds before now, with optional status parts.
fn claim(name: &str, age: i64, annotations: &str, status: &str) -> String {
    let created = Timestamp::from_second(now().as_second() - age).unwrap();
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  uid: uid-{name}\n  creationTimestamp: '{created}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-8, topology.kubernetes.io/zone: nova}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-8{annotations}}}\nspec:\n  nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}\n  requirements: []\n  resources: {{requests: {{cpu: 3100m, memory: '402653184', pods: '2'}}}}\nstatus: {status}\n"
    )
}

fn machine(name: &str, labels: &str, spec: &str) -> String {
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata:\n  name: {name}\n  namespace: capi-ovh\n  creationTimestamp: '2026-11-30T09:59:00Z'\n  labels: {{cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8{labels}}}\nspec: {{clusterName: capi-ovh{spec}}}\n"
    )
}

/// The seed scenario with the node class already Ready and c3-8 at `replicas`, plus objects.
fn with_c3_8_replicas(extra: &str, replicas: i64) -> Snapshot {
    let base = seed_3cpu().edit_n(
        "  name: default\nspec: {}\n",
        &format!("  name: default\nspec: {{}}\n{CLASS_READY}\n"),
        1,
    );
    let text = base.edit_n("  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8", &format!("  replicas: {replicas}\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8"), 1);
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: format!("{text}\n---\n{extra}"),
    }])
    .unwrap()
}

const CLASS_READY: &str = "status: {conditions: [{type: Ready, status: 'True', reason: Ready, message: '', lastTransitionTime: '2026-11-30T09:00:00Z'}]}";

/// A harmless extra object (the node class itself is in the base).
fn ready_class() -> String {
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: filler, namespace: default}\n".to_string()
}

#[test]
fn seed_pod_creates_one_c3_8_claim_and_scales_0_to_1() {
    let p = plan(&snap(""), now(), &Config::default());
    assert_eq!(
        names(&p),
        vec![
            "setNodeClassReady",
            "createNodeClaim",
            "scaleMachineDeployment"
        ]
    );
    match &p.actions[1] {
        Action::CreateNodeClaim {
            instance_type,
            machine_deployment,
            pods,
            node_pool,
            manifest,
            ..
        } => {
            assert_eq!(instance_type, "c3-8");
            assert_eq!(machine_deployment, "capi-ovh/capi-ovh-karpenter-c3-8");
            assert_eq!(pods, &vec!["default/big-0".to_string()]);
            assert_eq!(node_pool, "default");
            assert_eq!(manifest["metadata"]["generateName"], "default-");
            assert_eq!(
                manifest["metadata"]["labels"]["karpenter.sh/nodepool"],
                "default"
            );
            assert_eq!(
                manifest["metadata"]["labels"]["node.kubernetes.io/instance-type"],
                "c3-8"
            );
            assert_eq!(
                manifest["metadata"]["labels"]["karpenter.cluster.x-k8s.io/clusterapinodeclass"],
                "default"
            );
            assert_eq!(
                manifest["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"],
                "karpenter-capi-v1",
                "our hash is not Karpenter's: never its v3"
            );
            // Pod requests plus the cilium DaemonSet.
            assert_eq!(manifest["spec"]["resources"]["requests"]["cpu"], "3100m");
            assert_eq!(manifest["spec"]["resources"]["requests"]["pods"], "2");
        }
        other => panic!("{other:?}"),
    }
    match &p.actions[2] {
        Action::ScaleMachineDeployment {
            machine_deployment,
            from,
            replicas,
            ..
        } => {
            assert_eq!(
                (machine_deployment.as_str(), *from, *replicas),
                ("capi-ovh/capi-ovh-karpenter-c3-8", 0, 1)
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn replanning_with_the_claim_and_replicas_applied_changes_nothing() {
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{}",
            claim("default-abc", 5, "", "{}"),
            ready_class()
        ),
        1,
    );
    let p = plan(&s, now(), &Config::default());
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

#[test]
fn restart_between_claim_creation_and_scale_up_converges() {
    // The claim was created, the process died before scaling: replicas are still 0.
    let s = with_c3_8_replicas(&claim("default-abc", 5, "", "{}"), 0);
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["scaleMachineDeployment"], "no second claim");
    assert!(matches!(
        p.actions[0],
        Action::ScaleMachineDeployment {
            from: 0,
            replicas: 1,
            ..
        }
    ));
}

#[test]
fn new_machine_is_bound_then_launched() {
    let m = machine("c3-8-x1", "", "");
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{m}---\n{}",
            claim("default-abc", 30, "", "{}"),
            ready_class()
        ),
        1,
    );
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["claimMachine"]);
    assert!(
        matches!(&p.actions[0], Action::ClaimMachine { machine, node_claim, .. } if machine == "capi-ovh/c3-8-x1" && node_claim == "default-abc")
    );
    let steps = p.actions[0].steps();
    assert_eq!(
        steps.writes.len(),
        2,
        "annotate the claim, then label the Machine"
    );

    let m = machine(
        "c3-8-x1",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///abc'",
    );
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{m}---\n{}",
            claim(
                "default-abc",
                60,
                ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x1",
                "{}"
            ),
            ready_class()
        ),
        1,
    );
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["launchNodeClaim"]);
    assert!(
        matches!(&p.actions[0], Action::LaunchNodeClaim { provider_id, .. } if provider_id == "openstack:///abc")
    );
}

fn node(taints: &str, ready: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: worker-1, labels: {{kubernetes.io/hostname: worker-1}}}}\nspec:\n  providerID: 'openstack:///abc'\n  taints: [{taints}]\nstatus:\n  capacity: {{cpu: '4', memory: 8000000Ki, pods: '110'}}\n  allocatable: {{cpu: '4', memory: 8000000Ki, pods: '110'}}\n  conditions: [{{type: Ready, status: '{ready}'}}]\n"
    )
}

const LAUNCHED: &str = "{providerID: 'openstack:///abc', conditions: [{type: Launched, status: 'True', reason: Launched, message: '', lastTransitionTime: '2026-11-30T09:59:00Z'}]}";
const REGISTERED: &str = "{providerID: 'openstack:///abc', nodeName: worker-1, conditions: [{type: Launched, status: 'True', reason: Launched, message: ''}, {type: Registered, status: 'True', reason: Registered, message: ''}]}";

#[test]
fn node_with_the_unregistered_taint_is_registered() {
    let m = machine(
        "c3-8-x1",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///abc'",
    );
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{m}---\n{}---\n{}",
            claim(
                "default-abc",
                120,
                ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x1",
                LAUNCHED
            ),
            node(
                "{key: karpenter.sh/unregistered, effect: NoExecute}",
                "False"
            ),
            ready_class()
        ),
        1,
    );
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["registerNode"]);
    let steps = p.actions[0].steps();
    match &steps.writes[0] {
        karpenter_capi::controller::write::Write::EditNode {
            name,
            add_labels,
            remove_taint_keys,
            add_finalizers,
            add_owner_references,
            ..
        } => {
            assert_eq!(name, "worker-1");
            assert_eq!(
                add_labels
                    .get("karpenter.sh/registered")
                    .map(String::as_str),
                Some("true")
            );
            assert_eq!(
                add_labels.get("karpenter.sh/nodepool").map(String::as_str),
                Some("default")
            );
            assert_eq!(
                remove_taint_keys,
                &vec!["karpenter.sh/unregistered".to_string()]
            );
            assert_eq!(
                add_finalizers,
                &vec!["karpenter.sh/termination".to_string()]
            );
            assert_eq!(add_owner_references[0]["uid"], "uid-default-abc");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn ready_node_initializes_the_claim() {
    let m = machine(
        "c3-8-x1",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///abc'",
    );
    let with = |ready: &str, taints: &str| {
        with_c3_8_replicas(
            &format!(
                "{}---\n{m}---\n{}---\n{}",
                claim(
                    "default-abc",
                    200,
                    ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x1",
                    REGISTERED
                ),
                node(taints, ready),
                ready_class()
            ),
            1,
        )
    };
    let p = plan(&with("True", ""), now(), &Config::default());
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
    assert!(
        plan(&with("False", ""), now(), &Config::default())
            .actions
            .is_empty(),
        "not Ready yet"
    );
    let tainted = with(
        "True",
        "{key: node.kubernetes.io/not-ready, effect: NoSchedule}",
    );
    assert!(
        plan(&tainted, now(), &Config::default()).actions.is_empty(),
        "ephemeral taint left"
    );
}

#[test]
fn registration_timeout_deletes_the_claim_and_exactly_its_machine() {
    let bound = machine(
        "c3-8-x1",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///abc'",
    );
    let other = machine(
        "c3-8-x2",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///def'",
    );
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{}---\n{bound}---\n{other}---\n{}",
            claim(
                "default-abc",
                16 * 60,
                ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x1",
                LAUNCHED
            ),
            claim(
                "default-def",
                2 * 60,
                ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x2",
                LAUNCHED
            ),
            ready_class()
        ),
        2,
    );
    let p = plan(&s, now(), &Config::default());
    assert_eq!(
        names(&p),
        vec![
            "deleteNodeClaim",
            "markMachineForDeletion",
            "scaleMachineDeployment"
        ]
    );
    assert!(
        matches!(&p.actions[0], Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-abc" && reason == "RegistrationTimeout")
    );
    // Durations print one way: the limit and the age both as Go durations.
    assert!(
        matches!(&p.actions[0], Action::DeleteNodeClaim { message, .. } if message == "not registered within 15m (waited 16m)"),
        "{:?}",
        p.actions[0]
    );
    assert!(
        matches!(&p.actions[1], Action::MarkMachineForDeletion { machine, .. } if machine == "capi-ovh/c3-8-x1")
    );
    // The pending pod fits the other in-flight claim: no new claim; replicas 2 -> 1 with the
    // marked Machine unmarked again if the scale fails.
    match &p.actions[2] {
        Action::ScaleMachineDeployment {
            from,
            replicas,
            rollback_machines,
            ..
        } => {
            assert_eq!((*from, *replicas), (2, 1));
            assert_eq!(rollback_machines, &vec!["capi-ovh/c3-8-x1".to_string()]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn launch_timeout_without_machine_scales_down_by_marking_the_unclaimed_one() {
    let unclaimed = machine("c3-8-x9", "", "");
    let s = with_c3_8_replicas(
        &format!(
            "{}---\n{unclaimed}---\n{}",
            claim("default-abc", 6 * 60, "", "{}"),
            ready_class()
        ),
        1,
    );
    let p = plan(
        &s,
        now(),
        &Config {
            ..Config::default()
        },
    );
    let n = names(&p);
    assert_eq!(n[0], "deleteNodeClaim");
    // The pod still needs room: a new claim is created and the replicas stay at 1, with the
    // unclaimed Machine free for it.
    assert!(n.contains(&"createNodeClaim"), "{n:?}");
    assert!(!n.contains(&"scaleMachineDeployment"), "{n:?}");
}

#[test]
fn nodepool_limit_stops_provisioning() {
    let text = seed_3cpu().edit("    cpu: '20'", "    cpu: '3'");
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text,
    }])
    .unwrap();
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["setNodeClassReady"]);
    assert!(
        p.notes[0].contains("default/big-0 fits no flavor"),
        "{:?}",
        p.notes
    );
    assert!(
        p.notes[0].contains("NodePool default limit cpu 3 reached"),
        "{:?}",
        p.notes
    );
}

#[test]
fn batch_window_waits_for_idle_pods() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: fresh, namespace: default, creationTimestamp: '2026-11-30T09:59:59.500Z'}\nspec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\nstatus: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n";
    let text = seed_3cpu()
        .edit("  replicas: 1\n", "  replicas: 0\n")
        .edit_n(
            "  name: default\nspec: {}\n",
            &format!("  name: default\nspec: {{}}\n{CLASS_READY}\n"),
            1,
        );
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: format!("{text}\n---\n{pod}"),
    }])
    .unwrap();
    let p = plan(&s, now(), &Config::default());
    assert!(p.actions.is_empty());
    assert!(p.notes[0].starts_with("batching 1 pending pod(s)"));
    let later: Timestamp = "2026-11-30T10:00:02Z".parse().unwrap();
    assert_eq!(
        names(&plan(&s, later, &Config::default())),
        vec!["createNodeClaim", "scaleMachineDeployment"]
    );
}

/// The seed with extra labels on the c3-8 flavor and the NodePool's template.
fn labelled_seed() -> Snapshot {
    let text = seed_3cpu()
        .edit(
            "node.kubernetes.io/instance-type=c3-8,karpenter.sh/capacity-type=on-demand",
            "node.kubernetes.io/instance-type=c3-8,example.com/disk=ssd,karpenter.sh/secret=x",
        )
        .edit_n(
            "spec:\n  template:\n    spec:\n      requirements:",
            "spec:\n  template:\n    metadata:\n      labels: {team: web}\n      annotations: {karpenter.sh/do-not-disrupt: 'true'}\n    spec:\n      requirements:\n      - key: example.com/tier\n        operator: In\n        values: [gold]",
            1,
        );
    snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text,
    }])
    .unwrap()
}

#[test]
fn a_new_claim_carries_every_label_of_its_offering() {
    let p = plan(&labelled_seed(), now(), &Config::default());
    let manifest = p
        .actions
        .iter()
        .find_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => Some(manifest.clone()),
            _ => None,
        })
        .expect("a claim");
    let labels = &manifest["metadata"]["labels"];
    // The flavor's labels (capacity annotation), the pool's template label and single-valued
    // requirements, the pool and node class.
    assert_eq!(labels["example.com/disk"], "ssd");
    assert_eq!(labels["kubernetes.io/arch"], "amd64");
    assert_eq!(labels["topology.kubernetes.io/zone"], "nova");
    assert_eq!(labels["node.kubernetes.io/instance-type"], "c3-8");
    assert_eq!(labels["team"], "web");
    assert_eq!(labels["example.com/tier"], "gold");
    assert_eq!(labels["karpenter.sh/nodepool"], "default");
    // The pool's capacity-type requirement (the provider's single offering is on-demand).
    assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
    // Karpenter's restricted domain never lands on a claim.
    assert!(labels.get("karpenter.sh/secret").is_none(), "{labels}");
    assert!(labels.get("kubernetes.io/hostname").is_none());
    // Template labels are requirements too, as core's NodeClaimTemplate makes them.
    let reqs = manifest["spec"]["requirements"].as_array().unwrap();
    assert!(
        reqs.iter()
            .any(|r| r["key"] == "team" && r["values"] == serde_json::json!(["web"]))
    );
    // Our hash, with our version, never Karpenter's v3.
    let ann = &manifest["metadata"]["annotations"];
    assert_eq!(
        ann["karpenter.sh/nodepool-hash-version"],
        "karpenter-capi-v1"
    );
    assert_eq!(ann["karpenter.sh/do-not-disrupt"], "true");
    // What `kubectl get nodeclaims` shows right after the create: Unknown conditions, capacity.
    let status = &manifest["status"];
    assert_eq!(status["capacity"]["cpu"], "4000m");
    assert_eq!(status["allocatable"]["memory"], "8000000000");
    let conditions: Vec<(String, String)> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        conditions,
        ["Launched", "Registered", "Initialized", "Ready"]
            .iter()
            .map(|t| (t.to_string(), "Unknown".to_string()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_pod_needing_a_flavor_label_gets_a_claim_with_it_and_registration_copies_it() {
    // A claim with the offering's labels registers a Node with all of them, and its
    // annotations (do-not-disrupt) but not Cluster API's.
    let m = machine(
        "c3-8-x1",
        ", node.cluster.x-k8s.io/karpenter-member: ''",
        ", providerID: 'openstack:///abc'",
    );
    let claim = claim(
        "default-abc",
        120,
        ", cluster.x-k8s.io/machine: capi-ovh/c3-8-x1, karpenter.sh/do-not-disrupt: 'true'",
        LAUNCHED,
    )
    .edit(
        "topology.kubernetes.io/zone: nova}",
        "topology.kubernetes.io/zone: nova, example.com/disk: ssd}",
    );
    let s = with_c3_8_replicas(
        &format!(
            "{claim}---\n{m}---\n{}---\n{}",
            node(
                "{key: karpenter.sh/unregistered, effect: NoExecute}",
                "False"
            ),
            ready_class()
        ),
        1,
    );
    let p = plan(&s, now(), &Config::default());
    assert_eq!(names(&p), vec!["registerNode"]);
    let Action::RegisterNode {
        labels,
        annotations,
        ..
    } = &p.actions[0]
    else {
        panic!()
    };
    assert_eq!(
        labels.get("example.com/disk").map(String::as_str),
        Some("ssd")
    );
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        vec!["karpenter.sh/do-not-disrupt"],
        "cluster.x-k8s.io/* and our bookkeeping stay off the Node"
    );
    let steps = p.actions[0].steps();
    assert!(matches!(
        &steps.writes[0],
        karpenter_capi::controller::write::Write::MergePatch { name, patch, .. }
            if name == "worker-1" && patch["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true"
    ));
}

#[test]
fn dry_run_json_shows_the_full_objects_and_patches() {
    let p = plan(&labelled_seed(), now(), &Config::default());
    let v = karpenter_capi::render::plan::plan_value(&p);
    let create = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "createNodeClaim")
        .unwrap();
    let writes = create["writes"].as_array().unwrap();
    assert_eq!(writes[0]["op"], "create");
    assert_eq!(
        writes[0]["object"]["metadata"]["labels"]["example.com/disk"],
        "ssd"
    );
    assert_eq!(
        writes[0]["object"]["spec"]["resources"]["requests"]["cpu"],
        "3100m"
    );
    assert!(
        writes[0]["object"].get("status").is_none(),
        "status goes in its own write"
    );
    assert_eq!(writes[1]["op"], "statusOfCreated");
    assert_eq!(writes[1]["conditions"][0]["status"], "Unknown");
    let scale = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "scaleMachineDeployment")
        .unwrap();
    assert_eq!(scale["writes"][0]["op"], "scale");
    assert_eq!(scale["writes"][0]["replicas"], 1);
    // The table stays short.
    let table = karpenter_capi::render::plan::plan_table(&p);
    assert!(!table.contains("example.com/disk"), "{table}");
}

/// Core's `nodepool.validation` (RuntimeValidate; M-VALID-001, -003, -005, -006): a pool whose
/// capacity-type requirement names no known capacity type, or whose template taint key is not a
/// qualified name, reports `ValidationSucceeded=False` with what is wrong, is not Ready, and
/// provisions nothing from this pass on; one known value beside an unknown one passes (it fails
/// open) and provisions as before.
#[test]
fn a_pool_failing_runtime_validation_is_not_ready_and_provisions_nothing() {
    let status_of = |p: &karpenter_capi::controller::Plan| {
        p.status
            .iter()
            .chain(p.actions.iter())
            .find_map(|a| match a {
                Action::UpdateNodePoolStatus { ready, invalid, .. } => {
                    Some((*ready, invalid.clone()))
                }
                _ => None,
            })
    };
    let with_pool = |edit: &dyn Fn(String) -> String| {
        snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: edit(seed_3cpu()),
        }])
        .unwrap()
    };
    let capacity = |values: &'static str| {
        move |t: String| {
            t.edit(
                "      - key: karpenter.sh/capacity-type\n        operator: In\n        values:\n        - on-demand\n",
                &format!("      - key: karpenter.sh/capacity-type\n        operator: In\n        values:\n{values}"),
            )
        }
    };
    // Only unknown capacity types.
    let p = plan(
        &with_pool(&capacity("        - preemptible\n")),
        now(),
        &Config::default(),
    );
    assert_eq!(
        status_of(&p),
        Some((
            false,
            r#"spec.template.spec.requirements[karpenter.sh/capacity-type]: none of ["preemptible"] is a capacity type (on-demand, spot, reserved)"#
                .to_string()
        ))
    );
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    // A known one beside it: validated, Ready, and the claim is made.
    let p = plan(
        &with_pool(&capacity("        - preemptible\n        - on-demand\n")),
        now(),
        &Config::default(),
    );
    assert_eq!(status_of(&p), Some((true, String::new())));
    assert!(names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    // A taint key with a 250-character name part.
    let long = "a".repeat(250);
    let p = plan(
        &with_pool(&|t: String| {
            t.edit(
                "      requirements:\n      - key: kubernetes.io/arch",
                &format!("      taints: [{{key: example.com/{long}, effect: NoSchedule}}]\n      requirements:\n      - key: kubernetes.io/arch"),
            )
        }),
        now(),
        &Config::default(),
    );
    assert_eq!(
        status_of(&p),
        Some((
            false,
            format!(
                "spec.template.spec.taints: key \"example.com/{long}\" must be at most 63 characters, not 250"
            )
        ))
    );
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
}
