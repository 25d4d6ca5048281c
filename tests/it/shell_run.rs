//! `run --once` end to end against the in-memory API: the real core plans from the live
//! listing, the executor writes, and the next pass reads back what the last one wrote; through
//! provisioning, binding, launch, registration and initialization, with faults on the way.

use crate::common;
use karpenter_capi_testkit::Edit;
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{Object, Pod};

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{FakeApi, now_stamp};
use karpenter_capi::cli::OutputFormat;
use karpenter_capi::cmd::run::once;
use karpenter_capi::controller::Config;
use karpenter_capi::error::Outcome;
use karpenter_capi::kube::list::Clients;
use karpenter_capi::render::Printer;
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}

/// The seed scenario as a live cluster shows it: the Deployment's pod is pending, unschedulable.
fn seed_world() -> FakeApi {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/scenarios/seed-3cpu.yaml"
    ))
    .or_else(|_| std::fs::read_to_string("/work/shared/fixtures/scenarios/seed-3cpu.yaml"))
    .unwrap();
    let world = World::from_yaml(&text)
        .retain(|o| o["kind"] != "Deployment")
        .add(
            Pod::new("default", "big-0")
                .label("app", "big")
                .set("/spec/containers/0/name", "pause")
                .image("registry.k8s.io/pause:3.10")
                .cpu("3")
                .memory("256Mi")
                .pending(),
        );
    let fake = FakeApi::new();
    fake.seed_world(&world);
    fake
}

const MD: &str = "capi-ovh-karpenter-c3-8";

async fn pass(
    fake: &FakeApi,
    format: OutputFormat,
    dry_run: bool,
) -> (Result<Outcome, karpenter_capi::Error>, String) {
    let buf = Buf::default();
    let printer = Printer::to_writer(format, false, Box::new(buf.clone()));
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let r = once(
        &clients,
        Some("capi-ovh"),
        None,
        &Config::default(),
        dry_run,
        &printer,
    )
    .await;
    (r, buf.take())
}

fn claims(fake: &FakeApi) -> Vec<Value> {
    fake.all("karpenter.sh", "nodeclaims")
}

fn replicas(fake: &FakeApi, md: &str) -> Value {
    fake.get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", md)
        .unwrap()["spec"]["replicas"]
        .clone()
}

