//! The NodeClaim lifecycle after creation: binding to an exact Machine, launch (providerID),
//! registration of the matching Node, initialization, and liveness timeouts; plus the node
//! class's Ready condition.

use crate::vocab::keys;
use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde_json::json;

use super::Config;
use super::action::Action;
use crate::model::machine::MachineRecord;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::snapshot::{MachineIndex, Snapshot};

/// Age of a claim at `now`, in seconds (0 when unknown).
pub(crate) fn age(created: Option<Timestamp>, now: Timestamp) -> i64 {
    created
        .map(|c| now.as_second() - c.as_second())
        .unwrap_or(0)
}

/// NodeClaims deleted by this pass for timing out, with the Machines to mark.
#[derive(Debug, Default)]
pub(crate) struct Liveness {
    /// Actions (deleteNodeClaim, markMachineForDeletion).
    pub(crate) actions: Vec<Action>,
    /// Names of the NodeClaims deleted.
    pub(crate) deleted_claims: BTreeSet<String>,
    /// Machines marked (`namespace/name`).
    pub(crate) marked_machines: BTreeSet<String>,
}

/// When the liveness clock of a claim's `type_` condition started (see [`since_transition`]).
pub(crate) fn liveness_start(claim: &NodeClaimRecord, type_: &str) -> Option<Timestamp> {
    crate::model::condition::find(&claim.conditions, type_)
        .and_then(|c| c.last_transition_time)
        .or(claim.created)
}

/// The liveness stage a claim is in: waiting to launch, or launched and waiting to register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LivenessStage {
    /// No providerID and Launched not True: the launch timeout runs.
    Launch,
    /// Launched but Registered not True: the registration timeout runs.
    Registration,
}

impl LivenessStage {
    /// The condition whose last transition starts this stage's clock.
    pub(crate) fn condition(self) -> &'static str {
        match self {
            Self::Launch => "Launched",
            Self::Registration => "Registered",
        }
    }

    /// The reason a claim deleted at this stage's deadline carries.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Launch => "LaunchTimeout",
            Self::Registration => "RegistrationTimeout",
        }
    }

    /// `launch` or `registration`, for messages.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Self::Launch => "launch",
            Self::Registration => "registration",
        }
    }
}

/// The liveness clock running for one claim: which stage, since when, against which limit.
/// The controller ([`liveness`]) and `doctor`/`explain` both read it, so they cannot disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LivenessClock {
    /// The stage being timed.
    pub(crate) stage: LivenessStage,
    /// The start: the stage condition's lastTransitionTime, else the claim's creation.
    pub(crate) since: Option<Timestamp>,
    /// Whether `since` came from the condition (false: from creation, or unknown).
    pub(crate) from_condition: bool,
    /// The timeout for this stage.
    pub(crate) limit: crate::model::duration::GoDuration,
    /// Seconds the clock has run at `now` (0 when the start is unknown).
    pub(crate) waited: i64,
}

impl LivenessClock {
    /// Past the deadline: the controller deletes the claim (unless it is already deleting or
    /// Cluster API is paused for its Machine).
    pub(crate) fn timed_out(&self) -> bool {
        self.waited > self.limit.as_secs_i64()
    }

    /// Seconds left before the deadline (negative: the overrun).
    pub(crate) fn left(&self) -> i64 {
        self.limit.as_secs_i64() - self.waited
    }
}

/// The liveness clock that applies to `claim` at `now`, or `None` once it has registered (core
/// `nodeclaim/lifecycle/liveness.go` Reconcile: a claim not launched yet is judged by the launch
/// clock alone, a launched one by the registration clock, each from its condition's last
/// transition).
pub(crate) fn liveness_clock(
    claim: &NodeClaimRecord,
    now: Timestamp,
    config: &Config,
) -> Option<LivenessClock> {
    let launched = claim.condition_true("Launched") || claim.provider_id.is_some();
    let (stage, limit) = if !launched {
        (LivenessStage::Launch, config.launch_timeout)
    } else if !claim.condition_true("Registered") {
        (LivenessStage::Registration, config.registration_timeout)
    } else {
        return None;
    };
    let from_condition = crate::model::condition::find(&claim.conditions, stage.condition())
        .and_then(|c| c.last_transition_time)
        .is_some();
    let since = liveness_start(claim, stage.condition());
    Some(LivenessClock {
        stage,
        since,
        from_condition,
        limit,
        waited: age(since, now),
    })
}

