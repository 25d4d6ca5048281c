//! A NodeClaim's instance types are cut to the cheapest [`MAX_INSTANCE_TYPES`] (600 in core
//! v1.14; its test suite uses 60), and a claim the cut leaves short of its pool's `minValues` is
//! not created: its pods stay pending with the reason (core `Results.TruncateInstanceTypes`,
//! `InstanceTypes.Truncate`, the default `Strict` policy). After core's
//! `instance_selection_test.go` "minValues unmet after truncation", in our own inputs.

use super::{flavor, plan, pod, snap};
use crate::controller::{Config, action::Action, provision::provision};
use crate::sched::Unfit;
use crate::sched::min_values::{
    MAX_INSTANCE_TYPES, claim_instance_types, truncation_unmet, truncation_unmet_within,
};
use crate::sched::strategy::StrategyName::Cost;
use crate::vocab::keys::ZONE;

/// A pool needing two zones per claim, `cheap` one-core flavors in z1 priced from 0.01 up and
/// one dearer flavor in z2, and one pending pod.
fn world(cheap: usize) -> String {
    let mut text = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: [{{key: {ZONE}, operator: In, values: [z1, z2], minValues: 2}}]\n"
    );
    for i in 0..cheap {
        text.push_str(&flavor(
            &format!("a{i:04}"),
            1,
            &format!("0.{:06}", 10_000 + i),
            &format!("{ZONE}=z1"),
        ));
    }
    text.push_str(&flavor("z-late", 1, "0.90", &format!("{ZONE}=z2")));
    text + &pod("p", "app: p", "500m", "", "")
}

/// Five cheap z1 types and one z2 type: the plan's node keeps both zones among its six
/// options; cut to five (the cheapest, all in z1) it misses the zone's `minValues`, cut to six
/// it keeps them.
#[test]
fn a_claim_cut_below_its_zone_min_values_is_refused() {
    let s = snap(&world(5));
    let p = plan(&s, Cost);
    assert_eq!(p.new_nodes.len(), 1);
    let node = &p.new_nodes[0];
    assert_eq!(node.offering.flavor.instance_type, "a0000");
    assert_eq!(
        claim_instance_types(&s, node).map(|t| t.len()),
        Some(6),
        "every option, z-late last"
    );
    assert_eq!(
        truncation_unmet_within(&s, node, 5),
        Some(Unfit::MinValuesUnmet {
            node_pool: "default".into(),
            key: ZONE.into(),
            min: 2,
            found: 1
        })
    );
    assert_eq!(truncation_unmet_within(&s, node, 6), None);
    assert_eq!(truncation_unmet(&s, node), None);
}

/// At the real limit: with 600 cheaper z1 types the controller's claim would list only z1 and
/// is not created (the pod is noted with the `minValues` reason); with 599 it lists 600 types,
/// z-late the last, and is created.
#[test]
fn the_controller_refuses_a_claim_the_600_type_cut_leaves_in_one_zone() {
    let now = jiff::Timestamp::now();
    let s = snap(&world(MAX_INSTANCE_TYPES));
    let (actions, notes) = provision(&s, now, &Config::default());
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, Action::CreateNodeClaim { .. })),
        "{actions:?}"
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("default/p") && notes[0].contains("minValues"),
        "{notes:?}"
    );
    let s = snap(&world(MAX_INSTANCE_TYPES - 1));
    let (actions, notes) = provision(&s, now, &Config::default());
    assert!(notes.is_empty(), "{notes:?}");
    let listed: Vec<Vec<serde_json::Value>> = actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => manifest["spec"]["requirements"]
                .as_array()
                .and_then(|r| {
                    r.iter()
                        .find(|r| r["key"] == "node.kubernetes.io/instance-type")
                })
                .and_then(|r| r["values"].as_array().cloned()),
            _ => None,
        })
        .collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].len(), MAX_INSTANCE_TYPES);
    assert_eq!(listed[0][0], "a0000");
    assert_eq!(listed[0][MAX_INSTANCE_TYPES - 1], "z-late");
}

/// `karpenter-capi` (v1.5: 60 types, every price 0, so list order): with the z2 type listed
/// 61st the claim keeps only z1 and its pod stays pending with the `minValues` reason; listed
/// 60th it is kept and the pod placed.
#[test]
fn karpenter_capi_refuses_a_claim_its_60_type_cut_leaves_in_one_zone() {
    use crate::sched::strategy::StrategyName::KarpenterCapi;
    use crate::sched::strategy::karpenter_capi::MAX_INSTANCE_TYPES as V15_MAX;
    let s = snap(&world(V15_MAX));
    let p = plan(&s, KarpenterCapi);
    assert!(p.new_nodes.is_empty());
    let reasons: Vec<&Unfit> = p
        .unschedulable
        .iter()
        .flat_map(|(_, r)| r.iter().map(|r| &r.unfit))
        .collect();
    assert!(
        reasons.contains(&&Unfit::MinValuesUnmet {
            node_pool: "default".into(),
            key: ZONE.into(),
            min: 2,
            found: 1
        }),
        "{reasons:?}"
    );
    let s = snap(&world(V15_MAX - 1));
    let p = plan(&s, KarpenterCapi);
    assert_eq!(p.new_nodes.len(), 1);
    assert!(p.unschedulable.is_empty());
}
