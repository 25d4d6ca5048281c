//! Replays of the seed report's runs: the upstream peer against the report's milestones, ours
//! against the scale-up it promises, the benchmark's flavors, and event-driven time.

use super::engine::{StrategyTimeline, reference, replay};
use super::trace::{self, Trace};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName;
use karpenter_capi_testkit::{Edit, World};

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
    assert_eq!(r.scale, None, "the report gives no scale time");
    near("scale", m.scale, m.claim, 1.0);
    near("launched", m.launched, r.launched, 5.0);
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
    // The same infrastructure: Ready 138 s after the Machine, pods 12 s after binding.
    assert!(
        (m.running.unwrap() - (m.scale.unwrap() + 1.0 + 138.0 + 12.0)).abs() <= 2.0,
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
    // The report's benchmark: "no clear winner on time", both had their pods Running at the
    // same moment (the server's boot dominates, not the NodeClaim handshake).
    let running = |t: &StrategyTimeline| t.milestones.running.unwrap();
    assert!((running(&upstream) - running(&ca)).abs() <= 5.0);
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

/// The seed catalog (c3-4 0.05/h, c3-8 0.10/h, c3-16 0.20/h, a 100m/128Mi DaemonSet) without
/// its CPU limit, with this consolidation policy and `expireAfter`.
fn catalog(policy: &str, expire_after: &str) -> Snapshot {
    let world = World::from_yaml(include_str!("../../scenarios/default.yaml"))
        // Without the scenario's own pending Deployment: the traces bring their pods.
        .retain(|o| o["kind"] != "Deployment")
        .with("NodePool", "default", |p| {
            let spec = &mut p["spec"];
            assert!(spec.as_object_mut().unwrap().remove("limits").is_some());
            assert_eq!(
                spec["disruption"]["consolidationPolicy"],
                "WhenEmptyOrUnderutilized"
            );
            spec["disruption"]["consolidationPolicy"] = policy.into();
            assert_eq!(spec["template"]["spec"]["expireAfter"], "Never");
            spec["template"]["spec"]["expireAfter"] = expire_after.into();
        });
    snapshot_from_sources(&[Source {
        name: "catalog".into(),
        text: world.text(),
    }])
    .unwrap()
}

/// A step function without repeated values (same-time points already merged).
fn changes(points: impl IntoIterator<Item = (i64, usize)>) -> Vec<(i64, usize)> {
    let mut out: Vec<(i64, usize)> = Vec::new();
    for (t, n) in points {
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = n,
            Some(last) if last.1 == n => {}
            _ => out.push((t, n)),
        }
    }
    out
}

/// Pods arriving in waves with lifetimes, 500m / 512Mi each.
const WAVES: &str = "name: waves\nworkloads:\n- {name: web, cpu: 500m, memory: 512Mi}\nsteps:\n- {at: 0s, add: {workload: web, count: 6, lifetime: 40m}}\n- {at: 5m, add: {workload: web, count: 4, lifetime: 25m}}\n- {at: 20m, add: {workload: web, count: 3, lifetime: 30m}}\nsettle: 1h\n";

#[test]
fn evicted_pods_keep_their_expiry_so_the_alive_count_is_the_traces() {
    let trace = trace::parse("waves", WAVES).unwrap();
    let horizon = trace.steps.last().unwrap().at + trace.settle;
    let want = changes(
        trace
            .alive(horizon)
            .into_iter()
            .map(|(t, c)| (t, c.iter().sum::<i64>() as usize)),
    );
    assert_eq!(
        want,
        vec![
            (0, 6),
            (300_000, 10),
            (1_200_000, 13),
            (1_800_000, 9),
            (2_400_000, 3),
            (3_000_000, 0)
        ]
    );
    // Nodes expiring after 10 minutes are drained forcefully: pods are evicted and replaced.
    for (strategy, expire) in [
        (StrategyName::Cost, "10m"),
        (StrategyName::LeastWaste, "Never"),
    ] {
        let snap = catalog("WhenEmptyOrUnderutilized", expire);
        let t = replay(&snap, &trace, strategy, &mut |_, _| {}).unwrap();
        if strategy == StrategyName::Cost {
            assert!(t.evictions > 0, "no eviction: the test shows nothing");
        }
        assert_eq!(changes(t.alive.clone()), want, "{}", t.strategy);
        assert!(t.milestones.scaled_to_zero.is_some(), "{}", t.strategy);
    }
}

