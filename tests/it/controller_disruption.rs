//! Disruption in the reconcile core: the seed's scale-to-zero, budgets, do-not-disrupt, blocking
//! PodDisruptionBudgets, drift, and that the Machine marked is always the claim's own.

use crate::shared;
use karpenter_capi_testkit::Edit;

use jiff::Timestamp;
use karpenter_capi::controller::{Action, Config, ConsolidationMemo, Plan, plan, plan_with};
use karpenter_capi::model::load::{Source, snapshot_from_sources};

pub(crate) const NOW: &str = "2026-11-30T10:00:00Z";

pub(crate) fn ago(secs: i64) -> String {
    let now: Timestamp = NOW.parse().unwrap();
    Timestamp::from_second(now.as_second() - secs)
        .unwrap()
        .to_string()
}

/// The seed scenario without pending pods, node class Ready, c3-4 at `replicas`.
pub(crate) fn base(replicas: usize, pool_patch: &str) -> String {
    let text = shared::read("scenarios/inflate-antiaffinity.yaml");
    let text = text
        .edit("  replicas: 2\n  selector:\n    matchLabels:\n      app: inflate", "  replicas: 0\n  selector:\n    matchLabels:\n      app: inflate")
        .edit_n("  name: default\nspec: {}\n", "  name: default\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True'}]}\n", 1)
        .edit_n(
            "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4",
            &format!("  replicas: {replicas}\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4"),
            1,
        );
    text.edit(
        "    consolidateAfter: 30s\n",
        &format!("    consolidateAfter: 30s\n{pool_patch}"),
    )
}

/// A registered, initialized c3-4 node `i` with its claim, Machine and a cilium pod (tolerating
/// every taint as its DaemonSet's template does, so never evicted); plus `pods`.
pub(crate) fn node(i: usize, initialized_ago: i64, pods: &str, node_annotations: &str) -> String {
    let pid = format!("openstack:///n{i}");
    format!(
        "---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-{i}
  creationTimestamp: '{created}'
  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}
  annotations: {{cluster.x-k8s.io/machine: capi-ovh/m-{i}, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}
spec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}
status:
  providerID: '{pid}'
  nodeName: node-{i}
  conditions:
  - {{type: Launched, status: 'True'}}
  - {{type: Registered, status: 'True'}}
  - {{type: Initialized, status: 'True', lastTransitionTime: '{init}'}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {{name: m-{i}, namespace: capi-ovh, creationTimestamp: '{created}', labels: {{cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4, node.cluster.x-k8s.io/karpenter-member: ''}}}}
spec: {{clusterName: capi-ovh, providerID: '{pid}'}}
---
apiVersion: v1
kind: Node
metadata: {{name: node-{i}, labels: {{karpenter.sh/nodepool: default, kubernetes.io/hostname: node-{i}}}, annotations: {{{node_annotations}}}}}
spec: {{providerID: '{pid}'}}
status: {{capacity: {{cpu: '2', memory: 4G, pods: '110'}}, allocatable: {{cpu: '2', memory: 4G, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: cilium-{i}, namespace: kube-system, ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: cilium, uid: u, controller: true}}]}}
spec: {{nodeName: node-{i}, tolerations: [{{operator: Exists}}], containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}}}]}}
status: {{phase: Running}}
{pods}",
        created = ago(3600),
        init = ago(initialized_ago),
    )
}

pub(crate) fn app_pod(name: &str, node: usize, annotations: &str) -> String {
    sized_pod(name, node, annotations, "500m")
}

pub(crate) fn sized_pod(name: &str, node: usize, annotations: &str, cpu: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: web}}, annotations: {{{annotations}}}}}\nspec: {{nodeName: node-{node}, containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\nstatus: {{phase: Running}}\n"
    )
}

/// A c3-8 node instead of a c3-4 one.
fn c3_8_node(i: usize, pods: &str) -> String {
    node(i, 600, pods, "").edit("c3-4", "c3-8").edit(
        "capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}",
        "capacity: {cpu: '4', memory: 8G, pods: '110'}, allocatable: {cpu: '4', memory: 8G, pods: '110'}",
    )
}

/// Two c3-8 nodes with one pod of `cpu` each, consolidation of underutilized nodes on.
pub(crate) fn two_c3_8(cpu: &str) -> String {
    let pool = "    budgets: [{nodes: '100%'}]\n";
    let base = base(0, pool).edit("    consolidationPolicy: WhenEmpty\n", "    consolidationPolicy: WhenEmptyOrUnderutilized\n").edit_n(
        "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        "  replicas: 2\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        1,
    );
    format!(
        "{base}{}{}",
        c3_8_node(1, &sized_pod("a", 1, "", cpu)),
        c3_8_node(2, &sized_pod("b", 2, "", cpu))
    )
}

/// `node_text` with the disruption taint on its Node and, on its claim, the command our
/// controller records: its reason and when it started, `started_ago` seconds before NOW.
pub(crate) fn under_way(node_text: &str, i: usize, reason: &str, started_ago: i64) -> String {
    node_text
        .edit(
            &format!("spec: {{providerID: 'openstack:///n{i}'}}"),
            &format!("spec: {{providerID: 'openstack:///n{i}', taints: [{{key: karpenter.sh/disrupted, effect: NoSchedule}}]}}"),
        )
        .edit(
            "annotations: {cluster.x-k8s.io/machine",
            &format!(
                "annotations: {{karpenter-capi/drain-started: '{}', karpenter-capi/disruption-reason: {reason}, cluster.x-k8s.io/machine",
                ago(started_ago)
            ),
        )
}

pub(crate) fn run(text: &str) -> Plan {
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    plan(&s, NOW.parse().unwrap(), &Config::default())
}

pub(crate) fn names(p: &Plan) -> Vec<&str> {
    p.actions.iter().map(|a| a.name()).collect()
}

#[test]
fn seed_scale_to_zero_after_consolidate_after() {
    // The command starts: the taint, with the rest of it shown as pending.
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, "", "")));
    assert_eq!(names(&p), vec!["taintNode"]);
    assert!(
        matches!(&p.actions[0], Action::TaintNode { node, taint, reason, saving_per_hour, .. }
        if node == "node-1" && taint == "karpenter.sh/disrupted:NoSchedule" && reason == "Empty" && saving_per_hour.0 == 50_000_000)
    );
    let pending: Vec<&str> = p.pending.iter().map(|a| a.name()).collect();
    assert_eq!(
        pending,
        vec![
            "deleteNodeClaim",
            "markMachineForDeletion",
            "scaleMachineDeployment"
        ]
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][0]["action"], "taintNode");
    assert_eq!(json["actions"][0]["reason"], "Empty");
    assert_eq!(json["actions"][0]["savingPerHour"], 0.05);
    // Validated again 15 s after it started (core commandValidationDelay): before, it waits.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        under_way(&node(1, 600, "", ""), 1, "Empty", 10)
    ));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("validated again 15s after it started")),
        "{:?}",
        p.notes
    );
    // Then still empty: the claim goes and, the node being drained (cilium tolerates the
    // taint), its exact Machine with it.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        under_way(&node(1, 600, "", ""), 1, "Empty", 20)
    ));
    assert_eq!(
        names(&p),
        vec![
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
    assert!(
        matches!(&p.actions[0], Action::MarkMachineForDeletion { machine, .. } if machine == "capi-ovh/m-1")
    );
    assert!(
        matches!(&p.actions[1], Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-1" && reason == "Empty")
    );
    match &p.actions[2] {
        Action::ScaleMachineDeployment {
            from,
            replicas,
            rollback_machines,
            ..
        } => {
            assert_eq!((*from, *replicas), (1, 0));
            assert_eq!(rollback_machines, &vec!["capi-ovh/m-1".to_string()]);
        }
        other => panic!("{other:?}"),
    }
}

/// Validation (core `validation.go`): a command whose node got a pod while it waited is called
/// off, the taint removed.
#[test]
fn an_empty_command_whose_node_got_a_pod_is_called_off() {
    let busy = under_way(&node(1, 600, &app_pod("web-1", 1, ""), ""), 1, "Empty", 20);
    let p = run(&format!("{}{busy}", base(1, "")));
    assert_eq!(names(&p), vec!["abortDisruption"]);
    assert!(
        matches!(&p.actions[0], Action::AbortDisruption { node, message, .. }
            if node == "node-1" && message.ends_with("called off: pods arrived on it")),
        "{:?}",
        p.actions
    );
}

#[test]
fn not_before_consolidate_after() {
    let p = run(&format!("{}{}", base(1, ""), node(1, 10, "", "")));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

#[test]
fn a_node_with_pods_is_not_empty() {
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node(1, 600, &app_pod("web-1", 1, ""), "")
    ));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

#[test]
fn a_budget_of_one_node_disrupts_one_at_a_time() {
    let budget = "    budgets: [{nodes: '1'}]\n";
    let p = run(&format!(
        "{}{}{}",
        base(2, budget),
        node(1, 600, "", ""),
        node(2, 600, "", "")
    ));
    let tainted: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::TaintNode { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tainted, vec!["node-1"]);
    // While its command is under way it uses up the budget: node-2 waits, and node-1's own
    // Machine is the one marked, never the other one.
    let p = run(&format!(
        "{}{}{}",
        base(2, budget),
        under_way(&node(1, 600, "", ""), 1, "Empty", 20),
        node(2, 600, "", "")
    ));
    assert_eq!(
        names(&p),
        vec![
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
    assert!(p.actions.iter().any(|a| matches!(
        a,
        Action::ScaleMachineDeployment {
            from: 2,
            replicas: 1,
            ..
        }
    )));
    let marked: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::MarkMachineForDeletion { machine, .. } => Some(machine.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(marked, vec!["capi-ovh/m-1"]);
}

#[test]
fn a_zero_budget_blocks_and_an_invalid_one_is_reported() {
    let p = run(&format!(
        "{}{}",
        base(1, "    budgets: [{nodes: '0'}]\n"),
        node(1, 600, "", "")
    ));
    assert!(p.actions.is_empty());
    let p = run(&format!(
        "{}{}",
        base(1, "    budgets: [{nodes: 'lots'}]\n"),
        node(1, 600, "", "")
    ));
    assert_eq!(names(&p), vec!["warnNodePool"], "an Event on the NodePool");
    assert!(
        p.notes.iter().any(|n| n
            .contains("NodePool default: spec.disruption.budgets: invalid budget nodes \"lots\"")),
        "{:?}",
        p.notes
    );
}

#[test]
fn drift_is_blocked_by_do_not_disrupt_and_pdbs() {
    let drifted = |pods: &str, node_ann: &str| {
        node(1, 600, pods, node_ann).edit(
            "annotations: {cluster.x-k8s.io/machine",
            "annotations: {karpenter.sh/nodepool-hash: 'stale', karpenter.sh/nodepool-hash-version: karpenter-capi-v1, cluster.x-k8s.io/machine",
        )
    };
    // Drifted with a pod that has nowhere else to go: its replacement first, then the taint; the
    // drain waits for the replacement (next passes).
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        drifted(&app_pod("web-1", 1, ""), "")
    ));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    assert!(
        matches!(&p.actions[0], Action::CreateNodeClaim { reason, pods, manifest, .. }
        if reason == "Drifted" && pods == &vec!["default/web-1".to_string()] && manifest["metadata"]["annotations"]["karpenter-capi/replaces"] == "node-1")
    );
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        drifted(
            &app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'true'"),
            ""
        )
    ));
    assert!(p.actions.is_empty());
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        drifted("", "karpenter.sh/do-not-disrupt: 'true'")
    ));
    assert!(p.actions.is_empty());
    let pdb = "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: default}\nspec: {selector: {matchLabels: {app: web}}, maxUnavailable: 0}\nstatus: {disruptionsAllowed: 0}\n";
    let p = run(&format!(
        "{}{}{pdb}",
        base(1, ""),
        drifted(&app_pod("web-1", 1, ""), "")
    ));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

