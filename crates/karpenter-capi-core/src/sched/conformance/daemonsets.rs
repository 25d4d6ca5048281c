//! Rule 3: a DaemonSet counts on a flavor when it tolerates its hard taints and its node
//! selector and one required node-affinity term match; its requests then reserve room (a
//! flavor too small for it and the pod is ruled out) and its host ports are taken. `cost`
//! decides per flavor (core v1.14), `karpenter-capi` per NodePool (core v1.5
//! `getDaemonOverhead`).

use super::{daemonset, flavor, nodes, plan, pod, port, single, snap, unschedulable};
use crate::sched::Unfit;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};
use karpenter_capi_testkit::Edit;

fn one(instance: &str, pod: &str) -> (String, Vec<String>) {
    (instance.to_string(), vec![pod.to_string()])
}

/// A 3-vCPU DaemonSet runs on every node: no 2-vCPU node can hold it, so the pod's node is a
/// c4 (1 vCPU left) or, for a pod of 1500m, a c8.
#[test]
fn a_daemonset_bigger_than_a_flavor_rules_the_flavor_out() {
    let catalog =
        flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "") + &flavor("c8", 8, "0.14", "");
    let ds = daemonset(
        "agent",
        "3",
        "",
        "\n      tolerations: [{operator: Exists}]",
    );
    for (cpu, want) in [("500m", "c4"), ("1", "c4"), ("1500m", "c8")] {
        let s = snap(&(catalog.clone() + &ds + &pod("p", "app: p", cpu, "", "")));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(single(&s, &p), one(want, "p"), "{cpu}, {strategy:?}");
            assert_eq!(
                p.new_nodes[0].offering.overhead.cpu_millis, 3000,
                "{cpu}, {strategy:?}"
            );
        }
    }
    // Nothing holds a pod of 6 vCPU beside it: c8 has 5 left, c2 none, and says so.
    let s = snap(&(catalog.clone() + &ds + &pod("p", "app: p", "6", "", "")));
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), vec!["p".to_string()]);
    let reasons: Vec<String> = p.unschedulable[0]
        .1
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        reasons,
        vec![
            "c2: needs 6 cpu, c2 has none allocatable (1 over-committed, by its DaemonSets or bound pods)",
            "c4: needs 6 cpu, c4 has 1 allocatable",
            "c8: needs 6 cpu, c8 has 5 allocatable",
        ]
    );
    // A DaemonSet bigger than every flavor leaves even a small pod pending (P-PROV-033).
    let huge = daemonset(
        "agent",
        "10",
        "",
        "\n      tolerations: [{operator: Exists}]",
    );
    let s = snap(&(catalog + &huge + &pod("p", "app: p", "100m", "", "")));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(p.new_nodes.is_empty(), "{strategy:?}");
        assert_eq!(unschedulable(&s, &p), vec!["p".to_string()], "{strategy:?}");
    }
}

/// Per flavor in `cost`: the 3-vCPU DaemonSet runs only where its selector, one of its
/// node-affinity terms and its tolerations let it; there the cheap 2-vCPU flavor is out, and
/// the pod goes to the cheapest flavor the DaemonSet leaves alone.
#[test]
fn cost_counts_a_daemonset_where_its_selector_affinity_and_tolerations_admit_it() {
    let pod_1 = pod(
        "p",
        "app: p",
        "1",
        "",
        "\n  tolerations: [{operator: Exists}]",
    );
    let cases = [
        (
            "nodeSelector",
            "\n      nodeSelector: {disk: ssd}",
            flavor("c2-ssd", 2, "0.04", "disk=ssd"),
        ),
        (
            "second node-affinity term",
            "\n      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}, {matchExpressions: [{key: disk, operator: In, values: [nvme]}]}]}}}",
            flavor("c2-nvme", 2, "0.04", "disk=nvme"),
        ),
        (
            "tolerated NoSchedule taint",
            "\n      tolerations: [{key: dedicated, operator: Exists}]",
            flavor("c2-infra", 2, "0.04", "").edit(
                "  annotations:\n",
                "  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/taints: dedicated=infra:NoSchedule\n",
            ),
        ),
        (
            "PreferNoSchedule taint, not tolerated",
            "",
            flavor("c2-soft", 2, "0.04", "").edit(
                "  annotations:\n",
                "  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/taints: spot=true:PreferNoSchedule\n",
            ),
        ),
    ];
    for (what, ds_spec, cheap) in cases {
        // The plain c2 is where the DaemonSet does not run (no label, a NoSchedule taint it
        // only tolerates with the key `dedicated`), except in the PreferNoSchedule case, where
        // it runs everywhere and the c4 is next.
        let plain = if what.starts_with("PreferNoSchedule") {
            flavor("c4", 4, "0.08", "")
        } else {
            flavor("c2", 2, "0.05", "").edit(
                "  annotations:\n",
                "  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/taints: other=x:NoExecute\n",
            )
        };
        let want = if what.starts_with("PreferNoSchedule") {
            "c4"
        } else {
            "c2"
        };
        let text = cheap + &plain + &daemonset("agent", "3", "", ds_spec) + &pod_1;
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert_eq!(single(&s, &p), one(want, "p"), "{what}");
    }
}

