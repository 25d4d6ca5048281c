//! Listing live clusters into a Snapshot, and the messages for the faults an operator meets
//! first: an unreachable cluster, a CRD that is not installed, a forbidden list.

use crate::common;

use common::FakeApi;
use karpenter_capi::kube::list::live_snapshot;
use karpenter_capi_testkit::World;
use karpenter_capi_testkit::objects::{MachineDeployment, Node, NodePool, Object, Pod};
use serde_json::json;

/// A pending pod, a control-plane node, a NodePool, a member MachineDeployment in `capi-ovh` and
/// another cluster's in `elsewhere`.
fn objects() -> World {
    World::empty()
        .add(
            Pod::new("default", "big-0")
                .image("pause")
                .cpu("3")
                .pending(),
        )
        .add(Node::new("cp-0").set(
            "/status/capacity",
            json!({"cpu": "4", "memory": "8Gi", "pods": "110"}),
        ))
        .add(NodePool::new("default"))
        .add(
            MachineDeployment::new("capi-ovh", "c3-8")
                .member()
                .capacity("4", "8G"),
        )
        .add(
            MachineDeployment::new("elsewhere", "other")
                .cluster("other")
                .replicas(1),
        )
}

#[tokio::test]
async fn lists_both_clusters_into_one_snapshot() {
    let workload = FakeApi::new();
    let management = FakeApi::new();
    let (capi, rest) = objects().split_management();
    management.seed_world(&capi);
    workload.seed_world(&rest);
    let snap = live_snapshot(&workload.client(), &management.client(), Some("capi-ovh"))
        .await
        .unwrap();
    assert_eq!(snap.pods.len(), 1);
    assert!(snap.pods[0].is_provisionable());
    assert_eq!(
        snap.nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>(),
        vec!["cp-0"]
    );
    assert_eq!(
        snap.nodepools
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        vec!["default"]
    );
    assert!(!snap.implicit_nodepool);
    // -n restricts Cluster API objects to the cluster's namespace.
    assert_eq!(
        snap.machine_deployments
            .iter()
            .map(|m| m.key())
            .collect::<Vec<_>>(),
        vec!["capi-ovh/c3-8"]
    );
    assert!(snap.machine_deployments[0].member);
    assert_eq!(
        snap.machine_deployments[0].object.origin,
        "management cluster"
    );
    assert!(snap.now.is_some());
    // The collections were paged and each went to its own cluster.
    let w: Vec<String> = workload.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        w.contains(&"/apis/karpenter.sh/v1/nodeclaims".to_string()),
        "{w:?}"
    );
    assert!(!w.iter().any(|p| p.contains("machinedeployments")));
    let m = management.requests();
    assert!(m.iter().any(|r| r.path
        == "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments"
        && r.query.contains("limit=500")));
    // Without -n, every namespace.
    let snap = live_snapshot(&workload.client(), &management.client(), None)
        .await
        .unwrap();
    assert_eq!(snap.machine_deployments.len(), 2);
}

#[tokio::test]
async fn falls_back_to_v1beta1_when_v1beta2_is_not_served() {
    let fake = FakeApi::new()
        .versions("machinedeployments", &["v1beta1"])
        .versions("machines", &["v1beta1"])
        .versions("kubeadmconfigtemplates", &["v1beta1"]);
    fake.seed_yaml(
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: md, namespace: capi}\nspec: {clusterName: c, replicas: 0}\n",
    );
    let client = fake.client();
    let snap = live_snapshot(&client, &client, Some("capi")).await.unwrap();
    assert_eq!(snap.machine_deployments.len(), 1);
    assert_eq!(
        snap.machine_deployments[0].object.api_version,
        "cluster.x-k8s.io/v1beta1"
    );
    let paths: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.path, r.code))
        .collect();
    assert!(
        paths.contains(
            &"/apis/cluster.x-k8s.io/v1beta2/namespaces/capi/machinedeployments 404".to_string()
        ),
        "{paths:?}"
    );
    assert!(
        paths.contains(
            &"/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machinedeployments 200".to_string()
        ),
        "{paths:?}"
    );
}

#[tokio::test]
async fn missing_karpenter_crd_names_cluster_crd_and_what_to_install() {
    let fake = FakeApi::new().without("nodeclaims");
    let client = fake.client();
    let err = live_snapshot(&client, &client, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "workload cluster: list nodeclaims.karpenter.sh: the CRD nodeclaims.karpenter.sh is not installed (no API served for karpenter.sh/v1)\n  \
         hint: install Karpenter's karpenter.sh/v1 CRDs (NodePool, NodeClaim) on the workload cluster: `kubectl apply --server-side -k DIR/crds` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)"
    );
}

