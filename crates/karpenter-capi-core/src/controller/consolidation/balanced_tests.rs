//! Balanced scoring, one test per case of Karpenter v1.14.1's `balanced_test.go`,
//! `balanced_scoring_test.go` and `balanced_adversarial_test.go` (their row ids in
//! docs/conformance.md named on each): the score of a move, the pool totals and the move
//! evaluator, in exact integers (prices in nano-units, disruption in units of 2^-27).

use std::collections::BTreeMap;

use karpenter_capi_testkit::objects::Pod;
use karpenter_capi_testkit::world::World;

use super::balanced::{
    BALANCED_K, Part, PoolTotals, Score, can_pass, evaluate_move, pool_totals, score_move,
};
use super::{Candidate, sort_candidates};
use crate::model::flavor::Price;
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::{EVICTION_COST_ONE, NodeIndex, Snapshot};

/// `x` per hour in nano-units.
fn usd(x: f64) -> i64 {
    (x * 1e9).round() as i64
}

/// A disruption cost of `x`.
fn d(x: i64) -> i64 {
    x * EVICTION_COST_ONE
}

fn totals(cost: f64, disruption: i64) -> PoolTotals {
    PoolTotals {
        cost: Price(usd(cost)),
        disruption: d(disruption),
    }
}

/// The RFC's example pool: ten nodes (eight at 4.84/day, two at 9.68) costing 58.08, 80 plain
/// pods: disruption 10 + 80.
fn rfc() -> PoolTotals {
    totals(58.08, 90)
}

fn score(savings: f64, disruption: i64, t: PoolTotals) -> Score {
    score_move(usd(savings), d(disruption), t, BALANCED_K)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// D-BAL-001: replacing an oversized node (9.68 by 2.42: saves 7.26) that moves three pods
/// (disruption 4) saves 12.5% of the pool for 4.4% of its disruption: score 2.8125.
#[test]
fn an_oversized_node_is_approved() {
    let s = score(7.26, 4, rfc());
    assert!(s.approved());
    assert!(
        close(s.savings_fraction(), 0.125),
        "{}",
        s.savings_fraction()
    );
    assert!(close(s.disruption_fraction(), 4.0 / 90.0));
    assert!(close(s.value(), 2.8125), "{}", s.value());
    assert!(close(s.threshold(), 0.5));
}

/// D-BAL-002: deleting a spare 4.84 node with four pods (disruption 5): score 1.5.
#[test]
fn a_spare_capacity_delete_is_approved() {
    let s = score(4.84, 5, rfc());
    assert!(s.approved());
    assert!(close(s.value(), 1.5), "{}", s.value());
}

/// D-BAL-003: saving 2.42 by moving eight pods (disruption 9): 4.2% against 10%, score
/// 0.4167, under one half.
#[test]
fn a_marginal_move_is_rejected() {
    let s = score(2.42, 9, rfc());
    assert!(!s.approved());
    assert!(close(s.value(), 2.42 / 58.08 / 0.1), "{}", s.value());
}

/// D-BAL-004: a well-packed node that saves nothing scores 0.
#[test]
fn a_zero_savings_move_is_rejected() {
    let s = score(0.0, 11, rfc());
    assert!(!s.approved());
    assert_eq!(s.value(), 0.0);
}

/// D-BAL-005: in a uniform pool (ten at 4.84: 48.40) the same replace saves 5% for 10%:
/// exactly the threshold, which the integer comparison approves (no float rounding below it).
#[test]
fn a_replace_in_a_uniform_pool_is_approved_at_the_threshold() {
    let s = score(2.42, 9, totals(48.40, 90));
    assert!(s.approved());
    assert!(close(s.value(), 0.5), "{}", s.value());
    // One nano-unit less saved is under it.
    assert!(!score_move(usd(2.42) - 1, d(9), totals(48.40, 90), BALANCED_K).approved());
}

/// D-BAL-006: the same saving (4.84) passes on a node of disruption 5 and fails on one of 32
/// when the pool's disruption is 117.
#[test]
fn disruption_cost_decides_between_equal_savings() {
    let t = totals(58.08, 117);
    let a = score(4.84, 5, t);
    let b = score(4.84, 32, t);
    assert!(a.approved() && !b.approved());
    assert!(close(a.value(), (4.84 / 58.08) / (5.0 / 117.0)));
    assert!(close(b.value(), (4.84 / 58.08) / (32.0 / 117.0)));
}

/// D-BAL-007: a pool ten times larger (580.80, disruption 900) scores the same move the same.
#[test]
fn the_score_is_scale_invariant() {
    let small = score(7.26, 4, rfc());
    let large = score(7.26, 4, totals(580.80, 900));
    assert!(small.approved() && large.approved());
    assert!(close(small.value(), 2.8125) && close(large.value(), 2.8125));
}

/// D-BAL-008 and D-BAL-011: a move that disrupts nothing and saves something scores
/// unbounded and is approved (no division by zero).
#[test]
fn zero_disruption_is_approved_with_an_unbounded_score() {
    let s = score(4.84, 0, rfc());
    assert!(s.approved());
    assert_eq!(s.value(), f64::INFINITY);
}

/// D-BAL-009: nothing saved and nothing disrupted: rejected.
#[test]
fn zero_savings_and_zero_disruption_are_rejected() {
    let s = score(0.0, 0, rfc());
    assert!(!s.approved());
    assert_eq!(s.value(), 0.0);
}

/// D-BAL-010: a pool that costs nothing normalizes nothing: every move is rejected (every
/// upstream-provider price is 0; ours come from the MachineDeployments' annotations).
#[test]
fn a_pool_costing_nothing_rejects_every_move() {
    let s = score(4.84, 5, totals(0.0, 90));
    assert!(!s.approved());
    assert_eq!((s.value(), s.savings_fraction()), (0.0, 0.0));
}

/// D-BAL-012, D-BAL-013, D-BAL-014: the marginal move (score 0.4167) fails at k = 2 (0.5) and
/// k = 1 (1.0), passes at k = 3 (0.333).
#[test]
fn the_threshold_follows_k() {
    let at = |k| score_move(usd(2.42), d(9), rfc(), k);
    assert!(!at(2).approved());
    assert!(at(3).approved());
    assert!(!at(1).approved());
    assert!(close(at(3).threshold(), 1.0 / 3.0));
}

/// D-BAL-015: moves proportionally the same in an on-demand pool (4.84 of 48.40) and a
/// cheaper one (1.45 of 14.50) score the same, both approved.
#[test]
fn proportionally_equal_moves_score_the_same_across_pools() {
    let a = score(4.84, 4, totals(48.40, 90));
    let b = score(1.45, 4, totals(14.50, 90));
    assert!(a.approved() && b.approved());
    assert!(close(a.value(), b.value()), "{} {}", a.value(), b.value());
    assert!(close(a.value(), 2.25));
}

/// The Balanced pool of `n` c-8 nodes (0.2/h each), each with one plain pod.
fn pool_world(n: usize) -> World {
    let mut w = World::new("Balanced").md(8, n as i64);
    for i in 1..=n {
        w = w.machine(8, i, true, true).add(
            Pod::new("default", &format!("p{i}"))
                .cpu("1")
                .on(&format!("node-{i}")),
        );
    }
    w
}

fn load(w: &World) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .expect("the world loads")
}

