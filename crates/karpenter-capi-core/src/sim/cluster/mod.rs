//! The simulated cluster: a [`Snapshot`] that Cluster API, the infrastructure, the kubelets, a
//! kube-scheduler stand-in and the trace's workloads change over time, with the event queue
//! that orders those changes.
//!
//! - MachineSets: a replicas change creates Machines after `machineCreate`, or deletes the
//!   surplus in CAPI's order (marked with `cluster.x-k8s.io/delete-machine` first, then without
//!   a Node, then the newest), draining their pods first.
//! - Infrastructure and kubelet: per flavor, the providerID, the Node joining (with the
//!   bootstrap template's taints, `node.kubernetes.io/not-ready` and CAPI's
//!   `node.cluster.x-k8s.io/uninitialized`) and Ready, each a latency after the Machine's
//!   creation; DaemonSet pods land on the Node as it joins.
//! - kube-scheduler: pending pods go, oldest first, to the Ready node with the most free room
//!   (LeastAllocated) among those [`ClusterState::fits`] accepts — the same fit rules the
//!   strategies use — or are marked `PodScheduled=False/Unschedulable`.
//!
//! The trace's workloads live in `workload`, Cluster API and the kubelets in `capi`, the
//! scheduler stand-in in `scheduler`; this file holds the state and the event loop.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use jiff::Timestamp;

use super::Ms;
use super::metrics::Recorder;
use super::params::Latencies;
use super::trace::{Change, Template, Trace};
use crate::controller::scale::current_replicas;
use crate::error::Error;
use crate::model::flavor::{Flavor, Price};
use crate::model::labels::Labels;
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::machine::MachineRecord;
use crate::model::pod::PodDemand;
use crate::model::snapshot::{NodeRecord, PodRecord, Snapshot};
use crate::model::taints::{Effect, Taint};
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::vocab::keys;
use crate::vocab::keys::UNREGISTERED_TAINT_KEY;

mod capi;
mod scheduler;
mod workload;

use crate::vocab::keys::CAPI_UNINITIALIZED_TAINT_KEY;
use crate::vocab::keys::NOT_READY_TAINT_KEY;
use capi::bootstrap_taints;

/// Something that happens at a time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// A trace step (index into the trace's steps).
    Trace(usize),
    /// These pods' lifetime ended.
    Expire(Vec<String>),
    /// A MachineSet creates a Machine for this MachineDeployment (`namespace/name`).
    CreateMachine(String),
    /// The Machine (`namespace/name`) gets its providerID.
    ProviderId(String),
    /// The Machine's Node registers.
    NodeJoin(String),
    /// CAPI removes its uninitialized taint from this Node.
    CapiInit(String),
    /// The Machine's Node is Ready.
    NodeReady(String),
    /// The pod (`namespace/name`) bound to this node is Running.
    PodRunning(String, String),
    /// The Machine (being deleted) is gone, with its server and Node.
    MachineGone(String),
    /// The autoscaler's timer.
    Wake,
}

/// How the autoscaler under test shapes the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode {
    /// Nodes register with Karpenter's `karpenter.sh/unregistered` taint (Karpenter setups);
    /// Cluster Autoscaler setups use a bootstrap template without it.
    pub(crate) karpenter: bool,
    /// Karpenter's termination controller runs beside the autoscaler: a deleted NodeClaim
    /// stays (deleting) until its Machine is gone, then goes. Ours runs its own termination:
    /// its claims carry `karpenter.sh/termination`, which the API server honours (a deleted
    /// claim stays deleting until the controller removes the finalizer).
    pub(crate) claim_finalizer: bool,
}

/// A Machine the simulation created, and what it bills.
#[derive(Debug, Clone)]
struct MachineInfo {
    md: String,
    flavor: Option<Flavor>,
}