/// Every latency a multiple of 10 s from what starts it (a pass comes 1 s after an event, so a
/// Machine created or deleted by a pass takes 9 s more): every event falls on a 10 s boundary.
const ON_THE_GRID: &str = "latencies:\n  machineCreate: 9s\n  providerID: 10s\n  nodeJoin: 20s\n  nodeReady: 60s\n  capiUninitialized: 10s\n  podStart: 10s\n  machineDelete: 9s\n";

fn ours(
    snap: &Snapshot,
    trace: &Trace,
    resync: super::peers::ours::Resync,
) -> (StrategyTimeline, Vec<(i64, String)>) {
    let mut agent =
        super::peers::ours::Ours::with_resync(crate::controller::Config::default(), resync);
    let t = super::engine::replay_agent(snap, trace, &mut agent, &mut |_, _| {}).unwrap();
    (t, agent.log)
}

/// The consolidation memo (core `IsConsolidated`) saves searches, never money: on every built-in
/// trace and the grid trace under both policies, the replay with it costs no more than one that
/// searches on every pass, and searches less or as often.
#[test]
fn the_consolidation_memo_never_makes_a_replay_pricier() {
    use super::peers::ours::{Ours, Resync};
    let config = crate::controller::Config::default();
    let mut cases: Vec<(String, Snapshot, Trace)> = trace::BUILT_IN
        .iter()
        .map(|(name, _, _)| {
            let (t, s) = built_in(name);
            (name.to_string(), s, t)
        })
        .collect();
    let grid = trace::parse("grid", &format!("name: grid\nworkloads:\n- {{name: web, cpu: 500m, memory: 512Mi}}\nsteps:\n- {{at: 0s, add: {{workload: web, count: 12, lifetime: 20m}}}}\n- {{at: 5m, add: {{workload: web, count: 6, lifetime: 40m}}}}\nsettle: 30m\n{ON_THE_GRID}")).unwrap();
    for policy in ["WhenEmptyOrUnderutilized", "WhenEmpty"] {
        cases.push((
            format!("grid {policy}"),
            catalog(policy, "Never"),
            grid.clone(),
        ));
    }
    for (name, snap, trace) in &cases {
        let mut with = Ours::with_resync(config.clone(), Resync::WhenDue);
        let kept = super::engine::replay_agent(snap, trace, &mut with, &mut |_, _| {}).unwrap();
        let mut without = Ours::with_resync(config.clone(), Resync::WhenDue).forgetting();
        let every = super::engine::replay_agent(snap, trace, &mut without, &mut |_, _| {}).unwrap();
        assert!(
            kept.cost <= every.cost + 1e-9,
            "{name}: {} with the memo, {} without",
            kept.cost,
            every.cost
        );
        assert_eq!(
            kept.milestones.scaled_to_zero.is_some(),
            every.milestones.scaled_to_zero.is_some(),
            "{name}"
        );
    }
}

