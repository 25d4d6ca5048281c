//! Karpenter NodePools and ClusterAPINodeClasses as the core uses them: requirements, template
//! labels and taints, limits, weight, disruption settings (kept as written; validated where used).

use serde::Serialize;

use super::labels::{LabelSelector, Labels, Operator, Requirement, normalized_key};
use super::object::RawObject;
use super::quantity;
use super::taints::Taint;
use crate::error::Error;
use crate::vocab::keys;

/// A resource limit of a NodePool (`cpu` in millicores, `memory` in bytes, `nodes` a count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Limit {
    /// Resource name.
    pub(crate) resource: String,
    /// The limit, in the resource's integer unit.
    pub(crate) amount: i64,
}

/// One disruption budget, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BudgetSpec {
    /// `nodes`: a count or a percentage.
    pub(crate) nodes: String,
    /// Cron schedule (UTC), if any.
    pub(crate) schedule: Option<String>,
    /// How long the schedule stays active.
    pub(crate) duration: Option<String>,
    /// The reasons it applies to (empty: all).
    pub(crate) reasons: Vec<String>,
}

/// A NodePool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// Name.
    pub name: String,
    /// UID (for owner references), when read from a cluster or a dump.
    pub(crate) uid: Option<String>,
    /// Weight (higher first).
    pub(crate) weight: i32,
    /// Requirements every node of the pool satisfies.
    pub(crate) requirements: Vec<Requirement>,
    /// `minValues` of the requirements, per key (the largest when a key repeats, as Karpenter
    /// merges requirements): a NodeClaim must keep at least this many distinct values of the key
    /// among its instance types.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) min_values: std::collections::BTreeMap<String, usize>,
    /// `spec.template.metadata.labels`.
    pub(crate) labels: Labels,
    /// `spec.template.metadata.annotations`.
    pub(crate) annotations: Labels,
    /// Taints every node gets.
    pub(crate) taints: Vec<Taint>,
    /// Taints every node starts with, removed by something else once ready.
    pub(crate) startup_taints: Vec<Taint>,
    /// Limits.
    pub(crate) limits: Vec<Limit>,
    /// The node class name (`spec.template.spec.nodeClassRef.name`).
    pub(crate) node_class: Option<String>,
    /// `spec.template.spec.nodeClassRef` as written.
    pub(crate) node_class_ref: Option<serde_json::Value>,
    /// `WhenEmpty`, `WhenEmptyOrUnderutilized` or `Balanced`.
    pub(crate) consolidation_policy: String,
    /// As written (`30s`, `Never`).
    pub(crate) consolidate_after: Option<String>,
    /// Budgets as written; default `[{nodes: 10%}]`.
    pub(crate) budgets: Vec<BudgetSpec>,
    /// As written; default `720h`.
    pub(crate) expire_after: Option<String>,
    /// As written.
    pub(crate) termination_grace_period: Option<String>,
    /// `status.nodes` as reported (None: no object, or not reported yet).
    pub(crate) status_nodes: Option<i64>,
    /// `status.resources` as reported.
    pub(crate) status_resources: Option<std::collections::BTreeMap<String, String>>,
    /// `status.conditions[Ready].status == "True"`, when reported.
    pub(crate) ready: Option<bool>,
    /// `status.conditions[ValidationSucceeded].status == "True"`, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) validated: Option<bool>,
    /// `metadata.deletionTimestamp` is set: the pool is going away and provisions nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleting: bool,
    /// `spec.replicas`: a static NodePool (a fixed node count kept by its own controller), which
    /// provisioning never adds to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
}

impl NodePool {
    /// An implicit pool with no requirements, limits or taints, used when a scenario has none.
    pub(crate) fn implicit() -> NodePool {
        NodePool {
            name: "default".to_string(),
            uid: None,
            weight: 0,
            requirements: Vec::new(),
            min_values: Default::default(),
            labels: Labels::new(),
            annotations: Labels::new(),
            taints: Vec::new(),
            startup_taints: Vec::new(),
            limits: Vec::new(),
            node_class: None,
            node_class_ref: None,
            consolidation_policy: "WhenEmptyOrUnderutilized".to_string(),
            consolidate_after: Some("0s".to_string()),
            budgets: vec![BudgetSpec {
                nodes: "10%".to_string(),
                schedule: None,
                duration: None,
                reasons: Vec::new(),
            }],
            expire_after: Some("720h".to_string()),
            termination_grace_period: None,
            status_nodes: None,
            status_resources: None,
            ready: None,
            validated: None,
            deleting: false,
            replicas: None,
        }
    }

