//! The pods the running process saw arrive and leave lately, and so whether the load is falling:
//! what one snapshot cannot show (it holds no pod that left). A cache of the process, carried in
//! [`super::ConsolidationMemo`] as the consolidation state is; a restart loses it, and until the
//! process has watched for a while nothing is known to be leaving, so consolidation replaces
//! nodes exactly as it does without it.

use std::collections::{HashMap, VecDeque};

use jiff::Timestamp;

use super::fnv::Fnv1a;
use crate::model::snapshot::{PodRecord, Snapshot};

/// How far back the load's fall is measured (the arrival window of `cost`'s foresight).
pub(crate) const WINDOW_SECS: i64 = 300;

/// A single fall counts as a trend only while it is at most 1 / STEP_SHARE of the load left.
const STEP_SHARE: i64 = 4;

/// Less watching than this says nothing about a trend.
const MIN_SPAN_SECS: i64 = 120;

/// Requests as `[CPU millicores, memory bytes]`.
pub(crate) type Load = [i64; 2];

/// The pods seen at the last pass and the arrivals and departures within the window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodFlow {
    /// Every counted pod of the last pass, by a hash of its UID (else `namespace/name`).
    seen: HashMap<u64, Load>,
    /// When this process first watched (Unix seconds).
    since: Option<i64>,
    /// When it last watched.
    last: Option<i64>,
    /// Within the window: when, and the load that left (positive) or arrived (negative).
    events: VecDeque<(i64, Load)>,
}

/// A pod whose requests the load counts: not a DaemonSet's or a static pod, not finished.
fn counted(p: &PodRecord) -> bool {
    !p.terminal && !p.daemon && !p.mirror
}

fn key(p: &PodRecord) -> u64 {
    let mut h = Fnv1a::new();
    match &p.uid {
        Some(uid) => h.field(uid),
        None => {
            h.field(&p.demand.namespace);
            h.field(&p.demand.name);
        }
    }
    h.finish()
}

impl PodFlow {
    /// Takes in this pass's pods: those gone since the last pass left now, the new ones arrived
    /// now. A clock that went back starts the watch over.
    pub(crate) fn observe(&mut self, snapshot: &Snapshot, now: Timestamp) {
        let t = now.as_second();
        if self.last.is_some_and(|l| t < l) {
            *self = PodFlow::default();
        }
        let mut seen = HashMap::with_capacity(snapshot.pods.len());
        for p in snapshot.pods.iter().filter(|p| counted(p)) {
            let r = &p.demand.requests;
            seen.insert(key(p), [r.cpu_millis, r.memory_bytes]);
        }
        if self.last.is_some() {
            let mut net: Load = [0, 0];
            for (k, r) in &self.seen {
                if !seen.contains_key(k) {
                    net[0] = net[0].saturating_add(r[0]);
                    net[1] = net[1].saturating_add(r[1]);
                }
            }
            for (k, r) in &seen {
                if !self.seen.contains_key(k) {
                    net[0] = net[0].saturating_sub(r[0]);
                    net[1] = net[1].saturating_sub(r[1]);
                }
            }
            if net != [0, 0] {
                self.events.push_back((t, net));
            }
        } else {
            self.since = Some(t);
        }
        self.seen = seen;
        self.last = Some(t);
        while self.events.front().is_some_and(|e| e.0 <= t - WINDOW_SECS) {
            self.events.pop_front();
        }
    }

    /// When [`PodFlow::fall`] next changes with no pod coming or going: a departure or arrival
    /// leaving the window, or (with some in it) the watch becoming long enough.
    pub(crate) fn changes_at(&self, now: Timestamp) -> Option<Timestamp> {
        let t = now.as_second();
        let since = self.since?;
        if self.events.is_empty() {
            return None;
        }
        self.events
            .iter()
            .map(|e| e.0 + WINDOW_SECS)
            .chain(std::iter::once(since + MIN_SPAN_SECS))
            .filter(|&at| at > t)
            .min()
            .and_then(|at| Timestamp::from_second(at).ok())
    }