fn totals_of(w: &World) -> PoolTotals {
    let s = load(w);
    let nodes = NodeIndex::new(&s);
    pool_totals(&s, &nodes, "default")
}

/// D-BAL-019: the totals count every node of the pool (five at 0.2 with one pod each: cost 1.0,
/// disruption 5 x 2), candidates or not: a node kept by `do-not-disrupt` counts too.
#[test]
fn pool_totals_count_every_node() {
    let t = totals_of(&pool_world(5));
    assert_eq!(t, totals(1.0, 10));
    let kept = pool_world(5).with("Node", "node-3", |n| {
        n["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = serde_json::json!("true");
    });
    assert_eq!(totals_of(&kept), totals(1.0, 10));
}

/// D-BAL-020, D-BAL-027 and D-BAL-056: a claim whose flavor is unknown (its MachineDeployment
/// gone) prices at 0 but still adds its disruption.
#[test]
fn a_node_of_unknown_price_adds_disruption_only() {
    let w = pool_world(2)
        .md(4, 1)
        .machine(4, 3, true, true)
        .add(Pod::new("default", "p3").cpu("1").on("node-3"))
        .without("md-4");
    assert_eq!(totals_of(&w), totals(0.4, 6));
}

/// D-BAL-028: a known flavor adds its annotated price (0.2 per c-8).
#[test]
fn a_known_flavor_adds_its_price() {
    assert_eq!(totals_of(&pool_world(1)), totals(0.2, 2));
}

fn part(pool: &str, balanced: bool, price: f64, disruption: i64) -> Part<'_> {
    Part {
        pool,
        balanced,
        price: Price(usd(price)),
        disruption: d(disruption),
    }
}

