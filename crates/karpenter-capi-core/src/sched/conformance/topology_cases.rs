//! Topology spread and pod (anti-)affinity cases of core v1.14's scheduling `topology_test.go`
//! (core `topology.go`, `topologygroup.go`), in our own inputs through `cost` and, where the
//! v1.5 strategy shares the rule, `karpenter-capi`: selectors that match nothing separate
//! nothing, independent spreads, empty affinity sections, self affinity, one-sided and
//! architecture (anti-)affinity, chains, and namespace filters.

use super::{flavor, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// 4-core flavors in zones z1..z3.
fn zonal() -> String {
    (1..=3)
        .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
        .collect()
}

/// Pod names per new node (sorted), with the node's zone.
fn by_node(s: &Snapshot, p: &Placement) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = p
        .new_nodes
        .iter()
        .map(|n| {
            let mut names: Vec<String> = n
                .pods
                .iter()
                .map(|&i| s.pods[i].demand.name.clone())
                .collect();
            names.sort();
            (
                n.offering.labels.get(ZONE).cloned().unwrap_or_default(),
                names,
            )
        })
        .collect();
    out.sort();
    out
}

fn affinity(kind: &str, app: &str, key: &str, extra: &str) -> String {
    format!(
        "\n  affinity: {{{kind}: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: {key}{extra}}}]}}}}"
    )
}

fn spread(key: &str, selector: &str) -> String {
    format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {key}, whenUnsatisfiable: DoNotSchedule{selector}}}]"
    )
}

/// A spread with no selector, or one selecting pods that do not exist, counts nothing: the pods
/// share one node (S-TOPO-003, S-TOPO-017, S-TOPO-018).
#[test]
fn spreads_selecting_nothing_separate_nothing() {
    let none = spread(ZONE, "");
    let other = spread(
        "kubernetes.io/hostname",
        ", labelSelector: {matchLabels: {app: other}}",
    );
    let mut text = POOL.to_string() + &zonal();
    for i in 0..2 {
        text.push_str(&pod(&format!("bare{i}"), "app: bare", "500m", "", &none));
    }
    for i in 0..5 {
        text.push_str(&pod(&format!("o{i}"), "app: o", "500m", "", &other));
    }
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}: {:?}", by_node(&s, &p));
    }
}

/// Two apps each spread over hostnames: the spreads are independent, so two nodes each hold one
/// pod of each app (S-TOPO-024).
#[test]
fn two_apps_hostname_spreads_are_independent() {
    let mut text = POOL.to_string() + &zonal();
    for app in ["a", "b"] {
        let sp = spread(
            "kubernetes.io/hostname",
            &format!(", labelSelector: {{matchLabels: {{app: {app}}}}}"),
        );
        for i in 0..2 {
            text.push_str(&pod(
                &format!("{app}{i}"),
                &format!("app: {app}"),
                "1",
                "",
                &sp,
            ));
        }
    }
    let s = snap(&text);
    let p = plan(&s, Cost);
    let got = by_node(&s, &p);
    assert_eq!(got.len(), 2, "{got:?}");
    for (_, pods) in &got {
        assert_eq!(pods.len(), 2, "{got:?}");
        assert_ne!(pods[0][..1], pods[1][..1], "one of each app: {got:?}");
    }
}

/// Empty affinity sections change nothing (S-TOPO-057); self-affine pods share one node
/// (S-TOPO-060), or, too big to share a node, one zone (S-TOPO-063).
#[test]
fn empty_and_self_affinity() {
    let text = POOL.to_string()
        + &zonal()
        + &pod(
            "empty",
            "app: e",
            "500m",
            "",
            "\n  affinity: {podAffinity: {}, podAntiAffinity: {}}",
        );
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
    let host = affinity("podAffinity", "h", "kubernetes.io/hostname", "");
    let zone = affinity("podAffinity", "z", ZONE, "");
    let mut text = POOL.to_string() + &zonal();
    for i in 0..3 {
        text.push_str(&pod(&format!("h{i}"), "app: h", "1", "", &host));
        text.push_str(&pod(&format!("z{i}"), "app: z", "3", "", &zone));
    }
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty(), "{:?}", unschedulable(&s, &p));
    let got = by_node(&s, &p);
    let with_h: Vec<_> = got
        .iter()
        .filter(|(_, pods)| pods.iter().any(|n| n.starts_with('h')))
        .collect();
    assert_eq!(with_h.len(), 1, "{got:?}");
    let zones: std::collections::BTreeSet<&String> = got
        .iter()
        .filter(|(_, pods)| pods.iter().any(|n| n.starts_with('z')))
        .map(|(z, _)| z)
        .collect();
    assert_eq!(zones.len(), 1, "{got:?}");
}

