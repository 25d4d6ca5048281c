//! Initialized and initializing standing nodes, after core v1.14's scheduling `suite_test.go`
//! (`In-Flight Nodes › Taints`, `In-Flight Nodes › Daemonsets`, the initialized-first cases of
//! `In-Flight Nodes` and `Existing Nodes`), in our own inputs through every strategy: a node whose
//! claim is still initializing takes pods despite its not-ready taints, an initialized node is
//! tried before nodes still coming up, and room stays reserved on existing nodes for the
//! DaemonSet pods that have not bound yet.

use super::{ALL, daemonset, flavor, plan, pod, snap};
use crate::sched::strategy::StrategyName::{self, Cost, KarpenterCapi};
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// A Ready Node `name` of `cpu` cores of flavor `c4` in zone z1, registered and labelled
/// initialized, with provider ID `test:///{name}` and these extra spec fields.
fn node(name: &str, cpu: u32, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, {ZONE}: z1, node.kubernetes.io/instance-type: c4, karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true'}}}}\nspec: {{providerID: 'test:///{name}'{spec}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, capacity: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
    )
}

/// The NodeClaim of node `name` (launched for `capi/c4`), registered, and initialized when
/// `initialized`; without a node (`name` None) a claim `claim-{n}` in flight.
fn claim(name: &str, with_node: bool, initialized: bool) -> String {
    let mut conditions = String::from("{type: Launched, status: 'True'}");
    let mut status = String::new();
    if with_node {
        conditions.push_str(", {type: Registered, status: 'True'}");
        status = format!("providerID: 'test:///{name}', nodeName: {name}, ");
    }
    if initialized {
        conditions.push_str(", {type: Initialized, status: 'True'}");
    }
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: claim-{name}\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c4, {ZONE}: z1}}\n  annotations: {{karpenter-capi/machine-deployment: capi/c4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{{status}conditions: [{conditions}]}}\n"
    )
}

/// The flavor of every node here: 4 cores in z1.
fn c4() -> String {
    flavor("c4", 4, "0.10", &format!("{ZONE}=z1"))
}

/// The names of the standing nodes a plan put pods on (existing and in flight), sorted.
fn standing(s: &crate::model::snapshot::Snapshot, strategy: StrategyName) -> Vec<String> {
    let p = plan(s, strategy);
    assert!(p.unschedulable.is_empty(), "{strategy:?}");
    assert!(p.new_nodes.is_empty(), "{strategy:?}: {:?}", p.new_nodes);
    let mut out: Vec<String> = p
        .on_existing
        .iter()
        .chain(&p.on_in_flight)
        .map(|(_, n)| n.clone())
        .collect();
    out.sort();
    out
}

/// A Node already labelled initialized, carrying not-ready and unreachable NoSchedule taints
/// and the cloud provider's uninitialized one, whose claim is registered but not initialized
/// yet: it is still coming up, those taints are about to go, and the pod that tolerates none
/// of them goes onto it instead of a second node (S-SCHED-126). Once its claim is initialized,
/// the same taints keep the pod off and a new node is bought (as S-SCHED-122).
#[test]
fn not_ready_taints_of_a_node_whose_claim_is_initializing_are_not_held_against_pods() {
    let taints = ", taints: [{key: node.kubernetes.io/not-ready, effect: NoSchedule}, {key: node.kubernetes.io/unreachable, effect: NoSchedule}, {key: node.cloudprovider.kubernetes.io/uninitialized, value: 'true', effect: NoSchedule}]";
    let text = |initialized: bool| {
        POOL.to_string()
            + &c4()
            + &node("n1", 4, taints)
            + &claim("n1", true, initialized)
            + &pod("p", "app: p", "10m", "", "")
    };
    let s = snap(&text(false));
    for strategy in ALL {
        assert_eq!(standing(&s, strategy), ["n1"], "{strategy:?}");
    }
    let s = snap(&text(true));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(p.on_existing.is_empty(), "{strategy:?}");
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}");
    }
}

/// Twenty registered nodes whose claims are still initializing and one initialized node listed
/// among them (13th): the pod goes to the initialized one, in every strategy (S-SCHED-136).
/// Twenty claims in flight listed before the one initialized node: the same (S-SCHED-132).
#[test]
fn an_initialized_node_is_tried_before_nodes_still_coming_up() {
    let mut text = POOL.to_string() + &c4();
    for i in 0..20 {
        let name = format!("n{i:02}");
        text.push_str(&node(&name, 4, ""));
        text.push_str(&claim(&name, true, i == 13));
    }
    let s = snap(&(text + &pod("p", "app: p", "1", "", "")));
    for strategy in ALL {
        assert_eq!(standing(&s, strategy), ["n13"], "{strategy:?}");
    }
    let mut text = POOL.to_string() + &c4();
    for i in 0..20 {
        text.push_str(&claim(&format!("f{i:02}"), false, false));
    }
    text.push_str(&node("ready", 4, ""));
    text.push_str(&claim("ready", true, true));
    let s = snap(&(text + &pod("p", "app: p", "1", "", "")));
    for strategy in ALL {
        assert_eq!(standing(&s, strategy), ["ready"], "{strategy:?}");
    }
}

/// A DaemonSet of 1 core runs on the 4-core node n1, whose claim is initialized. While its pod
/// has not bound, its core stays reserved: a 3.5-core pod gets a new node, a 2.5-core pod takes
/// n1 (S-SCHED-127). Bound at 1 core, the reservation is spent and the node has 3 cores free:
/// the same. Bound at 2 cores (more than the DaemonSet's template asks), the node has 2 free
/// and nothing is reserved beyond it: the 2.5-core pod gets a new node, a 2-core one takes n1.
#[test]
fn room_stays_reserved_on_existing_nodes_for_daemonset_pods_not_bound_yet() {
    let agent = |cpu: &str| {
        pod("agent-n1", "app: agent", cpu, "", "\n  nodeName: n1")
            .replace(
                "namespace: default,",
                "namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, controller: true}],",
            )
            .replace(
                "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}",
                "status: {phase: Running}",
            )
    };
    assert!(agent("1").contains("DaemonSet") && agent("1").contains("Running"));
    for (bound, cpu, on_n1) in [
        (None, "3500m", false),
        (None, "2500m", true),
        (Some("1"), "3500m", false),
        (Some("1"), "2500m", true),
        (Some("2"), "2500m", false),
        (Some("2"), "2", true),
    ] {
        let text = POOL.to_string()
            + &c4()
            + &flavor("c8", 8, "0.20", &format!("{ZONE}=z1"))
            + &daemonset("agent", "1", "", "")
            + &node("n1", 4, "")
            + &claim("n1", true, true)
            + &bound.map(agent).unwrap_or_default()
            + &pod("p", "app: p", cpu, "", "");
        let s = snap(&text);
        for strategy in ALL {
            let p = plan(&s, strategy);
            let case = format!("{strategy:?}, DaemonSet pod bound at {bound:?}, pod of {cpu}");
            assert!(p.unschedulable.is_empty(), "{case}");
            assert_eq!(p.on_existing.len(), usize::from(on_n1), "{case}");
            assert_eq!(p.new_nodes.len(), usize::from(!on_n1), "{case}");
        }
    }
}
