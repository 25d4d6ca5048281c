//! Member MachineDeployments and the flavor each one offers: capacity from Cluster Autoscaler's
//! capacity annotations, node labels and taints, size bounds and a price per hour.

use std::fmt;

use serde::Serialize;

use super::labels::{self, Labels};
use super::object::{RawObject, annotation, labels_of};
use super::quantity;
use super::resources::Resources;
use super::taints::Taint;
use crate::vocab::capacity;
use crate::vocab::keys;
use crate::vocab::keys::MEMBER_LABEL;

/// A price per hour, in exact billionths of the currency unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Price(pub i64);

impl Price {
    /// Nano-units per unit.
    pub const UNIT: i64 = 1_000_000_000;

    /// Parses a non-negative decimal (`0.05`, `1`, `0.123456789`).
    pub(crate) fn parse(text: &str) -> Result<Price, String> {
        let t = text.trim();
        let bad = || {
            format!(
                "invalid price {t:?}: expected a non-negative decimal number per hour, e.g. 0.10"
            )
        };
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if (int.is_empty() && frac.is_empty()) || frac.len() > 9 {
            return Err(bad());
        }
        if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let int: i64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad())?
        };
        let mut nanos = int.checked_mul(Price::UNIT).ok_or_else(bad)?;
        let mut scale = Price::UNIT;
        for d in frac.chars() {
            scale /= 10;
            nanos += i64::from(d.to_digit(10).unwrap_or(0)) * scale;
        }
        Ok(Price(nanos))
    }

    /// As a floating-point number, for display and JSON only.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / Price::UNIT as f64
    }

    /// The default model used when a flavor has no price: proportional to resources,
    /// 0.02 per vCPU-hour + 0.0025 per GiB-hour + 1.00 per GPU-hour (a public-cloud general
    /// purpose ratio; only the ratios matter for choosing).
    pub(crate) fn default_model(capacity: &Resources) -> Price {
        let cpu = i128::from(capacity.cpu_millis) * 20_000; // 0.02 / 1000 millicores
        let mem = i128::from(capacity.memory_bytes) * 2_500_000 / (1i128 << 30);
        let gpu: i128 = capacity
            .extended
            .iter()
            .filter(|(k, _)| k.contains("gpu"))
            .map(|(_, v)| i128::from(*v) * i128::from(Price::UNIT))
            .sum();
        Price(i64::try_from(cpu + mem + gpu).unwrap_or(i64::MAX))
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Four decimals, rounded half up: enough for hourly prices.
        let tenths_of_milli = (self.0 + 50_000) / 100_000;
        write!(
            f,
            "{}.{:04}",
            tenths_of_milli / 10_000,
            tenths_of_milli % 10_000
        )
    }
}

impl Serialize for Price {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.as_f64())
    }
}

/// Where a flavor's price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PriceSource {
    /// The annotation with this key.
    Annotation(&'static str),
    /// No annotation: [`Price::default_model`].
    DefaultModel,
}

/// A member MachineDeployment that cannot be used as a flavor, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlavorProblem {
    /// The field, e.g. `metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]`.
    pub(crate) field: String,
    /// What is wrong.
    pub(crate) problem: String,
    /// True when the annotation is missing (rather than unparsable).
    pub(crate) missing: bool,
}

/// What one new node of a member MachineDeployment would offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flavor {
    /// `namespace/name` of the MachineDeployment.
    pub machine_deployment: String,
    /// The instance-type label value (the MachineDeployment's name when unset).
    pub instance_type: String,
    /// Capacity (allocatable = capacity, as upstream and Cluster Autoscaler assume).
    pub capacity: Resources,
    /// The node's labels: CAPI-propagated template labels overlaid by the labels annotation.
    pub labels: Labels,
    /// Taints from the taints annotation.
    pub taints: Vec<Taint>,
    /// Price per hour.
    pub price: Price,
    /// Where the price came from.
    pub price_source: PriceSource,
    /// Minimum replicas (size annotation).
    pub min_size: Option<i64>,
    /// Maximum replicas (size annotation).
    pub max_size: Option<i64>,
}

impl Flavor {
    /// The zone label, if any.
    pub fn zone(&self) -> Option<&str> {
        self.labels.get(keys::ZONE).map(String::as_str)
    }