/// DaemonSet host ports are taken on every new node it runs on: a pod binding the same port
/// goes where the DaemonSet does not run, or nowhere.
#[test]
fn daemonset_host_ports_are_taken_on_new_nodes() {
    let catalog = flavor("c2-mon", 2, "0.04", "monitoring=on") + &flavor("c2", 2, "0.05", "");
    let exporter = daemonset(
        "exporter",
        "100m",
        &format!(", ports: [{}]", port(9100, None, None)),
        "\n      nodeSelector: {monitoring: 'on'}",
    );
    // One pod, and a batch the optimizer packs.
    for count in [1, 16] {
        let mut text = catalog.clone() + &exporter;
        for i in 0..count {
            text += &pod(
                &format!("p-{i}"),
                "app: p",
                "1500m",
                &format!(", ports: [{}]", port(9100, None, Some("10.0.0.1"))),
                "",
            );
        }
        let s = snap(&text);
        let p = plan(&s, Cost);
        let got = nodes(&s, &p);
        assert_eq!(got.len(), count, "{count}: {got:?}");
        assert!(got.iter().all(|(i, _)| i == "c2"), "{count}: {got:?}");
    }
    // A pod on another port still takes the cheaper flavor.
    let s = snap(
        &(catalog.clone()
            + &exporter
            + &pod(
                "q",
                "app: q",
                "1500m",
                &format!(", ports: [{}]", port(9101, None, None)),
                "",
            )),
    );
    assert_eq!(single(&s, &plan(&s, Cost)), one("c2-mon", "q"));
    // Without a selector it runs everywhere: the pod fits nowhere, for every strategy that
    // knows NodePools, and the reason names the port.
    let everywhere = daemonset(
        "exporter",
        "100m",
        &format!(", ports: [{}]", port(9100, None, None)),
        "",
    );
    let s = snap(
        &(catalog
            + &everywhere
            + &pod(
                "p",
                "app: p",
                "500m",
                &format!(", ports: [{}]", port(9100, Some("TCP"), None)),
                "",
            )),
    );
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(unschedulable(&s, &p), vec!["p".to_string()], "{strategy:?}");
        assert!(
            p.unschedulable[0].1.iter().all(|r| r.unfit
                == Unfit::HostPortInUse {
                    port: "TCP/9100".into()
                }),
            "{strategy:?}: {:?}",
            p.unschedulable[0].1
        );
    }
}