#[test]
fn resync_passes_only_when_a_clock_is_due_act_as_a_pass_every_10s() {
    use super::peers::ours::Resync;
    let text = format!(
        "name: grid\nworkloads:\n- {{name: web, cpu: 500m, memory: 512Mi}}\n- {{name: batch, cpu: '1', memory: 1Gi}}\nsteps:\n- {{at: 0s, add: {{workload: web, count: 10, lifetime: 20m}}}}\n- {{at: 2m, add: {{workload: batch, count: 6, lifetime: 10m}}}}\n- {{at: 30m, add: {{workload: web, count: 3, lifetime: 5m}}}}\n- {{at: 40m, scale: {{batch: 2}}}}\n- {{at: 70m, scale: {{batch: 0}}}}\nsettle: 30m\n{ON_THE_GRID}"
    );
    let trace = trace::parse("grid", &text).unwrap();
    for (policy, expire) in [("WhenEmptyOrUnderutilized", "Never"), ("WhenEmpty", "15m")] {
        let snap = catalog(policy, expire);
        let (due, due_log) = ours(&snap, &trace, Resync::WhenDue);
        let (always, always_log) = ours(&snap, &trace, Resync::Always);
        assert_eq!(due_log, always_log, "{policy}, expireAfter {expire}");
        // The timers mattered: nodes were removed after the load left, not by events alone.
        assert!(
            due_log
                .iter()
                .any(|(_, a)| a.starts_with("deleteNodeClaim")),
            "{due_log:?}"
        );
        // Run as `run` runs it: each deleted claim is held by our termination finalizer until
        // its Machine is being deleted, then released.
        let count = |prefix: &str| {
            due_log
                .iter()
                .filter(|(_, a)| a.starts_with(prefix))
                .count()
        };
        assert_eq!(
            count("deleteNodeClaim"),
            count("removeNodeClaimFinalizer"),
            "{due_log:?}"
        );
        assert!(due.milestones.scaled_to_zero.is_some(), "{policy}");
        assert!(
            due.passes * 3 < always.passes,
            "{} vs {} passes",
            due.passes,
            always.passes
        );
        assert_eq!((due.cost, due.max_nodes), (always.cost, always.max_nodes));
    }
}

#[test]
fn nodes_of_gone_machines_are_released() {
    for name in ["seed-benchmark", "seed-first-run"] {
        let t = run(name, StrategyName::Cost);
        let (trace, snap) = built_in(name);
        let _ = trace;
        // Every Node the replay created is gone with its Machine; the scenario's stay.
        assert_eq!(t.nodes_at_end, snap.nodes.len(), "{name}");
        assert!(t.warnings.is_empty(), "{name}: {:?}", t.warnings);
    }
}

type Commands = Vec<(i64, super::peers::upstream::Method, Vec<String>)>;

fn upstream(snap: &Snapshot, trace: &Trace, scheduling_cost: i64) -> (StrategyTimeline, Commands) {
    let mut agent = super::peers::upstream::Upstream::default();
    agent.scheduling_cost = scheduling_cost;
    let t = super::engine::replay_agent(snap, trace, &mut agent, &mut |_, _| {}).unwrap();
    (t, agent.log)
}

/// The seed catalog with a policy, a disruption budget line and the flavors' capacity labels
/// edited by `labels`.
fn pool(policy: &str, budget: &str, labels: impl Fn(&str) -> String) -> Snapshot {
    let text = include_str!("../../scenarios/default.yaml")
        .edit("  limits:\n    cpu: '20'\n", "")
        .edit(
            "consolidationPolicy: WhenEmptyOrUnderutilized\n",
            &format!("consolidationPolicy: {policy}\n{budget}"),
        );
    let text = labels(&text);
    let docs: Vec<&str> = text
        .split("\n---\n")
        .filter(|doc| !doc.contains("kind: Deployment\n"))
        .collect();
    snapshot_from_sources(&[Source {
        name: "pool".into(),
        text: docs.join("\n---\n"),
    }])
    .unwrap()
}

/// `n` pods of 1 core at T+0, `m` from T+10m.
fn scaled_down(n: i64, m: i64) -> Trace {
    trace::parse(
        "down",
        &format!(
            "workloads:\n- {{name: web, cpu: '1', memory: 256Mi}}\nsteps:\n- {{at: 0s, scale: {{web: {n}}}}}\n- {{at: 10m, scale: {{web: {m}}}}}\nsettle: 30m\n"
        ),
    )
    .unwrap()
}

