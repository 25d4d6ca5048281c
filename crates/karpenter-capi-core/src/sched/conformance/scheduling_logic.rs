//! Placement logic of core's scheduling suite (in our own inputs): existing nodes first and
//! only where the pod fits them (room, selectors, taints), the per-node pod limit, init
//! containers and extended resources sizing the node, preferred node affinity tried heaviest
//! first and dropped when impossible, and pod affinity to pods that exist nowhere.

use super::{flavor, nodes, plan, pod, snap, unschedulable};
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi, LeastWaste};
use crate::vocab::keys::ZONE;

/// A Ready Node `name` with these labels (flow-map body), `cpu` cores and these extra spec lines.
fn node(name: &str, labels: &str, cpu: u32, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}\nspec: {{{spec}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, capacity: {{cpu: '{cpu}', memory: 16Gi, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n"
    )
}

fn zonal() -> String {
    flavor("c2-z1", 2, "0.04", &format!("{ZONE}=z1"))
        + &flavor("c2-z2", 2, "0.05", &format!("{ZONE}=z2"))
        + &flavor("c2-z3", 2, "0.06", &format!("{ZONE}=z3"))
}

/// An existing node takes what fits it; a pod it cannot take (no room, another zone, a taint
/// it does not tolerate) gets a new node, in every strategy.
#[test]
fn existing_nodes_take_only_what_fits_them() {
    let existing = node("n1", &format!(", {ZONE}: z2"), 4, "");
    // A hundred small pods fit the existing node: no new node.
    let small: String = (0..100)
        .map(|i| pod(&format!("s{i}"), "app: s", "30m", "", ""))
        .collect();
    let s = snap(&(zonal() + &existing + &small));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert!(p.new_nodes.is_empty(), "{strategy:?}");
        assert_eq!(p.on_existing.len(), 100, "{strategy:?}");
    }
    // A pod requiring z1 does not go to the z2 node.
    let s = snap(
        &(zonal()
            + &existing
            + &pod(
                "p",
                "app: p",
                "1",
                "",
                &format!("\n  nodeSelector: {{{ZONE}: z1}}"),
            )),
    );
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        assert_eq!(
            nodes(&s, &plan(&s, strategy)),
            [("c2-z1".to_string(), vec!["p".to_string()])],
            "{strategy:?}"
        );
    }
    // A custom NoSchedule taint keeps the pod off; without it the node takes the pod.
    let tainted = node(
        "n1",
        &format!(", {ZONE}: z2"),
        4,
        "taints: [{key: example.com/dedicated, value: x, effect: NoSchedule}]",
    );
    let s = snap(&(zonal() + &tainted + &pod("p", "app: p", "1", "", "")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert!(p.on_existing.is_empty(), "{strategy:?}");
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}");
    }
    let s = snap(&(zonal() + &existing + &pod("p", "app: p", "3", "", "")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert_eq!(p.on_existing.len(), 1, "{strategy:?}");
        assert!(p.new_nodes.is_empty(), "{strategy:?}");
    }
    // Too big for what is left on it: a new node (4 cores, 3.5 already used).
    let s = snap(
        &(zonal()
            + &existing
            + &pod("p", "app: p", "1500m", "", "")
            + &pod("q", "app: q", "3500m", "", "")
            + &flavor("c4-z1", 4, "0.08", &format!("{ZONE}=z1"))),
    );
    let p = plan(&s, Cost);
    assert_eq!(p.on_existing.len(), 1);
    assert_eq!(
        nodes(&s, &p),
        [("c2-z1".to_string(), vec!["p".to_string()])]
    );
}

/// A flavor's pod limit (`maxPods`) forces more nodes: 25 tiny pods on 5-pod nodes.
#[test]
fn the_per_node_pod_limit_forces_extra_nodes() {
    let text = flavor("c8", 8, "0.10", "").replace(
        "    capacity.cluster-autoscaler.kubernetes.io/price",
        "    capacity.cluster-autoscaler.kubernetes.io/maxPods: '5'\n    capacity.cluster-autoscaler.kubernetes.io/price",
    );
    let pods: String = (0..25)
        .map(|i| pod(&format!("p{i}"), "app: p", "10m", "", ""))
        .collect();
    let s = snap(&(text + &pods));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert_eq!(p.new_nodes.len(), 5, "{strategy:?}");
        assert!(
            p.new_nodes.iter().all(|n| n.pods.len() == 5),
            "{strategy:?}"
        );
    }
    // A flavor holding one pod, the only one the pool allows: three pods, three nodes
    // (P-PROV-016), though a bigger flavor outside the pool would hold them all.
    let single = flavor("one", 8, "0.10", "").replace(
        "    capacity.cluster-autoscaler.kubernetes.io/price",
        "    capacity.cluster-autoscaler.kubernetes.io/maxPods: '1'\n    capacity.cluster-autoscaler.kubernetes.io/price",
    );
    assert!(single.contains("maxPods: '1'"));
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [one]}]\n";
    let pods: String = (0..3)
        .map(|i| pod(&format!("p{i}"), "app: p", "10m", "", ""))
        .collect();
    let s = snap(&(pool.to_string() + &single + &flavor("many", 8, "0.01", "") + &pods));
    // (`least-waste`, Cluster Autoscaler's expander, knows no NodePools.)
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert_eq!(
            nodes(&s, &p),
            (0..3)
                .map(|i| ("one".to_string(), vec![format!("p{i}")]))
                .collect::<Vec<_>>(),
            "{strategy:?}"
        );
    }
}

