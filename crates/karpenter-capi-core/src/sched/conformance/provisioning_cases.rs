//! Sizing and limit cases of core v1.14's provisioning `suite_test.go` and scheduling
//! `suite_test.go`, in our own inputs through `cost`: native sidecars in a pod's requests, a
//! zero request of an unknown resource, NodePool limits on cpu, pods and nodes (core
//! `scheduler.go` `remainingResources`), and which DaemonSets count on a flavor (core
//! `isDaemonPodCompatible`).

use super::{daemonset, flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::Cost;

/// A NodePool `default` with these extra `spec` lines.
fn pool(spec: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:{spec}\n  template:\n    spec:\n      requirements: []\n"
    )
}

fn only_node(
    s: &crate::model::snapshot::Snapshot,
    p: &crate::sched::strategy::Placement,
) -> String {
    let got = nodes(s, p);
    assert_eq!(got.len(), 1, "{got:?}");
    got[0].0.clone()
}

/// Native sidecars (init containers with `restartPolicy: Always`) run beside the containers and
/// under every later init container: requests are the larger of containers plus sidecars and
/// each init container plus the sidecars before it. In all three upstream orders the pod needs
/// 10.9 cores and lands on the 11-core flavor (P-PROV-019, P-PROV-020, P-PROV-021).
#[test]
fn native_sidecars_count_beside_containers_and_later_inits() {
    let c = |cpu: &str, mem: &str, sidecar: bool| {
        let always = if sidecar {
            ", restartPolicy: Always"
        } else {
            ""
        };
        format!(
            "{{name: i{cpu}, resources: {{requests: {{cpu: '{cpu}', memory: {mem}}}}}{always}}}"
        )
    };
    let cases = [
        // init 10 first, then a 4.9 sidecar; containers 6.
        (
            "6",
            "2Gi",
            vec![c("10", "4Gi", false), c("4.9", "2.9Gi", true)],
        ),
        // the sidecar first, then a smaller init 5; containers 6.
        (
            "6",
            "2Gi",
            vec![c("4.9", "2.9Gi", true), c("5", "1Gi", false)],
        ),
        // the sidecar first, then a bigger init 6; containers 5.
        (
            "5",
            "1Gi",
            vec![c("4.9", "2.9Gi", true), c("6", "2Gi", false)],
        ),
    ];
    for (cpu, mem, inits) in cases {
        let text = pool("")
            + &flavor("c10", 10, "0.10", "")
            + &flavor("c11", 11, "0.11", "")
            + &flavor("c12", 12, "0.12", "")
            + &format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  initContainers: [{}]\n  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}', memory: {mem}}}}}}}]\n",
                inits.join(", ")
            );
        let s = snap(&text);
        assert_eq!(s.pods[0].demand.requests.cpu_millis, 10_900, "{inits:?}");
        let p = plan(&s, Cost);
        assert_eq!(only_node(&s, &p), "c11", "{inits:?}");
    }
}

/// A request of zero of a resource no flavor has does not rule every flavor out (S-SCHED-108).
#[test]
fn a_zero_request_of_an_unknown_resource_is_placed() {
    let text = pool("")
        + &flavor("c2", 2, "0.05", "")
        + &pod("p", "app: p", "1", "", "")
            .replace("memory: 128Mi", "memory: 128Mi, example.com/widget: '0'");
    assert!(text.contains("example.com/widget: '0'"));
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert!(p.unschedulable.is_empty());
    assert_eq!(only_node(&s, &p), "c2");
}

/// A cpu limit exactly met is within it (P-PROV-024); a pods limit of 1 rules out every flavor
/// with more pod slots (P-PROV-027); a nodes limit of 2 leaves the third of three mutually
/// anti-affine pods pending (P-PROV-029).
#[test]
fn nodepool_limits_on_cpu_pods_and_nodes() {
    let one = |limits: &str| {
        snap(
            &(pool(&format!("\n  limits: {{{limits}}}"))
                + &flavor("c2", 2, "0.05", "")
                + &pod("p", "app: p", "1500m", "", "")),
        )
    };
    let s = one("cpu: '2'");
    let p = plan(&s, Cost);
    assert_eq!(only_node(&s, &p), "c2");
    let s = one("pods: '1'");
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["p"]);
    let anti = "\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: foo}}, topologyKey: kubernetes.io/hostname}]}}";
    let text = pool("\n  limits: {nodes: '2'}")
        + &flavor("c2", 2, "0.05", "")
        + &pod("a", "app: foo", "500m", "", anti)
        + &pod("b", "app: foo", "500m", "", anti)
        + &pod("c", "app: foo", "500m", "", anti);
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(p.new_nodes.len(), 2);
    assert_eq!(unschedulable(&s, &p).len(), 1);
}

