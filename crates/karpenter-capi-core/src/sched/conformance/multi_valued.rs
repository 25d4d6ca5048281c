//! Rule 1: a multi-valued NodePool requirement on a key no flavor defines (`test-key In [b,
//! a]`): a pod asking for one value gets a node labelled with it, one asking for none the
//! smallest allowed value, pods spread on the key distinct values; the claim's requirement is
//! narrowed to the value and its label carries it to the Node.

use std::collections::BTreeMap;

use super::{flavor, plan, pod, snap, unschedulable};
use crate::controller::action::Action;
use crate::controller::provision::create_node_claim;
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements:\n      - {key: test-key, operator: In, values: [b, a]}\n      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}\n";

fn catalog() -> String {
    POOL.to_string() + &flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "")
}

/// Per new node: (instance type, its `test-key` label, the claim's label and its requirement
/// values for the key), sorted.
fn claims(s: &Snapshot, p: &Placement) -> Vec<(String, String, String, Vec<String>)> {
    let mut out: Vec<_> = p
        .new_nodes
        .iter()
        .map(|n| {
            let o = &n.offering;
            let Action::CreateNodeClaim { manifest, .. } =
                create_node_claim(s, &s.nodepools[o.pool_index], n, "test")
            else {
                panic!("not a claim")
            };
            let requirement: Vec<String> = manifest["spec"]["requirements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["key"] == "test-key")
                .map(|r| {
                    r["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            (
                o.flavor.instance_type.clone(),
                o.labels.get("test-key").cloned().unwrap_or_default(),
                manifest["metadata"]["labels"]["test-key"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                requirement,
            )
        })
        .collect();
    out.sort();
    out
}

fn claim(value: &str) -> (String, String, String, Vec<String>) {
    ("c2".into(), value.into(), value.into(), vec![value.into()])
}

#[test]
fn a_pod_gets_the_value_it_asks_for_or_the_smallest() {
    let affinity = |values: &str| {
        format!(
            "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: test-key, operator: In, values: [{values}]}}]}}]}}}}}}"
        )
    };
    let cases = [
        ("no constraint", String::new(), "a"),
        ("nodeSelector b", "\n  nodeSelector: {test-key: b}".to_string(), "b"),
        ("affinity In [a, c]", affinity("c, a"), "a"),
        ("affinity In [b, c]", affinity("c, b"), "b"),
        (
            "affinity NotIn [a]",
            "\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: test-key, operator: NotIn, values: [a]}]}]}}}".to_string(),
            "b",
        ),
    ];
    for (what, spec, value) in cases {
        let s = snap(&(catalog() + &pod("p", "app: p", "1", "", &spec)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(claims(&s, &p), vec![claim(value)], "{what}, {strategy:?}");
            // The capacity type stays the provider's single offering, not a choice.
            let o = &p.new_nodes[0].offering;
            assert_eq!(
                o.labels
                    .get("karpenter.sh/capacity-type")
                    .map(String::as_str),
                Some("on-demand"),
                "{what}"
            );
        }
    }
    // A value the pool does not allow: pending.
    let s = snap(&(catalog() + &pod("p", "app: p", "1", "", "\n  nodeSelector: {test-key: c}")));
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(unschedulable(&s, &p), vec!["p".to_string()], "{strategy:?}");
    }
}

/// Pods spread on the key (maxSkew 1, DoNotSchedule) get both values, evenly.
#[test]
fn pods_spread_on_the_key_get_distinct_values() {
    for count in [2usize, 3, 4] {
        let mut text = catalog();
        for i in 0..count {
            text += &pod(
                &format!("s-{i}"),
                "app: s",
                "1500m",
                "",
                "\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: test-key, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: s}}}",
            );
        }
        let s = snap(&text);
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert!(unschedulable(&s, &p).is_empty(), "{count}, {strategy:?}");
            let mut per_value: BTreeMap<String, usize> = BTreeMap::new();
            for n in &p.new_nodes {
                *per_value
                    .entry(n.offering.labels["test-key"].clone())
                    .or_default() += n.pods.len();
            }
            assert_eq!(
                per_value.keys().map(String::as_str).collect::<Vec<_>>(),
                vec!["a", "b"],
                "{count}, {strategy:?}"
            );
            let mut sizes: Vec<usize> = per_value.values().copied().collect();
            sizes.sort_unstable();
            assert_eq!(
                sizes,
                vec![count / 2, count.div_ceil(2)],
                "{count}, {strategy:?}"
            );
            for c in claims(&s, &p) {
                assert_eq!(c.2, c.1, "{count}, {strategy:?}");
                assert_eq!(c.3, vec![c.1.clone()], "{count}, {strategy:?}");
            }
        }
    }
}

/// A NodePool `name` requiring `fake-label In [values]`, tainted `taint-key={taint}:NoSchedule`
/// when a taint is given.
fn tainted_pool(name: &str, values: &str, taint: Option<&str>) -> String {
    let taints = taint
        .map(|t| format!("\n      taints: [{{key: taint-key, value: {t}, effect: NoSchedule}}]"))
        .unwrap_or_default();
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:{taints}\n      requirements:\n      - {{key: fake-label, operator: In, values: [{values}]}}\n"
    )
}

/// `count` pods spread on `fake-label` (maxSkew 1) with this nodeTaintsPolicy, tolerating
/// `taint-key={toleration}` when given, named `{prefix}-<i>`.
fn taint_policy_pods(prefix: &str, count: usize, policy: &str, toleration: Option<&str>) -> String {
    let tolerations = toleration
        .map(|t| format!("\n  tolerations: [{{key: taint-key, value: {t}, effect: NoSchedule}}]"))
        .unwrap_or_default();
    (0..count)
        .map(|i| {
            pod(
                &format!("{prefix}-{i}"),
                "app: s",
                "1500m",
                "",
                &format!(
                    "\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: fake-label, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: {policy}, labelSelector: {{matchLabels: {{app: s}}}}}}{tolerations}"
                ),
            )
        })
        .collect()
}

/// Pods per `fake-label` value over the new nodes.
fn per_fake_label(p: &Placement) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for n in &p.new_nodes {
        *out.entry(n.offering.labels["fake-label"].clone())
            .or_default() += n.pods.len();
    }
    out
}

/// Domains from pool requirements under `nodeTaintsPolicy`: an untainted pool offering `foo`
/// and a tainted one offering `bar` the pods do not tolerate. Ignore counts `bar` as a domain
/// no pod can reach, so of two pods one goes to `foo` and the other stays pending (S-TOPO-044);
/// Honor leaves `bar` out, so both go to `foo` (S-TOPO-045).
#[test]
fn domains_of_a_tainted_pool_follow_the_node_taints_policy() {
    let flavors = flavor("c2", 2, "0.05", "");
    let pools = tainted_pool("plain", "foo", None) + &tainted_pool("tainted", "bar", Some("v"));
    for (policy, placed, pending) in [("Ignore", 1, 1), ("Honor", 2, 0)] {
        let s = snap(&(pools.clone() + &flavors + &taint_policy_pods("s", 2, policy, None)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(
                per_fake_label(&p),
                BTreeMap::from([("foo".to_string(), placed)]),
                "{policy}, {strategy:?}"
            );
            assert_eq!(
                unschedulable(&s, &p).len(),
                pending,
                "{policy}, {strategy:?}"
            );
        }
    }
}

/// Two tainted pools share `foo`, the first also offering `bar`, the second `baz`; two pods
/// tolerate the first pool and four the second, all selecting each other, under Honor. Each
/// group counts only the domains of the pool it tolerates, so the six pods end up 3, 2 and 1
/// over the three values, `bar` holding only first-group pods and `baz` only second-group ones
/// (S-TOPO-046).
#[test]
fn tainted_pools_sharing_a_domain_spread_each_group_over_its_own() {
    let flavors = flavor("c2", 2, "0.05", "");
    let text = tainted_pool("np0", "foo, bar", Some("np-0"))
        + &tainted_pool("np1", "foo, baz", Some("np-1"))
        + &flavors
        + &taint_policy_pods("a", 2, "Honor", Some("np-0"))
        + &taint_policy_pods("b", 4, "Honor", Some("np-1"));
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(unschedulable(&s, &p).is_empty(), "{strategy:?}");
        let counts = per_fake_label(&p);
        let mut sizes: Vec<usize> = counts.values().copied().collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![1, 2, 3], "{strategy:?}: {counts:?}");
        for n in &p.new_nodes {
            let value = n.offering.labels["fake-label"].as_str();
            for &i in &n.pods {
                let group = &s.pods[i].demand.name[..1];
                assert!(
                    !(value == "bar" && group == "b" || value == "baz" && group == "a"),
                    "{strategy:?}: {counts:?}"
                );
            }
        }
    }
}

