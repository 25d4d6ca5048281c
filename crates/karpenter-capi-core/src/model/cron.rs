//! Cron schedules of Karpenter's disruption budgets: the NodePool CRD's `schedule` pattern, the
//! grammar of robfig/cron v3 `ParseStandard` (five fields or an `@daily`-style descriptor, UTC),
//! robfig's `SpecSchedule.Next`, and core's `Budget.IsActive` window test built on it.
//! Hand-written on purpose: no cron crate parses robfig `ParseStandard` exactly (names, `?`,
//! descriptors, day-of-month OR day-of-week when both are restricted, no `L`/`W`/`#`), and a
//! budget that parses differently here than in Karpenter would open or close at other times.

use jiff::{SignedDuration, Timestamp};

/// robfig's star bit: set in a field's bits when the field contains `*` or `?` with a step of
/// at most 1. Only the day fields use it (it picks AND or OR of day of month and day of week).
const STAR: u64 = 1 << 63;

/// A parsed schedule: one bit per allowed value of each field, as robfig's `SpecSchedule` holds
/// it (the seconds field of `ParseStandard` is always `0`, so it is not stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cron {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

/// The range and names of one field (robfig `spec.go` bounds).
struct Bounds {
    what: &'static str,
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    what: "minute",
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    what: "hour",
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    what: "day of month",
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    what: "month",
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    what: "day of week",
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// Every value of a field, with the star bit (robfig `all`).
fn all(b: &Bounds) -> u64 {
    bits(b.min, b.max, 1) | STAR
}

/// The bits `lo..=hi` every `step` (robfig `getBits`; `hi` is at most 59).
fn bits(lo: u64, hi: u64, step: u64) -> u64 {
    let mut out = 0;
    let mut v = lo;
    while v <= hi {
        out |= 1 << v;
        v = v.saturating_add(step);
    }
    out
}

/// A non-negative decimal number as Go's `strconv.Atoi` reads it (an optional sign, digits)
/// (robfig `mustParseInt`).
fn number(expr: &str) -> Result<u64, String> {
    let n: i64 = expr
        .parse()
        .map_err(|_| format!("{expr:?} is not a number"))?;
    u64::try_from(n).map_err(|_| format!("negative number {expr:?}"))
}

/// A number, or a month or weekday name in any case (robfig `parseIntOrName`).
fn number_or_name(expr: &str, b: &Bounds) -> Result<u64, String> {
    match b.names.iter().find(|(n, _)| n.eq_ignore_ascii_case(expr)) {
        Some(&(_, v)) => Ok(v),
        None => number(expr),
    }
}

/// One comma-separated part: `*`, `?`, `a`, `a-b`, each with an optional `/step`; `a/step`
/// means `a-max/step` (robfig `getRange`).
fn range(expr: &str, b: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end, mut extra) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        // robfig ignores anything after `*-`: `*-5` is `*`.
        (b.min, b.max, STAR)
    } else {
        let start = number_or_name(low_and_high[0], b)?;
        let end = match low_and_high.as_slice() {
            [_] => start,
            [_, high] => number_or_name(high, b)?,
            _ => return Err(format!("too many hyphens in {expr:?}")),
        };
        (start, end, 0)
    };
    let step = match range_and_step.as_slice() {
        [_] => 1,
        [_, step] => {
            let step = number(step)?;
            if single {
                end = b.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(format!("too many slashes in {expr:?}")),
    };
    let (what, min, max) = (b.what, b.min, b.max);
    if start < min {
        return Err(format!(
            "{start} in {expr:?} is below the minimum {min} ({what} runs {min}-{max})"
        ));
    }
    if end > max {
        let sunday = if max == 6 && end == 7 {
            "; Sunday is 0, 7 is not accepted"
        } else {
            ""
        };
        return Err(format!(
            "{end} in {expr:?} is above the maximum {max} ({what} runs {min}-{max}{sunday})"
        ));
    }
    if start > end {
        return Err(format!("{expr:?} starts after it ends"));
    }
    if step == 0 {
        return Err(format!("a step of 0 in {expr:?}"));
    }
    Ok(bits(start, end, step) | extra)
}

/// A whole field: comma-separated parts, empty parts skipped (robfig `getField`, which splits
/// with `strings.FieldsFunc`: `1,,2` is `1,2`, and `,` allows nothing).
fn field(text: &str, b: &Bounds) -> Result<u64, String> {
    let mut out = 0;
    for part in text.split(',').filter(|p| !p.is_empty()) {
        out |= range(part, b).map_err(|e| format!("{}: {e}", b.what))?;
    }
    Ok(out)
}

/// Whether `text` matches the NodePool CRD's pattern for `spec.disruption.budgets[].schedule`,
/// `^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`,
/// as the API server's Go regexp reads it: the first branch is anchored only at the start, the
/// second only at the end; `.` is any character but `\n`, `\s` is `[\t\n\f\r ]`. It is what
/// keeps robfig's `@every 1h` out of a NodePool.
pub(crate) fn crd_schedule_pattern_matches(text: &str) -> bool {
    const MACROS: [&str; 7] = [
        "annually", "yearly", "monthly", "weekly", "daily", "midnight", "hourly",
    ];
    if let Some(rest) = text.strip_prefix('@')
        && MACROS.iter().any(|m| rest.starts_with(m))
    {
        return true;
    }
    // The second branch as a set of NFA states: in[k] = inside piece k+1 (at least one
    // character read), sep[k] = just read the separator after piece k+1.
    let is_space = |c: char| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ');
    let mut inside = [false; 5];
    let mut sep = [false; 4];
    for c in text.chars() {
        let any = c != '\n';
        let mut next_inside = [false; 5];
        let mut next_sep = [false; 4];
        // Unanchored at the start: a match may begin at any character.
        next_inside[0] = any;
        for k in 0..5 {
            if inside[k] {
                next_inside[k] |= any;
                if k < 4 && is_space(c) {
                    next_sep[k] = true;
                }
            }
        }
        for k in 0..4 {
            if sep[k] && any {
                next_inside[k + 1] = true;
            }
        }
        inside = next_inside;
        sep = next_sep;
    }
    inside[4]
}

/// Civil UTC fields of a Unix time in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u64,
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
    /// 0 is Sunday.
    weekday: u64,
}

