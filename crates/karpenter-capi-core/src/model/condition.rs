//! Status conditions as Karpenter and Cluster API write them (v1beta1 and v1beta2 alike).

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

/// One status condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Condition {
    /// Type, e.g. `Registered`.
    #[serde(rename = "type")]
    pub(crate) type_: String,
    /// `True`, `False` or `Unknown`.
    pub(crate) status: String,
    /// CamelCase reason.
    pub(crate) reason: String,
    /// Message.
    pub(crate) message: String,
    /// When the status last changed.
    pub(crate) last_transition_time: Option<Timestamp>,
    /// The `metadata.generation` the condition was written at (operatorpkg stamps every
    /// condition it sets with the object's generation); None when the writer recorded none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) observed_generation: Option<i64>,
}

impl Condition {
    /// Whether the status is `True`.
    pub(crate) fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Reads `status.conditions` (a list of objects) leniently.
pub(crate) fn conditions_at(value: &Value, pointer: &str) -> Vec<Condition> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| {
                    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    Condition {
                        type_: s("type"),
                        status: s("status"),
                        reason: s("reason"),
                        message: s("message"),
                        last_transition_time: c
                            .get("lastTransitionTime")
                            .and_then(Value::as_str)
                            .and_then(|t| t.parse().ok()),
                        observed_generation: c.get("observedGeneration").and_then(Value::as_i64),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The condition of a type, if present.
pub(crate) fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}
