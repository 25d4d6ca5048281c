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

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};

use jiff::Timestamp;

use super::Ms;
use super::metrics::Recorder;
use super::params::Latencies;
use super::trace::{Change, Template, Trace};
use crate::controller::action::UNREGISTERED_TAINT_KEY;
use crate::controller::scale::current_replicas;
use crate::error::Error;
use crate::model::flavor::{Flavor, Price};
use crate::model::labels::{Labels, keys};
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::machine::MachineRecord;
use crate::model::pod::PodDemand;
use crate::model::snapshot::{NodeRecord, PodRecord, Snapshot};
use crate::model::taints::{Effect, Taint};
use crate::sched::state::{ClusterState, NodeOrigin};

/// CAPI's taint on a Node until the Machine controller has synced its labels.
pub const CAPI_UNINITIALIZED_TAINT_KEY: &str = "node.cluster.x-k8s.io/uninitialized";
/// The node lifecycle controller's taint on a Node that is not Ready.
pub const NOT_READY_TAINT_KEY: &str = "node.kubernetes.io/not-ready";

/// Something that happens at a time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
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
pub struct Mode {
    /// Nodes register with Karpenter's `karpenter.sh/unregistered` taint (Karpenter setups);
    /// Cluster Autoscaler setups use a bootstrap template without it.
    pub karpenter: bool,
    /// A deleted NodeClaim stays (deleting) until its Machine is gone, as Karpenter's
    /// termination finalizer keeps it; ours creates claims without that finalizer.
    pub claim_finalizer: bool,
}

/// A Machine the simulation created, and what it bills.
#[derive(Debug, Clone)]
struct MachineInfo {
    md: String,
    flavor: Option<Flavor>,
}

