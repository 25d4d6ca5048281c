//! Cron schedules (five fields, UTC, with `@daily`-style macros) as Karpenter's disruption
//! budgets use them, and whether a schedule + duration window is active at a time.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// A parsed cron schedule: the allowed values of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    days_restricted: bool,
    weekdays_restricted: bool,
}

fn field(text: &str, min: u32, max: u32, names: &[&str]) -> Result<(Vec<bool>, bool), String> {
    let mut allowed = vec![false; (max + 1) as usize];
    let value = |t: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(t)) {
            return Ok(min + i as u32);
        }
        t.parse::<u32>()
            .map_err(|_| format!("{t:?} is not a number"))
    };
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                s.parse::<u32>()
                    .map_err(|_| format!("invalid step {s:?}"))?,
            ),
            None => (part, 1),
        };
        if step == 0 {
            return Err("a step of 0".to_string());
        }
        let (lo, hi) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a)?, value(b)?)
        } else {
            let v = value(range)?;
            (v, if part.contains('/') { max } else { v })
        };
        // Day of week 7 is Sunday too.
        let hi = if max == 6 && hi == 7 { 6 } else { hi };
        let lo = if max == 6 && lo == 7 { 0 } else { lo };
        if lo < min || hi > max || lo > hi {
            return Err(format!("{range:?} is outside {min}-{max}"));
        }
        let mut v = lo;
        while v <= hi {
            allowed[v as usize] = true;
            v += step;
        }
    }
    Ok((allowed, text != "*"))
}

impl Cron {
    /// Parses `m h dom mon dow` or a macro.
    pub fn parse(text: &str) -> Result<Cron, String> {
        let expanded = match text.trim() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            other => other,
        };
        let parts: Vec<&str> = expanded.split_whitespace().collect();
        let [m, h, dom, mon, dow] = parts.as_slice() else {
            return Err(format!(
                "invalid schedule {text:?}: expected five fields (minute hour day month weekday) or @daily-style"
            ));
        };
        let wrap = |what: &str, e: String| format!("invalid schedule {text:?}: {what}: {e}");
        let months = [
            "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
        ];
        let days = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
        let (minutes, _) = field(m, 0, 59, &[]).map_err(|e| wrap("minute", e))?;
        let (hours, _) = field(h, 0, 23, &[]).map_err(|e| wrap("hour", e))?;
        let (days_of_month, days_restricted) =
            field(dom, 1, 31, &[]).map_err(|e| wrap("day of month", e))?;
        let (months, _) = field(mon, 1, 12, &months).map_err(|e| wrap("month", e))?;
        let (weekdays, weekdays_restricted) =
            field(dow, 0, 6, &days).map_err(|e| wrap("day of week", e))?;
        Ok(Cron {
            minutes,
            hours,
            days: days_of_month,
            months,
            weekdays,
            days_restricted,
            weekdays_restricted,
        })
    }

    /// Whether the schedule fires at this minute (UTC).
    pub fn matches(&self, t: Timestamp) -> bool {
        let z = t.to_zoned(TimeZone::UTC);
        let (minute, hour, day, month) = (
            z.minute() as usize,
            z.hour() as usize,
            z.day() as usize,
            z.month() as usize,
        );
        let weekday = z.weekday().to_sunday_zero_offset() as usize;
        let day_ok = match (self.days_restricted, self.weekdays_restricted) {
            (true, true) => self.days[day] || self.weekdays[weekday],
            _ => self.days[day] && self.weekdays[weekday],
        };
        self.minutes[minute] && self.hours[hour] && self.months[month] && day_ok
    }

    /// Whether a window of `duration_secs` opened by this schedule is active at `now`.
    pub fn active(&self, now: Timestamp, duration_secs: i64) -> bool {
        // Scan back minute by minute; windows longer than a week are capped at a week.
        let minutes = (duration_secs / 60).clamp(0, 7 * 24 * 60);
        let start = now.as_second() - now.as_second().rem_euclid(60);
        (0..minutes.max(1))
            .any(|k| Timestamp::from_second(start - k * 60).is_ok_and(|t| self.matches(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn business_hours_window() {
        // Weekdays from 09:00 for 8 hours.
        let c = Cron::parse("0 9 * * mon-fri").unwrap();
        assert!(
            c.active(at("2026-11-30T10:30:00Z"), 8 * 3600),
            "Monday 10:30"
        );
        assert!(
            !c.active(at("2026-11-30T17:30:00Z"), 8 * 3600),
            "Monday 17:30, window closed"
        );
        assert!(!c.active(at("2026-11-29T10:30:00Z"), 8 * 3600), "Sunday");
    }

    #[test]
    fn macros_steps_and_errors() {
        assert!(
            Cron::parse("@daily")
                .unwrap()
                .matches(at("2026-11-30T00:00:00Z"))
        );
        assert!(
            Cron::parse("*/15 * * * *")
                .unwrap()
                .matches(at("2026-11-30T10:45:00Z"))
        );
        assert!(
            !Cron::parse("*/15 * * * *")
                .unwrap()
                .matches(at("2026-11-30T10:46:00Z"))
        );
        assert!(
            Cron::parse("0 9 * *")
                .unwrap_err()
                .contains("expected five fields")
        );
        assert!(Cron::parse("61 * * * *").unwrap_err().contains("minute"));
    }
}
