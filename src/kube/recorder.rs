//! Event de-duplication as Karpenter's recorder does it (core `pkg/events/recorder.go`): an
//! Event the same as one recorded within [`DEDUPE_WINDOW`] (same object, reason and message) is
//! not sent again, so a node blocked for an hour is not an Event every pass. Process memory
//! only, like core's cache: a restart may repeat an Event once, and nothing is decided from it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Core's default de-duplication timeout.
pub const DEDUPE_WINDOW: Duration = Duration::from_secs(120);

/// Which Events were recorded recently.
#[derive(Debug)]
pub struct Dedupe {
    window: Duration,
    seen: Mutex<HashMap<String, Instant>>,
}

impl Default for Dedupe {
    fn default() -> Dedupe {
        Dedupe::new(DEDUPE_WINDOW)
    }
}

impl Dedupe {
    /// A cache forgetting Events after `window`.
    pub fn new(window: Duration) -> Dedupe {
        Dedupe {
            window,
            seen: Mutex::new(HashMap::new()),
        }
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
}
