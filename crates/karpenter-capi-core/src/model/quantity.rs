//! Exact parsing of Kubernetes resource quantities (`100m`, `4`, `8Gi`, `8G`, `1.5`, `2e3`) into
//! integers: millicores for CPU, whole units (bytes, counts) for everything else. Never floats.
//! Hand-written on purpose: the quantity crates parse to floats or lose the suffix rules
//! (`8G` vs `8Gi`, `2e3`, rounding up to millis as apimachinery does); fit checks need exact integers.

use std::fmt;

/// Why a quantity string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuantityError {
    /// The text as given.
    pub(crate) text: String,
    /// What is wrong with it.
    pub(crate) reason: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid quantity {:?}: {} (expected e.g. 500m, 4, 8Gi, 8G)",
            self.text, self.reason
        )
    }
}

impl std::error::Error for QuantityError {}

/// A parsed quantity: `mantissa × 10^exp10 × 2^exp2`, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Exact {
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

fn parse_exact(text: &str) -> Result<Exact, QuantityError> {
    let err = |reason| QuantityError {
        text: text.to_string(),
        reason,
    };
    let t = text.trim();
    let body = t.strip_prefix('+').unwrap_or(t);
    if body.starts_with('-') {
        return Err(err("resource quantities cannot be negative"));
    }
    let num_end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(num_end);
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err("no number"));
    }
    if frac_part.contains('.') {
        return Err(err("more than one decimal point"));
    }
    let mut mantissa: u128 = 0;
    for d in int_part.chars().chain(frac_part.chars()) {
        let digit = u128::from(d.to_digit(10).ok_or_else(|| err("not a number"))?);
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(digit))
            .ok_or_else(|| err("too many digits"))?;
    }
    let frac_len = i32::try_from(frac_part.len()).map_err(|_| err("too many digits"))?;
    let mut exp10 = -frac_len;
    let mut exp2 = 0;
    match suffix {
        "" => {}
        "Ki" => exp2 = 10,
        "Mi" => exp2 = 20,
        "Gi" => exp2 = 30,
        "Ti" => exp2 = 40,
        "Pi" => exp2 = 50,
        "Ei" => exp2 = 60,
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        s if s.starts_with(['e', 'E']) => {
            let exp: i32 = s[1..].parse().map_err(|_| err("unknown suffix"))?;
            // Wide enough for any value the API server accepts (`1e50` is valid); what does not
            // fit in an i64 is reported by the callers, never computed.
            if !(-10_000..=10_000).contains(&exp) {
                return Err(err("exponent out of range"));
            }
            exp10 += exp;
        }
        _ => return Err(err("unknown suffix")),
    }
    Ok(Exact {
        mantissa,
        exp10,
        exp2,
    })
}

impl Exact {
    /// `self × 10^scale`, rounded up to an integer, as Kubernetes rounds `Value()`/`MilliValue()`;
    /// `None` when it does not fit in an `i64`.
    fn scaled_ceil(self, scale: i32) -> Option<i64> {
        if self.mantissa == 0 {
            return Some(0);
        }
        let exp10 = self.exp10 + scale;
        // Beyond u128 the value is either far above i64::MAX or strictly between 0 and 1.
        let mut numerator = self.mantissa.checked_mul(1u128.checked_shl(self.exp2)?)?;
        let mut denominator: u128 = 1;
        if exp10 >= 0 {
            numerator = numerator.checked_mul(10u128.checked_pow(u32::try_from(exp10).ok()?)?)?;
        } else {
            match 10u128.checked_pow(u32::try_from(-exp10).ok()?) {
                Some(d) => denominator = d,
                // numerator <= u128::MAX < 10^39 <= denominator: a positive value below 1.
                None => return Some(1),
            }
        }
        i64::try_from(numerator.div_ceil(denominator)).ok()
    }
}

/// CPU in millicores (`"3"` → 3000, `"100m"` → 100, `"0.5"` → 500).
pub(crate) fn parse_millis(text: &str) -> Result<i64, QuantityError> {
    parse_exact(text)?.scaled_ceil(3).ok_or(QuantityError {
        text: text.to_string(),
        reason: "too large",
    })
}

/// Bytes or counts (`"8Gi"` → 8589934592, `"8G"` → 8000000000, `"110"` → 110).
pub(crate) fn parse_units(text: &str) -> Result<i64, QuantityError> {
    parse_exact(text)?.scaled_ceil(0).ok_or(QuantityError {
        text: text.to_string(),
        reason: "too large",
    })
}

/// Like [`parse_millis`] for a quantity the API server accepted: one too large for an `i64`
/// (`1e50`) is the largest value, with `true` saying it was saturated.
pub(crate) fn read_millis(text: &str) -> Result<(i64, bool), QuantityError> {
    Ok(saturate(parse_exact(text)?.scaled_ceil(3)))
}

/// Like [`parse_units`], saturating as [`read_millis`] does (`9Ei` of memory).
pub(crate) fn read_units(text: &str) -> Result<(i64, bool), QuantityError> {
    Ok(saturate(parse_exact(text)?.scaled_ceil(0)))
}

fn saturate(value: Option<i64>) -> (i64, bool) {
    match value {
        Some(v) => (v, false),
        None => (i64::MAX, true),
    }
}

/// A NodePool limit (`spec.limits`, a ResourceList where the API accepts any sign and size):
/// a negative value is 0 (no room), one beyond `i64` the largest value. Returns the amount and
/// whether it was clamped.
pub(crate) fn read_limit(text: &str, millis: bool) -> Result<(i64, bool), QuantityError> {
    let t = text.trim();
    if let Some(positive) = t.strip_prefix('-') {
        let exact = parse_exact(positive)?;
        return Ok((0, exact.mantissa != 0));
    }
    if millis {
        read_millis(t)
    } else {
        read_units(t)
    }
}

