//! Disruption budgets and the NodePool disruption settings they sit with: how many nodes a
//! budget allows now (counts, percentages, cron schedules with durations, reasons), and what in
//! a NodePool's disruption settings does not parse.

use jiff::Timestamp;

use crate::model::cron::Cron;
use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::nodepool::{BudgetSpec, NodePool};
use crate::vocab::reasons::DisruptionReason;

/// How many nodes a budget allows: a count, or a percentage of the pool's nodes rounded up
/// (core `Budget.GetAllowedDisruptions` scales with intstr `GetScaledValueFromIntOrPercent`,
/// `roundUp` true). `spec` must match the CRD's pattern `^((100|[0-9]{1,2})%|[0-9]+)$`.
pub(crate) fn budget_nodes(spec: &str, total: usize) -> Result<usize, String> {
    let bad = || {
        format!(
            "invalid budget nodes {spec:?}: expected a count such as 3 or a percentage from 0% to 100% such as 10%"
        )
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match spec.strip_suffix('%') {
        Some(p) if p == "100" || (digits(p) && p.len() <= 2) => {
            let pct: usize = p.parse().map_err(|_| bad())?;
            Ok(pct.saturating_mul(total).div_ceil(100))
        }
        Some(_) => Err(bad()),
        None if digits(spec) => spec.parse().map_err(|_| bad()),
        None => Err(bad()),
    }
}

/// A budget's `duration` in seconds. The CRD accepts hours and minutes only,
/// `^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$` (the `0s` Go's `Duration.String` appends), and
/// Go's `time.ParseDuration` refuses more than 2562047h47m16s.
pub(crate) fn budget_duration(text: &str) -> Result<i64, String> {
    let bad = |why: &str| format!("invalid budget duration {text:?}: {why}");
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let body = text.strip_suffix("0s").unwrap_or(text);
    let shape = match body.split_once('h') {
        Some((h, "")) => digits(h),
        Some((h, m)) => digits(h) && m.strip_suffix('m').is_some_and(digits),
        None => body.strip_suffix('m').is_some_and(digits),
    };
    if !shape {
        return Err(bad(
            "expected hours and/or minutes such as 8h, 30m, 1h30m or 1464h (the NodePool CRD's pattern)",
        ));
    }
    let secs = text
        .parse::<GoDuration>()
        .map_err(|_| bad("not a duration"))?
        .as_secs();
    // Go durations are int64 nanoseconds.
    if u128::from(secs) * 1_000_000_000 > i64::MAX as u128 {
        return Err(bad("longer than Go's longest duration (2562047h47m)"));
    }
    i64::try_from(secs).map_err(|_| bad("too long"))
}

/// A budget as the CRD validates it and core evaluates it.
struct Budget<'a> {
    nodes: &'a str,
    /// The schedule and its duration in seconds; `None`: always active.
    window: Option<(Cron, i64)>,
    /// Empty: every reason.
    reasons: Vec<DisruptionReason>,
}

/// A budget, or every problem in it as (field under the budget, problem) pairs.
fn parse_budget(b: &BudgetSpec) -> Result<Budget<'_>, Vec<(&'static str, String)>> {
    let mut problems = Vec::new();
    if let Err(e) = budget_nodes(&b.nodes, 1) {
        problems.push((".nodes", e));
    }
    let window = match (&b.schedule, &b.duration) {
        (None, None) => None,
        (Some(s), Some(d)) => {
            let cron = Cron::parse(s).map_err(|e| problems.push((".schedule", e)));
            let secs = budget_duration(d).map_err(|e| problems.push((".duration", e)));
            cron.ok().zip(secs.ok())
        }
        _ => {
            // The CRD's rule `has(x.schedule) == has(x.duration)`.
            problems.push((
                "",
                "schedule and duration go together: set both or neither".to_string(),
            ));
            None
        }
    };
    let mut reasons = Vec::new();
    for r in &b.reasons {
        match DisruptionReason::parse_budget(r) {
            Some(r) => reasons.push(r),
            None => problems.push((
                ".reasons",
                format!("unknown reason {r:?} (valid: Underutilized, Empty, Drifted)"),
            )),
        }
    }
    if problems.is_empty() {
        Ok(Budget {
            nodes: &b.nodes,
            window,
            reasons,
        })
    } else {
        Err(problems)
    }
}