#[tokio::test]
async fn missing_cluster_api_names_the_management_cluster_and_both_versions() {
    let workload = FakeApi::new();
    let management = FakeApi::new().without("machines");
    let err = live_snapshot(&workload.client(), &management.client(), Some("capi"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "management cluster: list machines.cluster.x-k8s.io: the CRD machines.cluster.x-k8s.io is not installed (no API served for \
         cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1)\n  hint: install Cluster API (`clusterctl init`) on the management cluster, \
         or point --management-kubeconfig/--management-context at the cluster that runs it"
    );
}

#[tokio::test]
async fn missing_kubeadm_bootstrap_is_a_warning_only() {
    let fake = FakeApi::new().without("kubeadmconfigtemplates");
    let client = fake.client();
    let snap = live_snapshot(&client, &client, None).await.unwrap();
    assert_eq!(snap.warnings.len(), 1);
    assert!(
        snap.warnings[0].starts_with(
            "management cluster: list kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io: the CRD"
        ),
        "{:?}",
        snap.warnings
    );
}

#[tokio::test]
async fn forbidden_list_names_cluster_verb_resource_and_namespace() {
    let workload = FakeApi::new();
    let management = FakeApi::new();
    management.fail("GET", "/namespaces/capi-ovh/machines", 403, 1);
    let err = live_snapshot(&workload.client(), &management.client(), Some("capi-ovh"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "management cluster: list machines.cluster.x-k8s.io in namespace capi-ovh: forbidden: the identity may not do this (403)\n  \
         hint: the identity lacks `list` on `machines.cluster.x-k8s.io` in capi-ovh: grant it (the RBAC `kubectl karpenter-capi init` generates has it)"
    );
}

#[tokio::test]
async fn unreachable_cluster_names_the_cluster_and_what_to_check() {
    // Pick ring as rustls's provider, as `kube::client::connect` does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Nothing listens on port 9 of the loopback interface: the connection is refused.
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let unreachable = kube::Client::try_from(config).unwrap();
    let management = FakeApi::new();
    let err = live_snapshot(&unreachable, &management.client(), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("workload cluster: list "), "{err}");
    assert!(err.ends_with("hint: the workload cluster is unreachable: check the server address, network and --context"), "{err}");

    let workload = FakeApi::new();
    let err = live_snapshot(&workload.client(), &unreachable, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("management cluster: list "), "{err}");
    assert!(err.ends_with("hint: the management cluster is unreachable: check the server address, network and --management-context"), "{err}");
}

/// Flavors c3-2 (2 cores) and c3-4 (4 cores), a pending 500m pod, a DaemonSet with no pod yet
/// whose template asks 1 core under RuntimeClass `kata`, and (with `kata`) that RuntimeClass
/// with 2 cores of fixed overhead, all on one in-memory cluster.
fn kata_cluster(kata: bool) -> FakeApi {
    use karpenter_capi_testkit::objects::DaemonSet;
    let fake = FakeApi::new();
    fake.seed_world(
        &World::empty()
            .add(NodePool::new("default"))
            .add(
                MachineDeployment::new("capi-ovh", "c3-2")
                    .member()
                    .capacity("2", "8G")
                    .price("0.05"),
            )
            .add(
                MachineDeployment::new("capi-ovh", "c3-4")
                    .member()
                    .capacity("4", "8G")
                    .price("0.08"),
            )
            .add(Pod::new("default", "web-0").cpu("500m").pending())
            .add(
                DaemonSet::new("kube-system", "agent", "1")
                    .tolerate_all()
                    .set("/spec/template/spec/runtimeClassName", json!("kata")),
            ),
    );
    if kata {
        fake.seed(
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "kata"}, "handler": "kata",
            "overhead": {"podFixed": {"cpu": "2", "memory": "1Gi"}}}),
        );
    }
    fake
}

/// The flavor of the one node each strategy plans, and the DaemonSet overhead it reserves.
fn planned(snap: &karpenter_capi::model::snapshot::Snapshot) -> Vec<(String, i64)> {
    use karpenter_capi::sched::strategy::{StrategyName, by_name};
    let pending: Vec<usize> = (0..snap.pods.len())
        .filter(|&i| snap.pods[i].is_pending())
        .collect();
    [StrategyName::Cost, StrategyName::KarpenterCapi]
        .into_iter()
        .map(|s| {
            let p = by_name(s).plan(snap, &pending);
            assert_eq!(p.new_nodes.len(), 1, "{s:?}");
            let o = &p.new_nodes[0].offering;
            (
                o.flavor.instance_type.clone(),
                o.flavor.capacity.cpu_millis - o.allocatable.cpu_millis,
            )
        })
        .collect()
}

