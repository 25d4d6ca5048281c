//! `doctor` live: both clusters listed through the real shell (an in-memory API) and judged by
//! the same checks as a dump — the healthy setup stays healthy.

use crate::common;

use common::FakeApi;
use karpenter_capi::controller::Config;
use karpenter_capi::diagnose::{self, AccessSource, Severity};

#[tokio::test]
async fn live_doctor_on_an_in_memory_cluster_is_healthy() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/doctor/healthy.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let cluster = FakeApi::new();
    for doc in text.split("\n---\n") {
        let v: serde_json::Value = serde_saphyr::from_str(doc).unwrap();
        // RBAC is judged live through the access review, which this test leaves out.
        if !v["apiVersion"]
            .as_str()
            .unwrap_or("")
            .starts_with("rbac.authorization.k8s.io")
        {
            cluster.seed(v);
        }
    }
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let loaded = karpenter_capi::cmd::doctor::load_live(
        &cluster.client(),
        &cluster.client(),
        "User/test",
        None,
        now,
        false,
    )
    .await
    .unwrap();
    assert_eq!(loaded.snapshot.nodeclaims.len(), 1);
    assert_eq!(loaded.snapshot.machine_deployments.len(), 1);
    let report = diagnose::run(
        &loaded.snapshot,
        now,
        &Config::default(),
        AccessSource::RbacObjects,
    );
    let problems: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
        .map(|f| format!("{} {} {}: {}", f.cause, f.severity, f.subject, f.message))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.cause.as_str() == "NodeClaimInitialized")
    );
}

/// A JWT-shaped token expiring at `exp` (seconds); doctor reads it without verifying.
fn token_expiring(exp: i64) -> String {
    let url = |b: &[u8]| {
        karpenter_capi::setup::kubeconfig::base64(b)
            .trim_end_matches('=')
            .replace('+', "-")
            .replace('/', "_")
    };
    format!(
        "{}.{}.c2ln",
        url(br#"{"alg":"RS256"}"#),
        url(format!(r#"{{"exp":{exp}}}"#).as_bytes())
    )
}

#[tokio::test]
async fn live_doctor_warns_before_the_controller_token_expires_and_flags_token_secrets() {
    let cluster = FakeApi::new();
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/doctor/healthy.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for doc in text.split("\n---\n") {
        let v: serde_json::Value = serde_saphyr::from_str(doc).unwrap();
        if !v["apiVersion"]
            .as_str()
            .unwrap_or("")
            .starts_with("rbac.authorization.k8s.io")
        {
            cluster.seed(v);
        }
    }
    // What `init kubeconfig --secret` applied 27 days ago: a 30-day token, as the API returns it
    // (data, base64), expiring 2026-12-03T10:00:00Z.
    let kubeconfig = karpenter_capi::setup::kubeconfig::render(
        &karpenter_capi::setup::kubeconfig::TokenKubeconfig {
            server: "https://mgmt.example:6443".into(),
            ca_base64: None,
            token: token_expiring(1_796_292_000),
            token_file: None,
            namespace: "capi-ovh".into(),
            user: "capi-ovh-karpenter-capi".into(),
        },
    )
    .unwrap();
    cluster.seed(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "karpenter-capi-management-kubeconfig", "namespace": "karpenter-capi",
            "annotations": {"karpenter-capi.sh/token-expires": "2026-12-03T10:00:00Z"}},
        "data": {"kubeconfig": karpenter_capi::setup::kubeconfig::base64(kubeconfig.as_bytes())},
    }));
    // The token Secret an older init created, still there.
    cluster.seed(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "capi-ovh-karpenter-capi-token", "namespace": "capi-ovh",
            "annotations": {"kubernetes.io/service-account.name": "capi-ovh-karpenter-capi"}},
        "data": {"token": "ZXlK"},
    }));
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let mut loaded = karpenter_capi::cmd::doctor::load_live(
        &cluster.client(),
        &cluster.client(),
        "User/test",
        None,
        now,
        false,
    )
    .await
    .unwrap();
    cluster.clear_log();
    let secrets = karpenter_capi::cmd::doctor::credential_secrets(
        &cluster.client(),
        &cluster.client(),
        &loaded.snapshot,
    )
    .await;
    // One get per controller namespace (the fixture's controller pod runs in `karpenter`, and
    // init's default) and one filtered list: doctor reads no other Secret.
    assert_eq!(
        cluster
            .requests()
            .iter()
            .map(|r| format!("{} {}", r.line(), r.query))
            .collect::<Vec<_>>(),
        vec![
            "GET /api/v1/namespaces/karpenter/secrets/karpenter-capi-management-kubeconfig ",
            "GET /api/v1/namespaces/karpenter-capi/secrets/karpenter-capi-management-kubeconfig ",
            "GET /api/v1/namespaces/capi-ovh/secrets &fieldSelector=type%3Dkubernetes.io%2Fservice-account-token",
        ]
    );
    loaded.snapshot.objects.extend(secrets);
    let report = diagnose::run(
        &loaded.snapshot,
        now,
        &Config::default(),
        AccessSource::RbacObjects,
    );
    let problems: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
        .map(|f| {
            format!(
                "{} {} {}: {}\n  fix: {}",
                f.cause, f.severity, f.subject, f.message, f.remedy
            )
        })
        .collect();
    assert_eq!(
        problems,
        vec![
            "ManagementTokenExpiring warning Secret/karpenter-capi/karpenter-capi-management-kubeconfig: the controller's management token expires at 2026-12-03T10:00:00Z, in 71h30m\n  fix: rotate it: `kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret --controller-namespace karpenter-capi | kubectl apply -f -` (the controller picks the new token up within about two minutes)",
            "LongLivedToken warning Secret/capi-ovh/capi-ovh-karpenter-capi-token: a long-lived token Secret of ServiceAccount capi-ovh/capi-ovh-karpenter-capi: its token never expires, and whoever can read Secrets in capi-ovh can act as the autoscaler\n  fix: give the controller a short-lived token (`kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret | kubectl apply -f -`), then `kubectl delete secret -n capi-ovh capi-ovh-karpenter-capi-token`",
        ]
    );
}

