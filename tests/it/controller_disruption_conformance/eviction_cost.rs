//! Eviction cost and the savings-ratio order of consolidation: each pod's eviction cost (its
//! `controller.kubernetes.io/pod-deletion-cost` and priority, exact in units of 2^-27), and
//! which underutilized node consolidation takes first when the budget allows one: the highest
//! price per unit of disruption (Karpenter's `SavingsRatio`), not the fewest pods.

use karpenter_capi::model::snapshot::EVICTION_COST_ONE;

use super::*;

/// The eviction cost of a pod `default/p` with `extra` set at JSON pointers.
fn cost_of(extra: &[(&str, Value)]) -> i64 {
    let w = World::new("WhenEmptyOrUnderutilized").add(pod_on("p", 1, "1", extra));
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    let p = s
        .pods
        .iter()
        .find(|p| p.demand.name == "p")
        .expect("pod p loaded");
    p.eviction_cost()
}

fn deletion_cost(v: &str) -> (&'static str, Value) {
    (
        "/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost",
        json!(v),
    )
}

fn priority(v: i64) -> (&'static str, Value) {
    ("/spec/priority", json!(v))
}

/// c-8 nodes `node-1..`, one per entry, each with one 1-CPU pod `p<i>` carrying the entry's
/// extras; budget one node, so only single-node consolidation runs and takes the first
/// candidate that saves (every one does: its pod fits on any other node).
fn one_pod_each(pods: &[&[(&str, Value)]]) -> World {
    let mut w = underutilized("1").md(8, pods.len() as i64);
    for (k, extra) in pods.iter().enumerate() {
        let i = k + 1;
        w = w
            .machine(8, i, true, true)
            .add(pod_on(&format!("p{i}"), i, "1", extra));
    }
    w
}

/// The nodes the plan of `w` takes (for being underutilized).
fn taken(w: &World) -> Vec<String> {
    let p = plan_of(w);
    tainted_nodes(&p)
        .into_iter()
        .map(|(n, r)| {
            assert_eq!(r, "Underutilized", "{n}");
            n.to_string()
        })
        .collect()
}

/// D-SUITE-013 (`suite_test.go` Pod Eviction Cost "should have a standard disruptionCost for
/// a pod with no priority or disruptionCost specified"): a plain pod costs exactly 1; of two
/// equally priced nodes the one with fewer plain pods (disruption 1 + 1 against 1 + 2) goes
/// first, whatever the names say.
#[test]
fn a_plain_pod_costs_one() {
    assert_eq!(cost_of(&[]), EVICTION_COST_ONE);
    let w = one_pod_each(&[&[], &[]]).add(pod_on("q1", 1, "1", &[]));
    assert_eq!(taken(&w), vec!["node-2"]);
}

/// D-SUITE-014 (`suite_test.go` Pod Eviction Cost "should have a higher disruptionCost for a
/// pod with a positive deletion disruptionCost"): deletion cost 100 adds 100/2^27; a deletion
/// cost of 2^27 doubles the pod's cost, so its node goes after a plain one.
#[test]
fn a_positive_deletion_cost_raises_the_eviction_cost() {
    assert_eq!(cost_of(&[deletion_cost("100")]), EVICTION_COST_ONE + 100);
    assert_eq!(
        cost_of(&[deletion_cost("134217728")]),
        2 * EVICTION_COST_ONE
    );
    let w = one_pod_each(&[&[deletion_cost("134217728")], &[]]);
    assert_eq!(taken(&w), vec!["node-2"]);
    // The control: without it, the name decides the tie.
    assert_eq!(taken(&one_pod_each(&[&[], &[]])), vec!["node-1"]);
}

/// D-SUITE-015 (`suite_test.go` Pod Eviction Cost "should have a lower disruptionCost for a pod
/// with a positive deletion disruptionCost", a negative one in fact): deletion cost -100
/// subtracts 100/2^27, and that node's ratio is the better one; a cost that goes below zero
/// counts as zero in its node's sum (core `computeRescheduleDisruptionCost`).
#[test]
fn a_negative_deletion_cost_lowers_the_eviction_cost() {
    assert_eq!(cost_of(&[deletion_cost("-100")]), EVICTION_COST_ONE - 100);
    // The floor of the clamp: -10.
    assert_eq!(
        cost_of(&[deletion_cost("-2147483647")]),
        -10 * EVICTION_COST_ONE
    );
    let w = one_pod_each(&[&[], &[deletion_cost("-100")]]);
    assert_eq!(taken(&w), vec!["node-2"]);
    // A pod costing below zero weighs like none: node-2 with it and a plain pod ties node-1
    // with one plain pod on ratio, and goes second on its pod count.
    let w = one_pod_each(&[&[], &[deletion_cost("-2147483647")]]).add(pod_on("q2", 2, "1", &[]));
    assert_eq!(taken(&w), vec!["node-1"]);
}

