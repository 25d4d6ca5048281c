//! `uninstall` against the in-memory API: by default the nodes and Machines stay while our
//! finalizers and NodeClaim owners come off; with `--delete-nodes` the NodeClaims go first and
//! their Machines with them (a stand-in controller does what the real one would); CRDs always last.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{self, FakeApi};
use karpenter_capi::kube::uninstall::{Options, uninstall};

fn api() -> FakeApi {
    let mut types = common::all_types();
    types.extend(common::authz::rbac_types());
    types.extend([
        common::t("", &["v1"], "services", "Service", true, false, false),
        common::t(
            "apps",
            &["v1"],
            "deployments",
            "Deployment",
            true,
            true,
            false,
        ),
        common::t(
            "apiextensions.k8s.io",
            &["v1"],
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
            false,
            false,
        ),
    ]);
    let fake = FakeApi::with_types(types);
    for crd in [
        "nodepools.karpenter.sh",
        "nodeclaims.karpenter.sh",
        "clusterapinodeclasses.karpenter.cluster.x-k8s.io",
    ] {
        fake.seed(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": crd}}),
        );
    }
    for v in [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "karpenter-capi"}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "karpenter-capi", "namespace": "karpenter-capi"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "karpenter-capi", "namespace": "karpenter-capi"}, "spec": {"replicas": 2}}),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "karpenter-capi", "namespace": "karpenter-capi"}, "spec": {"maxUnavailable": 1}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "karpenter-capi-metrics", "namespace": "karpenter-capi"}, "spec": {}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "karpenter-capi"}, "rules": []}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "karpenter-capi"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karpenter-capi"}, "subjects": []}),
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"}, "spec": {}}),
        json!({"apiVersion": "karpenter.cluster.x-k8s.io/v1alpha1", "kind": "ClusterAPINodeClass", "metadata": {"name": "default"}, "spec": {}}),
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "default-a", "finalizers": ["karpenter.sh/termination"],
                "annotations": {"cluster.x-k8s.io/machine": "capi/m-1"}},
            "spec": {}}),
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "finalizers": ["example.com/keep", "karpenter.sh/termination"],
                "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-a", "uid": "u-a"}]},
            "spec": {"providerID": "openstack:///1"}}),
        // A node Karpenter never managed: untouched.
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-1"}, "spec": {}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": "m-1", "namespace": "capi"}, "spec": {"clusterName": "capi", "providerID": "openstack:///1"}}),
    ] {
        fake.seed(v);
    }
    fake
}

fn options(delete_nodes: bool, timeout_ms: u64) -> Options {
    Options {
        controller_namespace: "karpenter-capi".to_string(),
        delete_nodes,
        timeout: Duration::from_millis(timeout_ms),
        poll: Duration::from_millis(20),
    }
}

/// The paths of the DELETE requests, in order, with the object's last path segment kept.
fn deletes(fake: &FakeApi) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| r.path.clone())
        .collect()
}

const CRD_DELETES: [&str; 3] = [
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.karpenter.sh",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodeclaims.karpenter.sh",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterapinodeclasses.karpenter.cluster.x-k8s.io",
];

