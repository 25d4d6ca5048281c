//! Values the API server accepts but the core cannot hold exactly, as data: each is clamped (a
//! quantity beyond `i64` to the largest value, a negative NodePool limit to 0, a time past what
//! a timestamp can hold to the latest one) or its object skipped, and an [`Oddity`] names the
//! object, the field, the value and what was done. They flow to the log, a metric
//! (`karpenter_capi_odd_values`) and a `doctor` finding (`UnrepresentableValue`), and the pass
//! goes on for everything else. Pure.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::quantity;

/// What was done with an odd value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Treatment {
    /// Replaced by the nearest value the core can hold.
    Clamped,
    /// The whole object was left out of the pass.
    Skipped,
}

/// One value the core could not hold exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Oddity {
    /// Where the object came from (`workload cluster`, `dump.yaml#2`).
    pub origin: String,
    /// The object's kind.
    pub kind: String,
    /// `namespace/name`, or `name` for cluster-scoped objects.
    pub name: String,
    /// The field (`spec.limits.cpu`), or the object's first failing field when skipped.
    pub field: String,
    /// The value as written, or why the object could not be read when skipped.
    pub value: String,
    /// Clamped or skipped.
    pub treatment: Treatment,
    /// What the core uses instead (`0`, `9223372036854775807`), empty when skipped.
    pub used: String,
}

impl Oddity {
    /// `Kind/namespace/name` (or `Kind/name`), the subject of the `doctor` finding.
    pub(crate) fn subject(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

impl fmt::Display for Oddity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.treatment {
            Treatment::Clamped => write!(
                f,
                "{}: {} {}: {} {:?} cannot be held exactly; using {}",
                self.origin, self.kind, self.name, self.field, self.value, self.used
            ),
            Treatment::Skipped => write!(
                f,
                "{}: {} {}: skipped, {}: {}",
                self.origin, self.kind, self.name, self.field, self.value
            ),
        }
    }
}

/// The latest instant a timestamp holds (jiff's, 2 hours short of the end of year 9999, since
/// it keeps room for any UTC offset); Kubernetes accepts times up to `9999-12-31T23:59:59Z`.
pub(crate) fn latest_time() -> jiff::Timestamp {
    jiff::Timestamp::MAX
}

/// Rewrites, in place, every RFC 3339 time string that lies past [`latest_time`] (the last
/// hours of year 9999) to that latest time, returning the JSON paths and values rewritten.
/// Only strings of that shape are touched; everything else is left as is.
pub(crate) fn clamp_times(value: &mut Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    clamp_times_at(value, &mut String::new(), &mut out);
    out
}