/// The simulated clusters (workload and management in one).
pub struct SimCluster {
    /// Everything the autoscaler sees.
    pub snap: Snapshot,
    /// The current time.
    pub now: Ms,
    /// What `now == 0` is as a timestamp.
    pub base: Timestamp,
    /// Latencies.
    pub lat: Latencies,
    /// Mode.
    pub mode: Mode,
    /// Measurements.
    pub rec: Recorder,
    /// When a pod last arrived on or left each node (Karpenter's `lastPodEventTime`).
    pub last_pod_event: HashMap<String, Ms>,
    /// Things that did not go as the simulation expected (unsupported writes, ...).
    pub warnings: BTreeSet<String>,
    /// The NodeClaim the last `Create` made (its name is generated), for the status write after it.
    pub last_created_claim: Option<String>,
    trace: Trace,
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
pub fn suffix(n: u64) -> String {
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
    pub fn new(scenario: &Snapshot, trace: &Trace, mode: Mode) -> Result<SimCluster, Error> {
        let base: Timestamp = scenario
            .now
            .unwrap_or(Timestamp::from_second(1_796_032_800).unwrap_or(Timestamp::UNIX_EPOCH));
        let mut snap = scenario.clone();
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
                        .map(|p| p.demand.clone());
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

    /// `now` as a timestamp.
    pub fn ts(&self, at: Ms) -> Timestamp {
        Timestamp::from_millisecond(self.base.as_millisecond() + at).unwrap_or(self.base)
    }

    /// Queues an event.
    pub fn push(&mut self, at: Ms, event: Event) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, event)));
    }

    /// The time of the next event, if any.
    pub fn next_time(&self) -> Option<Ms> {
        self.queue.peek().map(|Reverse((t, _, _))| *t)
    }

    /// The next event due at or before `t`.
    pub fn pop_due(&mut self, t: Ms) -> Option<Event> {
        if self.next_time()? > t {
            return None;
        }
        self.queue.pop().map(|Reverse((_, _, e))| e)
    }

    /// Asks for the autoscaler to be woken at `at` (replacing any earlier request), or never.
    pub fn set_wake(&mut self, at: Option<Ms>) {
        let at = at.map(|t| t.max(self.now));
        if at != self.wake_at {
            self.wake_at = at;
            if let Some(t) = at {
                self.push(t, Event::Wake);
            }
        }
    }

    /// Whether a popped `Wake` is the current request (stale ones are ignored).
    pub fn take_wake(&mut self) -> bool {
        if self.wake_at == Some(self.now) {
            self.wake_at = None;
            true
        } else {
            false
        }
    }

    /// Notes that the cluster changed (a watch event for the autoscaler).
    pub fn touch(&mut self) {
        self.changed = true;
        self.sched_dirty = true;
    }

    /// Whether the cluster changed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Records a warning once.
    pub fn warn(&mut self, text: String) {
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
    pub fn creating(&self, md_key: &str) -> i64 {
        self.creating.get(md_key).copied().unwrap_or(0)
    }

    /// Whether a Node is being deleted (its Machine is gone, a finalizer holds it).
    pub fn node_deleting(&self, node: &str) -> bool {
        self.deleting_nodes.contains(node)
    }

    /// Whether nothing the autoscaler made is left.
    pub fn nothing_left(&self) -> bool {
        self.snap.nodeclaims.is_empty()
            && self.rec.machines() == 0
            && self
                .snap
                .all_members()
                .iter()
                .all(|md| current_replicas(md) == 0)
    }

    /// Handles one event.
    pub fn handle(&mut self, event: Event) {
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

    fn trace_step(&mut self, i: usize) {
        let Some(step) = self.trace.steps.get(i).copied() else {
            return;
        };
        let first_wave = Some(step.at) == self.first_step_at;
        let w = step.workload;
        let current: Vec<String> = self.workload_pods(w);
        match step.change {
            Change::Scale(n) => {
                let have = current.len() as i64;
                if n > have {
                    for _ in have..n {
                        self.create_pod(w, first_wave);
                    }
                } else if n < have {
                    // A ReplicaSet removes unscheduled pods first, then the newest.
                    let mut victims: Vec<(bool, Timestamp, String)> = self
                        .snap
                        .pods
                        .iter()
                        .filter(|p| self.workload_of.get(&p.demand.key()) == Some(&w))
                        .map(|p| {
                            (
                                p.node_name.is_some(),
                                p.created.unwrap_or(self.base),
                                p.demand.key(),
                            )
                        })
                        .collect();
                    victims.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
                    for (_, _, k) in victims.into_iter().take((have - n) as usize) {
                        self.remove_pod(&k);
                    }
                }
            }
            Change::Add { count, lifetime } => {
                let created: Vec<String> =
                    (0..count).map(|_| self.create_pod(w, first_wave)).collect();
                if let Some(l) = lifetime {
                    self.push(self.now + l, Event::Expire(created));
                }
            }
        }
        // Steps at the same time as the first belong to the first wave.
        let next_in_first_wave = self
            .trace
            .steps
            .get(i + 1)
            .is_some_and(|s| Some(s.at) == self.first_step_at);
        if first_wave && !next_in_first_wave {
            self.rec.close_first_wave();
        }
        self.check_load();
    }

    fn check_load(&mut self) {
        let gone = self.workload_of.is_empty();
        self.rec.load(self.now, gone);
    }

    fn workload_pods(&self, w: usize) -> Vec<String> {
        self.workload_of
            .iter()
            .filter(|(_, x)| **x == w)
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn create_pod(&mut self, w: usize, first_wave: bool) -> String {
        let n = self.next_pod[w];
        self.next_pod[w] += 1;
        let name = format!("{}-{}", self.trace.workloads[w].name, n);
        let mut demand = self.templates[w].clone();
        demand.name = name;
        demand.namespace = self.trace.workloads[w].namespace.clone();
        let k = demand.key();
        self.snap.pods.push(PodRecord {
            demand,
            node_name: None,
            marked_unschedulable: false,
            nominated: false,
            daemon: false,
            terminal: false,
            terminating: false,
            mirror: false,
            uid: Some(format!("sim-{}", k)),
            gated: false,
            owner: Some(format!("ReplicaSet/{}", self.trace.workloads[w].name)),
            created: Some(self.ts(self.now)),
            annotations: Labels::new(),
            priority_class: None,
            phase: Some("Pending".to_string()),
            containers: Vec::new(),
            started: None,
        });
        self.workload_of.insert(k.clone(), w);
        self.rec.pod_created(self.now, &k, first_wave);
        self.touch();
        k
    }

    /// Deletes a pod (its workload scaled down or its lifetime ended).
    pub fn remove_pod(&mut self, pod: &str) {
        let Some(i) = self.snap.pods.iter().position(|p| p.demand.key() == pod) else {
            return;
        };
        let p = self.snap.pods.remove(i);
        if let Some(node) = p.node_name {
            self.last_pod_event.insert(node, self.now);
        }
        self.workload_of.remove(pod);
        self.touch();
    }

    /// Evicts a pod: it goes, and its workload creates a replacement (a standalone pod is
    /// simply pending again; a DaemonSet pod just goes).
    pub fn evict_pod(&mut self, pod: &str) {
        let Some(p) = self.snap.pods.iter_mut().find(|p| p.demand.key() == pod) else {
            return;
        };
        if p.daemon {
            // The DaemonSet controller does not put it back on a node tainted
            // `karpenter.sh/disrupted:NoSchedule` (a pod tolerating that is never evicted), and a
            // DaemonSet pod is no pod event (core `nodeclaim/podevents`).
            self.snap.pods.retain(|p| p.demand.key() != pod);
            self.touch();
            return;
        }
        self.rec.evictions += 1;
        match self.workload_of.get(pod).copied() {
            Some(w) => {
                self.remove_pod(pod);
                self.create_pod(w, false);
            }
            None => {
                if let Some(node) = p.node_name.take() {
                    self.last_pod_event.insert(node, self.now);
                }
                p.phase = Some("Pending".to_string());
                p.marked_unschedulable = false;
                self.touch();
            }
        }
    }

    /// Brings a MachineDeployment's Machines to its replicas, as its MachineSet does.
    pub fn reconcile_machine_set(&mut self, md_key: &str) {
        let Some(md) = self
            .snap
            .machine_deployments
            .iter()
            .find(|m| m.key() == md_key)
        else {
            return;
        };
        let replicas = current_replicas(md);
        let live: Vec<&MachineRecord> = self
            .snap
            .machines
            .iter()
            .filter(|m| !m.deleting && m.deployment_key().as_deref() == Some(md_key))
            .collect();
        let creating = self.creating(md_key);
        let have = live.len() as i64;
        if replicas > have + creating {
            for _ in 0..(replicas - have - creating) {
                self.push(
                    self.now + self.lat.machine_create,
                    Event::CreateMachine(md_key.to_string()),
                );
            }
            self.creating.insert(md_key.to_string(), replicas - have);
        } else if replicas < have {
            // CAPI's deletion order: marked, then without a Node, then the newest.
            let mut victims: Vec<(bool, bool, Option<Timestamp>, String)> = live
                .iter()
                .map(|m| {
                    (
                        !m.marked_for_deletion,
                        m.node_name.is_some(),
                        m.created,
                        m.key(),
                    )
                })
                .collect();
            victims.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
            let doomed: Vec<String> = victims
                .into_iter()
                .take((have - replicas) as usize)
                .map(|v| v.3)
                .collect();
            for m in doomed {
                self.delete_machine(&m);
            }
        }
    }

    fn create_machine(&mut self, md_key: &str) {
        let left = self.creating(md_key) - 1;
        self.creating.insert(md_key.to_string(), left.max(0));
        let Some(md) = self
            .snap
            .machine_deployments
            .iter()
            .find(|m| m.key() == md_key)
        else {
            return;
        };
        let replicas = current_replicas(md);
        let live = self
            .snap
            .machines
            .iter()
            .filter(|m| !m.deleting && m.deployment_key().as_deref() == Some(md_key))
            .count() as i64;
        if live >= replicas {
            return;
        }
        let (ns, md_name) = (
            md.object.namespace().to_string(),
            md.object.name().to_string(),
        );
        let api_version = md.object.api_version.clone();
        self.names += 1;
        let name = format!("{md_name}-{}", suffix(self.names));
        let mut labels = Labels::new();
        labels.insert(
            crate::model::machine::DEPLOYMENT_NAME_LABEL.to_string(),
            md_name.clone(),
        );
        let flavor = self.flavor_of(md_key);
        let machine = MachineRecord {
            namespace: ns.clone(),
            name: name.clone(),
            api_version,
            labels,
            created: Some(self.ts(self.now)),
            deleting: false,
            deployment: Some(md_name),
            claimed: false,
            marked_for_deletion: false,
            provider_id: None,
            node_name: None,
            phase: Some("Provisioning".to_string()),
            conditions: Vec::new(),
            failure: None,
            machine_set: None,
        };
        let mk = machine.key();
        self.snap.machines.push(machine);
        let boot = self.lat.boot_of(
            flavor
                .as_ref()
                .map(|f| f.instance_type.as_str())
                .unwrap_or_default(),
        );
        self.rec.machine(
            self.now,
            &mk,
            Some(flavor.as_ref().map(|f| f.price).unwrap_or(Price(0))),
        );
        self.machines.insert(
            mk.clone(),
            MachineInfo {
                md: md_key.to_string(),
                flavor,
            },
        );
        self.push(self.now + boot.provider_id, Event::ProviderId(mk.clone()));
        self.push(self.now + boot.node_join, Event::NodeJoin(mk.clone()));
        self.push(self.now + boot.node_ready, Event::NodeReady(mk));
        self.touch();
    }

    fn node_join(&mut self, mk: &str) {
        let Some(info) = self.machines.get(mk).cloned() else {
            return;
        };
        let Some(m) = self
            .snap
            .machines
            .iter_mut()
            .find(|x| x.key() == mk && !x.deleting)
        else {
            return;
        };
        let Some(flavor) = info.flavor else {
            self.warnings.insert(format!(
                "Machine {mk}: its MachineDeployment offers no valid flavor, so no Node joins"
            ));
            return;
        };
        let name = m.name.clone();
        let provider_id = format!("sim:///{name}");
        m.provider_id = Some(provider_id.clone());
        m.node_name = Some(name.clone());
        m.phase = Some("Running".to_string());
        let mut labels = flavor.labels.clone();
        labels.insert(keys::HOSTNAME.to_string(), name.clone());
        labels
            .entry(keys::OS.to_string())
            .or_insert_with(|| "linux".to_string());
        let mut taints = self.bootstrap.get(&info.md).cloned().unwrap_or_default();
        taints.push(Taint::new(NOT_READY_TAINT_KEY, "", Effect::NoSchedule));
        taints.push(Taint::new(
            CAPI_UNINITIALIZED_TAINT_KEY,
            "",
            Effect::NoSchedule,
        ));
        let node = NodeRecord {
            name: name.clone(),
            finalizers: Vec::new(),
            labels,
            annotations: Labels::new(),
            taints,
            allocatable: flavor.capacity.clone(),
            capacity: flavor.capacity.clone(),
            provider_id: Some(provider_id),
            ready: Some(false),
            unschedulable: false,
            created: Some(self.ts(self.now)),
            deleting: false,
        };
        // The DaemonSet controller places its pods on every node they select.
        let daemons: Vec<PodRecord> = self
            .snap
            .daemonsets
            .iter()
            .filter(|d| d.pod.node_requirement_unmet(&node.labels).is_none())
            .map(|d| {
                let mut demand = d.pod.clone();
                demand.name = format!(
                    "{}-{}",
                    d.name.rsplit('/').next().unwrap_or("ds"),
                    suffix(self.names + 7)
                );
                PodRecord {
                    demand,
                    node_name: Some(name.clone()),
                    marked_unschedulable: false,
                    nominated: false,
                    daemon: true,
                    terminal: false,
                    terminating: false,
                    mirror: false,
                    uid: None,
                    gated: false,
                    owner: Some(format!("DaemonSet/{}", d.name)),
                    created: Some(self.ts(self.now)),
                    annotations: Labels::new(),
                    priority_class: None,
                    phase: Some("Running".to_string()),
                    containers: Vec::new(),
                    started: Some(self.ts(self.now)),
                }
            })
            .collect();
        self.snap.pods.extend(daemons);
        self.snap.nodes.push(node);
        if !self.mode.karpenter {
            self.rec.registered(self.now);
        }
        self.push(
            self.now + self.lat.capi_uninitialized,
            Event::CapiInit(name),
        );
        self.touch();
    }

    /// Starts deleting a Machine: CAPI cordons and drains its Node, then deletes the server.
    pub fn delete_machine(&mut self, mk: &str) {
        let Some(m) = self.snap.machines.iter_mut().find(|x| x.key() == mk) else {
            return;
        };
        if m.deleting {
            return;
        }
        m.deleting = true;
        m.phase = Some("Deleting".to_string());
        let node = m.node_name.clone();
        if let Some(node) = node {
            if let Some(n) = self.snap.nodes.iter_mut().find(|n| n.name == node) {
                n.unschedulable = true;
            }
            self.drain(&node);
        }
        self.push(
            self.now + self.lat.machine_delete,
            Event::MachineGone(mk.to_string()),
        );
        self.touch();
    }

    /// Evicts every non-DaemonSet pod of a node.
    pub fn drain(&mut self, node: &str) {
        let pods: Vec<String> = self
            .snap
            .pods
            .iter()
            .filter(|p| !p.daemon && p.node_name.as_deref() == Some(node))
            .map(|p| p.demand.key())
            .collect();
        for p in pods {
            self.evict_pod(&p);
        }
    }

    fn machine_gone(&mut self, mk: &str) {
        let Some(i) = self.snap.machines.iter().position(|x| x.key() == mk) else {
            return;
        };
        let m = self.snap.machines.remove(i);
        self.machines.remove(mk);
        self.rec.machine(self.now, mk, None);
        if let Some(node) = &m.node_name {
            self.drain(node);
            let holds = self
                .snap
                .nodes
                .iter()
                .any(|n| &n.name == node && !n.finalizers.is_empty());
            if holds && !self.mode.claim_finalizer {
                self.deleting_nodes.insert(node.clone());
                if let Some(n) = self.snap.nodes.iter_mut().find(|n| &n.name == node) {
                    n.ready = Some(false);
                }
            } else {
                self.remove_node(node);
            }
        }
        if self.mode.claim_finalizer {
            // Karpenter's termination finalizer lets the claim go once the instance is gone.
            self.snap.nodeclaims.retain(|c| {
                !(c.deleting
                    && (c.machine.as_deref() == Some(mk)
                        || (c.provider_id.is_some() && c.provider_id == m.provider_id)))
            });
        }
        if let Some(md) = m.deployment_key() {
            self.reconcile_machine_set(&md);
        }
        self.touch();
    }

    /// Removes a Node object and its DaemonSet pods.
    pub fn remove_node(&mut self, node: &str) {
        self.snap.nodes.retain(|n| n.name != node);
        self.snap
            .pods
            .retain(|p| !(p.daemon && p.node_name.as_deref() == Some(node)));
        self.deleting_nodes.remove(node);
        self.last_pod_event.remove(node);
        self.touch();
    }

    /// Runs the kube-scheduler stand-in if anything changed since it last ran.
    pub fn schedule(&mut self) {
        if !std::mem::take(&mut self.sched_dirty) {
            return;
        }
        let pending: Vec<usize> = (0..self.snap.pods.len())
            .filter(|&i| self.snap.pods[i].is_pending())
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut order = pending;
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&self.snap.pods[a], &self.snap.pods[b]);
            pa.created
                .cmp(&pb.created)
                .then_with(|| pa.demand.key().cmp(&pb.demand.key()))
        });
        let mut binds: Vec<(usize, String)> = Vec::new();
        let mut unschedulable: Vec<usize> = Vec::new();
        {
            let snap = &self.snap;
            let mut state = ClusterState::new(snap, &[]);
            let mut alloc: Vec<(i64, i64)> = Vec::new();
            for pn in state.nodes.iter_mut() {
                if let NodeOrigin::Existing(ni) = pn.origin {
                    let n = &snap.nodes[ni];
                    // The scheduler sees the real taints (the strategies' view forgives the
                    // ones an initializing node is about to lose).
                    pn.taints = n.taints.clone();
                    pn.cordoned = n.unschedulable
                        || n.ready != Some(true)
                        || self.deleting_nodes.contains(&n.name);
                    alloc.push((
                        n.allocatable.cpu_millis.max(1),
                        n.allocatable.memory_bytes.max(1),
                    ));
                } else {
                    alloc.push((1, 1));
                }
            }
            for p in order {
                let best = (0..state.nodes.len())
                    .filter(|&n| state.fits(p, n).is_ok())
                    .max_by_key(|&n| {
                        let f = &state.nodes[n].free;
                        let (cpu, mem) = alloc[n];
                        let score = i128::from(f.cpu_millis) * 1_000_000 / i128::from(cpu)
                            + i128::from(f.memory_bytes) * 1_000_000 / i128::from(mem);
                        (score, Reverse(n))
                    });
                match best {
                    Some(n) => {
                        state.place(p, n);
                        binds.push((p, state.nodes[n].name.clone()));
                    }
                    None => unschedulable.push(p),
                }
            }
        }
        let start = self.lat.pod_start;
        for (p, node) in binds {
            let pod = &mut self.snap.pods[p];
            pod.node_name = Some(node.clone());
            pod.marked_unschedulable = false;
            let k = pod.demand.key();
            self.last_pod_event.insert(node.clone(), self.now);
            self.push(self.now + start, Event::PodRunning(k, node));
            self.changed = true;
        }
        for p in unschedulable {
            if !self.snap.pods[p].marked_unschedulable {
                self.snap.pods[p].marked_unschedulable = true;
                self.changed = true;
            }
        }
    }
}