#[test]
fn a_drained_disrupted_node_finishes_its_sequence() {
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        under_way(&node(1, 600, "", ""), 1, "Empty", 60)
    ));
    assert_eq!(
        names(&p),
        vec![
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
}

/// A `karpenter.sh/disrupted` taint that no command of ours stands behind (the claim records no
/// reason: another writer, or a command lost in a restart) is removed, as core's disruption
/// controller removes the taints of nodes it has no command for after a restart.
#[test]
fn a_disrupted_taint_without_a_command_of_ours_is_removed() {
    let tainted = node(1, 600, "", "").edit(
        "spec: {providerID: 'openstack:///n1'}",
        "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
    );
    let p = run(&format!("{}{}", base(1, ""), tainted));
    assert_eq!(names(&p), vec!["abortDisruption"]);
}

/// Multi-node consolidation as core's `multinodeconsolidation.go`: two nodes are replaced by one
/// node only of a cheaper type; a replacement of the type of one of them (`filterOutSameType`)
/// is rejected, and single-node consolidation deletes one of them instead.
#[test]
fn two_underused_c3_8_are_replaced_by_a_cheaper_type_never_by_their_own() {
    // 700m each: both fit on one c3-4 (2 vCPU), cheaper than a c3-8.
    let p = run(&two_c3_8("700m"));
    assert_eq!(names(&p)[0], "createNodeClaim", "{:?}", names(&p));
    assert!(
        matches!(&p.actions[0], Action::CreateNodeClaim { instance_type, reason, pods, .. }
        if instance_type == "c3-4" && reason == "Underutilized" && pods.len() == 2),
        "{:?}",
        p.actions[0]
    );
    let tainted = |p: &Plan| -> Vec<(String, i64)> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::TaintNode {
                    node,
                    saving_per_hour,
                    reason,
                    ..
                } => {
                    assert_eq!(reason, "Underutilized");
                    Some((node.clone(), saving_per_hour.0))
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        tainted(&p),
        vec![
            ("node-1".to_string(), 150_000_000),
            ("node-2".to_string(), 150_000_000)
        ]
    );
    assert!(
        !names(&p).contains(&"evictPod"),
        "the drain waits for the replacement"
    );
    // 1500m each: only a c3-8 holds both, the type being removed. Deleting one node saves as
    // much with one drain and no new node: that is the decision.
    let p = run(&two_c3_8("1500m"));
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    assert_eq!(tainted(&p), vec![("node-1".to_string(), 100_000_000)]);
    // Nothing is evicted before the claim is deleted: the drain is in the rest of the command.
    assert!(!names(&p).contains(&"evictPod"), "{:?}", names(&p));
    assert!(
        p.pending
            .iter()
            .any(|a| matches!(a, Action::EvictPod { pod, .. } if pod == "default/a")),
        "{:?}",
        p.pending
    );
}

/// One c3-8 with a pod of 500m created each of `ages` seconds before NOW (two or three),
/// consolidation of underutilized nodes on: a c3-4 holds them, for less.
fn one_c3_8_with_pods_created(ages: &[i64]) -> String {
    let pool = "    budgets: [{nodes: '100%'}]\n";
    let base = base(0, pool).edit("    consolidationPolicy: WhenEmpty\n", "    consolidationPolicy: WhenEmptyOrUnderutilized\n").edit_n(
        "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        "  replicas: 1\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        1,
    );
    let pods: String = ["a", "b", "c"]
        .iter()
        .zip(ages.iter().copied())
        .map(|(name, age)| {
            sized_pod(name, 1, "", "500m").edit(
                &format!("metadata: {{name: {name},"),
                &format!(
                    "metadata: {{name: {name}, creationTimestamp: '{}',",
                    ago(age)
                ),
            )
        })
        .collect();
    format!("{base}{}", c3_8_node(1, &pods))
}

#[test]
fn a_node_is_not_replaced_by_a_smaller_one_the_recent_arrivals_would_outgrow() {
    // Created an hour ago: nothing arrives, the c3-8 is replaced by a c3-4.
    let p = run(&one_c3_8_with_pods_created(&[3600, 3500]));
    assert!(
        matches!(&p.actions[0], Action::CreateNodeClaim { instance_type, reason, pods, .. }
        if instance_type == "c3-4" && reason == "Underutilized" && pods.len() == 2),
        "{:?}",
        names(&p)
    );
    // Both arrived in the last 10 minutes (none before): two more are expected. With them, a
    // c3-4 (1.9 vCPU free) is too small and the c3-8 holds all four: no replacement.
    let p = run(&one_c3_8_with_pods_created(&[300, 200]));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
    // Nothing since the two of the window before: replaced again.
    let p = run(&one_c3_8_with_pods_created(&[900, 800]));
    assert_eq!(names(&p)[0], "createNodeClaim", "{:?}", names(&p));
    // One since the two of the window before: fewer, but one more is still expected (a fall
    // is not told from noise, such as pods an eviction recreated, by one window): four pods of
    // 500m outgrow the c3-4's 1.9 vCPU, so the c3-8 stays. Provisioning would not bet on it.
    let p = run(&one_c3_8_with_pods_created(&[900, 800, 200]));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

/// One c3-8 holding `count` pods of 250m created long ago, its claim created 120 s before it
/// initialized (the cluster's boot), consolidation of underutilized nodes on.
fn one_c3_8_with(count: usize) -> String {
    let pool = "    budgets: [{nodes: '100%'}]\n";
    let base = base(0, pool).edit("    consolidationPolicy: WhenEmpty\n", "    consolidationPolicy: WhenEmptyOrUnderutilized\n").edit_n(
        "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        "  replicas: 1\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        1,
    );
    let pods: String = (0..count)
        .map(|i| {
            let name = format!("p{i}");
            sized_pod(&name, 1, "", "250m").edit(
                &format!("metadata: {{name: {name},"),
                &format!(
                    "metadata: {{name: {name}, creationTimestamp: '{}',",
                    ago(7200)
                ),
            )
        })
        .collect();
    let node = c3_8_node(1, &pods).edit(
        &format!("lastTransitionTime: '{}'", ago(600)),
        &format!("lastTransitionTime: '{}'", ago(3480)),
    );
    format!("{base}{node}")
}

/// While the load falls, a replacement must pay back its boot before the departures would let
/// the node go by a deletion (`consolidation/payback.rs`, deliberate difference 7). The c3-8's
/// seven pods (1750m) fit a c3-4 (1.9 vCPU free), half the price: with a boot of 120 s the
/// replacement pays once the node would otherwise stay over 120 x (0.10 + 0.05) / 0.05 = 360 s.
#[test]
fn a_replacement_must_pay_back_its_boot_while_pods_leave() {
    let config = Config::default();
    let snap = |count: usize| {
        snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: one_c3_8_with(count),
        }])
        .unwrap()
    };
    let at = |before: i64| {
        Timestamp::from_second(NOW.parse::<Timestamp>().unwrap().as_second() - before).unwrap()
    };
    let replaced = |p: &Plan| {
        p.actions.iter().any(|a| {
            matches!(a, Action::CreateNodeClaim { instance_type, reason, pods, .. }
            if instance_type == "c3-4" && reason == "Underutilized" && pods.len() == 7)
        })
    };
    // A fresh process has seen nothing leave: replaced, as core does.
    let (p, _) = plan_with(&snap(7), at(0), &config, &ConsolidationMemo::default());
    assert!(replaced(&p), "{:?}", names(&p));
    // Twelve, ten, seven pods 100 s apart: 1250m left in 200 s, so the 1750m would fit
    // nowhere else for 280 s, less than the 360 s a replacement takes to pay: kept.
    let mut memo = ConsolidationMemo::default();
    for (before, count) in [(200, 12), (100, 10)] {
        memo = plan_with(&snap(count), at(before), &config, &memo).1;
    }
    let (p, _) = plan_with(&snap(7), at(0), &config, &memo);
    assert!(!replaced(&p), "{:?}", names(&p));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
    // One pod in 290 s: 2,030 s to go, the replacement pays.
    let memo = plan_with(&snap(8), at(290), &config, &ConsolidationMemo::default()).1;
    let (p, _) = plan_with(&snap(7), at(0), &config, &memo);
    assert!(replaced(&p), "{:?}", names(&p));
}

#[test]
fn well_used_nodes_are_left_alone() {
    let p = run(&two_c3_8("3"));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
}

#[test]
fn a_scheduled_zero_budget_blocks_only_inside_its_window() {
    // 2026-11-30 is a Monday; NOW is 10:00 UTC.
    let inside = "    budgets: [{nodes: '0', schedule: '0 9 * * mon-fri', duration: 8h}]\n";
    let p = run(&format!("{}{}", base(1, inside), node(1, 600, "", "")));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
    let outside = "    budgets: [{nodes: '0', schedule: '0 20 * * mon-fri', duration: 8h}]\n";
    let p = run(&format!("{}{}", base(1, outside), node(1, 600, "", "")));
    assert_eq!(names(&p)[0], "taintNode");
    let broken = "    budgets: [{nodes: '0', schedule: '0 9 * *', duration: 8h}]\n";
    let p = run(&format!("{}{}", base(1, broken), node(1, 600, "", "")));
    assert_eq!(names(&p), vec!["warnNodePool"]);
    assert!(
        p.notes.iter().any(|n| n.contains("expected five fields")),
        "{:?}",
        p.notes
    );
}