/// A pod repelling a plain pod never shares its node, whichever is listed first (S-TOPO-068);
/// another pod's preferred anti-affinity does not keep a plain pod pending (S-TOPO-072).
#[test]
fn one_sided_anti_affinity() {
    let anti = affinity("podAntiAffinity", "plain", "kubernetes.io/hostname", "");
    for first in [true, false] {
        let repel = pod("repel", "app: r", "500m", "", &anti);
        let plain = pod("plain", "app: plain", "500m", "", "");
        let pods = if first {
            repel + &plain
        } else {
            plain + &repel
        };
        let s = snap(&(POOL.to_string() + &zonal() + &pods));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?}");
            assert_eq!(p.new_nodes.len(), 2, "{strategy:?} {first}");
        }
    }
    let soft = "\n  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, podAffinityTerm: {labelSelector: {matchLabels: {app: plain}}, topologyKey: kubernetes.io/hostname}}]}}";
    let s = snap(
        &(POOL.to_string()
            + &flavor("c4", 4, "0.10", "")
            + &pod("soft", "app: s", "500m", "", soft)
            + &pod("plain", "app: plain", "500m", "", "")),
    );
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
}

/// On the architecture key: a follower joins its target's arch, a repeller takes the other
/// (S-TOPO-059, S-TOPO-071).
#[test]
fn affinity_and_anti_affinity_on_arch() {
    let text = POOL.to_string()
        + &flavor("amd", 4, "0.10", "kubernetes.io/arch=amd64")
        + &flavor("arm", 4, "0.20", "kubernetes.io/arch=arm64")
        + &pod(
            "target",
            "app: t",
            "3",
            "",
            "\n  nodeSelector: {kubernetes.io/arch: arm64}",
        )
        + &pod(
            "join",
            "app: j",
            "3",
            "",
            &affinity("podAffinity", "t", "kubernetes.io/arch", ""),
        )
        + &pod(
            "avoid",
            "app: a",
            "3",
            "",
            &affinity("podAntiAffinity", "t", "kubernetes.io/arch", ""),
        );
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty(), "{:?}", unschedulable(&s, &p));
    let arch_of = |name: &str| -> String {
        p.new_nodes
            .iter()
            .find(|n| n.pods.iter().any(|&i| s.pods[i].demand.name == name))
            .map(|n| n.offering.flavor.instance_type.clone())
            .unwrap_or_default()
    };
    assert_eq!(arch_of("target"), "arm");
    assert_eq!(arch_of("join"), "arm");
    assert_eq!(arch_of("avoid"), "amd");
}

/// A chain db ← web ← cache ← ui is placed in one batch, on one node (S-TOPO-082); a pod
/// affine to a pod that does not exist stays pending (S-TOPO-083).
#[test]
fn affinity_chains_and_missing_targets() {
    let host = |app: &str| affinity("podAffinity", app, "kubernetes.io/hostname", "");
    let text = POOL.to_string()
        + &flavor("c4", 4, "0.10", "")
        + &pod("ui", "app: ui", "500m", "", &host("cache"))
        + &pod("cache", "app: cache", "500m", "", &host("web"))
        + &pod("web", "app: web", "500m", "", &host("db"))
        + &pod("db", "app: db", "500m", "", "")
        + &pod("lonely", "app: l", "500m", "", &host("ghost"));
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["lonely"]);
    assert_eq!(p.new_nodes.len(), 1);
    assert_eq!(p.new_nodes[0].pods.len(), 4);
}

