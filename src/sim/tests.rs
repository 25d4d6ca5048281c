//! Replays of the seed report's runs: the upstream peer against the report's milestones, ours
//! against the scale-up it promises, the benchmark's flavors, and event-driven time.

use super::engine::{StrategyTimeline, reference, replay};
use super::trace::{self, Trace};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName;

fn built_in(name: &str) -> (Trace, Snapshot) {
    let trace = trace::built_in(name).unwrap();
    let snap = snapshot_from_sources(&[Source {
        name: name.to_string(),
        text: trace::built_in_scenario(name).unwrap().to_string(),
    }])
    .unwrap();
    (trace, snap)
}

fn run(name: &str, s: StrategyName) -> StrategyTimeline {
    let (trace, snap) = built_in(name);
    replay(&snap, &trace, s, &mut |_, _| {}).unwrap()
}

fn near(label: &str, got: Option<f64>, want: Option<f64>, tolerance: f64) {
    let (g, w) = (got.unwrap_or(f64::NAN), want.unwrap());
    assert!(
        (g - w).abs() <= tolerance,
        "{label}: simulated {g}s, report {w}s"
    );
}

#[test]
fn upstream_reproduces_the_seed_reports_first_run_within_5s() {
    let t = run("seed-first-run", StrategyName::KarpenterCapi);
    let r = reference("seed-first-run").unwrap().milestones;
    let m = &t.milestones;
    near("claim", m.claim, r.claim, 5.0);
    near("scale", m.scale, r.scale, 5.0);
    near("registered", m.registered, r.registered, 5.0);
    near("initialized", m.initialized, r.initialized, 5.0);
    near("running", m.running, r.running, 5.0);
    near("scaled to zero", m.scaled_to_zero, r.scaled_to_zero, 5.0);
    assert_eq!(t.max_nodes, 1);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn ours_requests_the_scale_up_within_2s_on_the_first_run() {
    let t = run("seed-first-run", StrategyName::Cost);
    let m = &t.milestones;
    assert!(m.claim.unwrap() <= 2.0, "{m:?}");
    assert!(m.scale.unwrap() <= 2.0, "{m:?}");
    // The same infrastructure: Ready 74 s after the Machine, pods 12 s after binding.
    assert!(
        (m.running.unwrap() - (m.scale.unwrap() + 1.0 + 74.0 + 12.0)).abs() <= 2.0,
        "{m:?}"
    );
    assert_eq!(t.max_nodes, 1);
    assert_eq!(t.time_to_running.pods, 2);
    assert!(m.scaled_to_zero.is_some(), "{m:?}");
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn the_benchmark_buys_what_each_strategy_buys() {
    // Cost and upstream: c3-16 + c3-4 (0.25/h); least-waste: 3 × c3-8 (0.30/h).
    let peak = |t: &StrategyTimeline| {
        t.series
            .iter()
            .map(|p| (p.nodes, (p.price_per_hour * 100.0).round() as i64))
            .max()
            .unwrap()
    };
    let cost = run("seed-benchmark", StrategyName::Cost);
    let upstream = run("seed-benchmark", StrategyName::KarpenterCapi);
    let ca = run("seed-benchmark", StrategyName::LeastWaste);
    assert_eq!(peak(&cost), (2, 25));
    assert_eq!(
        peak(&upstream),
        (2, 40),
        "upstream's name order picks c3-16 twice"
    );
    assert_eq!(peak(&ca), (3, 30));
    for t in [&cost, &upstream, &ca] {
        assert_eq!(t.time_to_running.pods, 8, "{}", t.strategy);
        assert!(t.milestones.scaled_to_zero.is_some(), "{}", t.strategy);
        assert!(t.warnings.is_empty(), "{}: {:?}", t.strategy, t.warnings);
    }
    // Cluster Autoscaler waits 10 minutes before removing unneeded nodes.
    assert!(ca.milestones.scaled_to_zero.unwrap() >= 600.0);
    assert!(cost.cost < ca.cost, "{} vs {}", cost.cost, ca.cost);
}

#[test]
fn idle_time_costs_no_events() {
    let (mut trace, snap) = built_in("seed-benchmark");
    // The load leaves after a day instead of ten minutes: the day in between has no event.
    trace.steps[1].at = 24 * 3_600_000;
    let short = run("seed-benchmark", StrategyName::Cost);
    let long = replay(&snap, &trace, StrategyName::Cost, &mut |_, _| {}).unwrap();
    assert!(
        long.events <= short.events + 20,
        "{} events for a day vs {} for ten minutes",
        long.events,
        short.events
    );
    assert!(long.node_hours > 23.0, "{}", long.node_hours);
}
