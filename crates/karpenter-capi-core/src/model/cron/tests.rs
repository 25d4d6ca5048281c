//! Tests of the cron grammar and window evaluation against robfig/cron v3 and Karpenter's budgets.

use super::*;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn cron(s: &str) -> Cron {
    Cron::parse(s).unwrap()
}

fn next(s: &str, after: &str) -> Option<String> {
    cron(s).next_after(at(after)).map(|t| t.to_string())
}

const H: i64 = 3600;

#[test]
fn civil_fields_agree_with_jiff() {
    // Every 31 hours 13 minutes 17 seconds over 1600-2500, negative times included.
    let step = 31 * H + 13 * 60 + 17;
    let mut t = at("1600-01-01T00:00:00Z").as_second();
    let end = at("2500-01-01T00:00:00Z").as_second();
    let mut checked = 0;
    while t < end {
        let z = Timestamp::from_second(t)
            .unwrap()
            .to_zoned(jiff::tz::TimeZone::UTC);
        let c = civil(t);
        let want = (
            i64::from(z.year()),
            z.month() as u64,
            z.day() as u64,
            z.hour() as u64,
            z.minute() as u64,
            z.second() as u64,
            z.weekday().to_sunday_zero_offset() as u64,
        );
        assert_eq!(
            (
                c.year, c.month, c.day, c.hour, c.minute, c.second, c.weekday
            ),
            want,
            "{t}"
        );
        assert_eq!(
            days_from_civil(c.year, c.month, c.day),
            t.div_euclid(DAY),
            "{t}"
        );
        t += step;
        checked += 1;
    }
    assert!(checked > 250_000, "{checked}");
}

#[test]
fn business_hours_window() {
    // Weekdays from 09:00 for 8 hours; 2026-11-30 is a Monday.
    let c = cron("0 9 * * mon-fri");
    assert!(c.active(at("2026-11-30T10:30:00Z"), 8 * H), "Monday 10:30");
    assert!(c.active(at("2026-11-30T09:00:00Z"), 8 * H), "at the hit");
    assert!(!c.active(at("2026-11-30T08:59:59Z"), 8 * H), "just before");
    assert!(c.active(at("2026-11-30T16:59:59Z"), 8 * H), "last second");
    assert!(
        !c.active(at("2026-11-30T17:00:00Z"), 8 * H),
        "ends exactly now: over"
    );
    assert!(!c.active(at("2026-11-30T17:30:00Z"), 8 * H), "Monday 17:30");
    assert!(!c.active(at("2026-11-29T10:30:00Z"), 8 * H), "Sunday");
    assert!(c.active(at("2026-12-04T12:00:00Z"), 8 * H), "Friday noon");
    assert!(!c.active(at("2026-12-05T12:00:00Z"), 8 * H), "Saturday");
    // A window over the weekend: Friday 18:00 for 63 hours, until Monday 09:00.
    let weekend = cron("0 18 * * FRI");
    assert!(weekend.active(at("2026-12-06T23:00:00Z"), 63 * H), "Sunday");
    assert!(
        weekend.active(at("2026-12-07T08:59:00Z"), 63 * H),
        "Monday 08:59"
    );
    assert!(
        !weekend.active(at("2026-12-07T09:00:00Z"), 63 * H),
        "Monday 09:00"
    );
    assert!(
        !weekend.active(at("2026-12-04T17:59:00Z"), 63 * H),
        "Friday 17:59"
    );
}

#[test]
fn a_two_month_freeze_has_no_cap() {
    // `1464h` = 61 days from December 1st: until January 31st 00:00.
    let c = cron("0 0 1 12 *");
    let start = at("2026-12-01T00:00:00Z");
    let day = |d: i64| {
        start
            .checked_add(SignedDuration::from_hours(24 * d))
            .unwrap()
    };
    assert!(c.active(day(0), 1464 * H));
    assert!(c.active(day(60), 1464 * H), "60 days in");
    assert!(
        c.active(
            day(61).checked_sub(SignedDuration::from_secs(1)).unwrap(),
            1464 * H
        ),
        "its last second"
    );
    assert!(!c.active(day(61), 1464 * H), "ends exactly now");
    assert!(!c.active(day(62), 1464 * H), "62 days in");
    assert!(!c.active(at("2026-11-30T23:59:59Z"), 1464 * H), "before");
    // A year-long window is always open for a yearly schedule; one second short, it is
    // closed for that second only.
    let yearly = cron("@yearly");
    assert!(yearly.active(at("2027-12-31T23:59:59Z"), 8760 * H));
    assert!(
        !yearly.active(at("2028-12-31T00:00:00Z"), 8760 * H),
        "2028 is a leap year"
    );
    assert!(yearly.active(at("2028-12-31T00:00:00Z"), 8784 * H));
}

