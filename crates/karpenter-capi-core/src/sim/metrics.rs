//! What a replay measured: per-pod time to Running, nodes and cost per hour over time,
//! node-hours and total cost, and the milestones the seed field report gives (first NodeClaim,
//! first scale-up, first server, first Node registered and initialized, the first wave Running, scale-to-zero).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::Ms;
use crate::model::flavor::Price;

/// When the first of each thing happened, in milliseconds from the start of the trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Milestones {
    /// First NodeClaim created.
    pub(crate) claim: Option<Ms>,
    /// First MachineDeployment replicas raised.
    pub(crate) scale: Option<Ms>,
    /// First Machine with a providerID: the server exists (Karpenter: the claim can be
    /// `Launched`).
    pub(crate) launched: Option<Ms>,
    /// First Node registered (Karpenter: the claim's `Registered`; Cluster Autoscaler: joined).
    pub(crate) registered: Option<Ms>,
    /// First Node initialized (Karpenter: the claim's `Initialized`; Cluster Autoscaler: Ready).
    pub(crate) initialized: Option<Ms>,
    /// Every pod of the first step Running.
    pub(crate) running: Option<Ms>,
    /// From the load leaving to no NodeClaim, no Machine and every MachineDeployment at zero.
    pub(crate) zero: Option<Ms>,
}

/// A point of the nodes/cost series: from `t` on, this many Machines cost this much per hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Point {
    /// Time.
    pub(crate) t: Ms,
    /// Machines (billed from creation until gone).
    pub(crate) nodes: usize,
    /// Their summed price per hour.
    pub(crate) price: Price,
}

/// Collects what happens during one replay.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    /// Milestones.
    pub(crate) milestones: Milestones,
    /// The series, one point per change.
    pub(crate) series: Vec<Point>,
    machines: BTreeMap<String, Price>,
    pods: HashMap<String, (Ms, Option<Ms>)>,
    first_wave: BTreeSet<String>,
    first_wave_closed: bool,
    load_removed: Option<Ms>,
    /// Pods evicted (and recreated by their workload).
    pub(crate) evictions: usize,
    /// The trace's pods alive (created, not yet removed; pending ones included) over time: a
    /// point per change.
    pub(crate) alive: Vec<(Ms, usize)>,
    /// Kubernetes Events written.
    pub(crate) events: usize,
}

fn first(slot: &mut Option<Ms>, now: Ms) {
    if slot.is_none() {
        *slot = Some(now);
    }
}

impl Recorder {
    /// A NodeClaim was created.
    pub(crate) fn claim(&mut self, now: Ms) {
        first(&mut self.milestones.claim, now);
    }
    /// A MachineDeployment's replicas went up.
    pub(crate) fn scale_up(&mut self, now: Ms) {
        first(&mut self.milestones.scale, now);
    }
    /// A Machine got its providerID.
    pub(crate) fn launched(&mut self, now: Ms) {
        first(&mut self.milestones.launched, now);
    }
    /// A Node was registered.
    pub(crate) fn registered(&mut self, now: Ms) {
        first(&mut self.milestones.registered, now);
    }
    /// A Node was initialized.
    pub(crate) fn initialized(&mut self, now: Ms) {
        first(&mut self.milestones.initialized, now);
    }

    /// A Machine now exists (billing starts) or is gone (billing stops).
    pub(crate) fn machine(&mut self, now: Ms, key: &str, price: Option<Price>) {
        match price {
            Some(p) => {
                self.machines.insert(key.to_string(), p);
            }
            None => {
                self.machines.remove(key);
            }
        }
        let point = Point {
            t: now,
            nodes: self.machines.len(),
            price: Price(self.machines.values().map(|p| p.0).sum()),
        };
        match self.series.last_mut() {
            Some(last) if last.t == now => *last = point,
            _ => self.series.push(point),
        }
    }

    /// The trace's workloads now have `count` pods.
    pub(crate) fn alive(&mut self, now: Ms, count: usize) {
        match self.alive.last_mut() {
            Some(last) if last.0 == now => last.1 = count,
            _ => self.alive.push((now, count)),
        }
    }

    /// Machines billed right now.
    pub(crate) fn machines(&self) -> usize {
        self.machines.len()
    }

    /// A pod was created by the trace (or recreated after an eviction).
    pub(crate) fn pod_created(&mut self, now: Ms, key: &str, first_wave: bool) {
        self.pods.insert(key.to_string(), (now, None));
        if first_wave && !self.first_wave_closed {
            self.first_wave.insert(key.to_string());
        }
    }

    /// Closes the first wave: later pods do not count toward the `running` milestone.
    pub(crate) fn close_first_wave(&mut self) {
        self.first_wave_closed = true;
    }