/// Namespaces of an affinity term: limited to a namespace without the target, it finds nothing
/// (S-TOPO-084); listing the target's namespace (S-TOPO-085) or an empty `namespaceSelector`
/// (S-TOPO-086) puts the follower with the target in another namespace.
#[test]
fn affinity_terms_and_namespaces() {
    let target =
        pod("target", "app: t", "500m", "", "").replace("namespace: default", "namespace: other");
    let host = "kubernetes.io/hostname";
    for (extra, placed) in [
        (", namespaces: [third]", false),
        (", namespaces: [other]", true),
        (", namespaceSelector: {}", true),
    ] {
        let text = POOL.to_string()
            + &flavor("c4", 4, "0.10", "")
            + &target
            + &pod(
                "follow",
                "app: f",
                "500m",
                "",
                &affinity("podAffinity", "t", host, extra),
            );
        let s = snap(&text);
        let p = plan(&s, Cost);
        if placed {
            assert!(p.unschedulable.is_empty(), "{extra}");
            assert_eq!(p.new_nodes.len(), 1, "{extra}");
        } else {
            assert_eq!(unschedulable(&s, &p), ["follow"], "{extra}");
        }
    }
}

/// Ten self-affine pods of which a node holds five: five share one node, the other five wait
/// (a second node would be another hostname domain, empty of them) (S-TOPO-061).
#[test]
fn self_affine_pods_fill_one_node_and_the_rest_wait() {
    let host = affinity("podAffinity", "self", "kubernetes.io/hostname", "");
    let text = POOL.to_string()
        + &flavor("c4", 4, "0.10", "")
        + &(0..10)
            .map(|i| pod(&format!("m{i}"), "app: self", "800m", "", &host))
            .collect::<String>();
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(p.new_nodes.len(), 1);
    assert_eq!(p.new_nodes[0].pods.len(), 5);
    assert_eq!(p.unschedulable.len(), 5);
}

/// Three pods preferring each other's node under a hard hostname spread of maxSkew 1: the
/// spread wins, one pod per node, all placed (S-TOPO-077).
#[test]
fn a_hard_spread_beats_an_affinity_preference() {
    let both = "\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n  affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}}]}}";
    let text = POOL.to_string()
        + &zonal()
        + &(0..3)
            .map(|i| pod(&format!("w{i}"), "app: web", "500m", "", both))
            .collect::<String>();
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
    assert_eq!(p.new_nodes.len(), 3);
}

