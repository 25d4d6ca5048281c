//! `init`'s output applied to the in-memory API, and the controller run as the identities it
//! generates, through a whole lifecycle (watches, leader election, provision, bind, launch,
//! register, initialize, expire, drain, scale down, finalizer release, a warning Event): the
//! fake's RBAC authorizer ([`common::authz`]) answers every request the rendered Roles and
//! bindings do not allow with 403, and none is. Both self-hosted (one cluster, the controller's
//! own ServiceAccount bound to the management Role) and with a separate management cluster
//! (its own ServiceAccount there).

use crate::common;
use crate::support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{FakeApi, Req};
use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::render::{Templates, render};
use karpenter_capi::cli::OutputFormat;
use karpenter_capi::cmd::run::once;
use karpenter_capi::controller::Config;
use karpenter_capi::kube::leader::LeaseLock;
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

/// The clusters after `init`'s bundle is applied, and the identities the controller runs as.
struct World {
    workload: FakeApi,
    management: FakeApi,
    workload_user: String,
    management_user: String,
}

impl World {
    fn clients(&self) -> Clients {
        Clients {
            workload: self.workload.client_as(&self.workload_user),
            management: self.management.client_as(&self.management_user),
        }
    }

    /// Every request both clusters answered (one list when self-hosted).
    fn requests(&self, separate: bool) -> Vec<Req> {
        let mut all = self.workload.requests();
        if separate {
            all.extend(self.management.requests());
        }
        all
    }
}

fn served() -> Vec<common::TypeInfo> {
    let mut types = common::all_types();
    types.extend(common::authz::rbac_types());
    types
}

/// Applies `init`'s bundle: every document whose type the fake serves (RBAC, ServiceAccounts,
/// the NodePool, node class, MachineDeployments, bootstrap template); the Deployment and the
/// infrastructure templates are not read by the controller and not served.
fn apply(fake: &FakeApi, docs: &[karpenter_capi::bundle::Document]) -> Vec<String> {
    let types = served();
    let mut applied = Vec::new();
    for d in docs {
        let group = d.api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if types.iter().any(|t| t.group == group && t.kind == d.kind) {
            fake.seed(d.value.clone());
            applied.push(d.kind.clone());
        }
    }
    applied
}

fn world(separate: bool) -> World {
    world_with(separate, |_| {})
}

/// The world with the bundle changed first (to show what a missing rule costs).
fn world_with(separate: bool, change: impl FnOnce(&mut karpenter_capi::bundle::Bundle)) -> World {
    let mut input = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    input.separate_management = separate;
    let mut bundle = render(&input, &Templates::default()).unwrap();
    change(&mut bundle);
    let workload = FakeApi::with_types(served());
    let management = if separate {
        FakeApi::with_types(served())
    } else {
        workload.clone()
    };
    let w = apply(&workload, &bundle.workload);
    let m = apply(&management, &bundle.management);
    for kind in [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ] {
        assert!(
            w.iter().any(|k| k == kind),
            "workload bundle: no {kind} in {w:?}"
        );
    }
    for kind in ["ServiceAccount", "Role", "RoleBinding", "MachineDeployment"] {
        assert!(
            m.iter().any(|k| k == kind),
            "management bundle: no {kind} in {m:?}"
        );
    }
    // The controller's identity is the Deployment's ServiceAccount; on a separate management
    // cluster, the management bundle's ServiceAccount (`init kubeconfig` mints its token).
    let deployment = bundle
        .workload
        .iter()
        .find(|d| d.kind == "Deployment")
        .unwrap();
    let workload_user = format!(
        "system:serviceaccount:{}:{}",
        deployment.namespace.as_deref().unwrap(),
        deployment.value["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .unwrap()
    );
    let account = bundle
        .management
        .iter()
        .find(|d| d.kind == "ServiceAccount")
        .unwrap();
    let management_user = if separate {
        format!(
            "system:serviceaccount:{}:{}",
            account.namespace.as_deref().unwrap(),
            account.name
        )
    } else {
        workload_user.clone()
    };
    // A pending pod that needs a new node.
    workload.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "big-0", "namespace": "default", "labels": {"app": "big"}},
        "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "3", "memory": "256Mi"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    }));
    World {
        workload,
        management,
        workload_user,
        management_user,
    }
}

async fn pass(world: &World) -> Vec<String> {
    let buf = Buf::default();
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(buf.clone()));
    once(
        &world.clients(),
        Some("capi-ovh"),
        Some("capi-ovh"),
        &Config::default(),
        false,
        &printer,
    )
    .await
    .unwrap();
    let out = String::from_utf8(std::mem::take(&mut *buf.0.lock().unwrap())).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap().to_string())
        .collect()
}

fn forbidden(reqs: &[Req]) -> Vec<String> {
    reqs.iter()
        .filter(|r| r.code == 403)
        .map(|r| format!("{} ?{}", r.line(), r.query))
        .collect()
}

