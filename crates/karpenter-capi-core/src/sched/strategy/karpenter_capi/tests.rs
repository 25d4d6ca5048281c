//! Each upstream rule of the `karpenter-capi` strategy on an instance where it changes the
//! outcome: flavor names and counts, and which pods share a NodeClaim.

use super::MAX_INSTANCE_TYPES;
use crate::model::load::{Source, snapshot_from_sources};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::{Placement, StrategyName, by_name, queue_order};
use karpenter_capi_testkit::Edit;

/// A member MachineDeployment of `cpu` cores and 64Gi, named after its instance type.
fn flavor(name: &str, cpu: u32) -> String {
    format!(
        "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: {name}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: 64Gi\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type={name}\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n"
    )
}

/// A NodePool with these extra `spec` lines (limits) and requirement lines.
fn pool(requirements: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    spec:\n      requirements: [{requirements}]\n{spec}"
    )
}

/// A pending pod of `millis` CPU; `group` adds hostname anti-affinity to its group.
fn pod(name: &str, millis: u32, group: Option<&str>, meta: &str) -> String {
    let (labels, anti) = match group {
        Some(g) => (
            format!("{{group: {g}}}"),
            format!(
                "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{group: {g}}}}}\n        topologyKey: kubernetes.io/hostname"
            ),
        ),
        None => ("{}".to_string(), String::new()),
    };
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {labels}{meta}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {millis}m, memory: 1Gi}}}}}}]{anti}\n"
    )
}

fn snapshot(yaml: &str) -> Snapshot {
    snapshot_from_sources(&[Source {
        name: "test".into(),
        text: yaml.to_string(),
    }])
    .unwrap()
}

fn plan(snap: &Snapshot) -> Placement {
    let pending: Vec<usize> = (0..snap.pods.len()).collect();
    by_name(StrategyName::KarpenterCapi).plan(snap, &pending)
}

fn counts(p: &Placement) -> Vec<(String, usize)> {
    p.node_counts()
}

