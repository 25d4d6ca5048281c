//! The chain every NodeClaim walks: claim -> Machine -> providerID -> Node -> unregistered taint
//! -> Ready -> startup taints. The first broken link is the claim's [`Blocker`]; its age against
//! the launch and registration timeouts (the controller's own liveness clock) decides whether it
//! is still in progress (warning) or stuck (error).

use serde::Serialize;

use super::{Area, Cause, Finding, Severity, age_secs, format_secs};
use crate::controller::Config;
use crate::controller::lifecycle::{LivenessClock, LivenessStage};
use crate::model::condition;
use crate::model::machine::MachineRecord;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::snapshot::{NodeRecord, Snapshot};
use crate::model::taints::{self, Taint};
use crate::vocab::keys::MACHINE_ANNOTATION;
use crate::vocab::keys::REGISTERED_LABEL;
use crate::vocab::keys::UNREGISTERED_TAINT_KEY;

const AREA: Area = Area::NodeClaims;

/// The first broken link of a NodeClaim's chain, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all_fields = "camelCase")]
pub(crate) enum Blocker {
    /// No Machine is bound to the claim.
    MachineNotFound {
        /// The Machine the claim's annotation names, when it names one that does not exist.
        named: Option<String>,
        /// The claim's own `Launched=False` condition (`reason: message`), when the provider
        /// reported a launch failure.
        launch_failed: Option<String>,
    },
    /// The Machine reports a terminal failure.
    MachineFailed {
        /// `namespace/name`.
        machine: String,
        /// The failure, quoted from the Machine.
        failure: String,
    },
    /// The Machine has no providerID: infrastructure not provisioned yet.
    MachineWithoutProviderID {
        /// `namespace/name`.
        machine: String,
        /// The Machine's age in seconds.
        age_secs: i64,
        /// `InfrastructureReady` when not True: `status (reason: message)`.
        infrastructure: Option<String>,
    },
    /// No Node has the providerID.
    NodeNotFound {
        /// The providerID looked for.
        provider_id: String,
    },
    /// The Machine's node joined with an empty providerID.
    NodeWithoutProviderID {
        /// The node.
        node: String,
        /// The providerID the Machine has.
        provider_id: String,
    },
    /// Several Nodes have the providerID.
    MultipleNodesFound {
        /// The providerID.
        provider_id: String,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The node joined without the unregistered taint and was not adopted.
    UnregisteredTaintMissing {
        /// The node.
        node: String,
        /// Its taints.
        taints: Vec<String>,
    },
    /// The node is not Ready.
    NodeNotReady {
        /// The node.
        node: String,
        /// `False`, `Unknown` or `not reported`.
        ready: String,
    },
    /// Startup or ephemeral taints remain on the node.
    StartupTaintsRemain {
        /// The node.
        node: String,
        /// The taints.
        taints: Vec<String>,
    },
    /// Everything is in place; the controller has not updated the claim yet.
    AwaitingController {
        /// The node.
        node: String,
        /// The condition still not True (`Registered` or `Initialized`).
        condition: String,
    },
}

impl Blocker {
    /// The cause code.
    pub(crate) fn cause(&self) -> Cause {
        match self {
            Blocker::MachineNotFound { .. } => Cause::MachineNotFound,
            Blocker::MachineFailed { .. } => Cause::MachineFailed,
            Blocker::MachineWithoutProviderID { .. } => Cause::MachineWithoutProviderID,
            Blocker::NodeNotFound { .. } => Cause::NodeNotFound,
            Blocker::NodeWithoutProviderID { .. } => Cause::NodeWithoutProviderID,
            Blocker::MultipleNodesFound { .. } => Cause::MultipleNodesFound,
            Blocker::UnregisteredTaintMissing { .. } => Cause::UnregisteredTaintMissing,
            Blocker::NodeNotReady { .. } => Cause::NodeNotReady,
            Blocker::StartupTaintsRemain { .. } => Cause::StartupTaintsRemain,
            Blocker::AwaitingController { .. } => Cause::AwaitingController,
        }
    }

    /// Broken for good: waiting does not help, whatever the claim's age.
    pub(crate) fn is_failure(&self) -> bool {
        matches!(
            self,
            Blocker::MachineNotFound {
                launch_failed: Some(_),
                ..
            } | Blocker::MachineFailed { .. }
                | Blocker::MultipleNodesFound { .. }
                | Blocker::UnregisteredTaintMissing { .. }
        )
    }