    /// Reads a NodePool object.
    pub(crate) fn from_object(obj: &RawObject) -> Result<NodePool, Error> {
        let v = &obj.value;
        let spec_field = "spec.template.spec";
        let mut requirements = Vec::new();
        let mut min_values = std::collections::BTreeMap::new();
        for (i, r) in v
            .pointer("/spec/template/spec/requirements")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let field = format!("{spec_field}.requirements[{i}]");
            let key = r
                .get("key")
                .and_then(|k| k.as_str())
                .map(normalized_key)
                .ok_or_else(|| obj.error(format!("{field}.key"), "missing"))?;
            let op_text = r.get("operator").and_then(|k| k.as_str()).unwrap_or("");
            let operator = Operator::parse(op_text).ok_or_else(|| {
                obj.error(
                    format!("{field}.operator"),
                    format!("unknown operator {op_text:?} (valid: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte)"),
                )
            })?;
            let values = r
                .get("values")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(m) = r.get("minValues") {
                // The CRD allows 1 to 50.
                let n = m.as_u64().filter(|n| (1..=50).contains(n)).ok_or_else(|| {
                    obj.error(
                        format!("{field}.minValues"),
                        format!("must be an integer from 1 to 50, not {m}"),
                    )
                })? as usize;
                let e = min_values.entry(key.to_string()).or_insert(0);
                *e = n.max(*e);
            }
            requirements.push(Requirement {
                key: key.to_string(),
                operator,
                values,
            });
        }
        let taints_at = |pointer: &str, field: &str| -> Result<Vec<Taint>, Error> {
            let list: Vec<k8s_openapi::api::core::v1::Taint> =
                obj.typed(pointer, field)?.unwrap_or_default();
            list.iter()
                .enumerate()
                .map(|(i, t)| Taint::from_k8s(t).map_err(|e| obj.error(format!("{field}[{i}]"), e)))
                .collect()
        };
        let taints = taints_at("/spec/template/spec/taints", "spec.template.spec.taints")?;
        let startup_taints = taints_at(
            "/spec/template/spec/startupTaints",
            "spec.template.spec.startupTaints",
        )?;
        let mut limits = Vec::new();
        if let Some(map) = v.pointer("/spec/limits").and_then(|l| l.as_object()) {
            for (name, value) in map {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                // Negative is 0 and beyond i64 the largest value ([`super::odd`] reports both).
                let (amount, _) = quantity::read_limit(&text, name == "cpu")
                    .map_err(|e| obj.error(format!("spec.limits.{name}"), e.to_string()))?;
                limits.push(Limit {
                    resource: name.clone(),
                    amount,
                });
            }
        }
        let string_at = |p: &str| v.pointer(p).and_then(|x| x.as_str()).map(str::to_string);
        let map_at = |p: &str| -> Labels {
            v.pointer(p)
                .and_then(|x| serde_json::from_value(x.clone()).ok())
                .unwrap_or_default()
        };
        let budgets = match v
            .pointer("/spec/disruption/budgets")
            .and_then(|b| b.as_array())
        {
            Some(list) => list
                .iter()
                .map(|b| BudgetSpec {
                    nodes: b
                        .get("nodes")
                        .and_then(|n| n.as_str())
                        .unwrap_or("10%")
                        .to_string(),
                    schedule: b
                        .get("schedule")
                        .and_then(|n| n.as_str())
                        .map(str::to_string),
                    duration: b
                        .get("duration")
                        .and_then(|n| n.as_str())
                        .map(str::to_string),
                    reasons: b
                        .get("reasons")
                        .and_then(|r| r.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect(),
            None => vec![BudgetSpec {
                nodes: "10%".to_string(),
                schedule: None,
                duration: None,
                reasons: Vec::new(),
            }],
        };
        let ready = ready_condition(v);
        let weight = v
            .pointer("/spec/weight")
            .and_then(|w| w.as_i64())
            .unwrap_or(0);
        Ok(NodePool {
            name: obj.name().to_string(),
            uid: obj.meta.uid.clone(),
            weight: i32::try_from(weight)
                .map_err(|_| obj.error("spec.weight", "must be between 1 and 100"))?,
            requirements,
            min_values,
            labels: map_at("/spec/template/metadata/labels"),
            annotations: map_at("/spec/template/metadata/annotations"),
            taints,
            startup_taints,
            limits,
            node_class: string_at("/spec/template/spec/nodeClassRef/name"),
            node_class_ref: v.pointer("/spec/template/spec/nodeClassRef").cloned(),
            consolidation_policy: string_at("/spec/disruption/consolidationPolicy")
                .unwrap_or_else(|| "WhenEmptyOrUnderutilized".to_string()),
            consolidate_after: string_at("/spec/disruption/consolidateAfter"),
            budgets,
            expire_after: string_at("/spec/template/spec/expireAfter"),
            termination_grace_period: string_at("/spec/template/spec/terminationGracePeriod"),
            // `karpenter.sh/nodepool-hash` on the NodePool is deliberately not read: it is
            // another controller's hash (see `controller::drift`).
            status_nodes: v.pointer("/status/nodes").and_then(|n| n.as_i64()),
            status_resources: v
                .pointer("/status/resources")
                .and_then(|r| serde_json::from_value(r.clone()).ok()),
            ready,
            validated: named_condition(v, "ValidationSucceeded"),
            deleting: obj.meta.deletion_timestamp.is_some(),
            replicas: v.pointer("/spec/replicas").and_then(|r| r.as_i64()),
        })
    }

    /// The labels every node of this pool gets from the pool: template labels, the pool label,
    /// and single-valued `In` requirements.
    pub(crate) fn node_labels(&self) -> Labels {
        let mut labels = self.labels.clone();
        for r in &self.requirements {
            if r.operator == Operator::In && r.values.len() == 1 {
                labels
                    .entry(r.key.clone())
                    .or_insert_with(|| r.values[0].clone());
            }
        }
        labels.insert(keys::NODEPOOL.to_string(), self.name.clone());
        labels
    }

    /// Whether provisioning may create NodeClaims for this pool: not reported `Ready=False`, not
    /// being deleted and not static (core v1.14 `provisioner.go` `NewScheduler` drops the others
    /// before scheduling, `nodepoolutils.IsStatic` being `spec.replicas` set). A pool with no
    /// status yet (read from a file) provisions.
    pub fn provisions(&self) -> bool {
        self.ready != Some(false) && !self.deleting && self.replicas.is_none()
    }

    /// The limit on a resource, if any.
    #[cfg(test)]
    pub(crate) fn limit(&self, resource: &str) -> Option<i64> {
        self.limits
            .iter()
            .find(|l| l.resource == resource)
            .map(|l| l.amount)
    }
}

/// `status.conditions[Ready].status == "True"`, or None when there is no Ready condition.
fn ready_condition(object: &serde_json::Value) -> Option<bool> {
    named_condition(object, "Ready")
}

/// Whether the condition `type_` is True, or None when there is none.
fn named_condition(object: &serde_json::Value, type_: &str) -> Option<bool> {
    let conditions = super::condition::conditions_at(object, "/status/conditions");
    super::condition::find(&conditions, type_).map(super::condition::Condition::is_true)
}

/// A ClusterAPINodeClass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeClass {
    /// Name.
    pub(crate) name: String,
    /// `spec.scalableResourceSelector`: narrows the members when set (the membership label is
    /// still required; see [`crate::model::snapshot::Snapshot::members_of`]).
    pub(crate) selector: Option<LabelSelector>,
    /// `status.conditions[Ready]`, when reported.
    pub(crate) ready: Option<bool>,
    /// `metadata.deletionTimestamp` is set: its pools are not Ready (core's NodePool readiness,
    /// `NodeClassTerminating`).
    pub(crate) deleting: bool,
}

impl NodeClass {
    /// Reads a ClusterAPINodeClass object.
    pub(crate) fn from_object(obj: &RawObject) -> Result<NodeClass, Error> {
        let selector = obj
            .typed::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(
                "/spec/scalableResourceSelector",
                "spec.scalableResourceSelector",
            )?
            .map(|s| {
                LabelSelector::from_k8s(&s)
                    .map_err(|e| obj.error("spec.scalableResourceSelector", e))
            })
            .transpose()?;
        let ready = ready_condition(&obj.value);
        Ok(NodeClass {
            name: obj.name().to_string(),
            selector,
            ready,
            deleting: obj.meta.deletion_timestamp.is_some(),
        })
    }
}