/// Budgets as core `Budget.IsActive` evaluates them, at NOW (November 30th 10:00): a `1464h`
/// (61-day) change freeze opened on November 1st holds (a window is not capped at a week), one
/// opened on October 1st holds until December 1st, one opened on September 30th ended at 00:00
/// today, one of September 1st on November 1st; February 30th never comes, which upstream
/// reads as active. A budget naming only Drifted but carrying `@every` (refused by the CRD)
/// stops every reason.
#[test]
fn a_two_month_freeze_holds_and_a_bad_budget_stops_every_reason() {
    let freeze = |schedule: &str| {
        format!("    budgets: [{{nodes: '0', schedule: '{schedule}', duration: 1464h}}]\n")
    };
    for (schedule, frozen) in [
        ("0 0 1 11 *", true),
        ("0 0 1 10 *", true),
        ("0 0 30 9 *", false),
        ("0 0 1 9 *", false),
        ("0 0 30 2 *", true),
    ] {
        let p = run(&format!(
            "{}{}",
            base(1, &freeze(schedule)),
            node(1, 600, "", "")
        ));
        if frozen {
            assert!(p.actions.is_empty(), "{schedule}: {:?}", names(&p));
        } else {
            assert_eq!(names(&p)[0], "taintNode", "{schedule}");
        }
    }
    let bad = "    budgets: [{nodes: '100%'}, {nodes: '0', schedule: '@every 1h', duration: 1h, reasons: [Drifted]}]\n";
    let p = run(&format!("{}{}", base(1, bad), node(1, 600, "", "")));
    assert_eq!(
        names(&p),
        vec!["warnNodePool"],
        "the empty node is not removed"
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("@every is not accepted") && n.contains("(budgets[1].schedule)")),
        "{:?}",
        p.notes
    );
}

#[test]
fn nodepool_requirement_change_drifts_nodes_one_at_a_time() {
    // The pool now requires zone `gra`; both nodes are labelled `nova` on their claims.
    let pool = base(2, "").edit(
        "      - key: kubernetes.io/arch\n",
        "      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [gra]\n      - key: kubernetes.io/arch\n",
    );
    let zoned = |i: usize| {
        node(i, 600, &app_pod(&format!("web-{i}"), i, ""), "")
            .edit("labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}", "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4, topology.kubernetes.io/zone: nova}")
    };
    let p = run(&format!("{pool}{}{}", zoned(1), zoned(2)));
    let tainted: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::TaintNode { node, reason, .. } => {
                assert_eq!(reason, "Drifted");
                Some(node.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        tainted,
        vec!["node-1"],
        "the default budget (10% of 2, rounded up) allows one"
    );
}

#[test]
fn the_node_finalizer_goes_once_claim_and_machine_are_gone() {
    let orphan = "---\napiVersion: v1\nkind: Node\nmetadata: {name: gone, finalizers: [karpenter.sh/termination]}\nspec: {providerID: 'openstack:///gone'}\n";
    // Without any Machine in the input the Machine list is missing: the finalizer stays.
    let p = run(&format!("{}{orphan}", base(0, "")));
    assert!(p.actions.is_empty(), "{:?}", names(&p));
    let other = "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {name: other, namespace: capi-ovh, labels: {cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4}}\nspec: {clusterName: capi-ovh}\n";
    let p = run(&format!("{}{orphan}{other}", base(0, "")));
    assert_eq!(names(&p), vec!["removeNodeFinalizer"]);
    assert!(matches!(&p.actions[0], Action::RemoveNodeFinalizer { node, .. } if node == "gone"));
}

/// No command is called off, no claim deleted and no pod evicted.
fn nothing_disrupted(p: &Plan) {
    assert!(
        !p.actions.iter().any(|a| matches!(
            a,
            Action::AbortDisruption { .. }
                | Action::DeleteNodeClaim { .. }
                | Action::EvictPod { .. }
        )),
        "{:?}",
        names(p)
    );
}

/// The Ready Node of replacement claim `default-r` (a c3-4's room, 2 CPU).
const NODE_R: &str = "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-r}\nspec: {providerID: 'openstack:///r'}\nstatus: {capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n";

/// node-1 drifted, its command under way (one replacement), with a pod; the replacement claim
/// in some state.
fn draining(replacement_status: &str) -> String {
    let tainted = under_way(
        &node(1, 600, &app_pod("web-1", 1, ""), ""),
        1,
        "Drifted",
        60,
    )
    .edit(
        "karpenter-capi/disruption-reason: Drifted,",
        "karpenter-capi/disruption-reason: Drifted, karpenter-capi/replacements: '1',",
    );
    let replacement = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-r\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/replaces: node-1, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {replacement_status}\n",
        ago(60)
    );
    format!("{}{tainted}{replacement}", base(2, ""))
}

/// Core `provisioner.go` Schedule plans the pods of nodes marked for deletion with the pending
/// ones: a pending pod and the pods of a node waiting on its replacement are provisioned for
/// together, so the replacement's room is not counted twice.
#[test]
fn a_pending_pod_and_a_command_in_flight_never_count_on_the_same_room() {
    // 1500m fits the c3-4 replacement alone (1900m after the cilium pod), not beside web-1.
    let pending = format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: late, namespace: default, creationTimestamp: '{}'}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: 1500m}}}}}}]}}\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n",
        ago(60)
    );
    let p = run(&format!("{}{pending}", draining("{}")));
    assert!(
        p.notes.iter().any(|n| n
            == "node node-1: waiting for its replacement default-r to initialize before draining"),
        "{:?}",
        p.notes
    );
    // Both get room: the larger pod is planned first (queue order), onto the replacement, and
    // web-1 gets the new node.
    assert_eq!(
        crate::controller_disruption_conformance::created(&p),
        vec![("c3-4", vec!["default/web-1"])],
        "{:?}",
        names(&p)
    );
    // Without the command (no replacement recorded), the replacement claim is plain room and
    // the pod is planned there: nothing new.
    let plain = draining("{}").edit(" karpenter-capi/replacements: '1',", "");
    let p = run(&format!("{plain}{pending}"));
    assert!(
        !p.actions
            .iter()
            .any(|a| matches!(a, Action::CreateNodeClaim { .. })),
        "{:?}",
        names(&p)
    );
}

/// A pod bound onto the initialized replacement took the room the command made: core's queue
/// would drain anyway; ours waits (its node marked for deletion, so provisioning makes the room)
/// instead of calling the command off and wasting the replacement; with room again it goes on.
#[test]
fn a_command_whose_replacement_room_was_taken_waits_for_more_room() {
    let node_r = format!(
        "{NODE_R}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: late, namespace: default}}\nspec: {{nodeName: node-r, containers: [{{name: c, resources: {{requests: {{cpu: 1800m}}}}}}]}}\nstatus: {{phase: Running}}\n"
    );
    let taken = format!(
        "{}{node_r}",
        draining(
            "{providerID: 'openstack:///r', nodeName: node-r, conditions: [{type: Registered, status: 'True'}, {type: Initialized, status: 'True'}]}"
        )
    );
    let p = run(&taken);
    assert!(
        p.notes.iter().any(|n| n
            == "node node-1: Drifted disruption waits: pending pods took the room of its replacements, more is provisioned"),
        "{:?}",
        p.notes
    );
    assert_eq!(
        crate::controller_disruption_conformance::created(&p),
        vec![("c3-4", vec!["default/web-1"])],
        "{:?}",
        names(&p)
    );
    nothing_disrupted(&p);
    // The late pod gone again: the command goes on.
    let p = run(&taken.edit("{requests: {cpu: 1800m}}", "{requests: {cpu: 100m}}"));
    assert_eq!(names(&p), vec!["deleteNodeClaim"]);
}

/// Core's `queue.go` waitOrTerminate: the candidate's claim is deleted only once every
/// replacement is Initialized, and nothing is evicted before; then termination drains it.
#[test]
fn the_drain_waits_for_the_replacement_then_evicts() {
    let p = run(&draining("{}"));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert!(
        p.notes.iter().any(|n| n
            == "node node-1: waiting for its replacement default-r to initialize before draining"),
        "{:?}",
        p.notes
    );
    // Initialized: its Ready node has room for web-1, the claim goes.
    let node_r = NODE_R;
    let initialized = format!(
        "{}{node_r}",
        draining(
            "{providerID: 'openstack:///r', nodeName: node-r, conditions: [{type: Registered, status: 'True'}, {type: Initialized, status: 'True'}]}"
        )
    );
    let p = run(&initialized);
    assert_eq!(names(&p), vec!["deleteNodeClaim"]);
    assert!(
        matches!(&p.actions[0], Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-1" && reason == "Drifted")
    );
    // Deleted: termination evicts, non-DaemonSet pods first.
    let deleted = initialized.edit_n(
        "  name: default-1\n",
        &format!(
            "  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
            ago(5)
        ),
        1,
    );
    let p = run(&deleted);
    assert_eq!(
        evicts(&p),
        vec!["default/web-1"],
        "non-DaemonSet pods first, the DaemonSet pod once they are gone"
    );
    // A replacement that vanished calls the command off (core: "replacement was deleted").
    let full = draining("{}");
    let vanished = full
        .split("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-r")
        .next()
        .unwrap();
    let p = run(vanished);
    assert_eq!(names(&p), vec!["abortDisruption"]);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("a replacement NodeClaim failed or vanished")),
        "{:?}",
        p.notes
    );
}

/// node-1 (a c3-8 holding web-1) under an Underutilized command with one replacement, a c3-4
/// claim `replacement_status`, beside node-2 (a c3-4 initialized `node_2_ago` seconds ago, room
/// for web-1).
pub(crate) fn replacing(replacement_status: &str, node_2_ago: i64) -> String {
    let tainted = under_way(
        &c3_8_node(1, &app_pod("web-1", 1, "")),
        1,
        "Underutilized",
        60,
    )
    .edit(
        "karpenter-capi/disruption-reason: Underutilized,",
        "karpenter-capi/disruption-reason: Underutilized, karpenter-capi/replacements: '1',",
    );
    let replacement = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-r\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/replaces: node-1, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {replacement_status}\n",
        ago(60)
    );
    let base = base(2, "").edit_n(
        "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        "  replicas: 1\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        1,
    );
    format!(
        "{base}{tainted}{}{replacement}",
        node(2, node_2_ago, "", "")
    )
}