fn json_plan(out: &str) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(out).unwrap();
    v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap().to_string(),
                a["target"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pair(a: &str, t: &str) -> (String, String) {
    (a.to_string(), t.to_string())
}

#[tokio::test]
async fn once_dry_run_prints_the_plan_and_writes_nothing() {
    let fake = seed_world();
    let (r, out) = pass(&fake, OutputFormat::Json, true).await;
    assert_eq!(r.unwrap(), Outcome::Success);
    assert_eq!(
        json_plan(&out),
        vec![
            pair("setNodeClassReady", "ClusterAPINodeClass/default"),
            pair("createNodeClaim", "NodeClaim/default-"),
            pair(
                "scaleMachineDeployment",
                &format!("MachineDeployment/capi-ovh/{MD}")
            ),
        ]
    );
    assert!(
        fake.requests().iter().all(|r| r.method == "GET"),
        "{:?}",
        fake.writes()
    );
}

#[tokio::test]
async fn once_provisions_binds_launches_registers_and_initializes() {
    let fake = seed_world();

    // Pass 1: a NodeClaim on c3-8, replicas 0 -> 1 through /scale, the node class Ready.
    let (r, out) = pass(&fake, OutputFormat::Table, false).await;
    assert_eq!(r.unwrap(), Outcome::Success);
    assert!(
        out.contains("createNodeClaim") && out.ends_with("Applied 4 of 4 action(s).\n"),
        "{out}"
    );
    let c = claims(&fake);
    assert_eq!(c.len(), 1);
    let claim = c[0]["metadata"]["name"].as_str().unwrap().to_string();
    assert!(claim.starts_with("default-"));
    assert_eq!(
        c[0]["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "c3-8"
    );
    assert_eq!(c[0]["metadata"]["ownerReferences"][0]["kind"], "NodePool");
    assert_eq!(replicas(&fake, MD), 1);
    assert_eq!(replicas(&fake, "capi-ovh-karpenter-c3-16"), 0);
    let class = fake
        .get(
            "karpenter.cluster.x-k8s.io",
            "clusterapinodeclasses",
            "",
            "default",
        )
        .unwrap();
    assert_eq!(class["status"]["conditions"][0]["type"], "Ready");
    assert!(fake.requests().iter().any(|r| r.line()
        == format!(
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/{MD}/scale"
        )
        && r.body["spec"] == json!({"replicas": 1})
        && r.body["metadata"]["resourceVersion"].is_string()));

    // Pass 2 on the same state: idempotent, nothing new.
    fake.clear_log();
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(json_plan(&out), vec![]);
    assert_eq!(fake.writes(), Vec::<String>::new());

    // Cluster API creates the Machine: it is bound to the claim.
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("{MD}-7xq2n"), "namespace": "capi-ovh", "creationTimestamp": now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": MD, "cluster.x-k8s.io/cluster-name": "capi-ovh"}},
        "spec": {"clusterName": "capi-ovh", "bootstrap": {"dataSecretName": "bootstrap-7xq2n"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": format!("{MD}-7xq2n")}}
    }));
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        vec![pair(
            "claimMachine",
            &format!("Machine/capi-ovh/{MD}-7xq2n")
        )]
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert_eq!(
        nc["metadata"]["annotations"]["cluster.x-k8s.io/machine"],
        format!("capi-ovh/{MD}-7xq2n")
    );
    let m = fake
        .get(
            "cluster.x-k8s.io",
            "machines",
            "capi-ovh",
            &format!("{MD}-7xq2n"),
        )
        .unwrap();
    assert_eq!(
        m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"],
        ""
    );
    assert_eq!(replicas(&fake, MD), 1, "binding does not change replicas");

    // The Machine gets its providerID: the claim is Launched.
    fake.mutate(
        "cluster.x-k8s.io",
        "machines",
        "capi-ovh",
        &format!("{MD}-7xq2n"),
        |m| m["spec"]["providerID"] = json!("openstack:///abc"),
    );
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        vec![pair("launchNodeClaim", &format!("NodeClaim/{claim}"))]
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert_eq!(nc["status"]["providerID"], "openstack:///abc");
    assert_eq!(nc["status"]["conditions"][0]["type"], "Launched");
    assert_eq!(nc["status"]["conditions"][0]["status"], "True");

    // The kubelet registers with the unregistered taint; another writer races the first patch.
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc", "labels": {"kubernetes.io/hostname": "worker-abc"}},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}
    }));
    fake.fail("PATCH", "/api/v1/nodes/worker-abc", 409, 1);
    fake.clear_log();
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        vec![pair("registerNode", "Node/worker-abc")]
    );
    let node_patches: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| r.line() == "PATCH /api/v1/nodes/worker-abc")
        .map(|r| r.code)
        .collect();
    // The registration edit conflicts once and is retried; then the claim's annotations are
    // propagated (a merge patch).
    assert_eq!(
        node_patches,
        vec![409, 200, 200],
        "the conflict was retried"
    );
    let node = fake.get("", "nodes", "", "worker-abc").unwrap();
    assert_eq!(node["spec"]["taints"], json!([]));
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/registered"],
        "true"
    );
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/nodepool"],
        "default"
    );
    assert_eq!(
        node["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    assert_eq!(node["metadata"]["ownerReferences"][0]["name"], claim);
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert_eq!(nc["status"]["nodeName"], "worker-abc");
    let types: Vec<(&str, &str)> = nc["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    // Initialized and Ready were set Unknown at creation (as Karpenter) and stay so until the
    // node is Ready.
    assert_eq!(
        types,
        vec![
            ("Launched", "True"),
            ("Registered", "True"),
            ("Initialized", "Unknown"),
            ("Ready", "Unknown")
        ]
    );

    // The node turns Ready: the claim is Initialized and the cluster converged.
    fake.mutate("", "nodes", "", "worker-abc", |n| {
        n["status"]["conditions"] =
            json!([{"type": "Ready", "status": "True", "reason": "KubeletReady"}])
    });
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        vec![pair("initializeNodeClaim", &format!("NodeClaim/{claim}"))]
    );
    let node = fake.get("", "nodes", "", "worker-abc").unwrap();
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/initialized"],
        "true"
    );
    // The initialized claim's Node is of the promised shape: core's consistency check says so
    // on the claim (`ConsistentStateFound`), once.
    let (r, out) = pass(&fake, OutputFormat::Table, false).await;
    r.unwrap();
    assert_eq!(
        out,
        "No changes: the cluster is converged.\nStatus updates: 1 setConsistentState\n"
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert!(
        nc["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "ConsistentStateFound" && c["status"] == "True"),
        "{nc}"
    );
    fake.clear_log();
    let (r, out) = pass(&fake, OutputFormat::Table, false).await;
    r.unwrap();
    assert_eq!(out, "No changes: the cluster is converged.\n");
    assert_eq!(fake.writes(), Vec::<String>::new());
    assert_eq!(claims(&fake).len(), 1);
    assert_eq!(replicas(&fake, MD), 1);

    // What the controller wrote is valid against the upstream CRD schemas.
    assert_valid(
        "karpenter.sh_nodeclaims.yaml",
        &fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap(),
    );
    assert_valid(
        "karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml",
        &fake
            .get(
                "karpenter.cluster.x-k8s.io",
                "clusterapinodeclasses",
                "",
                "default",
            )
            .unwrap(),
    );
    assert_valid(
        "cluster.x-k8s.io_machines.yaml",
        &fake
            .get(
                "cluster.x-k8s.io",
                "machines",
                "capi-ovh",
                &format!("{MD}-7xq2n"),
            )
            .unwrap(),
    );
}

/// Validates an object against the schema of its version in an upstream CRD file.
fn assert_valid(crd_file: &str, obj: &Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/crds");
    let dir = if dir.exists() {
        dir
    } else {
        std::path::PathBuf::from("/work/shared/fixtures/crds")
    };
    let crd: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join(crd_file)).unwrap()).unwrap();
    let version = obj["apiVersion"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let schema = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap()["schema"]["openAPIV3Schema"]
        .clone();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(obj)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{crd_file}: {errors:#?}\n{obj:#}");
}

#[tokio::test]
async fn a_failed_scale_fails_the_pass_and_the_next_pass_finishes_without_a_second_claim() {
    let fake = seed_world();
    fake.fail("PATCH", "/scale", 500, 1);
    let (r, out) = pass(&fake, OutputFormat::Table, false).await;
    let err = r.unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "scaleMachineDeployment MachineDeployment/capi-ovh/{MD} failed (1 of 4 actions; 0 after it not attempted): management cluster: \
             patch machinedeployments.cluster.x-k8s.io/scale capi-ovh/{MD}: etcdserver: request timed out (500)"
        )
    );
    assert!(out.ends_with("Applied 3 of 4 action(s).\n"), "{out}");
    assert_eq!(claims(&fake).len(), 1);
    assert_eq!(replicas(&fake, MD), 0);

    // The next pass sees the in-flight claim: it scales, and creates nothing.
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        vec![pair(
            "scaleMachineDeployment",
            &format!("MachineDeployment/capi-ovh/{MD}")
        )]
    );
    assert_eq!(claims(&fake).len(), 1);
    assert_eq!(replicas(&fake, MD), 1);
}