/// Claims not launched within the launch timeout of their Launched condition's last transition,
/// or launched but not registered within the registration timeout of their Registered
/// condition's, are deleted and their exact Machine marked for deletion (see
/// [`liveness_clock`]).
pub(crate) fn liveness(snapshot: &Snapshot, now: Timestamp, config: &Config) -> Liveness {
    let mut out = Liveness::default();
    for claim in snapshot.nodeclaims.iter().filter(|c| !c.deleting) {
        let Some(clock) = liveness_clock(claim, now, config).filter(LivenessClock::timed_out)
        else {
            continue;
        };
        let (reason, limit, waited) = (clock.stage.reason(), clock.limit, clock.waited);
        // Cluster API is paused for its Machine: no claim deletion, no mark.
        if super::rollout::claim_paused(snapshot, claim).is_some() {
            continue;
        }
        let what = match clock.stage {
            LivenessStage::Launch => "launched",
            LivenessStage::Registration => "registered",
        };
        // Durations as everywhere else (`doctor`, `explain`): Go durations, `16m`, `7m30s`.
        let message = format!(
            "not {what} within {limit} (waited {})",
            crate::model::duration::GoDuration(u64::try_from(waited).unwrap_or(0))
        );
        out.actions
            .push(Action::delete_node_claim(claim, reason, message));
        out.deleted_claims.insert(claim.name.clone());
        if let Some(m) = bound_machine(snapshot, claim).filter(|m| m.is_live()) {
            out.actions.push(mark(m, Some(&claim.name), reason));
            out.marked_machines.insert(m.key());
        }
    }
    out
}

/// A `markMachineForDeletion` action.
pub(crate) fn mark(m: &MachineRecord, claim: Option<&str>, reason: &str) -> Action {
    Action::MarkMachineForDeletion {
        target: format!("Machine/{}", m.key()),
        machine: m.key(),
        node_claim: claim.map(str::to_string),
        reason: reason.to_string(),
        api_version: m.api_version.clone(),
    }
}

/// The Machine a claim's annotation names, if it exists.
pub(crate) fn bound_machine<'a>(
    snapshot: &'a Snapshot,
    claim: &NodeClaimRecord,
) -> Option<&'a MachineRecord> {
    // Compared in parts: formatting every Machine's key per claim dominated plans at thousands
    // of nodes (a namespace holds no `/`, so the split is the key's).
    let (ns, name) = claim.machine.as_deref()?.split_once('/')?;
    snapshot
        .machines
        .iter()
        .find(|m| m.name == name && m.namespace == ns)
}

/// Binds waiting claims to unclaimed Machines of their MachineDeployment (oldest first on both
/// sides), finishes half-done bindings (annotation without label), and launches claims whose
/// Machine has a providerID.
pub(crate) fn bind_and_launch(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut actions = Vec::new();
    let referenced: BTreeSet<String> = snapshot
        .nodeclaims
        .iter()
        .filter_map(|c| c.machine.clone())
        .collect();
    let mut free: BTreeMap<String, Vec<&MachineRecord>> = BTreeMap::new();
    // Unclaimed Machines are capacity (karpenter-provider-cluster-api `pkg/batcher/create.go`
    // countUnclaimedMachines): one without a Node, or whose Node has not registered yet (it
    // still carries `karpenter.sh/unregistered`: a rollout's surge Machine, a MachineHealthCheck
    // replacement, a Machine made for a claim before a restart), is bound to a waiting claim of
    // its MachineDeployment; registration then removes the taint. A Machine whose Node runs
    // registered is adopted or left alone, never bound.
    for m in &snapshot.machines {
        if m.is_live()
            && !m.claimed
            && !referenced.contains(&m.key())
            && joinable(snapshot, m)
            && let Some(d) = m.deployment_key()
        {
            free.entry(d).or_default().push(m);
        }
    }
    for list in free.values_mut() {
        list.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    }
    let mut claims: Vec<&NodeClaimRecord> = snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name))
        .collect();
    claims.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
    let machines = MachineIndex::new(snapshot);
    for claim in claims {
        match (&claim.machine, machines.bound(claim)) {
            (None, _) => {
                let Some(md) = snapshot.claim_machine_deployment(claim) else {
                    continue;
                };
                let Some(list) = free.get_mut(&md) else {
                    continue;
                };
                if list.is_empty() {
                    continue;
                }
                let m = list.remove(0);
                actions.push(claim_machine(m, &claim.name));
            }
            (Some(_), Some(m)) => {
                if !m.claimed {
                    actions.push(claim_machine(m, &claim.name));
                }
                let launched = claim.condition_true("Launched") && claim.provider_id.is_some();
                if let (false, Some(pid)) = (launched, &m.provider_id) {
                    actions.push(Action::LaunchNodeClaim {
                        target: format!("NodeClaim/{}", claim.name),
                        node_claim: claim.name.clone(),
                        machine: m.key(),
                        provider_id: pid.clone(),
                    });
                }
            }
            (Some(_), None) => {}
        }
    }
    actions
}