async fn lifecycle(separate: bool) {
    let world = world(separate);
    let (w, m) = (&world.workload, &world.management);

    // The authorizer refuses what the rendered rules do not grant: the check can fail.
    let probe = w.client_as(&world.workload_user);
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(probe, "kube-system");
    assert!(secrets.list(&Default::default()).await.is_err());
    let stranger = m.client_as("system:serviceaccount:default:someone");
    let mds: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        stranger,
        "capi-ovh",
        &kube::discovery::ApiResource {
            group: "cluster.x-k8s.io".into(),
            version: "v1beta2".into(),
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: "MachineDeployment".into(),
            plural: "machinedeployments".into(),
        },
    );
    assert!(mds.list(&Default::default()).await.is_err());
    let refused = forbidden(&world.requests(separate));
    assert_eq!(refused.len(), 2, "{refused:?}");
    w.clear_log();
    if separate {
        m.clear_log();
    }

    // Continuous mode: list and watch every observed type, scoped to the one Cluster.
    let clients = world.clients();
    let metrics = Arc::new(karpenter_capi::kube::metrics::Metrics::new());
    let notify = Arc::new(tokio::sync::Notify::new());
    let (stores, tasks) = karpenter_capi::kube::watch::start(
        &clients,
        Some("capi-ovh"),
        Some("capi-ovh"),
        notify,
        metrics,
    )
    .await
    .unwrap();
    stores.wait_until_ready().await;
    for t in tasks {
        t.abort();
    }
    // Leader election in the controller's namespace: create, renew, release.
    let lock = LeaseLock::new(
        w.client_as(&world.workload_user),
        "karpenter-capi",
        "a".to_string(),
    );
    let now = jiff::Timestamp::now();
    lock.try_acquire(now).await.unwrap();
    lock.try_acquire(now).await.unwrap();
    lock.release().await.unwrap();

    let mut seen = Vec::new();
    seen.extend(pass(&world).await);
    assert!(seen.iter().any(|a| a == "createNodeClaim"), "{seen:?}");
    let claim_obj = w.all("karpenter.sh", "nodeclaims")[0].clone();
    let claim = claim_obj["metadata"]["name"].as_str().unwrap().to_string();
    let md = claim_obj["metadata"]["annotations"]["karpenter-capi/machine-deployment"]
        .as_str()
        .map(|s| s.rsplit('/').next().unwrap().to_string())
        .unwrap();
    let machine = format!("{md}-7xq2n");
    m.seed(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": machine, "namespace": "capi-ovh", "creationTimestamp": common::now_stamp(),
                     "labels": {"cluster.x-k8s.io/deployment-name": md, "cluster.x-k8s.io/cluster-name": "capi-ovh"}},
        "spec": {"clusterName": "capi-ovh", "bootstrap": {"dataSecretName": "bootstrap-7xq2n"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": machine}}
    }));
    seen.extend(pass(&world).await); // bind
    m.mutate("cluster.x-k8s.io", "machines", "capi-ovh", &machine, |mm| {
        mm["spec"]["providerID"] = json!("openstack:///abc")
    });
    seen.extend(pass(&world).await); // launch
    w.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-abc", "labels": {"kubernetes.io/hostname": "worker-abc"}},
        "spec": {"providerID": "openstack:///abc", "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    }));
    seen.extend(pass(&world).await); // register
    seen.extend(pass(&world).await); // initialize
    // The pending pod now runs on a spare node; a ReplicaSet's pod runs on the new node, which
    // expires after a minute with a minute of grace: tainted, the eviction refused once (a
    // disruption budget), then the Machine marked, the MachineDeployment scaled down, the claim
    // deleted.
    w.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "spare", "labels": {"kubernetes.io/hostname": "spare", "kubernetes.io/arch": "amd64"}},
        "spec": {},
        "status": {"capacity": {"cpu": "16", "memory": "32Gi", "pods": "110"}, "allocatable": {"cpu": "16", "memory": "32Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}
    }));
    w.mutate("", "pods", "default", "big-0", |p| {
        p["spec"]["nodeName"] = json!("spare");
        p["status"] =
            json!({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]});
    });
    w.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs", "controller": true}]},
        "spec": {"nodeName": "worker-abc", "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    }));
    w.mutate("karpenter.sh", "nodepools", "", "default", |p| {
        p["spec"]["template"]["spec"]["expireAfter"] = json!("1m");
        p["spec"]["template"]["spec"]["terminationGracePeriod"] = json!("1m");
    });
    w.mutate("karpenter.sh", "nodeclaims", "", &claim, |c| {
        c["metadata"]["creationTimestamp"] = json!("2026-11-30T10:00:00Z");
        for cond in c["status"]["conditions"].as_array_mut().unwrap() {
            cond["lastTransitionTime"] = json!("2026-11-30T10:00:00Z");
        }
    });
    w.fail("POST", "/pods/web-0/eviction", 429, 1);
    for round in 0..12 {
        seen.extend(pass(&world).await);
        // Once an eviction was refused, the drain started long ago.
        if round > 0 && seen.iter().any(|a| a == "evictPod") {
            w.mutate("karpenter.sh", "nodeclaims", "", &claim, |c| {
                c["metadata"]["annotations"]["karpenter-capi/drain-started"] =
                    json!("2026-11-30T10:00:00Z");
                // Its terminationGracePeriod is over: what the PDB holds is deleted.
                c["metadata"]["annotations"]["karpenter.sh/nodeclaim-termination-timestamp"] =
                    json!("2026-11-30T10:01:00Z");
            });
        }
        // Done once the claim is gone or its Machine marked (the claim is deleted first, then
        // drained).
        let gone = w.get("karpenter.sh", "nodeclaims", "", &claim).is_none()
            || seen.iter().any(|a| a == "markMachineForDeletion");
        if gone {
            break;
        }
    }
    // Cluster API deletes the Machine's Node: the controller releases its finalizer.
    if w.get("", "nodes", "", "worker-abc").is_some() {
        w.mutate("", "nodes", "", "worker-abc", |n| {
            n["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:30:00Z");
        });
        seen.extend(pass(&world).await);
    }
    // A NodePool whose disruption settings do not parse gets a Warning Event.
    w.mutate("karpenter.sh", "nodepools", "", "default", |p| {
        p["spec"]["disruption"]["consolidateAfter"] = json!("soon");
    });
    seen.extend(pass(&world).await);

    for action in [
        "createNodeClaim",
        "taintNode",
        "evictPod",
        "markMachineForDeletion",
        "scaleMachineDeployment",
        "deleteNodeClaim",
        "warnNodePool",
    ] {
        assert!(seen.iter().any(|a| a == action), "{action} in {seen:?}");
    }
    let reqs = world.requests(separate);
    assert!(reqs.len() > 50, "{} requests", reqs.len());
    assert_eq!(
        forbidden(&reqs),
        Vec::<String>::new(),
        "refused under the generated RBAC (separate management: {separate})"
    );
    // With a separate management cluster, each identity only ever calls its own cluster.
    if separate {
        let scaled = m.requests().iter().any(|r| {
            r.method == "PATCH" && r.path.contains("/machinedeployments/") && r.code < 300
        });
        assert!(scaled, "the management identity scaled a MachineDeployment");
        let management_groups = ["cluster.x-k8s.io"];
        for r in w.requests() {
            let group = r.rbac().map(|(g, _, _)| g).unwrap_or_default();
            assert!(!management_groups.contains(&group.as_str()), "{}", r.line());
        }
    }
}

