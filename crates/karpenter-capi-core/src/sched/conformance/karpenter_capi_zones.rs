//! Rule 9: in `karpenter-capi` (core v1.5) a NodeClaim whose pods have no zonal constraint
//! keeps every zone, so a pod affine to them on the zone waits for them to be bound (a later
//! batch), as upstream's does. `cost` does the same, as core v1.14 (S-TOPO-080): its claims
//! name one MachineDeployment, but a node bought for the followers in a zone their target may
//! never reach would never run them.

use super::{flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

use crate::vocab::keys::ZONE;

fn zone_follower(extra: &str) -> String {
    pod(
        "follower",
        "app: follower",
        "1",
        "",
        &format!(
            "\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{app: leader}}}}\n        topologyKey: {ZONE}{extra}"
        ),
    )
}

#[test]
fn a_zone_affine_follower_waits_for_an_unconstrained_leaders_claim() {
    let catalog = flavor("c4-a", 4, "0.08", &format!("{ZONE}=a"))
        + &flavor("c4-b", 4, "0.08", &format!("{ZONE}=b"));
    // (what, the leader's spec, karpenter-capi leaves the follower pending)
    let cases = [
        ("unconstrained leader", String::new(), true),
        (
            "leader selecting zone b",
            format!("\n  nodeSelector: {{{ZONE}: b}}"),
            false,
        ),
        (
            "leader spread on the zone",
            format!(
                "\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: leader}}}}}}"
            ),
            false,
        ),
    ];
    for (what, leader_spec, waits) in cases {
        let text = catalog.clone()
            + &pod("leader", "app: leader", "2", "", &leader_spec)
            + &zone_follower("");
        let s = snap(&text);
        let p = plan(&s, KarpenterCapi);
        if waits {
            assert_eq!(
                unschedulable(&s, &p),
                vec!["follower".to_string()],
                "{what}"
            );
            assert_eq!(
                nodes(&s, &p),
                vec![("c4-a".to_string(), vec!["leader".to_string()])],
                "{what}"
            );
        } else {
            assert!(unschedulable(&s, &p).is_empty(), "{what}");
            assert_eq!(p.new_nodes.len(), 1, "{what}");
            assert_eq!(p.new_nodes[0].pods.len(), 2, "{what}");
        }
        let p = plan(&s, Cost);
        if waits {
            assert_eq!(unschedulable(&s, &p), ["follower"], "{what}: cost");
            assert_eq!(nodes(&s, &p).len(), 1, "{what}: cost");
            assert_eq!(nodes(&s, &p)[0].1, ["leader"], "{what}: cost");
            let reasons: Vec<String> = p.unschedulable[0]
                .1
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(
                reasons,
                [format!(
                    "every NodePool: pod affinity on {ZONE} waits for default/leader to be bound: its NodeClaim does not decide the {ZONE} before it launches"
                )],
                "{what}"
            );
        } else {
            assert!(unschedulable(&s, &p).is_empty(), "{what}: cost");
            assert_eq!(p.new_nodes.len(), 1, "{what}: cost");
        }
    }
}

/// Once the leader is bound to a node (the next batch), the follower goes to its zone, in
/// `cost` as in `karpenter-capi`.
#[test]
fn a_zone_affine_follower_follows_its_bound_leader() {
    let text = flavor("c4-a", 4, "0.08", &format!("{ZONE}=a"))
        + &flavor("c4-b", 4, "0.08", &format!("{ZONE}=b"))
        + &format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{{ZONE}: b, kubernetes.io/hostname: n1}}}}\nstatus: {{allocatable: {{cpu: '2', memory: 8Gi, pods: '110'}}, capacity: {{cpu: '2', memory: 8Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
        )
        + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: leader, namespace: default, labels: {app: leader}}\nspec:\n  nodeName: n1\n  containers: [{name: c, resources: {requests: {cpu: '2', memory: 128Mi}}}]\nstatus: {phase: Running}\n"
        + &zone_follower("");
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(unschedulable(&s, &p).is_empty(), "{strategy:?}");
        assert_eq!(
            nodes(&s, &p),
            [("c4-b".to_string(), vec!["follower".to_string()])],
            "{strategy:?}"
        );
    }
}