#[tokio::test]
async fn registration_timeout_marks_the_exact_machine_and_a_failed_scale_unmarks_it() {
    let fake = seed_world();
    // A claim bound to a launched Machine whose Node never came, 20 minutes ago.
    fake.seed(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-old01", "creationTimestamp": "2020-01-01T00:00:00Z",
                     "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c3-8"},
                     "annotations": {"cluster.x-k8s.io/machine": format!("capi-ovh/{MD}-old01"), "karpenter-capi/machine-deployment": format!("capi-ovh/{MD}")}},
        "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"}, "resources": {"requests": {"cpu": "3"}}},
        "status": {"providerID": "openstack:///old01", "conditions": [{"type": "Launched", "status": "True", "reason": "Launched", "message": ""}]}
    }));
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("{MD}-old01"), "namespace": "capi-ovh",
                     "labels": {"cluster.x-k8s.io/deployment-name": MD, "node.cluster.x-k8s.io/karpenter-member": ""}},
        "spec": {"clusterName": "capi-ovh", "providerID": "openstack:///old01"}
    }));
    fake.mutate(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi-ovh",
        MD,
        |md| md["spec"]["replicas"] = json!(1),
    );
    // The pending pod is gone (so only liveness acts).
    fake.remove("", "pods", "default", "big-0");
    fake.fail("PATCH", &format!("machinedeployments/{MD}/scale"), 500, 1);
    fake.clear_log();
    let (r, out) = pass(&fake, OutputFormat::Table, false).await;
    let err = r.unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "scaleMachineDeployment MachineDeployment/capi-ovh/{MD} failed"
        )),
        "{err}\n{out}"
    );
    // Delete the claim (with its Event), mark its exact Machine, then lower replicas (refused),
    // then unmark the Machine.
    let machine_path =
        format!("/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/{MD}-old01");
    let writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| !w.contains("clusterapinodeclasses"))
        .collect();
    assert_eq!(
        writes,
        vec![
            "POST /api/v1/namespaces/default/events 201".to_string(),
            // A claim made before the finalizer existed gets it before its deletion.
            "PATCH /apis/karpenter.sh/v1/nodeclaims/default-old01 200".to_string(),
            "DELETE /apis/karpenter.sh/v1/nodeclaims/default-old01 200".to_string(),
            format!("PATCH {machine_path} 200"),
            format!(
                "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/{MD}/scale 500"
            ),
            format!("PATCH {machine_path} 200"),
            // The NodePool's status is another object: the failed scale does not stop it.
            "PATCH /apis/karpenter.sh/v1/nodepools/default/status 200".to_string(),
        ]
    );
    let m = fake
        .get(
            "cluster.x-k8s.io",
            "machines",
            "capi-ovh",
            &format!("{MD}-old01"),
        )
        .unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_none(),
        "{m}"
    );
    assert_eq!(replicas(&fake, MD), 1);
    let event = &fake.all("", "events")[0];
    assert_eq!(event["reason"], "RegistrationTimeout");
    assert_eq!(event["type"], "Warning");

    // Next pass: the claim is held by its finalizer while its Machine lives; the Machine is
    // marked again and replicas lowered.
    fake.clear_log();
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    let plan = json_plan(&out);
    assert!(
        plan.contains(&pair(
            "markMachineForDeletion",
            &format!("Machine/capi-ovh/{MD}-old01")
        )),
        "{plan:?}"
    );
    assert!(
        plan.contains(&pair(
            "scaleMachineDeployment",
            &format!("MachineDeployment/capi-ovh/{MD}")
        )),
        "{plan:?}"
    );
    assert_eq!(replicas(&fake, MD), 0);
    let m = fake
        .get(
            "cluster.x-k8s.io",
            "machines",
            "capi-ovh",
            &format!("{MD}-old01"),
        )
        .unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_some(),
        "{m}"
    );
}

#[tokio::test]
async fn forbidden_write_fails_once_with_the_verb_and_resource() {
    let fake = seed_world();
    fake.fail("POST", "/apis/karpenter.sh/v1/nodeclaims", 403, 1);
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    let err = r.unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        err.to_string(),
        "createNodeClaim NodeClaim/default- failed (1 of 4 actions; 1 after it not attempted): workload cluster: create \
         nodeclaims.karpenter.sh default-: forbidden: the identity may not do this (403)\n  hint: the identity lacks `create` on \
         `nodeclaims.karpenter.sh`: grant it (the RBAC `kubectl karpenter-capi init` generates has it)"
    );
    assert_eq!(replicas(&fake, MD), 0, "no scale-up without its claim");
}

/// Provisions the seed pod and lets Cluster API create its Machine; returns the claim's name.
async fn provisioned_with_machine(fake: &FakeApi) -> String {
    let (r, _) = pass(fake, OutputFormat::Json, false).await;
    r.unwrap();
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("{MD}-7xq2n"), "namespace": "capi-ovh", "creationTimestamp": now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": MD}},
        "spec": {"clusterName": "capi-ovh", "providerID": "openstack:///abc"}
    }));
    claims(fake)[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_claim_interrupted_between_annotation_and_label_is_finished_next_pass() {
    let fake = seed_world();
    let claim = provisioned_with_machine(&fake).await;
    fake.fail("PATCH", &format!("/machines/{MD}-7xq2n"), 500, 1);
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    assert!(r.unwrap_err().to_string().starts_with("claimMachine"));
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert_eq!(
        nc["metadata"]["annotations"]["cluster.x-k8s.io/machine"],
        format!("capi-ovh/{MD}-7xq2n"),
        "the claim's side is written first"
    );
    let m = fake
        .get(
            "cluster.x-k8s.io",
            "machines",
            "capi-ovh",
            &format!("{MD}-7xq2n"),
        )
        .unwrap();
    assert!(
        m["metadata"]["labels"]
            .get("node.cluster.x-k8s.io/karpenter-member")
            .is_none()
    );

    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    let plan = json_plan(&out);
    assert!(
        plan.contains(&pair(
            "claimMachine",
            &format!("Machine/capi-ovh/{MD}-7xq2n")
        )),
        "{plan:?}"
    );
    let m = fake
        .get(
            "cluster.x-k8s.io",
            "machines",
            "capi-ovh",
            &format!("{MD}-7xq2n"),
        )
        .unwrap();
    assert_eq!(
        m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"],
        ""
    );
    assert_eq!(claims(&fake).len(), 1);
    assert_eq!(replicas(&fake, MD), 1);
}

#[tokio::test]
async fn a_registration_interrupted_between_node_and_claim_status_is_finished_next_pass() {
    let fake = seed_world();
    let claim = provisioned_with_machine(&fake).await;
    let (r, _) = pass(&fake, OutputFormat::Json, false).await; // claim + launch
    r.unwrap();
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc"},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }));
    fake.fail("PATCH", &format!("/nodeclaims/{claim}/status"), 500, 1);
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    assert!(
        r.unwrap_err()
            .to_string()
            .starts_with("registerNode Node/worker-abc failed")
    );
    let node = fake.get("", "nodes", "", "worker-abc").unwrap();
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/registered"], "true",
        "the node side landed"
    );

    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert!(
        json_plan(&out).contains(&pair("registerNode", "Node/worker-abc")),
        "{out}"
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert_eq!(nc["status"]["nodeName"], "worker-abc");
    assert!(
        nc["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Registered" && c["status"] == "True")
    );
}

#[tokio::test]
async fn with_two_clusters_each_write_goes_to_its_own_cluster() {
    let all = seed_world();
    let workload = FakeApi::new();
    let management = FakeApi::new();
    for group in ["", "apps", "karpenter.sh", "karpenter.cluster.x-k8s.io"] {
        for plural in [
            "pods",
            "nodes",
            "daemonsets",
            "nodepools",
            "nodeclaims",
            "clusterapinodeclasses",
        ] {
            all.all(group, plural)
                .into_iter()
                .for_each(|o| workload.seed(o));
        }
    }
    all.all("cluster.x-k8s.io", "machinedeployments")
        .into_iter()
        .for_each(|o| management.seed(o));
    let buf = Buf::default();
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(buf.clone()));
    let clients = Clients {
        workload: workload.client(),
        management: management.client(),
    };
    once(
        &clients,
        Some("capi-ovh"),
        None,
        &Config::default(),
        false,
        &printer,
    )
    .await
    .unwrap();
    assert_eq!(json_plan(&buf.take()).len(), 3);
    assert_eq!(workload.all("karpenter.sh", "nodeclaims").len(), 1);
    assert_eq!(
        management
            .get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", MD)
            .unwrap()["spec"]["replicas"],
        1
    );
    assert!(
        workload
            .requests()
            .iter()
            .all(|r| !r.path.contains("cluster.x-k8s.io/v1beta")),
        "no Cluster API call to the workload cluster"
    );
    assert!(
        management
            .requests()
            .iter()
            .all(|r| r.path.contains("/apis/cluster.x-k8s.io/")
                || r.path.contains("/apis/bootstrap.cluster.x-k8s.io/"))
    );
    assert_eq!(
        management.writes(),
        vec![format!(
            "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/{MD}/scale 200"
        )]
    );
}