    /// The load's net fall per second over the window (departures less arrivals), when this
    /// process has watched long enough and some resource is falling; None otherwise.
    pub(crate) fn fall(&self, now: Timestamp) -> Option<[f64; 2]> {
        let t = now.as_second();
        let span = (t - self.since?).min(WINDOW_SECS);
        if span < MIN_SPAN_SECS {
            return None;
        }
        // A fall seen at one moment only may be a step (a batch that finished) rather than a
        // slide that goes on: it counts only while it is a small part of the load left (a
        // batch's end takes most of it at once, a scale-down step a little).
        let mut net = [0i64; 2];
        let mut leaving = [0usize; 2];
        for (_, r) in self.events.iter().filter(|e| e.0 > t - span) {
            for k in 0..2 {
                net[k] = net[k].saturating_add(r[k]);
                leaving[k] += usize::from(r[k] > 0);
            }
        }
        let mut left = [0i64; 2];
        for r in self.seen.values() {
            left[0] = left[0].saturating_add(r[0]);
            left[1] = left[1].saturating_add(r[1]);
        }
        let rate = [0, 1].map(|k| {
            let trend = leaving[k] >= 2 || net[k].saturating_mul(STEP_SHARE) <= left[k];
            if net[k] > 0 && trend {
                net[k] as f64 / span as f64
            } else {
                0.0
            }
        });
        (rate[0] > 0.0 || rate[1] > 0.0).then_some(rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    /// Pods `names` of 250m / 256Mi each, bound, plus a DaemonSet pod that never counts.
    fn pods(names: &[&str]) -> Snapshot {
        let mut text = String::from(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: ds, namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: d, uid: u, controller: true}]}\nspec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n",
        );
        for n in names {
            text.push_str(&format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {n}, namespace: default}}\nspec: {{nodeName: node-1, containers: [{{name: c, resources: {{requests: {{cpu: 250m, memory: 256Mi}}}}}}]}}\n"
            ));
        }
        snapshot_from_sources(&[Source {
            name: "pods.yaml".into(),
            text,
        }])
        .unwrap()
    }

    fn watched(passes: &[(i64, &[&str])]) -> PodFlow {
        let mut f = PodFlow::default();
        for (t, names) in passes {
            f.observe(&pods(names), at(*t));
        }
        f
    }

    const MIB256: f64 = 268_435_456.0;

    #[test]
    fn a_slide_is_a_fall_over_the_window() {
        let f = watched(&[
            (0, &["a", "b", "c", "d", "e", "f", "g", "h"]),
            (100, &["a", "b", "c", "d", "e", "f"]),
            (200, &["a", "b", "c", "d", "e"]),
        ]);
        // Three pods of 250m / 256Mi left in 200 s.
        assert_eq!(f.fall(at(200)), Some([750.0 / 200.0, 3.0 * MIB256 / 200.0]));
        // Too short a watch says nothing.
        assert_eq!(f.fall(at(100)), None);
        // The window is 300 s: at 450 s only the pod that left at 200 s is in it.
        assert_eq!(f.fall(at(450)), Some([250.0 / 300.0, MIB256 / 300.0]));
        // At 500 s nothing left within the window.
        assert_eq!(f.fall(at(500)), None);
    }

    #[test]
    fn arrivals_offset_departures_and_a_recreated_pod_is_both() {
        // An evicted pod recreated under a new name in the same pass: no fall.
        let f = watched(&[(0, &["a", "b", "c"]), (150, &["a", "b", "c2"])]);
        assert_eq!(f.fall(at(150)), None);
        // Two leave, two arrive a pass later: no fall either.
        let f = watched(&[
            (0, &["a", "b", "c", "d"]),
            (100, &["a", "b"]),
            (200, &["a", "b", "e", "f"]),
        ]);
        assert_eq!(f.fall(at(200)), None);
    }

    #[test]
    fn one_step_that_takes_most_of_the_load_is_not_a_slide() {
        // A batch finished: six of eight pods left at once.
        let f = watched(&[
            (0, &["a", "b", "c", "d", "e", "f", "g", "h"]),
            (150, &["a", "b"]),
        ]);
        assert_eq!(f.fall(at(150)), None);
        // One of eight: a scale-down step, a quarter of what is left or less.
        let f = watched(&[
            (0, &["a", "b", "c", "d", "e", "f", "g", "h"]),
            (150, &["a", "b", "c", "d", "e", "f", "g"]),
        ]);
        assert_eq!(f.fall(at(150)), Some([250.0 / 150.0, MIB256 / 150.0]));
    }

    #[test]
    fn a_clock_that_goes_back_starts_the_watch_over() {
        let f = watched(&[
            (0, &["a", "b", "c", "d"]),
            (100, &["a", "b", "c"]),
            (200, &["a", "b"]),
            (50, &["a"]),
        ]);
        assert_eq!(f.since, Some(1_800_000_050));
        assert!(f.events.is_empty());
        assert_eq!(f.fall(at(300)), None);
    }
}
