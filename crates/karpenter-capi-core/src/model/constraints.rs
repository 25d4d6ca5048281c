//! The soft and topology parts of a pod's scheduling constraints: topology spread constraints,
//! preferred pod (anti-)affinity and node affinity, and the PersistentVolumeClaims its volumes
//! use, read from a pod spec with errors naming the field.

use k8s_openapi::api::core::v1::{PodSpec, TopologySpreadConstraint};
use serde::Serialize;

use super::labels::{LabelSelector, Labels, Operator, Requirement};
use super::pod::AffinityTerm;

/// One `topologySpreadConstraints` entry, with `matchLabelKeys` merged into its selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpreadConstraint {
    /// The node label whose values are the domains.
    pub(crate) topology_key: String,
    /// The largest allowed difference between a domain's count and the smallest count.
    pub(crate) max_skew: i32,
    /// `DoNotSchedule` (true) or `ScheduleAnyway` (false). A `ScheduleAnyway` constraint is
    /// treated as required until the pod cannot be placed otherwise, as Karpenter does.
    pub(crate) hard: bool,
    /// Which pods (in the pod's namespace) are counted.
    pub(crate) selector: LabelSelector,
    /// Below this many eligible domains, the smallest count is taken as 0.
    pub(crate) min_domains: Option<i32>,
    /// `nodeAffinityPolicy: Honor` (the default): only nodes matching the pod's node selector
    /// and required node affinity are counted.
    pub(crate) honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor` (default Ignore): only nodes whose taints the pod tolerates
    /// are counted.
    pub(crate) honor_node_taints: bool,
}

impl SpreadConstraint {
    /// How the constraint reads in reasons and relaxation notes.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} maxSkew {} on {} for {}",
            if self.hard {
                "DoNotSchedule"
            } else {
                "ScheduleAnyway"
            },
            self.max_skew,
            self.topology_key,
            self.selector
        )
    }
}

/// A preferred pod (anti-)affinity term and its weight.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct WeightedTerm {
    /// 1-100; heavier terms are kept longer when relaxing.
    pub(crate) weight: i32,
    /// The term.
    pub(crate) term: AffinityTerm,
}

/// A preferred node affinity term and its weight.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct WeightedNodeTerm {
    /// 1-100.
    pub(crate) weight: i32,
    /// All must hold.
    pub(crate) requirements: Vec<Requirement>,
}

/// A PersistentVolumeClaim a pod's volume uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimRef {
    /// The claim's name (in the pod's namespace).
    pub(crate) name: String,
    /// The StorageClass the claim will have when it is not in the input yet (a generic
    /// ephemeral volume or a StatefulSet's volumeClaimTemplate).
    pub(crate) storage_class: Option<String>,
}

/// Where a volume lets the pod run: one of the alternatives must hold (each an AND).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct VolumeRequirement {
    /// The claim's name.
    pub(crate) claim: String,
    /// What pins it: `PersistentVolume <name>` or `StorageClass <name>`.
    pub(crate) source: String,
    /// Alternatives (ORed); each a list of requirements (ANDed).
    pub(crate) alternatives: Vec<Vec<Requirement>>,
    /// Why the claim keeps the pod from any node (its alternatives are then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) problem: Option<VolumeProblem>,
}

/// Why a PersistentVolumeClaim keeps its pending pod from being provisioned for (core
/// `volumetopology.go` `ValidatePersistentVolumeClaims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum VolumeProblem {
    /// The claim is being deleted.
    ClaimDeleting,
    /// The claim's phase is Lost: its volume no longer exists.
    ClaimLost,
    /// The volume the claim is bound to is being deleted.
    VolumeDeleting,
    /// The claim names a volume but lacks the binder's bind-completed annotation: not bound yet.
    NotBindCompleted,
    /// The claim is unbound and names no StorageClass.
    NoStorageClass,
    /// The claim is unbound and its StorageClass binds Immediately: it should be bound already.
    ImmediateUnbound,
}

impl std::fmt::Display for VolumeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VolumeProblem::ClaimDeleting => "is being deleted",
            VolumeProblem::ClaimLost => "is Lost (its volume no longer exists)",
            VolumeProblem::VolumeDeleting => "is bound to a PersistentVolume being deleted",
            VolumeProblem::NotBindCompleted => {
                "names a volume but is not bound yet (no pv.kubernetes.io/bind-completed annotation)"
            }
            VolumeProblem::NoStorageClass => "is unbound and names no StorageClass",
            VolumeProblem::ImmediateUnbound => {
                "is unbound and its StorageClass binds Immediate: it must be bound first"
            }
        })
    }
}

