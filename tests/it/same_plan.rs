//! Issue 24 rule 8, same input, same plan: the optimizer's and consolidation's budgets count
//! work, not time, so a large generated cluster (240 nodes of 15 flavors, 3,000 pending pods,
//! consolidation on) gets the same controller plan and the same `cost` plan every time, on an
//! idle machine and while other threads keep every core busy, and in debug and release builds
//! (the digests below are the same for both: `.ci/run` also runs
//! `cargo test --profile release-test --test it same_plan`, release semantics without LTO).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use karpenter_capi::controller::{Config, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::model::snapshot::Snapshot;
use karpenter_capi::sched::report::StrategyReport;
use karpenter_capi::sched::strategy::{StrategyName, by_name};
use karpenter_capi_testkit::rng::Lcg;

/// FNV-1a, 64 bits: a digest that no library or toolchain update can change.
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

const NODES: usize = 240;
const PENDING: usize = 3_000;
const NOW: &str = "2026-11-30T10:00:00Z";

/// 15 member MachineDeployments (cpu 2..32 at memory 2, 4 or 8 GiB per vCPU, prices with a
/// per-family discount, three zones), `NODES` nodes with a claim and Machine each, a few bound
/// pods per node (many nodes underutilized: consolidation candidates), and `PENDING` pending pods
/// of mixed sizes, a tenth of them one per node (hostname anti-affinity).
fn cluster() -> String {
    let mut rng = Lcg(24);
    let mut y = String::new();
    y.push_str("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}\n      requirements: []\n  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}\n");
    y.push_str("---\napiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata: {name: default}\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True'}]}\n");
    let mut flavors = Vec::new();
    for (family, per_cpu, discount) in [("c", 2, 0.95), ("m", 4, 1.0), ("r", 8, 0.9)] {
        for cpu in [2, 4, 8, 16, 32] {
            let mem = cpu * per_cpu;
            let price = (0.021 * cpu as f64 + 0.0047 * mem as f64) * discount;
            flavors.push((format!("{family}{cpu}"), cpu, mem, price));
        }
    }
    let mut per_md = vec![0usize; flavors.len()];
    for n in 0..NODES {
        per_md[n % flavors.len()] += 1;
    }
    for (md, (name, cpu, mem, price)) in flavors.iter().enumerate() {
        let _ = write!(
            y,
            "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: md-{name}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {mem}Gi\n    capacity.cluster-autoscaler.kubernetes.io/maxPods: '110'\n    capacity.cluster-autoscaler.kubernetes.io/price: '{price:.4}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type={name},topology.kubernetes.io/zone=z{}\nspec: {{clusterName: c, replicas: {}, template: {{spec: {{clusterName: c}}}}}}\n",
            md % 3,
            per_md[md]
        );
    }
    let mut room = Vec::new();
    for n in 0..NODES {
        let md = n % flavors.len();
        let (name, cpu, mem, _) = &flavors[md];
        let pid = format!("fake:///node-{n}");
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{n}, labels: {{karpenter.sh/nodepool: default, karpenter.cluster.x-k8s.io/clusterapinodeclass: default, node.kubernetes.io/instance-type: {name}, topology.kubernetes.io/zone: z{z}}}}}\nspec: {{providerID: '{pid}'}}\nstatus: {{capacity: {{cpu: '{cpu}', memory: {mem}Gi, pods: '110'}}, allocatable: {{cpu: '{cpu}', memory: {mem}Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: default-{n}, creationTimestamp: '2026-11-30T08:00:00Z', labels: {{karpenter.sh/nodepool: default, karpenter.cluster.x-k8s.io/clusterapinodeclass: default, node.kubernetes.io/instance-type: {name}, topology.kubernetes.io/zone: z{z}}}, annotations: {{cluster.x-k8s.io/machine: capi/m-{n}, karpenter-capi/machine-deployment: capi/md-{name}}}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{providerID: '{pid}', nodeName: node-{n}, conditions: [{{type: Launched, status: 'True'}}, {{type: Registered, status: 'True'}}, {{type: Initialized, status: 'True'}}]}}\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {{name: m-{n}, namespace: capi, labels: {{cluster.x-k8s.io/deployment-name: md-{name}, node.cluster.x-k8s.io/karpenter-member: ''}}}}\nspec: {{clusterName: c, providerID: '{pid}'}}\n",
            z = md % 3
        );
        room.push(cpu * 1000);
    }
    // Bound pods: one to five per node, never overcommitted.
    let mut i = 0;
    for (n, free) in room.iter_mut().enumerate() {
        for _ in 0..1 + rng.next() % 5 {
            let cpu = rng.pick(&[100, 250, 500]);
            if *free < cpu + 100 {
                continue;
            }
            *free -= cpu;
            let _ = write!(
                y,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: b{i}, namespace: default, labels: {{app: web}}, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}}]}}\nspec: {{nodeName: node-{n}, containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: 256Mi}}}}}}]}}\nstatus: {{phase: Running}}\n"
            );
            i += 1;
        }
    }
    for p in 0..PENDING {
        let cpu = rng.pick(&[250, 500, 1000, 2000, 4000]);
        let mem = rng.pick(&[128, 256, 512, 1024, 2048, 4096]);
        let (labels, affinity) = if p % 10 == 0 {
            let app = format!("db-{}", rng.next() % 4);
            (
                format!("{{app: {app}}}"),
                format!(
                    "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{app: {app}}}}}\n        topologyKey: kubernetes.io/hostname"
                ),
            )
        } else {
            (format!("{{team: t{}}}", rng.next() % 7), String::new())
        };
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: default, labels: {labels}, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u2, controller: true}}]}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}}}]{affinity}\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n"
        );
    }
    y
}