/// Pods left while a consolidation replacement launched, and the candidate's pods now fit on a
/// Ready node: the command is called off and its replacement deleted before it is billed any
/// longer (a deliberate difference: core's queue drains once the replacement initializes, with
/// no simulation in between; docs/conformance.md deliberate difference 10). Not while the
/// destination is inside its consolidateAfter window (the next search would only replace again),
/// a pod is pending (it may need the new room), a pod landed on the replacement, or for drift.
#[test]
fn a_replacement_no_longer_needed_is_called_off_before_it_initializes() {
    // The replacement goes first; the taint comes off only after it (the abort shares its
    // scope, so a failed delete leaves the command for the next pass to call off again).
    let p = run(&replacing("{}", 600));
    assert_eq!(
        names(&p),
        vec!["deleteNodeClaim", "abortDisruption"],
        "{:?} {:?}",
        p.notes,
        p.actions
    );
    assert!(
        matches!(&p.actions[0], Action::DeleteNodeClaim { node_claim, reason, message, .. }
        if node_claim == "default-r" && reason == "Underutilized" && message == "replacement for node node-1 no longer needed")
    );
    assert!(
        matches!(&p.actions[1], Action::AbortDisruption { node, message, .. }
        if node == "node-1" && message == "Underutilized disruption of node node-1 called off: its pods fit on Ready nodes now, its replacements are not needed")
    );
    assert!(
        p.actions[1]
            .scopes()
            .contains(&"NodeClaim/default-r".to_string())
    );

    let waits = |text: &str| {
        let p = run(text);
        assert!(
            p.notes.iter().any(|n| n
                == "node node-1: waiting for its replacement default-r to initialize before draining"),
            "{:?} {:?}",
            names(&p),
            p.notes
        );
        nothing_disrupted(&p);
    };
    // node-2 initialized 10 s ago, inside its pool's 30 s consolidateAfter.
    waits(&replacing("{}", 10));
    // A pending pod.
    let pending = format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: late, namespace: default, creationTimestamp: '{}'}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]}}\nstatus: {{phase: Pending, conditions: [{{type: PodScheduled, status: 'False', reason: Unschedulable}}]}}\n",
        ago(60)
    );
    waits(&format!("{}{pending}", replacing("{}", 600)));
    // A pod on the replacement's Node, Ready but not initialized yet.
    let node_r = format!(
        "{NODE_R}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: early, namespace: default}}\nspec: {{nodeName: node-r, containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]}}\nstatus: {{phase: Running}}\n"
    );
    waits(&format!(
        "{}{node_r}",
        replacing(
            "{providerID: 'openstack:///r', nodeName: node-r, conditions: [{type: Registered, status: 'True'}]}",
            600
        )
    ));
    // Drift replaces whatever the room: its command goes on.
    waits(&replacing("{}", 600).edit("Underutilized", "Drifted"));
}

/// The same once the replacement has initialized: with room on node-2 the command is called off
/// and the empty replacement deleted; with node-2 inside its consolidateAfter window the drain
/// holds, for at most that window (30 s) after the replacement initialized, then goes on.
#[test]
fn an_initialized_replacement_not_needed_holds_the_drain_for_one_window_at_most() {
    let initialized = |ago_secs: i64| {
        let node_r = NODE_R;
        move |node_2_ago: i64| {
            format!(
                "{}{node_r}",
                replacing(
                    &format!(
                        "{{providerID: 'openstack:///r', nodeName: node-r, conditions: [{{type: Registered, status: 'True'}}, {{type: Initialized, status: 'True', lastTransitionTime: '{}'}}]}}",
                        ago(ago_secs)
                    ),
                    node_2_ago
                )
            )
        }
    };
    let p = run(&initialized(5)(600));
    assert_eq!(
        names(&p),
        vec!["deleteNodeClaim", "abortDisruption"],
        "{:?}",
        p.notes
    );
    assert!(
        matches!(&p.actions[0], Action::DeleteNodeClaim { node_claim, .. } if node_claim == "default-r")
    );
    let p = run(&initialized(5)(10));
    assert_eq!(names(&p), Vec::<&str>::new(), "{:?}", p.notes);
    assert!(
        p.notes.iter().any(|n| n
            == "node node-1: Underutilized disruption waits: its pods fit on Ready nodes once their consolidateAfter window closes, and its replacements are not needed then"),
        "{:?}",
        p.notes
    );
    // 40 s after the replacement initialized the window has passed: the drain goes on.
    let p = run(&initialized(40)(10));
    assert!(
        p.actions.iter().any(
            |a| matches!(a, Action::DeleteNodeClaim { node_claim, .. } if node_claim == "default-1")
        ),
        "{:?} {:?}",
        names(&p),
        p.notes
    );
}

/// A claim being deleted `deleted_ago` seconds before NOW with a terminationGracePeriod of 1h
/// (deadline `3600 - deleted_ago` seconds from NOW), its node tainted since; the node holds
/// `pods`; a PDB allowing no disruption covers app=web.
pub(crate) fn deleting_with_grace(deleted_ago: i64, pods: &str) -> Plan {
    let pdb = "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: default}\nspec: {selector: {matchLabels: {app: web}}, maxUnavailable: 0}\nstatus: {disruptionsAllowed: 0}\n";
    // Tainted by termination right after the deletion, as the drain-started record says.
    let claim = under_way(&node(1, 600, pods, ""), 1, "Expired", deleted_ago)
        .edit("karpenter-capi/disruption-reason: Expired, ", "")
        .edit_n(
            "  name: default-1\n",
            &format!(
                "  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
                ago(deleted_ago)
            ),
            1,
        )
        .edit(
            "requirements: []}",
            "requirements: [], terminationGracePeriod: 1h}",
        );
    run(&format!("{}{claim}{pdb}", base(1, "")))
}

pub(crate) fn pod_with(name: &str, annotations: &str, spec: &str, meta: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, uid: uid-{name}, labels: {{app: web}}, annotations: {{{annotations}}}{meta}}}\nspec: {{nodeName: node-1, {spec}containers: [{{name: c, resources: {{requests: {{cpu: 100m}}}}}}]}}\nstatus: {{phase: Running, startTime: '{}'}}\n",
        ago(1800)
    )
}

pub(crate) fn deletes(p: &Plan) -> Vec<(&str, i64)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod {
                pod,
                grace_period_seconds,
                ..
            } => Some((pod.as_str(), *grace_period_seconds)),
            _ => None,
        })
        .collect()
}

pub(crate) fn evicts(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::EvictPod { pod, .. } => Some(pod.as_str()),
            _ => None,
        })
        .collect()
}

/// terminationGracePeriod counts from the claim's deletion (core `nodeclaim/lifecycle`
/// ensureTerminationGracePeriodTerminationTimeAnnotation), and each pod is deleted when its own
/// grace would run past the deadline, with what is left of it, at least 1 s (v1.14
/// `terminator.go` DeleteExpiringPods): PDBs and do-not-disrupt no longer hold it.
#[test]
fn pods_whose_time_runs_out_are_deleted_with_what_is_left() {
    let web = pod_with("web-1", "", "", "");
    // Deleted 2h ago: the deadline passed an hour ago. The deadline is recorded as Karpenter's
    // annotation; web-1 goes at once, with the minimum grace.
    let p = deleting_with_grace(7200, &web);
    assert_eq!(deletes(&p), vec![("default/web-1", 1)]);
    assert!(
        p.actions.iter().any(
            |a| matches!(a, Action::SetTerminationTimestamp { node_claim, time, .. }
            if node_claim == "default-1" && *time == ago(3600))
        ),
        "{:?}",
        names(&p)
    );
    let steps = p
        .actions
        .iter()
        .find(|a| a.name() == "deletePod")
        .unwrap()
        .steps();
    use karpenter_capi::controller::write::Write;
    match &steps.writes[0] {
        Write::Delete {
            namespace,
            name,
            uid,
            grace_period_seconds,
            ..
        } => assert_eq!(
            (
                namespace.as_str(),
                name.as_str(),
                uid.as_deref(),
                *grace_period_seconds
            ),
            ("default", "web-1", Some("uid-web-1"), Some(1))
        ),
        other => panic!("{other:?}"),
    }
    // 30 min left: a pod with the default 30 s grace is evicted (the PDB may refuse it); one
    // whose grace is an hour is deleted now with the 30 min left.
    let p = deleting_with_grace(1800, &web);
    assert_eq!(deletes(&p), Vec::<(&str, i64)>::new());
    assert_eq!(evicts(&p), vec!["default/web-1"]);
    let long = pod_with("slow", "", "terminationGracePeriodSeconds: 3600, ", "");
    let p = deleting_with_grace(1800, &long);
    assert_eq!(deletes(&p), vec![("default/slow", 1800)]);
    assert_eq!(evicts(&p), Vec::<&str>::new());
}

/// Every drain honours `karpenter.sh/do-not-disrupt` (core `utils/pod/scheduling.go`
/// IsEvictable): such a pod is never evicted; it waits until the annotation expires or its time
/// runs out before the deadline, and is then deleted. A duration counts from the pod's start.
#[test]
fn do_not_disrupt_pods_wait_for_the_deadline_in_every_drain() {
    let guarded = pod_with("guarded", "karpenter.sh/do-not-disrupt: 'true'", "", "");
    // 50 min left: not evicted, not deleted; the drain waits for it.
    let p = deleting_with_grace(600, &guarded);
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert_eq!(deletes(&p), Vec::<(&str, i64)>::new());
    assert!(!names(&p).contains(&"markMachineForDeletion"));
    // 15 s left, less than its 30 s grace: deleted with the 15 s.
    let p = deleting_with_grace(3585, &guarded);
    assert_eq!(deletes(&p), vec![("default/guarded", 15)]);
    // A duration longer than the pod's age (it started 30 min ago) protects it; a shorter one
    // has expired and the pod is evicted like any other.
    let hours = pod_with("h", "karpenter.sh/do-not-disrupt: 1h", "", "");
    assert_eq!(
        evicts(&deleting_with_grace(600, &hours)),
        Vec::<&str>::new()
    );
    let minutes = pod_with("m", "karpenter.sh/do-not-disrupt: 10m", "", "");
    assert_eq!(
        evicts(&deleting_with_grace(600, &minutes)),
        vec!["default/m"]
    );
    // A duration on a pod with no status.startTime protects it (U-POD-008: core counts from
    // the start, and a pod not started has not used any of its time).
    let unstarted = pod_with("u", "karpenter.sh/do-not-disrupt: 5m", "", "").edit(
        &format!("status: {{phase: Running, startTime: '{}'}}", ago(1800)),
        "status: {phase: Running}",
    );
    assert!(!unstarted.contains("startTime"));
    let p = deleting_with_grace(600, &unstarted);
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert_eq!(deletes(&p), Vec::<(&str, i64)>::new());
    // Go's durations take a leading `+` (U-POD-003): `+1h` protects like `1h`. A zero or
    // negative duration protects nothing (U-POD-004): evicted, and reported.
    let plus = pod_with("plus", "karpenter.sh/do-not-disrupt: '+1h'", "", "");
    assert_eq!(evicts(&deleting_with_grace(600, &plus)), Vec::<&str>::new());
    for (name, value) in [("zero", "0s"), ("negative", "-5m")] {
        let pod = pod_with(
            name,
            &format!("karpenter.sh/do-not-disrupt: '{value}'"),
            "",
            "",
        );
        let p = deleting_with_grace(600, &pod);
        let key = format!("default/{name}");
        assert_eq!(evicts(&p), vec![key.as_str()], "{value}");
        assert!(
            p.status
                .iter()
                .any(|a| matches!(a, Action::ReportInvalidDoNotDisrupt { pod, .. } if *pod == key)),
            "{value}: {:?}",
            p.status
        );
    }
    // An unparsable value counts as absent, and is reported with a Warning Event.
    let bad = pod_with("b", "karpenter.sh/do-not-disrupt: soon", "", "");
    let p = deleting_with_grace(600, &bad);
    assert_eq!(evicts(&p), vec!["default/b"]);
    assert!(
        p.status.iter().any(|a| matches!(a, Action::ReportInvalidDoNotDisrupt { pod, message, .. }
            if pod == "default/b" && message.contains("ignoring karpenter.sh/do-not-disrupt annotation"))),
        "{:?}",
        p.status
    );
    // Expiry honours it too: an expired claim is deleted, then drained the same way.
    let p = run(&format!(
        "{}{}",
        base(1, "").edit("      expireAfter: Never\n", "      expireAfter: 30m\n"),
        node(1, 600, &guarded, "")
    ));
    assert_eq!(names(&p), vec!["deleteNodeClaim"]);
    assert!(matches!(&p.actions[0], Action::DeleteNodeClaim { reason, .. } if reason == "Expired"));
}