/// Whether a Machine can still become a waiting claim's node: it has no Node yet, or its Node
/// still carries `karpenter.sh/unregistered` (not registered by anyone).
pub(crate) fn joinable(snapshot: &Snapshot, m: &MachineRecord) -> bool {
    let Some(name) = m.node_name.as_deref() else {
        return true;
    };
    snapshot
        .nodes
        .iter()
        .find(|n| n.name == name)
        .is_some_and(|n| {
            n.taints
                .iter()
                .any(|t| t.key == keys::UNREGISTERED_TAINT_KEY)
        })
}

fn claim_machine(m: &MachineRecord, claim: &str) -> Action {
    Action::ClaimMachine {
        target: format!("Machine/{}", m.key()),
        machine: m.key(),
        node_claim: claim.to_string(),
        api_version: m.api_version.clone(),
    }
}

/// The Nodes with this providerID, by a scan (the index's tests compare against it).
#[cfg(test)]
pub(crate) fn nodes_for<'a>(
    snapshot: &'a Snapshot,
    provider_id: &str,
) -> Vec<&'a crate::model::snapshot::NodeRecord> {
    snapshot
        .nodes
        .iter()
        .filter(|n| n.provider_id.as_deref() == Some(provider_id))
        .collect()
}

/// Registers Nodes of launched claims (exactly one Node with the providerID), then initializes
/// registered claims whose Node is Ready without startup or ephemeral taints.
pub(crate) fn register_and_initialize(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut actions = Vec::new();
    let machines = MachineIndex::new(snapshot);
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name))
    {
        // The providerID the claim has, or is about to get from its Machine this pass.
        let pid = claim
            .provider_id
            .clone()
            .or_else(|| machines.bound(claim).and_then(|m| m.provider_id.clone()));
        let Some(pid) = pid else { continue };
        let nodes = machines.nodes_for(&pid);
        let [node] = nodes.as_slice() else { continue };
        if !claim.condition_true("Registered") {
            let mut labels: BTreeMap<String, String> = claim.labels.clone();
            labels.retain(|k, _| {
                !k.starts_with(crate::vocab::keys::REGISTERED_LABEL)
                    && !k.starts_with(crate::vocab::keys::INITIALIZED_LABEL)
            });
            let sync_taints = node
                .labels
                .get(crate::vocab::keys::DO_NOT_SYNC_TAINTS_LABEL)
                .map(String::as_str)
                != Some("true");
            let taints: Vec<String> = if sync_taints {
                claim
                    .taints
                    .iter()
                    .chain(claim.startup_taints.iter())
                    .map(|t| t.to_string())
                    .collect()
            } else {
                Vec::new()
            };
            let mut status = serde_json::Map::new();
            status.insert("capacity".into(), resource_json(&node.capacity));
            status.insert("allocatable".into(), resource_json(&node.allocatable));
            // Core's registration copies the claim's annotations to the Node
            // (`nodeclaim/lifecycle/registration.go` syncNode), do-not-disrupt included; the
            // `cluster.x-k8s.io` domain is Cluster API's on Nodes (its Machine annotation there
            // names the Node's own Machine), so those stay as Cluster API wrote them. Our own
            // `karpenter-capi/` bookkeeping describes the claim, not the node, and stays too.
            let annotations: BTreeMap<String, String> = claim
                .annotations
                .iter()
                .filter(|(k, _)| !is_capi_owned(k) && !k.starts_with("karpenter-capi/"))
                .filter(|(k, v)| node.annotations.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            actions.push(Action::RegisterNode {
                target: format!("Node/{}", node.name),
                node: node.name.clone(),
                node_claim: claim.name.clone(),
                labels,
                annotations,
                taints,
                node_claim_uid: claim.uid.clone(),
                status,
                // Core registration.go: a Node not yet registered and without the
                // NoExecute unregistered taint is reported, and registered all the same.
                unregistered_taint_missing: !node.labels.contains_key(keys::REGISTERED_LABEL)
                    && !node.taints.iter().any(|t| {
                        t.key == keys::UNREGISTERED_TAINT_KEY
                            && t.effect == crate::model::taints::Effect::NoExecute
                    }),
            });
            continue;
        }
        if claim.condition_true("Initialized") {
            continue;
        }
        let startup_left = claim
            .startup_taints
            .iter()
            .any(|t| node.taints.iter().any(|n| n.key == t.key));
        let ephemeral = node
            .taints
            .iter()
            .any(|t| crate::model::taints::is_ephemeral(&t.key));
        let missing_resource = claim
            .requests
            .extended
            .keys()
            .any(|k| node.allocatable.extended.get(k).copied().unwrap_or(0) == 0);
        if node.ready == Some(true) && !startup_left && !ephemeral && !missing_resource {
            actions.push(Action::InitializeNodeClaim {
                target: format!("NodeClaim/{}", claim.name),
                node_claim: claim.name.clone(),
                node: node.name.clone(),
            });
        }
    }
    actions
}