/// A RuntimeClass listed from the workload cluster sizes a DaemonSet that has no pod yet: its
/// 1-core template plus 2 cores of `kata` overhead leave a c3-2 no room for the 500m pod, so it
/// gets a c3-4 with 3 cores reserved. Without the RuntimeClass (absent, its API not served, or
/// its list forbidden) the pass still plans, with a warning when it could not list, and
/// the DaemonSet counts 1 core: a c3-2.
#[tokio::test]
async fn a_live_runtime_class_sizes_a_daemonset_without_pods() {
    let fake = kata_cluster(true);
    let client = fake.client();
    let snap = live_snapshot(&client, &client, Some("capi-ovh"))
        .await
        .unwrap();
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    assert_eq!(planned(&snap), vec![("c3-4".to_string(), 3000); 2]);
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.line() == "GET /apis/node.k8s.io/v1/runtimeclasses"),
        "{:?}",
        fake.requests().iter().map(|r| r.line()).collect::<Vec<_>>()
    );

    // No RuntimeClass of that name: the template alone.
    let client = kata_cluster(false).client();
    let snap = live_snapshot(&client, &client, Some("capi-ovh"))
        .await
        .unwrap();
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    assert_eq!(planned(&snap), vec![("c3-2".to_string(), 1000); 2]);

    // The list forbidden: a warning, and the pass goes on without the overhead.
    let fake = kata_cluster(true);
    fake.fail("GET", "/runtimeclasses", 403, 1);
    let client = fake.client();
    let snap = live_snapshot(&client, &client, Some("capi-ovh"))
        .await
        .unwrap();
    assert_eq!(
        snap.warnings,
        vec![
            "workload cluster: list runtimeclasses.node.k8s.io: forbidden: the identity may not do this (403)\n  \
             hint: the identity lacks `list` on `runtimeclasses.node.k8s.io`: grant it (the RBAC `kubectl karpenter-capi init` generates has it)\n  \
             RuntimeClass overhead is not added to pods and DaemonSets without spec.overhead"
                .to_string()
        ]
    );
    assert_eq!(planned(&snap), vec![("c3-2".to_string(), 1000); 2]);

    // The API not served (RuntimeClasses switched off): a warning too.
    let fake = kata_cluster(false).without("runtimeclasses");
    let client = fake.client();
    let snap = live_snapshot(&client, &client, Some("capi-ovh"))
        .await
        .unwrap();
    assert_eq!(
        snap.warnings,
        vec![
            "workload cluster: list runtimeclasses.node.k8s.io: the server does not serve the built-in API node.k8s.io/v1/runtimeclasses (404)\n  \
             RuntimeClass overhead is not added to pods and DaemonSets without spec.overhead"
                .to_string()
        ]
    );
    assert_eq!(planned(&snap), vec![("c3-2".to_string(), 1000); 2]);
}

/// The same from the watches of continuous mode: the RuntimeClass's store sizes the DaemonSet
/// (its overhead kept through trimming and compaction), and a forbidden RuntimeClass list
/// starts every other watch, with a warning and no RuntimeClass store.
#[tokio::test]
async fn watched_runtime_classes_size_a_daemonset_and_a_forbidden_list_is_a_warning() {
    use karpenter_capi::kube::list::Clients;
    use std::sync::Arc;
    async fn watched(fake: &FakeApi) -> karpenter_capi::model::snapshot::Snapshot {
        let clients = Clients {
            workload: fake.client(),
            management: fake.client(),
        };
        let (stores, tasks) = karpenter_capi::kube::watch::start(
            &clients,
            Some("capi-ovh"),
            None,
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(karpenter_capi::kube::metrics::Metrics::new()),
        )
        .await
        .unwrap();
        stores.wait_until_ready().await;
        for t in tasks {
            t.abort();
        }
        stores.snapshot().unwrap()
    }
    let snap = watched(&kata_cluster(true)).await;
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    assert_eq!(planned(&snap), vec![("c3-4".to_string(), 3000); 2]);

    let fake = kata_cluster(true);
    fake.fail("GET", "/runtimeclasses", 403, 1);
    let snap = watched(&fake).await;
    assert_eq!(snap.warnings.len(), 1, "{:?}", snap.warnings);
    assert!(
        snap.warnings[0]
            .starts_with("workload cluster: list runtimeclasses.node.k8s.io: forbidden")
            && snap.warnings[0].ends_with(
                "RuntimeClass overhead is not added to pods and DaemonSets without spec.overhead"
            ),
        "{:?}",
        snap.warnings
    );
    assert_eq!(planned(&snap), vec![("c3-2".to_string(), 1000); 2]);
}
