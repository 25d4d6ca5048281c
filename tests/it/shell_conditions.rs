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
    // The first pass taints and starts the drain (its writes go first); the next brings the
    // conditions along with the drain's own.
    pass(&fake).await;
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

fn condition(claim: &Value, type_: &str) -> Value {
    claim["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
        .cloned()
        .unwrap_or(Value::Null)
}

/// A claim for 500m on `md-4` (4 CPU, 8G, 110 pods promised), its Node with `memory` capacity.
fn shaped(memory: &str) -> FakeApi {
    let world = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, true, true)
        .pod("web", Some(1), "500m")
        .with("NodeClaim", "c-1", |c| {
            c["spec"]["resources"] =
                json!({"requests": {"cpu": "500m", "memory": "1Gi", "pods": "2"}});
        })
        .with("Node", "node-1", |n| {
            n["status"]["capacity"]["memory"] = json!(memory);
        });
    let fake = FakeApi::new();
    fake.seed_world(&world);
    fake
}

fn warnings(fake: &FakeApi) -> Vec<(String, String, String)> {
    fake.all("", "events")
        .iter()
        .filter(|e| e["type"] == "Warning")
        .map(|e| {
            (
                e["involvedObject"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                e["reason"].as_str().unwrap_or("").to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Core `nodeclaim/consistency/suite_test.go` (N-CONSIST-001): a Node with what its flavor
/// promised sets `ConsistentStateFound` True on the claim, once.
#[tokio::test]
async fn a_node_of_the_promised_shape_is_consistent() {
    let fake = shaped("8G");
    pass(&fake).await;
    let c = condition(&claim(&fake), "ConsistentStateFound");
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&json!("True"), &json!("ConsistentStateFound"))
    );
    assert_eq!(warnings(&fake), vec![]);
    fake.clear_log();
    pass(&fake).await;
    assert_eq!(fake.writes(), Vec::<String>::new(), "converged");
}

/// Core `nodeclaim/consistency/suite_test.go` (N-CONSIST-003): a Node that came up with half
/// the promised memory sets the condition False and records core's Warning on the claim, in
/// core's words; the next pass repeats neither.
#[tokio::test]
async fn a_node_with_far_less_memory_than_promised_is_reported() {
    let fake = shaped("4G");
    pass(&fake).await;
    let c = condition(&claim(&fake), "ConsistentStateFound");
    let issue = "expected 8G of resource memory, but found 4G (50.0% of expected)";
    assert_eq!(
        (&c["status"], &c["reason"], &c["message"]),
        (
            &json!("False"),
            &json!("ConsistencyCheckFailed"),
            &json!(issue)
        )
    );
    assert_eq!(
        warnings(&fake),
        vec![(
            "c-1".to_string(),
            "FailedConsistencyCheck".to_string(),
            issue.to_string()
        )]
    );
    fake.clear_log();
    pass(&fake).await;
    assert_eq!(fake.writes(), Vec::<String>::new(), "reported once");
}
