//! Upstream karpenter-capi: Karpenter core with the Cluster API provider, simulated by its loop.
//!
//! - Provisioning: the same batching window (1 s idle, 10 s max); the `karpenter-capi` strategy
//!   (Karpenter's packing, every instance type priced 0, the provider's first name) decides the
//!   NodeClaims, created as Karpenter creates them.
//! - Launch: the provider's `Create` scales the MachineDeployment by the deficit of unclaimed
//!   Machines at once (karpenter-provider-cluster-api `pkg/batcher/create.go`
//!   execCreateBatch; `upstreamLaunch` later, 0 unless a trace sets it), then binds a Machine
//!   and launches the claim once the Machine has a providerID.
//! - Registration and initialization are event-driven, as Karpenter's lifecycle controller.
//! - Disruption, as Karpenter v1.5.0 (what the provider vendors) with every price 0: the
//!   controller polls every 10 s (`pkg/controllers/disruption/controller.go`) and tries its
//!   methods in order — emptiness, then (`WhenEmptyOrUnderutilized` only) multi-node and
//!   single-node consolidation — until one acts. A claim is a candidate once `Consolidatable`
//!   (`consolidateAfter` since its last pod event or initialization). Candidates go in
//!   DisruptionCost order (pods' eviction costs times the lifetime left before `expireAfter`),
//!   filtered by the NodePool's disruption budget. Consolidation is delete-only: a replacement
//!   must be cheaper than the candidates and nothing is cheaper than 0, so a command only
//!   removes nodes whose pods (and the pending ones) all fit on the other nodes. Non-empty
//!   consolidation considers only Nodes carrying zone, capacity-type and a known instance-type
//!   label (`consolidation.go` ShouldDisrupt). Multi-node: a binary search for the longest
//!   prefix of up to 100 candidates (`firstNConsolidationOption`), within its 1-minute timeout;
//!   single-node: the first candidate that fits elsewhere, within 3 minutes. Each method skips
//!   its search while nothing changed since one that found nothing (`IsConsolidated`). A command
//!   is validated after 15 s (the loop waits; `validation.go`) and carried out only if its
//!   candidates are still candidates within budget and their pods still fit; then its nodes are
//!   tainted and their claims deleted; the provider marks each Machine and decrements replicas
//!   (`pkg/batcher/delete.go`); CAPI drains the Node; the claim goes once the Machine is gone.
//!   The timeouts run on a modelled compute time per scheduling simulation
//!   ([`Upstream::scheduling_cost`], 0 by default: at these sizes Karpenter's searches end well
//!   within them).

use std::collections::{BTreeMap, BTreeSet};

use super::{Agent, at, batch_closes, earliest};
use crate::controller::action::Action;
use crate::controller::budget::allowed_disruptions;
use crate::controller::consolidation::{Moving, Room};
use crate::controller::lifecycle::{bind_and_launch, bound_machine, mark, register_and_initialize};
use crate::controller::provision::{batch_ready, create_node_claim};
use crate::controller::{Config, scale::current_replicas};
use crate::sched::catalog;
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{
    Strategy, karpenter_capi::KarpenterCapi, place_on_existing, queue_order,
};
use crate::sim::apply::apply_all;
use crate::sim::cluster::{Mode, SimCluster};
use crate::sim::{Ms, ceil_to};
use crate::vocab::keys::DISRUPTED_TAINT_KEY;
use crate::vocab::reasons::DisruptionReason;

/// Karpenter's disruption polling period.
pub(crate) const POLL: Ms = 10_000;
/// Karpenter's consolidation command validation delay (`consolidationTTL`).
pub(crate) const VALIDATION: Ms = 15_000;
/// `MultiNodeConsolidationTimeoutDuration`.
pub(crate) const MULTI_NODE_TIMEOUT: Ms = 60_000;
/// `SingleNodeConsolidationTimeoutDuration`.
pub(crate) const SINGLE_NODE_TIMEOUT: Ms = 180_000;
/// Multi-node consolidation considers at most this many candidates.
pub(crate) const MULTI_NODE_MAX: usize = 100;
/// `ConsolidationState` forces a new search this long after the last change.
pub(crate) const FORCE_AFTER: Ms = 300_000;

