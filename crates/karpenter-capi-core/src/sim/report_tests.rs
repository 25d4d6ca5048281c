//! Measurements, not assertions: `cargo test -p karpenter-capi-core sim::report_tests --
//! --ignored --nocapture` replays the benches' traces, the built-in ones and the generated
//! ones for the three strategies and prints each strategy's cost, `cost`'s ratio to the cheaper
//! peer and to the bound, evictions and peak fleet (the figures of docs/benchmarks.md).
//! `REPLAY_ONLY=NAME` restricts it to the traces whose name contains NAME; `REPLAY_LOG=1` also
//! prints our controller's action log and every strategy's fleet over time.

use super::engine::{Timeline, replay_all, replay_ours_logged};
use super::generated::{self, Shape};
use super::trace::{self, Trace};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn snap(name: &str, text: &str) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: name.to_string(),
        text: text.to_string(),
    }])
    .unwrap()
}

/// Every replay the docs report: (label, scenario, trace).
fn replays() -> Vec<(String, Snapshot, Trace)> {
    let mut out = Vec::new();
    for (name, t, scenario) in trace::BUILT_IN {
        out.push((
            name.to_string(),
            snap(name, scenario),
            trace::parse(name, t).unwrap(),
        ));
    }
    let dir = root().join("benches/traces");
    let catalog = std::fs::read_to_string(dir.join("catalog.yaml")).unwrap();
    let day = std::fs::read_to_string(dir.join("catalog-day.yaml")).unwrap();
    for name in [
        "diurnal-day",
        "diurnal-6h",
        "ramp",
        "burst",
        "batch",
        "steady-spikes",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.trace.yaml"))).unwrap();
        let t = trace::parse(name, &text).unwrap();
        let cat = if name == "diurnal-day" {
            &day
        } else {
            &catalog
        };
        out.push((name.to_string(), snap(name, cat), t.clone()));
        if name == "diurnal-day" {
            let empty = cat.replace(
                "consolidationPolicy: WhenEmptyOrUnderutilized",
                "consolidationPolicy: WhenEmpty",
            );
            out.push(("diurnal-day WhenEmpty".into(), snap(name, &empty), t));
        }
    }
    let gen_snap = generated::scenario().unwrap();
    for t in generated::named().unwrap() {
        out.push((t.name.clone(), gen_snap.clone(), t));
    }
    for seed in 100..110 {
        for shape in Shape::ALL {
            let t = generated::generate(shape, seed, 8).unwrap();
            out.push((t.name.clone(), gen_snap.clone(), t));
        }
    }
    // A draw an earlier note named (1.102x once).
    let t = generated::generate(Shape::Ramp, 774, 9).unwrap();
    out.push((t.name.clone(), gen_snap.clone(), t));
    out
}

fn get(t: &Timeline, s: StrategyName) -> &super::engine::StrategyTimeline {
    t.strategies
        .iter()
        .find(|x| x.strategy == s.as_str())
        .unwrap()
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn replay_report() {
    let only = std::env::var("REPLAY_ONLY").ok();
    let log = std::env::var("REPLAY_LOG").is_ok();
    println!(
        "| replay | bound | cost | karpenter-capi | least-waste | cost / best peer | cost / bound | evictions (cost / upstream) | max nodes (cost / upstream) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, s, t) in replays() {
        if only.as_deref().is_some_and(|o| !label.contains(o)) {
            continue;
        }
        let started = std::time::Instant::now();
        let tl = replay_all(&s, &t, &StrategyName::ALL, &mut |_, _, _| {}).unwrap();
        let c = get(&tl, StrategyName::Cost);
        let u = get(&tl, StrategyName::KarpenterCapi);
        let l = get(&tl, StrategyName::LeastWaste);
        let bound = tl.lower_bound.unwrap_or(0.0);
        let best = u.cost.min(l.cost);
        println!(
            "| {label} | {bound:.4} | {:.4} | {:.4} | {:.4} | {:.3} | {} | {} / {} | {} / {} |  ({:.1} s)",
            c.cost,
            u.cost,
            l.cost,
            c.cost / best,
            if bound > 0.0 {
                format!("{:.3}", c.cost / bound)
            } else {
                "-".into()
            },
            c.evictions,
            u.evictions,
            c.max_nodes,
            u.max_nodes,
            started.elapsed().as_secs_f64()
        );
        if log {
            let (_, actions) =
                replay_ours_logged(&s, &t, crate::controller::Config::default()).unwrap();
            for (at, a) in actions {
                println!("  ours {:>7.1}s {a}", at as f64 / 1000.0);
            }
            for x in [c, u, l] {
                let pts: Vec<String> = x
                    .series
                    .iter()
                    .map(|p| format!("{:.0}:{}/{:.2}", p.t, p.nodes, p.price_per_hour))
                    .collect();
                println!("  {} series {}", x.strategy, pts.join(" "));
            }
        }
    }
}
