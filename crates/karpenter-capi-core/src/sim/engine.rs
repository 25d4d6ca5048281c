//! The discrete-event loop: pop everything due at the next time, let the kube-scheduler
//! stand-in bind what it can, tell the autoscaler what changed, wake it when its timer is due;
//! then the timeline each replay produces.

use serde::Serialize;

use super::Ms;
use super::cluster::{Event, SimCluster};
use super::metrics::{Point, TimeToRunning, secs};
use super::peers;
use super::trace::Trace;
use crate::error::Error;
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName;

/// Milestones of one strategy, in seconds (`scaledToZero` from the moment the load left).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneSecs {
    /// First NodeClaim created.
    pub claim: Option<f64>,
    /// First scale-up of a MachineDeployment.
    pub scale: Option<f64>,
    /// First Machine with a providerID (the server exists; Karpenter's claim `Launched`).
    pub launched: Option<f64>,
    /// First Node registered.
    pub registered: Option<f64>,
    /// First Node initialized.
    pub initialized: Option<f64>,
    /// The first step's pods all Running.
    pub running: Option<f64>,
    /// Nothing left (no NodeClaim, no Machine, replicas 0), after the load left.
    pub scaled_to_zero: Option<f64>,
}

/// One point of a strategy's series.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesPoint {
    /// Seconds from the start.
    pub t: f64,
    /// Machines billed.
    pub nodes: usize,
    /// Their price per hour.
    pub price_per_hour: f64,
}

/// What one strategy did over the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyTimeline {
    /// The strategy.
    pub strategy: &'static str,
    /// Milestones.
    pub milestones: MilestoneSecs,
    /// Pods' time from creation to Running.
    pub time_to_running: TimeToRunning,
    /// Most Machines at once.
    pub max_nodes: usize,
    /// Machine-hours billed.
    pub node_hours: f64,
    /// Total cost (price per hour × hours).
    pub cost: f64,
    /// `cost` over the replay's lower bound (set by [`replay_all`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_vs_bound: Option<f64>,
    /// Nodes and price per hour over time (a point per change).
    pub series: Vec<SeriesPoint>,
    /// Reconcile passes (or scans) the autoscaler ran.
    pub passes: usize,
    /// Events the simulation processed.
    pub events: usize,
    /// Pods evicted (and recreated) by disruption or scale-down.
    pub evictions: usize,
    /// The trace's pods alive over time (ms, count), a point per change.
    #[serde(skip)]
    pub(crate) alive: Vec<(Ms, usize)>,
    /// Node objects left at the end (the scenario's included).
    #[serde(skip)]
    pub(crate) nodes_at_end: usize,
    /// Writes or situations the simulation could not carry out as asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The seed report's measurements for a built-in trace, to read against the replays.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    /// Where the numbers come from.
    pub(crate) source: &'static str,
    /// The milestones it reports.
    pub milestones: MilestoneSecs,
}

/// Every replay of one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// The trace's name.
    pub trace: String,
    /// How long was replayed, seconds.
    pub horizon_seconds: f64,
    /// Load changes (trace step times), seconds.
    pub steps: Vec<f64>,
    /// The field report's numbers, for its built-in traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// What no autoscaler can bill less than over the replay ([`super::bound`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<f64>,
    /// One per strategy.
    pub strategies: Vec<StrategyTimeline>,
}

/// The report's measurements for `seed-first-run` (upstream karpenter-capi).
pub(crate) fn reference(trace: &str) -> Option<Reference> {
    (trace == "seed-first-run").then_some(Reference {
        source: "seed field report (upstream karpenter-capi)",
        milestones: MilestoneSecs {
            claim: Some(2.0),
            // The report reads its steps off the NodeClaim's conditions: T+66 s is `Launched`
            // (the provider scales on `Create`; the server took the minute), not the scale.
            scale: None,
            launched: Some(66.0),
            registered: Some(74.0),
            initialized: Some(141.0),
            running: Some(153.0),
            scaled_to_zero: Some(180.0),
        },
    })
}

/// Replays one strategy over a trace. `progress(now, horizon)` is called now and then.
pub fn replay(
    scenario: &Snapshot,
    trace: &Trace,
    strategy: StrategyName,
    progress: &mut dyn FnMut(Ms, Ms),
) -> Result<StrategyTimeline, Error> {
    let mut agent = peers::agent(strategy);
    replay_agent(scenario, trace, agent.as_mut(), progress)
}

