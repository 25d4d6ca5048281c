//! Event de-duplication as Karpenter's recorder does it (core `pkg/events/recorder.go`): an
//! Event the same as one recorded within [`DEDUPE_WINDOW`] (same object, reason and message) is
//! not sent again, so a node blocked for an hour is not an Event every pass. Process memory
//! only, like core's cache: a restart may repeat an Event once, and nothing is decided from it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Core's default de-duplication timeout.
pub const DEDUPE_WINDOW: Duration = Duration::from_secs(120);

/// Core's nomination rate (`PodNominationRateLimiter`): tokens per second and burst.
pub const NOMINATION_RATE: (f64, f64) = (5.0, 10.0);

/// A token bucket (client-go's `NewTokenBucketRateLimiter`, without waiting: no token, no
/// Event).
#[derive(Debug)]
struct Bucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Which Events were recorded recently, and the nomination bucket.
#[derive(Debug)]
pub struct Dedupe {
    window: Duration,
    seen: Mutex<HashMap<String, Instant>>,
    bucket: Mutex<Bucket>,
}

impl Default for Dedupe {
    fn default() -> Dedupe {
        Dedupe::new(DEDUPE_WINDOW)
    }
}

impl Dedupe {
    /// A cache forgetting Events after `window`.
    pub fn new(window: Duration) -> Dedupe {
        let (per_second, burst) = NOMINATION_RATE;
        Dedupe {
            window,
            seen: Mutex::new(HashMap::new()),
            bucket: Mutex::new(Bucket {
                per_second,
                burst,
                tokens: burst,
                at: Instant::now(),
            }),
        }
    }

    /// Whether a rate-limited Event may go now (takes a token if so).
    pub fn token(&self) -> bool {
        self.bucket
            .lock()
            .map(|mut b| b.take(Instant::now()))
            .unwrap_or(true)
    }

    /// Whether an Event with this key should be sent now (and remembers it if so).
    pub fn first(&self, key: &str) -> bool {
        let now = Instant::now();
        let Ok(mut seen) = self.seen.lock() else {
            // A panic elsewhere poisoned the cache: send rather than lose the Event.
            return true;
        };
        seen.retain(|_, at| now.saturating_duration_since(*at) < self.window);
        if seen.contains_key(key) {
            return false;
        }
        seen.insert(key.to_string(), now);
        true
    }
}

/// The key of an Event: the object, the reason and the message.
pub fn key(kind: &str, namespace: &str, name: &str, reason: &str, message: &str) -> String {
    format!("{kind}\u{0}{namespace}\u{0}{name}\u{0}{reason}\u{0}{message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_event_is_sent_once_per_window() {
        let d = Dedupe::default();
        let k = key("Node", "", "n1", "DisruptionBlocked", "Pod has ...");
        assert!(d.first(&k));
        assert!(!d.first(&k));
        assert!(d.first(&key("Node", "", "n2", "DisruptionBlocked", "Pod has ...")));
        let short = Dedupe::new(Duration::ZERO);
        assert!(short.first(&k));
        assert!(short.first(&k), "a zero window forgets at once");
    }

    #[test]
    fn nominations_go_in_bursts_of_ten_then_five_a_second() {
        let d = Dedupe::default();
        let sent = (0..500).filter(|_| d.token()).count();
        // The burst, plus what refilled while the loop ran (microseconds: none).
        assert_eq!(sent, 10);
        let start = Instant::now();
        let mut b = Bucket {
            per_second: 5.0,
            burst: 10.0,
            tokens: 0.0,
            at: start,
        };
        assert!(!b.take(start));
        assert!(b.take(start + Duration::from_millis(200)));
        assert!(!b.take(start + Duration::from_millis(200)));
        let later = start + Duration::from_secs(60);
        assert_eq!(
            (0..20).filter(|_| b.take(later)).count(),
            10,
            "never more than the burst"
        );
    }
}