    /// Reads the flavor of a MachineDeployment from its annotations.
    pub(crate) fn from_machine_deployment(md: &RawObject) -> Result<Flavor, FlavorProblem> {
        let meta = &md.meta;
        let ann_field = |key: &str| format!("metadata.annotations[{key}]");
        let required = |key: &'static str| -> Result<&str, FlavorProblem> {
            annotation(meta, key).ok_or_else(|| FlavorProblem {
                field: ann_field(key),
                problem:
                    "missing: member MachineDeployments need cpu and memory capacity annotations"
                        .to_string(),
                missing: true,
            })
        };
        let invalid = |key: &str, problem: String| FlavorProblem {
            field: ann_field(key),
            problem,
            missing: false,
        };

        let mut capacity = Resources {
            cpu_millis: quantity::parse_millis(required(capacity::CPU)?)
                .map_err(|e| invalid(capacity::CPU, e.to_string()))?,
            memory_bytes: quantity::parse_units(required(capacity::MEMORY)?)
                .map_err(|e| invalid(capacity::MEMORY, e.to_string()))?,
            pods: 110,
            ..Default::default()
        };
        if capacity.cpu_millis == 0 || capacity.memory_bytes == 0 {
            return Err(invalid(
                if capacity.cpu_millis == 0 {
                    capacity::CPU
                } else {
                    capacity::MEMORY
                },
                "must be greater than zero".to_string(),
            ));
        }
        if let Some(v) = annotation(meta, capacity::MAX_PODS) {
            capacity.pods = v
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    invalid(
                        capacity::MAX_PODS,
                        format!("invalid pod count {v:?}: expected a positive integer"),
                    )
                })?;
        }
        if let Some(v) = annotation(meta, capacity::EPHEMERAL_DISK) {
            capacity.ephemeral_storage_bytes = quantity::parse_units(v)
                .map_err(|e| invalid(capacity::EPHEMERAL_DISK, e.to_string()))?;
        }
        match (
            annotation(meta, capacity::GPU_COUNT),
            annotation(meta, capacity::GPU_TYPE),
        ) {
            (Some(count), Some(kind)) => {
                let n = count
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| {
                        invalid(
                            capacity::GPU_COUNT,
                            format!("invalid GPU count {count:?}: expected an integer"),
                        )
                    })?;
                if n > 0 {
                    capacity.extended.insert(kind.trim().to_string(), n);
                }
            }
            (Some(_), None) => {
                return Err(FlavorProblem {
                    field: ann_field(capacity::GPU_TYPE),
                    problem: "missing: gpu-count needs gpu-type to name the resource (e.g. nvidia.com/gpu)".to_string(),
                    missing: true,
                });
            }
            _ => {}
        }

        let template_labels: Labels = md
            .value
            .pointer("/spec/template/metadata/labels")
            .and_then(|v| serde_json::from_value::<Labels>(v.clone()).ok())
            .unwrap_or_default();
        let mut node_labels: Labels = template_labels
            .into_iter()
            .filter(|(k, _)| labels::is_capi_propagated(k))
            .collect();
        if let Some(v) = annotation(meta, capacity::LABELS) {
            let parsed = labels::parse_label_list(v).map_err(|e| invalid(capacity::LABELS, e))?;
            node_labels.extend(parsed);
        }
        let taints = match annotation(meta, capacity::TAINTS) {
            Some(v) => Taint::parse_list(v).map_err(|e| invalid(capacity::TAINTS, e))?,
            None => Vec::new(),
        };
        let size = |key: &'static str| -> Result<Option<i64>, FlavorProblem> {
            annotation(meta, key)
                .map(|v| {
                    v.trim()
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| {
                            invalid(
                                key,
                                format!("invalid size {v:?}: expected a non-negative integer"),
                            )
                        })
                })
                .transpose()
        };
        let (min_size, max_size) = (size(capacity::MIN_SIZE)?, size(capacity::MAX_SIZE)?);

        let (price, price_source) = if let Some(v) = annotation(meta, capacity::PRICE) {
            (
                Price::parse(v).map_err(|e| invalid(capacity::PRICE, e))?,
                PriceSource::Annotation(capacity::PRICE),
            )
        } else if let Some(v) = annotation(meta, capacity::PRICE_ALT) {
            (
                Price::parse(v).map_err(|e| invalid(capacity::PRICE_ALT, e))?,
                PriceSource::Annotation(capacity::PRICE_ALT),
            )
        } else {
            (Price::default_model(&capacity), PriceSource::DefaultModel)
        };

        let name = md.name().to_string();
        let instance_type = node_labels
            .get(keys::INSTANCE_TYPE)
            .cloned()
            .unwrap_or_else(|| name.clone());
        Ok(Flavor {
            machine_deployment: format!("{}/{}", md.namespace(), name),
            instance_type,
            capacity,
            labels: node_labels,
            taints,
            price,
            price_source,
            min_size,
            max_size,
        })
    }
}

