//! Tests of the status a pass reports: conditions brought to the claim's generation.

use karpenter_capi_testkit::World;
use serde_json::json;

use crate::controller::action::Action;
use crate::controller::{Config, plan};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;

const NOW: &str = "2026-11-30T12:00:00Z";

/// One initialized claim `c-1` on `node-1`, its conditions written at generation 3 (Launched,
/// Registered and Initialized True, Ready True), the claim now at `generation`.
fn world(generation: i64, deleting: bool) -> Snapshot {
    let world = World::new("WhenEmpty")
        .md(3, 1)
        .machine(3, 1, true, true)
        // Not empty: no disruption this pass.
        .pod("web", Some(1), "500m")
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["generation"] = json!(generation);
            if deleting {
                c["metadata"]["deletionTimestamp"] = json!("2026-11-30T11:59:00Z");
            }
            let conditions = c["status"]["conditions"].as_array_mut().unwrap();
            conditions.push(json!({"type": "Ready", "status": "True", "reason": "Ready"}));
            for cond in conditions {
                cond["observedGeneration"] = json!(3);
                cond["lastTransitionTime"] = json!("2026-11-30T11:00:00Z");
            }
        })
        .with("Node", "node-1", |n| {
            if deleting {
                // The drain is under way (a later pass than the deletion's first).
                n["spec"]["taints"] =
                    json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
            }
        });
    snapshot_from_sources(&[Source {
        name: "w".into(),
        text: world.text(),
    }])
    .unwrap()
}

fn refreshed(snapshot: &Snapshot) -> Vec<(String, String, String)> {
    plan(snapshot, NOW.parse().unwrap(), &Config::default())
        .status
        .iter()
        .filter_map(|a| match a {
            Action::SetNodeClaimConditions {
                node_claim, set, ..
            } if node_claim == "c-1" => Some(
                set.iter()
                    .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone())),
            ),
            _ => None,
        })
        .flatten()
        // Drifted and Consolidatable are this pass's own judgements, not restatements.
        .filter(|(type_, _, _)| type_ != "Drifted" && type_ != "Consolidatable")
        .collect()
}

fn t(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.into(), status.into(), reason.into())
}

/// Core `nodeclaim/lifecycle/suite_test.go` (L-SUITE-004): once the claim's generation moves
/// past what its conditions observed, every condition is re-stated unchanged (the shell then
/// stamps the new generation); at the same generation nothing is written.
#[test]
fn conditions_written_at_an_older_generation_are_restated() {
    assert_eq!(
        refreshed(&world(3, false)),
        vec![],
        "already at generation 3"
    );
    assert_eq!(
        refreshed(&world(4, false)),
        vec![
            t("Launched", "True", ""),
            t("Registered", "True", ""),
            t("Initialized", "True", ""),
            t("Ready", "True", "Ready"),
        ]
    );
}

/// Core `nodeclaim/lifecycle/suite_test.go` (L-SUITE-003): the deletion bumps the generation,
/// and a finalizing claim's conditions follow it too, re-stated beside the `Drained` condition
/// its drain writes.
#[test]
fn a_deleting_claims_conditions_follow_its_generation() {
    let restated = refreshed(&world(5, true));
    assert!(
        restated.contains(&t("Launched", "True", ""))
            && restated.contains(&t("Registered", "True", ""))
            && restated.contains(&t("Ready", "True", "Ready")),
        "{restated:?}"
    );
}

/// A condition written with no generation (by a writer that records none) is not touched.
#[test]
fn conditions_without_a_recorded_generation_are_left_alone() {
    let mut snapshot = world(4, false);
    for c in &mut snapshot.nodeclaims[0].conditions {
        c.observed_generation = None;
    }
    assert_eq!(refreshed(&snapshot), vec![]);
}