/// D-BAL-021: a move that removes nothing is refused, with no scores.
#[test]
fn an_empty_move_is_rejected() {
    let t = BTreeMap::from([("pool-a".to_string(), totals(100.0, 50))]);
    let (ok, scores) = evaluate_move(&[], usd(1.0), &t, BALANCED_K);
    assert!(!ok);
    assert!(scores.is_empty());
}

/// D-BAL-022: a pool of another policy is not scored and holds nothing back.
#[test]
fn other_policies_are_not_scored() {
    let t = BTreeMap::from([("pool-n".to_string(), totals(24.2, 10))]);
    let parts = [
        part("pool-n", false, 4.84, 2),
        part("pool-n", false, 4.84, 2),
    ];
    let (ok, scores) = evaluate_move(&parts, usd(9.68), &t, BALANCED_K);
    assert!(ok);
    assert!(scores.is_empty());
}

/// D-BAL-023: a Balanced pool with no totals scores 0 and is refused.
#[test]
fn a_pool_without_totals_is_rejected() {
    let (ok, scores) = evaluate_move(
        &[part("pool-missing", true, 4.84, 2)],
        usd(4.84),
        &BTreeMap::new(),
        BALANCED_K,
    );
    assert!(!ok);
    let s = scores["pool-missing"];
    assert!(!s.approved());
    assert_eq!(s.value(), 0.0);
}

/// D-BAL-024 and D-BAL-058: deleting one of ten equal nodes saves 10% for 10%: score 1,
/// approved; in a one-node pool, its delete saves all for all: score 1 too.
#[test]
fn a_single_pool_delete_is_approved() {
    let t = BTreeMap::from([("pool-single".to_string(), totals(48.4, 20))]);
    let (ok, scores) = evaluate_move(
        &[part("pool-single", true, 4.84, 2)],
        usd(4.84),
        &t,
        BALANCED_K,
    );
    assert!(ok);
    assert!(close(scores["pool-single"].value(), 1.0));
    let one = BTreeMap::from([("solo".to_string(), totals(4.84, 2))]);
    let (ok, scores) = evaluate_move(&[part("solo", true, 4.84, 2)], usd(4.84), &one, BALANCED_K);
    assert!(ok);
    assert!(close(scores["solo"].value(), 1.0));
}

/// D-BAL-025: a move across a Balanced pool and another, each giving up a 4.84 node of five:
/// the Balanced pool is credited half the savings (its share of the removed price): 20% for
/// 20%, score 1; the other pool is not scored.
#[test]
fn savings_are_split_across_pools_by_price() {
    let t = BTreeMap::from([
        ("pool-balanced".to_string(), totals(24.2, 10)),
        ("pool-empty".to_string(), totals(24.2, 10)),
    ]);
    let parts = [
        part("pool-balanced", true, 4.84, 2),
        part("pool-empty", false, 4.84, 2),
    ];
    let (ok, scores) = evaluate_move(&parts, usd(9.68), &t, BALANCED_K);
    assert!(ok);
    assert_eq!(scores.len(), 1);
    let s = scores["pool-balanced"];
    assert_eq!(s.savings, usd(4.84));
    assert!(close(s.value(), 1.0));
}

/// D-BAL-026: every Balanced pool must approve. Pool A (ten 4.84 nodes, one pod each) approves
/// its share; pool B (two 1.0 nodes, one with 40 pods: disruption 41 of 43) is credited 1.0 of
/// its 2.0 for 95% of its disruption: 0.524, approved; with a threshold of k = 1 it refuses
/// (pool A, at exactly 1, still approves), and so the move is refused.
#[test]
fn every_balanced_pool_must_approve() {
    let t = BTreeMap::from([
        ("pool-a".to_string(), totals(48.4, 20)),
        ("pool-b".to_string(), totals(2.0, 43)),
    ]);
    let parts = [part("pool-a", true, 4.84, 2), part("pool-b", true, 1.0, 41)];
    let saved = usd(5.84);
    let (ok, scores) = evaluate_move(&parts, saved, &t, BALANCED_K);
    assert!(ok);
    assert!(
        close(scores["pool-b"].value(), 0.5 / (41.0 / 43.0)),
        "{}",
        scores["pool-b"].value()
    );
    let (ok, scores) = evaluate_move(&parts, saved, &t, 1);
    assert!(!ok);
    assert!(scores["pool-a"].approved() && !scores["pool-b"].approved());
}

fn candidate(node: &str, price: f64, disruption: i64, pods: usize) -> Candidate {
    Candidate {
        claim: node.to_string(),
        node: node.to_string(),
        price: Price(usd(price)),
        pods: (0..pods).collect(),
        disruption_cost: d(disruption),
    }
}

