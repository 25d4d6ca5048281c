//! Whether a pod fits a flavor or a node, and if not, why: every "does not fit" is an [`Unfit`]
//! value with its numbers, printed the same way by `simulate`, `explain` and `doctor`.

use std::fmt;

use serde::Serialize;

use crate::model::labels::{Labels, Requirement};
use crate::model::pod::PodDemand;
use crate::model::resources::{Resources, Shortfall};
use crate::model::taints::{Taint, first_untolerated_with};

/// Why a pod cannot go somewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub(crate) enum Unfit {
    /// Not enough of a resource.
    Insufficient {
        /// Resource name.
        resource: String,
        /// Needed (pod requests), integer unit.
        need: i64,
        /// Free on the node or flavor.
        free: i64,
    },
    /// A hard taint the pod does not tolerate.
    TaintNotTolerated {
        /// The taint, `key=value:Effect`.
        taint: String,
    },
    /// A node-selector or required node-affinity requirement the labels do not meet.
    RequirementNotMet {
        /// The requirement, e.g. `kubernetes.io/arch In [arm64]`.
        requirement: String,
        /// The label key.
        key: String,
        /// The node's value for that key, if any.
        value: Option<String>,
    },
    /// A NodePool requirement the flavor does not meet.
    NodePoolRequirement {
        /// The NodePool.
        node_pool: String,
        /// The requirement.
        requirement: String,
        /// The flavor's value, if any.
        value: Option<String>,
    },
    /// Required pod anti-affinity: a selected pod is already in the same topology domain.
    AntiAffinity {
        /// The pod in the way, `namespace/name`.
        pod: String,
        /// The topology key.
        topology_key: String,
    },
    /// Required pod affinity: no selected pod in this topology domain.
    AffinityUnsatisfied {
        /// The topology key.
        topology_key: String,
    },
    /// A volume's PersistentVolume or StorageClass allows other zones or nodes.
    VolumeTopology {
        /// The PersistentVolumeClaim.
        claim: String,
        /// `PersistentVolume <name>` or `StorageClass <name>`.
        source: String,
        /// The first requirement not met.
        requirement: String,
        /// The label key.
        key: String,
        /// The node's value for that key, if any.
        value: Option<String>,
    },
    /// A volume claim keeps the pod from every node: being deleted, Lost, not bound yet, or
    /// unbound without a usable StorageClass.
    VolumeUnusable {
        /// `PersistentVolumeClaim <namespace>/<name>`.
        claim: String,
        /// Why.
        problem: crate::model::constraints::VolumeProblem,
    },
    /// The pod asks for Dynamic Resource Allocation, which core (its default
    /// `--ignore-dra-requests`) and we do not schedule.
    DynamicResources,
    /// The heaviest preferred node affinity term, required until relaxed.
    PreferenceNotMet {
        /// The requirement.
        requirement: String,
        /// The label key.
        key: String,
        /// The node's value for that key, if any.
        value: Option<String>,
    },
    /// Placing the pod would make a topology spread constraint's skew exceed maxSkew.
    SpreadSkew {
        /// The topology key.
        topology_key: String,
        /// The domain (the node's value for the key).
        domain: String,
        /// Matching pods in that domain with this one.
        count: i32,
        /// The smallest count of any eligible domain (0 below minDomains); the skew is
        /// `count - min`.
        min: i32,
        /// The constraint's maxSkew.
        max_skew: i32,
        /// The selector of counted pods.
        selector: String,
        /// `DoNotSchedule` (true) or `ScheduleAnyway` (false).
        hard: bool,
        /// When fewer eligible domains than minDomains: (eligible, minDomains).
        #[serde(skip_serializing_if = "Option::is_none")]
        min_domains: Option<(i32, i32)>,
    },
    /// A topology spread constraint's key is not a label of the node.
    SpreadKeyMissing {
        /// The topology key.
        topology_key: String,
    },
    /// A preferred pod anti-affinity term, required until relaxed.
    PreferredAntiAffinity {
        /// The pod in the way, `namespace/name`.
        pod: String,
        /// The topology key.
        topology_key: String,
    },
    /// A preferred pod affinity term, required until relaxed.
    PreferredAffinityUnsatisfied {
        /// The topology key.
        topology_key: String,
    },
    /// A host port already taken on the node.
    HostPortInUse {
        /// `protocol/port`.
        port: String,
    },
    /// The NodePool's limit leaves no room for another node of this flavor.
    LimitReached {
        /// The NodePool.
        node_pool: String,
        /// The limited resource.
        resource: String,
        /// The limit.
        limit: i64,
        /// Usage counting planned nodes.
        usage: i64,
    },
    /// The MachineDeployment is at its max-size annotation.
    MaxSizeReached {
        /// The MachineDeployment.
        machine_deployment: String,
        /// Its max size.
        max: i64,
    },
    /// Required pod affinity on a key other than the hostname whose only targets are pods of
    /// this batch that do not constrain that key: their NodeClaims would not decide it until
    /// they launch, so the pod waits for them to be bound (a later batch), as Karpenter's does.
    AffinityTargetUnbound {
        /// The topology key.
        topology_key: String,
        /// A target, `namespace/name`.
        target: String,
    },
    /// A NodeClaim of the NodePool holding the pod would keep fewer distinct values of a key
    /// than the requirement's `minValues` (`cost`, the controller and `karpenter-capi`, as
    /// Karpenter's `Strict` policy).
    MinValuesUnmet {
        /// The NodePool.
        node_pool: String,
        /// The requirement's key.
        key: String,
        /// Its `minValues`.
        min: usize,
        /// The distinct values the claim would keep.
        found: usize,
    },
    /// The node is cordoned.
    Cordoned,
    /// No NodePool offers any flavor (no valid member MachineDeployment).
    NoOffering,
}