#[test]
fn a_zero_duration_is_never_active() {
    assert!(!cron("* * * * *").active(at("2026-11-30T10:00:00Z"), 0));
    assert!(cron("* * * * *").active(at("2026-11-30T10:00:00Z"), 60));
    // Mid-minute with a one-minute window: the hit at 10:00:00 is 30 s ago.
    assert!(cron("* * * * *").active(at("2026-11-30T10:00:30.5Z"), 60));
    assert!(!cron("0 * * * *").active(at("2026-11-30T10:01:00Z"), 60));
}

#[test]
fn next_after_is_strictly_after_at_second_zero() {
    assert_eq!(
        next("0 9 * * *", "2026-11-30T09:00:00Z").as_deref(),
        Some("2026-12-01T09:00:00Z")
    );
    assert_eq!(
        next("0 9 * * *", "2026-11-30T08:59:59.999Z").as_deref(),
        Some("2026-11-30T09:00:00Z")
    );
    assert_eq!(
        next("* * * * *", "2026-11-30T09:00:00.5Z").as_deref(),
        Some("2026-11-30T09:01:00Z")
    );
    assert_eq!(
        next("*/15 * * * *", "2026-12-31T23:50:00Z").as_deref(),
        Some("2027-01-01T00:00:00Z")
    );
}

#[test]
fn question_marks_names_and_their_case() {
    assert_eq!(cron("0 9 ? * MON-FRI"), cron("0 9 * * 1-5"));
    assert_eq!(cron("0 9 * jan,Mar,DEC sun"), cron("0 9 * 1,3,12 0"));
    assert_eq!(cron("0 0 ? * ?"), cron("@daily"));
}

#[test]
fn errors_name_the_field() {
    let err = |s: &str| Cron::parse(s).unwrap_err();
    assert!(
        err("0 9 * *").contains("expected five fields"),
        "{}",
        err("0 9 * *")
    );
    assert!(err("0 9 * * * *").contains("found 6"));
    assert_eq!(
        err("0 0 * * 7"),
        "invalid schedule \"0 0 * * 7\": day of week: 7 in \"7\" is above the maximum 6 \
         (day of week runs 0-6; Sunday is 0, 7 is not accepted)"
    );
    assert!(err("0 0 * * 5-7").contains("day of week: 7 in \"5-7\""));
    assert!(err("61 * * * *").contains("minute: 61"));
    assert!(err("0 24 * * *").contains("hour: 24"));
    assert!(err("0 0 0 * *").contains("day of month: 0 in \"0\" is below the minimum 1"));
    assert!(err("0 0 32 * *").contains("day of month: 32"));
    assert!(err("0 0 * 13 *").contains("month: 13"));
    assert!(err("0 0 * foo *").contains("month: \"foo\" is not a number"));
    assert!(err("0 0 * * monday").contains("\"monday\" is not a number"));
    assert!(err("*/0 * * * *").contains("a step of 0"));
    assert!(err("*/-1 * * * *").contains("negative number"));
    assert!(err("5-1 * * * *").contains("starts after it ends"));
    assert!(err("1-2-3 * * * *").contains("too many hyphens"));
    assert!(err("1/2/3 * * * *").contains("too many slashes"));
    assert!(err("0 0 L * *").contains("\"L\" is not a number"));
    assert!(err("0 0 * * 1#2").contains("not a number"));
    assert!(
        err("@Daily").contains("expected five fields"),
        "case-sensitive, as the CRD"
    );
    assert!(err("0 0 * * sat-sun").contains("\"sat-sun\" starts after it ends"));
    assert!(err("@dailyish").contains("unknown descriptor"));
    assert!(err("TZ=Europe/Paris 0 9 * * *").contains("found 6"));
}

#[test]
fn every_is_refused_by_the_crd_pattern() {
    for s in [
        "@every 1h",
        "@every 1h30m",
        "@reboot",
        "",
        "0 9 * * *\n",
        "a b c d",
    ] {
        assert!(!crd_schedule_pattern_matches(s), "{s:?}");
        assert!(
            Cron::parse(s)
                .unwrap_err()
                .contains("@every is not accepted"),
            "{s:?}"
        );
    }
    for s in [
        "@daily",
        "@hourly",
        "@dailyish",
        "0 9 * * *",
        " 0 9 * * * ",
        "0\t9\n* * *",
    ] {
        assert!(crd_schedule_pattern_matches(s), "{s:?}");
    }
    // Past the pattern, robfig's own rules: "@every 1h 2 3 4" matches five pieces.
    assert!(
        Cron::parse("@every 1h 2 3 4")
            .unwrap_err()
            .contains("unknown descriptor")
    );
    assert_eq!(cron(" 0 9 * * * "), cron("0 9 * * *"), "trimmed, as robfig");
}

