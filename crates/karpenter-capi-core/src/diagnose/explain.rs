//! `explain`'s answers as data: for a pod, its topology and soft constraints, which existing nodes
//! and flavors fit it (with the reason and numbers when not), what each strategy would provision
//! for it and which preferences it had to relax; for a NodeClaim, its timeline, Machine, Node and
//! blocking cause. Pure: the command looks the object up and renders these.

use jiff::Timestamp;
use serde::Serialize;

use super::nodeclaims::{self, Blocker};
use super::{Finding, age_secs, format_secs};
use crate::controller::Config;
use crate::model::condition;
use crate::model::flavor::Price;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog;
use crate::sched::state::ClusterState;
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{Budget, by_name, rejections};
use crate::sched::{Rejection, Unfit};

/// Whether one flavor (as offered by one NodePool) can hold the pod on a fresh node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlavorFit {
    /// The NodePool offering it.
    pub node_pool: String,
    /// Instance type.
    pub instance_type: String,
    /// The member MachineDeployment (`namespace/name`).
    pub(crate) machine_deployment: String,
    /// Allocatable on a fresh node (capacity minus DaemonSet overhead).
    pub(crate) allocatable: Resources,
    /// Price per hour.
    pub price_per_hour: Price,
    /// Whether it fits.
    pub fits: bool,
    /// Why not, as data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unfit: Option<Unfit>,
    /// Why not, as a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether an existing (or in-flight) node can take the pod now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeFit {
    /// The node (or in-flight NodeClaim) name.
    pub node: String,
    /// Whether it fits.
    pub fits: bool,
    /// Why not, as data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unfit: Option<Unfit>,
    /// Why not, as a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Where a strategy puts the pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Outcome {
    /// On a new node of this flavor.
    NewNode {
        /// Instance type.
        instance_type: String,
        /// MachineDeployment.
        machine_deployment: String,
        /// Price per hour of that node.
        price_per_hour: Price,
        /// Pods sharing that node in the plan.
        pods_on_node: usize,
    },
    /// On an existing node.
    ExistingNode {
        /// The node.
        node: String,
    },
    /// On a node launched but not registered yet.
    InFlightNode {
        /// The node.
        node: String,
    },
    /// Nowhere.
    Unschedulable {
        /// One reason per flavor.
        reasons: Vec<String>,
    },
}

/// One strategy's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyChoice {
    /// The strategy.
    pub strategy: &'static str,
    /// Where the pod goes.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Price per hour of every new node the strategy plans for the whole batch.
    pub batch_price_per_hour: Price,
    /// Preferences dropped (in Karpenter's order) before the pod could be placed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relaxed: Vec<String>,
    /// Why the strategy bought larger nodes than the batch alone needs (`cost` sizing for the
    /// arrivals it expects, as the controller provisions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizing: Option<crate::sched::strategy::cost::foresight::Sizing>,
}

/// Why a pod is where it is, or would go where it would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodExplanation {
    /// `namespace/name`.
    pub pod: String,
    /// Its requests (with one pod slot).
    pub requests: Resources,
    /// The node it is bound to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Pending pods planned together with it (itself included).
    pub batch: usize,
    /// Its topology spread constraints, preferences and volume restrictions, as sentences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// For a pending pod: each existing or in-flight node, and why it cannot take the pod.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeFit>,
    /// Per flavor.
    pub flavors: Vec<FlavorFit>,
    /// Per strategy (empty when the pod is already bound).
    pub strategies: Vec<StrategyChoice>,
}

/// Explains the pod at `index` in the snapshot.
pub fn explain_pod(snapshot: &Snapshot, index: usize) -> PodExplanation {
    explain_pod_at(snapshot, index, None)
}