fn snapshot() -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "same-plan.yaml".into(),
        text: cluster(),
    }])
    .expect("the generated cluster parses")
}

/// The controller's plan and `cost`'s plan of the pending pods, as JSON.
fn plans(snap: &Snapshot) -> (String, String) {
    let now = NOW.parse().expect("valid time");
    let controller = plan(snap, now, &Config::default());
    assert!(!controller.cut_short, "the safety net was hit");
    let pending: Vec<usize> = (0..snap.pods.len())
        .filter(|&i| snap.pods[i].is_pending())
        .collect();
    let cost = by_name(StrategyName::Cost).plan(snap, &pending);
    assert!(!cost.cut_short, "the safety net was hit");
    (
        serde_json::to_string(&controller).expect("a plan serializes"),
        serde_json::to_string(&StrategyReport::from_placement(snap, &cost))
            .expect("a report serializes"),
    )
}

/// What the plans of [`cluster`] digest to, in every build on every machine.
const CONTROLLER_DIGEST: &str = "aac167fce9d20ead";
const COST_DIGEST: &str = "4f12ba1f6e32ad22";

/// Threads that keep every core busy until dropped.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<u64>>,
}

impl Load {
    fn start() -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let threads = (0..2 * cores)
            .map(|t| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    // Busy work, not a draw (the value is thrown away): no seeded generator needed.
                    let mut x = t as u64 + 1;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        }
                    }
                    x
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn same_plan_for_the_same_input_idle_and_loaded() {
    let snap = snapshot();
    assert_eq!(snap.nodes.len(), NODES);
    let (controller, cost) = plans(&snap);
    let report: serde_json::Value = serde_json::from_str(&cost).unwrap();
    assert!(
        report["totals"]["nodes"].as_u64().unwrap_or(0) > 50,
        "a large plan: {}",
        report["totals"]
    );
    eprintln!(
        "controller {} ({} bytes), cost {} ({} bytes, {})",
        digest(&controller),
        controller.len(),
        digest(&cost),
        cost.len(),
        report["totals"]
    );
    assert_eq!(digest(&controller), CONTROLLER_DIGEST);
    assert_eq!(digest(&cost), COST_DIGEST);
    // Again on the same snapshot, then with every core busy beside it.
    assert_eq!(
        plans(&snap),
        (controller.clone(), cost.clone()),
        "second run"
    );
    let load = Load::start();
    let loaded = plans(&snap);
    drop(load);
    assert!(loaded.0 == controller, "controller plan under load differs");
    assert!(loaded.1 == cost, "cost plan under load differs");
}