#[test]
fn upstream_consolidates_underutilized_nodes_by_deleting_them_as_karpenter_v1_5() {
    use super::peers::upstream::Method::{MultiNode, SingleNode};
    let methods = |log: &Commands| -> Vec<(i64, super::peers::upstream::Method, usize)> {
        log.iter().map(|(t, m, c)| (*t, *m, c.len())).collect()
    };
    let same = |s: &str| s.to_string();
    let all = "    budgets:\n    - nodes: '100%'\n";
    // Upstream buys two c3-16 for 8 cores. From T+10m three pods are left, on both nodes:
    // consolidateAfter (30 s) after the last pod event the claims are Consolidatable (T+630s,
    // a poll), the cheaper one to disrupt fits on the other, validated 15 s later: deleted.
    let (t, log) = upstream(
        &pool("WhenEmptyOrUnderutilized", "", same),
        &scaled_down(8, 3),
        0,
    );
    assert_eq!(methods(&log), vec![(645_000, SingleNode, 1)]);
    assert_eq!((t.max_nodes, t.nodes_at_end, t.evictions), (2, 1, 1));
    // Under WhenEmpty neither node is empty: both stay.
    let (t, log) = upstream(&pool("WhenEmpty", "", same), &scaled_down(8, 3), 0);
    assert_eq!(log, vec![]);
    assert_eq!((t.max_nodes, t.nodes_at_end), (2, 2));
    // Without a zone label Karpenter cannot price the node, so it never consolidates it.
    let no_zone = |s: &str| s.edit(",topology.kubernetes.io/zone=nova", "");
    let (t, log) = upstream(
        &pool("WhenEmptyOrUnderutilized", "", no_zone),
        &scaled_down(8, 3),
        0,
    );
    assert_eq!((log.len(), t.nodes_at_end), (0, 2));
    // 35 cores on five c3-16, then 6 pods: four nodes with one pod each go at once (multi-node,
    // the longest prefix in DisruptionCost order) when the budget allows all of them.
    let (t, log) = upstream(
        &pool("WhenEmptyOrUnderutilized", all, same),
        &scaled_down(35, 6),
        0,
    );
    assert_eq!(methods(&log), vec![(645_000, MultiNode, 4)]);
    assert_eq!((t.max_nodes, t.nodes_at_end, t.evictions), (5, 1, 4));
    // Its 1-minute timeout: when a scheduling simulation takes 61 s, the binary search stops
    // after its first probe (three nodes); the fourth goes by a later single-node command.
    let (_, log) = upstream(
        &pool("WhenEmptyOrUnderutilized", all, same),
        &scaled_down(35, 6),
        61_000,
    );
    assert_eq!(
        methods(&log),
        vec![(645_000, MultiNode, 3), (695_000, SingleNode, 1)]
    );
    // The default budget (10 % of the nodes, rounded up: one) takes them one at a time, the
    // next once the previous claim is gone with its Machine (T+645s + 135 s, then a poll).
    let (t, log) = upstream(
        &pool("WhenEmptyOrUnderutilized", "", same),
        &scaled_down(21, 5),
        0,
    );
    assert_eq!(
        methods(&log),
        vec![(645_000, SingleNode, 1), (805_000, SingleNode, 1)]
    );
    assert_eq!((t.max_nodes, t.nodes_at_end), (3, 1));
    // Single-node's 3-minute timeout: a 6-core pod's node comes first (one pod) and fits
    // nowhere; at 200 s a simulation the search is abandoned before the next candidate.
    let mixed = trace::parse(
        "mixed",
        "workloads:\n- {name: big, cpu: '6', memory: 256Mi}\n- {name: web, cpu: '1', memory: 256Mi}\nsteps:\n- {at: 0s, scale: {big: 1, web: 12}}\n- {at: 10m, scale: {web: 5}}\nsettle: 30m\n",
    )
    .unwrap();
    let snap = pool("WhenEmptyOrUnderutilized", all, same);
    let (t, log) = upstream(&snap, &mixed, 0);
    assert_eq!(methods(&log), vec![(645_000, SingleNode, 1)]);
    assert_eq!((t.max_nodes, t.nodes_at_end), (3, 2));
    let (t, log) = upstream(&snap, &mixed, 200_000);
    assert_eq!((log.len(), t.nodes_at_end), (0, 3));
}

