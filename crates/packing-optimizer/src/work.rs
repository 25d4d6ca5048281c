//! The optimizer's budget, counted in work rather than time: LP pivots (weighted by the size of
//! the basis and the pool they scan), pricing search nodes, set-cover search nodes and local
//! search moves all spend units from one meter, and each phase stops at its share of the total.
//! The same input therefore gives the same plan on an idle or a loaded machine, in debug or in
//! release. A wall-clock cap remains only as a safety net that normal inputs never reach; when
//! it is hit the plan is whatever the phases had found, and [`Work::cut_short`] says so.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How often (in calls to [`Work::spend`]) the wall clock is read: reading it is cheap, but not
/// free in the LP's inner loop.
const CLOCK_EVERY: u32 = 64;

/// The plugin's budget for a provisioning batch of at most 500 pods, here so that the plugin's
/// `cost` strategy and the optimizer's own tests run the same budget.
pub const SMALL_BATCH_WORK: u64 = 15_000_000;
/// The plugin's budget for a larger batch.
pub const LARGE_BATCH_WORK: u64 = 50_000_000;

thread_local! {
    /// Meters of this thread whose safety net was hit, ever: a caller that runs many optimizer
    /// searches deep in its own code (the controller's consolidation trials) compares it before
    /// and after to report that its result depended on the clock.
    static CUT_SHORT: Cell<u64> = const { Cell::new(0) };
}

/// How many optimizer runs on this thread were cut short by the safety net so far.
pub fn cut_short_runs() -> u64 {
    CUT_SHORT.with(Cell::get)
}

/// A work meter: units spent so far, the total allowed, and the wall-clock safety net.
#[derive(Debug)]
pub struct Work {
    limit: u64,
    used: Cell<u64>,
    wall: Option<Instant>,
    calls: Cell<u32>,
    cut: Cell<bool>,
}

impl Work {
    /// A meter of `limit` units, with the safety net `cap` from now.
    pub fn new(limit: u64, cap: Duration) -> Work {
        Work {
            limit,
            used: Cell::new(0),
            wall: Instant::now().checked_add(cap),
            calls: Cell::new(0),
            cut: Cell::new(false),
        }
    }

    /// A meter without a limit in units and without a safety net, for callers that bound the
    /// work otherwise (tests of single phases).
    pub fn unlimited() -> Work {
        Work {
            limit: u64::MAX,
            used: Cell::new(0),
            wall: None,
            calls: Cell::new(0),
            cut: Cell::new(false),
        }
    }

    /// Counts `units` of work; every few calls, checks the safety net.
    pub fn spend(&self, units: u64) {
        self.used.set(self.used.get().saturating_add(units));
        let calls = self.calls.get().wrapping_add(1);
        self.calls.set(calls);
        if calls.is_multiple_of(CLOCK_EVERY)
            && !self.cut.get()
            && self.wall.is_some_and(|w| Instant::now() >= w)
        {
            self.cut.set(true);
            CUT_SHORT.with(|c| c.set(c.get() + 1));
        }
    }

    /// Units spent so far.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// The total allowed.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the wall-clock safety net was hit: the plan then depends on the machine's speed.
    pub fn cut_short(&self) -> bool {
        self.cut.get()
    }

    /// A stop at `num / den` of the total: a phase runs until the meter reaches it.
    pub fn share(&self, num: u64, den: u64) -> Stop<'_> {
        let at = u64::try_from(u128::from(self.limit) * u128::from(num) / u128::from(den.max(1)))
            .unwrap_or(u64::MAX);
        Stop { work: self, at }
    }

    /// A stop `num / den` of the total after the units spent so far (at most the total): a
    /// phase that may spend that much of what is left.
    pub fn from_now(&self, num: u64, den: u64) -> Stop<'_> {
        let share = self.share(num, den).at;
        Stop {
            work: self,
            at: self.used.get().saturating_add(share).min(self.limit),
        }
    }

    /// A stop at the whole total.
    pub fn all(&self) -> Stop<'_> {
        Stop {
            work: self,
            at: self.limit,
        }
    }
}

/// Where a phase ends on the meter.
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    work: &'a Work,
    at: u64,
}

impl Stop<'_> {
    /// Whether the phase's share is spent (or the safety net was hit).
    pub fn passed(&self) -> bool {
        self.work.used.get() >= self.at || self.work.cut.get()
    }

    /// Counts `units` of work on the meter.
    pub fn spend(&self, units: u64) {
        self.work.spend(units);
    }

    /// Units left before this stop.
    pub fn left(&self) -> u64 {
        self.at.saturating_sub(self.work.used.get())
    }

    /// This stop, or `units` from the units spent so far if that comes first: a sub-search's
    /// own cap within its phase.
    pub fn capped(&self, units: u64) -> Stop<'_> {
        Stop {
            work: self.work,
            at: self.at.min(self.work.used.get().saturating_add(units)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_stop_at_their_fraction_of_the_units() {
        let w = Work::new(1_000, Duration::from_secs(3600));
        let first = w.share(6, 10);
        w.spend(599);
        assert!(!first.passed());
        w.spend(1);
        assert!(first.passed());
        assert!(!w.all().passed());
        w.spend(400);
        assert!(w.all().passed());
        assert_eq!(w.used(), 1_000);
        assert!(!w.cut_short());
    }

    #[test]
    fn a_spent_safety_net_stops_every_phase_and_is_reported() {
        let w = Work::new(u64::MAX, Duration::ZERO);
        let stop = w.all();
        let start = cut_short_runs();
        for _ in 0..CLOCK_EVERY {
            w.spend(1);
        }
        assert_eq!(cut_short_runs(), start + 1);
        let before = cut_short_runs();
        for _ in 0..CLOCK_EVERY {
            w.spend(1);
        }
        assert!(w.cut_short());
        assert!(stop.passed());
        assert_eq!(cut_short_runs(), before, "counted once per meter");
    }
}
