//! The one deterministic generator of the workspace: a 64-bit LCG (Knuth's MMIX constants, top
//! 31 bits out), so a seed gives the same draws on every machine, build and toolchain, with no
//! dependency. The generated traces (`sim::generated`) and every generated test and bench input
//! are drawn from it. This file is also the testkit's `rng` module (compiled there by path, so
//! the testkit keeps no dependency on the crates it tests); its sequence must never change (the
//! named traces' replay figures and digests such as `same_plan`'s are computed over its draws).

/// A 64-bit linear congruential generator; the state is the field.
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The generator of `seed` xored with 2^64/φ, one draw discarded: small neighbouring seeds
    /// (1, 2, 3, ...) start far apart.
    pub fn mixed(seed: u64) -> Lcg {
        let mut g = Lcg(seed ^ 0x9e37_79b9_7f4a_7c15);
        g.next();
        g
    }

    /// The next draw, in `0..2^31`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::try_from(self.next()).unwrap_or(0) % items.len()]
    }

    /// True with `percent` in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// A draw in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An integer in `lo..=hi`; `lo` (and no draw) when `hi <= lo`.
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    /// Uniform in `[lo, hi)`, in steps of 2^-20 of the width.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.below(1 << 20) as f64 / f64::from(1u32 << 20))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequence is fixed: these draws are what every generated input was built from.
    #[test]
    fn the_sequence_never_changes() {
        let mut r = Lcg(42);
        let draws: Vec<u64> = (0..4).map(|_| r.next()).collect();
        let mut again = Lcg(42);
        assert_eq!(draws, (0..4).map(|_| again.next()).collect::<Vec<_>>());
        let mut s = Lcg(0);
        // 0 * a + c, top 31 bits.
        assert_eq!(s.next(), 1_442_695_040_888_963_407 >> 33);
    }

    /// `mixed` is the plain generator of the scrambled seed one draw on, and `between` draws
    /// once unless the range is a single value.
    #[test]
    fn mixed_and_between_are_the_plain_draws() {
        let mut m = Lcg::mixed(3);
        let mut plain = Lcg(3 ^ 0x9e37_79b9_7f4a_7c15);
        plain.next();
        assert_eq!(m.between(10, 40), 10 + (plain.next() % 31) as i64);
        assert_eq!(m.between(5, 5), 5);
        assert_eq!(m.between(7, 2), 7);
        assert_eq!(m.next(), plain.next());
    }
}
