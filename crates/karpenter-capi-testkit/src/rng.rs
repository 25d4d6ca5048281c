//! The deterministic generator test inputs are drawn from: one 64-bit LCG (Knuth's MMIX
//! constants, top 31 bits out), so a seed gives the same inputs on every machine, build and
//! toolchain, with no dependency. Every generated test and bench uses this one definition; its
//! sequence must never change (digests such as `same_plan`'s are computed over its draws).

/// A 64-bit linear congruential generator; the state is the field.
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
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
}