/// Which DaemonSets count on a flavor: one without requests adds nothing (P-PROV-039), one whose
/// selector no flavor satisfies adds nothing (P-PROV-042), and one with `NotIn` on a key the
/// flavors lack runs everywhere and is counted (P-PROV-045). A 1.5-core pod fits a 2-core
/// flavor beside the first two, and needs the 4-core one beside the third.
#[test]
fn which_daemonsets_count_on_a_flavor() {
    let world = |ds: String| {
        snap(
            &(pool("")
                + &flavor("c2", 2, "0.05", "")
                + &flavor("c4", 4, "0.10", "")
                + &ds
                + &pod("p", "app: p", "1500m", "", "")),
        )
    };
    let no_requests = daemonset("bare", "1", "", "").replace(
        "resources: {requests: {cpu: '1', memory: 64Mi}}",
        "resources: {}",
    );
    assert!(!no_requests.contains("cpu: '1'"));
    let nowhere = daemonset(
        "gpu-agent",
        "1",
        "",
        "\n      nodeSelector: {example.com/gpu: 'true'}",
    );
    let not_in = daemonset(
        "agent",
        "1",
        "",
        "\n      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: example.com/role, operator: NotIn, values: [edge]}]}]}}}",
    );
    for (ds, want) in [(no_requests, "c2"), (nowhere, "c2"), (not_in, "c4")] {
        let s = world(ds.clone());
        let p = plan(&s, Cost);
        assert_eq!(only_node(&s, &p), want, "{ds}");
    }
}

/// A pod whose preferred node affinity (zone or hostname `value-1`) no node can meet drops it
/// and shares a node with another pod, in one batch (P-PROV-094, P-PROV-095; core
/// `preferences.go` `Relax`).
#[test]
fn an_impossible_node_preference_is_dropped_and_the_pods_share_a_node() {
    use crate::sched::strategy::StrategyName::KarpenterCapi;
    for key in [crate::vocab::keys::ZONE, "kubernetes.io/hostname"] {
        let prefer = format!(
            "\n  affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{{key: {key}, operator: In, values: [value-1]}}]}}}}]}}}}"
        );
        let text = pool("")
            + &flavor("c4", 4, "0.10", &format!("{}=z1", crate::vocab::keys::ZONE))
            + &pod("big", "app: foo", "2", "", "")
            + &pod("picky", "app: baz", "1", "", &prefer);
        let s = snap(&text);
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{key} {strategy:?}");
            assert_eq!(p.new_nodes.len(), 1, "{key} {strategy:?}");
            assert_eq!(p.new_nodes[0].pods.len(), 2, "{key} {strategy:?}");
        }
    }
}

/// DaemonSets sized like pods (core `scheduler.go` `getDaemonOverhead` from `resources.RequestsForPods`):
/// an init container's peak counts (P-PROV-036); a pool's startup taint does not stop the
/// overhead (P-PROV-032); an unmet preferred node affinity does not either (P-PROV-048). Each
/// reserves a core or more, so the 1.5-core pod needs the 4-core flavor. A DaemonSet too big for
/// every flavor — by limits standing for missing requests (P-PROV-035), by its containers
/// together (P-PROV-037) or by an init container (P-PROV-038) — leaves the pod pending.
#[test]
fn daemonsets_are_sized_like_pods() {
    let world = |pool_spec: &str, ds: String| {
        let text = format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: []{pool_spec}\n"
        ) + &flavor("c2", 2, "0.05", "")
            + &flavor("c4", 4, "0.10", "")
            + &ds
            + &pod("p", "app: p", "1500m", "", "");
        snap(&text)
    };
    let init_peak = daemonset(
        "init-peak",
        "100m",
        "",
        "\n      initContainers: [{name: i, resources: {requests: {cpu: '1500m'}}}]",
    );
    let plain = daemonset("agent", "1", "", "");
    let preferring = daemonset(
        "picky",
        "1",
        "",
        "\n      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: example.com/special, operator: In, values: ['yes']}]}}]}}",
    );
    let startup = "\n      startupTaints: [{key: example.com/agent, effect: NoSchedule}]";
    for (pool_spec, ds) in [("", init_peak), (startup, plain), ("", preferring)] {
        let s = world(pool_spec, ds.clone());
        let p = plan(&s, Cost);
        assert_eq!(only_node(&s, &p), "c4", "{ds}");
    }
    let by_limits = daemonset("limits", "1", "", "").replace(
        "resources: {requests: {cpu: '1', memory: 64Mi}}",
        "resources: {limits: {cpu: '5', memory: 64Mi}}",
    );
    assert!(by_limits.contains("limits: {cpu: '5'"));
    // Two 2-core containers: either alone would leave the 4-core flavor room for the pod.
    let two_containers = daemonset(
        "pair",
        "2",
        "}, {name: d, resources: {requests: {cpu: '2'}}",
        "",
    );
    let big_init = daemonset(
        "big-init",
        "100m",
        "",
        "\n      initContainers: [{name: i, resources: {requests: {cpu: '5'}}}]",
    );
    for ds in [by_limits, two_containers, big_init] {
        let s = world("", ds.clone());
        let p = plan(&s, Cost);
        assert_eq!(unschedulable(&s, &p), ["p"], "{ds}");
    }
}

