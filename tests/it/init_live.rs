//! `init`'s live parts against the in-memory API of `common`: server-side apply of the bundles,
//! `--from-cluster` defaults and cloning, minting the controller's kubeconfig with a TokenRequest.
//! The fake does not honour `dryRun` nor evaluate RBAC or admission; see the report for what is
//! therefore untested.

use crate::common;
use crate::support;

use std::borrow::Cow;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::render::{Templates, render};
use karpenter_capi::bundle::{infra, kubeconfig};
use karpenter_capi::error::ClusterRole as Target;
use karpenter_capi::kube::init as live;
use kube::api::Api;
use serde_json::{Value, json};

/// A namespaced custom resource the fake API server should serve, as a plain JSON object.
macro_rules! custom_resource {
    ($name:ident, $group:literal, $version:literal, $kind:literal, $plural:literal) => {
        #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
        struct $name {
            metadata: ObjectMeta,
            #[serde(flatten)]
            rest: serde_json::Map<String, Value>,
        }
        impl kube::Resource for $name {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                $group.into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

custom_resource!(
    MachineDeployment,
    "cluster.x-k8s.io",
    "v1beta2",
    "MachineDeployment",
    "machinedeployments"
);
custom_resource!(
    OpenStackMachineTemplate,
    "infrastructure.cluster.x-k8s.io",
    "v1beta1",
    "OpenStackMachineTemplate",
    "openstackmachinetemplates"
);

/// The in-memory API serving what `init` reads and applies: the common types, RBAC, Deployments,
/// the control plane and the OpenStack machine templates.
fn api() -> common::FakeApi {
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
    ]);
    types.extend(common::provider_types());
    common::FakeApi::with_types(types)
}

/// A client of the in-memory API holding the seed's management cluster.
fn seeded() -> kube::Client {
    let api = api();
    for o in seed_objects() {
        api.seed(o);
    }
    api.client()
}

/// The seed's management cluster: the Cluster, its control plane and worker MachineDeployment
/// with the OpenStackMachineTemplate it uses.
fn seed_objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "capi-ovh", "namespace": "capi-ovh"},
            "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "capi-ovh-cp"},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackCluster", "name": "capi-ovh"}}}),
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane", "metadata": {"name": "capi-ovh-cp", "namespace": "capi-ovh"},
            "spec": {"version": "v1.36.1", "replicas": 3}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "capi-ovh-md-0", "namespace": "capi-ovh", "labels": {"cluster.x-k8s.io/cluster-name": "capi-ovh"}},
            "spec": {"clusterName": "capi-ovh", "template": {"spec": {"clusterName": "capi-ovh",
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "capi-ovh-md-0"}}}}}),
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackMachineTemplate",
            "metadata": {"name": "capi-ovh-md-0", "namespace": "capi-ovh"},
            "spec": {"template": {"spec": {"flavor": "b3-8", "image": {"filter": {"name": "ubuntu-2404-noble"}},
                "identityRef": {"cloudName": "ovh", "name": "capi-ovh-cloud-config", "type": "Secret"}, "configDrive": true}}}}),
    ]
}

#[tokio::test]
async fn from_cluster_reads_version_provider_and_template_to_clone() {
    let client = seeded();
    let d = live::read_defaults(&client, "capi-ovh", None, None, None)
        .await
        .unwrap();
    assert_eq!(d.cluster_name.as_deref(), Some("capi-ovh"));
    assert_eq!(d.kubernetes_version.as_deref(), Some("v1.36.1"));
    assert_eq!(d.capi_version, Some(CapiVersion::V1beta2));
    assert_eq!(d.infra.map(|k| k.kind), Some("OpenStackMachineTemplate"));
    let source = d.clone.clone().unwrap();
    assert_eq!(source.machine_deployment, "capi-ovh-md-0");
    assert_eq!(source.infrastructure.name, "capi-ovh-md-0");
    assert_eq!(source.infrastructure.spec["flavor"], "b3-8");
    // The worker MachineDeployment here names no bootstrap: init generates one.
    assert_eq!(source.bootstrap, None);

    // Cloned per flavor: only the flavor changes, identityRef and configDrive are kept.
    let mut inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    inp.machine_image = None;
    inp.clone_from = d.clone;
    let bundle = render(&inp, &Templates::default()).unwrap();
    let c38 = bundle
        .management
        .iter()
        .find(|d| d.name == "capi-ovh-karpenter-c3-8" && d.kind == "OpenStackMachineTemplate")
        .unwrap();
    assert_eq!(
        c38.value["spec"]["template"]["spec"],
        json!({"flavor": "c3-8", "image": {"filter": {"name": "ubuntu-2404-noble"}},
               "identityRef": {"cloudName": "ovh", "name": "capi-ovh-cloud-config", "type": "Secret"}, "configDrive": true})
    );
    assert_eq!(
        c38.value["metadata"]["annotations"]["karpenter-capi/cloned-from"],
        "capi-ovh-md-0"
    );
    // And the clone still validates against the CAPO CRD.
    let schema = support::crd_schema(&support::crds(), &c38.api_version, &c38.kind).unwrap();
    assert_eq!(support::validate_crd(&schema, c38), Vec::<String>::new());
}

