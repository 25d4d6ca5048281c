//! Live access review against an in-memory API server: the SelfSubjectReview and
//! SelfSubjectRulesReview answers become an identity that the same checks as offline judge.

use crate::common::{self, FakeApi};
use karpenter_capi::controller::Config;
use karpenter_capi::diagnose::{self, AccessSource, Severity};
use karpenter_capi::error::ClusterRole;
use karpenter_capi::kube::access::review_identity;
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use serde_json::{Value, json};

/// An API server whose RBAC gives `username` exactly `rules` (a ClusterRole bound to it); the
/// in-memory API answers the SelfSubjectReview and SelfSubjectRulesReview from them.
fn api(username: &str, rules: Value) -> kube::Client {
    let mut types = common::all_types();
    types.extend(common::authz::rbac_types());
    let fake = FakeApi::with_types(types);
    let subject = match username.strip_prefix("system:serviceaccount:") {
        Some(rest) => {
            let (ns, name) = rest.split_once(':').unwrap();
            json!({"kind": "ServiceAccount", "namespace": ns, "name": name})
        }
        None => json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": username}),
    };
    fake.seed(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "under-test"}, "rules": rules}),
    );
    fake.seed(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "under-test"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "under-test"},
        "subjects": [subject]}));
    fake.client_as(username)
}

fn snapshot() -> karpenter_capi::model::Snapshot {
    let path = format!(
        "{}/tests/fixtures/doctor/healthy.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    snapshot_from_sources(&[Source { name: path, text }]).unwrap()
}

async fn access_findings(username: &str, rules: Value) -> Vec<(String, Severity, String, String)> {
    let client = api(username, rules);
    let snap = snapshot();
    let namespaces = diagnose::access::capi_namespaces(&snap);
    assert_eq!(namespaces, vec!["capi-ovh"]);
    let identity = review_identity(
        &client,
        ClusterRole::Management,
        &namespaces,
        "User/(fallback)",
    )
    .await
    .unwrap();
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    diagnose::run(
        &snap,
        now,
        &Config::default(),
        AccessSource::Reviewed(&identity),
    )
    .findings
    .into_iter()
    .filter(|f| f.area == diagnose::Area::Access)
    .map(|f| (f.cause.to_string(), f.severity, f.subject, f.message))
    .collect()
}

#[tokio::test]
async fn cluster_admin_credentials_are_over_privileged() {
    let found = access_findings(
        "kubernetes-admin",
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
    )
    .await;
    assert_eq!(
        found,
        vec![(
            "OverPrivilegedManagementAccess".to_string(),
            Severity::Warning,
            "User/kubernetes-admin".to_string(),
            "can do more than the autoscaler needs: wildcard [*] on * (*) via SelfSubjectRulesReview".to_string()
        )]
    );
}

#[tokio::test]
async fn exact_rules_are_ok_and_missing_ones_are_named() {
    let exact = json!([
        {"verbs": ["list", "watch"], "apiGroups": ["cluster.x-k8s.io"], "resources": ["machinedeployments", "machinesets", "clusters"]},
        {"verbs": ["list", "watch", "patch"], "apiGroups": ["cluster.x-k8s.io"], "resources": ["machines"]},
        {"verbs": ["patch"], "apiGroups": ["cluster.x-k8s.io"], "resources": ["machinedeployments/scale"]},
        {"verbs": ["list", "watch"], "apiGroups": ["bootstrap.cluster.x-k8s.io"], "resources": ["kubeadmconfigtemplates"]},
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"]}
    ]);
    let found = access_findings("system:serviceaccount:karpenter:karpenter", exact).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1, found[0].2.as_str()),
        (
            "ManagementAccessOk",
            Severity::Ok,
            "ServiceAccount/karpenter/karpenter"
        )
    );

    let read_only = json!([{"verbs": ["get", "list", "watch"], "apiGroups": ["cluster.x-k8s.io"], "resources": ["machinedeployments", "machines", "machinesets", "clusters"]},
        {"verbs": ["get", "list", "watch"], "apiGroups": ["bootstrap.cluster.x-k8s.io"], "resources": ["kubeadmconfigtemplates"]}]);
    let found = access_findings("karpenter-mgmt", read_only).await;
    assert_eq!(
        found,
        vec![(
            "InsufficientManagementAccess".to_string(),
            Severity::Error,
            "User/karpenter-mgmt".to_string(),
            "cannot do what the autoscaler needs: lacks [patch] on machinedeployments/scale (cluster.x-k8s.io) in capi-ovh; [patch] on machines (cluster.x-k8s.io) in capi-ovh".to_string()
        ), (
            // `run` lists and watches; it never gets one object: reads beyond the list are excess too.
            "OverPrivilegedManagementAccess".to_string(),
            Severity::Warning,
            "User/karpenter-mgmt".to_string(),
            "can do more than the autoscaler needs: rights the autoscaler never uses (get machinedeployments.cluster.x-k8s.io (read), \
             get machines.cluster.x-k8s.io (read), get machinesets.cluster.x-k8s.io (read), get clusters.cluster.x-k8s.io (read)) \
             via SelfSubjectRulesReview; rights the autoscaler never uses (get kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io (read)) \
             via SelfSubjectRulesReview".to_string()
        )]
    );
}