/// The RBAC checks of every request in the log, as (group, resource, verb).
fn rbac_calls(fake: &FakeApi) -> std::collections::BTreeSet<(String, String, String)> {
    fake.requests()
        .iter()
        .filter_map(common::Req::rbac)
        .collect()
}

/// Every request the controller makes over a whole lifecycle (continuous-mode watches, leader
/// election, provision, bind, launch, register, initialize, expire, drain with a PDB-blocked pod
/// deleted after its grace period, scale down, node finalizer release, a warning Event) needs
/// exactly the rules `init` renders from `kube::permissions`, both ways: nothing is missing, and
/// nothing granted goes unused.
#[tokio::test]
async fn the_generated_rbac_is_exactly_what_the_controller_calls() {
    use karpenter_capi::kube::leader::LeaseLock;
    use karpenter_capi::vocab::permissions::{LEADER_ELECTION, MANAGEMENT, WORKLOAD};
    let fake = seed_world();
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };

    // Continuous mode: list and watch every observed type.
    let metrics = Arc::new(karpenter_capi::kube::metrics::Metrics::new());
    let notify = Arc::new(tokio::sync::Notify::new());
    let (stores, tasks) =
        karpenter_capi::kube::watch::start(&clients, Some("capi-ovh"), None, notify, metrics)
            .await
            .unwrap();
    stores.wait_until_ready().await;
    for t in tasks {
        t.abort();
    }
    // Leader election: create, renew (get + update), release.
    let lock = LeaseLock::new(fake.client(), "karpenter-capi", "a".to_string());
    let now = jiff::Timestamp::now();
    lock.try_acquire(now).await.unwrap();
    lock.try_acquire(now).await.unwrap();
    lock.release().await.unwrap();

    // Provision, bind, launch, register, initialize.
    let step = |what: &'static str| {
        let fake = fake.clone();
        async move {
            let (r, out) = pass(&fake, OutputFormat::Json, false).await;
            r.unwrap_or_else(|e| panic!("{what}: {e}"));
            json_plan(&out)
        }
    };
    let plan = step("provision").await;
    assert!(plan.iter().any(|(a, _)| a == "createNodeClaim"), "{plan:?}");
    let claim = claims(&fake)[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let md = claims(&fake)[0]["metadata"]["annotations"]["karpenter-capi/machine-deployment"]
        .as_str()
        .map(|s| s.rsplit('/').next().unwrap().to_string())
        .unwrap_or_else(|| MD.to_string());
    let machine = format!("{md}-7xq2n");
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": machine, "namespace": "capi-ovh", "creationTimestamp": now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": md, "cluster.x-k8s.io/cluster-name": "capi-ovh"}},
        "spec": {"clusterName": "capi-ovh", "bootstrap": {"dataSecretName": "bootstrap-7xq2n"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": machine}}
    }));
    step("bind").await;
    fake.mutate("cluster.x-k8s.io", "machines", "capi-ovh", &machine, |m| {
        m["spec"]["providerID"] = json!("openstack:///abc")
    });
    step("launch").await;
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc", "labels": {"kubernetes.io/hostname": "worker-abc"}},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "16", "memory": "32Gi", "pods": "110"}, "allocatable": {"cpu": "15", "memory": "30Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    }));
    step("register").await;
    step("initialize").await;
    // The pending pod is now running elsewhere (a spare node with room); a pod of a
    // ReplicaSet runs on the new node. The NodePool expires nodes after a minute with a minute
    // of grace: the node is tainted, the pod's eviction refused (429, a disruption budget)
    // until the grace is over, then the pod deleted, the Machine marked, the MachineDeployment
    // scaled down and the claim deleted.
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "spare", "labels": {"kubernetes.io/hostname": "spare", "kubernetes.io/arch": "amd64"}},
        "spec": {},
        "status": {"capacity": {"cpu": "16", "memory": "32Gi", "pods": "110"}, "allocatable": {"cpu": "16", "memory": "32Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}
    }));
    fake.mutate("", "pods", "default", "big-0", |p| {
        p["spec"]["nodeName"] = json!("spare");
        p["status"] =
            json!({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]});
    });
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": true}]},
        "spec": {"nodeName": "worker-abc", "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    }));
    fake.mutate("karpenter.sh", "nodepools", "", "default", |p| {
        p["spec"]["template"]["spec"]["expireAfter"] = json!("1m");
        p["spec"]["template"]["spec"]["terminationGracePeriod"] = json!("1m");
    });
    fake.mutate("karpenter.sh", "nodeclaims", "", &claim, |c| {
        c["metadata"]["creationTimestamp"] = json!("2026-11-30T10:00:00Z");
        for cond in c["status"]["conditions"].as_array_mut().unwrap() {
            cond["lastTransitionTime"] = json!("2026-11-30T10:00:00Z");
        }
    });
    fake.fail("POST", "/pods/web-0/eviction", 429, 1000);
    let mut seen = Vec::new();
    for round in 0..12 {
        let plan = step("drain").await;
        seen.extend(plan.iter().map(|(a, _)| a.clone()));
        // Once an eviction was refused, the drain started long ago.
        if round > 0 && seen.iter().any(|a| a == "evictPod") {
            // The drain started long ago: its grace period is over.
            fake.mutate("karpenter.sh", "nodeclaims", "", &claim, |c| {
                c["metadata"]["annotations"]["karpenter-capi/drain-started"] =
                    json!("2026-11-30T10:00:00Z");
                // Its terminationGracePeriod is over: what the PDB holds is deleted.
                c["metadata"]["annotations"]["karpenter.sh/nodeclaim-termination-timestamp"] =
                    json!("2026-11-30T10:01:00Z");
            });
        }
        // Done once the claim is gone or its Machine marked (the claim is deleted first, then
        // drained).
        if fake.get("karpenter.sh", "nodeclaims", "", &claim).is_none()
            || seen.iter().any(|a| a == "markMachineForDeletion")
        {
            break;
        }
    }
    // Cluster API deletes the Machine's Node: the controller releases its finalizer.
    if fake.get("", "nodes", "", "worker-abc").is_some() {
        fake.mutate("", "nodes", "", "worker-abc", |n| {
            n["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:30:00Z");
        });
        let plan = step("release").await;
        seen.extend(plan.iter().map(|(a, _)| a.clone()));
    }
    // A NodePool whose disruption settings do not parse gets a Warning Event.
    fake.mutate("karpenter.sh", "nodepools", "", "default", |p| {
        p["spec"]["disruption"]["consolidateAfter"] = json!("soon");
    });
    let plan = step("warn").await;
    seen.extend(plan.iter().map(|(a, _)| a.clone()));

    for action in [
        "taintNode",
        "evictPod",
        "markMachineForDeletion",
        "scaleMachineDeployment",
        "deleteNodeClaim",
        "warnNodePool",
    ] {
        assert!(seen.iter().any(|a| a == action), "{action} in {seen:?}");
    }
    let called = rbac_calls(&fake);
    let granted: std::collections::BTreeSet<(String, String, String)> = WORKLOAD
        .iter()
        .chain(MANAGEMENT)
        .chain(LEADER_ELECTION)
        .flat_map(|p| {
            p.verbs
                .iter()
                .map(|v| (p.group.to_string(), p.resource.to_string(), v.to_string()))
        })
        .collect();
    let missing: Vec<_> = called.difference(&granted).collect();
    let unused: Vec<_> = granted.difference(&called).collect();
    assert!(
        missing.is_empty() && unused.is_empty(),
        "called but not granted: {missing:?}\ngranted but never called: {unused:?}\nactions seen: {seen:?}"
    );
}

