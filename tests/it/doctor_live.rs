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
