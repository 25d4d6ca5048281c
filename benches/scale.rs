//! Scale benchmarks (a bench binary, `cargo bench --bench scale`): wall time, peak memory and
//! distance to the lower bound of the strategies on Karpenter's scheduling-benchmark shape
//! (1k/5k/20k pods, 400 types x 3 zones); one controller plan over 10,000 pending pods, 1,000
//! nodes and 100 MachineDeployments, and one over 5,000 nodes (30,000 bound pods, 1,000 pending,
//! 500 MachineDeployments, consolidation on: the safety checks at that size); and the plugin binary end to end (`run --once --dry-run`,
//! default `simulate` at 10k pods). Each case runs in its own process so its peak memory is its
//! own. Karpenter's full benchmark mix (spread, affinity, anti-affinity) runs too. Numbers go
//! to the README, never into assertions.

// A bench binary is a main: each case function prints its own report line (stdout is the
// report), and an input that does not parse is a broken bench. The cases are spread over the
// file's functions, so the allowance is the file's, not main's alone.
#![allow(clippy::print_stdout, clippy::expect_used)]

use std::fmt::Write as _;
use std::time::Instant;

use karpenter_capi::controller::{Config, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::sched::strategy::StrategyName;
use karpenter_capi::sched::strategy::by_name;
use karpenter_capi_testkit::rng::Lcg;

/// Karpenter's benchmark catalog: `fake-it-<i>` with cpu i+1, memory 2(i+1) GiB, pods 10(i+1),
/// in 3 zones; price 0.1 per vCPU + 0.1 per GiB. Kube-reserved (100m, 10Mi) as a DaemonSet.
fn catalog(types: usize) -> String {
    let mut y = String::new();
    y.push_str("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}\n      requirements: []\n  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}\n");
    y.push_str("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kube-reserved, namespace: kube-system}\nspec:\n  selector: {matchLabels: {app: r}}\n  template:\n    metadata: {labels: {app: r}}\n    spec:\n      tolerations: [{operator: Exists}]\n      containers: [{name: r, resources: {requests: {cpu: 100m, memory: 10Mi}}}]\n");
    for i in 0..types {
        let cpu = i + 1;
        let mem = 2 * (i + 1);
        let price = format!("{:.1}", 0.1 * cpu as f64 + 0.1 * mem as f64);
        for zone in ["zone-a", "zone-b", "zone-c"] {
            let _ = write!(
                y,
                "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: fake-it-{i}-{zone}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {mem}Gi\n    capacity.cluster-autoscaler.kubernetes.io/maxPods: '{}'\n    capacity.cluster-autoscaler.kubernetes.io/price: '{price}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-{i},topology.kubernetes.io/zone={zone},kubernetes.io/arch=amd64\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n",
                10 * (i + 1)
            );
        }
    }
    y
}

/// Karpenter's scheduling-benchmark pods (upstream scheduling_benchmark_test.go): cpu from
/// {100m, 250m, 500m, 1, 1.5}, memory from {100Mi .. 4Gi}; a fifth with required hostname
/// anti-affinity on the label they share (`app: nginx`, one per node), the rest generic with a
/// random `my-label`. (Topology spread and zone affinity pods are left out: spread is not
/// modelled by the optimizer, and both go through the checked greedy.)
fn pods(n: usize, rng: &mut Lcg) -> String {
    let mut y = String::new();
    for i in 0..n {
        let cpu = rng.pick(&[100, 250, 500, 1000, 1500]);
        let mem = rng.pick(&[100, 256, 512, 1024, 2048, 4096]);
        let (labels, affinity) = if i % 5 == 0 {
            (
                "{app: nginx}".to_string(),
                "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: nginx}}\n        topologyKey: kubernetes.io/hostname".to_string(),
            )
        } else {
            let v = rng.pick(&["a", "b", "c", "d", "e", "f", "g"]);
            (format!("{{my-label: {v}}}"), String::new())
        };
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {labels}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}}}]{affinity}\n"
        );
    }
    y
}

