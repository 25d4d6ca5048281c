//! A NodePool's runtime validation: what the CRD's schema cannot check and Karpenter's
//! `nodepool.validation` controller does (core `pkg/apis/v1/nodepool_validation.go`
//! RuntimeValidate, `nodeclaim_validation.go` validateTaints and ValidateRequirement). A pool
//! failing it reports `ValidationSucceeded=False` and is not Ready, so nothing is provisioned
//! for it; every problem is named, with the field it is in.

use super::labels::{Operator, is_restricted_label};
use super::nodepool::NodePool;
use super::taints::Taint;
use crate::vocab::keys;

/// Capacity types a requirement may name (core `WellKnownValuesForRequirements`).
const CAPACITY_TYPES: [&str; 3] = ["on-demand", "spot", "reserved"];

/// Kubernetes' name segment: 1-63 characters, alphanumerics, `-`, `_` and `.`, beginning and
/// ending alphanumeric (`validation.IsQualifiedName`'s name part, `IsValidLabelValue` when not
/// empty).
fn name_segment_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".into());
    }
    if s.len() > 63 {
        return Some(format!("must be at most 63 characters, not {}", s.len()));
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = s.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
        && s.starts_with(alnum)
        && s.ends_with(alnum);
    (!ok).then(|| {
        "must be alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric".into()
    })
}

/// A DNS-1123 subdomain (a qualified name's prefix): at most 253 characters of lower-case
/// labels separated by dots.
fn subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() || s.len() > 253 {
        return Some("its prefix must be a DNS subdomain of 1 to 253 characters".into());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    (!s.split('.').all(label_ok)).then(|| {
        "its prefix must be lower-case alphanumerics and '-', in dot-separated parts".into()
    })
}

/// Why `s` is not a qualified name (`prefix/name` or `name`), if it is not.
fn qualified_name_problem(s: &str) -> Option<String> {
    match s.split('/').collect::<Vec<_>>().as_slice() {
        [name] => name_segment_problem(name),
        [prefix, name] => subdomain_problem(prefix).or_else(|| name_segment_problem(name)),
        _ => Some("must be a name with at most one '/' prefix".into()),
    }
}

/// Why `s` is not a valid label value, if it is not (empty is valid); `init` checks its
/// labels by the same rule.
pub(crate) fn label_value_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        name_segment_problem(s)
    }
}

/// Every problem Karpenter's runtime validation finds in `pool`, in the order of its fields.
pub(crate) fn runtime_problems(pool: &NodePool) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in &pool.labels {
        if key == keys::NODEPOOL || is_restricted_label(key) {
            out.push(format!(
                "spec.template.metadata.labels: {key:?} is restricted to Karpenter"
            ));
        }
        if let Some(p) = qualified_name_problem(key) {
            out.push(format!("spec.template.metadata.labels: key {key:?} {p}"));
        }
        if let Some(p) = label_value_problem(value) {
            out.push(format!(
                "spec.template.metadata.labels[{key}]: value {value:?} {p}"
            ));
        }
    }
    let mut seen: Vec<(&str, super::taints::Effect)> = Vec::new();
    for (field, taints) in [
        ("taints", &pool.taints),
        ("startupTaints", &pool.startup_taints),
    ] {
        for Taint { key, value, effect } in taints {
            if let Some(p) = qualified_name_problem(key) {
                out.push(format!("spec.template.spec.{field}: key {key:?} {p}"));
            }
            if let Some(p) = (!value.is_empty())
                .then(|| qualified_name_problem(value))
                .flatten()
            {
                out.push(format!(
                    "spec.template.spec.{field}[{key}]: value {value:?} {p}"
                ));
            }
            let pair = (key.as_str(), *effect);
            if seen.contains(&pair) {
                out.push(format!(
                    "spec.template.spec.{field}: taint {key}:{effect} appears twice"
                ));
            }
            seen.push(pair);
        }
    }
    for r in &pool.requirements {
        let at = format!("spec.template.spec.requirements[{}]", r.key);
        if r.key == keys::NODEPOOL || is_restricted_label(&r.key) {
            out.push(format!("{at}: the key is restricted to Karpenter"));
        }
        if let Some(p) = qualified_name_problem(&r.key) {
            out.push(format!("{at}: key {p}"));
        }
        for v in &r.values {
            if let Some(p) = label_value_problem(v) {
                out.push(format!("{at}: value {v:?} {p}"));
            }
        }
        let min = pool.min_values.get(&r.key).copied();
        match r.operator {
            Operator::In => {
                if r.values.is_empty() {
                    out.push(format!("{at}: operator In needs at least one value"));
                } else if min.is_some_and(|m| r.values.len() < m) {
                    out.push(format!(
                        "{at}: minValues {} is more than its {} values",
                        min.unwrap_or(0),
                        r.values.len()
                    ));
                }
                if r.key == keys::CAPACITY_TYPE {
                    let known = r
                        .values
                        .iter()
                        .filter(|v| CAPACITY_TYPES.contains(&v.as_str()))
                        .count();
                    if known == 0 {
                        out.push(format!(
                            "{at}: none of {:?} is a capacity type (on-demand, spot, reserved)",
                            r.values
                        ));
                    } else if min.is_some_and(|m| known < m) {
                        out.push(format!(
                            "{at}: {known} known capacity types, fewer than minValues {}",
                            min.unwrap_or(0)
                        ));
                    }
                }
            }
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte => {
                let single = match r.values.as_slice() {
                    [v] => v.parse::<i64>().is_ok_and(|n| n >= 0),
                    _ => false,
                };
                if !single {
                    out.push(format!(
                        "{at}: operator {} needs a single non-negative integer value",
                        r.operator
                    ));
                }
            }
            Operator::NotIn | Operator::Exists | Operator::DoesNotExist => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kubernetes_rules() {
        assert_eq!(qualified_name_problem("example.com/team"), None);
        assert_eq!(qualified_name_problem("team"), None);
        assert!(qualified_name_problem(&"a".repeat(64)).is_some());
        assert!(qualified_name_problem(&format!("x/{}", "a".repeat(250))).is_some());
        assert!(qualified_name_problem("Example.com/team").is_some());
        assert!(qualified_name_problem("a/b/c").is_some());
        assert!(qualified_name_problem("-team").is_some());
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("v1.2_x-y"), None);
        assert!(label_value_problem("a b").is_some());
    }
}
