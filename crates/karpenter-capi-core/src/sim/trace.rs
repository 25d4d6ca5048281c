//! Load traces: which pods arrive and leave when. A YAML format (workloads, explicit steps and
//! generators: step, ramp, diurnal), the two built-in traces from the seed field report, and
//! the resolution of a trace into a sorted list of steps.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Ms;
use super::params::{Latencies, RawLatencies, duration_ms};
use crate::error::Error;

/// Where a workload's pod template comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Template {
    /// Pods of the scenario owned by this `Kind/name` (e.g. `Deployment/inflate`).
    Scenario(String),
    /// Written in the trace.
    Inline {
        /// CPU request (`500m`).
        cpu: String,
        /// Memory request (`256Mi`).
        memory: String,
        /// Required anti-affinity between the workload's pods on this topology key.
        anti_affinity: Option<String>,
    },
}

/// A set of identical pods the trace scales.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Workload {
    /// Name (pods are `<name>-<n>`).
    pub(crate) name: String,
    /// Namespace.
    pub(crate) namespace: String,
    /// Its pod template.
    pub(crate) template: Template,
}

/// What a step does to a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Set the number of pods (a scale-down removes pods in Kubernetes' ReplicaSet order: see
    /// `SimCluster::scale_down_order`).
    Scale(i64),
    /// Create this many more pods, each removed after `lifetime` when set.
    Add {
        /// How many.
        count: i64,
        /// How long each lives.
        lifetime: Option<Ms>,
    },
}

/// One change at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// When, from the start of the trace.
    pub at: Ms,
    /// Index into [`Trace::workloads`].
    pub(crate) workload: usize,
    /// What.
    pub(crate) change: Change,
}

/// A resolved trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Its name (for reports).
    pub(crate) name: String,
    /// The workloads.
    pub(crate) workloads: Vec<Workload>,
    /// Steps, sorted by time (stable: file order within a time).
    pub steps: Vec<Step>,
    /// Latencies (the seed's, with the trace's overrides).
    pub(crate) latencies: Latencies,
    /// How long to keep replaying after the last step (default 30 minutes).
    pub settle: Ms,
}

/// The built-in scenario: eight 1-vCPU pods on a three-flavor catalog (what `simulate` and
/// `status` show without input).
pub const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/default.yaml");

