//! What the controller writes in a new NodeClaim, after the `NodeClaim Creation`, `Labels`,
//! `Taints` and grace-period cases of core v1.14's provisioning `suite_test.go` and the taint
//! cases of `topology_test.go` (core `nodeclaimtemplate.go` `ToNodeClaim`), in our own inputs:
//! the pool's requirements, labels, taints, startup taints, grace period, owner and node class
//! reference, and the requests of its pods plus the DaemonSet overhead counted once.

use serde_json::{Value, json};

use super::{daemonset, flavor, pod, snap};
use crate::controller::{Config, action::Action, provision::provision};

/// A NodePool `default` (uid `u-1`) with these extra `template.metadata` lines, requirement
/// flow maps and extra `template.spec` lines.
fn pool(metadata: &str, requirements: &[&str], spec: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default, uid: u-1}}\nspec:\n  template:{metadata}\n    spec:\n      nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: special}}\n      requirements: [{}]{spec}\n",
        requirements.join(", ")
    )
}

/// The manifests of the controller's new NodeClaims for this input (the batch window closed).
fn claims(text: &str) -> Vec<Value> {
    let s = snap(text);
    let (actions, notes) = provision(&s, jiff::Timestamp::now(), &Config::default());
    assert!(notes.is_empty(), "{notes:?}");
    actions
        .into_iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { manifest, .. } => Some(manifest),
            _ => None,
        })
        .collect()
}

/// The claim's requirement on `key`, if any.
fn requirement<'a>(claim: &'a Value, key: &str) -> Option<&'a Value> {
    claim["spec"]["requirements"]
        .as_array()?
        .iter()
        .find(|r| r["key"] == key)
}

/// Two pods and a DaemonSet on one claim of a pool with custom requirements, template labels in
/// the Kubernetes domains, a taint, a startup taint and a grace period: the claim carries each
/// of them, its pods' tolerations add no taint, a pod not tolerating the startup taint still
/// lands on it, the requests are both pods' plus the DaemonSet's once, and the owner and node
/// class reference are the pool's.
#[test]
fn a_claim_carries_its_pools_template_and_its_pods_requests() {
    let metadata =
        "\n    metadata:\n      labels: {kubernetes.io/test: v1, subdomain.k8s.io/test: v2}";
    let spec = "\n      taints: [{key: dedicated, value: x, effect: NoSchedule}]\n      startupTaints: [{key: example.com/agent, effect: NoSchedule}]\n      terminationGracePeriod: 1h";
    let requirements = [
        "{key: foo, operator: In, values: [bar]}",
        "{key: node.kubernetes.io/windows-build, operator: NotIn, values: [w1]}",
    ];
    let tolerate =
        "\n  tolerations: [{key: dedicated, operator: Exists}, {key: other, operator: Exists}]";
    let text = pool(metadata, &requirements, spec)
        + &flavor("c4", 4, "0.10", "")
        + &daemonset(
            "agent",
            "100m",
            "",
            "\n      tolerations: [{operator: Exists}]",
        )
        + &pod("a", "app: a", "500m", "", tolerate)
        + &pod("b", "app: b", "700m", "", tolerate);
    let got = claims(&text);
    assert_eq!(got.len(), 1, "{got:#?}");
    let claim = &got[0];
    // Requirements: the pool's custom ones as written (P-PROV-058), the windows-build NotIn too.
    assert_eq!(
        requirement(claim, "foo"),
        Some(&json!({"key": "foo", "operator": "In", "values": ["bar"]}))
    );
    assert_eq!(
        requirement(claim, "node.kubernetes.io/windows-build"),
        Some(
            &json!({"key": "node.kubernetes.io/windows-build", "operator": "NotIn", "values": ["w1"]})
        )
    );
    // Beside them, the pool (In [default]) and the chosen flavor's instance type (P-PROV-057
    // differs: only that one).
    assert_eq!(
        requirement(claim, "karpenter.sh/nodepool"),
        Some(&json!({"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}))
    );
    assert_eq!(
        requirement(claim, "node.kubernetes.io/instance-type"),
        Some(
            &json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c4"]})
        )
    );
    // Labels: the template's in Kubernetes domains and the single-valued In, never a value of
    // the NotIn (P-PROV-052..055).
    let labels = &claim["metadata"]["labels"];
    assert_eq!(labels["kubernetes.io/test"], "v1");
    assert_eq!(labels["subdomain.k8s.io/test"], "v2");
    assert_eq!(labels["foo"], "bar");
    assert!(labels.get("node.kubernetes.io/windows-build").is_none());
    // Taints: the pool's only (S-TOPO-087, S-TOPO-090); the startup taint apart (S-TOPO-089).
    assert_eq!(
        claim["spec"]["taints"],
        json!([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    );
    assert_eq!(
        claim["spec"]["startupTaints"],
        json!([{"key": "example.com/agent", "effect": "NoSchedule"}])
    );
    // The pool's grace period (P-PROV-008), owner (P-PROV-062) and node class (P-PROV-063).
    assert_eq!(claim["spec"]["terminationGracePeriod"], "1h");
    assert_eq!(
        claim["metadata"]["ownerReferences"][0]["uid"], "u-1",
        "{:#}",
        claim["metadata"]
    );
    assert_eq!(
        claim["spec"]["nodeClassRef"],
        json!({"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "special"})
    );
    // 500m + 700m + the DaemonSet's 100m once (P-PROV-066).
    assert_eq!(claim["spec"]["resources"]["requests"]["cpu"], "1300m");
    assert_eq!(
        claim["spec"]["resources"]["requests"]["memory"],
        (2 * 128 * 1024 * 1024 + 64 * 1024 * 1024).to_string()
    );
}

/// A pool without a grace period writes none (P-PROV-007: we have no global default).
#[test]
fn no_grace_period_when_the_pool_sets_none() {
    let text = pool("", &[], "") + &flavor("c4", 4, "0.10", "") + &pod("a", "app: a", "1", "", "");
    let got = claims(&text);
    assert_eq!(got.len(), 1);
    assert!(got[0]["spec"].get("terminationGracePeriod").is_none());
    assert!(got[0]["spec"].get("taints").is_none());
}
