//! Consolidation keeps a pool's `minValues`: a replacement's options cheaper than the nodes it
//! replaces (and, replacing several, cheaper than any of them of a type among the options) must
//! keep the pool's `minValues`, or there is no replacement (core `computeConsolidation` and
//! `filterOutSameInstanceType` through `RemoveInstanceTypeOptionsByPriceAndMinValues`). The
//! catalog is the seed's: c3-4 (2 vCPU, 0.05/h), c3-8 (4, 0.10), c3-16 (8, 0.20).

use karpenter_capi::controller::{Action, Plan};
use karpenter_capi_testkit::Edit;

use crate::controller_disruption::{base, names, node, run, sized_pod, two_c3_8};

/// The seed pool's requirements with `node.kubernetes.io/instance-type Exists, minValues: 2`.
fn with_min_values(text: &str) -> String {
    text.edit(
        "      - key: karpenter.sh/capacity-type\n",
        "      - key: node.kubernetes.io/instance-type\n        operator: Exists\n        minValues: 2\n      - key: karpenter.sh/capacity-type\n",
    )
}

/// One node of `instance_type` (its capacity `cpu` vCPU) holding a 700m pod, consolidation of
/// underutilized nodes on.
fn one_node(instance_type: &str, cpu: u32) -> String {
    let pool = "    budgets: [{nodes: '100%'}]\n";
    let base = base(0, pool)
        .edit(
            "    consolidationPolicy: WhenEmpty\n",
            "    consolidationPolicy: WhenEmptyOrUnderutilized\n",
        )
        .edit_n(
            &format!("  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-{instance_type}"),
            &format!("  replicas: 1\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-{instance_type}"),
            1,
        );
    let n = node(1, 600, &sized_pod("a", 1, "", "700m"), "")
        .edit("c3-4", instance_type)
        .edit(
            "capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}",
            &format!("capacity: {{cpu: '{cpu}', memory: {}G, pods: '110'}}, allocatable: {{cpu: '{cpu}', memory: {}G, pods: '110'}}", cpu * 2, cpu * 2),
        );
    format!("{base}{n}")
}

/// The instance types of the plan's new NodeClaims.
fn created(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { instance_type, .. } => Some(instance_type.as_str()),
            _ => None,
        })
        .collect()
}

/// The nodes tainted for disruption, with the saving per hour.
fn tainted(p: &Plan) -> Vec<(&str, i64)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::TaintNode {
                node,
                saving_per_hour,
                ..
            } => Some((node.as_str(), saving_per_hour.0)),
            _ => None,
        })
        .collect()
}

/// A c3-8 node with a 700m pod is replaced by a c3-4; under `minValues: 2` only one type (c3-4)
/// is cheaper than it, so it stays. A c3-16 node has two cheaper types (c3-4, c3-8) and is
/// replaced by the c3-4 either way.
#[test]
fn a_replacement_needs_min_values_among_its_cheaper_options() {
    let free = run(&one_node("c3-8", 4));
    assert_eq!(created(&free), ["c3-4"], "{:?}", names(&free));
    assert_eq!(tainted(&free), [("node-1", 50_000_000)]);
    let strict = run(&with_min_values(&one_node("c3-8", 4)));
    assert!(created(&strict).is_empty(), "{:?}", names(&strict));
    assert!(tainted(&strict).is_empty(), "{:?}", names(&strict));
    let big = run(&with_min_values(&one_node("c3-16", 8)));
    assert_eq!(created(&big), ["c3-4"], "{:?}", names(&big));
    assert_eq!(tainted(&big), [("node-1", 150_000_000)]);
}

/// Two c3-8 nodes with 700m each: without `minValues` one c3-4 replaces both. Under
/// `minValues: 2` the replacement's options must be cheaper than a c3-8 (its own type is among
/// them), which leaves only c3-4: no replacement, and single-node consolidation deletes one node
/// instead (its pod fits on the other); nothing fails.
#[test]
fn replacing_several_nodes_filters_out_their_type_before_min_values() {
    let free = run(&two_c3_8("700m"));
    assert_eq!(created(&free), ["c3-4"], "{:?}", names(&free));
    let strict = run(&with_min_values(&two_c3_8("700m")));
    assert!(created(&strict).is_empty(), "{:?}", names(&strict));
    assert_eq!(tainted(&strict), [("node-1", 100_000_000)]);
}