/// The simulated clusters (workload and management in one).
pub(crate) struct SimCluster {
    /// Everything the autoscaler sees.
    pub(crate) snap: Snapshot,
    /// The current time.
    pub(crate) now: Ms,
    /// What `now == 0` is as a timestamp.
    pub(crate) base: Timestamp,
    /// Latencies.
    pub(crate) lat: Latencies,
    /// Mode.
    pub(crate) mode: Mode,
    /// Measurements.
    pub(crate) rec: Recorder,
    /// When a pod last arrived on or left each node (Karpenter's `lastPodEventTime`).
    pub(crate) last_pod_event: HashMap<String, Ms>,
    /// Things that did not go as the simulation expected (unsupported writes, ...).
    pub(crate) warnings: BTreeSet<String>,
    /// The NodeClaim the last `Create` made (its name is generated), for the status write after it.
    pub(crate) last_created_claim: Option<String>,
    trace: Trace,
    /// When each of the trace's pods with a lifetime expires (a replacement inherits it).
    expiry: HashMap<String, Ms>,
    templates: Vec<PodDemand>,
    next_pod: Vec<u64>,
    workload_of: HashMap<String, usize>,
    bootstrap: HashMap<String, Vec<Taint>>,
    machines: HashMap<String, MachineInfo>,
    creating: HashMap<String, i64>,
    deleting_nodes: BTreeSet<String>,
    queue: BinaryHeap<Reverse<(Ms, u64, Event)>>,
    seq: u64,
    names: u64,
    wake_at: Option<Ms>,
    sched_dirty: bool,
    changed: bool,
    first_step_at: Option<Ms>,
}

/// A short name suffix from a counter, like the API server's generated names.
pub(crate) fn suffix(n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(2_654_435_761) % 14_348_907; // 27^5
    let mut out = String::new();
    for _ in 0..5 {
        out.push(char::from(ALPHABET[(x % 27) as usize]));
        x /= 27;
    }
    out
}

impl SimCluster {
    /// The scenario's cluster, with the trace's workloads resolved to pod templates (their
    /// scenario pods removed: the trace decides when they exist).
    pub(crate) fn new(scenario: &Snapshot, trace: &Trace, mode: Mode) -> Result<SimCluster, Error> {
        let base: Timestamp = scenario
            .now
            .unwrap_or(Timestamp::from_second(1_796_032_800).unwrap_or(Timestamp::UNIX_EPOCH));
        let mut snap = scenario.clone();
        // The simulated management cluster always lists its Machines: a Machine absent from
        // the snapshot is gone (as a live listing says), so Nodes and claims it held are freed.
        snap.machines_observed = true;
        let mut templates = Vec::new();
        for w in &trace.workloads {
            let demand = match &w.template {
                Template::Scenario(owner) => {
                    let matches = |p: &PodRecord| {
                        p.owner.as_deref().is_some_and(|o| {
                            o == owner
                                || (owner.starts_with("*/")
                                    && o.split_once('/').map(|x| x.1) == Some(&owner[2..]))
                        }) && p.demand.namespace == w.namespace
                    };
                    let found = snap
                        .pods
                        .iter()
                        .find(|p| matches(p))
                        .map(|p| PodDemand::clone(&p.demand));
                    snap.pods.retain(|p| !matches(p));
                    found.ok_or_else(|| Error::Input {
                        path: format!("trace {}", trace.name),
                        problem: format!(
                            "workload {}: the scenario has no pods of {} in namespace {} to take a template from (give cpu and memory instead)",
                            w.name,
                            owner.trim_start_matches("*/"),
                            w.namespace
                        ),
                    })?
                }
                Template::Inline {
                    cpu,
                    memory,
                    anti_affinity,
                } => inline_template(
                    &trace.name,
                    &w.name,
                    &w.namespace,
                    cpu,
                    memory,
                    anti_affinity.as_deref(),
                )?,
            };
            templates.push(demand);
        }
        let mut bootstrap = HashMap::new();
        for md in &snap.machine_deployments {
            let mut taints = bootstrap_taints(&snap, md);
            if !mode.karpenter {
                taints.retain(|t| t.key != UNREGISTERED_TAINT_KEY);
            }
            bootstrap.insert(md.key(), taints);
        }
        let start = base;
        for p in &mut snap.pods {
            let p = std::sync::Arc::make_mut(p);
            p.created.get_or_insert(start);
            if p.node_name.is_some() {
                p.phase = Some("Running".to_string());
            }
        }
        let mut c = SimCluster {
            snap,
            now: 0,
            base,
            lat: trace.latencies.clone(),
            mode,
            rec: Recorder::default(),
            last_pod_event: HashMap::new(),
            last_created_claim: None,
            warnings: BTreeSet::new(),
            next_pod: vec![0; trace.workloads.len()],
            trace: trace.clone(),
            expiry: HashMap::new(),
            templates,
            workload_of: HashMap::new(),
            bootstrap,
            machines: HashMap::new(),
            creating: HashMap::new(),
            deleting_nodes: BTreeSet::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            names: 0,
            wake_at: None,
            sched_dirty: true,
            changed: true,
            first_step_at: trace.steps.first().map(|s| s.at),
        };
        for m in c.snap.machines.clone() {
            if let Some(md) = m.deployment_key() {
                let flavor = c.flavor_of(&md);
                c.machines.insert(m.key(), MachineInfo { md, flavor });
            }
        }
        for (i, s) in trace.steps.iter().enumerate() {
            c.push(s.at, Event::Trace(i));
        }
        Ok(c)
    }