#[tokio::test]
async fn self_hosted_controller_gets_no_403_under_the_generated_rbac() {
    lifecycle(false).await;
}

#[tokio::test]
async fn separate_management_controller_gets_no_403_under_the_generated_rbac() {
    lifecycle(true).await;
}

/// The check can fail: without the self-hosted subject on the management RoleBinding (the
/// manifests before issue 11), the controller's own ServiceAccount is refused the
/// MachineDeployments.
#[tokio::test]
async fn without_the_self_hosted_binding_the_controller_gets_403() {
    let world = world_with(false, |b| {
        for d in b.management.iter_mut().filter(|d| d.kind == "RoleBinding") {
            let subjects = d.value["subjects"].as_array_mut().unwrap();
            subjects.retain(|s| s["namespace"] != "karpenter-capi");
        }
    });
    let buf = Buf::default();
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(buf));
    let r = once(
        &world.clients(),
        Some("capi-ovh"),
        Some("capi-ovh"),
        &Config::default(),
        false,
        &printer,
    )
    .await;
    assert!(r.is_err());
    let refused = forbidden(&world.requests(false));
    assert!(
        refused.iter().any(|r| r.starts_with(
            "GET /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments"
        )),
        "{refused:?}"
    );
}

/// The controller's management identity cannot mint a token for itself (it could otherwise extend
/// its own credential forever); the identity running `init kubeconfig` can.
#[tokio::test]
async fn only_the_identity_running_init_may_mint_the_controller_token() {
    let management = FakeApi::with_types(served());
    let mut input = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    input.separate_management = true;
    let bundle = render(&input, &Templates::default()).unwrap();
    apply(&management, &bundle.management);
    let controller = management.client_as("system:serviceaccount:capi-ovh:capi-ovh-karpenter-capi");
    let err = karpenter_capi::kube::init::request_token(
        &controller,
        "capi-ovh",
        "capi-ovh-karpenter-capi",
        3600,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("(403)") || err.contains("forbidden"), "{err}");
    assert!(
        err.ends_with("hint: the identity running init needs `create` on `serviceaccounts/token` in namespace capi-ovh (the controller itself does not)"),
        "{err}"
    );
    // The administrator (no RBAC check) gets one.
    let minted = karpenter_capi::kube::init::request_token(
        &management.client(),
        "capi-ovh",
        "capi-ovh-karpenter-capi",
        3600,
    )
    .await
    .unwrap();
    assert!(!minted.token.is_empty());
}