#[tokio::test]
async fn by_default_the_nodes_and_machines_stay_and_lose_only_our_finalizer() {
    let fake = api();
    let client = fake.client();
    let lines = uninstall(&client, &client, &options(false, 0))
        .await
        .unwrap();
    assert_eq!(
        lines,
        [
            "deployment.apps/karpenter-capi deleted",
            "nodeclaim.karpenter.sh/default-a finalizer karpenter.sh/termination removed",
            "node/node-1 finalizer karpenter.sh/termination removed",
            "nodeclaim.karpenter.sh/default-a deleted",
            "nodepool.karpenter.sh/default deleted",
            "clusterapinodeclass.karpenter.cluster.x-k8s.io/default deleted",
            "poddisruptionbudget.policy/karpenter-capi deleted",
            "service/karpenter-capi-metrics deleted",
            "clusterrolebinding.rbac.authorization.k8s.io/karpenter-capi deleted",
            "clusterrole.rbac.authorization.k8s.io/karpenter-capi deleted",
            "serviceaccount/karpenter-capi deleted",
            "namespace/karpenter-capi deleted",
            "customresourcedefinition.apiextensions.k8s.io/nodepools.karpenter.sh deleted",
            "customresourcedefinition.apiextensions.k8s.io/nodeclaims.karpenter.sh deleted",
            "customresourcedefinition.apiextensions.k8s.io/clusterapinodeclasses.karpenter.cluster.x-k8s.io deleted",
        ]
    );
    // The Node is still there, with the other finalizer and without the NodeClaim owner (so
    // the garbage collector cannot take it with its NodeClaim); the Machine is untouched.
    let node = fake.get("", "nodes", "", "node-1").unwrap();
    assert_eq!(node["metadata"]["finalizers"], json!(["example.com/keep"]));
    assert_eq!(node["metadata"]["ownerReferences"], json!([]));
    assert!(fake.get("", "nodes", "", "cp-1").is_some());
    assert!(
        fake.get("cluster.x-k8s.io", "machines", "capi", "m-1")
            .is_some()
    );
    assert!(fake.all("karpenter.sh", "nodeclaims").is_empty());
    // The controller first, the CRDs last.
    let order = deletes(&fake);
    assert_eq!(
        order[0],
        "/apis/apps/v1/namespaces/karpenter-capi/deployments/karpenter-capi"
    );
    assert_eq!(order[order.len() - 3..], CRD_DELETES);
    // No patch touched the Machine or the untouched node.
    assert!(
        fake.writes()
            .iter()
            .all(|w| !w.contains("machines") && !w.contains("nodes/cp-1")),
        "{:?}",
        fake.writes()
    );
    // A second run finds nothing left to do.
    let again = uninstall(&client, &client, &options(false, 0))
        .await
        .unwrap();
    assert_eq!(again, Vec::<String>::new());
}