/// The number of nodes of a pool that may be disrupted at `now` for `reason`: the most
/// restrictive of the active budgets that name the reason or no reason (`usize::MAX` when none
/// does; upstream's `math.MaxInt32`). Mirrors core `pkg/apis/v1/nodepool.go`
/// `NodePool.GetAllowedDisruptionsByReason` and `Budget.GetAllowedDisruptions`: a budget with
/// neither schedule nor duration is always active, a scheduled one as `Budget.IsActive` says
/// (see [`Cron::active`]), and a budget that does not validate fails the whole pool, whatever
/// reasons it names — `MustGetAllowedDisruptions` then allows 0 for every reason; our callers
/// skip the pool with a Warning Event on an `Err`.
pub(crate) fn allowed_disruptions(
    pool: &NodePool,
    reason: DisruptionReason,
    total: usize,
    now: Timestamp,
) -> Result<usize, String> {
    let mut budgets = Vec::with_capacity(pool.budgets.len());
    for (i, b) in pool.budgets.iter().enumerate() {
        match parse_budget(b) {
            Ok(budget) => budgets.push(budget),
            Err(problems) => {
                let (field, problem) = &problems[0];
                return Err(format!("{problem} (budgets[{i}]{field})"));
            }
        }
    }
    let mut allowed = usize::MAX;
    for b in budgets {
        if !b.reasons.is_empty() && !b.reasons.contains(&reason) {
            continue;
        }
        if let Some((cron, secs)) = &b.window
            && !cron.active(now, *secs)
        {
            continue;
        }
        allowed = allowed.min(budget_nodes(b.nodes, total)?);
    }
    Ok(allowed)
}