/// Karpenter's disruption methods, in the order the controller tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Method {
    /// `Emptiness`.
    Empty,
    /// `MultiNodeConsolidation`.
    MultiNode,
    /// `SingleNodeConsolidation`.
    SingleNode,
}

impl Method {
    const ALL: [Method; 3] = [Method::Empty, Method::MultiNode, Method::SingleNode];

    fn index(self) -> usize {
        self as usize
    }

    /// The disruption reason its budgets count under.
    fn reason(self) -> DisruptionReason {
        match self {
            Method::Empty => DisruptionReason::Empty,
            _ => DisruptionReason::Underutilized,
        }
    }
}

/// A disruption command waiting for its validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The method that computed it.
    pub(crate) method: Method,
    /// The candidates' claims, in DisruptionCost order.
    pub(crate) claims: Vec<String>,
    /// When it is validated and carried out.
    pub(crate) at: Ms,
}

/// A disruption candidate.
#[derive(Debug, Clone)]
struct Cand {
    claim: String,
    node: String,
    pool: String,
    cost: f64,
    pods: usize,
}

/// The upstream peer.
#[derive(Default)]
pub(crate) struct Upstream {
    config: Config,
    first_change: Option<Ms>,
    debounce: Option<Ms>,
    /// Claims waiting for the provider's `Create`, with when it runs.
    launches: Vec<(Ms, String)>,
    /// Claims the provider has launched (or is binding).
    released: BTreeSet<String>,
    /// The command under validation (the disruption loop waits for it).
    command: Option<Command>,
    next_poll: Option<Ms>,
    /// When the cluster last changed (Karpenter's `MarkUnconsolidated`).
    state: Ms,
    /// Per method, the state its last search that found nothing was marked at.
    consolidated: [Option<Ms>; 3],
    /// When the disruption loop last polled.
    last_poll: Option<Ms>,
    /// NodePools single-node consolidation did not reach before its timeout last time.
    unseen_pools: BTreeSet<String>,
    passes: usize,
    /// Modelled compute time of one scheduling simulation, for the consolidation timeouts.
    pub(crate) scheduling_cost: Ms,
    /// Commands carried out: (time, method, claims).
    pub(crate) log: Vec<(Ms, Method, Vec<String>)>,
}

impl Upstream {
    fn rearm(&self, c: &mut SimCluster) {
        let launch = self.launches.iter().map(|(t, _)| *t).min();
        let validate = self.command.as_ref().map(|x| x.at);
        c.set_wake(earliest([self.debounce, launch, validate, self.next_poll]));
    }

    /// Karpenter's lifecycle reconcilers: bind, launch, register, initialize the claims the
    /// provider has taken on.
    fn lifecycle(&mut self, c: &mut SimCluster) {
        let skip: BTreeSet<String> = c
            .snap
            .nodeclaims
            .iter()
            .filter(|x| !self.released.contains(&x.name))
            .map(|x| x.name.clone())
            .collect();
        let mut actions = bind_and_launch(&c.snap, &skip);
        actions.extend(register_and_initialize(&c.snap, &skip));
        if !actions.is_empty() {
            apply_all(c, &actions);
        }
    }

    fn provision(&mut self, c: &mut SimCluster) {
        let pods: Vec<usize> = (0..c.snap.pods.len())
            .filter(|&i| c.snap.pods[i].is_provisionable())
            .collect();
        if pods.is_empty() || !batch_ready(&c.snap, &pods, c.ts(c.now), &self.config) {
            return;
        }
        let placement = KarpenterCapi.plan(&c.snap, &pods);
        let actions: Vec<Action> = placement
            .new_nodes
            .iter()
            .filter_map(|n| {
                let pool = c
                    .snap
                    .nodepools
                    .iter()
                    .find(|p| p.name == n.offering.node_pool)?;
                Some(create_node_claim(&c.snap, pool, n, "Provisioning"))
            })
            .collect();
        let before: BTreeSet<String> = c.snap.nodeclaims.iter().map(|x| x.name.clone()).collect();
        apply_all(c, &actions);
        let due = c.now + c.lat.upstream_launch;
        for claim in &c.snap.nodeclaims {
            if !before.contains(&claim.name) {
                self.launches.push((due, claim.name.clone()));
            }
        }
    }

