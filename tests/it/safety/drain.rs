//! Rule 5 of issue 10: drain like Karpenter (eviction tiers, DaemonSet pods last).

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 5: drain like Karpenter.

/// A DaemonSet pod on `node-1` that does not tolerate the disrupted taint, with a priority class.
fn ds_pod(name: &str, node: usize, priority: Option<&str>) -> Value {
    let p = Pod::new("kube-system", name)
        .uid(&format!("uid-{name}"))
        .daemon_set(name, "d")
        .on(&format!("node-{node}"))
        .cpu("50m");
    match priority {
        Some(pc) => p.priority_class(pc).build(),
        None => p.build(),
    }
}

#[test]
fn evictions_go_tier_by_tier_and_skip_mirror_tolerating_and_terminating_pods() {
    // Core `terminator.go` `groupPodsByPriority`: non-critical, non-critical DaemonSet, critical,
    // critical DaemonSet; each tier only once the previous one is gone. cilium-1 (tolerates every
    // taint), the mirror pod and the tolerating pod are never evicted and never wait.
    let critical = Pod::new("kube-system", "dns")
        .uid("uid-dns")
        .on("node-1")
        .priority_class("system-cluster-critical");
    let mirror = Pod::new("kube-system", "etcd")
        .annotation("kubernetes.io/config.mirror", "x")
        .set(
            "/metadata/ownerReferences",
            json!([{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n", "controller": true}]),
        )
        .on("node-1")
        .priority_class("system-node-critical");
    let tolerant = Pod::new("default", "tolerant")
        .on("node-1")
        .toleration("karpenter.sh/disrupted");
    let base = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("busy", Some(2), "1")
        .add(critical)
        .add(mirror)
        .add(tolerant)
        .add(ds_pod("exporter", 1, None))
        .add(ds_pod("proxy", 1, Some("system-node-critical")));
    for reason in ["Expired", "Drifted", "Empty"] {
        // Tier 1 (non-critical) first: only web. The claim is deleted: termination drains.
        let w = deleted(
            tainted(base.clone().pod("web", Some(1), "500m"), "node-1", reason),
            "node-1",
        );
        let p = w.plan();
        assert_eq!(evictions(&p), vec!["evictPod Pod/default/web"], "{reason}");
        use karpenter_capi::controller::write::Write;
        let ev = p.actions.iter().find(|a| a.name() == "evictPod").unwrap();
        assert!(
            matches!(&ev.steps().writes[0], Write::Evict { uid: Some(u), .. } if u == "uid-web")
        );
        // web terminating: nothing of the next tier goes yet, and the node is not finished.
        let w = excluded(w, "node-1").with("Pod", "web", |p| {
            p["metadata"]["deletionTimestamp"] = json!(ago(1))
        });
        let p = w.plan();
        assert!(evictions(&p).is_empty(), "{reason} {:?}", lines(&p));
        assert!(!lines(&p).iter().any(|l| l.starts_with("markMachine")));
        // web gone: the non-critical DaemonSet pod (tier 2) ...
        let w = w.without("web");
        let p = w.plan();
        assert_eq!(
            evictions(&p),
            vec!["evictPod Pod/kube-system/exporter"],
            "{reason}"
        );
        assert!(!lines(&p).iter().any(|l| l.starts_with("markMachine")));
        // ... then the critical pod (tier 3) ...
        let w = w.without("exporter");
        let p = w.plan();
        assert_eq!(
            evictions(&p),
            vec!["evictPod Pod/kube-system/dns"],
            "{reason}"
        );
        // ... then the critical DaemonSet pod (tier 4), still before the Machine is marked ...
        let w = w.without("dns");
        let p = w.plan();
        assert_eq!(
            lines(&p),
            vec!["evictPod Pod/kube-system/proxy"],
            "{reason}"
        );
        // ... and only then the Machine goes (mirror, tolerating and cilium pods stay).
        let p = w.without("proxy").plan();
        assert_eq!(
            lines(&p),
            vec![
                "markMachineForDeletion Machine/capi-ovh/m-1",
                "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
            ],
            "{reason}"
        );
    }
}

#[test]
fn an_empty_node_drains_its_daemonset_pods_before_its_machine_goes() {
    // Empty (only DaemonSet pods): the command starts with the taint; the claim's deletion, the
    // evictions, the Machine mark and the scale-down follow (pending).
    let ds = |w: World| {
        w.add(ds_pod("exporter", 1, None))
            .add(ds_pod("proxy", 1, Some("system-node-critical")))
    };
    let p = ds(idle(1)).plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    let pending: Vec<&str> = p.pending.iter().map(|a| a.name()).collect();
    assert_eq!(
        pending,
        vec![
            "deleteNodeClaim",
            "evictPod",
            "evictPod",
            "markMachineForDeletion",
            "scaleMachineDeployment"
        ]
    );
    // Validated: the claim is deleted; termination drains it, tier by tier, then the Machine.
    assert_eq!(
        lines(&ds(one_empty(1)).plan()),
        vec!["deleteNodeClaim NodeClaim/c-1"]
    );
    let w = deleted(ds(one_empty(1)), "node-1");
    assert_eq!(
        lines(&w.plan()),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "evictPod Pod/kube-system/exporter"
        ]
    );
    let w = excluded(w, "node-1");
    let w = w.without("exporter");
    assert_eq!(lines(&w.plan()), vec!["evictPod Pod/kube-system/proxy"]);
    assert_eq!(
        lines(&w.without("proxy").plan()),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // Only DaemonSet pods that tolerate the taint (cilium): the claim and the Machine go in the
    // pass that validates the command.
    assert_eq!(
        lines(&one_empty(1).plan()),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
}

#[test]
fn a_deleted_claim_drains_its_daemonset_pods_before_its_machine_is_marked() {
    // `kubectl delete nodeclaim` (forceful): same tiers, DaemonSet pods included.
    let w = deleted(
        idle(1).add(ds_pod("proxy", 1, Some("system-node-critical"))),
        "node-1",
    );
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1",
            "evictPod Pod/kube-system/proxy"
        ]
    );
    // Drained, but tainted only now: the Machine waits the minimum drain time (core
    // MinDrainTime), so a pod bound before the taint was seen is drained too.
    let p = w.clone().without("proxy").plan();
    assert_eq!(
        lines(&p),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1"
        ]
    );
    let p = tainted(w.without("proxy"), "node-1", "").plan();
    assert!(
        lines(&p).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(!lines(&p).iter().any(|l| l.starts_with("evictPod")));
}