    /// The evidence, as one sentence.
    pub(crate) fn describe(&self) -> String {
        match self {
            Blocker::MachineNotFound {
                launch_failed: Some(failure),
                ..
            } => {
                format!("no Machine is bound: the provider reported Launched=False ({failure})")
            }
            Blocker::MachineNotFound { named: Some(m), .. } => {
                format!("annotation {MACHINE_ANNOTATION} names Machine {m}, which does not exist")
            }
            Blocker::MachineNotFound { named: None, .. } => {
                format!(
                    "no Machine is bound (no {MACHINE_ANNOTATION} annotation, no Machine with its providerID)"
                )
            }
            Blocker::MachineFailed { machine, failure } => {
                format!("Machine {machine} failed: {failure:?}")
            }
            Blocker::MachineWithoutProviderID {
                machine,
                age_secs,
                infrastructure,
            } => format!(
                "Machine {machine} has no spec.providerID after {}{}",
                format_secs(*age_secs),
                infrastructure
                    .as_deref()
                    .map(|i| format!(" (InfrastructureReady {i})"))
                    .unwrap_or_default()
            ),
            Blocker::NodeNotFound { provider_id } => {
                format!("no Node has spec.providerID {provider_id}")
            }
            Blocker::NodeWithoutProviderID { node, provider_id } => format!(
                "node {node} joined with an empty spec.providerID (the Machine has {provider_id}): no cloud-controller-manager set it"
            ),
            Blocker::MultipleNodesFound { provider_id, nodes } => {
                format!(
                    "{} Nodes have spec.providerID {provider_id}: {}",
                    nodes.len(),
                    nodes.join(", ")
                )
            }
            Blocker::UnregisteredTaintMissing { node, taints } => format!(
                "node {node} joined without {UNREGISTERED_TAINT_KEY}:NoExecute (taints: [{}]): Karpenter v1.0-v1.2 never adopts it; later versions adopt it with a warning, after pods may already have landed",
                taints.join(", ")
            ),
            Blocker::NodeNotReady { node, ready } => {
                format!("node {node} is not Ready (Ready={ready})")
            }
            Blocker::StartupTaintsRemain { node, taints } => {
                format!(
                    "node {node} still has startup or ephemeral taints: {}",
                    taints.join(", ")
                )
            }
            Blocker::AwaitingController { node, condition } => {
                format!(
                    "node {node} is in place, but the controller has not set {condition}=True yet"
                )
            }
        }
    }

    /// The fix.
    pub(crate) fn remedy(&self, claim: &str, chain: &ClaimChain<'_>) -> String {
        let ns_machine = |m: &str| {
            m.split_once('/')
                .map(|(ns, n)| format!("-n {ns} {n}"))
                .unwrap_or_else(|| m.to_string())
        };
        match self {
            Blocker::MachineNotFound { launch_failed: Some(_), .. } => {
                "fix what the provider reports (see the Setup findings on the member MachineDeployments); Karpenter deletes the claim and retries".to_string()
            }
            Blocker::MachineNotFound { .. } => {
                "the controller binds a Machine after raising the MachineDeployment's replicas: check it runs (see Controller) and `kubectl get machines -A -l cluster.x-k8s.io/deployment-name`".to_string()
            }
            Blocker::MachineFailed { machine, .. } => format!(
                "fix the infrastructure (`kubectl describe machine {}`), then `kubectl delete nodeclaim {claim}` to retry",
                ns_machine(machine)
            ),
            Blocker::MachineWithoutProviderID { machine, .. } => format!(
                "`kubectl describe machine {}` and its infrastructure machine (`clusterctl describe cluster`)",
                ns_machine(machine)
            ),
            Blocker::NodeNotFound { .. } => {
                "the node has not joined: check the instance's console or cloud-init log, and `kubectl get nodes -o custom-columns=NAME:.metadata.name,PROVIDER:.spec.providerID`".to_string()
            }
            Blocker::NodeWithoutProviderID { .. } => {
                "install the infrastructure's cloud-controller-manager in the workload cluster (it sets spec.providerID)".to_string()
            }
            Blocker::MultipleNodesFound { .. } => "`kubectl delete node` the stale Node(s) with that providerID".to_string(),
            Blocker::UnregisteredTaintMissing { .. } => {
                let template = chain
                    .machine
                    .and_then(|m| m.deployment.as_ref().map(|d| format!("the KubeadmConfigTemplate of MachineDeployment {}/{d}", m.namespace)))
                    .unwrap_or_else(|| "the member MachineDeployment's KubeadmConfigTemplate".to_string());
                format!(
                    "add {{key: {UNREGISTERED_TAINT_KEY}, effect: NoExecute}} to spec.template.spec.joinConfiguration.nodeRegistration.taints of {template}, then `kubectl delete nodeclaim {claim}`"
                )
            }
            Blocker::NodeNotReady { node, .. } => format!("`kubectl describe node {node}`: kubelet, container runtime or CNI"),
            Blocker::StartupTaintsRemain { node, .. } => {
                format!("the component that owns those taints must remove them: check it runs on node {node}")
            }
            Blocker::AwaitingController { .. } => "check the controller runs and can patch nodeclaims/status (see Controller)".to_string(),
        }
    }
}

/// A NodeClaim with what it is bound to and where its chain breaks.
#[derive(Debug, Clone)]
pub(crate) struct ClaimChain<'a> {
    /// The claim.
    pub(crate) claim: &'a NodeClaimRecord,
    /// Its Machine, if found.
    pub(crate) machine: Option<&'a MachineRecord>,
    /// Nodes matching its providerID (or its Machine's node without one).
    pub(crate) nodes: Vec<&'a NodeRecord>,
    /// The providerID used (the claim's, else its Machine's).
    pub(crate) provider_id: Option<String>,
    /// The first broken link, if any.
    pub(crate) blocker: Option<Blocker>,
}