/// Formats millicores the way kubectl does: whole cores without a suffix, else `m`.
pub fn format_millis(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// Formats bytes with the exact suffix that gives the shortest text (binary preferred on ties),
/// else plain bytes: `8Gi`, `8G`, `1536Mi`.
pub(crate) fn format_bytes(bytes: i64) -> String {
    const SUFFIXES: [(&str, i64); 8] = [
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
        ("T", 1_000_000_000_000),
        ("G", 1_000_000_000),
        ("M", 1_000_000),
        ("k", 1000),
    ];
    let mut best = bytes.to_string();
    for (suffix, size) in SUFFIXES {
        if bytes != 0 && bytes % size == 0 {
            let text = format!("{}{suffix}", bytes / size);
            if text.len() < best.len() {
                best = text;
            }
        }
    }
    best
}

/// Memory (and ephemeral storage) as every human-facing output prints it (`simulate`, `explain`,
/// `doctor`, fit reasons): from 1 GiB up in GiB with one decimal (`7.5Gi`, `16.0Gi`), below in
/// whole MiB (`256Mi`), below 1 MiB in whole KiB (`512Ki`), each rounded to nearest; manifests
/// keep exact quantities ([`format_bytes`]).
pub fn format_memory(bytes: i64) -> String {
    const KI: i128 = 1 << 10;
    const MI: i128 = 1 << 20;
    const GI: i128 = 1 << 30;
    let b = i128::from(bytes);
    let round = |unit: i128| (b.abs() * 2 + unit) / (2 * unit) * b.signum();
    if b.abs() >= GI {
        format_gib(bytes)
    } else if b.abs() >= MI {
        format!("{}Mi", round(MI))
    } else if b == 0 {
        "0".to_string()
    } else {
        format!("{}Ki", round(KI).max(1))
    }
}

/// Approximate bytes in GiB with one decimal (see [`format_memory`], which uses it from 1 GiB).
pub(crate) fn format_gib(bytes: i64) -> String {
    let tenths = (i128::from(bytes) * 10 + (1 << 29)) / (1 << 30);
    format!("{}.{}Gi", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_to_millis() {
        let cases = [
            ("100m", 100),
            ("1", 1000),
            ("3", 3000),
            ("0.5", 500),
            ("1.5", 1500),
            ("2e3", 2_000_000),
            ("0.0001", 1), // rounds up, like MilliValue
            ("250m", 250),
            ("+2", 2000),
        ];
        for (text, want) in cases {
            assert_eq!(parse_millis(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn memory_to_bytes() {
        let cases = [
            ("8Gi", 8 * (1i64 << 30)),
            ("8G", 8_000_000_000),
            ("128Mi", 134_217_728),
            ("256Mi", 268_435_456),
            ("1.5Gi", 1_610_612_736),
            ("1k", 1000),
            ("1Ki", 1024),
            ("110", 110),
            ("100m", 1), // a tenth of a byte rounds up
            ("1e3", 1000),
        ];
        for (text, want) in cases {
            assert_eq!(parse_units(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn rejects_invalid() {
        for text in [
            "4x",
            "",
            "abc",
            "-1",
            "1.2.3",
            "Gi",
            "8gi",
            "1e99",
            "1e100000",
            "99999999999999999999999999999999999999999",
        ] {
            assert!(parse_units(text).is_err(), "{text} should fail");
        }
        let e = parse_millis("4x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid quantity \"4x\": unknown suffix (expected e.g. 500m, 4, 8Gi, 8G)"
        );
    }

    #[test]
    fn reads_saturate_what_the_api_accepts() {
        assert_eq!(read_units("9Ei"), Ok((i64::MAX, true)));
        assert_eq!(read_units("7Ei"), Ok((7 << 60, false)));
        assert_eq!(read_millis("1e50"), Ok((i64::MAX, true)));
        assert_eq!(read_millis("9223372036854775807"), Ok((i64::MAX, true)));
        assert_eq!(read_units("9223372036854775807"), Ok((i64::MAX, false)));
        assert_eq!(read_units("0e50"), Ok((0, false)));
        assert_eq!(
            read_units("1e-50"),
            Ok((1, false)),
            "a positive sliver rounds up"
        );
        assert_eq!(read_limit("-1", true), Ok((0, true)));
        assert_eq!(read_limit("-0", false), Ok((0, false)));
        assert_eq!(read_limit("1e50", false), Ok((i64::MAX, true)));
        assert_eq!(read_limit("20", true), Ok((20_000, false)));
        assert!(read_units("-1").is_err(), "requests are never negative");
        assert!(read_limit("-x", false).is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(format_millis(3900), "3900m");
        assert_eq!(format_millis(4000), "4");
        assert_eq!(format_bytes(8 << 30), "8Gi");
        assert_eq!(format_bytes(8_000_000_000), "8G");
        assert_eq!(format_bytes(1), "1");
        assert_eq!(format_gib(8_000_000_000), "7.5Gi");
        // One display form for memory everywhere: one-decimal Gi from 1 GiB, whole Mi below.
        assert_eq!(format_memory(8_000_000_000), "7.5Gi");
        assert_eq!(format_memory(8 << 30), "8.0Gi");
        assert_eq!(format_memory(1536 << 20), "1.5Gi");
        assert_eq!(format_memory(1 << 30), "1.0Gi");
        assert_eq!(format_memory(1000 << 20), "1000Mi");
        assert_eq!(format_memory(256 << 20), "256Mi");
        assert_eq!(format_memory(128_000_000), "122Mi");
        assert_eq!(format_memory(512 << 10), "512Ki");
        assert_eq!(format_memory(1), "1Ki");
        assert_eq!(format_memory(0), "0");
    }
}
