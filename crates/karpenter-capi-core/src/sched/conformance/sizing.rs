//! How pods and DaemonSets are sized from objects besides their own spec, after core v1.14's
//! scheduling `suite_test.go` (`Binpacking`: RuntimeClass overhead) and provisioning
//! `suite_test.go` (`Daemonsets`: the DaemonSet's pod over its template): a RuntimeClass's
//! fixed overhead is added where no admission set `spec.overhead`, and a DaemonSet is sized by
//! its newest pod when one is listed.

use super::{ALL, daemonset, flavor, plan, pod, single, snap};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

fn catalog() -> String {
    flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "") + &flavor("c8", 8, "0.14", "")
}

const KATA: &str = "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\noverhead: {podFixed: {cpu: '2', memory: 1Gi}}\n";

/// A 1-core pod of RuntimeClass `kata` (2 cores of fixed overhead) needs 3 cores, so it gets a
/// c4, not the c2 it would fit alone (S-SCHED-103); every strategy. A pod whose `spec.overhead`
/// is already set (admitted) is not charged twice; a class no RuntimeClass has adds nothing;
/// pods expanded from a Deployment template and a DaemonSet template (`cost` and
/// `karpenter-capi`, which count DaemonSets) are charged too.
#[test]
fn runtime_class_overhead_sizes_the_pod() {
    let kata = "\n  runtimeClassName: kata";
    let cases = [
        (
            "class overhead",
            kata.to_string(),
            "c4",
            3000,
            (128 << 20) + (1 << 30),
        ),
        (
            "overhead already admitted",
            format!("{kata}\n  overhead: {{cpu: 500m}}"),
            "c2",
            1500,
            128 << 20,
        ),
        (
            "no such class",
            "\n  runtimeClassName: gvisor".to_string(),
            "c2",
            1000,
            128 << 20,
        ),
    ];
    for (what, spec, want, cpu, memory) in cases {
        let s = snap(&(catalog() + KATA + &pod("p", "app: p", "1", "", &spec)));
        assert_eq!(s.pods[0].demand.requests.cpu_millis, cpu, "{what}");
        assert_eq!(s.pods[0].demand.requests.memory_bytes, memory, "{what}");
        for strategy in ALL {
            let p = plan(&s, strategy);
            assert_eq!(single(&s, &p).0, want, "{what}, {strategy:?}");
        }
    }
    // A class whose overhead cannot be read adds nothing and is named in a warning.
    let bad = KATA.replace("cpu: '2'", "cpu: 2x");
    assert!(bad.contains("2x"));
    let s = snap(&(catalog() + &bad + &pod("p", "app: p", "1", "", kata)));
    assert_eq!(s.pods[0].demand.requests.cpu_millis, 1000);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.starts_with("RuntimeClass kata: overhead.podFixed[cpu]")),
        "{:?}",
        s.warnings
    );
    // The RuntimeClass listed after the pods it sizes.
    let deploy = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      runtimeClassName: kata\n      containers: [{name: c, resources: {requests: {cpu: 500m}}}]\n";
    let s = snap(&(catalog() + deploy + KATA));
    assert_eq!(s.pods.len(), 2);
    for p in &s.pods {
        assert_eq!(p.demand.requests.cpu_millis, 2500);
    }
    // A DaemonSet of the class reserves its overhead too: 1 + 2 cores beside a 500m pod.
    let ds = daemonset(
        "agent",
        "1",
        "",
        "\n      runtimeClassName: kata\n      tolerations: [{operator: Exists}]",
    );
    let s = snap(&(catalog() + KATA + &ds + &pod("p", "app: p", "500m", "", "")));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(single(&s, &p).0, "c4", "{strategy:?}");
        assert_eq!(
            p.new_nodes[0].offering.overhead.cpu_millis, 3000,
            "{strategy:?}"
        );
    }
}

const GVISOR: &str = "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\nscheduling:\n  nodeSelector: {sandbox: gvisor}\n  tolerations: [{key: sandbox, operator: Equal, value: gvisor, effect: NoSchedule}]\n";