    /// The provider's `Create` for the claims due: raise replicas by the deficit of unclaimed
    /// Machines, per MachineDeployment, then bind.
    fn launch_due(&mut self, c: &mut SimCluster) {
        let now = c.now;
        let (due, later): (Vec<_>, Vec<_>) = self.launches.drain(..).partition(|(t, _)| *t <= now);
        self.launches = later;
        let mut per_md: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, name) in due {
            if let Some(claim) = c
                .snap
                .nodeclaims
                .iter()
                .find(|x| x.name == name && !x.deleting)
                && let Some(md) = c.snap.claim_machine_deployment(claim)
            {
                per_md.entry(md).or_default().push(name);
            }
        }
        let mut actions = Vec::new();
        for (md_key, claims) in &per_md {
            let referenced: BTreeSet<&String> = c
                .snap
                .nodeclaims
                .iter()
                .filter_map(|x| x.machine.as_ref())
                .collect();
            let unclaimed = c
                .snap
                .machines
                .iter()
                .filter(|m| m.deployment_key().as_deref() == Some(md_key.as_str()))
                .filter(|m| m.is_live() && !m.claimed && !referenced.contains(&m.key()))
                .count() as i64
                + c.creating(md_key);
            let deficit = claims.len() as i64 - unclaimed;
            if deficit > 0
                && let Some(md) = c
                    .snap
                    .machine_deployments
                    .iter()
                    .find(|m| &m.key() == md_key)
            {
                let current = current_replicas(md);
                actions.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{md_key}"),
                    machine_deployment: md_key.clone(),
                    from: current,
                    replicas: current + deficit,
                    rollback_machines: Vec::new(),
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
            self.released.extend(claims.iter().cloned());
        }
        apply_all(c, &actions);
    }

    /// Every initialized claim's node with when it becomes `Consolidatable` (`consolidateAfter`
    /// since the later of its initialization and its last pod event; mirrors core
    /// `nodeclaim/disruption/consolidation.go`), for pools that consolidate at all.
    fn consolidatable(&self, c: &SimCluster) -> Vec<(String, Ms)> {
        let mut out = Vec::new();
        for claim in c.snap.nodeclaims.iter().filter(|x| !x.deleting) {
            if !claim.condition_true("Initialized") {
                continue;
            }
            let Some(node) = claim.node_name.as_ref() else {
                continue;
            };
            let Some(after) = claim
                .node_pool
                .as_ref()
                .and_then(|p| c.snap.nodepools.iter().find(|np| &np.name == p))
                .and_then(super::consolidate_after)
            else {
                continue;
            };
            let initialized = claim
                .conditions
                .iter()
                .find(|x| x.type_ == "Initialized")
                .and_then(|x| x.last_transition_time)
                .map_or(0, |t| at(c, t));
            let last = c.last_pod_event.get(node).copied().unwrap_or(0);
            out.push((claim.name.clone(), initialized.max(last) + after));
        }
        out
    }