/// Replays our controller over a trace with the given configuration, as [`replay`] does for
/// `cost`, and returns its action log too (time, action): benches compare a speed change's
/// replays before and after with it.
pub fn replay_ours_logged(
    scenario: &Snapshot,
    trace: &Trace,
    config: crate::controller::Config,
) -> Result<(StrategyTimeline, Vec<(Ms, String)>), Error> {
    let mut ours = peers::ours::Ours::new(config);
    let timeline = replay_agent(scenario, trace, &mut ours, &mut |_, _| {})?;
    Ok((timeline, std::mem::take(&mut ours.log)))
}

/// Replays one autoscaler (as set up by the caller) over a trace.
pub(crate) fn replay_agent(
    scenario: &Snapshot,
    trace: &Trace,
    agent: &mut dyn peers::Agent,
    progress: &mut dyn FnMut(Ms, Ms),
) -> Result<StrategyTimeline, Error> {
    let strategy = agent.strategy();
    let mut c = SimCluster::new(scenario, trace, agent.mode())?;
    let horizon = trace.steps.last().map_or(0, |s| s.at) + trace.settle;
    let mut events = 0usize;
    let mut same_time = 0usize;
    let mut last_t = -1;
    let mut steps = 0u64;
    while let Some(t) = c.next_time() {
        steps += 1;
        if t > horizon {
            break;
        }
        if t == last_t {
            same_time += 1;
            if same_time > 10_000 {
                c.warn(format!(
                    "stopped at {}s: the autoscaler kept acting without time passing",
                    t / 1000
                ));
                break;
            }
        } else {
            same_time = 0;
            last_t = t;
        }
        c.now = t;
        let mut woke = false;
        while let Some(ev) = c.pop_due(t) {
            events += 1;
            if ev == Event::Wake {
                woke |= c.take_wake();
            } else {
                c.handle(ev);
            }
        }
        settle(&mut c, agent);
        if woke {
            agent.on_wake(&mut c);
            settle(&mut c, agent);
        }
        let nothing_left = c.nothing_left();
        c.rec.check_zero(t, nothing_left);
        if steps.is_multiple_of(256) {
            progress(t, horizon);
        }
    }
    progress(horizon, horizon);
    let end = horizon;
    let (node_hours, cost) = c.rec.totals(end);
    let alive = std::mem::take(&mut c.rec.alive);
    let m = &c.rec.milestones;
    let series: Vec<SeriesPoint> = c
        .rec
        .series
        .iter()
        .map(|p: &Point| SeriesPoint {
            t: p.t as f64 / 1000.0,
            nodes: p.nodes,
            price_per_hour: p.price.as_f64(),
        })
        .collect();
    Ok(StrategyTimeline {
        strategy: strategy.as_str(),
        milestones: MilestoneSecs {
            claim: secs(m.claim),
            scale: secs(m.scale),
            launched: secs(m.launched),
            registered: secs(m.registered),
            initialized: secs(m.initialized),
            running: secs(m.running),
            scaled_to_zero: secs(m.zero),
        },
        time_to_running: TimeToRunning::of(&c.rec),
        max_nodes: c.rec.series.iter().map(|p| p.nodes).max().unwrap_or(0),
        node_hours,
        cost,
        cost_vs_bound: None,
        series,
        passes: agent.passes(),
        events,
        evictions: c.rec.evictions,
        alive,
        nodes_at_end: c.snap.nodes.len(),
        warnings: c.warnings.into_iter().collect(),
    })
}

/// Lets the scheduler bind and the autoscaler see changes until both are quiet.
fn settle(c: &mut SimCluster, agent: &mut dyn peers::Agent) {
    for _ in 0..50 {
        c.schedule();
        if !c.take_changed() {
            return;
        }
        agent.on_change(c);
    }
}

/// Replays every strategy given (in order) over the trace.
pub fn replay_all(
    scenario: &Snapshot,
    trace: &Trace,
    strategies: &[StrategyName],
    progress: &mut dyn FnMut(StrategyName, Ms, Ms),
) -> Result<Timeline, Error> {
    let mut out = Vec::new();
    let horizon = trace.steps.last().map_or(0, |s| s.at) + trace.settle;
    let lower_bound = super::bound::lower_bound(scenario, trace, horizon)?;
    for &s in strategies {
        let mut t = replay(scenario, trace, s, &mut |now, horizon| {
            progress(s, now, horizon)
        })?;
        t.cost_vs_bound = lower_bound.filter(|b| *b > 0.0).map(|b| t.cost / b);
        out.push(t);
    }
    Ok(Timeline {
        trace: trace.name.clone(),
        horizon_seconds: horizon as f64 / 1000.0,
        lower_bound,
        steps: {
            let mut v: Vec<f64> = trace.steps.iter().map(|s| s.at as f64 / 1000.0).collect();
            v.dedup();
            v
        },
        reference: reference(&trace.name),
        strategies: out,
    })
}