/// A RuntimeClass's `scheduling` joins the spec of a pod no admission saw, as the RuntimeClass
/// admission plugin merges it at creation: a 1-core pod of class `gvisor`, whose nodes are the
/// only ones labelled `sandbox=gvisor`, gets that c8, not a c2 (every strategy), and carries the
/// class's toleration once. A spec that already selects the key keeps its own value, an
/// admitted pod (`spec.overhead` set) gets nothing more, and a template's pods get the class.
#[test]
fn runtime_class_scheduling_joins_a_spec_no_admission_saw() {
    let catalog = flavor("c2", 2, "0.05", "") + &flavor("c8", 8, "0.14", "sandbox=gvisor");
    let class = "\n  runtimeClassName: gvisor";
    let s = snap(&(catalog.clone() + GVISOR + &pod("p", "app: p", "1", "", class)));
    let d = &s.pods[0].demand;
    assert_eq!(d.tolerations.len(), 1);
    assert_eq!(d.node_selector.len(), 1);
    assert_eq!(d.node_selector[0].key, "sandbox");
    assert_eq!(d.node_selector[0].values, vec!["gvisor".to_string()]);
    for strategy in ALL {
        let p = plan(&s, strategy);
        assert_eq!(single(&s, &p).0, "c8", "{strategy:?}");
    }
    // The toleration already there, and the key already selected: nothing doubles.
    let own = format!(
        "{class}\n  nodeSelector: {{sandbox: other}}\n  tolerations: [{{key: sandbox, operator: Equal, value: gvisor, effect: NoSchedule}}]"
    );
    let s = snap(&(catalog.clone() + GVISOR + &pod("p", "app: p", "1", "", &own)));
    let d = &s.pods[0].demand;
    assert_eq!(d.tolerations.len(), 1);
    assert_eq!(d.node_selector.len(), 1);
    assert_eq!(d.node_selector[0].values, vec!["other".to_string()]);
    // Admitted: the pod's spec is what the scheduler sees.
    let admitted = format!("{class}\n  overhead: {{cpu: 100m}}");
    let s = snap(&(catalog.clone() + GVISOR + &pod("p", "app: p", "1", "", &admitted)));
    assert!(s.pods[0].demand.node_selector.is_empty());
    assert!(s.pods[0].demand.tolerations.is_empty());
    assert_eq!(single(&s, &plan(&s, Cost)).0, "c2");
    // A Deployment's pods, the class listed after them.
    let deploy = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      runtimeClassName: gvisor\n      containers: [{name: c, resources: {requests: {cpu: 500m}}}]\n";
    let s = snap(&(catalog.clone() + deploy + GVISOR));
    assert_eq!(s.pods.len(), 2);
    assert!(
        s.pods
            .iter()
            .all(|p| p.demand.node_selector.len() == 1 && p.demand.tolerations.len() == 1)
    );
    // An unreadable part is named and left out; the rest still applies.
    let bad = GVISOR.replace("operator: Equal", "operator: Sometimes");
    let s = snap(&(catalog + &bad + &pod("p", "app: p", "1", "", class)));
    assert_eq!(s.pods[0].demand.node_selector.len(), 1);
    assert!(s.pods[0].demand.tolerations.is_empty());
    assert!(
        s.warnings
            .iter()
            .any(|w| w.starts_with("RuntimeClass gvisor: scheduling.tolerations[0]: ")),
        "{:?}",
        s.warnings
    );
}

/// A pod the DaemonSet controls, `created` at that time, requesting `cpu`.
fn daemon_pod(name: &str, created: &str, cpu: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: kube-system, creationTimestamp: '{created}', ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}}]}}\nspec:\n  nodeName: elsewhere\n  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}', memory: 64Mi}}}}}}]\nstatus: {{phase: Running}}\n"
    )
}

/// The DaemonSet's template asks 3 cores, but its pod asks 500m: the pod's size counts, so a
/// 1500m pod fits a c2 beside it instead of needing a c8 (P-PROV-034); of two DaemonSet pods
/// the newest counts; with none listed, the template does. `cost` and `karpenter-capi`
/// (`least-waste` counts no DaemonSets).
#[test]
fn a_daemonset_is_sized_by_its_newest_pod() {
    let ds = daemonset(
        "agent",
        "3",
        "",
        "\n      tolerations: [{operator: Exists}]",
    );
    let old = "2026-01-01T00:00:00Z";
    let new = "2026-02-01T00:00:00Z";
    let cases = [
        ("template only", String::new(), "c8", 3000),
        ("one pod", daemon_pod("agent-a", old, "500m"), "c2", 500),
        (
            "the newest of two",
            daemon_pod("agent-a", old, "3") + &daemon_pod("agent-b", new, "500m"),
            "c2",
            500,
        ),
        (
            "the newest of two, listed first",
            daemon_pod("agent-b", new, "3") + &daemon_pod("agent-a", old, "500m"),
            "c8",
            3000,
        ),
    ];
    for (what, pods, want, overhead) in cases {
        let s = snap(&(catalog() + &ds + &pods + &pod("p", "app: p", "1500m", "", "")));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            let (instance, placed) = single(&s, &p);
            assert_eq!(
                (instance.as_str(), placed),
                (want, vec!["p".to_string()]),
                "{what}, {strategy:?}"
            );
            assert_eq!(
                p.new_nodes[0].offering.overhead.cpu_millis, overhead,
                "{what}, {strategy:?}"
            );
        }
    }
}

/// The DaemonSet controller pins each pod to its node with a node-affinity term of its own;
/// the DaemonSet is judged by its template's required node affinity instead, sized by its pod.
/// Here the template requires `foo In [bar]`, which the pool's template label gives every node,
/// and asks 3 cores; its pod requires `metadata.name In [node-name]` and asks 1 core: the
/// DaemonSet counts at 1 core on the new node, so a 1500m pod needs a c4, not a c2 (judged by
/// the pod's term, not counted) nor a c8 (sized by the template) (P-PROV-046).
#[test]
fn a_daemonset_pods_own_node_affinity_is_replaced_by_its_templates() {
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    metadata: {labels: {foo: bar}}\n    spec:\n      requirements: []\n";
    let ds = daemonset(
        "agent",
        "3",
        "",
        "\n      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}",
    );
    let pinned = daemon_pod("agent-a", "2026-01-01T00:00:00Z", "1").replace(
        "  nodeName: elsewhere\n",
        "  nodeName: elsewhere\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: metadata.name, operator: In, values: [node-name]}]}]}}}\n",
    );
    assert!(pinned.contains("metadata.name"));
    let app = pod("p", "app: p", "1500m", "", "\n  nodeSelector: {foo: bar}");
    let s = snap(&(pool.to_string() + &catalog() + &ds + &pinned + &app));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(single(&s, &p).0, "c4", "{strategy:?}");
        assert_eq!(
            p.new_nodes[0].offering.overhead.cpu_millis, 1000,
            "{strategy:?}"
        );
    }
}
