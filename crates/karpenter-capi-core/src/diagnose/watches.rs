//! The controller's watch health as it publishes it on its leader-election Lease
//! ([`WATCH_HEALTH_ANNOTATION`]), and `doctor`'s finding per watch failing there: `doctor` cannot
//! see a running controller's memory, so the controller writes the watches that have been
//! failing for longer than its bound (the same ones that make its `/readyz` fail), and this
//! check reads them back. The Lease is only trusted while it is held: a released or expired
//! one says nothing about a controller that runs now.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Area, Cause, Finding, Severity, format_secs, subject};
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::WATCH_HEALTH_ANNOTATION;
use crate::vocab::names::LEASE_NAME;

/// One watch failing for longer than the controller's bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailingWatch {
    /// What it watches: `<cluster> cluster <resource>` (`workload cluster pods`).
    pub resource: String,
    /// Its last error.
    pub error: String,
    /// When it started failing (its first failure in a row).
    pub since: Timestamp,
}

/// The annotation's value for these watches; none when every watch works (the annotation is
/// then removed).
pub fn encode(failing: &[FailingWatch]) -> Option<String> {
    if failing.is_empty() {
        return None;
    }
    serde_json::to_string(failing).ok()
}

/// The watches an annotation value lists.
pub fn decode(value: &str) -> Result<Vec<FailingWatch>, serde_json::Error> {
    serde_json::from_str(value)
}

/// One error per watch the held controller Lease lists as failing, naming the resource, the
/// error and since when; a warning when the annotation cannot be read.
pub(crate) fn check(snapshot: &Snapshot, now: Timestamp, out: &mut Vec<Finding>) {
    for lease in snapshot.objects.iter().filter(|o| {
        o.group() == "coordination.k8s.io"
            && o.kind == "Lease"
            && o.meta.name.as_deref() == Some(LEASE_NAME)
    }) {
        let Some(value) = lease
            .meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(WATCH_HEALTH_ANNOTATION))
        else {
            continue;
        };
        let held = lease
            .value
            .pointer("/spec/holderIdentity")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|h| !h.is_empty());
        // Renewed within its duration (when it says when): a Lease left by a controller that
        // stopped long ago describes no watch that runs now.
        let renewed = lease
            .value
            .pointer("/spec/renewTime")
            .and_then(serde_json::Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok());
        let duration = lease
            .value
            .pointer("/spec/leaseDurationSeconds")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let expired = renewed.is_some_and(|r| r.as_second() + duration < now.as_second());
        if !held || expired {
            continue;
        }
        let ns = lease.meta.namespace.as_deref().unwrap_or_default();
        let subj = subject("Lease", ns, LEASE_NAME);
        match decode(value) {
            Ok(failing) => {
                for w in failing {
                    out.push(Finding::new(
                        Area::Controller,
                        Cause::WatchFailing,
                        Severity::Error,
                        subj.clone(),
                        format!(
                            "the controller's watch of {} has been failing since {} ({} ago): {}; its store goes stale and /readyz fails",
                            w.resource,
                            w.since,
                            format_secs(now.as_second() - w.since.as_second()),
                            w.error
                        ),
                        format!(
                            "check that the API server serves {} and that the controller may list and watch it (`kubectl logs -n {ns} deployment/karpenter-capi` shows each retry)",
                            w.resource
                        ),
                    ));
                }
            }
            Err(e) => out.push(Finding::new(
                Area::Controller,
                Cause::WatchFailing,
                Severity::Warning,
                subj,
                format!("{WATCH_HEALTH_ANNOTATION} cannot be read ({e}): {value:?}"),
                "the controller rewrites it on its next change; a controller of another version may write another format".to_string(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};

    fn lease(holder: &str, annotation: &str) -> Snapshot {
        renewed_lease(holder, annotation, "2026-12-02T10:07:25.000000Z")
    }

    fn renewed_lease(holder: &str, annotation: &str, renewed: &str) -> Snapshot {
        let text = format!(
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: {LEASE_NAME}\n  namespace: karpenter-capi\n  annotations:\n    {WATCH_HEALTH_ANNOTATION}: '{annotation}'\nspec: {{holderIdentity: '{holder}', leaseDurationSeconds: 15, renewTime: '{renewed}'}}\n"
        );
        snapshot_from_sources(&[Source {
            name: "lease.yaml".into(),
            text,
        }])
        .unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn each_failing_watch_on_a_held_lease_is_an_error_naming_resource_error_and_since() {
        let failing = vec![
            FailingWatch {
                resource: "workload cluster pods".into(),
                error: "ApiError: etcdserver: request timed out (500)".into(),
                since: at("2026-12-02T10:00:00Z"),
            },
            FailingWatch {
                resource: "management cluster machines".into(),
                error: "forbidden (403)".into(),
                since: at("2026-12-02T10:04:30Z"),
            },
        ];
        let value = encode(&failing).unwrap();
        assert_eq!(decode(&value).unwrap(), failing);
        let mut out = Vec::new();
        check(
            &lease("karpenter-capi-7d9_1", &value),
            at("2026-12-02T10:07:30Z"),
            &mut out,
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            out.iter()
                .all(|f| f.cause == Cause::WatchFailing && f.severity == Severity::Error)
        );
        assert_eq!(out[0].subject, "Lease/karpenter-capi/karpenter-capi");
        assert_eq!(
            out[0].message,
            "the controller's watch of workload cluster pods has been failing since 2026-12-02T10:00:00Z (7m30s ago): ApiError: etcdserver: request timed out (500); its store goes stale and /readyz fails"
        );
        assert!(out[1].message.starts_with("the controller's watch of management cluster machines has been failing since 2026-12-02T10:04:30Z (3m ago): forbidden (403)"), "{}", out[1].message);
    }

    #[test]
    fn a_released_or_expired_lease_or_healthy_watches_give_no_finding() {
        assert_eq!(encode(&[]), None);
        let value = encode(&[FailingWatch {
            resource: "workload cluster pods".into(),
            error: "x".into(),
            since: at("2026-12-02T10:00:00Z"),
        }])
        .unwrap();
        let mut out = Vec::new();
        check(&lease("", &value), at("2026-12-02T10:07:30Z"), &mut out);
        assert!(out.is_empty(), "released: {out:?}");
        let stale = renewed_lease("me", &value, "2026-12-02T10:07:14.000000Z");
        check(&stale, at("2026-12-02T10:07:30Z"), &mut out);
        assert!(out.is_empty(), "expired: {out:?}");
        check(&stale, at("2026-12-02T10:07:29Z"), &mut out);
        assert_eq!(out.len(), 1, "held: {out:?}");
    }

    #[test]
    fn an_unreadable_annotation_is_a_warning() {
        let mut out = Vec::new();
        check(
            &lease("me", "not json"),
            at("2026-12-02T10:07:30Z"),
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].severity, Severity::Warning);
        assert!(
            out[0].message.contains("cannot be read"),
            "{}",
            out[0].message
        );
    }
}