/// Whether a MachineDeployment is a member: the membership label on its own metadata with the
/// empty value, exactly as upstream lists them (`MatchingLabels{member: ""}` in the provider's
/// `providers/machinedeployment/machinedeployment.go`). A value (`"true"`) makes it no member
/// upstream, so not here either; `doctor` reports it (`MemberLabelWithValue`).
pub(crate) fn is_member(md: &RawObject) -> bool {
    labels_of(&md.meta).get(MEMBER_LABEL).map(String::as_str) == Some("")
}

/// The value of a membership label that has one (not a member; see [`is_member`]).
pub(crate) fn member_label_value(md: &RawObject) -> Option<String> {
    labels_of(&md.meta)
        .get(MEMBER_LABEL)
        .filter(|v| !v.is_empty())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(annotations: &str) -> RawObject {
        let yaml = format!(
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: md-a\n  namespace: ns\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations: {annotations}\nspec:\n  template:\n    metadata:\n      labels: {{node-role.kubernetes.io/worker: '', app: x}}\n"
        );
        RawObject::from_value(serde_saphyr::from_str(&yaml).unwrap(), "test").unwrap()
    }

    #[test]
    fn reads_every_capacity_annotation() {
        let f = Flavor::from_machine_deployment(&md(
            "{capacity.cluster-autoscaler.kubernetes.io/cpu: '4', capacity.cluster-autoscaler.kubernetes.io/memory: 8G, capacity.cluster-autoscaler.kubernetes.io/maxPods: '58', capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk: 100Gi, capacity.cluster-autoscaler.kubernetes.io/gpu-count: '2', capacity.cluster-autoscaler.kubernetes.io/gpu-type: nvidia.com/gpu, capacity.cluster-autoscaler.kubernetes.io/labels: 'node.kubernetes.io/instance-type=c3-8,kubernetes.io/arch=amd64', capacity.cluster-autoscaler.kubernetes.io/taints: 'nvidia.com/gpu=true:NoSchedule', capacity.cluster-autoscaler.kubernetes.io/price: '0.1', cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: '5'}",
        ))
        .unwrap();
        assert_eq!(f.capacity.cpu_millis, 4000);
        assert_eq!(f.capacity.memory_bytes, 8_000_000_000);
        assert_eq!(f.capacity.pods, 58);
        assert_eq!(f.capacity.ephemeral_storage_bytes, 100 << 30);
        assert_eq!(f.capacity.extended.get("nvidia.com/gpu"), Some(&2));
        assert_eq!(f.instance_type, "c3-8");
        assert_eq!(
            f.labels
                .get("node-role.kubernetes.io/worker")
                .map(String::as_str),
            Some("")
        );
        assert!(
            !f.labels.contains_key("app"),
            "only CAPI-propagated template labels reach the node"
        );
        assert_eq!(f.taints[0].to_string(), "nvidia.com/gpu=true:NoSchedule");
        assert_eq!(f.price, Price(100_000_000));
        assert_eq!(f.max_size, Some(5));
    }

    #[test]
    fn missing_and_invalid_capacity() {
        let e = Flavor::from_machine_deployment(&md(
            "{capacity.cluster-autoscaler.kubernetes.io/memory: 8G}",
        ))
        .unwrap_err();
        assert!(e.missing);
        assert_eq!(
            e.field,
            "metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]"
        );
        let e = Flavor::from_machine_deployment(&md(
            "{capacity.cluster-autoscaler.kubernetes.io/cpu: 4x, capacity.cluster-autoscaler.kubernetes.io/memory: 8G}",
        ))
        .unwrap_err();
        assert!(!e.missing);
        assert!(e.problem.contains("\"4x\""));
    }

    #[test]
    fn default_price_model_is_proportional() {
        let f = Flavor::from_machine_deployment(&md(
            "{capacity.cluster-autoscaler.kubernetes.io/cpu: '2', capacity.cluster-autoscaler.kubernetes.io/memory: 4Gi}",
        ))
        .unwrap();
        assert_eq!(f.price_source, PriceSource::DefaultModel);
        assert_eq!(f.price, Price(40_000_000 + 10_000_000));
        assert_eq!(f.instance_type, "md-a");
    }

    #[test]
    fn prices_parse_exactly() {
        assert_eq!(Price::parse("0.05"), Ok(Price(50_000_000)));
        assert_eq!(Price::parse("1"), Ok(Price(1_000_000_000)));
        assert_eq!(Price::parse(".5"), Ok(Price(500_000_000)));
        assert!(Price::parse("-1").is_err());
        assert!(Price::parse("abc").is_err());
        assert_eq!(Price(50_000_000).to_string(), "0.0500");
    }
}
