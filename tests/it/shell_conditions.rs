//! NodeClaim conditions against the in-memory API: `run --once` brings every condition to the
//! claim's current generation (core `nodeclaim/lifecycle`), and reports a Node that does not
//! match its claim (`ConsistentStateFound`, core `nodeclaim/consistency`).

use crate::common;

use common::FakeApi;
use karpenter_capi::cli::OutputFormat;
use karpenter_capi::cmd::run::once;
use karpenter_capi::controller::Config;
use karpenter_capi::kube::list::Clients;
use karpenter_capi::render::Printer;
use karpenter_capi_testkit::World;
use serde_json::{Value, json};

/// One pass of `run --once` (not a dry run); the plan's JSON.
pub(crate) async fn pass(fake: &FakeApi) -> Value {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    struct W(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for W {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(W(buf.clone())));
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
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
    let out = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
    serde_json::from_str(&out).unwrap_or(Value::Null)
}

fn claim(fake: &FakeApi) -> Value {
    fake.get("karpenter.sh", "nodeclaims", "", "c-1").unwrap()
}

/// `(type, observedGeneration, lastTransitionTime)` of each condition of the claim.
fn generations(claim: &Value) -> Vec<(String, Value, Value)> {
    claim["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_string(),
                c["observedGeneration"].clone(),
                c["lastTransitionTime"].clone(),
            )
        })
        .collect()
}

/// One initialized claim `c-1` whose conditions were written at generation 1.
fn seeded() -> FakeApi {
    let world = World::new("WhenEmpty")
        .md(3, 1)
        .machine(3, 1, true, true)
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["generation"] = json!(1);
            let conditions = c["status"]["conditions"].as_array_mut().unwrap();
            conditions.push(json!({"type": "Ready", "status": "True", "reason": "Ready"}));
            for cond in conditions {
                cond["observedGeneration"] = json!(1);
                cond["lastTransitionTime"] = json!("2026-11-30T09:00:00Z");
            }
        });
    let fake = FakeApi::new();
    fake.seed_world(&world);
    fake
}

/// Core `nodeclaim/lifecycle/suite_test.go` (L-SUITE-004): a spec change after every condition
/// is True bumps the generation; the next pass brings every condition's observedGeneration to
/// it and keeps each lastTransitionTime; the pass after writes nothing.
#[tokio::test]
async fn a_spec_change_brings_every_condition_to_the_new_generation() {
    let fake = seeded();
    pass(&fake).await;
    let before = claim(&fake);
    assert_eq!(before["metadata"]["generation"], 1);
    let stale: Vec<String> = generations(&before)
        .into_iter()
        .filter(|(t, g, _)| g != &json!(1) && t != "Consolidatable" && t != "Drifted")
        .map(|(t, _, _)| t)
        .collect();
    assert_eq!(stale, Vec::<String>::new(), "all at generation 1 first");

    // A user adds a taint to the claim's spec: generation 2.
    fake.mutate("karpenter.sh", "nodeclaims", "", "c-1", |c| {
        c["spec"]["taints"] = json!([{"key": "test", "value": "value", "effect": "NoSchedule"}]);
        c["metadata"]["generation"] = json!(2);
    });
    pass(&fake).await;
    let after = claim(&fake);
    for (t, g, ltt) in generations(&after) {
        assert_eq!(g, json!(2), "{t} at the new generation");
        if ["Launched", "Registered", "Initialized", "Ready"].contains(&t.as_str()) {
            assert_eq!(ltt, json!("2026-11-30T09:00:00Z"), "{t} did not transition");
        }
    }
    let ready = after["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert_eq!(
        (&ready["status"], &ready["reason"]),
        (&json!("True"), &json!("Ready"))
    );

    fake.clear_log();
    pass(&fake).await;
    assert_eq!(fake.writes(), Vec::<String>::new(), "converged");
}

/// Core `nodeclaim/lifecycle/suite_test.go` (L-SUITE-003): deleting the claim bumps its
/// generation; while it finalizes, its conditions follow.
#[tokio::test]
async fn a_finalizing_claims_conditions_follow_its_generation() {
    let fake = seeded();
    fake.mutate("karpenter.sh", "nodeclaims", "", "c-1", |c| {
        c["metadata"]["deletionTimestamp"] = json!(common::now_stamp());
        c["metadata"]["generation"] = json!(2);
    });
    pass(&fake).await;
    let after = claim(&fake);
    for (t, g, _) in generations(&after) {
        assert_eq!(g, json!(2), "{t} at the new generation");
    }
    assert!(
        generations(&after).iter().any(|(t, _, _)| t == "Launched"),
        "{after}"
    );
}