/// Walks a claim's chain.
pub(crate) fn chain<'a>(snapshot: &'a Snapshot, claim: &'a NodeClaimRecord) -> ClaimChain<'a> {
    let mut c = ClaimChain {
        claim,
        machine: None,
        nodes: Vec::new(),
        provider_id: claim.provider_id.clone(),
        blocker: None,
    };
    c.machine = match &claim.machine {
        Some(key) => snapshot.machines.iter().find(|m| &m.key() == key),
        None => claim.provider_id.as_ref().and_then(|pid| {
            snapshot
                .machines
                .iter()
                .find(|m| m.provider_id.as_ref() == Some(pid))
        }),
    };
    let Some(machine) = c.machine else {
        let launch_failed = condition::find(&claim.conditions, "Launched")
            .filter(|c| c.status == "False")
            .map(|c| format!("{}: {}", c.reason, c.message));
        c.blocker = Some(Blocker::MachineNotFound {
            named: claim.machine.clone(),
            launch_failed,
        });
        return c;
    };
    if let Some(failure) = machine.failure.clone().or_else(|| {
        (machine.phase.as_deref() == Some("Failed")).then(|| "phase Failed".to_string())
    }) {
        c.blocker = Some(Blocker::MachineFailed {
            machine: machine.key(),
            failure,
        });
        return c;
    }
    let Some(provider_id) = claim
        .provider_id
        .clone()
        .or_else(|| machine.provider_id.clone())
    else {
        let infrastructure = condition::find(&machine.conditions, "InfrastructureReady")
            .filter(|c| !c.is_true())
            .map(|c| format!("{} ({}: {})", c.status, c.reason, c.message));
        c.blocker = Some(Blocker::MachineWithoutProviderID {
            machine: machine.key(),
            age_secs: 0,
            infrastructure,
        });
        return c;
    };
    c.provider_id = Some(provider_id.clone());
    c.nodes = snapshot
        .nodes
        .iter()
        .filter(|n| n.provider_id.as_ref() == Some(&provider_id))
        .collect();
    match c.nodes.len() {
        0 => {
            let joined_bare = snapshot.nodes.iter().find(|n| {
                n.provider_id.is_none()
                    && (n.name == machine.name
                        || machine.node_name.as_ref() == Some(&n.name)
                        || n.annotations.get("cluster.x-k8s.io/machine") == Some(&machine.name))
            });
            c.blocker = Some(match joined_bare {
                Some(node) => {
                    c.nodes.push(node);
                    Blocker::NodeWithoutProviderID {
                        node: node.name.clone(),
                        provider_id,
                    }
                }
                None => Blocker::NodeNotFound { provider_id },
            });
            return c;
        }
        1 => {}
        _ => {
            c.blocker = Some(Blocker::MultipleNodesFound {
                provider_id,
                nodes: c.nodes.iter().map(|n| n.name.clone()).collect(),
            });
            return c;
        }
    }
    let node = c.nodes[0];
    let registered = claim.condition_true("Registered");
    let taints: Vec<String> = node.taints.iter().map(Taint::to_string).collect();
    let adopted = node
        .labels
        .get(REGISTERED_LABEL)
        .is_some_and(|v| v == "true");
    if !registered && !adopted && !node.taints.iter().any(|t| t.key == UNREGISTERED_TAINT_KEY) {
        c.blocker = Some(Blocker::UnregisteredTaintMissing {
            node: node.name.clone(),
            taints,
        });
        return c;
    }
    if node.ready != Some(true) {
        let ready = match node.ready {
            Some(_) => "False",
            None => "not reported",
        };
        c.blocker = Some(Blocker::NodeNotReady {
            node: node.name.clone(),
            ready: ready.to_string(),
        });
        return c;
    }
    let remaining: Vec<String> = node
        .taints
        .iter()
        .filter(|t| {
            // Matched by key, as the controller's initialization does. The unregistered taint
            // is expected until registration, and a leftover after it.
            claim.startup_taints.iter().any(|s| s.key == t.key)
                || (taints::is_ephemeral(&t.key) && (registered || t.key != UNREGISTERED_TAINT_KEY))
        })
        .map(Taint::to_string)
        .collect();
    if !remaining.is_empty() {
        c.blocker = Some(Blocker::StartupTaintsRemain {
            node: node.name.clone(),
            taints: remaining,
        });
        return c;
    }
    if !registered || !claim.condition_true("Initialized") {
        let condition = if registered {
            "Initialized"
        } else {
            "Registered"
        };
        c.blocker = Some(Blocker::AwaitingController {
            node: node.name.clone(),
            condition: condition.to_string(),
        });
    }
    c
}