/// An init container larger than every flavor leaves the pod pending; one that fits sizes the
/// node.
#[test]
fn an_init_container_sizes_the_node() {
    let with_init = |cpu: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  initContainers: [{{name: i, resources: {{requests: {{cpu: '{cpu}', memory: 128Mi}}}}}}]\n  containers: [{{name: c, resources: {{requests: {{cpu: '1', memory: 128Mi}}}}}}]\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n"
        )
    };
    let catalog = flavor("c2", 2, "0.04", "") + &flavor("c4", 4, "0.08", "");
    let s = snap(&(catalog.clone() + &with_init("3")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        assert_eq!(
            nodes(&s, &plan(&s, strategy)),
            [("c4".to_string(), vec!["p".to_string()])],
            "{strategy:?}"
        );
    }
    let s = snap(&(catalog + &with_init("5")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        assert_eq!(
            unschedulable(&s, &plan(&s, strategy)),
            ["p"],
            "{strategy:?}"
        );
    }
}

/// Extended resources only different flavors offer give separate nodes; a pod needing both
/// together, which no flavor has, stays pending.
#[test]
fn extended_resources_pick_the_flavors_that_have_them() {
    let gpu = |name: &str, kind: &str| {
        flavor(name, 4, "1.00", "").replace(
            "    capacity.cluster-autoscaler.kubernetes.io/price",
            &format!(
                "    capacity.cluster-autoscaler.kubernetes.io/gpu-count: '1'\n    capacity.cluster-autoscaler.kubernetes.io/gpu-type: {kind}\n    capacity.cluster-autoscaler.kubernetes.io/price"
            ),
        )
    };
    let wanting = |name: &str, resources: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: '1', memory: 128Mi}}, limits: {{{resources}}}}}}}]\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n"
        )
    };
    let catalog =
        gpu("nv", "nvidia.com/gpu") + &gpu("amd", "amd.com/gpu") + &flavor("c4", 4, "0.08", "");
    let s = snap(
        &(catalog.clone() + &wanting("a", "nvidia.com/gpu: 1") + &wanting("b", "amd.com/gpu: 1")),
    );
    for strategy in [Cost, KarpenterCapi] {
        assert_eq!(
            nodes(&s, &plan(&s, strategy)),
            [
                ("amd".to_string(), vec!["b".to_string()]),
                ("nv".to_string(), vec!["a".to_string()])
            ],
            "{strategy:?}"
        );
    }
    let s = snap(&(catalog + &wanting("both", "nvidia.com/gpu: 1, amd.com/gpu: 1")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        assert_eq!(
            unschedulable(&s, &plan(&s, strategy)),
            ["both"],
            "{strategy:?}"
        );
    }
}