/// Karpenter's full benchmark mix (`scheduling_benchmark_test.go`, `makeDiversePods`): a fifth
/// each of generic pods, zonal spread (maxSkew 1), hostname spread (maxSkew 1), zonal
/// self-affinity and hostname anti-affinity (all `app: nginx` pods repel each other); labels and
/// selectors drawn from 7 values, as upstream.
fn diverse_pods(n: usize, rng: &mut Lcg) -> String {
    const VALUES: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];
    let mut y = String::new();
    let fifth = n / 5;
    for i in 0..n {
        let cpu = rng.pick(&[100, 250, 500, 1000, 1500]);
        let mem = rng.pick(&[100, 256, 512, 1024, 2048, 4096]);
        let kind = if i < 5 * fifth { i / fifth.max(1) } else { 0 };
        let (labels, extra) = match kind {
            1 | 2 => {
                let key = if kind == 1 {
                    "topology.kubernetes.io/zone"
                } else {
                    "kubernetes.io/hostname"
                };
                (
                    format!("{{my-label: {}}}", rng.pick(&VALUES)),
                    format!(
                        "\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: {key}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{my-label: {}}}}}}}",
                        rng.pick(&VALUES)
                    ),
                )
            }
            3 => {
                let v = rng.pick(&VALUES);
                (
                    format!("{{my-affininity: {v}}}"),
                    format!(
                        "\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{my-affininity: {v}}}}}\n        topologyKey: topology.kubernetes.io/zone"
                    ),
                )
            }
            4 => (
                "{app: nginx}".to_string(),
                "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: nginx}}\n        topologyKey: kubernetes.io/hostname".to_string(),
            ),
            _ => (format!("{{my-label: {}}}", rng.pick(&VALUES)), String::new()),
        };
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {labels}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}}}]{extra}\n"
        );
    }
    y
}

/// The full mix through one strategy: load, solve, and a check that the plan breaks no spread.
fn full_mix(pod_count: usize, strategy: StrategyName) {
    let mut rng = Lcg(42);
    let text = format!("{}{}", catalog(400), diverse_pods(pod_count, &mut rng));
    let t = Instant::now();
    let snap = snapshot_from_sources(&[Source {
        name: "bench".into(),
        text,
    }])
    .expect("bench input parses");
    let load = t.elapsed();
    let pending: Vec<usize> = (0..snap.pods.len()).collect();
    let t = Instant::now();
    let p = by_name(strategy).plan(&snap, &pending);
    let solve = t.elapsed();
    let vcpu: i64 = p
        .new_nodes
        .iter()
        .map(|n| n.offering.flavor.capacity.cpu_millis)
        .sum();
    let requested: i64 = snap.pods.iter().map(|p| p.demand.requests.cpu_millis).sum();
    println!(
        "full mix {pod_count:>6} pods x 1200 MDs  {:<15} load {:>7.3}s  solve {:>7.3}s  nodes {:>5}  vCPU {:>6} (pods request {:>6})  price/h {:>9}  unschedulable {:>4}  relaxed {:>3}  peak RSS {:>6.1} MiB",
        strategy.as_str(),
        load.as_secs_f64(),
        solve.as_secs_f64(),
        p.new_nodes.len(),
        vcpu / 1000,
        requested / 1000,
        p.price().to_string(),
        p.unschedulable.len(),
        p.relaxed.len(),
        peak_rss_mib()
    );
}

/// Peak resident memory of this process so far (VmHWM), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.to_string())
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

fn scheduling(pod_count: usize, strategy: StrategyName) {
    let mut rng = Lcg(42);
    let text = format!("{}{}", catalog(400), pods(pod_count, &mut rng));
    let t = Instant::now();
    let snap = snapshot_from_sources(&[Source {
        name: "bench".into(),
        text,
    }])
    .expect("bench input parses");
    let load = t.elapsed();
    let pending: Vec<usize> = (0..snap.pods.len()).collect();
    let t = Instant::now();
    let p = by_name(strategy).plan(&snap, &pending);
    let solve = t.elapsed();
    let bound = p
        .lower_bound
        .map(|b| {
            format!(
                "  bound {}  +{:.2}%",
                b,
                100.0 * (p.price().0 - b.0) as f64 / b.0.max(1) as f64
            )
        })
        .unwrap_or_default();
    println!(
        "schedule {pod_count:>6} pods x 1200 MDs  {:<15} load {:>6.3}s  solve {:>6.3}s  nodes {:>5}  price/h {:>9}{bound}  unschedulable {}  peak RSS {:>6.1} MiB",
        strategy.as_str(),
        load.as_secs_f64(),
        solve.as_secs_f64(),
        p.new_nodes.len(),
        p.price().to_string(),
        p.unschedulable.len(),
        peak_rss_mib()
    );
    if std::env::var_os("BENCH_DETAIL").is_some() {
        let counts: Vec<String> = p
            .node_counts()
            .iter()
            .map(|(t, c)| format!("{c}x{t}"))
            .collect();
        println!("   {}", counts.join(" "));
    }
}