/// The taints a MachineDeployment's Nodes register with: its KubeadmConfigTemplate's
/// `joinConfiguration.nodeRegistration.taints` when the scenario has it, else Karpenter's
/// `karpenter.sh/unregistered:NoExecute` (what `init` generates and the seed report needed).
fn bootstrap_taints(
    snap: &Snapshot,
    md: &crate::model::snapshot::MachineDeploymentRecord,
) -> Vec<Taint> {
    let name = md
        .object
        .value
        .pointer("/spec/template/spec/bootstrap/configRef/name")
        .and_then(|v| v.as_str());
    let template = name.and_then(|n| {
        snap.objects_of("KubeadmConfigTemplate")
            .find(|o| o.name() == n && o.namespace() == md.object.namespace())
    });
    match template {
        Some(t) => t
            .typed::<Vec<k8s_openapi::api::core::v1::Taint>>(
                "/spec/template/spec/joinConfiguration/nodeRegistration/taints",
                "spec.template.spec.joinConfiguration.nodeRegistration.taints",
            )
            .ok()
            .flatten()
            .unwrap_or_default()
            .iter()
            .filter_map(|t| Taint::from_k8s(t).ok())
            .collect(),
        None => vec![Taint::new(UNREGISTERED_TAINT_KEY, "", Effect::NoExecute)],
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
        .map(|p| p.demand)
        .ok_or_else(|| Error::Input {
            path: format!("trace {trace}"),
            problem: format!("workload {name}: no pod template"),
        })
}

/// Machines per MachineDeployment key, for the peers' views.
pub fn machines_by_md(snap: &Snapshot) -> BTreeMap<String, Vec<&MachineRecord>> {
    let mut out: BTreeMap<String, Vec<&MachineRecord>> = BTreeMap::new();
    for m in &snap.machines {
        if let Some(d) = m.deployment_key() {
            out.entry(d).or_default().push(m);
        }
    }
    out
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