/// Two pods whose requirements agree on `b` (In [b], NotIn [a]) share one node labelled `b`
/// (S-SCHED-042, S-SCHED-078); pods requiring `a` and `b` get a node each, labelled with their
/// value (S-SCHED-043, S-SCHED-079). The claims are narrowed to the node's value.
#[test]
fn pods_agreeing_on_a_value_share_a_node_and_others_do_not() {
    let requiring = |name: &str, op: &str, value: &str| {
        pod(
            name,
            "app: p",
            "500m",
            "",
            &format!(
                "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: test-key, operator: {op}, values: [{value}]}}]}}]}}}}}}"
            ),
        )
    };
    // (pods, pod names per node with its test-key label, sorted)
    let cases = [
        (
            requiring("in-b", "In", "b") + &requiring("not-a", "NotIn", "a"),
            vec![("b", vec!["in-b", "not-a"])],
        ),
        (
            requiring("in-a", "In", "a") + &requiring("in-b", "In", "b"),
            vec![("a", vec!["in-a"]), ("b", vec!["in-b"])],
        ),
    ];
    for (pods, want) in cases {
        let s = snap(&(catalog() + &pods));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            let mut got: Vec<(String, Vec<String>)> = p
                .new_nodes
                .iter()
                .map(|n| {
                    let mut names: Vec<String> = n
                        .pods
                        .iter()
                        .map(|&i| s.pods[i].demand.name.clone())
                        .collect();
                    names.sort();
                    (n.offering.labels["test-key"].clone(), names)
                })
                .collect();
            got.sort();
            let want: Vec<(String, Vec<String>)> = want
                .iter()
                .map(|(v, names)| (v.to_string(), names.iter().map(|n| n.to_string()).collect()))
                .collect();
            assert_eq!(got, want, "{strategy:?}");
            for c in claims(&s, &p) {
                assert_eq!(c.2, c.1, "{strategy:?}");
                assert_eq!(c.3, vec![c.1.clone()], "{strategy:?}");
            }
        }
    }
}