/// A running cluster: `mds` member MachineDeployments (16 vCPU, 64 GiB, 0.50/h, three zones),
/// `nodes` nodes with a NodeClaim and Machine each, `bound` pods bound to them (never
/// overcommitted) and `pending` pending pods.
fn cluster(mds: usize, nodes: usize, bound: usize, pending: usize, consolidate: bool) -> String {
    let mut rng = Lcg(7);
    let mut y = catalog(0);
    if !consolidate {
        y = y.replace("consolidateAfter: 0s", "consolidateAfter: Never");
    }
    y.push_str("---\napiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata: {name: default}\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True'}]}\n");
    let mut per_md = vec![0usize; mds];
    for n in 0..nodes {
        per_md[n % mds] += 1;
    }
    for (md, count) in per_md.iter().enumerate() {
        let _ = write!(
            y,
            "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: md-{md}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '16'\n    capacity.cluster-autoscaler.kubernetes.io/memory: 64Gi\n    capacity.cluster-autoscaler.kubernetes.io/price: '0.50'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=t{md},topology.kubernetes.io/zone=z{}\nspec: {{clusterName: c, replicas: {count}, template: {{spec: {{clusterName: c}}}}}}\n",
            md % 3
        );
    }
    for n in 0..nodes {
        let md = n % mds;
        let pid = format!("fake:///node-{n}");
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{n}, labels: {{karpenter.sh/nodepool: default, karpenter.cluster.x-k8s.io/clusterapinodeclass: default, node.kubernetes.io/instance-type: t{md}}}}}\nspec: {{providerID: '{pid}'}}\nstatus: {{capacity: {{cpu: '16', memory: 64Gi, pods: '110'}}, allocatable: {{cpu: '16', memory: 64Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: default-{n}, labels: {{karpenter.sh/nodepool: default, karpenter.cluster.x-k8s.io/clusterapinodeclass: default, node.kubernetes.io/instance-type: t{md}}}, annotations: {{cluster.x-k8s.io/machine: capi/m-{n}, karpenter-capi/machine-deployment: capi/md-{md}}}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{providerID: '{pid}', nodeName: node-{n}, conditions: [{{type: Launched, status: 'True'}}, {{type: Registered, status: 'True'}}, {{type: Initialized, status: 'True'}}]}}\n---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {{name: m-{n}, namespace: capi, labels: {{cluster.x-k8s.io/deployment-name: md-{md}, node.cluster.x-k8s.io/karpenter-member: ''}}}}\nspec: {{clusterName: c, providerID: '{pid}'}}\n"
        );
    }
    // Bound pods go round-robin to a node with room, as a scheduler would.
    let mut used = vec![0i64; nodes];
    for i in 0..bound + pending {
        let cpu = rng.pick(&[100, 250, 500, 1000]);
        let mem = rng.pick(&[128, 256, 512, 1024]);
        let node = (i < bound)
            .then(|| {
                (0..nodes)
                    .map(|k| (i + k) % nodes)
                    .find(|&n| used[n] + cpu <= 15_800)
            })
            .flatten();
        if let Some(n) = node {
            used[n] += cpu;
        }
        let bind = node
            .map(|n| format!(", nodeName: node-{n}"))
            .unwrap_or_default();
        let status = if node.is_some() {
            "status: {phase: Running}".to_string()
        } else {
            "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}".to_string()
        };
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}}}]{bind}}}\n{status}\n"
        );
    }
    y
}

const NOW: &str = "2026-11-30T10:00:00Z";

fn controller_plan(
    label: &str,
    mds: usize,
    nodes: usize,
    bound: usize,
    pending: usize,
    consolidate: bool,
) {
    let y = cluster(mds, nodes, bound, pending, consolidate);
    let t = Instant::now();
    let snap = snapshot_from_sources(&[Source {
        name: "bench".into(),
        text: y,
    }])
    .expect("bench input parses");
    let load = t.elapsed();
    let now: jiff::Timestamp = NOW.parse().expect("valid time");
    let runs = 3;
    let t = Instant::now();
    let mut actions = 0;
    for _ in 0..runs {
        actions = plan(&snap, now, &Config::default()).actions.len();
    }
    let per = t.elapsed().as_secs_f64() / f64::from(runs);
    // Karpenter's gauges each pass: computed from the snapshot, recorded and scraped once.
    let metrics = karpenter_capi::kube::metrics::Metrics::new();
    let t = Instant::now();
    let mut scraped = 0;
    for _ in 0..runs {
        let g = karpenter_capi::controller::karpenter_metrics::gauges(&snap, now);
        metrics.karpenter.set_gauges(&g);
        scraped = metrics.render().len();
    }
    let gauges = t.elapsed().as_secs_f64() / f64::from(runs);
    println!(
        "controller plan {pending} pending / {bound} bound / {nodes} nodes / {mds} MDs, {label:<13} load {:>6.3}s  plan {:>7.1} ms  actions {actions}  karpenter gauges+scrape {:>6.1} ms ({} KiB)  peak RSS {:>6.1} MiB",
        load.as_secs_f64(),
        per * 1000.0,
        gauges * 1000.0,
        scraped / 1024,
        peak_rss_mib()
    );
}

