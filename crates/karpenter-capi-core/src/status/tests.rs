//! The status model on a small OVH cluster (`tests/fixtures/status/cluster.yaml`): node rows,
//! pool totals, claims in flight, pending reasons and the cost comparison, as exact numbers.

use super::*;
use crate::model::load::{Source, snapshot_from_sources};

fn cluster() -> (Snapshot, Timestamp) {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/status/cluster.yaml"
    ));
    let snapshot = snapshot_from_sources(&[Source {
        name: "cluster.yaml".to_string(),
        text: text.to_string(),
    }])
    .unwrap();
    (snapshot, "2026-11-30T10:30:00Z".parse().unwrap())
}

fn price(text: &str) -> Price {
    Price::parse(text).unwrap()
}

#[test]
fn nodes_are_grouped_by_pool_with_flavor_zone_age_pods_and_price() {
    let (s, now) = cluster();
    let st = build(&s, now, &Options::default());
    let rows: Vec<_> = st
        .nodes
        .iter()
        .map(|n| {
            (
                n.name.as_str(),
                n.node_pool.as_str(),
                n.instance_type.as_deref(),
                n.age_seconds,
                n.pods,
                n.requested.cpu_millis,
                n.allocatable.cpu_millis,
                n.price_per_hour,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "general-q9m4t",
                "general",
                Some("c3-4"),
                Some(4800),
                1,
                500,
                2000,
                Some(price("0.05"))
            ),
            (
                "general-x7k2p",
                "general",
                Some("c3-8"),
                Some(9000),
                3,
                3000,
                4000,
                Some(price("0.1"))
            ),
            (
                "large-h3v8n",
                "large",
                Some("c3-16"),
                Some(9900),
                2,
                7000,
                8000,
                Some(price("0.24"))
            ),
            (
                "capi-ovh-cp-abcde",
                UNMANAGED,
                Some("b3-8"),
                Some(88200),
                2,
                200,
                2000,
                None
            ),
        ]
    );
    assert_eq!(st.nodes[0].zone.as_deref(), Some("eu-west-gra-a"));
    assert!(st.nodes[0].unschedulable);
    let pools: Vec<(&str, usize, usize, i64, Price, usize)> = st
        .node_pools
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.nodes,
                p.pods,
                p.requested.cpu_millis,
                p.price_per_hour,
                p.in_flight,
            )
        })
        .collect();
    assert_eq!(
        pools,
        [
            ("general", 2, 4, 3500, price("0.15"), 2),
            ("large", 1, 2, 7000, price("0.24"), 0),
            (UNMANAGED, 1, 2, 200, Price(0), 0),
        ]
    );
}

#[test]
fn claims_in_flight_and_pending_reasons() {
    let (s, now) = cluster();
    let st = build(&s, now, &Options::default());
    let claims: Vec<(&str, ClaimPhase, Option<i64>)> = st
        .in_flight
        .iter()
        .map(|c| (c.name.as_str(), c.phase, c.age_seconds))
        .collect();
    assert_eq!(
        claims,
        [
            ("general-q9m4t", ClaimPhase::Draining, Some(4800)),
            ("general-b5r7w", ClaimPhase::Launching, Some(90)),
        ]
    );
    let pending: Vec<(&str, &str)> = st
        .pending
        .iter()
        .map(|p| (p.pod.as_str(), p.reason.as_str()))
        .collect();
    assert_eq!(
        pending,
        [
            ("batch/train-0", "Unschedulable"),
            ("shop/canary-0", "SchedulingGated"),
            ("shop/web-6b8f9c7d4-uvwxy", "WaitingForNodeClaim"),
        ]
    );
    assert_eq!(
        st.pending[2].reason,
        PendingReason::WaitingForNodeClaim {
            node_claim: "general-b5r7w".to_string()
        }
    );
    let PendingReason::Unschedulable { rejections } = &st.pending[0].reason else {
        panic!("{:?}", st.pending[0].reason);
    };
    let subjects: Vec<String> = rejections.iter().map(ToString::to_string).collect();
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    assert!(
        matches!(
            &rejections[2].unfit,
            crate::sched::Unfit::Insufficient { resource, need: 12000, free: 8000 } if resource == "cpu"
        ),
        "{rejections:?}"
    );
}

#[test]
fn the_cost_now_is_compared_with_each_strategy_from_scratch() {
    let (s, now) = cluster();
    let st = build(&s, now, &Options::default());
    assert_eq!(st.cost.current_per_hour, price("0.39"));
    assert_eq!(st.cost.unpriced_nodes, 1);
    // Three web pods, the cart, two reports, the pending web pod and the pod too big for any
    // flavor: the control plane's pods stay where they are.
    assert_eq!(st.cost.pods_planned, 8);
    let by: Vec<(&str, usize, Price, Price, usize)> = st
        .cost
        .strategies
        .iter()
        .map(|c| {
            (
                c.strategy.as_str(),
                c.nodes,
                c.price_per_hour,
                c.delta_per_hour,
                c.unschedulable,
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("cost", 2, price("0.34"), Price(-50_000_000), 1),
            ("karpenter-capi", 4, price("0.35"), Price(-40_000_000), 1),
            ("least-waste", 2, price("0.48"), price("0.09"), 1),
        ]
    );
    let skipped = build(
        &s,
        now,
        &Options {
            skip_comparison: true,
            ..Options::default()
        },
    );
    assert!(skipped.cost.strategies.is_empty());
    assert_eq!(skipped.cost.current_per_hour, price("0.39"));
}

#[test]
fn a_selector_narrows_the_nodes_and_pool_totals_but_not_the_comparison() {
    let (s, now) = cluster();
    let options = Options {
        selector: selector::parse("node.kubernetes.io/instance-type in (c3-8,c3-16)").unwrap(),
        ..Options::default()
    };
    let st = build(&s, now, &options);
    let names: Vec<&str> = st.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["general-x7k2p", "large-h3v8n"]);
    assert_eq!(st.node_pools[0].nodes, 1);
    assert_eq!(st.node_pools[0].price_per_hour, price("0.1"));
    assert_eq!(st.cost.current_per_hour, price("0.39"));
}

#[test]
fn the_same_cluster_later_is_the_same_state_and_a_new_pod_is_not() {
    let (s, now) = cluster();
    let first = build(&s, now, &Options::default());
    let later = build(
        &s,
        now + jiff::SignedDuration::from_secs(90),
        &Options::default(),
    );
    assert_ne!(first, later);
    assert!(first.same_state(&later));
    let mut more = s.clone();
    more.pods.truncate(more.pods.len() - 1);
    assert!(!first.same_state(&build(&more, now, &Options::default())));
}