impl VolumeRequirement {
    /// The first requirement of the first alternative that the labels do not meet, if no
    /// alternative holds.
    pub(crate) fn unmet(&self, labels: &Labels) -> Option<&Requirement> {
        let mut first = None;
        for alt in &self.alternatives {
            match alt.iter().find(|r| !r.matches(labels)) {
                None => return None,
                Some(r) => {
                    first.get_or_insert(r);
                }
            }
        }
        first
    }
}

type FieldError = (String, String);

/// Reads `spec.topologySpreadConstraints`; `matchLabelKeys` adds `key In [pod's value]` for
/// each key the pod has (kube-scheduler ignores keys the pod lacks).
pub(crate) fn spread_constraints(
    spec: &PodSpec,
    labels: &Labels,
    field: &str,
) -> Result<Vec<SpreadConstraint>, FieldError> {
    let mut out = Vec::new();
    for (i, c) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        out.push(spread_constraint(
            c,
            labels,
            &format!("{field}.topologySpreadConstraints[{i}]"),
        )?);
    }
    Ok(out)
}

fn spread_constraint(
    c: &TopologySpreadConstraint,
    labels: &Labels,
    field: &str,
) -> Result<SpreadConstraint, FieldError> {
    if c.max_skew < 1 {
        return Err((
            format!("{field}.maxSkew"),
            format!("must be at least 1, got {}", c.max_skew),
        ));
    }
    if c.topology_key.is_empty() {
        return Err((format!("{field}.topologyKey"), "must not be empty".into()));
    }
    let hard = match c.when_unsatisfiable.as_str() {
        "DoNotSchedule" => true,
        "ScheduleAnyway" => false,
        other => {
            return Err((
                format!("{field}.whenUnsatisfiable"),
                format!("unknown value {other:?} (valid: DoNotSchedule, ScheduleAnyway)"),
            ));
        }
    };
    if let Some(m) = c.min_domains
        && (m < 1 || !hard)
    {
        return Err((
            format!("{field}.minDomains"),
            format!("must be at least 1 and only with DoNotSchedule, got {m}"),
        ));
    }
    let policy = |value: &Option<String>, default: bool, name: &str| match value.as_deref() {
        None => Ok(default),
        Some("Honor") => Ok(true),
        Some("Ignore") => Ok(false),
        Some(other) => Err((
            format!("{field}.{name}"),
            format!("unknown value {other:?} (valid: Honor, Ignore)"),
        )),
    };
    let honor_node_affinity = policy(&c.node_affinity_policy, true, "nodeAffinityPolicy")?;
    let honor_node_taints = policy(&c.node_taints_policy, false, "nodeTaintsPolicy")?;
    let mut selector = match &c.label_selector {
        Some(s) => LabelSelector::from_k8s(s).map_err(|e| (format!("{field}.labelSelector"), e))?,
        // kube-scheduler: a constraint without a selector counts no pods.
        None => nothing(),
    };
    for key in c.match_label_keys.iter().flatten() {
        if let Some(v) = labels.get(key) {
            selector
                .requirements
                .push(Requirement::new(key, Operator::In, &[v.as_str()]));
        }
    }
    Ok(SpreadConstraint {
        topology_key: c.topology_key.clone(),
        max_skew: c.max_skew,
        hard,
        selector,
        min_domains: c.min_domains,
        honor_node_affinity,
        honor_node_taints,
    })
}

/// A selector that matches no pod.
pub(crate) fn nothing() -> LabelSelector {
    LabelSelector {
        requirements: vec![Requirement::new("\u{0}no-selector", Operator::Exists, &[])],
    }
}

/// The PersistentVolumeClaims of a pod's volumes: `persistentVolumeClaim.claimName`, and generic
/// ephemeral volumes (`<pod>-<volume>`, with their template's StorageClass).
pub(crate) fn claims(spec: &PodSpec, pod_name: &str) -> Vec<ClaimRef> {
    let mut out = Vec::new();
    for v in spec.volumes.iter().flatten() {
        if let Some(pvc) = &v.persistent_volume_claim {
            out.push(ClaimRef {
                name: pvc.claim_name.clone(),
                storage_class: None,
            });
        } else if let Some(tpl) = v
            .ephemeral
            .as_ref()
            .and_then(|e| e.volume_claim_template.as_ref())
        {
            out.push(ClaimRef {
                name: format!("{pod_name}-{}", v.name),
                storage_class: tpl.spec.storage_class_name.clone(),
            });
        }
    }
    out
}

/// Sorts preferred terms heaviest first (stable: equal weights keep their order), the order in
/// which Karpenter keeps them while relaxing.
pub(crate) fn heaviest_first<T>(terms: &mut [T], weight: impl Fn(&T) -> i32) {
    terms.sort_by_key(|t| std::cmp::Reverse(weight(t)));
}