const DAY: i64 = 86_400;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u64, day: u64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = ((month + 9) % 12) as i64;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil(t: i64) -> Civil {
    let days = t.div_euclid(DAY);
    let secs = t.rem_euclid(DAY) as u64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u64;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u64;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: secs / 3600,
        minute: secs / 60 % 60,
        second: secs % 60,
        weekday: (days + 4).rem_euclid(7) as u64,
    }
}

/// `t` one calendar month later, as Go's `AddDate(0, 1, 0)` (a day past the month's end
/// overflows into the next one, as `time.Date` normalizes).
fn add_month(t: i64) -> i64 {
    let c = civil(t);
    let (year, month) = if c.month == 12 {
        (c.year + 1, 1)
    } else {
        (c.year, c.month + 1)
    };
    (days_from_civil(year, month, 1) + c.day as i64 - 1) * DAY + t.rem_euclid(DAY)
}

/// A time's whole seconds, rounded down (Go's `Nanosecond()` is never negative).
fn floor_second(t: Timestamp) -> i64 {
    t.as_second() - i64::from(t.subsec_nanosecond() < 0)
}

impl Cron {
    /// Parses a budget schedule: it must match the NodePool CRD's pattern
    /// ([`crd_schedule_pattern_matches`]), then parse as robfig/cron v3 `ParseStandard` does
    /// (core `Budget.IsActive` calls it with `TZ=UTC ` before the schedule): `@yearly`,
    /// `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` exactly, or five
    /// fields `minute hour day-of-month month day-of-week`.
    pub(crate) fn parse(text: &str) -> Result<Cron, String> {
        let wrap = |e: String| format!("invalid schedule {text:?}: {e}");
        if !crd_schedule_pattern_matches(text) {
            return Err(wrap(
                "expected five fields (minute hour day-of-month month day-of-week) or one of \
                 @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly (the NodePool \
                 CRD's pattern; @every is not accepted)"
                    .to_string(),
            ));
        }
        // robfig `Parse`: the text after `TZ=UTC ` is trimmed.
        let spec = text.trim();
        if spec.starts_with('@') {
            // robfig `parseDescriptor`: exact, case-sensitive names.
            let (dom, month, dow) = (all(&DOM), all(&MONTHS), all(&DOW));
            return Ok(match spec {
                "@yearly" | "@annually" => Cron {
                    minute: 1,
                    hour: 1,
                    dom: 1 << 1,
                    month: 1 << 1,
                    dow,
                },
                "@monthly" => Cron {
                    minute: 1,
                    hour: 1,
                    dom: 1 << 1,
                    month,
                    dow,
                },
                "@weekly" => Cron {
                    minute: 1,
                    hour: 1,
                    dom,
                    month,
                    dow: 1,
                },
                "@daily" | "@midnight" => Cron {
                    minute: 1,
                    hour: 1,
                    dom,
                    month,
                    dow,
                },
                "@hourly" => Cron {
                    minute: 1,
                    hour: all(&HOURS),
                    dom,
                    month,
                    dow,
                },
                _ => {
                    return Err(wrap(format!(
                        "unknown descriptor {spec:?} (valid: @yearly, @annually, @monthly, \
                         @weekly, @daily, @midnight, @hourly)"
                    )));
                }
            });
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        let [m, h, dom, mon, dow] = fields.as_slice() else {
            return Err(wrap(format!(
                "expected five fields (minute hour day-of-month month day-of-week), found {}",
                fields.len()
            )));
        };
        Ok(Cron {
            minute: field(m, &MINUTES).map_err(wrap)?,
            hour: field(h, &HOURS).map_err(wrap)?,
            dom: field(dom, &DOM).map_err(wrap)?,
            month: field(mon, &MONTHS).map_err(wrap)?,
            dow: field(dow, &DOW).map_err(wrap)?,
        })
    }

    /// robfig `dayMatches`: day of month and day of week are AND'd when either field has the
    /// star bit (`*` or `?`, step 1), else OR'd (`*/2` is a restriction).
    fn day_matches(&self, c: &Civil) -> bool {
        let dom = self.dom & (1 << c.day) != 0;
        let dow = self.dow & (1 << c.weekday) != 0;
        if (self.dom | self.dow) & STAR != 0 {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// Whether no time can ever match: a field that allows nothing (`,`), or days that can
    /// never match. robfig's `Next` then searches its whole five years and returns the zero
    /// time; the answer is the same, found at once.
    fn never(&self) -> bool {
        let values = |bits: u64| bits & !STAR;
        let days = if (self.dom | self.dow) & STAR != 0 {
            values(self.dom) != 0 && values(self.dow) != 0
        } else {
            values(self.dom) != 0 || values(self.dow) != 0
        };
        values(self.minute) == 0 || values(self.hour) == 0 || values(self.month) == 0 || !days
    }

    /// Whether the schedule fires at this minute (UTC).
    #[cfg(test)]
    pub(crate) fn matches(&self, t: Timestamp) -> bool {
        let c = civil(floor_second(t));
        self.minute & (1 << c.minute) != 0
            && self.hour & (1 << c.hour) != 0
            && self.month & (1 << c.month) != 0
            && self.day_matches(&c)
    }

    /// The first time the schedule fires strictly after `t` (at second 0 of a minute), or
    /// `None` when there is none before robfig gives up (a wrap past the year five after `t`'s).
    /// Mirrors robfig/cron v3 `SpecSchedule.Next` in UTC, field by field: a month, day or hour
    /// that cannot match is skipped whole, so a search over years costs microseconds.
    pub(crate) fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        if self.never() {
            return None;
        }
        // The earliest possible time: the next whole second.
        let mut t = floor_second(t).checked_add(1)?;
        let mut added = false;
        let year_limit = civil(t).year + 5;
        'wrap: loop {
            if civil(t).year > year_limit {
                return None;
            }
            while self.month & (1 << civil(t).month) == 0 {
                if !added {
                    added = true;
                    let c = civil(t);
                    t = days_from_civil(c.year, c.month, 1) * DAY;
                }
                t = add_month(t);
                if civil(t).month == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(&civil(t)) {
                if !added {
                    added = true;
                    t -= t.rem_euclid(DAY);
                }
                t += DAY;
                if civil(t).day == 1 {
                    continue 'wrap;
                }
            }
            while self.hour & (1 << civil(t).hour) == 0 {
                if !added {
                    added = true;
                    t -= t.rem_euclid(3600);
                }
                t += 3600;
                if civil(t).hour == 0 {
                    continue 'wrap;
                }
            }
            while self.minute & (1 << civil(t).minute) == 0 {
                if !added {
                    added = true;
                    t -= t.rem_euclid(60);
                }
                t += 60;
                if civil(t).minute == 0 {
                    continue 'wrap;
                }
            }
            // Seconds allow only 0: robfig steps second by second to the next minute and
            // wraps; jump there at once.
            let second = t.rem_euclid(60);
            if second != 0 {
                added = true;
                t += 60 - second;
                continue 'wrap;
            }
            return Timestamp::from_second(t).ok();
        }
    }

    /// Whether a budget window of `duration_secs` opened by this schedule is active at `now`.
    /// Mirrors core `pkg/apis/v1/nodepool.go` `Budget.IsActive`: the first hit after
    /// `now - duration` is not after `now`. A window ending exactly at `now` is over; there is
    /// no cap on the duration. When robfig finds no hit within its five years, `Next` returns
    /// Go's zero time, which is not after `now`: the budget is active, as upstream.
    pub(crate) fn active(&self, now: Timestamp, duration_secs: i64) -> bool {
        let checkpoint = now
            .checked_sub(SignedDuration::from_secs(duration_secs.max(0)))
            .unwrap_or(Timestamp::MIN);
        self.next_after(checkpoint).is_none_or(|hit| hit <= now)
    }
}

#[cfg(test)]
mod tests;