/// `karpenter-capi` (core v1.5) judges a DaemonSet against the NodePool's template only: a zone
/// selector (well-known, undefined by the pool) counts it on every flavor, a custom label only
/// the flavors define on none, a pool template label on all; `cost` judges the flavor.
#[test]
fn karpenter_capi_counts_daemonsets_per_node_pool() {
    // Zone: the DaemonSet runs on z1 only, the pod must go to z2.
    let zones = flavor("c2-z2", 2, "0.05", "topology.kubernetes.io/zone=z2")
        + &flavor("c4-z2", 4, "0.08", "topology.kubernetes.io/zone=z2")
        + &flavor("c2-z1", 2, "0.05", "topology.kubernetes.io/zone=z1");
    let text = zones
        + &daemonset(
            "zonal",
            "1",
            "",
            "\n      nodeSelector: {topology.kubernetes.io/zone: z1}",
        )
        + &pod(
            "p",
            "app: p",
            "1500m",
            "",
            "\n  nodeSelector: {topology.kubernetes.io/zone: z2}",
        );
    let s = snap(&text);
    assert_eq!(single(&s, &plan(&s, Cost)), one("c2-z2", "p"));
    let p = plan(&s, KarpenterCapi);
    assert_eq!(single(&s, &p), one("c4-z2", "p"));
    assert_eq!(
        p.new_nodes[0].offering.daemonsets,
        vec!["kube-system/zonal".to_string()]
    );

    // A custom label only on the flavors: upstream v1.5 never counts the DaemonSet.
    let ssd = flavor("c2-ssd", 2, "0.05", "disk=ssd") + &flavor("c4-ssd", 4, "0.08", "disk=ssd");
    let ds = daemonset("local-disk", "1", "", "\n      nodeSelector: {disk: ssd}");
    let s = snap(&(ssd.clone() + &ds + &pod("p", "app: p", "1500m", "", "")));
    assert_eq!(single(&s, &plan(&s, Cost)), one("c4-ssd", "p"));
    let p = plan(&s, KarpenterCapi);
    assert_eq!(single(&s, &p), one("c2-ssd", "p"));
    assert!(p.new_nodes[0].offering.daemonsets.is_empty());

    // The same label as a NodePool template label: counted on every flavor of the pool.
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    metadata: {labels: {disk: ssd}}\n    spec:\n      requirements: []\n";
    let s = snap(&(ssd + pool + &ds + &pod("p", "app: p", "1500m", "", "")));
    let p = plan(&s, KarpenterCapi);
    assert_eq!(single(&s, &p), one("c4-ssd", "p"));
    assert_eq!(p.new_nodes[0].offering.overhead.cpu_millis, 1000);
}

/// A 3-core DaemonSet that does not tolerate the pool's taint `foo=bar:NoSchedule`
/// (P-PROV-040), or that selects a label no node of the pool has, `node=invalid` (P-PROV-041),
/// adds nothing: a 1500m pod tolerating the taint gets the 2-vCPU flavor. One tolerating the
/// taint and selecting nothing is counted, and the pod needs the 8-vCPU one.
#[test]
fn a_daemonset_the_pools_nodes_would_not_run_adds_nothing() {
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      taints: [{key: foo, value: bar, effect: NoSchedule}]\n      requirements: []\n";
    let catalog =
        flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "") + &flavor("c8", 8, "0.14", "");
    let cases = [
        ("no toleration", daemonset("agent", "3", "", ""), "c2", 0),
        (
            "an unmatched selector",
            daemonset(
                "agent",
                "3",
                "",
                "\n      nodeSelector: {node: invalid}\n      tolerations: [{operator: Exists}]",
            ),
            "c2",
            0,
        ),
        (
            "tolerating, no selector",
            daemonset(
                "agent",
                "3",
                "",
                "\n      tolerations: [{key: foo, operator: Exists}]",
            ),
            "c8",
            3000,
        ),
    ];
    let app = pod(
        "p",
        "app: p",
        "1500m",
        "",
        "\n  tolerations: [{operator: Exists}]",
    );
    for (what, ds, want, overhead) in cases {
        let s = snap(&(pool.to_string() + &catalog + &ds + &app));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(single(&s, &p), one(want, "p"), "{what}, {strategy:?}");
            assert_eq!(
                p.new_nodes[0].offering.overhead.cpu_millis, overhead,
                "{what}, {strategy:?}"
            );
        }
    }
}

/// Two DaemonSets selecting flavor sizes: 1 core on `size=small` flavors, 10 cores on
/// `size=large` ones. `cost` counts each only on the flavors it selects, so a 1500m pod fits
/// the small 4-vCPU flavor beside the small one's core (not the 2-vCPU one) and the large
/// DaemonSet costs it nothing there (P-PROV-044).
#[test]
fn cost_counts_each_daemonset_only_on_the_flavors_it_selects() {
    let catalog = flavor("c2", 2, "0.05", "size=small")
        + &flavor("c4", 4, "0.08", "size=small")
        + &flavor("c16", 16, "0.30", "size=large");
    let selecting = |name: &str, cpu: &str, size: &str| {
        daemonset(
            name,
            cpu,
            "",
            &format!(
                "\n      affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: size, operator: In, values: [{size}]}}]}}]}}}}}}"
            ),
        )
    };
    let s = snap(
        &(catalog
            + &selecting("small-agent", "1", "small")
            + &selecting("large-agent", "10", "large")
            + &pod("p", "app: p", "1500m", "", "")),
    );
    let p = plan(&s, Cost);
    assert_eq!(single(&s, &p), one("c4", "p"));
    assert_eq!(p.new_nodes[0].offering.overhead.cpu_millis, 1000);
}