    /// The pod template of each of the trace's workloads, in the trace's order.
    pub(crate) fn templates(&self) -> &[PodDemand] {
        &self.templates
    }

    /// `now` as a timestamp.
    pub(crate) fn ts(&self, at: Ms) -> Timestamp {
        Timestamp::from_millisecond(self.base.as_millisecond() + at).unwrap_or(self.base)
    }

    /// Queues an event.
    pub(crate) fn push(&mut self, at: Ms, event: Event) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, event)));
    }

    /// The time of the next event, if any.
    pub(crate) fn next_time(&self) -> Option<Ms> {
        self.queue.peek().map(|Reverse((t, _, _))| *t)
    }

    /// The next event due at or before `t`.
    pub(crate) fn pop_due(&mut self, t: Ms) -> Option<Event> {
        if self.next_time()? > t {
            return None;
        }
        self.queue.pop().map(|Reverse((_, _, e))| e)
    }

    /// Asks for the autoscaler to be woken at `at` (replacing any earlier request), or never.
    pub(crate) fn set_wake(&mut self, at: Option<Ms>) {
        let at = at.map(|t| t.max(self.now));
        if at != self.wake_at {
            self.wake_at = at;
            if let Some(t) = at {
                self.push(t, Event::Wake);
            }
        }
    }

    /// Whether a popped `Wake` is the current request (stale ones are ignored).
    pub(crate) fn take_wake(&mut self) -> bool {
        if self.wake_at == Some(self.now) {
            self.wake_at = None;
            true
        } else {
            false
        }
    }

    /// Notes that the cluster changed (a watch event for the autoscaler).
    pub(crate) fn touch(&mut self) {
        self.changed = true;
        self.sched_dirty = true;
    }

    /// Whether the cluster changed since the last call.
    pub(crate) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Records a warning once.
    pub(crate) fn warn(&mut self, text: String) {
        self.warnings.insert(text);
    }

    fn flavor_of(&self, md_key: &str) -> Option<Flavor> {
        self.snap
            .machine_deployments
            .iter()
            .find(|m| m.key() == md_key)
            .and_then(|m| m.flavor.as_ref().ok().cloned())
    }

    /// Machines of a MachineDeployment being created right now.
    pub(crate) fn creating(&self, md_key: &str) -> i64 {
        self.creating.get(md_key).copied().unwrap_or(0)
    }

    /// Whether a Node is being deleted (its Machine is gone, a finalizer holds it).
    pub(crate) fn node_deleting(&self, node: &str) -> bool {
        self.deleting_nodes.contains(node)
    }

    /// Whether nothing the autoscaler made is left.
    pub(crate) fn nothing_left(&self) -> bool {
        self.snap.nodeclaims.is_empty()
            && self.rec.machines() == 0
            && self
                .snap
                .all_members()
                .iter()
                .all(|md| current_replicas(md) == 0)
    }

    /// Handles one event.
    pub(crate) fn handle(&mut self, event: Event) {
        match event {
            Event::Trace(i) => self.trace_step(i),
            Event::Expire(pods) => {
                for p in pods {
                    self.remove_pod(&p);
                }
                self.check_load();
            }
            Event::CreateMachine(md) => self.create_machine(&md),
            Event::ProviderId(m) => {
                if let Some(rec) = self.snap.machines.iter_mut().find(|x| x.key() == m) {
                    rec.provider_id = Some(format!("sim:///{}", rec.name));
                    rec.phase = Some("Provisioned".to_string());
                    self.rec.launched(self.now);
                    self.touch();
                }
            }
            Event::NodeJoin(m) => self.node_join(&m),
            Event::CapiInit(node) => {
                if let Some(n) = self.snap.nodes.iter_mut().find(|n| n.name == node) {
                    n.taints.retain(|t| t.key != CAPI_UNINITIALIZED_TAINT_KEY);
                    self.touch();
                }
            }
            Event::NodeReady(m) => {
                let Some(name) = self
                    .snap
                    .machines
                    .iter()
                    .find(|x| x.key() == m && !x.deleting)
                    .and_then(|x| x.node_name.clone())
                else {
                    return;
                };
                if let Some(n) = self.snap.nodes.iter_mut().find(|n| n.name == name) {
                    n.ready = Some(true);
                    n.taints.retain(|t| t.key != NOT_READY_TAINT_KEY);
                    if !self.mode.karpenter {
                        self.rec.initialized(self.now);
                    }
                    self.touch();
                }
            }
            Event::PodRunning(pod, node) => {
                let now = self.now;
                let started = self.ts(now);
                if let Some(p) = self.snap.pods.iter_mut().find(|p| {
                    p.node_name.as_deref() == Some(node.as_str()) && p.demand.key() == pod
                }) {
                    let p = std::sync::Arc::make_mut(p);
                    p.phase = Some("Running".to_string());
                    // The kubelet's `status.startTime` (do-not-disrupt durations count from it).
                    p.started = Some(started);
                    self.rec.pod_running(now, &pod);
                    self.changed = true;
                }
            }
            Event::MachineGone(m) => self.machine_gone(&m),
            Event::Wake => {}
        }
    }
}