/// D-SUITE-016 (`suite_test.go` Pod Eviction Cost "should have higher costs for higher deletion
/// costs"): 101 > 100 > 99, apart by 2^-27 each, which the exact order tells apart: of three
/// nodes the one whose pod has 99 goes first.
#[test]
fn eviction_cost_grows_with_the_deletion_cost() {
    let (a, b, c) = (
        cost_of(&[deletion_cost("101")]),
        cost_of(&[deletion_cost("100")]),
        cost_of(&[deletion_cost("99")]),
    );
    assert!(a > b && b > c, "{a} {b} {c}");
    assert_eq!((a - b, b - c), (1, 1));
    let w = one_pod_each(&[
        &[deletion_cost("101")],
        &[deletion_cost("100")],
        &[deletion_cost("99")],
    ]);
    assert_eq!(taken(&w), vec!["node-3"]);
    // Not a number: ignored, as Karpenter ignores it (it logs the parse error).
    assert_eq!(cost_of(&[deletion_cost("lots")]), EVICTION_COST_ONE);
    // A float is read and rounded to the nearest unit.
    assert_eq!(cost_of(&[deletion_cost("1e3")]), EVICTION_COST_ONE + 1000);
}

/// D-SUITE-017 (`suite_test.go` Pod Eviction Cost "should have a higher disruptionCost for a
/// pod with a higher priority"): priority 1 adds 1/2^25 (4 units); the system-critical
/// priority 2000001000 is clamped at 10. The higher-priority pod's node goes after.
#[test]
fn a_higher_priority_raises_the_eviction_cost() {
    assert_eq!(cost_of(&[priority(1)]), EVICTION_COST_ONE + 4);
    assert_eq!(cost_of(&[priority(2_000_001_000)]), 10 * EVICTION_COST_ONE);
    let w = one_pod_each(&[&[priority(1)], &[]]);
    assert_eq!(taken(&w), vec!["node-2"]);
}

/// D-SUITE-018 (`suite_test.go` Pod Eviction Cost "should have a lower disruptionCost for a
/// pod with a lower priority"): priority -1 subtracts 4 units, and its node goes first.
#[test]
fn a_lower_priority_lowers_the_eviction_cost() {
    assert_eq!(cost_of(&[priority(-1)]), EVICTION_COST_ONE - 4);
    assert_eq!(
        cost_of(&[priority(-1), deletion_cost("100")]),
        EVICTION_COST_ONE + 96
    );
    let w = one_pod_each(&[&[], &[priority(-1)]]);
    assert_eq!(taken(&w), vec!["node-2"]);
}

/// D-CONS-095 (`consolidation_test.go` Node Lifetime Consideration "should consolidate the node
/// with best savings ratio first"): two equally priced nodes, the older with two pods and the
/// younger with one: the younger (disruption 2 against 3) goes. Karpenter's lifetime factor
/// scales only its `DisruptionCost`, which no longer orders consolidation.
#[test]
fn the_best_savings_ratio_goes_first_whatever_the_age() {
    let w = one_pod_each(&[&[], &[]])
        .add(pod_on("q1", 1, "1", &[]))
        .with("NodeClaim", "c-2", |c| {
            c["metadata"]["creationTimestamp"] = json!(ago(60));
        });
    assert_eq!(taken(&w), vec!["node-2"]);
}

/// D-SINGLE-001 (`singlenodeconsolidation_test.go` Candidate Shuffling "should sort candidates
/// by savings ratio descending"): a c-4 with one pod (0.1/h over 2) and a c-16 with two (0.4/h
/// over 3): the c-16 goes first though it has more pods (the order before was fewest pods
/// first, which took the c-4).
#[test]
fn single_node_consolidation_tries_the_best_ratio_first() {
    let w = underutilized("1")
        .md(4, 1)
        .md(16, 1)
        .machine(4, 1, true, true)
        .machine(16, 2, true, true)
        .add(pod_on("p1", 1, "1", &[]))
        .add(pod_on("p2", 2, "1", &[]))
        .add(pod_on("q2", 2, "1", &[]));
    assert_eq!(taken(&w), vec!["node-2"]);
}

