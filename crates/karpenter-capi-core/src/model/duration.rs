//! Go-style durations (`30s`, `5m`, `720h`, `1h30m`) as Kubernetes and Karpenter write them,
//! held as whole seconds, plus Karpenter's `Never`.
//! Hand-written on purpose: Go's `time.ParseDuration` grammar is exact and no crate matches it
//! (jiff alone also accepts `PT1H` and `1h 30m` and rejects `0`, which the API server would not).

use std::fmt;
use std::str::FromStr;

/// A non-negative duration in whole seconds (sub-second parts round up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration(pub u64);

impl GoDuration {
    /// Seconds.
    pub fn as_secs(self) -> u64 {
        self.0
    }
    /// Seconds as a signed number, for timestamp arithmetic.
    pub(crate) fn as_secs_i64(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, m, s) = (self.0 / 3600, (self.0 % 3600) / 60, self.0 % 60);
        if self.0 == 0 {
            return f.write_str("0s");
        }
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if m > 0 {
            write!(f, "{m}m")?;
        }
        if s > 0 {
            write!(f, "{s}s")?;
        }
        Ok(())
    }
}

impl FromStr for GoDuration {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("invalid duration {text:?}: expected a Go duration such as 30s, 5m, 1h30m");
        let t = text.trim();
        // Go's `time.ParseDuration` takes one leading sign: `+` changes nothing (core protects
        // a pod annotated do-not-disrupt `+1h`); a negative duration is never one of ours.
        let t = t.strip_prefix('+').unwrap_or(t);
        if t.is_empty() {
            return Err(bad());
        }
        if t == "0" {
            return Ok(GoDuration(0));
        }
        // Accumulate in nanoseconds so "1.5s" and "500ms" are exact before rounding up.
        let mut total_nanos: u128 = 0;
        let mut rest = t;
        while !rest.is_empty() {
            let num_end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .ok_or_else(bad)?;
            if num_end == 0 {
                return Err(bad());
            }
            let (num, tail) = rest.split_at(num_end);
            let unit_end = tail
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(tail.len());
            let (unit, next) = tail.split_at(unit_end);
            let unit_nanos: u128 = match unit {
                "ns" => 1,
                // Go takes both micro signs: U+00B5 and U+03BC.
                "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => return Err(bad()),
            };
            let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
            if int_part.is_empty() && frac_part.is_empty() {
                return Err(bad());
            }
            let int: u128 = if int_part.is_empty() {
                0
            } else {
                int_part.parse().map_err(|_| bad())?
            };
            let mut value = int.checked_mul(unit_nanos).ok_or_else(bad)?;
            let mut scale = unit_nanos;
            for d in frac_part.chars() {
                let digit = u128::from(d.to_digit(10).ok_or_else(bad)?);
                scale /= 10;
                value += digit * scale;
            }
            total_nanos = total_nanos.checked_add(value).ok_or_else(bad)?;
            rest = next;
        }
        let secs = total_nanos.div_ceil(1_000_000_000);
        u64::try_from(secs).map(GoDuration).map_err(|_| bad())
    }
}

/// A duration that may be `Never` (Karpenter's `consolidateAfter`, `expireAfter`,
/// `terminationGracePeriod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NillableDuration {
    /// The behaviour is disabled.
    Never,
    /// After this long.
    After(GoDuration),
}

impl FromStr for NillableDuration {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim() == "Never" {
            Ok(NillableDuration::Never)
        } else {
            text.parse().map(NillableDuration::After)
        }
    }
}

impl fmt::Display for NillableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NillableDuration::Never => f.write_str("Never"),
            NillableDuration::After(d) => d.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        let cases = [
            ("30s", 30),
            ("5m", 300),
            ("15m", 900),
            ("720h", 2_592_000),
            ("1h30m", 5400),
            ("1.5s", 2),
            ("500ms", 1),
            ("0s", 0),
            ("0", 0),
            // A leading `+`, and both micro signs, as Go's ParseDuration (U-POD-003).
            ("+1h", 3600),
            ("+0", 0),
            ("1500000\u{b5}s", 2),
            ("1500000\u{3bc}s", 2),
        ];
        for (text, secs) in cases {
            assert_eq!(text.parse::<GoDuration>(), Ok(GoDuration(secs)), "{text}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for text in [
            "", "5", "m", "5x", "-5s", "1..2s", "s5", "+", "++1s", "+-1s",
        ] {
            assert!(text.parse::<GoDuration>().is_err(), "{text} should fail");
        }
    }

    #[test]
    fn never_and_display() {
        assert_eq!(
            "Never".parse::<NillableDuration>(),
            Ok(NillableDuration::Never)
        );
        assert_eq!(GoDuration(5400).to_string(), "1h30m");
        assert_eq!(GoDuration(30).to_string(), "30s");
    }
}