/// Objects the API server accepts but the core cannot hold exactly: a NodePool limit of `-1`
/// and `1e50`, a pod asking for `9Ei` of memory, a Node whose heartbeat and transition times are
/// at the very end of year 9999, and one pod that cannot be read at all. Each is clamped (or the
/// unreadable pod skipped) with a warning naming the object and field, counted in a metric and
/// reported by `doctor`; the plan for everything else is the same as without them.
#[tokio::test]
async fn odd_objects_leave_the_rest_of_the_plan_unchanged_and_are_reported() {
    use karpenter_capi::diagnose::{self, AccessSource, Cause};
    use karpenter_capi::kube::list::live_snapshot;
    use karpenter_capi::kube::reconciler::{Context, pass as reconcile_pass};

    let (baseline, out) = pass(&seed_world(), OutputFormat::Json, true).await;
    baseline.unwrap();
    let baseline = json_plan(&out);
    assert!(!baseline.is_empty());

    let fake = seed_world();
    fake.seed(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "odd"},
        "spec": {"limits": {"cpu": "-1", "memory": "1e50"},
                 "template": {"spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"}}}}
    }));
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "huge", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"memory": "9Ei"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    }));
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "far-future"},
        "spec": {"unschedulable": true},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "9999-12-31T23:59:59Z", "lastTransitionTime": "9999-12-31T23:59:59Z"}]}
    }));
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "unreadable", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "lots"}}}]}
    }));

    let (r, out) = pass(&fake, OutputFormat::Json, true).await;
    r.unwrap();
    assert_eq!(
        json_plan(&out),
        baseline,
        "the odd objects change nothing else"
    );

    let client = fake.client();
    let snapshot = live_snapshot(&client, &client, Some("capi-ovh"))
        .await
        .unwrap();
    let mut odd: Vec<String> = snapshot.oddities.iter().map(ToString::to_string).collect();
    odd.sort();
    assert_eq!(
        odd,
        vec![
            "workload cluster: Node far-future: status.conditions[0].lastHeartbeatTime \"9999-12-31T23:59:59Z\" cannot be held exactly; using 9999-12-30T22:00:00.999999999Z",
            "workload cluster: Node far-future: status.conditions[0].lastTransitionTime \"9999-12-31T23:59:59Z\" cannot be held exactly; using 9999-12-30T22:00:00.999999999Z",
            "workload cluster: NodePool odd: spec.limits.cpu \"-1\" cannot be held exactly; using 0",
            "workload cluster: NodePool odd: spec.limits.memory \"1e50\" cannot be held exactly; using 9223372036854775807",
            "workload cluster: Pod default/huge: spec.containers[0].resources.requests[memory] \"9Ei\" cannot be held exactly; using 9223372036854775807",
            "workload cluster: Pod default/unreadable: skipped, spec.containers[0].resources.requests[cpu]: invalid quantity \"lots\": no number (expected e.g. 500m, 4, 8Gi, 8G)",
        ]
    );
    assert!(odd.iter().all(|o| snapshot.warnings.contains(o)));

    // The metric, per pass.
    let ctx = Context::new(
        Clients {
            workload: client.clone(),
            management: client.clone(),
        },
        Config::default(),
        Some("capi-ovh".to_string()),
        true,
    );
    reconcile_pass(&ctx, &snapshot).await;
    let metrics = ctx.metrics.render();
    assert!(
        metrics.contains("karpenter_capi_odd_values{treatment=\"clamped\"} 5"),
        "{metrics}"
    );
    assert!(
        metrics.contains("karpenter_capi_odd_values{treatment=\"skipped\"} 1"),
        "{metrics}"
    );

    // The doctor finding, one per odd value.
    let report = diagnose::run(
        &snapshot,
        jiff::Timestamp::now(),
        &Config::default(),
        AccessSource::RbacObjects,
    );
    let findings: Vec<(String, String)> = report
        .findings
        .iter()
        .filter(|f| f.cause == Cause::UnrepresentableValue)
        .map(|f| (f.subject.clone(), f.message.clone()))
        .collect();
    assert_eq!(findings.len(), 6, "{findings:?}");
    assert!(findings.contains(&(
        "NodePool/odd".to_string(),
        "spec.limits.cpu \"-1\" cannot be held exactly; the controller uses 0".to_string()
    )));
    assert!(findings.contains(&(
        "Pod/default/unreadable".to_string(),
        "left out of every pass: spec.containers[0].resources.requests[cpu]: invalid quantity \"lots\": no number (expected e.g. 500m, 4, 8Gi, 8G)".to_string()
    )));
}