impl Unfit {
    /// The reason as a sentence about `subject` (a flavor's instance type or a node's name).
    pub(crate) fn describe(&self, subject: &str) -> String {
        match self {
            Unfit::Insufficient {
                resource,
                need,
                free,
            } if *free < 0 => format!(
                "needs {} {resource}, {subject} has none allocatable ({} over-committed, by its DaemonSets or bound pods)",
                Shortfall::format_amount(resource, *need),
                Shortfall::format_amount(resource, -*free)
            ),
            Unfit::Insufficient {
                resource,
                need,
                free,
            } => format!(
                "needs {} {resource}, {subject} has {} allocatable",
                Shortfall::format_amount(resource, *need),
                Shortfall::format_amount(resource, *free)
            ),
            Unfit::TaintNotTolerated { taint } => format!("taint {taint} not tolerated"),
            Unfit::RequirementNotMet {
                requirement,
                key,
                value,
            } => match value {
                Some(v) => format!("requires {requirement}, {subject} has {key}={v}"),
                None => format!("requires {requirement}, {subject} has no {key} label"),
            },
            Unfit::NodePoolRequirement {
                node_pool,
                requirement,
                value,
            } => match value {
                Some(v) => {
                    format!("NodePool {node_pool} requires {requirement}, {subject} has {v}")
                }
                None => format!("NodePool {node_pool} requires {requirement}"),
            },
            Unfit::AntiAffinity { pod, topology_key } => {
                format!("anti-affinity with pod {pod} on the same {topology_key}")
            }
            Unfit::AffinityUnsatisfied { topology_key } => {
                format!("pod affinity needs a matching pod in the same {topology_key}")
            }
            Unfit::AffinityTargetUnbound {
                topology_key,
                target,
            } => format!(
                "pod affinity on {topology_key} waits for {target} to be bound: its NodeClaim does not decide the {topology_key} before it launches"
            ),
            Unfit::VolumeTopology {
                claim,
                source,
                requirement,
                key,
                value,
            } => format!(
                "volume claim {claim} ({source}) requires {requirement}, {subject} has {}",
                value
                    .as_ref()
                    .map_or(format!("no {key} label"), |v| format!("{key}={v}"))
            ),
            Unfit::VolumeUnusable { claim, problem } => {
                format!("{claim} {problem}: no node is provisioned for its pod")
            }
            Unfit::DynamicResources => "the pod has Dynamic Resource Allocation requirements (resourceClaims), which are not supported: no node is provisioned for it, and its node is not consolidated or drifted".to_string(),
            Unfit::PreferenceNotMet {
                requirement,
                key,
                value,
            } => format!(
                "prefers {requirement} (relaxed only if nothing fits), {subject} has {}",
                value
                    .as_ref()
                    .map_or(format!("no {key} label"), |v| format!("{key}={v}"))
            ),
            Unfit::SpreadSkew {
                topology_key,
                domain,
                count,
                min,
                max_skew,
                selector,
                hard,
                min_domains,
            } => {
                let mut text = format!(
                    "{} {domain} would have skew {} > maxSkew {max_skew} for {selector} \
                     ({count} matching pods there with this one, fewest in a domain {min})",
                    domain_word(topology_key),
                    count - min
                );
                if let Some((eligible, wanted)) = min_domains {
                    text.push_str(&format!(
                        "; {eligible} eligible domains < minDomains {wanted}, so the fewest counts as 0"
                    ));
                }
                if !hard {
                    text.push_str("; ScheduleAnyway, relaxed only if nothing fits");
                }
                text
            }
            Unfit::SpreadKeyMissing { topology_key } => {
                format!("topology spread needs the label {topology_key}, {subject} has none")
            }
            Unfit::PreferredAntiAffinity { pod, topology_key } => format!(
                "preferred anti-affinity with pod {pod} on the same {topology_key} (relaxed only if nothing fits)"
            ),
            Unfit::PreferredAffinityUnsatisfied { topology_key } => format!(
                "preferred pod affinity needs a matching pod in the same {topology_key} (relaxed only if nothing fits)"
            ),
            Unfit::HostPortInUse { port } => format!("host port {port} already in use"),
            Unfit::LimitReached {
                node_pool,
                resource,
                limit,
                usage,
            } => format!(
                "NodePool {node_pool} limit {resource} {} reached (in use {})",
                Shortfall::format_amount(resource, *limit),
                Shortfall::format_amount(resource, *usage)
            ),
            Unfit::MaxSizeReached {
                machine_deployment,
                max,
            } => {
                format!("MachineDeployment {machine_deployment} is at its max size {max}")
            }
            Unfit::MinValuesUnmet {
                node_pool,
                key,
                min,
                found,
            } => format!(
                "NodePool {node_pool} needs {min} distinct values of {key} in a NodeClaim (minValues); one holding this pod keeps {found}"
            ),
            Unfit::Cordoned => format!("{subject} is cordoned"),
            Unfit::NoOffering => {
                "no NodePool offers any flavor: no valid member MachineDeployment".to_string()
            }
        }
    }
}