/// Core IsStuckTerminating and IsPodEligibleForForcedEviction: a pod terminating for over a
/// minute no longer holds the drain; one whose deletion is due after the deadline is deleted
/// again with what is left.
#[test]
fn stuck_and_late_terminating_pods() {
    let stuck = pod_with(
        "stuck",
        "",
        "",
        &format!(", deletionTimestamp: '{}'", ago(120)),
    );
    let p = deleting_with_grace(600, &stuck);
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert!(
        names(&p).contains(&"markMachineForDeletion"),
        "{:?}",
        names(&p)
    );
    let at = |secs: i64| {
        Timestamp::from_second(NOW.parse::<Timestamp>().unwrap().as_second() + secs)
            .unwrap()
            .to_string()
    };
    let late = pod_with(
        "late",
        "",
        "terminationGracePeriodSeconds: 7200, ",
        &format!(", deletionTimestamp: '{}'", at(7200)),
    );
    // Deleted 30 min ago: the deadline is in 30 min, the pod's own deletion (its 2 h grace) in
    // 2 h.
    let p = deleting_with_grace(1800, &late);
    assert_eq!(deletes(&p), vec![("default/late", 1800)]);
    // A terminating pod due before the deadline is just waited for.
    let soon = pod_with(
        "soon",
        "",
        "",
        &format!(", deletionTimestamp: '{}'", at(20)),
    );
    let p = deleting_with_grace(1800, &soon);
    assert_eq!(deletes(&p), Vec::<(&str, i64)>::new());
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert!(!names(&p).contains(&"markMachineForDeletion"));
}

#[test]
fn tainting_records_when_the_drain_started() {
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, "", "")));
    let steps = p.actions[0].steps();
    let patch = steps.writes.iter().find_map(|w| match w {
        karpenter_capi::controller::write::Write::MergePatch { name, patch, .. }
            if name == "default-1" =>
        {
            Some(patch.clone())
        }
        _ => None,
    });
    assert_eq!(
        patch.unwrap()["metadata"]["annotations"]["karpenter-capi/drain-started"],
        NOW
    );
}

#[test]
fn a_decision_under_way_reads_complete_with_its_pending_steps() {
    let drifted = node(1, 600, &app_pod("web-1", 1, ""), "").edit(
        "annotations: {cluster.x-k8s.io/machine",
        "annotations: {karpenter-capi/machine-template-hash: 'stale', cluster.x-k8s.io/machine",
    );
    let p = run(&format!("{}{}", base(1, ""), drifted));
    // A changed MachineDeployment template is drift too.
    assert!(
        matches!(&p.actions[1], Action::TaintNode { reason, .. } if reason == "Drifted"),
        "{:?}",
        names(&p)
    );
    let pending: Vec<&str> = p.pending.iter().map(|a| a.name()).collect();
    assert_eq!(
        pending,
        vec![
            "deleteNodeClaim",
            "evictPod",
            "markMachineForDeletion",
            "scaleMachineDeployment"
        ]
    );
    assert!(
        matches!(&p.pending[2], Action::MarkMachineForDeletion { machine, .. } if machine == "capi-ovh/m-1")
    );
    assert!(matches!(
        &p.pending[3],
        Action::ScaleMachineDeployment {
            from: 1,
            replicas: 0,
            ..
        }
    ));
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["pending"][0]["action"], "deleteNodeClaim");
}

/// Plans with pod events the watches saw (node name, seconds ago).
fn run_with_events(text: &str, events: &[(&str, i64)]) -> Plan {
    let mut s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    for (node, secs) in events {
        s.pod_events
            .insert(node.to_string(), ago(*secs).parse().unwrap());
    }
    plan(&s, NOW.parse().unwrap(), &Config::default())
}

pub(crate) fn tainted_nodes(p: &Plan) -> Vec<(&str, &str)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::TaintNode { node, reason, .. } => Some((node.as_str(), reason.as_str())),
            _ => None,
        })
        .collect()
}

/// Node `i` whose claim carries these extra annotations.
fn annotated_node(i: usize, pods: &str, claim_annotations: &str) -> String {
    node(i, 600, pods, "").edit(
        "annotations: {cluster.x-k8s.io/machine",
        &format!("annotations: {{{claim_annotations}, cluster.x-k8s.io/machine"),
    )
}

fn pool_hash(text: &str) -> String {
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    karpenter_capi::controller::drift::nodepool_hash(&s.nodepools[0])
}