/// Preferred node affinity: tried heaviest first, an impossible one yields to the next; one
/// that contradicts the required zone is dropped and the requirement holds; a single
/// impossible required term is never relaxed.
#[test]
fn node_preferences_are_tried_heaviest_first() {
    let preferring = |required: &str, preferred: &[(u32, &str)]| {
        let terms: Vec<String> = preferred
            .iter()
            .map(|(w, e)| format!("{{weight: {w}, preference: {{matchExpressions: [{e}]}}}}"))
            .collect();
        let required = if required.is_empty() {
            String::new()
        } else {
            format!(
                "requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{required}]}}]}}, "
            )
        };
        pod(
            "p",
            "app: p",
            "1",
            "",
            &format!(
                "\n  affinity: {{nodeAffinity: {{{required}preferredDuringSchedulingIgnoredDuringExecution: [{}]}}}}",
                terms.join(", ")
            ),
        )
    };
    let z = |op: &str, vals: &str| format!("{{key: {ZONE}, operator: {op}, values: [{vals}]}}");
    let cases = [
        (
            "impossible heavy, then z2, then z1",
            preferring(
                "",
                &[
                    (100, &z("In", "nowhere")),
                    (50, &z("In", "z2")),
                    (1, &z("In", "z1")),
                ],
            ),
            "c2-z2",
        ),
        (
            "required z3, preferred NotIn z3",
            preferring(&z("In", "z3"), &[(1, &z("NotIn", "z3"))]),
            "c2-z3",
        ),
        (
            "required In all, preferred NotIn z1 and z3",
            preferring(
                &z("In", "z1, z2, z3"),
                &[(1, &format!("{}, {}", z("NotIn", "z1"), z("NotIn", "z3")))],
            ),
            "c2-z2",
        ),
        (
            "required In every zone and one unknown, preferred In the unknown one",
            preferring(&z("In", "z1, z2, z3, unknown"), &[(1, &z("In", "unknown"))]),
            "c2-z1",
        ),
        (
            "required In every zone and one unknown, preferred NotIn every zone",
            preferring(
                &z("In", "z1, z2, z3, unknown"),
                &[(1, &z("NotIn", "z1, z2, z3"))],
            ),
            "c2-z1",
        ),
        (
            "a preference contradicting itself",
            preferring(
                "",
                &[(1, &format!("{}, {}", z("In", "z2"), z("NotIn", "z2")))],
            ),
            "c2-z1",
        ),
        (
            "selector z3, required and preferred agree",
            pod(
                "p",
                "app: p",
                "1",
                "",
                &format!(
                    "\n  nodeSelector: {{{ZONE}: z3}}\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{}]}}]}}, preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{}]}}}}]}}}}",
                    z("In", "z2, z3"),
                    z("In", "z3")
                ),
            ),
            "c2-z3",
        ),
    ];
    for (what, p, want) in cases {
        let s = snap(&(zonal() + &p));
        for strategy in [Cost, KarpenterCapi] {
            assert_eq!(
                nodes(&s, &plan(&s, strategy)),
                [(want.to_string(), vec!["p".to_string()])],
                "{what}, {strategy:?}"
            );
        }
    }
    // A sole impossible required term: pending, nothing relaxed.
    let s = snap(&(zonal() + &preferring(&z("In", "invalid"), &[(1, &z("In", "z1"))])));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(unschedulable(&s, &p), ["p"], "{strategy:?}");
        let relaxed: Vec<&String> = p.relaxed.iter().flat_map(|(_, notes)| notes).collect();
        assert!(
            relaxed.iter().all(|n| !n.contains("required")),
            "{strategy:?}: {relaxed:?}"
        );
    }
}

/// Required pod affinity to a pod that exists nowhere leaves the pods pending; a pod spreading
/// on a key no flavor has stays pending while a plain pod of the batch is placed.
#[test]
fn constraints_no_domain_can_meet_leave_only_their_pods_pending() {
    let affine = pod(
        "p",
        "app: p",
        "1",
        "",
        &format!(
            "\n  affinity: {{podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{app: ghost}}}}, topologyKey: {ZONE}}}]}}}}"
        ),
    );
    let spread = pod(
        "q",
        "app: q",
        "1",
        "",
        "\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: unknown, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: q}}}]",
    );
    let s = snap(&(zonal() + &affine + &spread + &pod("plain", "app: plain", "1", "", "")));
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert_eq!(unschedulable(&s, &p), ["p", "q"], "{strategy:?}");
        assert_eq!(
            nodes(&s, &p),
            [("c2-z1".to_string(), vec!["plain".to_string()])],
            "{strategy:?}"
        );
    }
}

/// A Node being deleted (its Machine going, say) takes no pods: though it has room and holds
/// three bound pods, the two pending pods share one new node (P-PROV-018), in every strategy
/// and in the controller's plan (one claim for both).
#[test]
fn a_deleting_node_takes_no_pods() {
    use crate::controller::{Config, action::Action, provision::provision};
    let deleting = node("n1", &format!(", {ZONE}: z1"), 4, "").replace(
        "metadata: {name: n1,",
        "metadata: {deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [example.com/hold], name: n1,",
    );
    let bound: String = (0..3)
        .map(|i| {
            pod(&format!("b{i}"), "app: b", "100m", "", "\n  nodeName: n1").replace(
                "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}",
                "status: {phase: Running}",
            )
        })
        .collect();
    assert!(bound.contains("Running"));
    let pending = pod("p", "app: p", "500m", "", "") + &pod("q", "app: p", "500m", "", "");
    let s = snap(&(zonal() + &deleting + &bound + &pending));
    assert!(s.nodes[0].deleting);
    for strategy in [Cost, KarpenterCapi, LeastWaste] {
        let p = plan(&s, strategy);
        assert!(p.on_existing.is_empty(), "{strategy:?}");
        assert_eq!(
            nodes(&s, &p),
            [("c2-z1".to_string(), vec!["p".to_string(), "q".to_string()])],
            "{strategy:?}"
        );
    }
    let now: jiff::Timestamp = "2026-12-01T10:00:00Z".parse().unwrap_or_default();
    let claims: Vec<Vec<String>> = provision(&s, now, &Config::default())
        .0
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { pods, .. } => Some(pods.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(claims.len(), 1, "{claims:?}");
    for p in ["default/p", "default/q"] {
        assert!(claims[0].iter().any(|c| c == p), "{claims:?}");
    }
}
