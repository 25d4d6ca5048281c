//! In-flight and initializing nodes, after core v1.14's scheduling `suite_test.go`
//! (`In-Flight Nodes`, `No Pre-Binding`; core `state/statenode.go`), in our own inputs through
//! `cost`: a launched claim takes what fits it and nothing else, its pool's startup taints do
//! not keep pods off while it initializes, and a node whose device plugin has not reported yet
//! counts with its flavor's devices.

use super::{flavor, nodes, plan, pod, snap};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// A NodeClaim of the pool launched for MachineDeployment `capi/{md}` with these labels
/// (flow-map body), extra spec fields and extra status fields.
fn claim(name: &str, md: &str, labels: &str, spec: &str, status: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: {md}{labels}}}\n  annotations: {{karpenter-capi/machine-deployment: capi/{md}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []{spec}}}\nstatus: {{conditions: [{{type: Launched, status: 'True'}}]{status}}}\n"
    )
}

/// A small amd64 flavor and a big arm64 one.
fn flavors() -> String {
    flavor("amd2", 2, "0.05", "kubernetes.io/arch=amd64")
        + &flavor("arm8", 8, "0.20", "kubernetes.io/arch=arm64")
}

/// A claim in flight for `amd2` takes a pod that fits it; a pod too big for it (S-SCHED-116) or
/// selecting another arch (S-SCHED-117) gets a new node; a startup taint of the claim does not
/// keep a pod off it while it initializes (S-SCHED-124).
#[test]
fn an_in_flight_claim_takes_only_what_fits_it() {
    let flight = claim("default-a", "amd2", ", kubernetes.io/arch: amd64", "", "");
    let s = snap(&(POOL.to_string() + &flavors() + &flight + &pod("fits", "app: x", "1", "", "")));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(p.new_nodes.is_empty(), "{strategy:?}");
        assert_eq!(p.on_in_flight.len(), 1, "{strategy:?}");
    }
    let text = POOL.to_string()
        + &flavors()
        + &flight
        + &pod("big", "app: x", "3", "", "")
        + &pod(
            "arm",
            "app: arm",
            "500m",
            "",
            "\n  nodeSelector: {kubernetes.io/arch: arm64}",
        );
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.on_in_flight.is_empty());
    assert_eq!(
        nodes(&s, &p),
        [(
            "arm8".to_string(),
            vec!["arm".to_string(), "big".to_string()]
        )]
    );
    let startup = claim(
        "default-a",
        "amd2",
        ", kubernetes.io/arch: amd64",
        ", startupTaints: [{key: example.com/agent, effect: NoSchedule}], taints: []",
        "",
    );
    let s = snap(&(POOL.to_string() + &flavors() + &startup + &pod("fits", "app: x", "1", "", "")));
    let p = plan(&s, Cost);
    assert!(p.new_nodes.is_empty());
    assert_eq!(p.on_in_flight.len(), 1);
}

/// A registered GPU node whose claim is not initialized yet reports 0 GPUs (its device plugin
/// is not up): it still counts with its flavor's GPU, so the GPU pod waits for it instead of
/// buying a second GPU node (S-SCHED-140). Once the claim is initialized, the Node's report
/// is believed.
#[test]
fn an_initializing_node_reporting_no_gpu_counts_with_its_flavors() {
    let gpu = flavor("g1", 4, "1.00", "").replace(
        "    capacity.cluster-autoscaler.kubernetes.io/price",
        "    capacity.cluster-autoscaler.kubernetes.io/gpu-count: '1'\n    capacity.cluster-autoscaler.kubernetes.io/gpu-type: nvidia.com/gpu\n    capacity.cluster-autoscaler.kubernetes.io/price",
    );
    assert!(gpu.contains("gpu-count"));
    let node = "---\napiVersion: v1\nkind: Node\nmetadata: {name: g-node, labels: {kubernetes.io/hostname: g-node, karpenter.sh/registered: 'true', karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: g1}}\nspec: {providerID: 'test:///g'}\nstatus: {allocatable: {cpu: '4', memory: 16Gi, pods: '110', nvidia.com/gpu: '0'}, capacity: {cpu: '4', memory: 16Gi, pods: '110', nvidia.com/gpu: '0'}, conditions: [{type: Ready, status: 'True'}]}\n";
    let gpu_pod = pod("trainer", "app: t", "1", "", "").replace(
        "memory: 128Mi}",
        "memory: 128Mi, nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}",
    );
    assert!(gpu_pod.contains("limits"));
    for (initialized, new_nodes) in [(false, 0), (true, 1)] {
        let condition = if initialized {
            ", {type: Registered, status: 'True'}, {type: Initialized, status: 'True'}"
        } else {
            ", {type: Registered, status: 'True'}"
        };
        let c = claim(
            "default-g",
            "g1",
            "",
            "",
            ", providerID: 'test:///g', nodeName: g-node",
        )
        .replace("status: 'True'}]", &format!("status: 'True'}}{condition}]"));
        let s = snap(&(POOL.to_string() + &gpu + &c + node + &gpu_pod));
        let p = plan(&s, Cost);
        assert!(p.unschedulable.is_empty(), "initialized {initialized}");
        assert_eq!(p.new_nodes.len(), new_nodes, "initialized {initialized}");
    }
}