/// `simulate --timeline` at a day's scale: `pods` pods arriving over 24 h on a diurnal curve
/// (each living 2 h), replayed for all three strategies on the seed catalog without its limit.
/// `BENCH_TIMELINE_JSON=PATH` also writes the timelines and our controller's action log there
/// (to compare a speed change's replays before and after).
fn timeline_day(pods: usize) {
    let scenario =
        karpenter_capi::sim::trace::DEFAULT_SCENARIO.replace("  limits:\n    cpu: '20'\n", "");
    let snap = snapshot_from_sources(&[Source {
        name: "bench".into(),
        text: scenario,
    }])
    .expect("bench scenario parses");
    let trace = karpenter_capi::sim::trace::parse(
        "bench",
        &format!("name: diurnal-24h\nworkloads:\n- {{name: web, cpu: 500m, memory: 512Mi}}\ngenerate:\n- diurnal: {{workload: web, pods: {pods}, lifetime: 2h, over: 24h, every: 5m}}\n"),
    )
    .expect("bench trace parses");
    let horizon = trace.steps.last().map_or(0, |s| s.at) + trace.settle;
    let bound = karpenter_capi::sim::bound::lower_bound(&snap, &trace, horizon)
        .expect("bound")
        .unwrap_or(0.0);
    let total = Instant::now();
    let mut timelines = Vec::new();
    let mut log = Vec::new();
    for s in StrategyName::ALL {
        let t = Instant::now();
        let r = if s == StrategyName::Cost {
            let (r, actions) =
                karpenter_capi::sim::engine::replay_ours_logged(&snap, &trace, Config::default())
                    .expect("replay runs");
            log = actions;
            r
        } else {
            karpenter_capi::sim::replay(&snap, &trace, s, &mut |_, _| {}).expect("replay runs")
        };
        println!(
            "timeline 24h diurnal, {pods} pods  {:<15} replay {:>7.3}s  events {:>6}  passes {:>5}  evictions {:>5}  max nodes {:>3}  node-hours {:>7.1}  cost {:>7.2} ({:.2}x bound {bound:.2})  p95 to Running {:>5.0}s  peak RSS {:>6.1} MiB",
            s.as_str(),
            t.elapsed().as_secs_f64(),
            r.events,
            r.passes,
            r.evictions,
            r.max_nodes,
            r.node_hours,
            r.cost,
            if bound > 0.0 { r.cost / bound } else { 0.0 },
            r.time_to_running.p95.unwrap_or(0.0),
            peak_rss_mib()
        );
        timelines.push(r);
    }
    println!(
        "timeline 24h diurnal, {pods} pods  all three        replay {:>7.3}s",
        total.elapsed().as_secs_f64()
    );
    if let Some(path) = std::env::var_os("BENCH_TIMELINE_JSON") {
        let text = serde_json::to_string_pretty(&(&timelines, &log)).expect("timelines serialize");
        std::fs::write(path, text).expect("timeline JSON written");
    }
}

/// Runs the plugin binary on a file and reports its wall time.
fn end_to_end(label: &str, text: &str, args: &[&str]) {
    let path =
        std::env::temp_dir().join(format!("karpenter-capi-bench-{}.yaml", std::process::id()));
    std::fs::write(&path, text).expect("temp file writable");
    let exe = env!("CARGO_BIN_EXE_kubectl-karpenter_capi");
    let t = Instant::now();
    let out = std::process::Command::new(exe)
        .args(args)
        .arg("-f")
        .arg(&path)
        .output()
        .expect("binary runs");
    let wall = t.elapsed();
    // `BENCH_KEEP=1` keeps the input (to profile the binary on it); its path is printed.
    if std::env::var_os("BENCH_KEEP").is_some() {
        println!("input kept: {}", path.display());
    } else {
        let _ = std::fs::remove_file(&path);
    }
    println!(
        "end to end: {label:<58} wall {:>6.3}s  exit {}  stdout {} bytes",
        wall.as_secs_f64(),
        out.status.code().unwrap_or(-1),
        out.stdout.len()
    );
}