/// Pod names per new node, each sorted, nodes sorted.
fn groups(snap: &Snapshot, p: &Placement) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = p
        .new_nodes
        .iter()
        .map(|n| {
            let mut names: Vec<String> = n
                .pods
                .iter()
                .map(|&i| snap.pods[i].demand.name.clone())
                .collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

fn unschedulable(snap: &Snapshot, p: &Placement) -> Vec<String> {
    p.unschedulable
        .iter()
        .map(|(i, _)| snap.pods[*i].demand.name.clone())
        .collect()
}

#[test]
fn truncation_to_60_in_list_order_comes_before_the_name_sort() {
    // 60 flavors listed first, then `a-last`, which wins any name sort.
    let mut yaml: String = (0..MAX_INSTANCE_TYPES)
        .map(|i| flavor(&format!("m{i:02}"), 4))
        .collect();
    yaml.push_str(&flavor("a-last", 4));
    yaml.push_str(&pod("p", 1000, None, ""));
    let p = plan(&snapshot(&yaml));
    // Karpenter sends the first 60 (list order: every price is 0); `a-last` is not among them.
    assert_eq!(counts(&p), vec![("m00".to_string(), 1)]);

    // With 60 flavors in all, nothing is dropped and the name sort picks `a-last`.
    let mut yaml: String = (0..MAX_INSTANCE_TYPES - 1)
        .map(|i| flavor(&format!("m{i:02}"), 4))
        .collect();
    yaml.push_str(&flavor("a-last", 4));
    yaml.push_str(&pod("p", 1000, None, ""));
    let p = plan(&snapshot(&yaml));
    assert_eq!(counts(&p), vec![("a-last".to_string(), 1)]);
}

#[test]
fn claims_are_resorted_by_fewest_pods_before_each_pod() {
    // p1 and p2 repel each other: two claims. p3 joins the first; p4 then goes to the claim
    // with fewer pods (the second), so both claims stay small enough for `a-2cpu`. Without the
    // re-sort p4 would join the first claim too and force it onto `b-8cpu`.
    let yaml = [
        flavor("a-2cpu", 2),
        flavor("b-8cpu", 8),
        pod("p1", 1000, Some("g"), ""),
        pod("p2", 1000, Some("g"), ""),
        pod("p3", 900, None, ""),
        pod("p4", 900, None, ""),
    ]
    .concat();
    let snap = snapshot(&yaml);
    let p = plan(&snap);
    assert_eq!(counts(&p), vec![("a-2cpu".to_string(), 2)]);
    assert_eq!(
        groups(&snap, &p),
        vec![
            vec!["p1".to_string(), "p3".to_string()],
            vec!["p2".to_string(), "p4".to_string()]
        ]
    );
}

#[test]
fn pod_order_is_cpu_memory_creation_then_uid() {
    // Equal requests: the earlier creation time first, whatever the names.
    let yaml = [
        flavor("a-2cpu", 2),
        flavor("b-8cpu", 8),
        pod("p1", 1000, Some("g"), ""),
        pod("p2", 1000, Some("g"), ""),
        pod(
            "p3",
            900,
            None,
            ", creationTimestamp: '2026-01-01T00:00:02Z', uid: u1",
        ),
        pod(
            "p4",
            900,
            None,
            ", creationTimestamp: '2026-01-01T00:00:01Z', uid: u2",
        ),
    ]
    .concat();
    let snap = snapshot(&yaml);
    let pending: Vec<usize> = (0..snap.pods.len()).collect();
    let names = |q: Vec<usize>| -> Vec<String> {
        q.iter()
            .map(|&i| snap.pods[i].demand.name.clone())
            .collect()
    };
    assert_eq!(
        names(queue_order(&snap, &pending)),
        ["p1", "p2", "p4", "p3"]
    );
    // p4 comes first, so it is the one that joins p1's claim.
    let p = plan(&snap);
    assert_eq!(
        groups(&snap, &p),
        vec![
            vec!["p1".to_string(), "p4".to_string()],
            vec!["p2".to_string(), "p3".to_string()]
        ]
    );

    // Same second: the uid decides (u1 before u2), not the name.
    let yaml = [
        flavor("a-2cpu", 2),
        flavor("b-8cpu", 8),
        pod("p1", 1000, Some("g"), ""),
        pod("p2", 1000, Some("g"), ""),
        pod(
            "p3",
            900,
            None,
            ", creationTimestamp: '2026-01-01T00:00:01Z', uid: u2",
        ),
        pod(
            "p4",
            900,
            None,
            ", creationTimestamp: '2026-01-01T00:00:01Z', uid: u1",
        ),
    ]
    .concat();
    let snap = snapshot(&yaml);
    let pending: Vec<usize> = (0..snap.pods.len()).collect();
    let order: Vec<String> = queue_order(&snap, &pending)
        .iter()
        .map(|&i| snap.pods[i].demand.name.clone())
        .collect();
    assert_eq!(order, ["p1", "p2", "p4", "p3"]);
    let p = plan(&snap);
    assert_eq!(
        groups(&snap, &p),
        vec![
            vec!["p1".to_string(), "p4".to_string()],
            vec!["p2".to_string(), "p3".to_string()]
        ]
    );
    // CPU first: the bigger pods lead whatever their creation time.
    assert!(order.starts_with(&["p1".to_string(), "p2".to_string()]));
}

#[test]
fn limits_are_charged_with_the_largest_initial_option() {
    // cpu limit 10. p1's claim may still become `b-8cpu`, so it is charged 8 cores even though
    // the provider will launch `a-4cpu`: only 2 remain and p2 (which repels p1) gets no claim.
    let yaml = [
        flavor("a-4cpu", 4),
        flavor("b-8cpu", 8),
        pool("", "  limits: {cpu: '10'}\n"),
        pod("p1", 3000, Some("g"), ""),
        pod("p2", 3000, Some("g"), ""),
    ]
    .concat();
    let snap = snapshot(&yaml);
    let p = plan(&snap);
    assert_eq!(counts(&p), vec![("a-4cpu".to_string(), 1)]);
    assert_eq!(unschedulable(&snap, &p), ["p2"]);

    // With room for the largest option twice, both are placed, each on `a-4cpu`.
    let yaml = yaml.edit("cpu: '10'", "cpu: '16'");
    let p = plan(&snapshot(&yaml));
    assert_eq!(counts(&p), vec![("a-4cpu".to_string(), 2)]);
    assert!(p.unschedulable.is_empty());
}

#[test]
fn min_values_keeps_a_claim_flexible() {
    let flavors = [
        flavor("a-2cpu", 2),
        flavor("b-4cpu", 4),
        flavor("c-8cpu", 8),
    ]
    .concat();
    let pods = [pod("p1", 3000, None, ""), pod("p2", 3000, None, "")].concat();
    // Without minValues both pods share one claim, narrowed to `c-8cpu`.
    let p = plan(&snapshot(&format!("{flavors}{}{pods}", pool("", ""))));
    assert_eq!(counts(&p), vec![("c-8cpu".to_string(), 1)]);

    // minValues 2 on the instance type: p2 would leave p1's claim one type, so it opens its
    // own; each claim keeps {b, c} and the provider launches `b-4cpu` twice.
    let req = "{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 2}";
    let p = plan(&snapshot(&format!("{flavors}{}{pods}", pool(req, ""))));
    assert_eq!(counts(&p), vec![("b-4cpu".to_string(), 2)]);

    // minValues 3: a 3-core pod leaves only {b, c}; no claim can be opened.
    let req = "{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 3}";
    let snap = snapshot(&format!("{flavors}{}{pods}", pool(req, "")));
    let p = plan(&snap);
    assert!(p.new_nodes.is_empty());
    assert_eq!(unschedulable(&snap, &p), ["p1", "p2"]);
    let reasons: Vec<String> = p.unschedulable[0].1.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        reasons,
        [
            "a-2cpu: needs 3 cpu, a-2cpu has 2 allocatable",
            "default: NodePool default needs 3 distinct values of node.kubernetes.io/instance-type in a NodeClaim (minValues); one holding this pod keeps 2"
        ]
    );
}

#[test]
fn min_values_out_of_range_names_the_field() {
    let req = "{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 0}";
    let err = snapshot_from_sources(&[Source {
        name: "test".into(),
        text: format!("{}{}", flavor("a", 2), pool(req, "")),
    }])
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        err.contains("spec.template.spec.requirements[0].minValues"),
        "{err}"
    );
    assert!(err.contains("from 1 to 50"), "{err}");
}