#[tokio::test]
async fn from_cluster_errors_name_what_is_missing() {
    let client = seeded();
    let err = live::read_defaults(&client, "capi-ovh", Some("other"), None, None)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "management cluster: get clusters.cluster.x-k8s.io/other in namespace capi-ovh: not found\n  hint: clusters in capi-ovh: capi-ovh"
    );
    let kind = infra::find("openstack").unwrap();
    let err = live::read_defaults(
        &client,
        "capi-ovh",
        Some("capi-ovh"),
        Some("missing-template"),
        Some(kind),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("management cluster: get openstackmachinetemplates.infrastructure.cluster.x-k8s.io/missing-template in namespace capi-ovh: "),
        "{err}"
    );
    let empty = api().client();
    let err = live::read_defaults(&empty, "capi-ovh", None, None, None)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--cluster-name is required: namespace capi-ovh has 0 clusters ()"
    );
}

#[tokio::test]
async fn apply_uses_server_side_apply_with_our_field_manager() {
    let fake = api();
    let client = fake.client();
    let mut inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    inp.separate_management = true;
    inp.management_kubeconfig = Some(
        karpenter_capi::bundle::kubeconfig::ControllerCredential::from_kubeconfig(
            "apiVersion: v1\nkind: Config\n".to_string(),
        ),
    );
    let bundle = render(&inp, &Templates::default()).unwrap();

    let lines = live::apply(&client, Target::Management, &bundle.management, false)
        .await
        .unwrap();
    assert_eq!(
        lines[0],
        "management: serviceaccount/capi-ovh-karpenter-capi serverside-applied"
    );
    assert_eq!(lines.len(), bundle.management.len());
    // The workload bundle but its Namespace and Karpenter objects (applied in tests/it/rbac_authz.rs).
    let workload: Vec<_> = bundle
        .workload
        .iter()
        .filter(|d| !d.api_version.contains("karpenter") && d.kind != "Namespace")
        .cloned()
        .collect();
    live::apply(&client, Target::Workload, &workload, false)
        .await
        .unwrap();

    // Every write was a server-side apply (PATCH, apply-patch+yaml) by our field manager.
    let writes: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert_eq!(writes.len(), bundle.management.len() + workload.len());
    assert!(
        writes.iter().all(|r| r.method == "PATCH"
            && r.content_type.contains("apply-patch")
            && r.query.contains("fieldManager=karpenter-capi")),
        "{:?}",
        writes.iter().map(|r| r.line()).collect::<Vec<_>>()
    );

    let mds: Api<MachineDeployment> = Api::namespaced(client.clone(), "capi-ovh");
    let md = mds.get("capi-ovh-karpenter-c3-8").await.unwrap();
    assert_eq!(md.rest["spec"]["replicas"], 0);
    assert_eq!(
        md.metadata.labels.unwrap()["node.cluster.x-k8s.io/karpenter-member"],
        ""
    );
    let templates: Api<OpenStackMachineTemplate> = Api::namespaced(client.clone(), "capi-ovh");
    assert_eq!(
        templates
            .get("capi-ovh-karpenter-c3-16")
            .await
            .unwrap()
            .rest["spec"]["template"]["spec"]["flavor"],
        "c3-16"
    );
    let roles: Api<Role> = Api::namespaced(client.clone(), "capi-ovh");
    assert_eq!(
        roles
            .get("capi-ovh-karpenter-capi")
            .await
            .unwrap()
            .rules
            .unwrap()
            .len(),
        karpenter_capi::vocab::permissions::MANAGEMENT.len()
    );
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "capi-ovh");
    sas.get("capi-ovh-karpenter-capi").await.unwrap();
    let crs: Api<ClusterRole> = Api::all(client.clone());
    assert_eq!(
        crs.get("karpenter-capi")
            .await
            .unwrap()
            .rules
            .unwrap()
            .len(),
        karpenter_capi::vocab::permissions::WORKLOAD.len()
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "karpenter-capi");
    let d = deployments.get("karpenter-capi").await.unwrap();
    assert_eq!(
        d.spec.unwrap().template.spec.unwrap().containers[0]
            .image
            .as_deref(),
        Some("ghcr.io/example/kubectl-karpenter-capi:v0.1.0")
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "karpenter-capi");
    secrets
        .get("karpenter-capi-management-kubeconfig")
        .await
        .unwrap();

    // Applying again is idempotent.
    live::apply(&client, Target::Management, &bundle.management, false)
        .await
        .unwrap();
}

