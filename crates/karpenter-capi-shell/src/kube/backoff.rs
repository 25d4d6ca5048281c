//! Per-object retry backoff for continuous mode: an action that failed is not retried on its
//! object until its delay has passed (100 ms doubling to 10 s per object, reset by a success),
//! while every other action, and the passes themselves, keep their normal cadence.
//!
//! Mirrors the rate limiter of core's eviction queue
//! (`pkg/controllers/node/termination/terminator/eviction.go` `NewQueue`: client-go's
//! `ItemExponentialFailureRateLimiter` with `evictionQueueBaseDelay` 100 ms and
//! `evictionQueueMaxDelay` 10 s; `Forget` on success), applied to every action, keyed by the
//! action's target (`Pod/ns/name`, `Machine/ns/name`, ...).
//! Kept hand-written rather than backon: client-go's limiter has no jitter and its delays are
//! part of the behaviour we mirror (and test) exactly; backon serves the jittered retries.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

/// The first retry delay of an object.
pub const BASE_DELAY: Duration = Duration::from_millis(100);
/// The longest retry delay of an object.
pub const MAX_DELAY: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    until: Instant,
}

/// The objects backing off after failures, by action target.
#[derive(Debug, Default)]
pub struct ObjectBackoff {
    entries: BTreeMap<String, Entry>,
}

impl ObjectBackoff {
    /// The delay after the `failures`-th consecutive failure (1-based): 100 ms, 200 ms, 400 ms,
    /// ... capped at 10 s.
    pub fn delay(failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(20);
        BASE_DELAY.saturating_mul(1 << exp).min(MAX_DELAY)
    }

    /// Records a failure of the action on `target` at `now`; returns the delay before it may be
    /// tried again.
    pub fn failed(&mut self, target: &str, now: Instant) -> Duration {
        let failures = self.entries.get(target).map_or(0, |e| e.failures) + 1;
        let delay = ObjectBackoff::delay(failures);
        self.entries.insert(
            target.to_string(),
            Entry {
                failures,
                until: now + delay,
            },
        );
        delay
    }

    /// Forgets `target` after a success.
    pub fn succeeded(&mut self, target: &str) {
        self.entries.remove(target);
    }

    /// Keeps only the targets still planned (an object no longer needing its action has
    /// nothing to retry).
    pub fn retain_planned(&mut self, planned: &BTreeSet<&str>) {
        self.entries.retain(|t, _| planned.contains(t.as_str()));
    }

    /// The targets not to be tried at `now`.
    pub fn held(&self, now: Instant) -> BTreeSet<String> {
        self.entries
            .iter()
            .filter(|(_, e)| e.until > now)
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Consecutive failures of `target` so far.
    pub fn failures(&self, target: &str) -> u32 {
        self.entries.get(target).map_or(0, |e| e.failures)
    }

    /// The earliest time a held target may be tried again.
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        self.entries
            .values()
            .map(|e| e.until)
            .filter(|u| *u > now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_100ms_to_10s_per_object_and_reset_on_success() {
        let ms = |n| Duration::from_millis(n);
        let delays: Vec<Duration> = (1..=10).map(ObjectBackoff::delay).collect();
        assert_eq!(
            delays,
            vec![
                ms(100),
                ms(200),
                ms(400),
                ms(800),
                ms(1600),
                ms(3200),
                ms(6400),
                ms(10_000),
                ms(10_000),
                ms(10_000)
            ]
        );
        assert_eq!(ObjectBackoff::delay(u32::MAX), MAX_DELAY);
        let t0 = Instant::now();
        let mut b = ObjectBackoff::default();
        assert_eq!(b.failed("Pod/default/a", t0), ms(100));
        assert_eq!(b.failed("Pod/default/a", t0), ms(200));
        assert_eq!(
            b.failed("Pod/default/b", t0),
            ms(100),
            "each object its own"
        );
        assert_eq!(
            b.held(t0 + ms(150)),
            BTreeSet::from(["Pod/default/a".to_string()])
        );
        assert!(b.held(t0 + ms(200)).is_empty());
        assert_eq!(b.next_due(t0), Some(t0 + ms(100)));
        b.succeeded("Pod/default/a");
        assert_eq!(b.failures("Pod/default/a"), 0);
        assert_eq!(b.failed("Pod/default/a", t0), ms(100), "back to the base");
        b.retain_planned(&BTreeSet::from(["Pod/default/b"]));
        assert_eq!(b.failures("Pod/default/a"), 0);
        assert_eq!(b.failures("Pod/default/b"), 1);
    }
}
