//! `explain` as a user runs it: the seed scenario's pod (c3-4 rejected for cpu with the numbers,
//! c3-8 chosen by cost and least-waste, c3-16 by karpenter-capi, with prices), a stuck
//! NodeClaim's timeline and cause, and unknown names with suggestions (exit 2).

use crate::shared;

fn seed(name: &str) -> String {
    shared::fixture(&format!("scenarios/{name}"))
        .display()
        .to_string()
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/doctor/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn explain(args: &[&str]) -> (i32, String, String) {
    crate::common::cli::run("explain", args)
}

#[test]
fn seed_pod_tree_is_pinned() {
    let (code, stdout, stderr) = explain(&["pod", "default/big-0", "-f", &seed("seed-3cpu.yaml")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "Pod default/big-0  pending, requests 3 cpu, 256Mi memory
├─ Flavors
│  ├─ c3-4   does not fit  needs 3 cpu, c3-4 has 1900m allocatable
│  ├─ c3-8   fits          0.1000/h
│  └─ c3-16  fits          0.2000/h
└─ Strategies (batch of 1 pending pod(s))
   ├─ cost            c3-8   0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
   ├─ karpenter-capi  c3-16  0.2000/h (node shared by 1 pod(s); batch 0.2000/h)
   └─ least-waste     c3-8   0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
"
    );
}

#[test]
fn seed_pod_json_carries_reasons_as_data() {
    let (code, stdout, _) = explain(&[
        "pod",
        "big-0",
        "-n",
        "default",
        "-f",
        &seed("seed-3cpu.yaml"),
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["flavors"][0]["unfit"],
        serde_json::json!({"reason": "insufficient", "resource": "cpu", "need": 3000, "free": 1900})
    );
    assert_eq!(
        v["flavors"][0]["reason"],
        "needs 3 cpu, c3-4 has 1900m allocatable"
    );
    let choices: Vec<(String, String, f64)> = v["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["strategy"].as_str().unwrap().to_string(),
                s["instanceType"].as_str().unwrap().to_string(),
                s["pricePerHour"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        choices,
        vec![
            ("cost".to_string(), "c3-8".to_string(), 0.1),
            ("karpenter-capi".to_string(), "c3-16".to_string(), 0.2),
            ("least-waste".to_string(), "c3-8".to_string(), 0.1),
        ]
    );
}

#[test]
fn stuck_nodeclaim_tree_is_pinned() {
    let (code, stdout, _) = explain(&[
        "nodeclaim",
        "default-mrnnj",
        "-f",
        &fixture("unregistered-taint-missing-node.yaml"),
        "--now",
        "2026-11-30T10:03:00Z",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "NodeClaim default-mrnnj  NodePool default, c3-8, age 3m
├─ Timeline
│  ├─ Created     True         +0s     (2026-11-30T10:00:00Z)
│  ├─ Launched    True         +1m6s   (2026-11-30T10:01:06Z)
│  ├─ Registered  Unknown      AwaitingReconciliation: object is awaiting reconciliation
│  └─ Initialized Unknown      AwaitingReconciliation: object is awaiting reconciliation
├─ Machine capi-ovh/capi-ovh-karpenter-c3-8-7b9c4-x2k8p  phase -, providerID openstack:///9f0e5c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6, node capi-ovh-karpenter-c3-8-7b9c4-x2k8p
├─ Node capi-ovh-karpenter-c3-8-7b9c4-x2k8p  Ready=True, taints [node.cluster.x-k8s.io/uninitialized:NoSchedule]
└─ Cause: UnregisteredTaintMissing (error)
   ├─ node capi-ovh-karpenter-c3-8-7b9c4-x2k8p joined without karpenter.sh/unregistered:NoExecute (taints: [node.cluster.x-k8s.io/uninitialized:NoSchedule]): Karpenter v1.0-v1.2 never adopts it; later versions adopt it with a warning, after pods may already have landed (3m after creation)
   └─ fix: add {key: karpenter.sh/unregistered, effect: NoExecute} to spec.template.spec.joinConfiguration.nodeRegistration.taints of the KubeadmConfigTemplate of MachineDeployment capi-ovh/capi-ovh-karpenter-c3-8, then `kubectl delete nodeclaim default-mrnnj`
"
    );
}

#[test]
fn healthy_nodeclaim_json_has_the_timeline_with_durations() {
    let (code, stdout, _) = explain(&[
        "nodeclaim",
        "default-mrnnj",
        "-f",
        &fixture("healthy.yaml"),
        "--now",
        "2026-11-30T10:30:00Z",
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_saphyr::from_str(&stdout).unwrap();
    let after: Vec<&str> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["after"].as_str().unwrap())
        .collect();
    assert_eq!(after, vec!["0s", "1m6s", "1m14s", "2m21s"]);
    assert_eq!(v["finding"]["cause"], "NodeClaimInitialized");
    assert_eq!(
        v["machine"]["name"],
        "capi-ovh/capi-ovh-karpenter-c3-8-7b9c4-x2k8p"
    );
    assert_eq!(v["nodes"][0]["ready"], "True");
}

#[test]
fn unknown_names_suggest_close_ones_and_exit_2() {
    let (code, stdout, stderr) = explain(&["pod", "default/big-1", "-f", &seed("seed-3cpu.yaml")]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "error: no pod \"default/big-1\" in {}: did you mean default/big-0?\n",
            seed("seed-3cpu.yaml")
        )
    );
    let (code, _, stderr) = explain(&[
        "nodeclaim",
        "default-mrnjj",
        "-f",
        &fixture("healthy.yaml"),
        "--now",
        "2026-11-30T10:30:00Z",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: no NodeClaim \"default-mrnjj\" in {}: did you mean default-mrnnj?\n",
            fixture("healthy.yaml")
        )
    );
    let (code, _, stderr) = explain(&["nodeclaim", "zzz", "-f", &seed("seed-3cpu.yaml")]);
    assert_eq!(code, 2);
    assert!(stderr.ends_with(": 0 NodeClaim(s) there\n"), "{stderr}");
}

#[test]
fn unreadable_dump_exits_2() {
    let (code, _, stderr) = explain(&["pod", "x", "-f", "/nonexistent/dump.yaml"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: /nonexistent/dump.yaml: no such file or directory\n"
    );
}

#[test]
fn nodepool_limits_are_a_reason_with_numbers() {
    let (code, stdout, _) = explain(&[
        "pod",
        "default/big-7c9d8-abcde",
        "-f",
        &fixture("limits-exhausted.yaml"),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "Pod default/big-7c9d8-abcde  pending, requests 3 cpu, 256Mi memory
├─ Existing nodes
│  └─ capi-ovh-karpenter-c3-8-old  does not fit  needs 3 cpu, capi-ovh-karpenter-c3-8-old has 1 allocatable
├─ Flavors
│  └─ c3-8  does not fit  NodePool default limit cpu 4 reached (in use 4)
└─ Strategies (batch of 1 pending pod(s))
   ├─ cost            unschedulable
   │  └─ c3-8: NodePool default limit cpu 4 reached (in use 4)
   ├─ karpenter-capi  unschedulable
   │  └─ c3-8: NodePool default limit cpu 4 reached (in use 4)
   └─ least-waste     c3-8  0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
",
        "least-waste models Cluster Autoscaler, which knows no NodePool limits"
    );
}

#[test]
fn taints_and_node_requirements_are_reasons() {
    let md = |name: &str, extra: &str| {
        format!(
            "apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: {name}
  namespace: capi
  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}
  annotations:
    capacity.cluster-autoscaler.kubernetes.io/cpu: '8'
    capacity.cluster-autoscaler.kubernetes.io/memory: 32Gi
    capacity.cluster-autoscaler.kubernetes.io/labels: kubernetes.io/arch=amd64,node.kubernetes.io/instance-type={name}
    capacity.cluster-autoscaler.kubernetes.io/price: '0.5'
{extra}spec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}
"
        )
    };
    let scenario = format!(
        "{}---\n{}---
apiVersion: v1
kind: Pod
metadata: {{name: arm, namespace: default}}
spec:
  nodeSelector: {{kubernetes.io/arch: arm64}}
  containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]
",
        md(
            "gpu-1",
            "    capacity.cluster-autoscaler.kubernetes.io/taints: nvidia.com/gpu=true:NoSchedule\n"
        ),
        md("c3-32", "")
    );
    let dir = std::env::temp_dir().join(format!("kkc-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("taints.yaml");
    std::fs::write(&path, scenario).unwrap();
    let (code, stdout, stderr) = explain(&["pod", "arm", "-f", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let flavors: Vec<&str> = stdout.lines().skip(2).take(2).collect();
    assert_eq!(
        flavors,
        vec![
            "│  ├─ gpu-1  does not fit  taint nvidia.com/gpu=true:NoSchedule not tolerated",
            "│  └─ c3-32  does not fit  requires kubernetes.io/arch In [arm64], c3-32 has kubernetes.io/arch=amd64",
        ]
    );
    assert!(
        stdout.contains("   ├─ cost            unschedulable\n"),
        "{stdout}"
    );
}

/// Issue 14: `explain pod` on a dump names why a pod blocked by topology spread cannot go where
/// there is room, with the numbers (kube-scheduler's skew), per zone and per flavor.
#[test]
fn explain_names_the_spread_skew_with_numbers() {
    const ZONE: &str = "topology.kubernetes.io/zone";
    let flavor = |name: &str, zone: &str| {
        format!(
            "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: {name}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '4'\n    capacity.cluster-autoscaler.kubernetes.io/memory: 16Gi\n    capacity.cluster-autoscaler.kubernetes.io/price: '0.10'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type={name},{ZONE}={zone}\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n"
        )
    };
    let bound = |name: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: web}}}}\nspec:\n  nodeName: node-a\n  containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 128Mi}}}}}}]\nstatus: {{phase: Running}}\n"
        )
    };
    let mut world = flavor("m4-a", "a") + &flavor("m4-b", "b");
    world.push_str(&format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-a, labels: {{{ZONE}: a, kubernetes.io/hostname: node-a}}}}\nstatus: {{allocatable: {{cpu: 8000m, memory: 64Gi, pods: '110'}}, capacity: {{cpu: 8000m, memory: 64Gi, pods: '110'}}}}\n"
    ));
    world.push_str(&bound("web-0"));
    world.push_str(&bound("web-1"));
    world.push_str(&format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: web-2, namespace: default, labels: {{app: web}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 128Mi}}}}}}]\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n"
    ));
    let path =
        std::env::temp_dir().join(format!("karpenter-capi-spread-{}.yaml", std::process::id()));
    std::fs::write(&path, world).unwrap();
    let (code, stdout, stderr) = explain(&["pod", "default/web-2", "-f", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "Pod default/web-2  pending, requests 500m cpu, 128Mi memory
├─ Constraints (preferences are required until relaxed)
│  └─ topology spread: DoNotSchedule maxSkew 1 on topology.kubernetes.io/zone for app=web
├─ Existing nodes
│  └─ node-a  does not fit  zone a would have skew 3 > maxSkew 1 for app=web (3 matching pods there with this one, fewest in a domain 0)
├─ Flavors
│  ├─ m4-a  does not fit  zone a would have skew 3 > maxSkew 1 for app=web (3 matching pods there with this one, fewest in a domain 0)
│  └─ m4-b  fits          0.1000/h
└─ Strategies (batch of 1 pending pod(s))
   ├─ cost            m4-b  0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
   ├─ karpenter-capi  m4-b  0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
   └─ least-waste     m4-b  0.1000/h (node shared by 1 pod(s); batch 0.1000/h)
"
    );
}