/// The built-in traces: name, trace, and the scenario they replay over.
pub const BUILT_IN: &[(&str, &str, &str)] = &[
    (
        "seed-first-run",
        include_str!("../../scenarios/seed-first-run.trace.yaml"),
        include_str!("../../scenarios/seed-first-run.yaml"),
    ),
    (
        "seed-benchmark",
        include_str!("../../scenarios/seed-benchmark.trace.yaml"),
        DEFAULT_SCENARIO,
    ),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrace {
    name: Option<String>,
    #[serde(default)]
    workloads: Vec<RawWorkload>,
    #[serde(default)]
    steps: Vec<RawStep>,
    #[serde(default)]
    generate: Vec<RawGenerator>,
    latencies: Option<RawLatencies>,
    settle: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawWorkload {
    name: String,
    namespace: Option<String>,
    template: Option<String>,
    cpu: Option<String>,
    memory: Option<String>,
    anti_affinity: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    at: String,
    #[serde(default)]
    scale: BTreeMap<String, i64>,
    add: Option<RawAdd>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdd {
    workload: String,
    count: i64,
    lifetime: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
enum RawGenerator {
    /// Scale to `replicas` at `at`, back to 0 after `hold`.
    Step {
        workload: String,
        at: String,
        replicas: i64,
        hold: Option<String>,
    },
    /// Scale linearly from `from` to `to` between `start` and `end`, every `every`.
    Ramp {
        workload: String,
        from: i64,
        to: i64,
        start: String,
        end: String,
        every: Option<String>,
    },
    /// `pods` arrivals over `over` (default 24h), at a rate following one daily sine wave with
    /// its low at the start (`trough` of the peak rate), grouped every `every` (default 5m),
    /// each pod living `lifetime`.
    Diurnal {
        workload: String,
        pods: i64,
        lifetime: String,
        over: Option<String>,
        every: Option<String>,
        trough: Option<f64>,
    },
}

/// Parses a trace file; errors name the file and the field.
pub fn parse(name: &str, text: &str) -> Result<Trace, Error> {
    let err = |problem: String| Error::Input {
        path: name.to_string(),
        problem,
    };
    let raw: RawTrace =
        serde_saphyr::from_str(text).map_err(|e| err(format!("not a valid trace: {e}")))?;
    let mut workloads = Vec::new();
    for (i, w) in raw.workloads.iter().enumerate() {
        let at = |f: &str| format!("workloads[{i}].{f}");
        if w.name.is_empty() || workloads.iter().any(|x: &Workload| x.name == w.name) {
            return Err(err(format!(
                "{}: empty or repeated workload name {:?}",
                at("name"),
                w.name
            )));
        }
        let template = match (&w.template, &w.cpu, &w.memory) {
            (Some(t), None, None) => {
                if !t.contains('/') {
                    return Err(err(format!(
                        "{}: expected Kind/name of a scenario workload, e.g. Deployment/inflate, got {t:?}",
                        at("template")
                    )));
                }
                Template::Scenario(t.clone())
            }
            (None, Some(cpu), Some(memory)) => Template::Inline {
                cpu: cpu.clone(),
                memory: memory.clone(),
                anti_affinity: w.anti_affinity.clone(),
            },
            (None, None, None) => Template::Scenario(format!("*/{}", w.name)),
            _ => {
                return Err(err(format!(
                    "{}: give either template (a scenario workload) or both cpu and memory",
                    at("template")
                )));
            }
        };
        workloads.push(Workload {
            name: w.name.clone(),
            namespace: w.namespace.clone().unwrap_or_else(|| "default".to_string()),
            template,
        });
    }
    let index = |w: &str, field: &str| -> Result<usize, Error> {
        workloads.iter().position(|x| x.name == w).ok_or_else(|| {
            err(format!(
                "{field}: unknown workload {w:?} (declare it under workloads:)"
            ))
        })
    };
    let ms = |text: &str, field: &str| duration_ms(text, field).map_err(&err);
    let mut steps = Vec::new();
    for (i, s) in raw.steps.iter().enumerate() {
        let at = ms(&s.at, &format!("steps[{i}].at"))?;
        for (w, replicas) in &s.scale {
            if *replicas < 0 {
                return Err(err(format!("steps[{i}].scale.{w}: must not be negative")));
            }
            steps.push(Step {
                at,
                workload: index(w, &format!("steps[{i}].scale"))?,
                change: Change::Scale(*replicas),
            });
        }
        if let Some(a) = &s.add {
            if a.count < 0 {
                return Err(err(format!("steps[{i}].add.count: must not be negative")));
            }
            steps.push(Step {
                at,
                workload: index(&a.workload, &format!("steps[{i}].add.workload"))?,
                change: Change::Add {
                    count: a.count,
                    lifetime: match &a.lifetime {
                        Some(l) => Some(ms(l, &format!("steps[{i}].add.lifetime"))?),
                        None => None,
                    },
                },
            });
        }
    }
    for (i, g) in raw.generate.iter().enumerate() {
        let f = |x: &str| format!("generate[{i}].{x}");
        match g {
            RawGenerator::Step {
                workload,
                at,
                replicas,
                hold,
            } => {
                let w = index(workload, &f("step.workload"))?;
                let at = ms(at, &f("step.at"))?;
                steps.push(Step {
                    at,
                    workload: w,
                    change: Change::Scale((*replicas).max(0)),
                });
                if let Some(h) = hold {
                    steps.push(Step {
                        at: at + ms(h, &f("step.hold"))?,
                        workload: w,
                        change: Change::Scale(0),
                    });
                }
            }
            RawGenerator::Ramp {
                workload,
                from,
                to,
                start,
                end,
                every,
            } => {
                let w = index(workload, &f("ramp.workload"))?;
                let (start, end) = (ms(start, &f("ramp.start"))?, ms(end, &f("ramp.end"))?);
                let every = ms(every.as_deref().unwrap_or("1m"), &f("ramp.every"))?.max(1000);
                if end < start {
                    return Err(err(format!("{}: ends before it starts", f("ramp.end"))));
                }
                steps.extend(ramp(w, *from, *to, start, end, every));
            }
            RawGenerator::Diurnal {
                workload,
                pods,
                lifetime,
                over,
                every,
                trough,
            } => {
                let w = index(workload, &f("diurnal.workload"))?;
                let over = ms(over.as_deref().unwrap_or("24h"), &f("diurnal.over"))?;
                let every = ms(every.as_deref().unwrap_or("5m"), &f("diurnal.every"))?.max(1000);
                let trough = trough.unwrap_or(0.25);
                if !(0.0..=1.0).contains(&trough) {
                    return Err(err(format!("{}: expected 0 to 1", f("diurnal.trough"))));
                }
                let lifetime = ms(lifetime, &f("diurnal.lifetime"))?;
                steps.extend(diurnal(w, (*pods).max(0), over, every, trough, lifetime));
            }
        }
    }
    steps.sort_by_key(|s| s.at);
    let latencies = match &raw.latencies {
        Some(l) => l.resolve().map_err(&err)?,
        None => Latencies::default(),
    };
    let settle = ms(raw.settle.as_deref().unwrap_or("30m"), "settle")?;
    Ok(Trace {
        name: raw.name.clone().unwrap_or_else(|| name.to_string()),
        workloads,
        steps,
        latencies,
        settle,
    })
}

impl Trace {
    /// The pods the trace keeps alive (created and not yet removed, pending or not), per
    /// workload, after every change up to `until`: one entry per time something changes.
    /// Which pods a scale-down removes does not change the counts (scaled workloads have no
    /// expiries; here the newest go first); expiries at a step's time come
    /// after its steps, as the replay orders them. Exact for workloads that are either scaled
    /// or added to; a replacement of an evicted pod changes nothing here (it inherits the
    /// evicted pod's expiry).
    pub(crate) fn alive(&self, until: Ms) -> Vec<(Ms, Vec<i64>)> {
        // Per workload, the expiry of each live pod in creation order (`None`: never).
        let mut live: Vec<Vec<Option<Ms>>> = vec![Vec::new(); self.workloads.len()];
        let mut expiries: BTreeMap<Ms, Vec<usize>> = BTreeMap::new();
        let mut out: Vec<(Ms, Vec<i64>)> = Vec::new();
        let counts = |live: &Vec<Vec<Option<Ms>>>| live.iter().map(|w| w.len() as i64).collect();
        let mut i = 0;
        loop {
            let next_step = self.steps.get(i).map(|s| s.at);
            let next_expiry = expiries.keys().next().copied();
            let t = match (next_step, next_expiry) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => break,
            };
            if t > until {
                break;
            }
            while let Some(s) = self.steps.get(i).filter(|s| s.at == t) {
                let pods = &mut live[s.workload];
                match s.change {
                    Change::Scale(n) => {
                        let n = n.max(0) as usize;
                        if n > pods.len() {
                            pods.resize(n, None);
                        } else {
                            pods.truncate(n);
                        }
                    }
                    Change::Add { count, lifetime } => {
                        let at = lifetime.map(|l| t + l);
                        for _ in 0..count.max(0) {
                            pods.push(at);
                        }
                        if let Some(at) = at {
                            expiries.entry(at).or_default().push(s.workload);
                        }
                    }
                }
                i += 1;
            }
            if let Some(ws) = expiries.remove(&t) {
                for w in ws {
                    live[w].retain(|e| *e != Some(t));
                }
            }
            let now: Vec<i64> = counts(&live);
            if out.last().map(|(_, c)| c) != Some(&now) {
                out.push((t, now));
            }
        }
        out
    }
}

/// A built-in trace by name.
pub fn built_in(name: &str) -> Option<Trace> {
    BUILT_IN
        .iter()
        .find(|(n, _, _)| *n == name)
        .and_then(|(n, text, _)| parse(&format!("built-in trace {n}"), text).ok())
}

/// The scenario a built-in trace replays over.
pub fn built_in_scenario(name: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, scenario)| *scenario)
}

/// The trace `simulate --timeline -f scenario.yaml` replays without `--trace`: every workload
/// with pending pods in the scenario is applied at T+0 and deleted after `hold`.
pub fn from_scenario(snapshot: &crate::model::snapshot::Snapshot, hold: Ms) -> Trace {
    let mut counts: BTreeMap<(String, String), i64> = BTreeMap::new();
    for p in snapshot.pods.iter().filter(|p| p.is_pending()) {
        if let Some(owner) = &p.owner {
            *counts
                .entry((p.demand.namespace.clone(), owner.clone()))
                .or_insert(0) += 1;
        }
    }
    let mut workloads = Vec::new();
    let mut steps = Vec::new();
    for (i, ((namespace, owner), n)) in counts.into_iter().enumerate() {
        let name = owner
            .split_once('/')
            .map_or(owner.as_str(), |x| x.1)
            .to_string();
        workloads.push(Workload {
            name,
            namespace,
            template: Template::Scenario(owner),
        });
        steps.push(Step {
            at: 0,
            workload: i,
            change: Change::Scale(n),
        });
        steps.push(Step {
            at: hold,
            workload: i,
            change: Change::Scale(0),
        });
    }
    steps.sort_by_key(|s| s.at);
    Trace {
        name: "scenario".to_string(),
        workloads,
        steps,
        latencies: Latencies::default(),
        settle: 30 * 60_000,
    }
}

/// Scale steps from `from` to `to`, one every `every` between `start` and `end`.
pub(crate) fn ramp(
    workload: usize,
    from: i64,
    to: i64,
    start: Ms,
    end: Ms,
    every: Ms,
) -> Vec<Step> {
    let mut out = Vec::new();
    let span = (end - start).max(1);
    let mut t = start;
    loop {
        let done = (t - start).min(span);
        let replicas = from + (to - from) * done / span;
        out.push(Step {
            at: t,
            workload,
            change: Change::Scale(replicas.max(0)),
        });
        if t >= end {
            break;
        }
        t = (t + every).min(end);
    }
    out
}

/// `pods` arrivals over `over`, grouped every `every`, at a rate `trough + (1 - trough)·(1 -
/// cos(2πt/over))/2` of the peak (low at the start and the end, peak half-way), each living
/// `lifetime`. The counts are exact: the cumulative target is rounded, so they sum to `pods`.
pub(crate) fn diurnal(
    workload: usize,
    pods: i64,
    over: Ms,
    every: Ms,
    trough: f64,
    lifetime: Ms,
) -> Vec<Step> {
    let slots = (over / every).max(1);
    let rate = |i: i64| {
        let x = (i as f64 + 0.5) / slots as f64;
        trough + (1.0 - trough) * (1.0 - (2.0 * std::f64::consts::PI * x).cos()) / 2.0
    };
    let total: f64 = (0..slots).map(rate).sum();
    let mut out = Vec::new();
    let (mut cumulative, mut emitted) = (0.0, 0i64);
    for i in 0..slots {
        cumulative += rate(i);
        let target = ((cumulative / total) * pods as f64).round() as i64;
        let count = target - emitted;
        emitted = target;
        if count > 0 {
            out.push(Step {
                at: i * every,
                workload,
                change: Change::Add {
                    count,
                    lifetime: Some(lifetime),
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_traces_parse() {
        let first = built_in("seed-first-run").unwrap();
        assert_eq!(first.workloads[0].name, "inflate");
        assert_eq!(first.steps[0].change, Change::Scale(2));
        assert_eq!(first.steps[0].at, 0);
        let bench = built_in("seed-benchmark").unwrap();
        assert_eq!(bench.steps[0].change, Change::Scale(8));
        assert!(built_in("nope").is_none());
    }

    #[test]
    fn generators_expand_exactly() {
        let t = parse(
            "t.yaml",
            "workloads:\n- {name: web, cpu: 250m, memory: 128Mi}\ngenerate:\n- ramp: {workload: web, from: 0, to: 10, start: 0s, end: 10m, every: 5m}\n- step: {workload: web, at: 1h, replicas: 3, hold: 10m}\n- diurnal: {workload: web, pods: 2000, lifetime: 2h, over: 24h, every: 5m}\n",
        )
        .unwrap();
        let scales: Vec<(Ms, i64)> = t
            .steps
            .iter()
            .filter_map(|s| match s.change {
                Change::Scale(n) => Some((s.at, n)),
                _ => None,
            })
            .collect();
        assert_eq!(
            scales,
            vec![
                (0, 0),
                (300_000, 5),
                (600_000, 10),
                (3_600_000, 3),
                (4_200_000, 0)
            ]
        );
        let adds: Vec<i64> = t
            .steps
            .iter()
            .filter_map(|s| match s.change {
                Change::Add { count, .. } => Some(count),
                _ => None,
            })
            .collect();
        assert_eq!(adds.iter().sum::<i64>(), 2000);
        assert!(adds.len() <= 288);
        // Low at night, high at noon: the first slot gets about a quarter of the peak slot.
        let (first, peak) = (adds[0], *adds.iter().max().unwrap());
        assert!(first * 3 <= peak && first * 5 >= peak, "{first} vs {peak}");
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse("t.yaml", "workloads:\n- {name: a, cpu: 1}\n").unwrap_err();
        assert!(e.to_string().contains("workloads[0].template"), "{e}");
        let e = parse("t.yaml", "steps:\n- {at: 0s, scale: {ghost: 1}}\n").unwrap_err();
        assert!(e.to_string().contains("unknown workload \"ghost\""), "{e}");
        let e = parse(
            "t.yaml",
            "workloads:\n- {name: a, cpu: '1', memory: 1Gi}\nsteps:\n- {at: soon, scale: {a: 1}}\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("steps[0].at: invalid duration"),
            "{e}"
        );
        let e = parse("t.yaml", "bogus: 1\n").unwrap_err();
        assert!(e.to_string().contains("t.yaml"), "{e}");
    }
}
