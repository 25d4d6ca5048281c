//! Generated load traces: five shapes of demand (a diurnal day, a ramp up and down, bursts,
//! batch jobs, a steady load with spikes), each drawn from a seed by a small deterministic
//! generator, and a fixed, named set of them that the replay tests and benchmarks use. Every
//! trace ends with all its pods gone, so a replay can check that the fleet returns to zero.
//!
//! The traces are written as trace YAML and parsed like a user's file, so what a test replays
//! is exactly what `simulate --timeline --trace FILE` would.

use std::fmt::Write as _;

use super::trace::{self, Trace};
use crate::error::Error;
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::rng::Lcg;

/// A shape of demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Arrivals on one daily sine wave, each pod living a while.
    Diurnal,
    /// A linear ramp up, a plateau and a ramp down of one Deployment.
    Ramp,
    /// A few bursts of short-lived pods at once.
    Burst,
    /// Batch jobs: groups of larger pods, each group living minutes.
    Batch,
    /// A steady Deployment with short spikes of extra pods on top.
    SteadySpikes,
}

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 5] = [
        Shape::Diurnal,
        Shape::Ramp,
        Shape::Burst,
        Shape::Batch,
        Shape::SteadySpikes,
    ];

    /// Its name in trace names.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Diurnal => "diurnal",
            Shape::Ramp => "ramp",
            Shape::Burst => "burst",
            Shape::Batch => "batch",
            Shape::SteadySpikes => "steady-spikes",
        }
    }
}

/// The named set: shape, seed and size (pods at the peak, roughly). Small enough that a debug
/// build replays all of them for the three strategies in a test; the benchmarks scale them.
pub const NAMED: &[(Shape, u64, i64)] = &[
    (Shape::Diurnal, 1, 20),
    (Shape::Ramp, 2, 24),
    (Shape::Burst, 3, 30),
    (Shape::Batch, 4, 12),
    (Shape::SteadySpikes, 5, 20),
];

/// The name of a generated trace.
pub fn name(shape: Shape, seed: u64, size: i64) -> String {
    format!("gen-{}-s{seed}-n{size}", shape.as_str())
}

/// The trace YAML of `shape` drawn from `seed`, about `size` pods at its peak (at least 1).
pub fn yaml(shape: Shape, seed: u64, size: i64) -> String {
    let size = size.max(1);
    let mut g = Lcg::mixed(seed);
    let mut y = format!("name: {}\nworkloads:\n", name(shape, seed, size));
    match shape {
        Shape::Diurnal => {
            // `size` pods alive at the peak: arrivals over the day times a lifetime of 1-3 h.
            let hours = g.between(1, 3);
            let trough = [0.1, 0.25, 0.5][g.between(0, 2) as usize];
            // The mean arrival rate is (1 + trough) / 2 of the peak's.
            let pods = (size as f64 * 24.0 / hours as f64 * (1.0 + trough) / 2.0).round() as i64;
            let _ = writeln!(y, "- {{name: web, cpu: 500m, memory: 512Mi}}");
            let _ = writeln!(
                y,
                "generate:\n- diurnal: {{workload: web, pods: {pods}, lifetime: {hours}h, over: 24h, every: 5m, trough: {trough}}}"
            );
        }
        Shape::Ramp => {
            let up = g.between(10, 40);
            let hold = g.between(10, 60);
            let down = g.between(10, 40);
            let _ = writeln!(y, "- {{name: web, cpu: 750m, memory: 1Gi}}");
            let _ = writeln!(
                y,
                "generate:\n- ramp: {{workload: web, from: 0, to: {size}, start: 0s, end: {up}m, every: 2m}}\n- ramp: {{workload: web, from: {size}, to: 0, start: {}m, end: {}m, every: 2m}}",
                up + hold,
                up + hold + down
            );
        }
        Shape::Burst => {
            let _ = writeln!(y, "- {{name: burst, cpu: 500m, memory: 256Mi}}\nsteps:");
            let mut at = 0;
            for _ in 0..g.between(3, 5) {
                let count = g.between(size / 3, size).max(1);
                let life = g.between(5, 20);
                let _ = writeln!(
                    y,
                    "- {{at: {at}m, add: {{workload: burst, count: {count}, lifetime: {life}m}}}}"
                );
                at += g.between(10, 40);
            }
        }
        Shape::Batch => {
            let _ = writeln!(y, "- {{name: job, cpu: '1', memory: 2Gi}}\nsteps:");
            let mut at = 0;
            for _ in 0..g.between(4, 8) {
                let count = g.between(1, size);
                let life = g.between(5, 30);
                let _ = writeln!(
                    y,
                    "- {{at: {at}m, add: {{workload: job, count: {count}, lifetime: {life}m}}}}"
                );
                at += g.between(3, 25);
            }
        }
        Shape::SteadySpikes => {
            let steady = (size / 2).max(1);
            let _ = writeln!(
                y,
                "- {{name: web, cpu: 500m, memory: 512Mi}}\n- {{name: spike, cpu: 250m, memory: 256Mi}}\nsteps:\n- {{at: 0s, scale: {{web: {steady}}}}}"
            );
            let mut at = g.between(5, 15);
            for _ in 0..g.between(2, 5) {
                let count = g.between(1, (size - steady).max(1) * 2);
                let life = g.between(3, 12);
                let _ = writeln!(
                    y,
                    "- {{at: {at}m, add: {{workload: spike, count: {count}, lifetime: {life}m}}}}"
                );
                at += g.between(15, 45);
            }
            let _ = writeln!(y, "- {{at: {}m, scale: {{web: 0}}}}", at + 10);
        }
    }
    // Long enough after the last step for every pod to have left and the fleet to drain.
    let settle = match shape {
        Shape::Diurnal => "settle: 4h\n",
        _ => "settle: 1h\n",
    };
    y.push_str(settle);
    y
}

/// The trace of `shape` drawn from `seed`.
pub fn generate(shape: Shape, seed: u64, size: i64) -> Result<Trace, Error> {
    let text = yaml(shape, seed, size);
    trace::parse(&name(shape, seed, size), &text)
}

/// The named set, resolved.
pub fn named() -> Result<Vec<Trace>, Error> {
    NAMED
        .iter()
        .map(|&(shape, seed, size)| generate(shape, seed, size))
        .collect()
}

/// The cluster generated traces replay over: the built-in scenario's catalog (c3-4, c3-8,
/// c3-16 at 0.05/0.10/0.20 per hour, a 100m / 128Mi DaemonSet) and NodePool with `init`'s
/// policy (`WhenEmptyOrUnderutilized` after 30 s), without its CPU limit and without its
/// pending Deployment (the trace brings every pod).
pub fn scenario() -> Result<Snapshot, Error> {
    let text = trace::DEFAULT_SCENARIO.replace("  limits:\n    cpu: '20'\n", "");
    let docs: Vec<&str> = text
        .split("\n---\n")
        .filter(|doc| !doc.contains("kind: Deployment\n"))
        .collect();
    snapshot_from_sources(&[Source {
        name: "generated-trace scenario".into(),
        text: docs.join("\n---\n"),
    }])
}