#[tokio::test]
async fn server_dry_run_sends_dry_run_all_on_every_write() {
    // `init --apply --dry-run=server` applies with `dry_run = true` (src/cmd/init.rs).
    let fake = api();
    let client = fake.client();
    let inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    let bundle = render(&inp, &Templates::default()).unwrap();
    let lines = live::apply(&client, Target::Management, &bundle.management, true)
        .await
        .unwrap();
    assert_eq!(lines.len(), bundle.management.len());
    assert!(
        lines.iter().all(|l| l.starts_with("management: ")
            && l.ends_with(" serverside-applied (server dry run)")),
        "{lines:?}"
    );
    let requests = fake.requests();
    let writes: Vec<_> = requests.iter().filter(|r| r.method != "GET").collect();
    assert_eq!(writes.len(), bundle.management.len());
    for w in &writes {
        let params: Vec<&str> = w.query.split('&').collect();
        assert!(params.contains(&"dryRun=All"), "{} ?{}", w.line(), w.query);
        assert!(
            params.contains(&"fieldManager=karpenter-capi"),
            "{} ?{}",
            w.line(),
            w.query
        );
        assert!(w.content_type.contains("apply-patch"), "{}", w.content_type);
    }
    // Reads are not dry-run requests, and a real apply sends no dryRun.
    assert!(
        requests
            .iter()
            .filter(|r| r.method == "GET")
            .all(|r| !r.query.contains("dryRun")),
    );
    let fake = api();
    live::apply(
        &fake.client(),
        Target::Management,
        &bundle.management,
        false,
    )
    .await
    .unwrap();
    assert!(fake.requests().iter().all(|r| !r.query.contains("dryRun")));
}

#[tokio::test]
async fn apply_failures_name_cluster_verb_and_object() {
    let fake = api();
    fake.fail("PATCH", "serviceaccounts/capi-ovh-karpenter-capi", 500, 10);
    let client = fake.client();
    let bundle = render(
        &support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS),
        &Templates::default(),
    )
    .unwrap();
    let err = live::apply(&client, Target::Management, &bundle.management, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("management cluster: apply serviceaccounts/capi-ovh-karpenter-capi in namespace capi-ovh: "), "{err}");
}

/// The in-memory API with the controller's management ServiceAccount applied.
fn with_service_account() -> common::FakeApi {
    let api = common::FakeApi::new();
    api.seed(json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "capi-ovh-karpenter-capi", "namespace": "capi-ovh"},
    }));
    api
}