/// One case in its own process, so its peak memory is its own.
fn child(args: &[&str]) {
    let exe = std::env::current_exe().expect("own path");
    let status = std::process::Command::new(exe)
        .arg("--case")
        .args(args)
        .status()
        .expect("bench child runs");
    if !status.success() {
        println!("case {args:?} failed: {status}");
    }
}

fn main() {
    // `BENCH_TRACE=1`: the optimizer's own trace (rounds, pool sizes, phase times) on stderr.
    if std::env::var_os("BENCH_TRACE").is_some() {
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        let rest: Vec<&str> = args[i + 1..].iter().map(String::as_str).collect();
        match rest.as_slice() {
            ["schedule", n, s] => {
                let strategy = StrategyName::ALL
                    .into_iter()
                    .find(|x| x.as_str() == *s)
                    .expect("a strategy name");
                scheduling(n.parse().expect("a count"), strategy);
            }
            ["mix", n] => full_mix(n.parse().expect("a count"), StrategyName::Cost),
            ["controller", "sized", m, n, b, p] => controller_plan(
                "sized",
                m.parse().expect("a count"),
                n.parse().expect("a count"),
                b.parse().expect("a count"),
                p.parse().expect("a count"),
                true,
            ),
            ["controller", label] => match *label {
                "busy" => controller_plan("busy", 100, 1000, 10_000, 10_000, true),
                "underutilized" => controller_plan("underutilized", 100, 1000, 3_000, 0, true),
                "5k-nodes" => controller_plan("5k nodes", 500, 5000, 30_000, 1_000, true),
                _ => controller_plan("no disruption", 100, 1000, 10_000, 10_000, false),
            },
            ["timeline"] => timeline_day(3000),
            ["timeline", n] => timeline_day(n.parse().expect("a count")),
            // The cluster dump alone, on stdout (to profile `run --once --dry-run -f` on it).
            ["dump", m, n, b, p] => print!(
                "{}",
                cluster(
                    m.parse().expect("a count"),
                    n.parse().expect("a count"),
                    b.parse().expect("a count"),
                    p.parse().expect("a count"),
                    true,
                )
            ),
            ["e2e", "run", m, n, b, p] => end_to_end(
                &format!("run --once --dry-run, {p} pending / {n} nodes / {m} MDs"),
                &cluster(
                    m.parse().expect("a count"),
                    n.parse().expect("a count"),
                    b.parse().expect("a count"),
                    p.parse().expect("a count"),
                    true,
                ),
                &["run", "--once", "--dry-run", "--now", NOW, "-o", "json"],
            ),
            ["e2e", "run"] => end_to_end_run(),
            ["e2e", "simulate"] => end_to_end_simulate(),
            _ => println!("unknown case {rest:?}"),
        }
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "--timeline") {
        timeline_day(3000);
        return;
    }
    let sizes: &[usize] = if quick {
        &[1_000]
    } else {
        &[1_000, 5_000, 20_000]
    };
    for &n in sizes {
        child(&["schedule", &n.to_string(), "cost"]);
    }
    for &n in sizes {
        child(&["mix", &n.to_string()]);
    }
    if !quick {
        child(&["schedule", "20000", "least-waste"]);
        child(&["schedule", "20000", "karpenter-capi"]);
    }
    child(&["controller", "no-disruption"]);
    child(&["controller", "busy"]);
    child(&["controller", "underutilized"]);
    if !quick {
        child(&["controller", "5k-nodes"]);
    }
    end_to_end_run();
    end_to_end_simulate();
    child(&["timeline"]);
}

/// The whole `run --once --dry-run -f DUMP` command over the busy controller cluster.
fn end_to_end_run() {
    end_to_end(
        "run --once --dry-run, 10k pending / 1k nodes / 100 MDs",
        &cluster(100, 1000, 10_000, 10_000, true),
        &["run", "--once", "--dry-run", "--now", NOW, "-o", "json"],
    );
}

/// The default `simulate` (all three strategies) at 10,000 pods of Karpenter's shape.
fn end_to_end_simulate() {
    let mut rng = Lcg(42);
    end_to_end(
        "simulate (all three strategies), 10k pods x 1200 MDs",
        &format!("{}{}", catalog(400), pods(10_000, &mut rng)),
        &["simulate"],
    );
}