/// Zones z1..z3 hold one running `app: s` pod each on full 1-core nodes, and the pool offers
/// only z1: a pending pod spreading `app: s` by zone (maxSkew 1) may go to z1 (2 - 1). Beside the
/// z1 pod, a pod that is unlabelled, in another namespace, terminating, Failed or Succeeded, or
/// an `app: s` pod on a node without a zone label, counts nothing and the pod is still placed in
/// z1; one more running `app: s` pod in z1 keeps it pending (S-TOPO-016; core
/// `IgnoredForTopology`).
#[test]
fn only_running_matching_pods_on_zoned_nodes_count_for_spread() {
    let pool = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: [{{key: {ZONE}, operator: In, values: [z1]}}]\n"
    );
    let node = |name: &str, zone: Option<&str>| {
        let zone = zone.map(|z| format!(", {ZONE}: {z}")).unwrap_or_default();
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{zone}}}}}\nspec: {{}}\nstatus: {{allocatable: {{cpu: '1', memory: 4Gi, pods: '110'}}, capacity: {{cpu: '1', memory: 4Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
        )
    };
    // A 100m pod `name` bound to `node`, with this metadata tail and status.
    let bound = |name: &str, meta: &str, node: &str, status: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{meta}}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]\nstatus: {{{status}}}\n"
        )
    };
    let running = "phase: Running";
    let base = pool
        + &zonal()
        + &node("n1", Some("z1"))
        + &node("n2", Some("z2"))
        + &node("n3", Some("z3"))
        + &node("n4", None)
        + &bound(
            "s1",
            ", namespace: default, labels: {app: s}",
            "n1",
            running,
        )
        + &bound(
            "s2",
            ", namespace: default, labels: {app: s}",
            "n2",
            running,
        )
        + &bound(
            "s3",
            ", namespace: default, labels: {app: s}",
            "n3",
            running,
        )
        + &pod(
            "new",
            "app: s",
            "2",
            "",
            &spread(ZONE, ", labelSelector: {matchLabels: {app: s}}"),
        );
    let cases = [
        (
            "unlabelled",
            bound("x", ", namespace: default", "n1", running),
            true,
        ),
        (
            "other namespace",
            bound("x", ", namespace: other, labels: {app: s}", "n1", running),
            true,
        ),
        (
            "terminating",
            bound(
                "x",
                ", namespace: default, labels: {app: s}, deletionTimestamp: '2026-12-01T00:00:00Z'",
                "n1",
                running,
            ),
            true,
        ),
        (
            "failed",
            bound(
                "x",
                ", namespace: default, labels: {app: s}",
                "n1",
                "phase: Failed",
            ),
            true,
        ),
        (
            "succeeded",
            bound(
                "x",
                ", namespace: default, labels: {app: s}",
                "n1",
                "phase: Succeeded",
            ),
            true,
        ),
        (
            "no zone",
            bound("x", ", namespace: default, labels: {app: s}", "n4", running),
            true,
        ),
        (
            "running",
            bound("x", ", namespace: default, labels: {app: s}", "n1", running),
            false,
        ),
    ];
    for (case, extra, placed) in cases {
        let s = snap(&(base.clone() + &extra));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            if placed {
                assert_eq!(
                    by_node(&s, &p),
                    [("z1".to_string(), vec!["new".to_string()])],
                    "{strategy:?}, {case}"
                );
            } else {
                assert_eq!(unschedulable(&s, &p), ["new"], "{strategy:?}, {case}");
                assert!(p.new_nodes.is_empty(), "{strategy:?}, {case}");
            }
        }
    }
}

/// A self-affine pod (hostname) already runs on a full node in z1; ten more members, required
/// in z2 or z3, can join no node holding a member and may not start a domain of their own
/// while one exists: none is placed (S-TOPO-062). Without the running member, they share one
/// new node in z2 or z3.
#[test]
fn a_running_self_affine_member_elsewhere_keeps_the_new_ones_pending() {
    let host = affinity("podAffinity", "self", "kubernetes.io/hostname", "");
    let node = format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{kubernetes.io/hostname: n1, {ZONE}: z1}}}}\nspec: {{}}\nstatus: {{allocatable: {{cpu: '1', memory: 4Gi, pods: '110'}}, capacity: {{cpu: '1', memory: 4Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
    );
    let member = pod("m", "app: self", "1", "", &format!("{host}\n  nodeName: n1")).replace(
        "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}",
        "status: {phase: Running}",
    );
    assert!(member.contains("Running"));
    let zones = format!(
        "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {ZONE}, operator: In, values: [z2, z3]}}]}}]}}}}, podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{app: self}}}}, topologyKey: kubernetes.io/hostname}}]}}}}"
    );
    let members: String = (0..10)
        .map(|i| pod(&format!("n{i}"), "app: self", "100m", "", &zones))
        .collect();
    let s = snap(&(POOL.to_string() + &zonal() + &node + &member + &members));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(
            p.new_nodes.is_empty(),
            "{strategy:?}: {:?}",
            by_node(&s, &p)
        );
        assert_eq!(unschedulable(&s, &p).len(), 10, "{strategy:?}");
    }
    let s = snap(&(POOL.to_string() + &zonal() + &node + &members));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        let got = by_node(&s, &p);
        assert_eq!(got.len(), 1, "{strategy:?}: {got:?}");
        assert_ne!(got[0].0, "z1", "{strategy:?}");
        assert_eq!(got[0].1.len(), 10, "{strategy:?}");
    }
}