/// D-BAL-029: a candidate's savings ratio is its price over its disruption cost: 4.84 over 1
/// (no pods), over 4 (three plain pods: 1.21); an unknown price gives 0 and sorts last.
#[test]
fn a_candidates_ratio_is_price_over_disruption() {
    let s = load(&pool_world(1).add(Pod::new("default", "p1b").cpu("1").on("node-1")));
    assert_eq!(super::disruption_cost(&s, &[]), d(1));
    let pods: Vec<usize> = (0..s.pods.len())
        .filter(|&i| s.pods[i].demand.namespace == "default")
        .collect();
    assert_eq!(super::disruption_cost(&s, &pods), d(3));
    let mut c = vec![
        candidate("zero", 0.0, 4, 3),
        candidate("three", 4.84, 4, 3),
        candidate("none", 4.84, 1, 0),
    ];
    sort_candidates(&mut c);
    let order: Vec<&str> = c.iter().map(|c| c.node.as_str()).collect();
    assert_eq!(order, ["none", "three", "zero"]);
}

/// D-BAL-039 and D-BAL-041: candidates of a Balanced pool (and any mix of pools) go by ratio:
/// 10 over 2 (5.0) before 5 over 4 (1.25) before 1 over 9 (0.11).
#[test]
fn balanced_candidates_sort_by_ratio() {
    let mut c = vec![
        candidate("node-b", 1.0, 9, 8),
        candidate("node-c", 5.0, 4, 3),
        candidate("node-a", 10.0, 2, 1),
    ];
    sort_candidates(&mut c);
    let order: Vec<&str> = c.iter().map(|c| c.node.as_str()).collect();
    assert_eq!(order, ["node-a", "node-c", "node-b"]);
}

/// D-BAL-040: same prices, disruption 10, 1 and 5: by ratio, 1 then 5 then 10.
#[test]
fn other_candidates_sort_by_ratio_too() {
    let mut c = vec![
        candidate("node-a", 4.84, 10, 1),
        candidate("node-b", 4.84, 1, 0),
        candidate("node-c", 4.84, 5, 1),
    ];
    sort_candidates(&mut c);
    let order: Vec<&str> = c.iter().map(|c| c.node.as_str()).collect();
    assert_eq!(order, ["node-b", "node-c", "node-a"]);
}

/// The pre-filter of single-node trials (core `CanPassThreshold`): a candidate whose outright
/// deletion cannot pass is skipped; a pool costing nothing rules nothing out.
#[test]
fn a_candidate_that_cannot_pass_even_deleted_is_skipped() {
    let t = totals(58.08, 117);
    assert!(can_pass(&candidate("a", 4.84, 5, 4), &t));
    assert!(!can_pass(&candidate("b", 4.84, 32, 31), &t));
    assert!(can_pass(&candidate("b", 4.84, 32, 31), &totals(0.0, 117)));
}

/// D-BAL-030..035 (`balanced_scoring_test.go` ScoreMove table, totals 100 and 100): (savings,
/// disruption) -> (score, approved).
#[test]
fn score_table() {
    let t = totals(100.0, 100);
    for (savings, disruption, want, approved) in [
        (20.0, 5, 4.0, true),
        (10.0, 10, 1.0, true),
        (5.0, 50, 0.1, false),
        (10.0, 0, f64::INFINITY, true),
        (0.0, 10, 0.0, false),
        (-5.0, 10, 0.0, false),
    ] {
        let s = score(savings, disruption, t);
        assert_eq!(s.approved(), approved, "{savings} {disruption}");
        if want.is_infinite() {
            assert_eq!(s.value(), want);
        } else {
            assert!(
                close(s.value(), want),
                "{savings} {disruption}: {}",
                s.value()
            );
        }
    }
}

/// D-BAL-055 (`balanced_adversarial_test.go` "should populate perPool entries for all pools
/// even on early return"): every Balanced pool of a move gets its score, the refusing one and
/// the approving one alike, each with its k.
#[test]
fn every_pool_gets_a_score_even_when_one_refuses() {
    let t = BTreeMap::from([
        ("pool-a".to_string(), totals(4.0, 20)),
        ("pool-b".to_string(), totals(48.4, 20)),
    ]);
    // Pool A gives up a node holding most of its disruption: refused; pool B approves.
    let parts = [part("pool-a", true, 1.0, 18), part("pool-b", true, 4.84, 2)];
    let (ok, scores) = evaluate_move(&parts, usd(5.84), &t, BALANCED_K);
    assert!(!ok);
    assert_eq!(scores.len(), 2);
    assert!(!scores["pool-a"].approved() && scores["pool-b"].approved());
    assert!(scores.values().all(|s| s.k == BALANCED_K));
}
