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
    let loaded = karpenter_capi::input::load_live(
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
        karpenter_capi::bundle::kubeconfig::base64(b)
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
    let kubeconfig = karpenter_capi::bundle::kubeconfig::render(
        &karpenter_capi::bundle::kubeconfig::TokenKubeconfig {
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
        "data": {"kubeconfig": karpenter_capi::bundle::kubeconfig::base64(kubeconfig.as_bytes())},
    }));
    // The token Secret an older init created, still there.
    cluster.seed(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "capi-ovh-karpenter-capi-token", "namespace": "capi-ovh",
            "annotations": {"kubernetes.io/service-account.name": "capi-ovh-karpenter-capi"}},
        "data": {"token": "ZXlK"},
    }));
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let mut loaded = karpenter_capi::input::load_live(
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
    let secrets = karpenter_capi::input::credential_secrets(
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
    use karpenter_capi::bundle::render::rules;
    use karpenter_capi::vocab::permissions::{LEADER_ELECTION, WORKLOAD};

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
    let loaded = karpenter_capi::input::load_live(
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

/// A cluster with Cluster API but without the NodePool and ClusterAPINodeClass CRDs, as on the
/// first day before `kubectl apply -k DIR/crds`: the healthy fixture minus the objects those CRDs
/// would hold, with RBAC making `kubernetes-admin` an admin for the access review.
fn without_karpenter_crds() -> FakeApi {
    let mut types = common::all_types();
    types.extend(common::authz::rbac_types());
    let cluster = FakeApi::with_types(types)
        .without("nodepools")
        .without("clusterapinodeclasses");
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/doctor/healthy.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for doc in text.split("\n---\n") {
        let v: serde_json::Value = serde_saphyr::from_str(doc).unwrap();
        let api = v["apiVersion"].as_str().unwrap_or("");
        if !api.starts_with("rbac.authorization.k8s.io")
            && v["kind"] != "NodePool"
            && v["kind"] != "ClusterAPINodeClass"
        {
            cluster.seed(v);
        }
    }
    cluster.seed(serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "admin"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}));
    cluster.seed(serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "kubernetes-admin"}]}));
    cluster
}

#[tokio::test]
async fn a_missing_crd_is_a_doctor_finding_not_an_abort() {
    let cluster = without_karpenter_crds();
    let client = cluster.client_as("kubernetes-admin");
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let loaded = karpenter_capi::input::load_live(&client, &client, "User/test", None, now, true)
        .await
        .unwrap();
    let names: Vec<(String, Vec<String>)> = loaded
        .missing_crds
        .iter()
        .map(|m| (m.resource.clone(), m.api_versions.clone()))
        .collect();
    assert_eq!(
        names,
        [
            (
                "nodepools.karpenter.sh".to_string(),
                vec!["karpenter.sh/v1".to_string()]
            ),
            (
                "clusterapinodeclasses.karpenter.cluster.x-k8s.io".to_string(),
                vec!["karpenter.cluster.x-k8s.io/v1alpha1".to_string()]
            ),
        ]
    );
    // Everything else was still listed and is judged as usual.
    assert_eq!(loaded.snapshot.nodeclaims.len(), 1);
    assert_eq!(loaded.snapshot.machine_deployments.len(), 1);
    let report = karpenter_capi::diagnose::crds::with_missing_crds(
        &loaded.missing_crds,
        diagnose::run(
            &loaded.snapshot,
            now,
            &Config::default(),
            AccessSource::RbacObjects,
        ),
    );
    assert!(report.has_errors());
    let first: Vec<(String, Severity, String, String)> = report
        .findings
        .iter()
        .take(2)
        .map(|f| {
            (
                f.cause.to_string(),
                f.severity,
                f.subject.clone(),
                f.remedy.clone(),
            )
        })
        .collect();
    let fix = "install Karpenter's karpenter.sh/v1 CRDs (NodePool, NodeClaim) on the workload cluster: `kubectl apply --server-side -k DIR/crds` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)";
    let fix_class = "install the ClusterAPINodeClass CRD (karpenter.cluster.x-k8s.io/v1alpha1) on the workload cluster: `kubectl apply --server-side -k DIR/crds` (DIR as written by `kubectl karpenter-capi init --output-dir DIR`)";
    assert_eq!(
        first,
        [
            (
                "CrdMissing".to_string(),
                Severity::Error,
                "CustomResourceDefinition/nodepools.karpenter.sh".to_string(),
                fix.to_string()
            ),
            (
                "CrdMissing".to_string(),
                Severity::Error,
                "CustomResourceDefinition/clusterapinodeclasses.karpenter.cluster.x-k8s.io"
                    .to_string(),
                fix_class.to_string()
            ),
        ]
    );
    let text = karpenter_capi::render::doctor::render_report(&report, false, false);
    assert!(
        text.contains("error   CustomResourceDefinition/nodepools.karpenter.sh  CrdMissing\n"),
        "{text}"
    );
    assert!(text.contains("not installed on the workload cluster (no API served for karpenter.sh/v1): the controller cannot list nodepools and stops every pass"), "{text}");

    // explain and simulate still stop on it: they cannot answer without the objects.
    let err = karpenter_capi::input::load_live(&client, &client, "User/test", None, now, false)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("workload cluster: list nodepools.karpenter.sh: the CRD nodepools.karpenter.sh is not installed"),
        "{err}"
    );
}

#[tokio::test]
async fn a_built_in_api_not_served_still_stops_doctor() {
    // Not a CRD: the address is not a Kubernetes API server, which no finding can work around.
    let cluster = FakeApi::new().without("pods");
    let now = "2026-11-30T10:30:00Z".parse().unwrap();
    let err = karpenter_capi::input::load_live(
        &cluster.client(),
        &cluster.client(),
        "User/test",
        None,
        now,
        true,
    )
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.starts_with(
            "workload cluster: list pods: the server does not serve the core API v1/pods (404)"
        ),
        "{err}"
    );
}
