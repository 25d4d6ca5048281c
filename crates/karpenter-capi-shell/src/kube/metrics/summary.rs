//! A Prometheus summary family, which `prometheus_client` does not offer: core reports
//! `karpenter_nodes_termination_duration_seconds` as one. Quantiles are exact over the
//! observations of a sliding window (client_golang's default 10 minutes; NaN when it holds
//! none, as client_golang reports); `_sum` and `_count` keep every observation. Rendered in the
//! OpenMetrics text format beside the registry.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

type Labels = Vec<(String, String)>;

/// Observations kept per series for the quantiles at most (the oldest go first).
const WINDOW_CAP: usize = 10_000;

#[derive(Debug, Default)]
struct Series {
    count: u64,
    sum: f64,
    recent: VecDeque<(Instant, f64)>,
}

/// A summary family: one series per label set.
#[derive(Debug)]
pub struct Summary {
    quantiles: Vec<f64>,
    max_age: Duration,
    series: Mutex<BTreeMap<Labels, Series>>,
}

impl Summary {
    /// A summary reporting these quantiles over observations younger than `max_age`.
    pub fn new(quantiles: &[f64], max_age: Duration) -> Summary {
        Summary {
            quantiles: quantiles.to_vec(),
            max_age,
            series: Mutex::default(),
        }
    }

    /// Observes `value` in the series of `labels`.
    pub fn observe(&self, labels: &Labels, value: f64) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        let s = series.entry(labels.clone()).or_default();
        s.count += 1;
        s.sum += value;
        s.recent.push_back((Instant::now(), value));
        while s.recent.len() > WINDOW_CAP {
            s.recent.pop_front();
        }
    }

    /// The number of observations of a series and their sum.
    pub fn count_and_sum(&self, labels: &Labels) -> Option<(u64, f64)> {
        let series = self.series.lock().ok()?;
        series.get(labels).map(|s| (s.count, s.sum))
    }

    /// Appends the family in the OpenMetrics text format (nothing while it has no series).
    pub fn encode(&self, name: &str, help: &str, out: &mut String) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        if series.is_empty() {
            return;
        }
        let now = Instant::now();
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} summary");
        for (labels, s) in series.iter_mut() {
            while s
                .recent
                .front()
                .is_some_and(|(t, _)| now.saturating_duration_since(*t) > self.max_age)
            {
                s.recent.pop_front();
            }
            let mut values: Vec<f64> = s.recent.iter().map(|(_, v)| *v).collect();
            values.sort_by(f64::total_cmp);
            for q in &self.quantiles {
                let mut with_q = labels.clone();
                with_q.push(("quantile".to_string(), format!("{q:?}")));
                let _ = writeln!(
                    out,
                    "{name}{} {:?}",
                    render_labels(&with_q),
                    quantile(&values, *q)
                );
            }
            let _ = writeln!(out, "{name}_sum{} {:?}", render_labels(labels), s.sum);
            let _ = writeln!(out, "{name}_count{} {}", render_labels(labels), s.count);
        }
    }
}

/// The `q` quantile of sorted values by nearest rank (the least for 0, the greatest for 1);
/// NaN for none.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1).min(sorted.len() - 1)]
}

fn render_labels(labels: &Labels) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = labels
        .iter()
        .map(|(k, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{k}=\"{v}\"")
        })
        .collect();
    format!("{{{}}}", inner.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 2.0);
        assert_eq!(quantile(&v, 0.9), 4.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[tokio::test(start_paused = true)]
    async fn old_observations_leave_the_quantiles_not_the_sum() {
        let s = Summary::new(&[0.5], Duration::from_secs(600));
        let l = vec![("nodepool".to_string(), "a\"b".to_string())];
        s.observe(&l, 3.0);
        tokio::time::advance(Duration::from_secs(601)).await;
        s.observe(&l, 5.0);
        let mut out = String::new();
        s.encode("x_seconds", "Help.", &mut out);
        assert_eq!(
            out,
            "# HELP x_seconds Help.\n# TYPE x_seconds summary\nx_seconds{nodepool=\"a\\\"b\",quantile=\"0.5\"} 5.0\nx_seconds_sum{nodepool=\"a\\\"b\"} 8.0\nx_seconds_count{nodepool=\"a\\\"b\"} 2\n"
        );
    }
}