/// Whether an annotation key is in Cluster API's domain (`cluster.x-k8s.io` or a subdomain).
pub(crate) fn is_capi_owned(key: &str) -> bool {
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    domain == "cluster.x-k8s.io" || domain.ends_with(".cluster.x-k8s.io")
}

pub(super) fn resource_json(r: &crate::model::resources::Resources) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("cpu".into(), json!(format!("{}m", r.cpu_millis)));
    m.insert("memory".into(), json!(r.memory_bytes.to_string()));
    m.insert("pods".into(), json!(r.pods.to_string()));
    if r.ephemeral_storage_bytes > 0 {
        m.insert(
            "ephemeral-storage".into(),
            json!(r.ephemeral_storage_bytes.to_string()),
        );
    }
    for (k, v) in &r.extended {
        m.insert(k.clone(), json!(v.to_string()));
    }
    serde_json::Value::Object(m)
}

/// `setNodeClassReady` for every ClusterAPINodeClass not reporting Ready=True.
pub(crate) fn node_classes(snapshot: &Snapshot) -> Vec<Action> {
    snapshot
        .nodeclasses
        .iter()
        .filter(|c| c.ready != Some(true))
        .map(|c| Action::SetNodeClassReady {
            target: format!("ClusterAPINodeClass/{}", c.name),
            node_class: c.name.clone(),
        })
        .collect()
}

/// The longest launch failure message a claim's condition carries (core `launch.go`
/// truncateMessage: 300, then `...`).
const LAUNCH_MESSAGE_MAX: usize = 300;

/// Core `nodeclaim/lifecycle/launch.go` launchNodeClaim: a launch that failed puts its error on
/// the claim's `Launched` condition, Unknown with reason `LaunchFailed` and the message cut at
/// 300 characters. Here the error is the bound Machine's terminal failure (`failureReason:
/// failureMessage`, or a v1beta2 InfrastructureReady/BootstrapConfigReady failure) while the
/// claim is not launched. Written only over a `Launched` that is Unknown already, so its last
/// transition, where the launch timeout counts from, stays as it is. `skip`: claims this pass
/// deletes.
pub(crate) fn launch_failures(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut out = Vec::new();
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !c.deleting && !skip.contains(&c.name) && c.provider_id.is_none())
    {
        let Some(failure) = bound_machine(snapshot, claim).and_then(|m| m.failure.as_deref())
        else {
            continue;
        };
        let Some(current) = crate::model::condition::find(&claim.conditions, "Launched") else {
            continue;
        };
        let message = match failure.char_indices().nth(LAUNCH_MESSAGE_MAX) {
            Some((cut, _)) => format!("{}...", &failure[..cut]),
            None => failure.to_string(),
        };
        if current.status != "Unknown"
            || (current.reason == "LaunchFailed" && current.message == message)
        {
            continue;
        }
        out.push(Action::SetNodeClaimConditions {
            target: format!("NodeClaim/{}", claim.name),
            node_claim: claim.name.clone(),
            set: vec![super::write::ConditionUpdate {
                type_: "Launched".to_string(),
                status: "Unknown".to_string(),
                reason: "LaunchFailed".to_string(),
                message,
            }],
            clear: Vec::new(),
        });
    }
    out
}