#[test]
fn the_lower_bound_covers_alive_pods_by_the_cheapest_flavor_per_hour() {
    // c3-16 has 7.9 cores left after the 100m DaemonSet for 0.20/h: the cheapest core. Ten
    // 1-core pods for the first half hour, four for the second, none after: 7 core-hours at
    // 0.2/7.9 per core-hour (memory never binds: 256Mi a pod).
    let trace = trace::parse(
        "bound",
        "workloads:\n- {name: web, cpu: '1', memory: 256Mi}\nsteps:\n- {at: 0s, scale: {web: 10}}\n- {at: 30m, scale: {web: 4}}\n- {at: 1h, scale: {web: 0}}\nsettle: 30m\n",
    )
    .unwrap();
    let snap = catalog("WhenEmptyOrUnderutilized", "Never");
    let horizon = 90 * 60_000;
    let bound = super::bound::lower_bound(&snap, &trace, horizon)
        .unwrap()
        .unwrap();
    let want = 7.0 * 0.2 / 7.9;
    assert!((bound - want).abs() < 1e-12, "{bound} vs {want}");
    // Pods with lifetimes count until they expire: 6 × 0.5 core for 40 min, 4 more for 25 min
    // from 5 min, 3 more for 30 min from 20 min (WAVES): 0.5 × (6·40 + 4·25 + 3·30) / 60
    // core-hours.
    let waves = trace::parse("waves", WAVES).unwrap();
    let got = super::bound::lower_bound(&snap, &waves, 70 * 60_000)
        .unwrap()
        .unwrap();
    let want = 0.5 * (6.0 * 40.0 + 4.0 * 25.0 + 3.0 * 30.0) / 60.0 * 0.2 / 7.9;
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // The scenario's own pending pods (the seed benchmark's 8 × 1 core) wait all along: 8 more
    // cores for the 90 minutes.
    let with_inflate = snapshot_from_sources(&[Source {
        name: "seed".into(),
        text: include_str!("../../scenarios/default.yaml").edit("  limits:\n    cpu: '20'\n", ""),
    }])
    .unwrap();
    let got = super::bound::lower_bound(&with_inflate, &trace, horizon)
        .unwrap()
        .unwrap();
    let want = (7.0 + 8.0 * 1.5) * 0.2 / 7.9;
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // The timeline reports each strategy's cost over it.
    let t =
        super::engine::replay_all(&snap, &trace, &StrategyName::ALL, &mut |_, _, _| {}).unwrap();
    assert_eq!(t.lower_bound, Some(7.0 * 0.2 / 7.9));
    for s in &t.strategies {
        let r = s.cost_vs_bound.unwrap();
        assert!((r - s.cost / (7.0 * 0.2 / 7.9)).abs() < 1e-12);
        assert!(r >= 1.0, "{}: {r}", s.strategy);
    }
}

/// Clocks no event shows: the search core forces 5 minutes after one that settled, the pod
/// flow's verdict as departures leave its window, and consolidation's forecast of arrivals
/// ending. The generated ramp (24 pods over 26 minutes, held 10, then leaving) with latencies
/// on the 10 s grid: an event-driven replay acts as one with a pass every 10 s, and the forced
/// search replaces the c3-16 at 2,701 s, a time at which no pod came or went.
#[test]
fn searches_forced_and_forecasts_ended_are_clocks_of_their_own() {
    use super::peers::ours::Resync;
    let snap = super::generated::scenario().unwrap();
    let text = super::generated::yaml(super::generated::Shape::Ramp, 2, 24) + ON_THE_GRID;
    let trace = trace::parse("ramp", &text).unwrap();
    let (due, due_log) = ours(&snap, &trace, Resync::WhenDue);
    let (always, always_log) = ours(&snap, &trace, Resync::Always);
    assert_eq!(due_log, always_log);
    assert_eq!((due.cost, due.max_nodes), (always.cost, always.max_nodes));
    assert!(
        due.passes * 3 < always.passes,
        "{} vs {}",
        due.passes,
        always.passes
    );
    let at = |t: i64| -> Vec<&str> {
        due_log
            .iter()
            .filter(|(ms, _)| *ms == t)
            .map(|(_, a)| a.as_str())
            .collect()
    };
    assert_eq!(
        at(2_701_000),
        [
            "createNodeClaim NodeClaim/default-",
            "taintNode Node/capi-ovh-karpenter-c3-16-487m9"
        ]
    );
}