#[tokio::test]
async fn delete_nodes_waits_for_the_machines_before_anything_else_goes() {
    let fake = api();
    let client = fake.client();
    // A stand-in for the controller and Cluster API: a NodeClaim being deleted loses its Machine
    // and then its finalizer.
    let stand_in = {
        let client = client.clone();
        tokio::spawn(async move {
            let claims: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
                client.clone(),
                &kube::api::ApiResource::from_gvk_with_plural(
                    &kube::api::GroupVersionKind::gvk("karpenter.sh", "v1", "NodeClaim"),
                    "nodeclaims",
                ),
            );
            let machines: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
                client.clone(),
                "capi",
                &kube::api::ApiResource::from_gvk_with_plural(
                    &kube::api::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Machine"),
                    "machines",
                ),
            );
            loop {
                let list = claims.list(&Default::default()).await.unwrap();
                for c in list.items {
                    if c.metadata.deletion_timestamp.is_some() {
                        let _ = machines.delete("m-1", &Default::default()).await;
                        let patch = json!({"metadata": {"finalizers": []}});
                        claims
                            .patch(
                                c.metadata.name.as_deref().unwrap(),
                                &Default::default(),
                                &kube::api::Patch::Merge(&patch),
                            )
                            .await
                            .unwrap();
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let lines = uninstall(&client, &client, &options(true, 5_000))
        .await
        .unwrap();
    stand_in.abort();
    assert_eq!(
        lines[..2],
        [
            "nodeclaim.karpenter.sh/default-a deleted",
            "every NodeClaim and its Machine is gone (1 Machine(s))",
        ]
    );
    assert!(
        fake.get("cluster.x-k8s.io", "machines", "capi", "m-1")
            .is_none()
    );
    // Nothing was left to strip on the claims; the Node still carried ours (the stand-in does not
    // drain), so it is stripped, and the rest goes as by default, CRDs last.
    assert_eq!(lines[2], "deployment.apps/karpenter-capi deleted");
    assert_eq!(
        lines[3],
        "node/node-1 finalizer karpenter.sh/termination removed"
    );
    let order = deletes(&fake);
    assert!(order[0].ends_with("/nodeclaims/default-a"), "{order:?}");
    assert_eq!(order[order.len() - 3..], CRD_DELETES);
}

#[tokio::test]
async fn delete_nodes_that_run_out_of_time_remove_nothing_else() {
    let fake = api();
    let client = fake.client();
    let err = uninstall(&client, &client, &options(true, 100))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "workload cluster: uninstall --delete-nodes: still there after 0s: NodeClaim/default-a, Machine/capi/m-1\n  \
         hint: nothing else was removed; check `kubectl karpenter-capi doctor` for what blocks them (a PodDisruptionBudget, do-not-disrupt pods), then run uninstall again"
    );
    // The claim is being deleted (its finalizer holds it); the controller, the CRDs, the Machine stay.
    let claim: Value = fake
        .get("karpenter.sh", "nodeclaims", "", "default-a")
        .unwrap();
    assert!(claim["metadata"]["deletionTimestamp"].is_string());
    assert!(
        fake.get("apps", "deployments", "karpenter-capi", "karpenter-capi")
            .is_some()
    );
    assert_eq!(
        fake.all("apiextensions.k8s.io", "customresourcedefinitions")
            .len(),
        3
    );
    assert!(
        fake.get("cluster.x-k8s.io", "machines", "capi", "m-1")
            .is_some()
    );
}

#[tokio::test]
async fn delete_nodes_without_the_controller_is_refused_before_any_write() {
    let fake = api();
    fake.remove("apps", "deployments", "karpenter-capi", "karpenter-capi");
    let client = fake.client();
    fake.clear_log();
    let err = uninstall(&client, &client, &options(true, 100))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--delete-nodes needs the controller running"),
        "{err}"
    );
    assert_eq!(fake.writes(), Vec::<String>::new());
}

#[test]
fn uninstall_refuses_the_flags_it_would_ignore() {
    for (args, flag) in [
        (&["uninstall", "-n", "capi"][..], "--namespace"),
        (&["uninstall", "-o", "json"][..], "--output"),
    ] {
        let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"))
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "`uninstall` takes no {flag} (the controller's namespace is --controller-namespace)"
            )),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_controller_pod_that_outlives_its_deployment_stops_uninstall_before_any_finalizer() {
    let fake = api();
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "karpenter-capi-6d9f-a", "namespace": "karpenter-capi",
            "labels": {"app.kubernetes.io/name": "karpenter-capi"}},
        "spec": {"containers": [{"name": "controller", "image": "x"}]}}));
    // Another namespace's pod with the same label is not ours to wait for.
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "other", "namespace": "default",
            "labels": {"app.kubernetes.io/name": "karpenter-capi"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}));
    let client = fake.client();
    let err = uninstall(&client, &client, &options(false, 100))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "workload cluster: uninstall: the controller's pods are still running after 0s: Pod/karpenter-capi/karpenter-capi-6d9f-a\n  \
         hint: its Deployment is deleted; once they are gone, run uninstall again (a running controller would put its finalizers back)"
    );
    let node = fake.get("", "nodes", "", "node-1").unwrap();
    assert_eq!(
        node["metadata"]["finalizers"],
        json!(["example.com/keep", "karpenter.sh/termination"])
    );
    // Once the pod is gone, the next run goes through.
    fake.remove("", "pods", "karpenter-capi", "karpenter-capi-6d9f-a");
    let lines = uninstall(&client, &client, &options(false, 100))
        .await
        .unwrap();
    assert_eq!(
        lines[0],
        "nodeclaim.karpenter.sh/default-a finalizer karpenter.sh/termination removed"
    );
}