/// Judges a claim's chain at `now`: one finding.
pub(crate) fn judge(chain: &ClaimChain<'_>, now: jiff::Timestamp, config: &Config) -> Finding {
    let claim = chain.claim;
    let subject = super::subject("NodeClaim", "", &claim.name);
    let age = age_secs(claim.created, now);
    let Some(blocker) = &chain.blocker else {
        let node = chain.nodes.first().map(|n| n.name.as_str()).unwrap_or("?");
        let machine = chain.machine.map(MachineRecord::key).unwrap_or_default();
        return Finding::new(
            AREA,
            Cause::NodeClaimInitialized,
            Severity::Ok,
            subject,
            format!(
                "registered and initialized: node {node}, Machine {machine}{}",
                claim
                    .instance_type
                    .as_deref()
                    .map(|t| format!(", {t}"))
                    .unwrap_or_default()
            ),
            "",
        );
    };
    // The Machine's own age is the better evidence for a slow infrastructure.
    let blocker = match blocker {
        Blocker::MachineWithoutProviderID {
            machine,
            infrastructure,
            ..
        } => Blocker::MachineWithoutProviderID {
            machine: machine.clone(),
            age_secs: age_secs(chain.machine.and_then(|m| m.created).or(claim.created), now),
            infrastructure: infrastructure.clone(),
        },
        other => other.clone(),
    };
    let remedy = blocker.remedy(&claim.name, chain);
    let registered = claim.condition_true("Registered");
    // The very clock the controller's liveness pass reads: a claim reported past its deadline
    // here is one that pass deletes at the same `now`.
    let clock = crate::controller::lifecycle::liveness_clock(claim, now, config);
    let evidence = blocker.describe();
    let (cause, severity, message) = if blocker.is_failure() {
        (
            blocker.cause(),
            Severity::Error,
            format!("{evidence} ({} after creation)", format_secs(age)),
        )
    } else if let Some(clock) = clock.filter(|c| c.timed_out()) {
        let cause = match clock.stage {
            LivenessStage::Launch => blocker.cause(),
            LivenessStage::Registration => Cause::RegistrationTimeout,
        };
        (
            cause,
            Severity::Error,
            format!(
                "{evidence}; {} timed out: {}, {} past the {} {} timeout: deleted or about to be",
                clock.stage.noun(),
                clock_since(&clock),
                format_secs(-clock.left()),
                clock.limit,
                clock.stage.noun(),
            ),
        )
    } else if registered && age > config.registration_timeout.as_secs_i64() {
        (
            blocker.cause(),
            Severity::Error,
            format!(
                "{evidence}; registered but not initialized {} after creation",
                format_secs(age)
            ),
        )
    } else {
        let progress = match clock {
            Some(clock) => format!(
                "{} in progress: {}, {} left of the {} {} timeout",
                clock.stage.noun(),
                clock_since(&clock),
                format_secs(clock.left()),
                clock.limit,
                clock.stage.noun(),
            ),
            None => format!("in progress: {} old", format_secs(age)),
        };
        (
            blocker.cause(),
            Severity::Warning,
            format!("{evidence}; {progress}"),
        )
    };
    // A claim already being deleted explains why its Machine or Node may vanish next.
    let message = if claim.deleting {
        format!("{message}; the NodeClaim is being deleted")
    } else {
        message
    };
    Finding::new(AREA, cause, severity, subject, message, remedy)
}

/// Where a liveness clock started, for messages: `timed 4m59s since the Launched condition's
/// last transition (2026-12-01T10:00:00Z)` or `... since creation (...)`.
fn clock_since(clock: &LivenessClock) -> String {
    let from = if clock.from_condition {
        format!(
            "the {} condition's last transition",
            clock.stage.condition()
        )
    } else {
        "creation".to_string()
    };
    match clock.since {
        Some(t) => format!("timed {} since {from} ({t})", format_secs(clock.waited)),
        None => format!("timed since {from} (unknown)"),
    }
}

/// Runs the NodeClaim checks.
pub(crate) fn check(
    snapshot: &Snapshot,
    now: jiff::Timestamp,
    config: &Config,
    out: &mut Vec<Finding>,
) {
    for claim in &snapshot.nodeclaims {
        out.push(judge(&chain(snapshot, claim), now, config));
    }
}