/// DaemonSets selecting Karpenter's lifecycle labels (`karpenter.sh/initialized`,
/// `karpenter.sh/registered`) run on every new node, so their room is reserved: with one core
/// each, a 1.5-core pod needs the 4-core flavor; the labels are not written on the claim
/// (S-SCHED-129).
#[test]
fn daemonsets_selecting_lifecycle_labels_are_reserved_for() {
    use crate::controller::{Config, action::Action, provision::provision};
    let selecting = |name: &str, key: &str| {
        daemonset(
            name,
            "1",
            "",
            &format!("\n      nodeSelector: {{{key}: 'true'}}"),
        )
    };
    let text = pool("")
        + &flavor("c2", 2, "0.05", "")
        + &flavor("c4", 4, "0.10", "")
        + &flavor("c8", 8, "0.20", "")
        + &selecting("after-init", "karpenter.sh/initialized")
        + &selecting("after-registration", "karpenter.sh/registered")
        + &pod("p", "app: p", "1500m", "", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(only_node(&s, &p), "c4");
    let (actions, _) = provision(&s, jiff::Timestamp::now(), &Config::default());
    let labels: Vec<serde_json::Value> = actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => {
                Some(manifest["metadata"]["labels"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(labels.len(), 1);
    assert!(labels[0].get("karpenter.sh/initialized").is_none());
    assert!(labels[0].get("karpenter.sh/registered").is_none());
}

/// The batch window (core `provisioning/batcher.go`): provisioning waits while the newest
/// pending pod is younger than the idle window (1 s), so a new pod prolongs the batch, up to
/// the max window (10 s) from the oldest (P-PROV-003); the window runs from creation times, so
/// seeing the same pod again cannot prolong it (P-PROV-002).
#[test]
fn the_batch_waits_for_the_idle_window_up_to_the_max() {
    use crate::controller::{Config, action::Action, provision::provision};
    let now: jiff::Timestamp = "2026-12-01T10:00:00Z".parse().unwrap_or_default();
    let aged = |name: &str, ms: i64| {
        let created = jiff::Timestamp::from_millisecond(now.as_millisecond() - ms)
            .unwrap_or_default()
            .to_string();
        pod(name, "app: p", "500m", "", "").replace(
            "namespace: default,",
            &format!("namespace: default, creationTimestamp: '{created}',"),
        )
    };
    let claims = |pods: &[(&str, i64)]| -> usize {
        let text = pool("")
            + &flavor("c4", 4, "0.10", "")
            + &pods.iter().map(|(n, ms)| aged(n, *ms)).collect::<String>();
        assert!(text.contains("creationTimestamp"));
        let s = snap(&text);
        provision(&s, now, &Config::default())
            .0
            .iter()
            .filter(|a| matches!(a, Action::CreateNodeClaim { .. }))
            .count()
    };
    // One pod 2 s old: the idle window has passed.
    assert_eq!(claims(&[("a", 2_000)]), 1);
    // A newer pod 300 ms old prolongs the batch.
    assert_eq!(claims(&[("a", 2_000), ("b", 300)]), 0);
    // Until the oldest has waited the max window.
    assert_eq!(claims(&[("a", 10_500), ("b", 300)]), 1);
    // The same pod seen again is the same pod: its creation time, not when it was seen, counts.
    assert_eq!(claims(&[("a", 2_000), ("a", 2_000)]), 1);
}

/// A pool's cpu limit counts what it already has: a Node of the pool over the limit
/// (P-PROV-023) or a claim still in flight from an earlier pass (P-PROV-028) leaves no room for
/// another node; the pod that fits neither waits. Without them the same pod gets a node.
#[test]
fn a_pools_limit_counts_its_nodes_and_claims_in_flight() {
    let limited = "\n  limits: {cpu: '5'}";
    let world = |extra: &str| {
        snap(
            &(pool(limited)
                + &flavor("c2", 2, "0.05", "")
                + &flavor("c4", 4, "0.10", "")
                + extra
                + &pod("p", "app: p", "2500m", "", "")),
        )
    };
    let s = world("");
    assert_eq!(only_node(&s, &plan(&s, Cost)), "c4");
    let node = "---\napiVersion: v1\nkind: Node\nmetadata: {name: big, labels: {kubernetes.io/hostname: big, karpenter.sh/nodepool: default}}\nspec: {taints: [{key: example.com/full, effect: NoSchedule}]}\nstatus: {allocatable: {cpu: '6', memory: 16Gi, pods: '110'}, capacity: {cpu: '6', memory: 16Gi, pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n";
    let flight = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-a\n  labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c2}\n  annotations: {karpenter-capi/machine-deployment: capi/c2}\nspec: {nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}, requirements: []}\nstatus: {conditions: [{type: Launched, status: 'True'}]}\n";
    for extra in [node, flight] {
        let s = world(extra);
        let p = plan(&s, Cost);
        assert!(p.new_nodes.is_empty(), "{extra}");
        assert_eq!(unschedulable(&s, &p), ["p"], "{extra}");
    }
}