/// How a topology domain is named in reasons: `zone nova-b`, `node worker-3`, else the key.
pub(crate) fn domain_word(topology_key: &str) -> &str {
    match topology_key {
        crate::vocab::keys::ZONE => "zone",
        crate::vocab::keys::HOSTNAME => "node",
        other => other,
    }
}

/// A reason attached to what it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// A flavor's instance type (`c3-4`) or a node's name.
    pub(crate) subject: String,
    /// Why.
    pub(crate) unfit: Unfit,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            self.subject,
            self.unfit.describe(&self.subject)
        )
    }
}

/// The static part of a fit: taints, node requirements, resources against `free`.
/// Pod (anti-)affinity and host ports depend on what else is placed, and are checked by the
/// cluster state.
pub(crate) fn static_fit(
    pod: &PodDemand,
    labels: &Labels,
    taints: &[Taint],
    free: &Resources,
) -> Result<(), Unfit> {
    match static_block(pod, labels, taints, free) {
        None => Ok(()),
        Some(StaticBlock::DynamicResources) => Err(Unfit::DynamicResources),
        Some(StaticBlock::Taint(t)) => Err(Unfit::TaintNotTolerated {
            taint: t.to_string(),
        }),
        Some(StaticBlock::Requirement(r)) => Err(requirement_unmet(r, labels)),
        Some(StaticBlock::VolumeUnusable(v, problem)) => Err(Unfit::VolumeUnusable {
            claim: v.source.clone(),
            problem,
        }),
        Some(StaticBlock::Volume(v, r)) => Err(Unfit::VolumeTopology {
            claim: v.claim.clone(),
            source: v.source.clone(),
            requirement: r.to_string(),
            key: r.key.clone(),
            value: labels.get(&r.key).cloned(),
        }),
        Some(StaticBlock::Preference(r)) => Err(Unfit::PreferenceNotMet {
            requirement: r.to_string(),
            key: r.key.clone(),
            value: labels.get(&r.key).cloned(),
        }),
        Some(StaticBlock::Resources) => match pod.requests.shortfall(free) {
            Some(s) => Err(Unfit::Insufficient {
                resource: s.resource,
                need: s.need,
                free: s.free,
            }),
            None => Ok(()),
        },
    }
}