/// The seed catalog without its limit, a full worker holding 5 pods (500m) created 5 minutes
/// before `--now` and 5 pending ones created just before it: arrivals are rising, so `cost`
/// sizes the node for the pods expected next and `explain` says why.
#[test]
fn explain_says_why_cost_bought_a_larger_flavor() {
    let mut y = karpenter_capi::sim::trace::DEFAULT_SCENARIO
        .replace("  limits:\n    cpu: '20'\n", "")
        .replace("replicas: 8", "replicas: 0");
    y.push_str("---\napiVersion: v1\nkind: Node\nmetadata: {name: worker}\nstatus: {capacity: {cpu: 2500m, memory: 8Gi, pods: '110'}, allocatable: {cpu: 2500m, memory: 8Gi, pods: '110'}}\n");
    let pod = |name: String, created: &str, bound: bool| {
        let node = if bound { "nodeName: worker, " } else { "" };
        let status = if bound {
            "\nstatus: {phase: Running}"
        } else {
            ""
        };
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, creationTimestamp: '{created}'}}\nspec: {{{node}containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}}}]}}{status}\n"
        )
    };
    for i in 0..5 {
        y.push_str(&pod(format!("recent-{i}"), "2026-12-02T10:05:00Z", true));
    }
    for i in 0..5 {
        y.push_str(&pod(format!("new-{i}"), "2026-12-02T10:09:58Z", false));
    }
    let dir = std::env::temp_dir().join(format!("kkc-explain-foresight-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rising.yaml");
    std::fs::write(&file, y).unwrap();
    let (code, stdout, stderr) = explain(&[
        "pod",
        "default/new-0",
        "-f",
        file.to_str().unwrap(),
        "--now",
        "2026-12-02T10:10:00Z",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{stderr}");
    let strategies = stdout
        .split("Strategies")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        strategies,
        " (batch of 5 pending pod(s))
   ├─ cost            c3-16  0.2000/h (node shared by 5 pod(s); batch 0.2000/h)
   │  └─ sized for 5 pending and ~10 expected pod(s) (as many arrived in the last 10m): 0.2000/h for 15 pod(s), 0.0133/h per pod, instead of 0.1000/h for 7, 0.0143/h per pod
   ├─ karpenter-capi  c3-16  0.2000/h (node shared by 5 pod(s); batch 0.2000/h)
   └─ least-waste     c3-4   0.0500/h (node shared by 3 pod(s); batch 0.1000/h)
"
    );
}