/// Two pools offering values of one custom key, `2, 3, 4, 5` and `1`: twenty pods spread on it
/// get four per value, so sixteen land on the first pool's nodes and four on the second's
/// (S-TOPO-037; upstream splits its pools by capacity type, which our provider does not offer).
#[test]
fn pools_offering_values_of_a_key_are_its_domains() {
    let pool = |name: &str, values: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      requirements:\n      - {{key: spread-key, operator: In, values: [{values}]}}\n"
        )
    };
    let mut text =
        pool("many", "'2', '3', '4', '5'") + &pool("one", "'1'") + &flavor("c4", 4, "0.08", "");
    for i in 0..20 {
        text += &pod(
            &format!("s-{i:02}"),
            "app: s",
            "500m",
            "",
            "\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: spread-key, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: s}}}",
        );
    }
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert!(unschedulable(&s, &p).is_empty(), "{strategy:?}");
        let mut per_value: BTreeMap<String, usize> = BTreeMap::new();
        let mut per_pool: BTreeMap<String, usize> = BTreeMap::new();
        for n in &p.new_nodes {
            *per_value
                .entry(n.offering.labels["spread-key"].clone())
                .or_default() += n.pods.len();
            *per_pool.entry(n.offering.node_pool.clone()).or_default() += n.pods.len();
        }
        assert_eq!(
            per_value,
            (1..=5)
                .map(|v| (v.to_string(), 4))
                .collect::<BTreeMap<_, _>>(),
            "{strategy:?}"
        );
        assert_eq!(
            per_pool,
            BTreeMap::from([("many".to_string(), 16), ("one".to_string(), 4)]),
            "{strategy:?}"
        );
    }
}