/// A pod template from a trace's inline requests, read through the same loader as scenarios.
fn inline_template(
    trace: &str,
    name: &str,
    namespace: &str,
    cpu: &str,
    memory: &str,
    anti_affinity: Option<&str>,
) -> Result<PodDemand, Error> {
    let topology = match anti_affinity {
        None => None,
        Some("hostname") | Some("kubernetes.io/hostname") => Some(keys::HOSTNAME),
        Some("zone") | Some("topology.kubernetes.io/zone") => Some(keys::ZONE),
        Some(other) => {
            return Err(Error::Input {
                path: format!("trace {trace}"),
                problem: format!("workload {name}: antiAffinity {other:?} is not hostname or zone"),
            });
        }
    };
    let affinity = topology
        .map(|k| format!("      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - labelSelector: {{matchLabels: {{app: {name}}}}}\n            topologyKey: {k}\n"))
        .unwrap_or_default();
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n{affinity}      containers:\n      - name: main\n        resources: {{requests: {{cpu: {cpu:?}, memory: {memory:?}}}}}\n"
    );
    let snap = snapshot_from_sources(&[Source {
        name: format!("trace {trace}, workload {name}"),
        text: yaml,
    }])?;
    snap.pods
        .into_iter()
        .next()
        .map(|p| std::sync::Arc::unwrap_or_clone(std::sync::Arc::unwrap_or_clone(p).demand))
        .ok_or_else(|| Error::Input {
            path: format!("trace {trace}"),
            problem: format!("workload {name}: no pod template"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_short_and_distinct() {
        let names: BTreeSet<String> = (1..500).map(suffix).collect();
        assert_eq!(names.len(), 499);
        assert!(names.iter().all(|n| n.len() == 5));
    }

    #[test]
    fn ceil_to_rounds_up_to_the_period() {
        assert_eq!(super::super::ceil_to(0, 10_000), 0);
        assert_eq!(super::super::ceil_to(1, 10_000), 10_000);
        assert_eq!(super::super::ceil_to(20_000, 10_000), 20_000);
    }
}
