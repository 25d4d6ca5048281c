//! Rule 5: NodePool template labels are requirements: a flavor with another value is never
//! offered, one lacking the key only for custom keys (the claim then labels the Node), and the
//! NodeClaim's labels never disagree with its MachineDeployment's.

use super::{flavor, plan, pod, single, snap};
use crate::controller::provision::claim_labels;
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

use crate::vocab::keys::ZONE;

fn pool(labels: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    metadata: {{labels: {{{labels}}}}}\n    spec:\n      requirements: []\n"
    )
}

/// Every label the new node's flavor defines is on its NodeClaim with the same value; returns
/// the claim's labels of the single new node.
fn agreeing_claim(s: &Snapshot, p: &Placement) -> crate::model::labels::Labels {
    assert_eq!(p.new_nodes.len(), 1, "{:?}", p.strategy);
    let o = &p.new_nodes[0].offering;
    let labels = claim_labels(&s.nodepools[o.pool_index], o);
    for (k, v) in &o.flavor.labels {
        assert_eq!(labels.get(k), Some(v), "{:?}: {k}", p.strategy);
    }
    labels
}

#[test]
fn a_zone_template_label_offers_only_flavors_of_that_zone() {
    let text = pool(&format!("{ZONE}: z1"))
        + &flavor("c2-z2", 2, "0.04", &format!("{ZONE}=z2"))
        + &flavor("c2-nozone", 2, "0.03", "")
        + &flavor("c4-z1", 4, "0.08", &format!("{ZONE}=z1"))
        + &pod("p", "app: p", "1", "", "");
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            single(&s, &p),
            ("c4-z1".into(), vec!["p".into()]),
            "{strategy:?}"
        );
        assert_eq!(
            agreeing_claim(&s, &p).get(ZONE).map(String::as_str),
            Some("z1")
        );
    }
}

#[test]
fn a_well_known_template_label_the_flavor_lacks_rules_it_out() {
    let text = pool("kubernetes.io/arch: arm64")
        + &flavor("c2", 2, "0.04", "")
        + &flavor("c2-amd", 2, "0.04", "kubernetes.io/arch=amd64")
        + &flavor("c4-arm", 4, "0.08", "kubernetes.io/arch=arm64")
        + &pod("p", "app: p", "1", "", "");
    let s = snap(&text);
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(&s, strategy);
        assert_eq!(
            single(&s, &p),
            ("c4-arm".into(), vec!["p".into()]),
            "{strategy:?}"
        );
    }
    // The capacity type is the provider's: on-demand, which a flavor need not label.
    for (capacity, want) in [("on-demand", Some("c2")), ("spot", None)] {
        let s = snap(
            &(pool(&format!("karpenter.sh/capacity-type: {capacity}"))
                + &flavor("c2", 2, "0.04", "")
                + &pod("p", "app: p", "1", "", "")),
        );
        let p = plan(&s, Cost);
        let got = p
            .new_nodes
            .first()
            .map(|n| n.offering.flavor.instance_type.as_str());
        assert_eq!(got, want, "{capacity}");
    }
    // Nothing left: the pod says which pool label ruled the flavor out.
    let s = snap(
        &(pool("kubernetes.io/arch: s390x")
            + &flavor("c2", 2, "0.04", "")
            + &pod("p", "app: p", "1", "", "")),
    );
    let p = plan(&s, Cost);
    assert_eq!(p.unschedulable.len(), 1);
    assert_eq!(
        p.unschedulable[0].1[0].to_string(),
        "default/c2: NodePool default requires kubernetes.io/arch In [s390x] (template label)"
    );
}

/// A custom template label: a flavor without it is offered and labelled by its claim, one
/// with another value is not; a pod selecting the label lands there.
#[test]
fn a_custom_template_label_the_flavor_lacks_is_the_claims_to_give() {
    let catalog = pool("team: web")
        + &flavor("c2-ml", 2, "0.04", "team=ml")
        + &flavor("c2", 2, "0.05", "")
        + &flavor("c4-web", 4, "0.09", "team=web");
    let requiring = |values: &str| {
        format!(
            "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: team, operator: In, values: [{values}]}}]}}]}}}}}}"
        )
    };
    // An In list holding the template's value (S-SCHED-004) is served as a selector of it.
    for spec in [
        String::new(),
        "\n  nodeSelector: {team: web}".to_string(),
        requiring("other, web"),
    ] {
        let s = snap(&(catalog.clone() + &pod("p", "app: p", "1", "", &spec)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert_eq!(
                single(&s, &p),
                ("c2".into(), vec!["p".into()]),
                "{strategy:?}"
            );
            assert_eq!(
                p.new_nodes[0]
                    .offering
                    .labels
                    .get("team")
                    .map(String::as_str),
                Some("web")
            );
            assert_eq!(
                agreeing_claim(&s, &p).get("team").map(String::as_str),
                Some("web")
            );
        }
    }
    // Selecting another value (S-SCHED-002), even one a flavor carries, or an In list without
    // the template's value: no node, though the ml flavor is the cheapest.
    for spec in [
        "\n  nodeSelector: {team: ml}".to_string(),
        requiring("ml, other"),
    ] {
        let s = snap(&(catalog.clone() + &pod("p", "app: p", "1", "", &spec)));
        for strategy in [Cost, KarpenterCapi] {
            let p = plan(&s, strategy);
            assert!(p.new_nodes.is_empty(), "{spec} {strategy:?}");
            assert_eq!(p.unschedulable.len(), 1, "{spec} {strategy:?}");
        }
    }
}