/// [`static_fit`] as a yes or no, without building a reason: the hot path of search. Both
/// come from one check ([`static_block`]), so they cannot disagree.
pub(crate) fn static_ok(
    pod: &PodDemand,
    labels: &Labels,
    taints: &[Taint],
    free: &Resources,
) -> bool {
    static_block(pod, labels, taints, free).is_none()
}

/// What blocks a pod statically, borrowed (no allocation).
enum StaticBlock<'a> {
    DynamicResources,
    Taint(&'a Taint),
    Requirement(&'a Requirement),
    VolumeUnusable(
        &'a crate::model::constraints::VolumeRequirement,
        crate::model::constraints::VolumeProblem,
    ),
    Volume(
        &'a crate::model::constraints::VolumeRequirement,
        &'a Requirement,
    ),
    Preference(&'a Requirement),
    Resources,
}

fn static_block<'a>(
    pod: &'a PodDemand,
    labels: &Labels,
    taints: &'a [Taint],
    free: &Resources,
) -> Option<StaticBlock<'a>> {
    // Whatever the node: Dynamic Resource Allocation, or the pod's own volume, keeps it off
    // all of them.
    if pod.dynamic_resources {
        return Some(StaticBlock::DynamicResources);
    }
    for v in &pod.volume_requirements {
        if let Some(problem) = v.problem {
            return Some(StaticBlock::VolumeUnusable(v, problem));
        }
    }
    if let Some(t) = first_untolerated_with(taints, &pod.tolerations, pod.prefer_no_schedule_hard) {
        return Some(StaticBlock::Taint(t));
    }
    if let Some(r) = pod.node_requirement_unmet(labels) {
        return Some(StaticBlock::Requirement(r));
    }
    for v in &pod.volume_requirements {
        if let Some(r) = v.unmet(labels) {
            return Some(StaticBlock::Volume(v, r));
        }
    }
    if let Some(r) = pod
        .preferred_node_affinity
        .first()
        .and_then(|t| t.requirements.iter().find(|r| !r.matches(labels)))
    {
        return Some(StaticBlock::Preference(r));
    }
    if !pod.requests.fits_in(free) {
        return Some(StaticBlock::Resources);
    }
    None
}

fn requirement_unmet(r: &Requirement, labels: &Labels) -> Unfit {
    Unfit::RequirementNotMet {
        requirement: r.to_string(),
        key: r.key.clone(),
        value: labels.get(&r.key).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::Operator;
    use crate::model::taints::Effect;

    fn pod(cpu: i64) -> PodDemand {
        PodDemand {
            namespace: "default".into(),
            name: "big-0".into(),
            labels: Labels::new(),
            requests: Resources {
                cpu_millis: cpu,
                memory_bytes: 1 << 28,
                pods: 1,
                ..Default::default()
            },
            node_selector: Vec::new(),
            node_affinity: Vec::new(),
            tolerations: Vec::new(),
            anti_affinity: Vec::new(),
            affinity: Vec::new(),
            host_ports: Vec::new(),
            ..Default::default()
        }
    }

    #[test]
    fn reasons_carry_numbers() {
        let free = Resources {
            cpu_millis: 1900,
            memory_bytes: 4_000_000_000,
            pods: 109,
            ..Default::default()
        };
        let err = static_fit(&pod(3100), &Labels::new(), &[], &free).unwrap_err();
        assert_eq!(
            err.describe("c3-4"),
            "needs 3100m cpu, c3-4 has 1900m allocatable"
        );
        let taint = Taint::new("nvidia.com/gpu", "true", Effect::NoSchedule);
        let err = static_fit(&pod(100), &Labels::new(), &[taint], &free).unwrap_err();
        assert_eq!(
            err.describe("g1"),
            "taint nvidia.com/gpu=true:NoSchedule not tolerated"
        );
        let mut p = pod(100);
        p.node_affinity = vec![vec![Requirement::new(
            "kubernetes.io/arch",
            Operator::In,
            &["arm64"],
        )]];
        let labels: Labels = [("kubernetes.io/arch".to_string(), "amd64".to_string())].into();
        let err = static_fit(&p, &labels, &[], &free).unwrap_err();
        assert_eq!(
            err.describe("c3-8"),
            "requires kubernetes.io/arch In [arm64], c3-8 has kubernetes.io/arch=amd64"
        );
        assert!(static_fit(&pod(1900), &labels, &[], &free).is_ok());
    }
}