/// `doctor` live reads the bindings of the controller's workload identity (and the roles they
/// name, nothing else) and judges that identity as it would in a dump: a right beyond the
/// generated ClusterRole is named, beside the reviewed management identity.
#[tokio::test]
async fn live_doctor_judges_the_workload_identity_from_its_bindings() {
    use karpenter_capi::kube::permissions::{LEADER_ELECTION, WORKLOAD};
    use karpenter_capi::setup::render::rules;

    let mut types = common::all_types();
    types.extend(common::authz::rbac_types());
    let cluster = FakeApi::with_types(types);
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/doctor/healthy.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for doc in text.split("\n---\n") {
        cluster.seed(serde_saphyr::from_str(doc).unwrap());
    }
    let mut workload_rules = rules(WORKLOAD);
    workload_rules.push(
        serde_json::json!({"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}),
    );
    for v in [
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karpenter-capi"}, "rules": workload_rules}),
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "karpenter-capi"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karpenter-capi"},
            "subjects": [{"kind": "ServiceAccount", "name": "karpenter-capi", "namespace": "karpenter-capi"}]}),
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "karpenter-capi-leader-election", "namespace": "karpenter-capi"},
            "rules": rules(LEADER_ELECTION)}),
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "karpenter-capi-leader-election", "namespace": "karpenter-capi"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "karpenter-capi-leader-election"},
            "subjects": [{"kind": "ServiceAccount", "name": "karpenter-capi", "namespace": "karpenter-capi"}]}),
        // Someone else's binding: not read.
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "viewer"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]}),
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "viewer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "viewer"},
            "subjects": [{"kind": "User", "name": "alice"}]}),
    ] {
        cluster.seed(v);
    }
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let loaded = karpenter_capi::cmd::doctor::load_live(
        &cluster.client(),
        &cluster.client_as("karpenter-mgmt"),
        "User/(fallback)",
        Some("capi-ovh"),
        now,
        true,
    )
    .await
    .unwrap();
    let read: Vec<String> = loaded
        .snapshot
        .objects
        .iter()
        .filter(|o| o.group() == "rbac.authorization.k8s.io")
        .map(|o| format!("{} {}", o.kind, o.name()))
        .collect();
    assert_eq!(
        read,
        vec![
            "ClusterRoleBinding karpenter-capi",
            "RoleBinding karpenter-capi-leader-election",
            "ClusterRole karpenter-capi",
            "Role karpenter-capi-leader-election",
        ]
    );
    let identity = loaded.identity.as_ref().unwrap();
    let report = diagnose::run(
        &loaded.snapshot,
        now,
        &Config::default(),
        AccessSource::Reviewed(identity),
    );
    let access: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.area == diagnose::Area::Access && f.cause.as_str().contains("Access"))
        .map(|f| format!("{} {} {}: {}", f.cause, f.severity, f.subject, f.message))
        .collect();
    assert_eq!(
        access,
        vec![
            "ManagementAccessOk ok User/karpenter-mgmt: has what the autoscaler needs in capi-ovh and nothing dangerous beyond it",
            "OverPrivilegedWorkloadAccess warning ServiceAccount/karpenter-capi/karpenter-capi: can do more than the autoscaler needs on the workload cluster: \
             rights the autoscaler never uses (list configmaps.core (read)) via ClusterRoleBinding karpenter-capi -> ClusterRole karpenter-capi",
        ]
    );
}
