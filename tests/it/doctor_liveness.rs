//! `doctor` judges NodeClaim launch and registration timeouts by the very clock the controller's
//! liveness pass reads (core v1.14.1 `nodeclaim/lifecycle/liveness.go`: from the Launched and
//! Registered conditions' last transitions): a claim doctor reports as timed out is exactly one
//! the controller deletes in the same snapshot at the same `now`.

use std::collections::BTreeSet;

use crate::controller_disruption::{NOW, ago, base};
use crate::controller_termination::{timed_out, young_claim};

use karpenter_capi::controller::{Config, plan};
use karpenter_capi::diagnose::{self, AccessSource, Severity};
use karpenter_capi::model::duration::GoDuration;
use karpenter_capi::model::load::{Source, snapshot_from_sources};

fn unknown(t: &str, secs: i64) -> String {
    format!(
        "{{type: {t}, status: Unknown, reason: AwaitingReconciliation, lastTransitionTime: '{}'}}",
        ago(secs)
    )
}

fn launched(secs: i64) -> String {
    format!(
        "{{type: Launched, status: 'True', lastTransitionTime: '{}'}}",
        ago(secs)
    )
}

/// Claims in several liveness states, all bound to no Machine yet or launched without a Node.
fn claims() -> String {
    [
        // Not launched, created 4 min ago, no conditions: the launch clock runs from creation.
        young_claim("fresh", 240, "{}"),
        // Not launched, created 6 min ago, no conditions: past the 5 min.
        young_claim("stale", 360, "{}"),
        // Created 20 min ago, its Launched condition (re)set 2 min ago: within the 5 min,
        // whatever its age.
        young_claim(
            "launch-reset",
            1200,
            &format!("{{conditions: [{}]}}", unknown("Launched", 120)),
        ),
        // Launched late (created 40 min ago, launched 10 min ago), Registered (re)set with the
        // launch: 5 min left of the 15 min registration clock.
        young_claim(
            "launched-late",
            2400,
            &format!(
                "{{providerID: 'openstack:///late', conditions: [{}, {}]}}",
                launched(600),
                unknown("Registered", 600)
            ),
        ),
        // Launched, no Registered condition: the registration clock runs from creation, 16 min.
        young_claim(
            "no-registered",
            960,
            &format!(
                "{{providerID: 'openstack:///noreg', conditions: [{}]}}",
                launched(900)
            ),
        ),
    ]
    .concat()
}

/// Severity and message per claim, from `doctor`'s checks at NOW.
fn doctor(text: &str, config: &Config) -> Vec<(String, Severity, String, String)> {
    // The offering-label findings of these bare claims are beside the point.
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    diagnose::run(&s, NOW.parse().unwrap(), config, AccessSource::RbacObjects)
        .findings
        .into_iter()
        .filter_map(|f| {
            let name = f.subject.strip_prefix("NodeClaim/")?.to_string();
            if f.cause.to_string() == "NodeClaimMissingOfferingLabels" {
                return None;
            }
            Some((name, f.severity, f.cause.to_string(), f.message))
        })
        .collect()
}

/// Names `doctor` reports past their liveness deadline, and names the controller deletes for it.
fn agree(text: &str, config: &Config) -> (BTreeSet<String>, BTreeSet<String>) {
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    let p = plan(&s, NOW.parse().unwrap(), config);
    let deleted = timed_out(&p)
        .into_iter()
        .map(|(n, _, _)| n.to_string())
        .collect();
    let reported = doctor(text, config)
        .into_iter()
        .filter(|(_, sev, _, m)| *sev == Severity::Error && m.contains(" timed out: "))
        .map(|(n, ..)| n)
        .collect();
    (reported, deleted)
}

#[test]
fn doctor_times_launch_and_registration_like_the_controller() {
    let text = format!("{}{}", base(0, ""), claims());
    let found = doctor(&text, &Config::default());
    // launched-late is 40 min old, yet within its registration clock: not timed out.
    assert_eq!(
        found
            .iter()
            .map(|(n, sev, c, m)| (n.as_str(), *sev, c.as_str(), m.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "fresh",
                Severity::Warning,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch in progress: timed 4m since creation (2026-11-30T09:56:00Z), 1m left of the 5m launch timeout",
            ),
            (
                "stale",
                Severity::Error,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch timed out: timed 6m since creation (2026-11-30T09:54:00Z), 1m past the 5m launch timeout: deleted or about to be",
            ),
            (
                "launch-reset",
                Severity::Warning,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch in progress: timed 2m since the Launched condition's last transition (2026-11-30T09:58:00Z), 3m left of the 5m launch timeout",
            ),
            (
                "launched-late",
                Severity::Warning,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); registration in progress: timed 10m since the Registered condition's last transition (2026-11-30T09:50:00Z), 5m left of the 15m registration timeout",
            ),
            (
                "no-registered",
                Severity::Error,
                "RegistrationTimeout",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); registration timed out: timed 16m since creation (2026-11-30T09:44:00Z), 1m past the 15m registration timeout: deleted or about to be",
            ),
        ]
    );
    let (reported, deleted) = agree(&text, &Config::default());
    assert_eq!(reported, deleted);
    assert_eq!(
        deleted,
        BTreeSet::from(["no-registered".to_string(), "stale".to_string()])
    );
}

#[test]
fn doctor_honours_a_custom_launch_timeout_like_the_controller() {
    let text = format!("{}{}", base(0, ""), claims());
    let config = Config {
        launch_timeout: GoDuration(60),
        registration_timeout: GoDuration(1800),
        ..Config::default()
    };
    let found = doctor(&text, &config);
    assert_eq!(
        found
            .iter()
            .map(|(n, sev, c, m)| (n.as_str(), *sev, c.as_str(), m.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "fresh",
                Severity::Error,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch timed out: timed 4m since creation (2026-11-30T09:56:00Z), 3m past the 1m launch timeout: deleted or about to be",
            ),
            (
                "stale",
                Severity::Error,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch timed out: timed 6m since creation (2026-11-30T09:54:00Z), 5m past the 1m launch timeout: deleted or about to be",
            ),
            (
                "launch-reset",
                Severity::Error,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); launch timed out: timed 2m since the Launched condition's last transition (2026-11-30T09:58:00Z), 1m past the 1m launch timeout: deleted or about to be",
            ),
            (
                "launched-late",
                Severity::Warning,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); registration in progress: timed 10m since the Registered condition's last transition (2026-11-30T09:50:00Z), 20m left of the 30m registration timeout",
            ),
            (
                "no-registered",
                Severity::Warning,
                "MachineNotFound",
                "no Machine is bound (no cluster.x-k8s.io/machine annotation, no Machine with its providerID); registration in progress: timed 16m since creation (2026-11-30T09:44:00Z), 14m left of the 30m registration timeout",
            ),
        ]
    );
    let (reported, deleted) = agree(&text, &config);
    assert_eq!(reported, deleted);
    assert_eq!(
        deleted,
        BTreeSet::from([
            "fresh".to_string(),
            "launch-reset".to_string(),
            "stale".to_string()
        ])
    );
}