/// [`explain_pod`] at a time: `cost` then plans as the controller provisions at that time,
/// with the forecast of the recent arrivals ([`crate::sched::strategy::cost::foresight`]).
pub fn explain_pod_at(snapshot: &Snapshot, index: usize, now: Option<Timestamp>) -> PodExplanation {
    let pod = &snapshot.pods[index];
    let (offerings, _) = catalog::offerings(snapshot, true);
    let state = ClusterState::new(snapshot, &offerings);
    let budget = Budget::new(snapshot);
    let flavors = offerings
        .iter()
        .map(|o| {
            let rejection: Option<Rejection> =
                rejections(&state, &budget, std::slice::from_ref(o), index)
                    .into_iter()
                    .next();
            FlavorFit {
                node_pool: o.node_pool.clone(),
                instance_type: o.flavor.instance_type.clone(),
                machine_deployment: o.flavor.machine_deployment.clone(),
                allocatable: o.allocatable.clone(),
                price_per_hour: o.flavor.price,
                fits: rejection.is_none(),
                reason: rejection.as_ref().map(|r| r.unfit.describe(&r.subject)),
                unfit: rejection.map(|r| r.unfit),
            }
        })
        .collect();
    let nodes = if pod.is_pending() {
        (0..state.nodes.len())
            .map(|n| {
                let unfit = state.fits(index, n).err();
                NodeFit {
                    node: state.nodes[n].name.clone(),
                    fits: unfit.is_none(),
                    reason: unfit.as_ref().map(|u| u.describe(&state.nodes[n].name)),
                    unfit,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut pending: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| snapshot.pods[i].is_provisionable())
        .collect();
    if pod.is_pending() && !pending.contains(&index) {
        pending.push(index);
    }
    let strategies = if pod.is_pending() {
        StrategyName::ALL
            .iter()
            .map(|&name| choice(snapshot, name, &pending, index, now))
            .collect()
    } else {
        Vec::new()
    };
    PodExplanation {
        pod: pod.demand.key(),
        requests: pod.demand.requests.clone(),
        node: pod.node_name.clone(),
        batch: if pod.is_pending() { pending.len() } else { 0 },
        constraints: constraints(&pod.demand),
        nodes,
        flavors,
        strategies,
    }
}

fn choice(
    snapshot: &Snapshot,
    name: StrategyName,
    pending: &[usize],
    index: usize,
    now: Option<Timestamp>,
) -> StrategyChoice {
    use crate::sched::strategy::{Relaxing, Strategy, cost};
    let placement = match (name, now) {
        (StrategyName::Cost, Some(now)) => {
            let forecast = cost::foresight::observe(snapshot, pending, now);
            Relaxing(cost::Foreseeing(forecast)).plan(snapshot, pending)
        }
        _ => by_name(name).plan(snapshot, pending),
    };
    let outcome = if let Some(n) = placement.new_nodes.iter().find(|n| n.pods.contains(&index)) {
        Outcome::NewNode {
            instance_type: n.offering.flavor.instance_type.clone(),
            machine_deployment: n.offering.flavor.machine_deployment.clone(),
            price_per_hour: n.offering.flavor.price,
            pods_on_node: n.pods.len(),
        }
    } else if let Some((_, node)) = placement.on_existing.iter().find(|(p, _)| *p == index) {
        Outcome::ExistingNode { node: node.clone() }
    } else if let Some((_, node)) = placement.on_in_flight.iter().find(|(p, _)| *p == index) {
        Outcome::InFlightNode { node: node.clone() }
    } else {
        let reasons = placement
            .unschedulable
            .iter()
            .find(|(p, _)| *p == index)
            .map(|(_, rs)| rs.iter().map(Rejection::to_string).collect())
            .unwrap_or_default();
        Outcome::Unschedulable { reasons }
    };
    StrategyChoice {
        strategy: name.as_str(),
        outcome,
        batch_price_per_hour: placement.price(),
        relaxed: placement
            .relaxed
            .iter()
            .find(|(p, _)| *p == index)
            .map(|(_, notes)| notes.clone())
            .unwrap_or_default(),
        sizing: placement
            .sizing
            .clone()
            .filter(|_| placement.new_nodes.iter().any(|n| n.pods.contains(&index))),
    }
}

/// The pod's topology spread constraints, preferences (required until relaxed) and volume
/// restrictions, as sentences.
fn constraints(d: &crate::model::pod::PodDemand) -> Vec<String> {
    let mut out: Vec<String> = d
        .spread
        .iter()
        .map(|c| {
            let mut text = format!("topology spread: {}", c.describe());
            if let Some(m) = c.min_domains {
                text.push_str(&format!(", minDomains {m}"));
            }
            text
        })
        .collect();
    for (what, terms) in [
        ("preferred pod affinity", &d.preferred_affinity),
        ("preferred pod anti-affinity", &d.preferred_anti_affinity),
    ] {
        out.extend(terms.iter().map(|w| {
            format!(
                "{what} (weight {}) to {} on {}",
                w.weight, w.term.selector, w.term.topology_key
            )
        }));
    }
    out.extend(d.preferred_node_affinity.iter().map(|t| {
        let reqs: Vec<String> = t.requirements.iter().map(ToString::to_string).collect();
        format!(
            "preferred node affinity (weight {}) {}",
            t.weight,
            reqs.join(", ")
        )
    }));
    out.extend(d.volume_requirements.iter().map(|v| {
        let alts: Vec<String> = v
            .alternatives
            .iter()
            .map(|a| {
                a.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .collect();
        format!(
            "volume claim {} ({}) allows {}",
            v.claim,
            v.source,
            alts.join(" or ")
        )
    }));
    out
}

/// One step of a NodeClaim's life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// `Created`, `Launched`, `Registered`, `Initialized`.
    pub step: &'static str,
    /// `True`, `False`, `Unknown`, or empty when not reported.
    pub status: String,
    /// When it became True (or last changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
    /// Time since creation, as a Go duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The condition's reason when not True.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The condition's message when not True.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A NodeClaim's Machine, as far as it matters here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSummary {
    /// `namespace/name`.
    pub name: String,
    /// Its MachineDeployment.
    pub(crate) machine_deployment: Option<String>,
    /// `status.phase`.
    pub phase: Option<String>,
    /// `spec.providerID`.
    pub provider_id: Option<String>,
    /// `status.nodeRef.name`.
    pub node: Option<String>,
}

/// A NodeClaim's Node, as far as it matters here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSummary {
    /// Name.
    pub name: String,
    /// `spec.providerID`.
    pub(crate) provider_id: Option<String>,
    /// Ready condition (`True`, `False`, `not reported`).
    pub ready: String,
    /// Taints.
    pub taints: Vec<String>,
}

/// Why a NodeClaim is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimExplanation {
    /// Name.
    pub nodeclaim: String,
    /// NodePool.
    pub node_pool: Option<String>,
    /// Instance type.
    pub instance_type: Option<String>,
    /// Age at `now`.
    pub age: String,
    /// Created, Launched, Registered, Initialized.
    pub timeline: Vec<Step>,
    /// Its Machine.
    pub machine: Option<MachineSummary>,
    /// Its Node(s).
    pub nodes: Vec<NodeSummary>,
    /// The first broken link of its chain, as data.
    pub(crate) blocker: Option<Blocker>,
    /// What `doctor` concludes about it.
    pub finding: Finding,
}

/// Explains the NodeClaim at `index`.
pub fn explain_nodeclaim(
    snapshot: &Snapshot,
    index: usize,
    now: Timestamp,
    config: &Config,
) -> ClaimExplanation {
    let claim = &snapshot.nodeclaims[index];
    let chain = nodeclaims::chain(snapshot, claim);
    let finding = nodeclaims::judge(&chain, now, config);
    let since = |t: Option<Timestamp>| {
        t.zip(claim.created)
            .map(|(t, c)| format_secs(t.as_second() - c.as_second()))
    };
    let mut timeline = vec![Step {
        step: "Created",
        status: if claim.created.is_some() {
            "True".to_string()
        } else {
            String::new()
        },
        at: claim.created,
        after: claim.created.map(|_| "0s".to_string()),
        reason: String::new(),
        message: String::new(),
    }];
    for step in ["Launched", "Registered", "Initialized"] {
        let c = condition::find(&claim.conditions, step);
        let is_true = c.is_some_and(|c| c.is_true());
        timeline.push(Step {
            step,
            status: c.map(|c| c.status.clone()).unwrap_or_default(),
            at: c.and_then(|c| c.last_transition_time),
            after: if is_true {
                since(c.and_then(|c| c.last_transition_time))
            } else {
                None
            },
            reason: c
                .filter(|_| !is_true)
                .map(|c| c.reason.clone())
                .unwrap_or_default(),
            message: c
                .filter(|_| !is_true)
                .map(|c| c.message.clone())
                .unwrap_or_default(),
        });
    }
    ClaimExplanation {
        nodeclaim: claim.name.clone(),
        node_pool: claim.node_pool.clone(),
        instance_type: claim.instance_type.clone(),
        age: format_secs(age_secs(claim.created, now)),
        timeline,
        machine: chain.machine.map(|m| MachineSummary {
            name: m.key(),
            machine_deployment: m.deployment_key(),
            phase: m.phase.clone(),
            provider_id: m.provider_id.clone(),
            node: m.node_name.clone(),
        }),
        nodes: chain
            .nodes
            .iter()
            .map(|n| NodeSummary {
                name: n.name.clone(),
                provider_id: n.provider_id.clone(),
                ready: match n.ready {
                    Some(true) => "True",
                    Some(false) => "False",
                    None => "not reported",
                }
                .to_string(),
                taints: n.taints.iter().map(ToString::to_string).collect(),
            })
            .collect(),
        blocker: chain.blocker.clone(),
        finding,
    }
}