#[test]
fn drift_compares_only_our_own_hash_version_and_restamps_others() {
    let pool = base(1, "");
    // Stamped by Karpenter (v3) with a hash that is not ours: re-stamped, not drifted.
    let foreign = annotated_node(
        1,
        &app_pod("web-1", 1, ""),
        "karpenter.sh/nodepool-hash: '12345', karpenter.sh/nodepool-hash-version: v3",
    );
    let p = run(&format!("{pool}{foreign}"));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    let stamps: Vec<_> = p
        .status
        .iter()
        .filter_map(|a| match a {
            Action::StampNodeClaimHash {
                node_claim,
                hash,
                hash_version,
                previous_version,
                ..
            } => Some((
                node_claim.as_str(),
                hash.clone(),
                hash_version.as_str(),
                previous_version.as_deref(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        stamps,
        vec![(
            "default-1",
            Some(pool_hash(&pool)),
            "karpenter-capi-v1",
            Some("v3")
        )]
    );
    // Stamped with our version and a hash the pool no longer has: drifted.
    let ours = annotated_node(
        1,
        &app_pod("web-1", 1, ""),
        "karpenter.sh/nodepool-hash: '12345', karpenter.sh/nodepool-hash-version: karpenter-capi-v1",
    );
    let p = run(&format!("{pool}{ours}"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    assert!(p.status.iter().any(|a| matches!(a,
        Action::SetNodeClaimConditions { node_claim, set, .. }
            if node_claim == "default-1" && set.iter().any(|c| c.type_ == "Drifted" && c.reason == "NodePoolDrifted"))));
    // A NodePool hash annotation written by another controller is never read.
    let annotated_pool = pool.edit_n(
        "  name: default\nspec:\n  template:",
        "  name: default\n  annotations: {karpenter.sh/nodepool-hash: '12345', karpenter.sh/nodepool-hash-version: karpenter-capi-v1}\nspec:\n  template:",
        1,
    );
    assert_ne!(annotated_pool, pool);
    let p = run(&format!("{annotated_pool}{ours}"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
}

#[test]
fn widening_a_requirement_is_no_drift() {
    // The claim records no requirements (`requirements: []`), so a key the pool gains is not
    // judged on it: controller_lifecycle.rs::a_requirement_the_pool_gained_drifts_claims_lacking_its_label
    // has the claims that record theirs.
    let pool = base(1, "");
    let current = pool_hash(&pool);
    let stamped = annotated_node(
        1,
        &app_pod("web-1", 1, ""),
        &format!(
            "karpenter.sh/nodepool-hash: '{current}', karpenter.sh/nodepool-hash-version: karpenter-capi-v1"
        ),
    );
    let widened = pool.edit(
        "      - key: kubernetes.io/arch\n",
        "      - key: topology.kubernetes.io/region\n        operator: In\n        values: [eu, us]\n      - key: kubernetes.io/arch\n",
    );
    assert_ne!(widened, pool);
    assert_eq!(pool_hash(&widened), current, "requirements are not hashed");
    let p = run(&format!("{widened}{stamped}"));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    // A template label is hashed: drift.
    let labelled = pool.edit_n(
        "  template:\n    spec:",
        "  template:\n    metadata:\n      labels: {team: a}\n    spec:",
        1,
    );
    assert_ne!(labelled, pool);
    let p = run(&format!("{labelled}{stamped}"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
}

#[test]
fn budgets_count_initialized_nodes_and_not_ready_ones_as_disrupting() {
    // Two empty initialized nodes, a budget of one: the NotReady one already uses it.
    let budget = "    budgets: [{nodes: '1'}]\n";
    let not_ready = node(2, 600, "", "").edit(
        "conditions: [{type: Ready, status: 'True'}]",
        "conditions: [{type: Ready, status: 'False'}]",
    );
    let p = run(&format!(
        "{}{}{not_ready}",
        base(2, budget),
        node(1, 600, "", "")
    ));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    // 50% of the initialized nodes (2) is one, whatever the claims still launching.
    let budget = "    budgets: [{nodes: '50%'}]\n";
    let launching = |i: usize| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-{i}\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\n",
            ago(30)
        )
    };
    let p = run(&format!(
        "{}{}{}{}{}",
        base(4, budget),
        node(1, 600, "", ""),
        node(2, 600, "", ""),
        launching(3),
        launching(4)
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
}

#[test]
fn do_not_disrupt_on_the_claim_and_with_a_duration_on_pods() {
    let drifted = "karpenter.sh/nodepool-hash: 'stale', karpenter.sh/nodepool-hash-version: karpenter-capi-v1";
    // On the NodeClaim (from the NodePool's template annotations).
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        annotated_node(
            1,
            "",
            &format!("{drifted}, karpenter.sh/do-not-disrupt: 'true'")
        )
    ));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    // A pod protected for 5 minutes, started 1 minute ago: blocked; 10 minutes ago: not.
    let pod = |started: i64| {
        app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 5m").edit(
            "status: {phase: Running}",
            &format!("status: {{phase: Running, startTime: '{}'}}", ago(started)),
        )
    };
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        annotated_node(1, &pod(60), drifted)
    ));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        annotated_node(1, &pod(600), drifted)
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
}

#[test]
fn consolidate_after_counts_from_the_last_pod_event() {
    let text = format!("{}{}", base(1, ""), node(1, 600, "", ""));
    // A pod left node-1 10 s ago: consolidateAfter (30 s) has not elapsed.
    let p = run_with_events(&text, &[("node-1", 10)]);
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    let recorded = recorded_pod_events(&p);
    assert_eq!(recorded, vec![("default-1", ago(10))]);
    // Written on the claim, the same event is not written again; 40 s later it is Empty.
    let written = text.edit(
        "  nodeName: node-1\n",
        &format!("  nodeName: node-1\n  lastPodEventTime: '{}'\n", ago(40)),
    );
    let p = run_with_events(&written, &[("node-1", 40)]);
    assert!(!p.status.iter().any(|a| a.name() == "recordPodEvent"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    // Within core's 10 s de-duplication window, a newer event is not written.
    let p = run_with_events(&written.edit(&ago(40), &ago(5)), &[("node-1", 1)]);
    assert!(!p.status.iter().any(|a| a.name() == "recordPodEvent"));
}

/// The pod events a plan records: (claim, time).
fn recorded_pod_events(p: &Plan) -> Vec<(&str, String)> {
    p.status
        .iter()
        .filter_map(|a| match a {
            Action::RecordPodEvent {
                node_claim, time, ..
            } => Some((node_claim.as_str(), time.clone())),
            _ => None,
        })
        .collect()
}

/// Karpenter's counters for every action of a plan as if all were applied, as `name{k=v,...} n`.
pub(crate) fn counted(text: &str) -> Vec<String> {
    use karpenter_capi::controller::karpenter_metrics::counts;
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    let p = plan(&s, NOW.parse().unwrap(), &Config::default());
    counts(p.actions.iter().chain(p.status.iter()), &s)
        .iter()
        .map(|c| {
            let labels: Vec<String> = c.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{}{{{}}} {}", c.counter.name(), labels.join(","), c.by)
        })
        .collect()
}

#[test]
fn karpenter_counters_follow_cores_commands() {
    // Two underused nodes consolidated into one cheaper replacement: one multi-node replace
    // decision, two disrupted claims under the pool's policy, one claim created for the reason.
    assert_eq!(
        counted(&two_c3_8("700m")),
        vec![
            "nodeclaims_created{reason=underutilized,nodepool=default,min_values_relaxed=false} 1",
            "nodeclaims_disrupted{reason=underutilized,nodepool=default,capacity_type=,consolidation_policy=when_empty_or_underutilized,termination_mode=graceful} 1",
            "pods_disruption_initiated{reason=underutilized,nodepool=default,capacity_type=,consolidation_policy=when_empty_or_underutilized,termination_mode=graceful} 1",
            "nodeclaims_disrupted{reason=underutilized,nodepool=default,capacity_type=,consolidation_policy=when_empty_or_underutilized,termination_mode=graceful} 1",
            "pods_disruption_initiated{reason=underutilized,nodepool=default,capacity_type=,consolidation_policy=when_empty_or_underutilized,termination_mode=graceful} 1",
            "voluntary_disruption_decisions_by_nodepool{nodepool=default,decision=replace,reason=underutilized,consolidation_type=multi} 1",
            "voluntary_disruption_decisions{decision=replace,reason=underutilized,consolidation_type=multi} 1",
        ]
    );
    // Two empty nodes: one `empty` command (core's emptiness is one command per pass); the
    // final deletes of a disruption count nothing more.
    let two_empty = format!(
        "{}{}{}",
        base(2, "    budgets: [{nodes: '100%'}]\n"),
        node(1, 600, "", ""),
        node(2, 600, "", "")
    );
    let c = counted(&two_empty);
    assert_eq!(
        c.iter().filter(|l| l.starts_with("nodeclaims_disrupted{reason=empty,nodepool=default,capacity_type=,consolidation_policy=when_empty,")).count(),
        2,
        "{c:?}"
    );
    assert_eq!(
        c.iter()
            .filter(|l| l.starts_with("voluntary_disruption_decisions"))
            .collect::<Vec<_>>(),
        vec![
            "voluntary_disruption_decisions_by_nodepool{nodepool=default,decision=delete,reason=empty,consolidation_type=empty} 1",
            "voluntary_disruption_decisions{decision=delete,reason=empty,consolidation_type=empty} 1",
        ]
    );
    // A Node whose Machine is gone loses our finalizer: one node terminated.
    let orphan = "---\napiVersion: v1\nkind: Node\nmetadata: {name: gone, finalizers: [karpenter.sh/termination], labels: {karpenter.sh/nodepool: default, topology.kubernetes.io/zone: eu-west-1a}}\nspec: {providerID: 'openstack:///gone'}\n";
    let other = "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {name: other, namespace: capi-ovh, labels: {cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4}}\nspec: {clusterName: capi-ovh}\n";
    assert_eq!(
        counted(&format!("{}{orphan}{other}", base(0, ""))),
        vec!["nodes_terminated{nodepool=default,zone=eu-west-1a} 1"]
    );
    // A deleted claim whose Machine is being deleted loses our finalizer: one claim terminated.
    // Its drain (a user's deletion) was no disruption, so nothing else counts.
    let deleted = node(1, 600, "", "")
        .edit_n(
            "  name: default-1\n",
            &format!("  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n", ago(60)),
            1,
        )
        .edit(
            "node.kubernetes.io/instance-type: c3-4}",
            "node.kubernetes.io/instance-type: c3-4, karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: gra1}",
        )
        .edit(
            "metadata: {name: m-1, namespace: capi-ovh, ",
            &format!("metadata: {{name: m-1, namespace: capi-ovh, deletionTimestamp: '{}', ", ago(5)),
        );
    assert_eq!(
        counted(&format!("{}{deleted}", base(1, ""))),
        vec!["nodeclaims_terminated{nodepool=default,capacity_type=on-demand,zone=gra1} 1"]
    );
    let with_pod = node(1, 600, &app_pod("web-1", 1, ""), "").edit_n(
        "  name: default-1\n",
        &format!("  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n", ago(60)),
        1,
    );
    // A user's deletion drains, but is no disruption; its pod is provisioned for at once (core's
    // provisioner schedules the pods of deleting nodes), and its eviction is a forceful drain's.
    assert_eq!(
        counted(&format!("{}{with_pod}", base(1, ""))),
        vec![
            "nodeclaims_created{reason=provisioned,nodepool=default,min_values_relaxed=false} 1",
            "pods_drained{reason=Forceful Termination} 1"
        ],
    );
}

#[test]
fn a_blocked_node_is_reported_in_cores_words() {
    let blocked = |text: &str| -> Vec<(String, String, String)> {
        let s = snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: text.to_string(),
        }])
        .unwrap();
        plan(&s, NOW.parse().unwrap(), &Config::default())
            .status
            .into_iter()
            .filter_map(|a| match a {
                Action::ReportDisruptionBlocked {
                    node,
                    node_claim,
                    message,
                    ..
                } => Some((node, node_claim, message)),
                _ => None,
            })
            .collect()
    };
    let one = |n: &str, c: &str, m: &str| vec![(n.to_string(), c.to_string(), m.to_string())];
    assert_eq!(
        blocked(&format!(
            "{}{}",
            base(1, ""),
            node(1, 600, "", "karpenter.sh/do-not-disrupt: 'true'")
        )),
        one(
            "node-1",
            "default-1",
            "disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation"
        )
    );
    assert_eq!(
        blocked(&format!(
            "{}{}",
            base(1, ""),
            node(
                1,
                600,
                &app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'true'"),
                ""
            )
        )),
        one(
            "node-1",
            "default-1",
            "pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/web-1)"
        )
    );
    let pdb = "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: default}\nspec: {selector: {matchLabels: {app: web}}, maxUnavailable: 0}\nstatus: {disruptionsAllowed: 0}\n";
    assert_eq!(
        blocked(&format!(
            "{}{}{pdb}",
            base(1, ""),
            node(1, 600, &app_pod("web-1", 1, ""), "")
        )),
        one(
            "node-1",
            "default-1",
            "pdb prevents pod evictions (PodDisruptionBudget=[default/web])"
        )
    );
    assert_eq!(
        blocked(&format!("{}{}", base(1, ""), node(1, 600, "", ""))),
        vec![],
        "nothing blocks an empty node"
    );
}

/// Issue 11 item 3, as a general rule over each field: a change to any field of the NodePool's
/// template that Karpenter hashes (core `pkg/apis/v1/nodepool.go` / `nodeclaim.go`: the
/// template's labels and annotations, taints, startupTaints, nodeClassRef,
/// terminationGracePeriod, expireAfter) drifts a claim stamped with the old hash; a change to a
/// field that is `hash:"ignore"` (requirements) or outside the template (limits, weight,
/// disruption) does not.
#[test]
fn every_hashed_template_field_drifts_and_no_other_field_does() {
    let pool = base(1, "");
    let current = pool_hash(&pool);
    let stamped = annotated_node(
        1,
        &app_pod("web-1", 1, ""),
        &format!(
            "karpenter.sh/nodepool-hash: '{current}', karpenter.sh/nodepool-hash-version: karpenter-capi-v1"
        ),
    );
    // A second Ready node class, so that a changed nodeClassRef points at a usable class.
    let other_class = "---\napiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata:\n  name: other\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True'}]}\n";
    let template = "  template:\n    spec:\n";
    let edits: Vec<(&str, String, bool)> = vec![
        (
            "template annotation",
            pool.edit_n(
                template,
                "  template:\n    metadata:\n      annotations: {example.com/owner: team-a}\n    spec:\n",
                1,
            ),
            true,
        ),
        (
            "template label",
            pool.edit_n(
                template,
                "  template:\n    metadata:\n      labels: {team: a}\n    spec:\n",
                1,
            ),
            true,
        ),
        (
            "taint",
            pool.edit_n(
                template,
                // PreferNoSchedule: web-1 still has a home on the replacement.
                "  template:\n    spec:\n      taints: [{key: dedicated, value: web, effect: PreferNoSchedule}]\n",
                1,
            ),
            true,
        ),
        (
            "startupTaint",
            pool.edit_n(
                template,
                "  template:\n    spec:\n      startupTaints: [{key: example.com/not-ready, effect: NoSchedule}]\n",
                1,
            ),
            true,
        ),
        (
            "nodeClassRef",
            pool.edit_n(
                "        kind: ClusterAPINodeClass\n        name: default\n",
                "        kind: ClusterAPINodeClass\n        name: other\n",
                1,
            ),
            true,
        ),
        (
            "terminationGracePeriod",
            pool.edit_n(
                "      expireAfter: Never\n",
                "      expireAfter: Never\n      terminationGracePeriod: 1h\n",
                1,
            ),
            true,
        ),
        (
            "expireAfter",
            pool.edit_n("      expireAfter: Never\n", "      expireAfter: 2160h\n", 1),
            true,
        ),
        (
            "a widened requirement",
            pool.edit_n(
                "      - key: kubernetes.io/arch\n",
                "      - key: topology.kubernetes.io/region\n        operator: In\n        values: [eu, us]\n      - key: kubernetes.io/arch\n",
                1,
            ),
            false,
        ),
        (
            "limits",
            pool.edit_n("  limits:\n    cpu: '20'\n", "  limits:\n    cpu: '40'\n", 1),
            false,
        ),
        (
            "weight",
            pool.edit_n("  limits:\n", "  weight: 50\n  limits:\n", 1),
            false,
        ),
        (
            "consolidateAfter",
            pool.edit_n("    consolidateAfter: 30s\n", "    consolidateAfter: 1h\n", 1),
            false,
        ),
    ];
    // The unchanged pool: no drift.
    let p = run(&format!("{pool}{other_class}{stamped}"));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    for (field, edited, drifts) in edits {
        assert_ne!(edited, pool, "the {field} edit applies");
        let p = run(&format!("{edited}{other_class}{stamped}"));
        if drifts {
            assert_ne!(pool_hash(&edited), current, "{field} is hashed");
            assert_eq!(
                tainted_nodes(&p),
                vec![("node-1", "Drifted")],
                "a changed {field} drifts: {:?}",
                names(&p)
            );
            assert!(
                p.status.iter().any(|a| matches!(a,
                    Action::SetNodeClaimConditions { node_claim, set, .. }
                        if node_claim == "default-1"
                            && set.iter().any(|c| c.type_ == "Drifted" && c.reason == "NodePoolDrifted"))),
                "{field}: Drifted/NodePoolDrifted on the claim"
            );
        } else {
            assert_eq!(pool_hash(&edited), current, "{field} is not hashed");
            assert!(
                tainted_nodes(&p).is_empty(),
                "a changed {field} is no drift: {:?}",
                names(&p)
            );
        }
    }
}

pub(crate) fn pdb(name: &str, selector: &str, allowed: i64, extra: &str) -> String {
    format!(
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: default}}\nspec: {{selector: {{matchLabels: {selector}}}{extra}}}\nstatus: {{disruptionsAllowed: {allowed}}}\n"
    )
}

/// node-1 drifted (a stale NodePool hash), holding `pods`.
pub(crate) fn drifted_node(pods: &str) -> String {
    node(1, 600, pods, "").edit(
        "annotations: {cluster.x-k8s.io/machine",
        "annotations: {karpenter.sh/nodepool-hash: 'stale', karpenter.sh/nodepool-hash-version: karpenter-capi-v1, cluster.x-k8s.io/machine",
    )
}

pub(crate) fn blocked_messages(p: &Plan) -> Vec<&str> {
    p.status
        .iter()
        .filter_map(|a| match a {
            Action::ReportDisruptionBlocked { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

/// PodDisruptionBudgets as the eviction API sees them (core `utils/pdb/pdb.go` CanEvictPods,
/// `statenode.go` ValidatePodsDisruptable): a pod under two budgets can never be evicted,
/// whatever they allow; a DaemonSet pod's budget counts; a budget with
/// `unhealthyPodEvictionPolicy: AlwaysAllow` lets a not-ready pod go.
#[test]
fn pdbs_as_the_eviction_api_sees_them() {
    let web = app_pod("web-1", 1, "");
    // One budget allowing a disruption: drift goes ahead (its replacement first).
    let one = pdb("web", "{app: web}", 1, "");
    let p = run(&format!("{}{}{one}", base(1, ""), drifted_node(&web)));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    // Two budgets, each allowing one: no candidate, reported in core's words.
    let two = format!("{one}{}", pdb("all", "{}", 1, ""));
    let p = run(&format!("{}{}{two}", base(1, ""), drifted_node(&web)));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert_eq!(
        blocked_messages(&p),
        vec![
            "eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/all default/web])"
        ]
    );
    // A DaemonSet pod (not tolerating the taint) under a budget allowing nothing blocks an
    // empty node.
    let ds = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: exporter-1, namespace: default, labels: {app: exporter}, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: exporter, uid: e, controller: true}]}\nspec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: 50m}}}]}\nstatus: {phase: Running}\n";
    let held = pdb("exporter", "{app: exporter}", 0, "");
    let p = run(&format!("{}{}{held}", base(1, ""), node(1, 600, ds, "")));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert_eq!(
        blocked_messages(&p),
        vec!["pdb prevents pod evictions (PodDisruptionBudget=[default/exporter])"]
    );
    // A not-ready pod under a budget that always lets unhealthy pods go does not hold it.
    let unready = web.edit(
        "status: {phase: Running}",
        "status: {phase: Running, conditions: [{type: Ready, status: 'False'}]}",
    );
    let always = pdb(
        "web",
        "{app: web}",
        0,
        ", unhealthyPodEvictionPolicy: AlwaysAllow",
    );
    let p = run(&format!(
        "{}{}{always}",
        base(1, ""),
        drifted_node(&unready)
    ));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    // The same pod ready: held.
    let p = run(&format!("{}{}{always}", base(1, ""), drifted_node(&web)));
    assert_eq!(names(&p), Vec::<&str>::new());
    // Not ready under a budget without AlwaysAllow (or IfHealthyBudget spelled out): held, as
    // the eviction API refuses it while the budget allows no disruption (U-PDB-002).
    for policy in ["", ", unhealthyPodEvictionPolicy: IfHealthyBudget"] {
        let plain = pdb("web", "{app: web}", 0, policy);
        let p = run(&format!("{}{}{plain}", base(1, ""), drifted_node(&unready)));
        assert_eq!(names(&p), Vec::<&str>::new(), "{policy:?}");
    }
}