#[test]
fn macros_are_their_five_field_forms() {
    assert_eq!(cron("@yearly"), cron("0 0 1 1 *"));
    assert_eq!(cron("@annually"), cron("0 0 1 1 *"));
    assert_eq!(cron("@monthly"), cron("0 0 1 * *"));
    assert_eq!(cron("@weekly"), cron("0 0 * * 0"));
    assert_eq!(cron("@daily"), cron("0 0 * * *"));
    assert_eq!(cron("@midnight"), cron("0 0 * * *"));
    assert_eq!(cron("@hourly"), cron("0 * * * *"));
    let from = "2026-11-30T10:30:00Z";
    assert_eq!(
        next("@yearly", from).as_deref(),
        Some("2027-01-01T00:00:00Z")
    );
    assert_eq!(
        next("@monthly", from).as_deref(),
        Some("2026-12-01T00:00:00Z")
    );
    assert_eq!(
        next("@weekly", from).as_deref(),
        Some("2026-12-06T00:00:00Z")
    );
    assert_eq!(
        next("@daily", from).as_deref(),
        Some("2026-12-01T00:00:00Z")
    );
    assert_eq!(
        next("@hourly", from).as_deref(),
        Some("2026-11-30T11:00:00Z")
    );
}

#[test]
fn steps_ranges_and_lists() {
    let c = cron("*/15 * * * *");
    assert!(c.matches(at("2026-11-30T10:45:00Z")));
    assert!(!c.matches(at("2026-11-30T10:46:00Z")));
    assert_eq!(
        cron("5/20 * * * *"),
        cron("5,25,45 * * * *"),
        "a/n is a-max/n"
    );
    assert_eq!(cron("10-30/10 * * * *"), cron("10,20,30 * * * *"));
    assert_eq!(
        cron("0 1,,3 * * *"),
        cron("0 1,3 * * *"),
        "empty parts skipped"
    );
    assert_eq!(cron("0 *-5 * * *"), cron("0 * * * *"), "robfig ignores *-5");
    assert_eq!(cron("0 0 * * */1"), cron("0 0 * * *"));
    assert_eq!(
        cron("+5 0 * * *"),
        cron("05 0 * * *"),
        "Atoi takes a sign and zeros"
    );
    let from = "2026-11-30T10:31:00Z";
    assert_eq!(
        next("0,30 9-17/4 * * *", from).as_deref(),
        Some("2026-11-30T13:00:00Z")
    );
    assert_eq!(
        next("0 22 * * 1-5", "2026-12-04T22:00:00Z").as_deref(),
        Some("2026-12-07T22:00:00Z"),
        "Friday 22:00 to Monday"
    );
}

#[test]
fn day_of_month_and_week_or_when_both_restricted() {
    // 2026-12-01 is a Tuesday. `0 0 13 * 5`: the 13th OR any Friday.
    let or = cron("0 0 13 * 5");
    assert!(or.matches(at("2026-12-04T00:00:00Z")), "a Friday the 4th");
    assert!(or.matches(at("2026-12-13T00:00:00Z")), "a Sunday the 13th");
    assert!(!or.matches(at("2026-12-05T00:00:00Z")));
    assert_eq!(
        next("0 0 13 * 5", "2026-12-01T00:00:00Z").as_deref(),
        Some("2026-12-04T00:00:00Z")
    );
    // A `*` in either field makes it AND: `0 0 * * 5` is Fridays only, `0 0 13 * *` the 13th.
    assert!(!cron("0 0 * * 5").matches(at("2026-12-13T00:00:00Z")));
    assert!(!cron("0 0 13 * *").matches(at("2026-12-04T00:00:00Z")));
    // `*/2` is a restriction (odd days): OR with Fridays.
    let odd_or_friday = cron("0 0 */2 * 5");
    assert!(
        odd_or_friday.matches(at("2026-12-04T00:00:00Z")),
        "Friday the 4th"
    );
    assert!(
        odd_or_friday.matches(at("2026-12-03T00:00:00Z")),
        "Thursday the 3rd"
    );
    assert!(
        !odd_or_friday.matches(at("2026-12-02T00:00:00Z")),
        "Wednesday the 2nd"
    );
    // `*/1` and `?` are stars: AND.
    assert!(!cron("0 0 */1 * 5").matches(at("2026-12-03T00:00:00Z")));
    assert!(!cron("0 0 ? * 5").matches(at("2026-12-03T00:00:00Z")));
    // A list holding `*` is a star too.
    assert!(!cron("0 0 *,13 * 5").matches(at("2026-12-13T00:00:00Z")));
    // `1-31` is a restriction although it names every day: OR makes every day match.
    assert!(cron("0 0 1-31 * 5").matches(at("2026-12-02T00:00:00Z")));
}