/// A pending pod whose zone spread the existing node cannot keep: `run` gives it a new node of
/// the flavor in the other zone, and nothing on the existing node.
#[tokio::test]
async fn spread_blocked_pod_gets_a_node_in_the_emptier_zone() {
    let fake = seed_world();
    fake.remove("", "pods", "default", "big-0");
    let mut md = fake
        .get("cluster.x-k8s.io", "machinedeployments", "capi-ovh", MD)
        .unwrap();
    md["metadata"]["name"] = json!("capi-ovh-karpenter-c3-8-b");
    md["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    md["metadata"].as_object_mut().unwrap().remove("uid");
    let labels = md["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/labels"]
        .as_str()
        .unwrap()
        .edit("zone=nova", "zone=nova-b");
    md["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/labels"] =
        json!(labels);
    fake.seed(md);
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-a", "labels": {"topology.kubernetes.io/zone": "nova", "kubernetes.io/hostname": "worker-a"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}, "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}
    }));
    for i in 0..2 {
        fake.seed(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{i}"), "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": "worker-a", "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
            "status": {"phase": "Running"}
        }));
    }
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-2", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
                 "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                     "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    }));
    let (r, out) = pass(&fake, OutputFormat::Json, true).await;
    assert_eq!(r.unwrap(), Outcome::Success);
    let plan = json_plan(&out);
    assert!(
        plan.contains(&pair(
            "scaleMachineDeployment",
            "MachineDeployment/capi-ovh/capi-ovh-karpenter-c3-8-b"
        )),
        "{out}"
    );
    assert!(
        !plan
            .iter()
            .any(|(_, t)| t == &format!("MachineDeployment/capi-ovh/{MD}")),
        "{out}"
    );
}

/// The series of one metric in an OpenMetrics text, `name{labels} value` lines.
fn series<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .collect()
}