/// Paused means paused (Cluster API `annotations.IsPaused`): with the MachineDeployment (or its
/// Cluster) paused, no taint, no claim deletion (emptiness, expiry, a launch timeout), no mark,
/// no replica change; `spec.paused` alone (a rollout pause) holds nothing.
#[test]
fn paused_cluster_api_plans_nothing_on_its_machines() {
    let paused = |text: String| {
        text.edit_n(
            "    capacity.cluster-autoscaler.kubernetes.io/cpu: '2'\n",
            "    capacity.cluster-autoscaler.kubernetes.io/cpu: '2'\n    cluster.x-k8s.io/paused: ''\n",
            1,
        )
    };
    let capacity_annotations_kept = paused(base(1, ""));
    assert!(
        capacity_annotations_kept.contains("cluster.x-k8s.io/paused"),
        "fixture"
    );
    // Empty: not tainted.
    let p = run(&format!("{}{}", paused(base(1, "")), node(1, 600, "", "")));
    assert_eq!(names(&p), Vec::<&str>::new(), "{:?}", p.notes);
    // Expired: not deleted.
    let expiring = base(1, "").edit("      expireAfter: Never\n", "      expireAfter: 30m\n");
    let p = run(&format!(
        "{}{}",
        paused(expiring.clone()),
        node(1, 600, "", "")
    ));
    assert_eq!(names(&p), Vec::<&str>::new(), "{:?}", p.notes);
    let p = run(&format!("{expiring}{}", node(1, 600, "", "")));
    assert_eq!(names(&p), vec!["deleteNodeClaim"]);
    // A claim that never launched: not deleted while paused.
    let unlaunched = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-x\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\n",
        ago(3600)
    );
    let p = run(&format!("{}{unlaunched}", base(0, "")));
    assert!(names(&p).contains(&"deleteNodeClaim"), "{:?}", names(&p));
    let p = run(&format!("{}{unlaunched}", paused(base(0, ""))));
    assert!(!names(&p).contains(&"deleteNodeClaim"), "{:?}", names(&p));
}

/// Core `disruption/queue.go`: a command waiting for its replacement is called off after
/// clamp(80 ms x queued commands, 10 min, 1 h) from its start.
#[test]
fn a_command_that_times_out_is_called_off() {
    let waiting = |started_ago: i64| {
        draining("{}").edit(
            &format!("karpenter-capi/drain-started: '{}'", ago(60)),
            &format!("karpenter-capi/drain-started: '{}'", ago(started_ago)),
        )
    };
    assert_eq!(names(&run(&waiting(540))), Vec::<&str>::new());
    let p = run(&waiting(660));
    assert_eq!(names(&p), vec!["abortDisruption"]);
    assert!(
        p.notes
            .iter()
            .any(|n| n == "Drifted disruption timed out after 11m"),
        "{:?}",
        p.notes
    );
}

/// Core `nodeclaim/expiration`: every claim expires, initialized or not, with a Node or not.
#[test]
fn expiry_takes_every_claim() {
    let launching = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-x\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: [], expireAfter: 1m}}\nstatus: {{providerID: 'openstack:///x', conditions: [{{type: Launched, status: 'True'}}]}}\n",
        ago(120)
    );
    let p = run(&format!("{}{launching}", base(1, "")));
    assert!(
        p.actions.iter().any(
            |a| matches!(a, Action::DeleteNodeClaim { node_claim, reason, .. }
            if node_claim == "default-x" && reason == "Expired")
        ),
        "{:?}",
        names(&p)
    );
}

/// Drift is the eventual class (core `disruption/types.go` NewCandidate): with a
/// terminationGracePeriod on the claim, pods that block eviction do not keep a drifted node; the
/// node's own do-not-disrupt always does.
#[test]
fn drift_with_a_grace_period_takes_nodes_whose_pods_block() {
    let guarded = app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'true'");
    let with_grace = |text: String| {
        text.edit(
            "requirements: []}",
            "requirements: [], terminationGracePeriod: 1h}",
        )
    };
    let p = run(&format!("{}{}", base(1, ""), drifted_node(&guarded)));
    assert_eq!(names(&p), Vec::<&str>::new());
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        with_grace(drifted_node(&guarded))
    ));
    // No replacement for the pod no eviction moves (core `pdb.go` IsCurrentlyReschedulable):
    // it stays until the deadline deletes it.
    assert_eq!(names(&p), vec!["taintNode"]);
    let node_guarded = with_grace(drifted_node(&app_pod("web-1", 1, ""))).edit(
        "annotations: {}}",
        "annotations: {karpenter.sh/do-not-disrupt: 'true'}}",
    );
    let p = run(&format!("{}{node_guarded}", base(1, "")));
    assert_eq!(names(&p), Vec::<&str>::new());
}