#[test]
fn month_ends_and_leap_years() {
    // The 31st skips the short months.
    assert_eq!(
        next("0 0 31 * *", "2026-01-31T00:00:00Z").as_deref(),
        Some("2026-03-31T00:00:00Z")
    );
    assert_eq!(
        next("0 0 31 * *", "2026-03-31T00:00:00Z").as_deref(),
        Some("2026-05-31T00:00:00Z")
    );
    assert_eq!(
        next("0 0 31 * *", "2026-07-31T00:00:00Z").as_deref(),
        Some("2026-08-31T00:00:00Z")
    );
    assert_eq!(
        next("0 0 31 * *", "2026-12-31T00:00:00Z").as_deref(),
        Some("2027-01-31T00:00:00Z")
    );
    assert_eq!(
        next("0 0 30 * *", "2027-01-30T00:00:00Z").as_deref(),
        Some("2027-03-30T00:00:00Z")
    );
    // February 29th: leap years only; 2100 is not one, 2000 was.
    assert_eq!(
        next("0 0 29 2 *", "2026-01-01T00:00:00Z").as_deref(),
        Some("2028-02-29T00:00:00Z")
    );
    assert_eq!(
        next("0 0 29 2 *", "2028-02-29T00:00:00Z").as_deref(),
        Some("2032-02-29T00:00:00Z")
    );
    assert_eq!(
        next("0 0 29 2 *", "1999-03-01T00:00:00Z").as_deref(),
        Some("2000-02-29T00:00:00Z")
    );
    assert_eq!(
        next("0 0 29 2 *", "2097-01-01T00:00:00Z"),
        None,
        "2104 is past robfig's five years"
    );
    assert_eq!(
        next("0 0 29 2 *", "2099-01-01T00:00:00Z").as_deref(),
        Some("2104-02-29T00:00:00Z")
    );
    assert_eq!(
        next("0 12 28-31 2 *", "2100-02-28T12:00:00Z").as_deref(),
        Some("2101-02-28T12:00:00Z")
    );
    // The last day of February on a Sunday, or any Sunday of February (OR).
    assert_eq!(
        next("0 0 29 2 sun", "2026-02-02T00:00:00Z").as_deref(),
        Some("2026-02-08T00:00:00Z")
    );
}

#[test]
fn an_impossible_schedule_gives_up_quickly_and_counts_as_active() {
    let start = std::time::Instant::now();
    for s in ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 30,31 2 *"] {
        let c = cron(s);
        // robfig searches until a wrap past the fifth year: about six years of days.
        assert_eq!(c.next_after(at("2026-11-30T10:00:00Z")), None, "{s}");
        // Go's zero time is not after now: upstream counts the budget as active.
        assert!(c.active(at("2026-11-30T10:00:00Z"), 60), "{s}");
    }
    // A field that allows nothing (robfig skips empty list parts).
    assert_eq!(
        cron("0 , * * *").next_after(at("2026-11-30T10:00:00Z")),
        None
    );
    assert!(
        start.elapsed() < std::time::Duration::from_millis(200),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn far_windows_cost_microseconds() {
    // 1000 evaluations of a year-long window of a schedule firing once a year on a
    // leap day: each is a search of a few thousand field steps at most.
    let c = cron("30 23 29 2 *");
    let start = std::time::Instant::now();
    let mut active = 0;
    for d in 0..1000 {
        let now = at("2026-01-01T00:00:00Z")
            .checked_add(SignedDuration::from_hours(24 * d))
            .unwrap();
        active += usize::from(c.active(now, 8760 * H));
    }
    // The hits are 2024-02-29T23:30 (over by 2025-02-28) and 2028-02-29T23:30, open for a
    // year: of the days from 2026-01-01, those from 2028-03-01 (day 790) to day 999.
    assert_eq!(active, 1000 - 790);
    assert!(
        start.elapsed() < std::time::Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn extreme_times_do_not_panic() {
    let c = cron("@daily");
    assert_eq!(c.next_after(Timestamp::MAX), None);
    assert!(c.next_after(Timestamp::MIN).is_some());
    assert!(c.active(Timestamp::MAX, i64::MAX));
    assert!(!c.active(Timestamp::MIN, 3600));
}