fn clamp_times_at(value: &mut Value, path: &mut String, out: &mut Vec<(String, String)>) {
    match value {
        // RFC 3339 with a 4-digit year: only year 9999 can exceed the range.
        Value::String(s)
            if s.starts_with("9999-")
                && s.len() >= 20
                && s.as_bytes().get(10) == Some(&b'T')
                && looks_like_time(s)
                && s.parse::<jiff::Timestamp>().is_err() =>
        {
            out.push((path.trim_start_matches('.').to_string(), s.clone()));
            *s = latest_time().to_string();
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                clamp_times_at(item, path, out);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                clamp_times_at(v, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// `9999-MM-DDTHH:MM:SS...`: digits where an RFC 3339 time has them.
fn looks_like_time(s: &str) -> bool {
    let b = s.as_bytes();
    [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        .iter()
        .all(|&i| b.get(i).is_some_and(u8::is_ascii_digit))
        && b.get(4) == Some(&b'-')
        && b.get(7) == Some(&b'-')
        && b.get(13) == Some(&b':')
        && b.get(16) == Some(&b':')
}

/// Resource quantities of an object the parsers clamp, as (field, value, value used): a Pod's
/// container, init container and overhead requests and limits, a workload's template, a Node's
/// capacity and allocatable beyond `i64` (the largest value), a NodePool's negative (0) or
/// overflowing limits.
pub(crate) fn clamped_quantities(kind: &str, value: &Value) -> Vec<(String, String, i64)> {
    let mut out = Vec::new();
    if kind == "NodePool" {
        for (name, q) in value
            .pointer("/spec/limits")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let text = q.as_str().map_or_else(|| q.to_string(), str::to_string);
            if let Ok((used, true)) = quantity::read_limit(&text, name == "cpu") {
                out.push((format!("spec.limits.{name}"), text, used));
            }
        }
        return out;
    }
    let mut check_list = |field: String, list: Option<&Value>, cpu_in_millis: bool| {
        for (name, q) in list.and_then(Value::as_object).into_iter().flatten() {
            let Some(text) = q
                .as_str()
                .map(str::to_string)
                .or_else(|| q.is_number().then(|| q.to_string()))
            else {
                continue;
            };
            let read = if cpu_in_millis && name == "cpu" {
                quantity::read_millis(&text)
            } else {
                quantity::read_units(&text)
            };
            if let Ok((used, true)) = read {
                out.push((format!("{field}[{name}]"), text, used));
            }
        }
    };
    let mut spec_lists = |spec: Option<&Value>, prefix: &str| {
        let Some(spec) = spec else { return };
        for list in ["containers", "initContainers"] {
            for (i, c) in spec
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                for part in ["requests", "limits"] {
                    check_list(
                        format!("{prefix}.{list}[{i}].resources.{part}"),
                        c.pointer(&format!("/resources/{part}")),
                        true,
                    );
                }
            }
        }
        check_list(format!("{prefix}.overhead"), spec.get("overhead"), true);
        for part in ["requests", "limits"] {
            check_list(
                format!("{prefix}.resources.{part}"),
                spec.pointer(&format!("/resources/{part}")),
                true,
            );
        }
    };
    match kind {
        "Pod" => spec_lists(value.get("spec"), "spec"),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "Job" | "DaemonSet" => {
            spec_lists(value.pointer("/spec/template/spec"), "spec.template.spec")
        }
        "Node" => {
            for part in ["capacity", "allocatable"] {
                check_list(
                    format!("status.{part}"),
                    value.pointer(&format!("/status/{part}")),
                    true,
                );
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clamps_times_past_the_latest_and_names_the_path() {
        let mut v = json!({
            "metadata": {"creationTimestamp": "9999-12-31T23:59:59Z"},
            "status": {"conditions": [
                {"type": "Ready", "lastHeartbeatTime": "9999-12-31T23:00:00Z"},
                {"type": "Other", "lastTransitionTime": "9999-01-01T00:00:00Z"},
            ]},
            "note": "9999-not-a-time",
        });
        let changed = clamp_times(&mut v);
        assert_eq!(
            changed,
            vec![
                (
                    "metadata.creationTimestamp".to_string(),
                    "9999-12-31T23:59:59Z".to_string()
                ),
                (
                    "status.conditions[0].lastHeartbeatTime".to_string(),
                    "9999-12-31T23:00:00Z".to_string()
                ),
            ]
        );
        assert_eq!(
            v["metadata"]["creationTimestamp"],
            json!(latest_time().to_string())
        );
        // Year 9999 within range and non-times are left alone.
        assert_eq!(
            v["status"]["conditions"][1]["lastTransitionTime"],
            json!("9999-01-01T00:00:00Z")
        );
        assert_eq!(v["note"], json!("9999-not-a-time"));
        assert!(latest_time().to_string().parse::<jiff::Timestamp>().is_ok());
    }

    #[test]
    fn finds_saturated_pod_and_node_quantities() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"memory": "9Ei", "cpu": "1"}}},
        ], "overhead": {"cpu": "1e30"}}});
        assert_eq!(
            clamped_quantities("Pod", &pod),
            vec![
                (
                    "spec.containers[0].resources.requests[memory]".to_string(),
                    "9Ei".to_string(),
                    i64::MAX
                ),
                (
                    "spec.overhead[cpu]".to_string(),
                    "1e30".to_string(),
                    i64::MAX
                ),
            ]
        );
        let node =
            json!({"status": {"capacity": {"memory": "7Ei"}, "allocatable": {"memory": "16Ei"}}});
        assert_eq!(
            clamped_quantities("Node", &node),
            vec![(
                "status.allocatable[memory]".to_string(),
                "16Ei".to_string(),
                i64::MAX
            )]
        );
        let pool = json!({"spec": {"limits": {"cpu": "-1", "memory": "1e50", "nodes": 10}}});
        assert_eq!(
            clamped_quantities("NodePool", &pool),
            vec![
                ("spec.limits.cpu".to_string(), "-1".to_string(), 0),
                (
                    "spec.limits.memory".to_string(),
                    "1e50".to_string(),
                    i64::MAX
                ),
            ]
        );
    }
}
