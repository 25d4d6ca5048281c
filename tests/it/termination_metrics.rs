//! Karpenter's termination metrics on the shell's side, against core v1.14.1
//! (`node/termination/metrics.go`, `terminator/metrics.go`): only evictions the API server
//! accepted count as drained pods, and the core's observations are exported under core's names
//! (the termination duration as a summary, the lifetime as a histogram with core's buckets).

use crate::controller_disruption::NOW;

use karpenter_capi::controller::termination_metrics::Observed;
use karpenter_capi::controller::{Action, Plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};

/// T-TERMINATOR-008, the shell's side: core counts a drained pod only once its eviction went
/// (`eviction.go`, after a 200). The executor applies an eviction a budget refuses (429) or
/// whose pod is gone (404), to be retried, but it evicted nothing: only the accepted one is
/// `done` and reaches the counters, and the exposition carries it under core's name.
#[tokio::test]
async fn only_accepted_evictions_count_as_drained() {
    use crate::common::FakeApi;
    use karpenter_capi::controller::karpenter_metrics::{applied, counts};
    use karpenter_capi::kube::apply::{ActionOutcome, Executor};
    use karpenter_capi::kube::list::Clients;
    use karpenter_capi::kube::metrics::Metrics;
    use karpenter_capi_testkit::World;
    use karpenter_capi_testkit::objects::{Node, Pod};

    let fake = FakeApi::new();
    fake.seed_world(
        &World::empty()
            .add(Node::new("node-1"))
            .add(Pod::new("default", "web-0").on("node-1").image("pause")),
    );
    let client = fake.client();
    let exec = Executor::new(Clients {
        workload: client.clone(),
        management: client,
    });
    let evict = |pod: &str| Action::EvictPod {
        target: format!("Pod/default/{pod}"),
        pod: format!("default/{pod}"),
        node: "node-1".into(),
        reason: "Expired".into(),
        uid: None,
    };
    let p = Plan {
        actions: vec![evict("web-0"), evict("ghost"), evict("web-0")],
        ..Plan::default()
    };
    fake.fail("POST", "/pods/web-0/eviction", 429, 1);
    let now: jiff::Timestamp = NOW.parse().unwrap();
    let results = exec.execute(&p, now).await;
    assert_eq!(
        results.iter().map(|r| &r.outcome).collect::<Vec<_>>(),
        vec![&ActionOutcome::Applied; 3]
    );
    let done: Vec<bool> = results.iter().map(|r| r.done()).collect();
    assert_eq!(done, vec![false, false, true]);
    // One pod drained, from a Node without a claim: core's empty reason.
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nspec: {providerID: 'openstack:///1'}\n".into(),
    }])
    .unwrap();
    let metrics = Metrics::new();
    metrics.karpenter.count(&counts(applied(&p, &done), &s));
    let text = metrics.render();
    let drained: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("karpenter_pods_drained"))
        .collect();
    assert_eq!(
        drained,
        vec![r#"karpenter_pods_drained_total{reason=""} 1"#]
    );
}

/// T-TERM-029/031, the shell's side: the observations the core makes are exported under core's
/// names, the termination duration as a summary (quantiles, sum, count), the lifetime as a
/// histogram with core's buckets.
#[test]
fn termination_observations_are_exported_under_cores_names() {
    use karpenter_capi::controller::termination_metrics::Observation;
    use karpenter_capi::kube::metrics::Metrics;
    let metrics = Metrics::new();
    let pool = || vec![("nodepool", "default".to_string())];
    metrics.karpenter.observe(&[
        Observation {
            metric: Observed::NodesTerminationDuration,
            labels: pool(),
            seconds: 90.0,
        },
        Observation {
            metric: Observed::NodesLifetimeDuration,
            labels: pool(),
            seconds: 7200.0,
        },
    ]);
    let text = metrics.render();
    let series = |name: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(name) && !l.contains("_bucket"))
            .collect()
    };
    assert_eq!(
        series("karpenter_nodes_termination_duration_seconds"),
        vec![
            r#"karpenter_nodes_termination_duration_seconds{nodepool="default",quantile="0.0"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds{nodepool="default",quantile="0.5"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds{nodepool="default",quantile="0.9"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds{nodepool="default",quantile="0.99"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds{nodepool="default",quantile="1.0"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds_sum{nodepool="default"} 90.0"#,
            r#"karpenter_nodes_termination_duration_seconds_count{nodepool="default"} 1"#,
        ]
    );
    assert!(text.contains("# TYPE karpenter_nodes_termination_duration_seconds summary\n"));
    assert!(text.contains("# TYPE karpenter_nodes_lifetime_duration_seconds histogram\n"));
    assert_eq!(
        series("karpenter_nodes_lifetime_duration_seconds"),
        vec![
            r#"karpenter_nodes_lifetime_duration_seconds_sum{nodepool="default"} 7200.0"#,
            r#"karpenter_nodes_lifetime_duration_seconds_count{nodepool="default"} 1"#,
        ]
    );
    // 7200 s falls in core's 2 h bucket, not the 1 h one.
    assert!(
        text.contains(
            r#"karpenter_nodes_lifetime_duration_seconds_bucket{le="3600.0",nodepool="default"} 0"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"karpenter_nodes_lifetime_duration_seconds_bucket{le="7200.0",nodepool="default"} 1"#
        ),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"));
}