    /// A pod is Running.
    pub(crate) fn pod_running(&mut self, now: Ms, key: &str) {
        if let Some((_, running)) = self.pods.get_mut(key) {
            first(running, now);
        }
        if self.milestones.running.is_none()
            && self.first_wave_closed
            && !self.first_wave.is_empty()
            && self
                .first_wave
                .iter()
                .all(|k| self.pods.get(k).is_some_and(|(_, r)| r.is_some()))
        {
            self.milestones.running = Some(now);
        }
    }

    /// The trace's workloads now have no pod (`true`) or have some again (`false`).
    pub(crate) fn load(&mut self, now: Ms, gone: bool) {
        if gone {
            if self.load_removed.is_none() {
                self.load_removed = Some(now);
                self.milestones.zero = None;
            }
        } else {
            self.load_removed = None;
        }
    }

    /// Records scale-to-zero once nothing is left (called after every step of time).
    pub(crate) fn check_zero(&mut self, now: Ms, nothing_left: bool) {
        if let (Some(removed), None) = (self.load_removed, self.milestones.zero)
            && nothing_left
        {
            self.milestones.zero = Some(now - removed);
        }
    }

    /// Times to Running (ms, sorted) and how many pods never ran.
    pub(crate) fn times_to_running(&self) -> (Vec<Ms>, usize) {
        let mut times: Vec<Ms> = self
            .pods
            .values()
            .filter_map(|(c, r)| r.map(|r| r - c))
            .collect();
        times.sort_unstable();
        let never = self.pods.values().filter(|(_, r)| r.is_none()).count();
        (times, never)
    }

    /// Node-hours and total cost from the series up to `end`.
    pub(crate) fn totals(&self, end: Ms) -> (f64, f64) {
        let mut node_ms: i128 = 0;
        let mut cost_nano_ms: i128 = 0;
        for (i, p) in self.series.iter().enumerate() {
            let until = self.series.get(i + 1).map_or(end, |n| n.t).min(end);
            let dt = i128::from((until - p.t).max(0));
            node_ms += dt * p.nodes as i128;
            cost_nano_ms += dt * i128::from(p.price.0);
        }
        let hour = 3_600_000.0;
        (
            node_ms as f64 / hour,
            cost_nano_ms as f64 / hour / Price::UNIT as f64,
        )
    }
}

/// Nearest-rank percentile of sorted values.
pub(crate) fn percentile(sorted: &[Ms], pct: usize) -> Option<Ms> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (pct * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// Seconds, for reports.
pub(crate) fn secs(ms: Option<Ms>) -> Option<f64> {
    ms.map(|m| m as f64 / 1000.0)
}

/// Time to Running over the pods of a replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeToRunning {
    /// Pods that reached Running.
    pub(crate) pods: usize,
    /// Pods removed (or still pending at the end) before ever running.
    pub(crate) never_ran: usize,
    /// Median, seconds.
    pub p50: Option<f64>,
    /// 95th percentile, seconds.
    pub p95: Option<f64>,
    /// Maximum, seconds.
    pub max: Option<f64>,
}

impl TimeToRunning {
    /// From the recorder.
    pub(crate) fn of(rec: &Recorder) -> TimeToRunning {
        let (times, never) = rec.times_to_running();
        TimeToRunning {
            pods: times.len(),
            never_ran: never,
            p50: secs(percentile(&times, 50)),
            p95: secs(percentile(&times, 95)),
            max: secs(times.last().copied()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<Ms> = (1..=20).map(|i| i * 1000).collect();
        assert_eq!(percentile(&v, 50), Some(10_000));
        assert_eq!(percentile(&v, 95), Some(19_000));
        assert_eq!(percentile(&v, 100), Some(20_000));
        assert_eq!(percentile(&[], 50), None);
        assert_eq!(percentile(&[7], 95), Some(7));
    }

    #[test]
    fn totals_integrate_the_series() {
        let mut r = Recorder::default();
        r.machine(0, "a", Some(Price(100_000_000))); // 0.1/h
        r.machine(1_800_000, "b", Some(Price(200_000_000))); // +0.2/h after 30 min
        r.machine(3_600_000, "a", None);
        let (node_hours, cost) = r.totals(7_200_000);
        // a: 1 h; b: 1.5 h.
        assert!((node_hours - 2.5).abs() < 1e-9, "{node_hours}");
        assert!((cost - (0.1 + 0.2 * 1.5)).abs() < 1e-9, "{cost}");
        assert_eq!(r.series.len(), 3);
        assert_eq!(r.series[2].nodes, 1);
    }

    #[test]
    fn running_milestone_waits_for_the_whole_first_wave() {
        let mut r = Recorder::default();
        r.pod_created(0, "a", true);
        r.pod_created(0, "b", true);
        r.close_first_wave();
        r.pod_created(5, "c", true);
        r.pod_running(10, "a");
        assert_eq!(r.milestones.running, None);
        r.pod_running(20, "b");
        assert_eq!(r.milestones.running, Some(20));
        let (times, never) = r.times_to_running();
        assert_eq!((times, never), (vec![10, 20], 1));
    }
}
