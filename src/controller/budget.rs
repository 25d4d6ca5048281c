//! Disruption budgets and the NodePool disruption settings they sit with: how many nodes a
//! budget allows now (counts, percentages, cron schedules with durations, reasons), and what in
//! a NodePool's disruption settings does not parse.

use jiff::Timestamp;

use crate::model::duration::{GoDuration, NillableDuration};
use crate::model::nodepool::NodePool;

/// How many nodes a budget allows: a count, or a percentage of the pool's nodes rounded up.
pub fn budget_nodes(spec: &str, total: usize) -> Result<usize, String> {
    let t = spec.trim();
    let bad = || {
        format!(
            "invalid budget nodes {t:?}: expected a count such as 3 or a percentage such as 10%"
        )
    };
    match t.strip_suffix('%') {
        Some(p) => {
            let pct: usize = p.parse().map_err(|_| bad())?;
            if pct > 100 {
                return Err(bad());
            }
            Ok((pct * total).div_ceil(100))
        }
        None => t.parse().map_err(|_| bad()),
    }
}

/// The number of nodes of a pool that may be disrupted at `now` for `reason`: the most
/// restrictive budget that applies and is active (a budget with a schedule is active for
/// `duration` after each time its cron schedule fires, in UTC).
pub fn allowed_disruptions(
    pool: &NodePool,
    reason: &str,
    total: usize,
    now: Timestamp,
) -> Result<usize, String> {
    let mut allowed = usize::MAX;
    for b in &pool.budgets {
        if !b.reasons.is_empty() && !b.reasons.iter().any(|r| r == reason) {
            continue;
        }
        let nodes = budget_nodes(&b.nodes, total)?;
        match (&b.schedule, &b.duration) {
            (None, None) => {}
            (Some(schedule), Some(duration)) => {
                let d = duration
                    .parse::<GoDuration>()
                    .map_err(|e| format!("budget duration: {e}"))?;
                if !crate::model::cron::Cron::parse(schedule)?.active(now, d.as_secs_i64()) {
                    continue;
                }
            }
            _ => return Err("a budget needs both schedule and duration, or neither".to_string()),
        }
        allowed = allowed.min(nodes);
    }
    Ok(allowed)
}

/// What is wrong with a NodePool's disruption settings, as (field, problem) pairs: durations
/// (`consolidateAfter`, `expireAfter`, `terminationGracePeriod`), budget counts, schedules and
/// durations. `run` skips disruption for such a pool; `doctor` reports them.
pub fn settings_problems(pool: &NodePool) -> Vec<(String, String)> {
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
        let field = format!("spec.disruption.budgets[{i}]");
        if let Err(e) = budget_nodes(&b.nodes, 1) {
            out.push((format!("{field}.nodes"), e));
        }
        match (&b.schedule, &b.duration) {
            (None, None) => {}
            (Some(s), Some(d)) => {
                if let Err(e) = crate::model::cron::Cron::parse(s) {
                    out.push((format!("{field}.schedule"), e));
                }
                if let Err(e) = d.parse::<GoDuration>() {
                    out.push((format!("{field}.duration"), e));
                }
            }
            _ => out.push((
                field.clone(),
                "schedule and duration go together: set both or neither".to_string(),
            )),
        }
        for r in &b.reasons {
            if !matches!(r.as_str(), "Underutilized" | "Empty" | "Drifted") {
                out.push((
                    format!("{field}.reasons"),
                    format!("unknown reason {r:?} (valid: Underutilized, Empty, Drifted)"),
                ));
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
    }

    #[test]
    fn settings_problems_name_the_field() {
        let mut pool = NodePool::implicit();
        pool.consolidate_after = Some("soon".into());
        pool.budgets[0].schedule = Some("@daily".into());
        let problems = settings_problems(&pool);
        assert_eq!(problems[0].0, "spec.disruption.consolidateAfter");
        assert!(problems[0].1.starts_with("invalid duration \"soon\""));
        assert_eq!(problems[1].0, "spec.disruption.budgets[0]");
        assert!(settings_problems(&NodePool::implicit()).is_empty());
    }
}