#[tokio::test]
async fn mints_a_short_lived_kubeconfig_with_a_token_request() {
    let api = with_service_account();
    let before = jiff::Timestamp::now().as_second();
    let minted = live::request_token(
        &api.client(),
        "capi-ovh",
        "capi-ovh-karpenter-capi",
        30 * 24 * 3600,
    )
    .await
    .unwrap();
    // One TokenRequest on the subresource, asking for exactly the duration; nothing else.
    let requests = api.requests();
    assert_eq!(
        requests.iter().map(|r| r.line()).collect::<Vec<_>>(),
        vec!["POST /api/v1/namespaces/capi-ovh/serviceaccounts/capi-ovh-karpenter-capi/token"]
    );
    assert_eq!(requests[0].body["kind"], "TokenRequest");
    assert_eq!(requests[0].body["spec"]["expirationSeconds"], 2_592_000);
    // Exactly what the permission list for the identity running init names; the controller's
    // own Role never has it.
    let needed = karpenter_capi::vocab::permissions::INIT_TOKEN;
    assert_eq!(
        requests[0].rbac(),
        Some((
            needed[0].group.to_string(),
            needed[0].resource.to_string(),
            needed[0].verbs[0].to_string()
        ))
    );
    assert_eq!(needed.len(), 1);
    assert_eq!(needed[0].verbs.len(), 1);
    assert!(!karpenter_capi::vocab::permissions::allows(
        karpenter_capi::vocab::permissions::MANAGEMENT,
        "",
        "serviceaccounts/token",
        "create"
    ));
    let lifetime = minted.expires.as_second() - before;
    assert!((2_592_000..2_592_000 + 5).contains(&lifetime), "{lifetime}");
    // The token's own exp says the same as the answer.
    assert_eq!(
        kubeconfig::token_expiry(&minted.token),
        kubeconfig::TokenExpiry::At(minted.expires)
    );
    let text = kubeconfig::render(&kubeconfig::TokenKubeconfig {
        server: "https://mgmt.example:6443".to_string(),
        ca_base64: kubeconfig::pem_base64(&[b"DER".to_vec()]),
        token: minted.token.clone(),
        token_file: None,
        namespace: "capi-ovh".to_string(),
        user: "capi-ovh-karpenter-capi".to_string(),
    })
    .unwrap();
    assert_eq!(kubeconfig::kubeconfig_expiry(&text), Some(minted.expires));
    // kube itself can load it.
    let parsed = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let options = kube::config::KubeConfigOptions::default();
    let config = kube::Config::from_custom_kubeconfig(parsed, &options)
        .await
        .unwrap();
    assert_eq!(live::server_url(&config), "https://mgmt.example:6443");
    assert_eq!(config.default_namespace, "capi-ovh");
    assert_eq!(config.root_cert, Some(vec![b"DER".to_vec()]));
}

#[tokio::test]
async fn a_capped_token_reports_the_expiry_the_server_granted() {
    let api = with_service_account();
    api.cap_tokens(3600);
    let before = jiff::Timestamp::now().as_second();
    let minted = live::request_token(
        &api.client(),
        "capi-ovh",
        "capi-ovh-karpenter-capi",
        30 * 24 * 3600,
    )
    .await
    .unwrap();
    let lifetime = minted.expires.as_second() - before;
    assert!((3600..3605).contains(&lifetime), "{lifetime}");
}

#[tokio::test]
async fn token_errors_say_what_to_do() {
    let api = common::FakeApi::new();
    let err = live::request_token(&api.client(), "capi-ovh", "capi-ovh-karpenter-capi", 600)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "management cluster: create serviceaccounts/capi-ovh-karpenter-capi/token in namespace capi-ovh: "
        ),
        "{err}"
    );
    assert!(
        err.ends_with("hint: apply the management bundle of `kubectl karpenter-capi init` first (it creates the ServiceAccount)"),
        "{err}"
    );
    let api = with_service_account();
    api.fail("POST", "/token", 403, 1);
    let err = live::request_token(&api.client(), "capi-ovh", "capi-ovh-karpenter-capi", 600)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("hint: the identity running init needs `create` on `serviceaccounts/token` in namespace capi-ovh (the controller itself does not)"),
        "{err}"
    );
}

#[tokio::test]
async fn reapplying_keeps_the_replicas_the_controller_set() {
    let client = api().client();
    let bundle = render(
        &support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS),
        &Templates::default(),
    )
    .unwrap();
    live::apply(&client, Target::Management, &bundle.management, false)
        .await
        .unwrap();
    let mds: Api<MachineDeployment> = Api::namespaced(client.clone(), "capi-ovh");
    assert_eq!(
        mds.get("capi-ovh-karpenter-c3-8").await.unwrap().rest["spec"]["replicas"],
        0
    );
    // The controller scales c3-8 to 2 (as `run` does, through another field manager).
    let scale = json!({"spec": {"replicas": 2}});
    mds.patch(
        "capi-ovh-karpenter-c3-8",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&scale),
    )
    .await
    .unwrap();
    live::apply(&client, Target::Management, &bundle.management, false)
        .await
        .unwrap();
    let md = mds.get("capi-ovh-karpenter-c3-8").await.unwrap();
    assert_eq!(
        md.rest["spec"]["replicas"], 2,
        "re-running init must not scale nodes away"
    );
    assert_eq!(md.rest["spec"]["clusterName"], "capi-ovh");
    // A MachineDeployment created by this apply still starts at zero.
    assert_eq!(
        mds.get("capi-ovh-karpenter-c3-16").await.unwrap().rest["spec"]["replicas"],
        0
    );
}