/// What is wrong with a NodePool's disruption settings, as (field, problem) pairs: durations
/// (`consolidateAfter`, `expireAfter`, `terminationGracePeriod`), budget counts, schedules and
/// durations, as the NodePool CRD validates them. `run` skips voluntary disruption for a pool
/// whose budgets have one (see [`allowed_disruptions`]); `doctor` reports them all.
pub(crate) fn settings_problems(pool: &NodePool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let durations = [
        ("spec.disruption.consolidateAfter", &pool.consolidate_after),
        ("spec.template.spec.expireAfter", &pool.expire_after),
        (
            "spec.template.spec.terminationGracePeriod",
            &pool.termination_grace_period,
        ),
    ];
    for (field, value) in durations {
        if let Some(v) = value
            && let Err(e) = v.parse::<NillableDuration>()
        {
            out.push((field.to_string(), e));
        }
    }
    for (i, b) in pool.budgets.iter().enumerate() {
        if let Err(problems) = parse_budget(b) {
            for (field, problem) in problems {
                out.push((format!("spec.disruption.budgets[{i}]{field}"), problem));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_round_percentages_up() {
        assert_eq!(budget_nodes("10%", 5), Ok(1));
        assert_eq!(budget_nodes("50%", 3), Ok(2));
        assert_eq!(budget_nodes("0", 3), Ok(0));
        assert_eq!(budget_nodes("3", 10), Ok(3));
        assert!(
            budget_nodes("ten", 3)
                .unwrap_err()
                .contains("invalid budget nodes \"ten\"")
        );
        assert!(budget_nodes("120%", 3).is_err());
        assert_eq!(budget_nodes("100%", 7), Ok(7));
        assert_eq!(budget_nodes("1%", 101), Ok(2), "1.01 rounds up");
        assert_eq!(budget_nodes("1%", 100), Ok(1));
        assert_eq!(budget_nodes("99%", 0), Ok(0));
        assert_eq!(budget_nodes("0%", 50), Ok(0));
        assert_eq!(budget_nodes("007", 50), Ok(7));
        // Outside the CRD's pattern `^((100|[0-9]{1,2})%|[0-9]+)$`.
        for bad in [
            "005%", "+3", " 3", "3 ", "-1", "%", "", "1.5", "10 %", "101%",
        ] {
            assert!(budget_nodes(bad, 10).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn budget_durations_are_hours_and_minutes() {
        let ok = [
            ("8h", 8 * 3600),
            ("30m", 1800),
            ("1h30m", 5400),
            ("1464h", 1464 * 3600),
            ("8760h", 8760 * 3600),
            ("1h30m0s", 5400),
            ("8h0s", 8 * 3600),
            ("0h", 0),
            ("90m", 5400),
            ("2562047h47m", 9_223_372_020),
        ];
        for (text, secs) in ok {
            assert_eq!(budget_duration(text), Ok(secs), "{text}");
        }
        for bad in [
            "90s",
            "1.5h",
            "1d",
            "",
            "0s",
            "0",
            "1h30s",
            "30m1h",
            "1h2h",
            " 8h",
            "8H",
            "2562047h48m",
        ] {
            let e = budget_duration(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("invalid budget duration {bad:?}")),
                "{e}"
            );
        }
    }

    /// The reason spelled `text`.
    fn r(text: &str) -> DisruptionReason {
        DisruptionReason::parse(text).unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn budget(nodes: &str, window: Option<(&str, &str)>, reasons: &[&str]) -> BudgetSpec {
        BudgetSpec {
            nodes: nodes.to_string(),
            schedule: window.map(|w| w.0.to_string()),
            duration: window.map(|w| w.1.to_string()),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn pool(budgets: Vec<BudgetSpec>) -> NodePool {
        let mut p = NodePool::implicit();
        p.budgets = budgets;
        p
    }

    #[test]
    fn the_most_restrictive_active_budget_for_the_reason_wins() {
        // 10% always; no drift in business hours (2026-11-30 is a Monday); 1 empty node at a
        // time at night.
        let p = pool(vec![
            budget("10%", None, &[]),
            budget("0", Some(("0 9 * * mon-fri", "8h")), &["Drifted"]),
            budget(
                "1",
                Some(("0 22 * * *", "10h")),
                &["Empty", "Underutilized"],
            ),
        ]);
        let allowed = |reason: &str, now: &str| allowed_disruptions(&p, r(reason), 25, at(now));
        let monday_10 = "2026-11-30T10:00:00Z";
        assert_eq!(allowed("Drifted", monday_10), Ok(0));
        assert_eq!(allowed("Empty", monday_10), Ok(3), "10% of 25 rounded up");
        assert_eq!(allowed("Underutilized", monday_10), Ok(3));
        let monday_23 = "2026-11-30T23:00:00Z";
        assert_eq!(allowed("Drifted", monday_23), Ok(3));
        assert_eq!(allowed("Empty", monday_23), Ok(1));
        assert_eq!(allowed("Underutilized", monday_23), Ok(1));
        assert_eq!(allowed("Empty", "2026-12-01T07:59:59Z"), Ok(1));
        assert_eq!(
            allowed("Empty", "2026-12-01T08:00:00Z"),
            Ok(3),
            "22:00 + 10h ends exactly at 08:00"
        );
        // A reason no budget names (budgets never see Expired) gets only the reason-less ones.
        assert_eq!(allowed("Expired", monday_23), Ok(3));
        assert_eq!(
            allowed_disruptions(&pool(vec![]), r("Empty"), 25, at(monday_10)),
            Ok(usize::MAX),
            "no budget: unbounded"
        );
        // Inactive budgets bound nothing.
        let only_scheduled = pool(vec![budget("0", Some(("0 9 * * mon-fri", "8h")), &[])]);
        assert_eq!(
            allowed_disruptions(&only_scheduled, r("Empty"), 25, at(monday_23)),
            Ok(usize::MAX)
        );
        assert_eq!(
            allowed_disruptions(&only_scheduled, r("Empty"), 25, at(monday_10)),
            Ok(0)
        );
    }

    #[test]
    fn a_change_freeze_of_1464h_holds_for_two_months() {
        // From December 1st, 61 days: no disruption at all until January 31st.
        let p = pool(vec![
            budget("20%", None, &[]),
            budget("0", Some(("0 0 1 12 *", "1464h")), &[]),
        ]);
        for (now, want) in [
            ("2026-11-30T23:59:00Z", 2),
            ("2026-12-01T00:00:00Z", 0),
            ("2027-01-30T00:00:00Z", 0),
            ("2027-01-30T23:59:59Z", 0),
            ("2027-01-31T00:00:00Z", 2),
            ("2027-02-01T00:00:00Z", 2),
        ] {
            for reason in ["Underutilized", "Empty", "Drifted"] {
                assert_eq!(
                    allowed_disruptions(&p, r(reason), 10, at(now)),
                    Ok(want),
                    "{reason} at {now}"
                );
            }
        }
    }

    #[test]
    fn an_invalid_budget_allows_nothing_for_any_reason() {
        let now = at("2026-11-30T10:00:00Z");
        let cases = [
            (
                budget("lots", None, &["Drifted"]),
                "invalid budget nodes \"lots\"",
                ".nodes",
            ),
            (
                budget("0", Some(("0 0 * * 7", "8h")), &["Drifted"]),
                "day of week: 7",
                ".schedule",
            ),
            (
                budget("0", Some(("@every 1h", "8h")), &["Drifted"]),
                "@every is not accepted",
                ".schedule",
            ),
            (
                budget("0", Some(("0 9 * * *", "1.5h")), &["Drifted"]),
                "invalid budget duration \"1.5h\"",
                ".duration",
            ),
            (
                budget("1", None, &["Expired"]),
                "unknown reason \"Expired\"",
                ".reasons",
            ),
            (
                BudgetSpec {
                    duration: None,
                    ..budget("1", Some(("@daily", "1h")), &["Drifted"])
                },
                "set both or neither",
                "",
            ),
        ];
        for (bad, message, field) in cases {
            // The bad budget names Drifted only, and is inactive or valid-looking otherwise:
            // upstream still fails the whole pool (MustGetAllowedDisruptions returns 0).
            let p = pool(vec![budget("100%", None, &[]), bad]);
            for reason in ["Underutilized", "Empty", "Drifted"] {
                let e = allowed_disruptions(&p, r(reason), 10, now).unwrap_err();
                assert!(e.contains(message), "{e}");
                assert!(e.ends_with(&format!("(budgets[1]{field})")), "{e}");
            }
            let problems = settings_problems(&p);
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(problems[0].0, format!("spec.disruption.budgets[1]{field}"));
            assert!(problems[0].1.contains(message), "{:?}", problems[0]);
        }
    }

    #[test]
    fn an_impossible_schedule_is_always_active_as_upstream() {
        // robfig finds no February 30th within five years and returns Go's zero time, which
        // core's IsActive reads as "the hit is not after now": the budget applies.
        let p = pool(vec![
            budget("100%", None, &[]),
            budget("0", Some(("0 0 30 2 *", "1h")), &[]),
        ]);
        for now in [
            "2026-11-30T10:00:00Z",
            "2027-02-28T10:00:00Z",
            "2030-07-01T00:00:00Z",
        ] {
            assert_eq!(
                allowed_disruptions(&p, r("Empty"), 10, at(now)),
                Ok(0),
                "{now}"
            );
        }
        assert!(
            settings_problems(&p).is_empty(),
            "the CRD and robfig accept it"
        );
    }

    #[test]
    fn settings_problems_name_the_field() {
        let mut implicit = NodePool::implicit();
        implicit.consolidate_after = Some("soon".into());
        implicit.budgets[0].schedule = Some("@daily".into());
        let problems = settings_problems(&implicit);
        assert_eq!(problems[0].0, "spec.disruption.consolidateAfter");
        assert!(problems[0].1.starts_with("invalid duration \"soon\""));
        assert_eq!(problems[1].0, "spec.disruption.budgets[0]");
        assert_eq!(problems.len(), 2);
        assert!(settings_problems(&NodePool::implicit()).is_empty());
        // Every problem of every budget, each under its own field.
        let p = pool(vec![
            budget("10%", None, &[]),
            budget("x", Some(("0 25 * * *", "1d")), &["Empty", "Soon"]),
        ]);
        let fields: Vec<String> = settings_problems(&p).into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            vec![
                "spec.disruption.budgets[1].nodes",
                "spec.disruption.budgets[1].schedule",
                "spec.disruption.budgets[1].duration",
                "spec.disruption.budgets[1].reasons",
            ]
        );
    }

    /// The states of core v1.14.1 `pkg/apis/v1/nodepool_budgets_test.go`, rebuilt here: at
    /// 2000-06-15T12:30:30Z (a Thursday), five budgets of `* * * * *` for 1h (10, 100, 100%,
    /// 15 for Drifted and Underutilized, 5 for Drifted) and `@weekly` for 1h (0 for every
    /// reason, inactive on a Thursday afternoon).
    fn upstream_budgets() -> Vec<BudgetSpec> {
        let every_minute = Some(("* * * * *", "1h"));
        vec![
            budget("10", every_minute, &[]),
            budget("100", every_minute, &[]),
            budget("100%", every_minute, &[]),
            budget("15", every_minute, &["Drifted", "Underutilized"]),
            budget("5", every_minute, &["Drifted"]),
            budget(
                "0",
                Some(("@weekly", "1h")),
                &["Underutilized", "Drifted", "Empty"],
            ),
        ]
    }

    const UPSTREAM_NOW: &str = "2000-06-15T12:30:30Z";
    const REASONS: [&str; 3] = ["Empty", "Underutilized", "Drifted"];

    fn by_reason(budgets: Vec<BudgetSpec>, reason: &str) -> Result<usize, String> {
        allowed_disruptions(&pool(budgets), r(reason), 100, at(UPSTREAM_NOW))
    }

    #[test]
    fn upstream_by_reason_cases() {
        // A zero budget active for every reason: 0 for each.
        let mut b = upstream_budgets();
        b[5].schedule = Some("* * * * *".into());
        for r in REASONS {
            assert_eq!(by_reason(b.clone(), r), Ok(0), "{r}");
        }
        // No budget active: unbounded for each.
        let mut b = upstream_budgets();
        for x in &mut b {
            x.schedule = Some("@yearly".into());
        }
        for r in REASONS {
            assert_eq!(by_reason(b.clone(), r), Ok(usize::MAX), "{r}");
        }
        // Reason budgets inactive: the reason-less 10 for each.
        let mut b = upstream_budgets();
        b[3].schedule = Some("@yearly".into());
        b[4].schedule = Some("@yearly".into());
        for r in REASONS {
            assert_eq!(by_reason(b.clone(), r), Ok(10), "{r}");
        }
        // A single reason-less budget applies to every reason.
        for r in REASONS {
            assert_eq!(
                by_reason(upstream_budgets()[..1].to_vec(), r),
                Ok(10),
                "{r}"
            );
        }
        // The minimum per reason, with one more of 4 for Empty.
        let mut b = upstream_budgets();
        b.push(budget("4", Some(("* * * * *", "1h")), &["Empty"]));
        assert_eq!(by_reason(b.clone(), "Empty"), Ok(4));
        assert_eq!(by_reason(b.clone(), "Drifted"), Ok(5));
        assert_eq!(by_reason(b, "Underutilized"), Ok(10));
    }

    #[test]
    fn upstream_allowed_disruptions_cases() {
        let first = |f: &dyn Fn(&mut BudgetSpec)| {
            let mut b = upstream_budgets()[0].clone();
            f(&mut b);
            by_reason(vec![b], "Empty")
        };
        assert!(
            first(&|b| b.schedule = Some("@wrongly".into()))
                .unwrap_err()
                .starts_with("invalid schedule \"@wrongly\": expected five fields"),
            "the CRD's pattern refuses it before robfig would"
        );
        assert!(
            first(&|b| b.nodes = "1000a%".into())
                .unwrap_err()
                .contains("invalid budget nodes \"1000a%\"")
        );
        assert_eq!(
            first(&|b| b.schedule = Some("@yearly".into())),
            Ok(usize::MAX),
            "inactive"
        );
        assert_eq!(first(&|_| {}), Ok(10), "an active count");
        assert_eq!(
            by_reason(vec![upstream_budgets()[2].clone()], "Empty"),
            Ok(100),
            "an active 100% of 100"
        );
    }

    #[test]
    fn upstream_is_active_cases() {
        let active = |schedule: &str, duration: &str, now: &str| {
            Cron::parse(schedule)
                .unwrap()
                .active(at(now), budget_duration(duration).unwrap())
        };
        // Midnight of June 0th (May 31st) at UTC+1 is May 30th 23:00 UTC: @daily for 30m is over.
        assert!(!active("@daily", "30m", "2000-05-31T00:00:00+01:00"));
        assert!(active("* * * * *", "1h", UPSTREAM_NOW));
        assert!(!active("@yearly", "1h", UPSTREAM_NOW));
        assert!(
            active("@yearly", "24h", "1000-01-01T12:00:00Z"),
            "hit mid-window"
        );
        assert!(
            active("@daily", "48h", "2024-01-07T00:00:00Z"),
            "duration longer than the recurrence"
        );
        assert!(
            !active("30 6 * * SUN", "6h", "2024-01-07T00:00:00Z"),
            "the last hit (December 31st 06:30) is more than 6h ago"
        );
        // No schedule and no duration: always active (its nodes bound every reason).
        assert_eq!(by_reason(vec![budget("7", None, &[])], "Drifted"), Ok(7));
        assert!(
            Cron::parse("0 0 * * tue-mon")
                .unwrap_err()
                .contains("\"tue-mon\" starts after it ends")
        );
    }
}