/// Karpenter's metric names and labels, counted from what was done: a dry run and a failed
/// create count nothing; a provisioning pass counts one claim; registration one node; an empty
/// node's disruption one disrupted claim and one decision. Gauges follow the snapshot.
#[tokio::test]
async fn karpenter_metrics_count_what_was_done_under_cores_names() {
    use karpenter_capi::kube::list::live_snapshot;
    use karpenter_capi::kube::reconciler::{Context, pass as reconcile_pass};

    let fake = seed_world();
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client.clone(),
    };
    let context = |dry_run| {
        Context::new(
            clients.clone(),
            Config::default(),
            Some("capi-ovh".to_string()),
            dry_run,
        )
    };
    let snapshot = || async {
        live_snapshot(&client, &client, Some("capi-ovh"))
            .await
            .unwrap()
    };

    // A dry run plans a claim but creates none: nothing counted.
    let dry = context(true);
    let report = reconcile_pass(&dry, &snapshot().await).await;
    assert!(
        report
            .plan
            .actions
            .iter()
            .any(|a| a.name() == "createNodeClaim")
    );
    assert_eq!(
        series(&dry.metrics.render(), "karpenter_nodeclaims_created_total"),
        Vec::<&str>::new()
    );

    // A create the API refuses counts nothing either.
    let ctx = context(false);
    fake.fail("POST", "/apis/karpenter.sh/v1/nodeclaims", 500, 1);
    reconcile_pass(&ctx, &snapshot().await).await;
    assert!(claims(&fake).is_empty());
    assert_eq!(
        series(&ctx.metrics.render(), "karpenter_nodeclaims_created_total"),
        Vec::<&str>::new()
    );

    // The provisioning pass: one claim, by core's reason and labels.
    let report = reconcile_pass(&ctx, &snapshot().await).await;
    let claim = report.created_claims()[0].clone();
    let m = ctx.metrics.render();
    assert_eq!(
        series(&m, "karpenter_nodeclaims_created_total"),
        vec![
            r#"karpenter_nodeclaims_created_total{reason="provisioned",nodepool="default",min_values_relaxed="false"} 1"#
        ]
    );
    assert_eq!(
        series(&m, "karpenter_nodepools_limit"),
        vec![r#"karpenter_nodepools_limit{resource_type="cpu",nodepool="default"} 20.0"#]
    );
    assert!(
        series(&m, "karpenter_nodepools_usage").contains(
            &r#"karpenter_nodepools_usage{resource_type="nodes",nodepool="default"} 0.0"#
        ),
        "{m}"
    );
    assert_eq!(
        series(&m, "karpenter_pods_state"),
        vec![
            r#"karpenter_pods_state{name="big-0",namespace="default",owner="",node="",scheduled="false",nodepool="",zone="",arch="",capacity_type="",instance_type="",phase="Pending",ready="false",managed="false"} 1"#
        ]
    );
    assert!(
        m.contains(
            "karpenter_scheduler_scheduling_duration_seconds_count{controller=\"provisioner\"} 2"
        ) && m.contains("karpenter_provisioner_scheduling_duration_seconds_count 2"),
        "{m}"
    );
    // Ours stay under our prefix.
    assert!(
        m.contains(
            "karpenter_capi_actions_total{action=\"createNodeClaim\",outcome=\"applied\"} 1"
        ),
        "{m}"
    );

    // Cluster API makes the Machine with its providerID; the kubelet registers and is Ready.
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("{MD}-7xq2n"), "namespace": "capi-ovh", "creationTimestamp": now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": MD, "cluster.x-k8s.io/cluster-name": "capi-ovh"}},
        "spec": {"clusterName": "capi-ovh", "providerID": "openstack:///abc", "bootstrap": {"dataSecretName": "b"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": format!("{MD}-7xq2n")}}
    }));
    reconcile_pass(&ctx, &snapshot().await).await;
    reconcile_pass(&ctx, &snapshot().await).await;
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc", "labels": {"kubernetes.io/hostname": "worker-abc"}},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    }));
    reconcile_pass(&ctx, &snapshot().await).await;
    let m = ctx.metrics.render();
    let zone = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap()["metadata"]["labels"]
        ["topology.kubernetes.io/zone"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_eq!(
        series(&m, "karpenter_nodes_created_total"),
        vec![format!(
            r#"karpenter_nodes_created_total{{nodepool="default",zone="{zone}"}} 1"#
        )]
    );
    reconcile_pass(&ctx, &snapshot().await).await;
    let m = ctx.metrics.render();
    assert!(
        series(&m, "karpenter_nodepools_usage")
            .contains(&r#"karpenter_nodepools_usage{resource_type="cpu",nodepool="default"} 4.0"#),
        "{m}"
    );

    // The pod goes; the node has been Empty past consolidateAfter (30s): it is disrupted.
    fake.remove("", "pods", "default", "big-0");
    fake.mutate("karpenter.sh", "nodeclaims", "", &claim, |c| {
        for cond in c["status"]["conditions"].as_array_mut().unwrap() {
            cond["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
        }
    });
    fake.clear_log();
    let report = reconcile_pass(&ctx, &snapshot().await).await;
    assert!(
        report.plan.actions.iter().any(|a| a.name() == "taintNode"),
        "{:?}",
        report.plan
    );
    let m = ctx.metrics.render();
    assert_eq!(
        series(&m, "karpenter_nodeclaims_disrupted_total"),
        vec![
            r#"karpenter_nodeclaims_disrupted_total{reason="empty",nodepool="default",capacity_type="on-demand",consolidation_policy="when_empty",termination_mode="graceful"} 1"#
        ]
    );
    assert_eq!(
        series(&m, "karpenter_voluntary_disruption_decisions_total"),
        vec![
            r#"karpenter_voluntary_disruption_decisions_total{decision="delete",reason="empty",consolidation_type="empty"} 1"#
        ]
    );
    assert_eq!(
        series(&m, "karpenter_pods_state"),
        Vec::<&str>::new(),
        "the pod's series goes with it"
    );
    // Karpenter's DisruptionTerminating, on the Node and on the NodeClaim.
    let mut events: Vec<(String, String, String)> = fake
        .all("", "events")
        .iter()
        .filter(|e| e["reason"] == "DisruptionTerminating")
        .map(|e| {
            (
                e["involvedObject"]["kind"].as_str().unwrap().to_string(),
                e["involvedObject"]["name"].as_str().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    events.sort();
    assert_eq!(
        events,
        vec![
            (
                "Node".to_string(),
                "worker-abc".to_string(),
                "Disrupting Node: Empty".to_string()
            ),
            (
                "NodeClaim".to_string(),
                claim.clone(),
                "Disrupting NodeClaim: Empty".to_string()
            ),
        ]
    );
}

/// Karpenter's `DisruptionBlocked` on the Node and its NodeClaim, in core's words, once per
/// de-duplication window however many passes see it.
#[tokio::test]
async fn a_blocked_node_gets_cores_disruption_blocked_event_once() {
    use karpenter_capi::kube::list::live_snapshot;
    use karpenter_capi::kube::reconciler::{Context, pass as reconcile_pass};

    let fake = seed_world();
    fake.remove("", "pods", "default", "big-0");
    fake.seed(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-aaaaa", "creationTimestamp": "2020-01-01T00:00:00Z",
                     "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c3-8"},
                     "finalizers": ["karpenter.sh/termination"],
                     "annotations": {"cluster.x-k8s.io/machine": format!("capi-ovh/{MD}-aaaaa")}},
        "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"}},
        "status": {"providerID": "openstack:///aaaaa", "nodeName": "worker-a", "conditions": [
            {"type": "Launched", "status": "True", "reason": "Launched", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "Registered", "status": "True", "reason": "Registered", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "Initialized", "status": "True", "reason": "Initialized", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
    }));
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-a", "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"},
                     "finalizers": ["karpenter.sh/termination"]},
        "spec": {"providerID": "openstack:///aaaaa"},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}, "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    }));
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "batch-0", "namespace": "default", "annotations": {"karpenter.sh/do-not-disrupt": "true"}},
        "spec": {"nodeName": "worker-a", "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running"}
    }));
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("{MD}-aaaaa"), "namespace": "capi-ovh",
                     "labels": {"cluster.x-k8s.io/deployment-name": MD, "cluster.x-k8s.io/cluster-name": "capi-ovh", "node.cluster.x-k8s.io/karpenter-member": ""}},
        "spec": {"clusterName": "capi-ovh", "providerID": "openstack:///aaaaa"}
    }));
    let client = fake.client();
    let ctx = Context::new(
        Clients {
            workload: client.clone(),
            management: client.clone(),
        },
        Config::default(),
        Some("capi-ovh".to_string()),
        false,
    );
    for _ in 0..3 {
        let snapshot = live_snapshot(&client, &client, Some("capi-ovh"))
            .await
            .unwrap();
        let report = reconcile_pass(&ctx, &snapshot).await;
        assert!(
            !report.plan.actions.iter().any(|a| a.name() == "taintNode"),
            "a blocked node is not disrupted: {:?}",
            report.plan
        );
    }
    let mut blocked: Vec<(String, String, String, String)> = fake
        .all("", "events")
        .iter()
        .filter(|e| e["reason"] == "DisruptionBlocked")
        .map(|e| {
            (
                e["involvedObject"]["kind"].as_str().unwrap().to_string(),
                e["involvedObject"]["name"].as_str().unwrap().to_string(),
                e["type"].as_str().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    blocked.sort();
    let message = r#"Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/batch-0)"#;
    assert_eq!(
        blocked,
        vec![
            (
                "Node".to_string(),
                "worker-a".to_string(),
                "Normal".to_string(),
                message.to_string()
            ),
            (
                "NodeClaim".to_string(),
                "default-aaaaa".to_string(),
                "Normal".to_string(),
                message.to_string()
            ),
        ],
        "once each, though three passes saw it"
    );
}

/// The disruption actions of a JSON plan.
fn disruptions(out: &str) -> Vec<(String, String)> {
    json_plan(out)
        .into_iter()
        .filter(|(a, _)| {
            matches!(
                a.as_str(),
                "taintNode"
                    | "evictPod"
                    | "markMachineForDeletion"
                    | "deleteNodeClaim"
                    | "scaleMachineDeployment"
            )
        })
        .collect()
}

/// Issue 11 item 1 end to end: a pending pod selecting a label only the flavor has (from the
/// MachineDeployment's `capacity.cluster-autoscaler.kubernetes.io/labels`, as upstream's
/// `cloudprovider.go` `nodeLabelsFromMachineDeployment`) gets a claim carrying that label, the
/// registered Node gets it, the pod binds there (the test plays kube-scheduler and binds only
/// where the nodeSelector matches), and the following passes keep the node: it is not Empty. The
/// loop the issue describes (a node without the label, Empty, deleted, a new claim) never starts.
#[tokio::test]
async fn a_flavor_only_label_reaches_the_node_and_the_pod_that_needs_it_keeps_it() {
    let fake = seed_world();
    fake.mutate(
        "cluster.x-k8s.io",
        "machinedeployments",
        "capi-ovh",
        MD,
        |md| {
            let key = "capacity.cluster-autoscaler.kubernetes.io/labels";
            let labels = md["metadata"]["annotations"][key]
                .as_str()
                .unwrap()
                .to_string();
            md["metadata"]["annotations"][key] = json!(format!("{labels},example.com/disk=nvme"));
        },
    );
    fake.mutate("", "pods", "default", "big-0", |p| {
        p["spec"]["nodeSelector"] = json!({"example.com/disk": "nvme"})
    });

    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    assert!(
        json_plan(&out).contains(&pair("createNodeClaim", "NodeClaim/default-")),
        "{out}"
    );
    let c = claims(&fake);
    assert_eq!(c.len(), 1);
    let claim = c[0]["metadata"]["name"].as_str().unwrap().to_string();
    assert_eq!(c[0]["metadata"]["labels"]["example.com/disk"], "nvme");
    assert_eq!(
        c[0]["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "c3-8"
    );
    assert_eq!(replicas(&fake, MD), 1);

    // Cluster API creates the Machine, the infrastructure its instance, the kubelet its Node
    // (without the flavor-only label: Cluster API does not know it).
    let machine = format!("{MD}-7xq2n");
    fake.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": machine, "namespace": "capi-ovh", "creationTimestamp": now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": MD, "cluster.x-k8s.io/cluster-name": "capi-ovh"}},
        "spec": {"clusterName": "capi-ovh", "bootstrap": {"dataSecretName": "bootstrap-7xq2n"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": machine}}
    }));
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    fake.mutate("cluster.x-k8s.io", "machines", "capi-ovh", &machine, |m| {
        m["spec"]["providerID"] = json!("openstack:///abc")
    });
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    fake.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc", "labels": {"kubernetes.io/hostname": "worker-abc"}},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    }));
    let (r, out) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    // Registered, and no second claim for the pod in the same pass: until the Node is
    // registered the node is seen through its claim's labels (core `statenode.go`).
    assert_eq!(
        json_plan(&out),
        vec![pair("registerNode", "Node/worker-abc")],
        "{out}"
    );
    let (r, _) = pass(&fake, OutputFormat::Json, false).await;
    r.unwrap();
    let node = fake.get("", "nodes", "", "worker-abc").unwrap();
    assert_eq!(
        node["metadata"]["labels"]["example.com/disk"], "nvme",
        "registration copies the claim's labels to the Node"
    );
    let nc = fake.get("karpenter.sh", "nodeclaims", "", &claim).unwrap();
    assert!(
        nc["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Initialized" && c["status"] == "True"),
        "{nc}"
    );

    // kube-scheduler binds the pod: only because the Node has the label it selects.
    assert!(
        node["metadata"]["labels"]
            .as_object()
            .unwrap()
            .get("example.com/disk")
            == Some(&json!("nvme"))
    );
    fake.mutate("", "pods", "default", "big-0", |p| {
        p["spec"]["nodeName"] = json!("worker-abc");
        p["status"] =
            json!({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]});
    });
    // Long past consolidateAfter (30s): backdate the claim's initialization.
    fake.mutate("karpenter.sh", "nodeclaims", "", &claim, |nc| {
        for c in nc["status"]["conditions"].as_array_mut().unwrap() {
            c["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
        }
        if nc["status"].get("lastPodEventTime").is_some() {
            nc["status"]["lastPodEventTime"] = json!("2020-01-01T00:00:00Z");
        }
    });
    for _ in 0..3 {
        let (r, out) = pass(&fake, OutputFormat::Json, false).await;
        r.unwrap();
        assert_eq!(
            disruptions(&out),
            vec![],
            "the node its pod needs is kept: {out}"
        );
        assert!(
            !json_plan(&out).iter().any(|(a, _)| a == "createNodeClaim"),
            "{out}"
        );
    }
    assert_eq!(claims(&fake).len(), 1, "{:#?}", claims(&fake));
    assert_eq!(replicas(&fake, MD), 1);
    assert!(
        fake.get("", "nodes", "", "worker-abc").unwrap()["spec"]["taints"]
            .as_array()
            .is_none_or(|t| t.is_empty())
    );

    // The control: once the pod is gone, the same node is Empty and goes.
    fake.remove("", "pods", "default", "big-0");
    let (r, out) = pass(&fake, OutputFormat::Json, true).await;
    r.unwrap();
    assert_eq!(
        disruptions(&out).first(),
        Some(&pair("taintNode", "Node/worker-abc")),
        "{out}"
    );
}