    /// The candidates of a method now (core `GetCandidates` with the method's `ShouldDisrupt`),
    /// sorted by DisruptionCost (ties by node name; core's sort is not stable).
    fn candidates(&self, c: &SimCluster, method: Method) -> Vec<Cand> {
        let now = c.now;
        let known: BTreeSet<String> = c
            .snap
            .all_members()
            .iter()
            .filter_map(|md| md.flavor.as_ref().ok().map(|f| f.instance_type.clone()))
            .collect();
        let mut out = Vec::new();
        for (name, eligible) in self.consolidatable(c) {
            if eligible > now {
                continue;
            }
            let Some(claim) = c.snap.nodeclaims.iter().find(|x| x.name == name) else {
                continue;
            };
            let (Some(node), Some(pool)) = (claim.node_name.as_ref(), claim.node_pool.as_ref())
            else {
                continue;
            };
            let Some(n) = c.snap.nodes.iter().find(|n| &n.name == node) else {
                continue;
            };
            // Nodes already being disrupted or deleted are no candidates.
            if n.deleting
                || n.unschedulable
                || n.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY)
                || c.node_deleting(node)
            {
                continue;
            }
            let pods: Vec<&crate::model::snapshot::PodRecord> = c
                .snap
                .pods
                .iter()
                .filter(|p| !p.daemon && !p.terminal && p.node_name.as_ref() == Some(node))
                .map(|p| &**p)
                .collect();
            if method != Method::Empty {
                let policy = c
                    .snap
                    .nodepools
                    .iter()
                    .find(|np| &np.name == pool)
                    .map(|np| np.consolidation_policy.as_str());
                if policy != Some("WhenEmptyOrUnderutilized") {
                    continue;
                }
                // Consolidation needs the price of the node: its zone, capacity type and an
                // instance type the provider knows.
                let has = |k: &str| n.labels.contains_key(k);
                let it_known = n
                    .labels
                    .get(crate::vocab::keys::INSTANCE_TYPE)
                    .is_some_and(|t| known.contains(t));
                if !has(crate::vocab::keys::ZONE)
                    || !has(crate::vocab::keys::CAPACITY_TYPE)
                    || !it_known
                {
                    continue;
                }
            } else if !pods.is_empty() {
                continue;
            }
            out.push(Cand {
                claim: name.clone(),
                node: node.clone(),
                pool: pool.clone(),
                cost: disruption_cost(c, claim, &pods),
                pods: pods.len(),
            });
        }
        out.sort_by(|a, b| a.cost.total_cmp(&b.cost).then_with(|| a.node.cmp(&b.node)));
        out
    }

    /// Disruptions a pool allows now for a reason, minus those under way (core
    /// `BuildDisruptionBudgetMapping`).
    fn budgets(&self, c: &SimCluster, reason: DisruptionReason) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for pool in &c.snap.nodepools {
            let claims: Vec<&crate::model::nodeclaim::NodeClaimRecord> = c
                .snap
                .nodeclaims
                .iter()
                .filter(|x| x.node_pool.as_deref() == Some(pool.name.as_str()))
                .collect();
            let disrupting = claims
                .iter()
                .filter(|x| {
                    x.deleting
                        || x.node_name.as_ref().is_some_and(|n| {
                            c.snap.nodes.iter().any(|node| {
                                &node.name == n
                                    && node.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY)
                            })
                        })
                })
                .count();
            let allowed = allowed_disruptions(pool, reason, claims.len(), c.ts(c.now))
                .unwrap_or(0)
                .saturating_sub(disrupting);
            out.insert(pool.name.clone(), allowed);
        }
        out
    }

    /// Whether every pod of these nodes, and every pending pod, fits on the other nodes (core
    /// `SimulateScheduling` producing no new NodeClaim: with every price 0 nothing is cheaper,
    /// so a replacement is never launched).
    fn fits_elsewhere(&self, c: &SimCluster, nodes: &[&str]) -> bool {
        // The pods to place against all the room there is (a necessary condition): most
        // searches on a busy cluster end here, without copying the snapshot.
        let room = Room::new(&c.snap);
        let names: BTreeSet<&str> = nodes.iter().copied().collect();
        let mut moving = Moving::new();
        room.moving(&names, &mut moving);
        for p in c.snap.pods.iter() {
            if !p.daemon && !p.terminal && p.node_name.is_none() && p.is_pending() {
                moving.add([p.demand.requests.cpu_millis, p.demand.requests.memory_bytes]);
            }
        }
        if room.cannot_fit(&names, &moving, [0, 0]) {
            return false;
        }
        let (offerings, _) = catalog::offerings(&c.snap, false);
        let mut view = c.snap.clone();
        let mut moving = Vec::new();
        for (i, p) in view.pods.iter_mut().enumerate() {
            if p.daemon || p.terminal {
                continue;
            }
            match p.node_name.as_deref() {
                Some(n) if nodes.contains(&n) => {
                    std::sync::Arc::make_mut(p).node_name = None;
                    moving.push(i);
                }
                None if p.is_pending() => moving.push(i),
                _ => {}
            }
        }
        let mut state = ClusterState::new(&view, &offerings);
        for pn in state.nodes.iter_mut() {
            if let NodeOrigin::Existing(ni) = pn.origin {
                let n = &view.nodes[ni];
                pn.cordoned = pn.cordoned
                    || nodes.contains(&n.name.as_str())
                    || n.deleting
                    || n.unschedulable
                    || c.node_deleting(&n.name)
                    || n.taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY);
            }
        }
        let queue = queue_order(&view, &moving);
        place_on_existing(&mut state, &queue).is_empty()
    }

    /// The disruption loop from `first` on: the first method with a command starts its
    /// validation; a method that finds nothing marks the state consolidated (unless budgets
    /// held candidates back).
    fn poll(&mut self, c: &mut SimCluster, first: Method) {
        let now = c.now;
        // A claim becoming Consolidatable is a NodeClaim update: the state changes.
        let last = self.last_poll.unwrap_or(Ms::MIN);
        if self
            .consolidatable(c)
            .iter()
            .any(|(_, e)| *e > last && *e <= now)
        {
            self.state = now;
        }
        self.last_poll = Some(now);
        if now - self.state >= FORCE_AFTER {
            self.state = now;
        }
        for method in Method::ALL.into_iter().filter(|m| *m >= first) {
            if self.consolidated[method.index()] == Some(self.state) {
                continue;
            }
            let candidates = self.candidates(c, method);
            if candidates.is_empty() {
                continue;
            }
            let mut budget = self.budgets(c, method.reason());
            let (found, constrained) = match method {
                Method::Empty => {
                    let mut chosen = Vec::new();
                    let mut constrained = false;
                    for cand in candidates {
                        let left = budget.entry(cand.pool.clone()).or_insert(0);
                        if *left == 0 {
                            constrained = true;
                            continue;
                        }
                        *left -= 1;
                        chosen.push(cand.claim);
                    }
                    (chosen, constrained)
                }
                Method::MultiNode => self.multi_node(c, candidates, &mut budget),
                Method::SingleNode => self.single_node(c, candidates, &budget),
            };
            if found.is_empty() {
                if !constrained {
                    self.consolidated[method.index()] = Some(self.state);
                }
                continue;
            }
            self.command = Some(Command {
                method,
                claims: found,
                at: now + VALIDATION,
            });
            return;
        }
    }

    /// `firstNConsolidationOption`: the longest prefix (2 to 100 candidates) whose nodes can
    /// all go, by binary search. Returns the claims and whether budgets held any back.
    fn multi_node(
        &self,
        c: &SimCluster,
        candidates: Vec<Cand>,
        budget: &mut BTreeMap<String, usize>,
    ) -> (Vec<String>, bool) {
        let mut constrained = false;
        let mut usable = Vec::new();
        for cand in candidates {
            let left = budget.entry(cand.pool.clone()).or_insert(0);
            if *left == 0 {
                constrained = true;
                continue;
            }
            if cand.pods == 0 {
                continue;
            }
            *left -= 1;
            usable.push(cand);
        }
        let max_parallel = usable.len().min(MULTI_NODE_MAX);
        if usable.len() < 2 {
            return (Vec::new(), constrained);
        }
        let (mut lo, mut hi) = (1usize, max_parallel);
        if usable.len() <= hi {
            hi = usable.len() - 1;
        }
        let mut best: Vec<String> = Vec::new();
        let mut spent: Ms = 0;
        while lo <= hi {
            if spent > MULTI_NODE_TIMEOUT {
                break;
            }
            let mid = (lo + hi) / 2;
            let nodes: Vec<&str> = usable[..=mid].iter().map(|x| x.node.as_str()).collect();
            spent += self.scheduling_cost;
            if self.fits_elsewhere(c, &nodes) {
                best = usable[..=mid].iter().map(|x| x.claim.clone()).collect();
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        (best, constrained)
    }

    /// Single-node consolidation: candidates interleaved by NodePool (those the last search
    /// did not reach first), the first whose pods fit elsewhere, within the timeout.
    fn single_node(
        &mut self,
        c: &SimCluster,
        candidates: Vec<Cand>,
        budget: &BTreeMap<String, usize>,
    ) -> (Vec<String>, bool) {
        let mut by_pool: BTreeMap<String, Vec<Cand>> = BTreeMap::new();
        for cand in candidates {
            by_pool.entry(cand.pool.clone()).or_default().push(cand);
        }
        let mut pools: Vec<String> = self
            .unseen_pools
            .iter()
            .filter(|p| by_pool.contains_key(*p))
            .cloned()
            .collect();
        pools.extend(
            by_pool
                .keys()
                .filter(|p| !self.unseen_pools.contains(*p))
                .cloned(),
        );
        let longest = by_pool.values().map(Vec::len).max().unwrap_or(0);
        let mut order = Vec::new();
        for i in 0..longest {
            for p in &pools {
                if let Some(x) = by_pool.get(p).and_then(|v| v.get(i)) {
                    order.push(x.clone());
                }
            }
        }
        let mut unseen: BTreeSet<String> = by_pool.keys().cloned().collect();
        let mut constrained = false;
        let mut spent: Ms = 0;
        for cand in order {
            if spent > SINGLE_NODE_TIMEOUT {
                self.unseen_pools = unseen;
                // Abandoned: not marked consolidated.
                return (Vec::new(), true);
            }
            unseen.remove(&cand.pool);
            if budget.get(&cand.pool).copied().unwrap_or(0) == 0 {
                constrained = true;
                continue;
            }
            if cand.pods == 0 {
                continue;
            }
            spent += self.scheduling_cost;
            if self.fits_elsewhere(c, &[cand.node.as_str()]) {
                self.unseen_pools = unseen;
                return (vec![cand.claim], constrained);
            }
        }
        self.unseen_pools = unseen;
        (Vec::new(), constrained)
    }

    /// Validates the command due and carries it out (core `validation.go`): emptiness keeps
    /// the candidates still empty within budget; consolidation needs every candidate still a
    /// candidate within budget and their pods still fitting elsewhere. Then the loop goes on:
    /// at once after a command, with the next method after an abandoned one.
    fn execute_due(&mut self, c: &mut SimCluster) {
        let Some(cmd) = self.command.take_if(|x| x.at <= c.now) else {
            return;
        };
        let now = c.now;
        let current = self.candidates(c, cmd.method);
        let mut budget = self.budgets(c, cmd.method.reason());
        let mut valid: Vec<Cand> = Vec::new();
        for name in &cmd.claims {
            if let Some(cand) = current.iter().find(|x| &x.claim == name) {
                let left = budget.entry(cand.pool.clone()).or_insert(0);
                if *left > 0 {
                    *left -= 1;
                    valid.push(cand.clone());
                }
            }
        }
        let ok = match cmd.method {
            Method::Empty => !valid.is_empty(),
            _ => {
                valid.len() == cmd.claims.len() && {
                    let nodes: Vec<&str> = valid.iter().map(|x| x.node.as_str()).collect();
                    self.fits_elsewhere(c, &nodes)
                }
            }
        };
        if !ok {
            match cmd.method {
                Method::Empty => self.poll(c, Method::MultiNode),
                Method::MultiNode => self.poll(c, Method::SingleNode),
                Method::SingleNode => {}
            }
            return;
        }
        let reason = cmd.method.reason();
        let mut actions = Vec::new();
        let mut per_md: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for cand in &valid {
            let Some(claim) = c.snap.nodeclaims.iter().find(|x| x.name == cand.claim) else {
                continue;
            };
            actions.push(Action::TaintNode {
                target: format!("Node/{}", cand.node),
                node: cand.node.clone(),
                taint: format!("{DISRUPTED_TAINT_KEY}:NoSchedule"),
                reason: reason.to_string(),
                saving_per_hour: crate::model::flavor::Price(0),
                node_claim: Some(cand.claim.clone()),
                since: c.ts(now).to_string(),
                replacements: 0,
            });
            actions.push(Action::DeleteNodeClaim {
                target: format!("NodeClaim/{}", cand.claim),
                node_claim: cand.claim.clone(),
                reason: reason.to_string(),
                message: format!("disrupting node(s): {}", reason.as_str().to_lowercase()),
                machine: claim.machine.clone(),
                add_finalizer: false,
            });
            // The provider's Delete: mark that Machine; replicas drop by the batch's count.
            if let Some(m) = bound_machine(&c.snap, claim) {
                actions.push(mark(m, Some(&cand.claim), reason.as_str()));
                if let Some(md) = m.deployment_key() {
                    per_md.entry(md).or_default().push(m.key());
                }
            }
        }
        for (key, machines) in per_md {
            if let Some(md) = c.snap.machine_deployments.iter().find(|d| d.key() == key) {
                let current = current_replicas(md);
                actions.push(Action::ScaleMachineDeployment {
                    target: format!("MachineDeployment/{key}"),
                    machine_deployment: key.clone(),
                    from: current,
                    replicas: (current - machines.len() as i64).max(0),
                    rollback_machines: machines,
                    api_version: md.object.api_version.clone(),
                    resource_version: None,
                });
            }
        }
        self.log.push((
            now,
            cmd.method,
            valid.iter().map(|x| x.claim.clone()).collect(),
        ));
        apply_all(c, &actions);
        // Success requeues the loop at once.
        self.poll(c, Method::Empty);
    }

    /// The next poll: when a claim becomes Consolidatable, or the next period while a method
    /// has a search to make (the state changed since it last found nothing).
    fn schedule_poll(&mut self, c: &SimCluster) {
        let now = c.now;
        if self.command.is_some() {
            self.next_poll = None;
            return;
        }
        let last = self.last_poll.unwrap_or(Ms::MIN);
        let consolidatable = self.consolidatable(c);
        let transition = consolidatable
            .iter()
            .filter(|(_, e)| *e > last)
            .map(|(_, e)| ceil_to((*e).max(now + 1), POLL))
            .min();
        let searching = consolidatable.iter().any(|(_, e)| *e <= now)
            && Method::ALL
                .iter()
                .any(|m| self.consolidated[m.index()] != Some(self.state));
        let search = searching.then(|| ceil_to(now + 1, POLL));
        self.next_poll = earliest([transition, search]);
    }
}

/// Karpenter's DisruptionCost of a candidate (core `utils/disruption` ReschedulingCost times
/// LifetimeRemaining): each pod costs what v1.5.0's `EvictionCost` says, the same rule as
/// v1.14.1's (1, plus its pod-deletion-cost over 2^27, plus its priority over 2^25, clamped to
/// [-10, 10]), so [`PodRecord::eviction_cost`] gives it; the sum is scaled by the fraction of
/// `expireAfter` left.
///
/// [`PodRecord::eviction_cost`]: crate::model::snapshot::PodRecord::eviction_cost
fn disruption_cost(
    c: &SimCluster,
    claim: &crate::model::nodeclaim::NodeClaimRecord,
    pods: &[&crate::model::snapshot::PodRecord],
) -> f64 {
    let one = crate::model::snapshot::EVICTION_COST_ONE as f64;
    let rescheduling: f64 = pods.iter().map(|p| p.eviction_cost() as f64 / one).sum();
    let remaining = match claim
        .expire_after
        .as_deref()
        .map(str::parse::<crate::model::duration::NillableDuration>)
    {
        Some(Ok(crate::model::duration::NillableDuration::After(d))) if d.as_secs_i64() > 0 => {
            let age = (c.now - claim.created.map_or(0, |t| at(c, t))) as f64 / 1000.0;
            let total = d.as_secs_i64() as f64;
            ((total - age) / total).clamp(0.0, 1.0)
        }
        _ => 1.0,
    };
    rescheduling * remaining
}

impl Agent for Upstream {
    fn strategy(&self) -> StrategyName {
        StrategyName::KarpenterCapi
    }

    fn mode(&self) -> Mode {
        Mode {
            karpenter: true,
            claim_finalizer: true,
        }
    }

    fn on_change(&mut self, c: &mut SimCluster) {
        self.state = c.now;
        self.lifecycle(c);
        if c.snap.pods.iter().any(|p| p.is_provisionable()) {
            let first = *self.first_change.get_or_insert(c.now);
            let idle = self.config.batch_idle.as_secs_i64() * 1000;
            let max = self.config.batch_max.as_secs_i64() * 1000;
            let window = batch_closes(c, idle, max).unwrap_or(c.now);
            self.debounce = Some(window.max(c.now).min(first + max).max(c.now));
        }
        self.schedule_poll(c);
        self.rearm(c);
    }

    fn on_wake(&mut self, c: &mut SimCluster) {
        let now = c.now;
        self.passes += 1;
        if self.debounce.is_some_and(|t| t <= now) {
            self.debounce = None;
            self.first_change = None;
            self.provision(c);
        }
        if self.launches.iter().any(|(t, _)| *t <= now) {
            self.launch_due(c);
            self.lifecycle(c);
        }
        if self.command.as_ref().is_some_and(|x| x.at <= now) {
            self.execute_due(c);
        } else if self.command.is_none() && self.next_poll.is_some_and(|t| t <= now) {
            self.poll(c, Method::Empty);
        }
        self.released
            .retain(|name| c.snap.nodeclaims.iter().any(|x| &x.name == name));
        self.schedule_poll(c);
        self.rearm(c);
    }

    fn passes(&self) -> usize {
        self.passes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};
    use crate::model::snapshot::{PodRecord, Snapshot};
    use crate::sim::trace;

    /// A claim (no expireAfter: its whole lifetime is left) and pods with a pod-deletion-cost
    /// and a priority, as the peer sees them.
    fn cluster_and_candidate() -> (SimCluster, Snapshot) {
        let (name, _, scenario) = trace::BUILT_IN[0];
        let t = trace::built_in(name).unwrap();
        let scenario = snapshot_from_sources(&[Source {
            name: name.into(),
            text: scenario.into(),
        }])
        .unwrap();
        let c = SimCluster::new(
            &scenario,
            &t,
            Mode {
                karpenter: true,
                claim_finalizer: true,
            },
        )
        .unwrap();
        let pod = |name: &str, extra: &str| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, annotations: {{{extra}}}}}\nspec: {{nodeName: n1, containers: [{{name: c}}]{prio}}}\nstatus: {{phase: Running}}\n",
                prio = if name == "high" {
                    ", priority: 67108864"
                } else if name == "low" {
                    ", priority: -33554432"
                } else {
                    ""
                }
            )
        };
        let text = format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: c1, labels: {{karpenter.sh/nodepool: default}}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{nodeName: n1}}\n{}{}{}{}",
            pod("plain", ""),
            pod("high", ""),
            pod("low", ""),
            pod(
                "costly",
                "controller.kubernetes.io/pod-deletion-cost: '268435456'"
            ),
        );
        let s = snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text,
        }])
        .unwrap();
        (c, s)
    }

    #[test]
    fn the_disruption_cost_counts_deletion_cost_and_priority_as_v1_5() {
        let (c, s) = cluster_and_candidate();
        let claim = &s.nodeclaims[0];
        let cost = |names: &[&str]| {
            let pods: Vec<&PodRecord> = s
                .pods
                .iter()
                .map(|p| &**p)
                .filter(|p| names.contains(&p.demand.name.as_str()))
                .collect();
            assert_eq!(pods.len(), names.len());
            disruption_cost(&c, claim, &pods)
        };
        // v1.5.0's EvictionCost: 1, plus the deletion cost over 2^27, plus the priority over
        // 2^25 (2^26 is +2, -2^25 is -1).
        assert_eq!(cost(&["plain"]), 1.0);
        assert_eq!(cost(&["high"]), 3.0);
        assert_eq!(cost(&["low"]), 0.0);
        assert_eq!(cost(&["costly"]), 3.0);
        assert_eq!(cost(&["plain", "high", "low", "costly"]), 7.0);
    }
}
