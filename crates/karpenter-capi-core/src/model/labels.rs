//! Labels, node-selector requirements (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte) and
//! label selectors, with the Kubernetes matching rules.

use std::collections::BTreeMap;
use std::fmt;

use crate::vocab::keys;
use serde::Serialize;

/// A set of labels.
pub(crate) type Labels = BTreeMap<String, String>;

/// A requirement operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub(crate) enum Operator {
    /// The label's value is one of the values.
    In,
    /// The label is absent or its value is none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label's integer value is greater than the single value.
    Gt,
    /// ... less than.
    Lt,
    /// ... greater than or equal to.
    Gte,
    /// ... less than or equal to.
    Lte,
}

impl Operator {
    /// Parses the operator as written in Kubernetes objects.
    pub(crate) fn parse(text: &str) -> Option<Operator> {
        Some(match text {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            "Gte" => Operator::Gte,
            "Lte" => Operator::Lte,
            _ => return None,
        })
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One requirement on a label: `key operator values`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Requirement {
    /// The label key.
    pub(crate) key: String,
    /// The operator.
    pub(crate) operator: Operator,
    /// The values (empty for Exists / DoesNotExist).
    pub(crate) values: Vec<String>,
}

impl Requirement {
    /// A requirement from its parts.
    pub(crate) fn new(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.to_string(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// Whether a set of labels satisfies the requirement. Labels carrying only the deprecated
    /// beta alias of the requirement's (stable) key are read through the alias, as core reads
    /// a node's labels as requirements ([`normalized_key`]).
    pub fn matches(&self, labels: &Labels) -> bool {
        let value = labels
            .get(&self.key)
            .or_else(|| beta_alias_value(labels, &self.key));
        self.matches_value(value.map(String::as_str))
    }

    /// Whether a label value (None: the label is absent) satisfies the requirement.
    pub(crate) fn matches_value(&self, value: Option<&str>) -> bool {
        let compare = |want: fn(i64, i64) -> bool| -> bool {
            match (
                value.and_then(|v| v.parse::<i64>().ok()),
                self.values.first().and_then(|v| v.parse::<i64>().ok()),
            ) {
                (Some(have), Some(bound)) => want(have, bound),
                _ => false,
            }
        };
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt => compare(|a, b| a > b),
            Operator::Lt => compare(|a, b| a < b),
            Operator::Gte => compare(|a, b| a >= b),
            Operator::Lte => compare(|a, b| a <= b),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operator {
            Operator::Exists | Operator::DoesNotExist => {
                write!(f, "{} {}", self.key, self.operator)
            }
            _ => write!(
                f,
                "{} {} [{}]",
                self.key,
                self.operator,
                self.values.join(", ")
            ),
        }
    }
}

/// A label selector: `matchLabels` and `matchExpressions`, all of which must hold.
/// An empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct LabelSelector {
    /// Requirements, `matchLabels` turned into `In [value]`.
    pub(crate) requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Whether the labels satisfy every requirement.
    pub(crate) fn matches(&self, labels: &Labels) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Reads a Kubernetes `LabelSelector`; an unknown operator is reported as the error.
    pub(crate) fn from_k8s(
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<LabelSelector, String> {
        let mut requirements: Vec<Requirement> = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| Requirement {
                key: k.clone(),
                operator: Operator::In,
                values: vec![v.clone()],
            })
            .collect();
        for expr in selector.match_expressions.iter().flatten() {
            let operator = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(format!(
                        "unknown label selector operator {other:?} (valid: In, NotIn, Exists, DoesNotExist)"
                    ));
                }
            };
            requirements.push(Requirement {
                key: expr.key.clone(),
                operator,
                values: expr.values.clone().unwrap_or_default(),
            });
        }
        Ok(LabelSelector { requirements })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| match (r.operator, r.values.as_slice()) {
                (Operator::In, [one]) => format!("{}={}", r.key, one),
                _ => r.to_string(),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Parses `k1=v1,k2=v2` (Cluster Autoscaler's `labels` annotation). Empty entries are skipped.
pub(crate) fn parse_label_list(text: &str) -> Result<Labels, String> {
    let mut labels = Labels::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (k, v) = entry
            .split_once('=')
            .ok_or_else(|| format!("{entry:?} is not key=value"))?;
        if k.trim().is_empty() {
            return Err(format!("{entry:?} has an empty key"));
        }
        labels.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(labels)
}

/// The key a requirement on `key` is read as: a deprecated beta alias
/// (`beta.kubernetes.io/instance-type`, `failure-domain.beta.kubernetes.io/zone`, ...) becomes
/// its stable key, any other key stays. Mirrors core `scheduling/requirement.go`
/// `NewRequirementWithFlexibility` with `NormalizedLabels`: pod node selectors, node affinity,
/// NodePool requirements and volume topology are all read this way.
pub(crate) fn normalized_key(key: &str) -> &str {
    keys::NORMALIZED_LABELS
        .iter()
        .find(|(beta, _)| *beta == key)
        .map_or(key, |(_, stable)| stable)
}

/// The value of the beta alias of a stable key, for labels that lack the stable key.
fn beta_alias_value<'a>(labels: &'a Labels, stable_key: &str) -> Option<&'a String> {
    keys::NORMALIZED_LABELS
        .iter()
        .find(|(_, stable)| *stable == stable_key)
        .and_then(|(beta, _)| labels.get(*beta))
}

/// Karpenter's well-known labels (core `pkg/apis/v1/labels.go` `WellKnownLabels`): allowed on
/// NodeClaims even inside a restricted domain.
pub(crate) const WELL_KNOWN: &[&str] = &[
    keys::NODEPOOL,
    keys::ZONE,
    keys::REGION,
    keys::INSTANCE_TYPE,
    keys::ARCH,
    keys::OS,
    keys::CAPACITY_TYPE,
    "node.kubernetes.io/windows-build",
];

/// Whether Karpenter refuses this label on a NodeClaim (core `pkg/apis/v1/labels.go`
/// `IsRestrictedLabel`): a key in the `karpenter.sh` domain (or a subdomain) that is not
/// well-known, or `kubernetes.io/hostname`.
pub(crate) fn is_restricted_label(key: &str) -> bool {
    if WELL_KNOWN.contains(&key) {
        return false;
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    domain == "karpenter.sh" || domain.ends_with(".karpenter.sh") || key == keys::HOSTNAME
}

/// Whether a key is in a label domain that Cluster API copies from Machines to Nodes: the
/// `node-role.kubernetes.io` prefix itself, and `node-restriction.kubernetes.io` and
/// `node.cluster.x-k8s.io` with their subdomains (Cluster API's Machine label sync; the
/// provider's `machineDeploymentToInstanceType` filters template labels by the same rule).
pub(crate) fn is_capi_propagated(key: &str) -> bool {
    let prefix = key.split_once('/').map(|(p, _)| p).unwrap_or("");
    prefix == "node-role.kubernetes.io"
        || ["node-restriction.kubernetes.io", "node.cluster.x-k8s.io"]
            .iter()
            .any(|d| prefix == *d || prefix.ends_with(&format!(".{d}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn operators_follow_kubernetes_rules() {
        let l = labels(&[("arch", "amd64"), ("cpu", "8")]);
        let cases = [
            (
                Requirement::new("arch", Operator::In, &["amd64", "arm64"]),
                true,
            ),
            (Requirement::new("arch", Operator::In, &["arm64"]), false),
            (Requirement::new("arch", Operator::NotIn, &["arm64"]), true),
            (Requirement::new("missing", Operator::NotIn, &["x"]), true),
            (Requirement::new("missing", Operator::In, &["x"]), false),
            (Requirement::new("arch", Operator::Exists, &[]), true),
            (Requirement::new("arch", Operator::DoesNotExist, &[]), false),
            (Requirement::new("cpu", Operator::Gt, &["4"]), true),
            (Requirement::new("cpu", Operator::Lt, &["4"]), false),
            (Requirement::new("cpu", Operator::Gte, &["8"]), true),
            (Requirement::new("cpu", Operator::Lte, &["7"]), false),
            (Requirement::new("arch", Operator::Gt, &["4"]), false),
        ];
        for (req, want) in cases {
            assert_eq!(req.matches(&l), want, "{req}");
        }
    }

    #[test]
    fn label_lists_and_capi_domains() {
        let l = parse_label_list("a=1, b=2,,c=").unwrap();
        assert_eq!(l, labels(&[("a", "1"), ("b", "2"), ("c", "")]));
        assert!(parse_label_list("novalue").is_err());
        assert!(is_capi_propagated("node-role.kubernetes.io/worker"));
        assert!(is_restricted_label("karpenter.sh/registered"));
        assert!(is_restricted_label("x.karpenter.sh/y"));
        assert!(is_restricted_label("kubernetes.io/hostname"));
        assert!(!is_restricted_label("karpenter.sh/capacity-type"));
        assert!(!is_restricted_label("karpenter.sh/nodepool"));
        assert!(!is_restricted_label("node.kubernetes.io/instance-type"));
        assert!(!is_restricted_label(
            "karpenter.cluster.x-k8s.io/clusterapinodeclass"
        ));
        assert!(is_capi_propagated("foo.node.cluster.x-k8s.io/bar"));
        assert!(!is_capi_propagated("app"));
        assert!(!is_capi_propagated("evilnode.cluster.x-k8s.io/x"));
        // Subdomains count for two of the domains, not for node-role (K-CP-034).
        assert!(is_capi_propagated("a.node-restriction.kubernetes.io/x"));
        assert!(!is_capi_propagated("prefixed.node-role.kubernetes.io/x"));
    }
}