/// D-SINGLE-003 (`singlenodeconsolidation_test.go` Candidate Shuffling "should sort candidates
/// by savings ratio with different disruption costs"): three c-8 with one pod each, of
/// priority 10^9 (cost clamped to 10: disruption 11), deletion cost 2^29 (5: disruption 6) and
/// plain (disruption 2): the plain one goes, then (it kept) the deletion-cost one, then the
/// high-priority one.
#[test]
fn single_node_order_follows_differing_disruption_costs() {
    let pods: [&[(&str, Value)]; 3] = [
        &[priority(1_000_000_000)],
        &[deletion_cost("536870912")],
        &[],
    ];
    let w = one_pod_each(&pods);
    assert_eq!(taken(&w), vec!["node-3"]);
    let keep = |w: World, i: usize| {
        w.with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("true");
        })
    };
    assert_eq!(taken(&keep(w.clone(), 3)), vec!["node-2"]);
    assert_eq!(taken(&keep(keep(w, 3), 2)), vec!["node-1"]);
}

/// D-BAL-040 (`balanced_scoring_test.go` sortCandidates "should sort non-Balanced candidates by
/// savings ratio"): a WhenEmptyOrUnderutilized multi-node decision takes the prefix of the best
/// ratios: of four nodes (a c-16 with two pods: 0.4/h over 3, a c-4 with one: 0.1 over 2, a
/// c-8 with one: 0.2 over 2, a c-16 with three: 0.4 over 4) and a budget of two, the
/// multi-node delete takes the two best ratios, node-1 and node-3, not the two with the fewest
/// pods (node-3 and node-2, the order before).
#[test]
fn multi_node_consolidation_takes_the_best_ratios_first() {
    let p = plan_of(&four_ratios(underutilized("2")));
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Underutilized"), ("node-3", "Underutilized")]
    );
}

/// D-SINGLE-002 (`singlenodeconsolidation_test.go` Candidate Shuffling "should prioritize
/// nodepools that timed out in previous runs"): no candidate starves behind the trial cap.
/// Twenty c-8 nodes each full with a 7-CPU pod (nothing to gain: best ratio, tried first) and a
/// twenty-first c-8 with three 1-CPU pods (a c-4 holds them): the first pass's 20 single-node
/// trials (`SINGLE_NODE_TRIALS`) reach only the full nodes and find nothing; the next pass on
/// the same cluster resumes at the 21st and replaces it. Upstream rotates NodePools a timed-out
/// pass did not reach; ours searches every pool every pass and rotates within one.
#[test]
fn single_node_trials_resume_where_the_last_pass_stopped() {
    use karpenter_capi::controller::{ConsolidationMemo, plan_with};
    let mut w = underutilized("100%").md(4, 0).md(8, 21);
    for i in 1..=20 {
        w = w
            .machine(8, i, true, true)
            .add(pod_on(&format!("big{i}"), i, "7", &[]));
    }
    w = w.machine(8, 21, true, true);
    for k in 1..=3 {
        w = w.add(pod_on(&format!("small{k}"), 21, "1", &[]));
    }
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    let now: Timestamp = world::NOW.parse().unwrap();
    let config = Config::default();
    let (first, memo) = plan_with(&s, now, &config, &ConsolidationMemo::default());
    assert_eq!(tainted_nodes(&first), Vec::<(&str, &str)>::new());
    assert!(created(&first).is_empty(), "{:?}", created(&first));
    let later = now.checked_add(SignedDuration::from_secs(10)).unwrap();
    let (second, _) = plan_with(&s, later, &config, &memo);
    assert_eq!(tainted_nodes(&second), vec![("node-21", "Underutilized")]);
    assert_eq!(
        created(&second),
        vec![(
            "c-4",
            vec!["default/small1", "default/small2", "default/small3"]
        )]
    );
    // Without the memo (a restart), the search starts over and finds nothing again.
    let (fresh, _) = plan_with(&s, later, &config, &ConsolidationMemo::default());
    assert_eq!(tainted_nodes(&fresh), Vec::<(&str, &str)>::new());
}