/// Core `disruption/drift.go`: one drifted node per command, the empty ones first.
#[test]
fn drift_takes_one_node_per_pass_empty_first() {
    let drifted = |i: usize, pods: &str| {
        node(i, 600, pods, "").edit(
            "annotations: {cluster.x-k8s.io/machine",
            "annotations: {karpenter.sh/nodepool-hash: 'stale', karpenter.sh/nodepool-hash-version: karpenter-capi-v1, cluster.x-k8s.io/machine",
        )
    };
    // node-1 (older) has a pod, node-2 is empty: node-2 goes first, alone.
    let p = run(&format!(
        "{}{}{}",
        base(2, "    budgets: [{nodes: '100%'}]\n"),
        drifted(1, &app_pod("web-1", 1, "")),
        drifted(2, "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Drifted")]);
}

/// Core `consolidation.go` computeConsolidation: never one node into several, however cheap.
#[test]
fn consolidation_never_turns_one_node_into_several() {
    // One c3-8 (0.10/h) with two 1500m pods; c3-4 made very cheap (0.01/h): two c3-4 would
    // save 0.08/h, but that is two nodes for one.
    let cheap = two_c3_8("1500m").edit_n(
        "capacity.cluster-autoscaler.kubernetes.io/price: '0.05'",
        "capacity.cluster-autoscaler.kubernetes.io/price: '0.01'",
        1,
    );
    let one_node = cheap.edit(&c3_8_node(2, &sized_pod("b", 2, "", "1500m")), "")
        + &sized_pod("c", 1, "", "1500m");
    let p = run(&one_node);
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    assert!(!names(&p).contains(&"taintNode"), "{:?}", names(&p));
}

/// Core `disruption/types.go` NewCandidate with `utils/pod/scheduling.go` IsReschedulable and
/// `pdb.go` isEvictable: pods already terminating, and mirror pods, neither keep a node from
/// being Empty nor block it, whatever their do-not-disrupt or PodDisruptionBudget say.
#[test]
fn terminating_and_mirror_pods_do_not_hold_a_node_back() {
    let terminating = |ann: &str| {
        app_pod("web-1", 1, ann).edit(
            "labels: {app: web}",
            &format!("labels: {{app: web}}, deletionTimestamp: '{}'", ago(10)),
        )
    };
    // Its only workload pod is terminating: the node is Empty.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node(1, 600, &terminating(""), "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    // A terminating pod with do-not-disrupt, or under a PDB allowing nothing, blocks nothing.
    let guarded = terminating("karpenter.sh/do-not-disrupt: 'true'");
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, &guarded, "")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    assert_eq!(blocked_messages(&p), Vec::<&str>::new());
    let zero = pdb("web", "{app: web}", 0, "");
    let p = run(&format!(
        "{}{}{zero}",
        base(1, ""),
        node(1, 600, &terminating(""), "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    // A mirror (static) pod under a PDB allowing nothing: never evicted, so no block, no work.
    let mirror = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: etcd-1, namespace: default, labels: {app: web}, annotations: {kubernetes.io/config.mirror: x}, ownerReferences: [{apiVersion: v1, kind: Node, name: node-1, uid: node-uid, controller: true}]}\nspec: {nodeName: node-1, containers: [{name: c}]}\nstatus: {phase: Running}\n";
    let p = run(&format!(
        "{}{}{zero}",
        base(1, ""),
        node(1, 600, mirror, "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    assert_eq!(blocked_messages(&p), Vec::<&str>::new());
}

/// Node `i` of the default pool leaving with no claim left, as after we released its claim's
/// finalizer: its Machine being deleted by Cluster API (which drains the Node), or with only the
/// given `node_extra` (taints, a deletionTimestamp) on the Node when `machine_deleting` is false.
fn leaving_node(i: usize, machine_deleting: bool, node_meta: &str, node_spec: &str) -> String {
    let pid = format!("openstack:///n{i}");
    let deleting = if machine_deleting {
        format!(
            ", deletionTimestamp: '{}', finalizers: [machine.cluster.x-k8s.io]",
            ago(20)
        )
    } else {
        String::new()
    };
    format!(
        "---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {{name: m-{i}, namespace: capi-ovh, creationTimestamp: '{created}', labels: {{cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4}}{deleting}}}
spec: {{clusterName: capi-ovh, providerID: '{pid}'}}
status: {{nodeRef: {{name: node-{i}}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: node-{i}, labels: {{karpenter.sh/nodepool: default, karpenter.sh/initialized: 'true', kubernetes.io/hostname: node-{i}}}{node_meta}}}
spec: {{providerID: '{pid}'{node_spec}}}
status: {{capacity: {{cpu: '2', memory: 4G, pods: '110'}}, allocatable: {{cpu: '2', memory: 4G, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}
",
        created = ago(3600),
    )
}

#[test]
fn a_node_still_draining_without_its_claim_uses_up_the_budget() {
    // Two empty nodes and a budget of one. node-3's claim is gone but the Node is still there
    // with a pod to drain: core would still hold its claim (no InstanceTerminating before the
    // drain is over) and count it as disrupting (BuildDisruptionBudgetMapping).
    let budget = "    budgets: [{nodes: '1'}]\n";
    let two = format!(
        "{}{}{}",
        base(2, budget),
        node(1, 600, "", ""),
        node(2, 600, "", "")
    );
    let taint = ", taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]";
    let node_deleting = format!(
        ", deletionTimestamp: '{}', finalizers: [karpenter.sh/termination]",
        ago(20)
    );
    let pod = app_pod("web-3", 3, "");
    for (what, leaving) in [
        (
            "its Machine is being deleted",
            leaving_node(3, true, "", ""),
        ),
        (
            "it carries the disrupted taint",
            leaving_node(3, false, "", taint),
        ),
        (
            "the Node is being deleted",
            leaving_node(3, false, &node_deleting, ""),
        ),
    ] {
        let p = run(&format!("{two}{leaving}{pod}"));
        assert!(tainted_nodes(&p).is_empty(), "{what}: {:?}", names(&p));
        // 50% of the three initialized nodes is two: the leaving one uses one of them.
        let half = two.edit("budgets: [{nodes: '1'}]", "budgets: [{nodes: '50%'}]");
        let p = run(&format!("{half}{leaving}{pod}"));
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")], "{what}");
        // Drained (core's claim would report InstanceTerminating), it takes nothing: a pod
        // that has finished does not hold it either.
        let done = pod.edit("phase: Running", "phase: Succeeded");
        for rest in ["", done.as_str()] {
            let p = run(&format!("{two}{leaving}{rest}"));
            assert_eq!(
                tainted_nodes(&p),
                vec![("node-1", "Empty")],
                "{what}, drained"
            );
        }
    }
    // Once it is gone, one node is disrupted.
    assert_eq!(tainted_nodes(&run(&two)), vec![("node-1", "Empty")]);
    // A Machine that is not being deleted, a Node of no pool (nothing to attribute it to) or one
    // never initialized (core counts initialized nodes only) takes nothing.
    for (what, other) in [
        ("staying", leaving_node(3, false, "", "")),
        (
            "no pool",
            leaving_node(3, true, "", "").edit("karpenter.sh/nodepool: default, ", ""),
        ),
        (
            "not initialized",
            leaving_node(3, true, "", "").edit("karpenter.sh/initialized: 'true', ", ""),
        ),
    ] {
        let p = run(&format!("{two}{other}{pod}"));
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")], "{what}");
    }
}

#[test]
fn a_node_whose_pods_cost_nothing_to_evict_is_empty() {
    // Core's Candidate.IsEmpty: only positive eviction costs make a node non-empty. A cost of
    // 1 + deletion-cost / 2^27 + priority / 2^25, clamped to [-10, 10].
    let with = |annotations: &str, priority: &str| {
        let pod = app_pod("web-1", 1, annotations).edit(
            "spec: {nodeName: node-1,",
            &format!("spec: {{{priority}nodeName: node-1,"),
        );
        run(&format!("{}{}", base(1, ""), node(1, 600, &pod, "")))
    };
    let zero = "controller.kubernetes.io/pod-deletion-cost: '-134217728'";
    for (what, annotations, priority) in [
        ("deletion cost -2^27 (cost 0)", zero, ""),
        (
            "a low priority (cost clamped to -10)",
            "",
            "priority: -1000000000, ",
        ),
        (
            "deletion cost -2^28 (cost -1)",
            "controller.kubernetes.io/pod-deletion-cost: '-268435456'",
            "",
        ),
    ] {
        let p = with(annotations, priority);
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")], "{what}");
    }
    // One unit of 2^-27 above zero, or a plain pod: not empty, and a WhenEmpty pool keeps it.
    for (what, annotations) in [
        (
            "deletion cost -2^27 + 1",
            "controller.kubernetes.io/pod-deletion-cost: '-134217727'",
        ),
        ("plain", ""),
    ] {
        let p = with(annotations, "");
        assert!(tainted_nodes(&p).is_empty(), "{what}: {:?}", names(&p));
    }
    // Validation: such a pod on an Empty command's node is no arrival; the command goes on
    // (node-2 has room for it).
    let pod = app_pod("web-1", 1, zero);
    let busy = under_way(&node(1, 600, &pod, ""), 1, "Empty", 20);
    let p = run(&format!("{}{busy}{}", base(2, ""), node(2, 600, "", "")));
    assert!(!names(&p).contains(&"abortDisruption"), "{:?}", names(&p));
    assert!(names(&p).contains(&"deleteNodeClaim"), "{:?}", names(&p));
}

#[test]
fn a_newer_pod_event_overwrites_an_older_recorded_one() {
    // M-PODEV-004: a claim whose lastPodEventTime is five minutes old gets the newer event
    // (10 s ago) written, and the newer one decides consolidateAfter (30 s): not tainted yet.
    let text = format!("{}{}", base(1, ""), node(1, 600, "", "")).edit(
        "  nodeName: node-1\n",
        &format!("  nodeName: node-1\n  lastPodEventTime: '{}'\n", ago(300)),
    );
    let p = run_with_events(&text, &[("node-1", 10)]);
    let recorded = recorded_pod_events(&p);
    assert_eq!(recorded, vec![("default-1", ago(10))]);
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    // Without the event, the recorded time alone makes the node Empty.
    assert_eq!(
        tainted_nodes(&run_with_events(&text, &[])),
        vec![("node-1", "Empty")]
    );
}
