//! Disruption in the reconcile core: the seed's scale-to-zero, budgets, do-not-disrupt, blocking
//! PodDisruptionBudgets, drift, and that the Machine marked is always the claim's own.

use crate::shared;

use jiff::Timestamp;
use karpenter_capi::controller::{Action, Config, Plan, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};

const NOW: &str = "2026-11-30T10:00:00Z";

fn ago(secs: i64) -> String {
    let now: Timestamp = NOW.parse().unwrap();
    Timestamp::from_second(now.as_second() - secs)
        .unwrap()
        .to_string()
}

/// The seed scenario without pending pods, node class Ready, c3-4 at `replicas`.
fn base(replicas: usize, pool_patch: &str) -> String {
    let text = shared::read("scenarios/inflate-antiaffinity.yaml");
    let text = text
        .replace("  replicas: 2\n  selector:\n    matchLabels:\n      app: inflate", "  replicas: 0\n  selector:\n    matchLabels:\n      app: inflate")
        .replacen("  name: default\nspec: {}\n", "  name: default\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True'}]}\n", 1)
        .replacen(
            "  replicas: 0\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4",
            &format!("  replicas: {replicas}\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4"),
            1,
        );
    text.replace(
        "    consolidateAfter: 30s\n",
        &format!("    consolidateAfter: 30s\n{pool_patch}"),
    )
}

/// A registered, initialized c3-4 node `i` with its claim, Machine and a cilium pod (tolerating
/// every taint as its DaemonSet's template does, so never evicted); plus `pods`.
fn node(i: usize, initialized_ago: i64, pods: &str, node_annotations: &str) -> String {
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

fn app_pod(name: &str, node: usize, annotations: &str) -> String {
    sized_pod(name, node, annotations, "500m")
}

fn sized_pod(name: &str, node: usize, annotations: &str, cpu: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: web}}, annotations: {{{annotations}}}}}\nspec: {{nodeName: node-{node}, containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\nstatus: {{phase: Running}}\n"
    )
}

/// A c3-8 node instead of a c3-4 one.
fn c3_8_node(i: usize, pods: &str) -> String {
    node(i, 600, pods, "").replace("c3-4", "c3-8").replace(
        "capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}",
        "capacity: {cpu: '4', memory: 8G, pods: '110'}, allocatable: {cpu: '4', memory: 8G, pods: '110'}",
    )
}

/// Two c3-8 nodes with one pod of `cpu` each, consolidation of underutilized nodes on.
fn two_c3_8(cpu: &str) -> String {
    let pool = "    budgets: [{nodes: '100%'}]\n";
    let base = base(0, pool).replace("    consolidationPolicy: WhenEmpty\n", "    consolidationPolicy: WhenEmptyOrUnderutilized\n").replacen(
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

fn run(text: &str) -> Plan {
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: text.to_string(),
    }])
    .unwrap();
    plan(&s, NOW.parse().unwrap(), &Config::default())
}

fn names(p: &Plan) -> Vec<&str> {
    p.actions.iter().map(|a| a.name()).collect()
}

#[test]
fn seed_scale_to_zero_after_consolidate_after() {
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, "", "")));
    assert_eq!(
        names(&p),
        vec![
            "taintNode",
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
    assert!(
        matches!(&p.actions[0], Action::TaintNode { node, taint, reason, saving_per_hour, .. }
        if node == "node-1" && taint == "karpenter.sh/disrupted:NoSchedule" && reason == "Empty" && saving_per_hour.0 == 50_000_000)
    );
    // cilium tolerates the disrupted taint: never evicted, the node is drained as it is.
    assert!(
        matches!(&p.actions[1], Action::MarkMachineForDeletion { machine, .. } if machine == "capi-ovh/m-1")
    );
    assert!(
        matches!(&p.actions[2], Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-1" && reason == "Empty")
    );
    match &p.actions[3] {
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
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][0]["action"], "taintNode");
    assert_eq!(json["actions"][0]["reason"], "Empty");
    assert_eq!(json["actions"][0]["savingPerHour"], 0.05);
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
    let deleted: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::DeleteNodeClaim { node_claim, .. } => Some(node_claim.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, vec!["default-1"]);
    assert!(p.actions.iter().any(|a| matches!(
        a,
        Action::ScaleMachineDeployment {
            from: 2,
            replicas: 1,
            ..
        }
    )));
    // The marked Machine is the disrupted claim's own, never the other one.
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
        node(1, 600, pods, node_ann).replace(
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
    let tainted = node(1, 600, "", "").replace(
        "spec: {providerID: 'openstack:///n1'}",
        "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
    );
    let p = run(&format!("{}{}", base(1, ""), tainted));
    assert_eq!(
        names(&p),
        vec![
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
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
    assert!(
        p.actions
            .iter()
            .any(|a| matches!(a, Action::EvictPod { pod, .. } if pod == "default/a")),
        "{:?}",
        names(&p)
    );
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
    let pool = base(2, "").replace(
        "      - key: kubernetes.io/arch\n",
        "      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [gra]\n      - key: kubernetes.io/arch\n",
    );
    let zoned = |i: usize| {
        node(i, 600, &app_pod(&format!("web-{i}"), i, ""), "")
            .replace("labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}", "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4, topology.kubernetes.io/zone: nova}")
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

/// node-1 drifted and tainted, with a pod; a replacement claim in some state.
fn draining(replacement_status: &str) -> String {
    let tainted = node(1, 600, &app_pod("web-1", 1, ""), "").replace(
        "spec: {providerID: 'openstack:///n1'}",
        "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
    );
    let replacement = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-r\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/replaces: node-1, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {replacement_status}\n",
        ago(60)
    );
    format!("{}{tainted}{replacement}", base(2, ""))
}

#[test]
fn the_drain_waits_for_the_replacement_then_evicts() {
    let p = run(&draining("{}"));
    assert!(!names(&p).contains(&"evictPod"), "{:?}", names(&p));
    assert!(
        p.notes
            .iter()
            .any(|n| n == "node node-1: waiting for its replacement to initialize before draining"),
        "{:?}",
        p.notes
    );
    // Initialized: its Ready node has room for web-1.
    let node_r = "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-r}\nspec: {providerID: 'openstack:///r'}\nstatus: {capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n";
    let p = run(&format!(
        "{}{node_r}",
        draining(
            "{providerID: 'openstack:///r', nodeName: node-r, conditions: [{type: Initialized, status: 'True'}]}"
        )
    ));
    let evicted: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::EvictPod { pod, .. } => Some(pod.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        evicted,
        vec!["default/web-1"],
        "non-DaemonSet pods first, the DaemonSet pod once they are gone"
    );
}

#[test]
fn after_the_termination_grace_period_pods_are_deleted_despite_pdbs() {
    let pdb = "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: default}\nspec: {selector: {matchLabels: {app: web}}, maxUnavailable: 0}\nstatus: {disruptionsAllowed: 0}\n";
    let with_grace = |started_ago: i64, reason: &str| {
        let pod = app_pod("web-1", 1, "").replace(
            "name: web-1, namespace: default,",
            "name: web-1, namespace: default, uid: uid-web-1,",
        );
        let tainted = node(1, 600, &pod, "")
            .replace(
                "spec: {providerID: 'openstack:///n1'}",
                "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
            )
            .replace("annotations: {cluster.x-k8s.io/machine", &format!("annotations: {{karpenter-capi/drain-started: '{}', karpenter-capi/disruption-reason: {reason}, cluster.x-k8s.io/machine", ago(started_ago)));
        let pool = base(1, "").replace(
            "      expireAfter: Never\n",
            "      expireAfter: Never\n      terminationGracePeriod: 1h\n",
        );
        run(&format!("{pool}{tainted}{pdb}"))
    };
    let p = with_grace(2 * 3600, "Drifted");
    let forced: Vec<(&str, bool)> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::EvictPod { pod, force, .. } => Some((pod.as_str(), *force)),
            _ => None,
        })
        .collect();
    // Tier by tier even then: the DaemonSet pod goes once web-1 is gone.
    assert_eq!(forced, vec![("default/web-1", true)]);
    let steps = p
        .actions
        .iter()
        .find(|a| a.name() == "evictPod")
        .unwrap()
        .steps();
    // A forced delete of exactly the pod planned on: its UID is the precondition (a pod
    // re-created under the same name is not deleted).
    use karpenter_capi::controller::write::Write;
    match &steps.writes[0] {
        Write::Delete {
            namespace,
            name,
            uid,
            ..
        } => assert_eq!(
            (namespace.as_str(), name.as_str(), uid.as_deref()),
            ("default", "web-1", Some("uid-web-1"))
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(steps.writes.len(), 1, "{:?}", steps.writes);
    // Inside the grace period, a voluntary drain whose pods have no room is called off; an
    // expiry drains with ordinary evictions, which the PDB may refuse, with the same
    // precondition.
    assert_eq!(names(&with_grace(600, "Drifted")), vec!["abortDisruption"]);
    let p = with_grace(600, "Expired");
    assert!(
        p.actions
            .iter()
            .all(|a| !matches!(a, Action::EvictPod { force: true, .. })),
        "{:?}",
        names(&p)
    );
    let evict = p
        .actions
        .iter()
        .find(|a| a.name() == "evictPod")
        .unwrap_or_else(|| panic!("{:?} {:?}", names(&p), p.notes));
    match &evict.steps().writes[0] {
        Write::Evict {
            namespace,
            name,
            uid,
        } => assert_eq!(
            (namespace.as_str(), name.as_str(), uid.as_deref()),
            ("default", "web-1", Some("uid-web-1"))
        ),
        other => panic!("{other:?}"),
    }
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
    let drifted = node(1, 600, &app_pod("web-1", 1, ""), "").replace(
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
            "evictPod",
            "markMachineForDeletion",
            "deleteNodeClaim",
            "scaleMachineDeployment"
        ]
    );
    assert!(
        matches!(&p.pending[1], Action::MarkMachineForDeletion { machine, .. } if machine == "capi-ovh/m-1")
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
    assert_eq!(json["pending"][2]["action"], "deleteNodeClaim");
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

fn tainted_nodes(p: &Plan) -> Vec<(&str, &str)> {
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
    node(i, 600, pods, "").replace(
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
    let annotated_pool = pool.replacen(
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
    let pool = base(1, "");
    let current = pool_hash(&pool);
    let stamped = annotated_node(
        1,
        &app_pod("web-1", 1, ""),
        &format!(
            "karpenter.sh/nodepool-hash: '{current}', karpenter.sh/nodepool-hash-version: karpenter-capi-v1"
        ),
    );
    let widened = pool.replace(
        "      - key: kubernetes.io/arch\n",
        "      - key: topology.kubernetes.io/region\n        operator: In\n        values: [eu, us]\n      - key: kubernetes.io/arch\n",
    );
    assert_ne!(widened, pool);
    assert_eq!(pool_hash(&widened), current, "requirements are not hashed");
    let p = run(&format!("{widened}{stamped}"));
    assert!(tainted_nodes(&p).is_empty(), "{:?}", names(&p));
    // A template label is hashed: drift.
    let labelled = pool.replacen(
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
    let not_ready = node(2, 600, "", "").replace(
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
        app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 5m").replace(
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
    let recorded: Vec<_> = p
        .status
        .iter()
        .filter_map(|a| match a {
            Action::RecordPodEvent {
                node_claim, time, ..
            } => Some((node_claim.as_str(), time.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, vec![("default-1", ago(10))]);
    // Written on the claim, the same event is not written again; 40 s later it is Empty.
    let written = text.replace(
        "  nodeName: node-1\n",
        &format!("  nodeName: node-1\n  lastPodEventTime: '{}'\n", ago(40)),
    );
    let p = run_with_events(&written, &[("node-1", 40)]);
    assert!(!p.status.iter().any(|a| a.name() == "recordPodEvent"));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    // Within core's 10 s de-duplication window, a newer event is not written.
    let p = run_with_events(&written.replace(&ago(40), &ago(5)), &[("node-1", 1)]);
    assert!(!p.status.iter().any(|a| a.name() == "recordPodEvent"));
}

/// Karpenter's counters for every action of a plan as if all were applied, as `name{k=v,...} n`.
fn counted(text: &str) -> Vec<String> {
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
        .replacen(
            "  name: default-1\n",
            &format!("  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n", ago(60)),
            1,
        )
        .replace(
            "node.kubernetes.io/instance-type: c3-4}",
            "node.kubernetes.io/instance-type: c3-4, karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: gra1}",
        )
        .replace(
            "metadata: {name: m-1, namespace: capi-ovh, ",
            &format!("metadata: {{name: m-1, namespace: capi-ovh, deletionTimestamp: '{}', ", ago(5)),
        );
    assert_eq!(
        counted(&format!("{}{deleted}", base(1, ""))),
        vec!["nodeclaims_terminated{nodepool=default,capacity_type=on-demand,zone=gra1} 1"]
    );
    let with_pod = node(1, 600, &app_pod("web-1", 1, ""), "").replacen(
        "  name: default-1\n",
        &format!("  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n", ago(60)),
        1,
    );
    assert_eq!(
        counted(&format!("{}{with_pod}", base(1, ""))),
        Vec::<String>::new(),
        "a user's deletion drains, but is no disruption"
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
            pool.replacen(
                template,
                "  template:\n    metadata:\n      annotations: {example.com/owner: team-a}\n    spec:\n",
                1,
            ),
            true,
        ),
        (
            "template label",
            pool.replacen(
                template,
                "  template:\n    metadata:\n      labels: {team: a}\n    spec:\n",
                1,
            ),
            true,
        ),
        (
            "taint",
            pool.replacen(
                template,
                // PreferNoSchedule: web-1 still has a home on the replacement.
                "  template:\n    spec:\n      taints: [{key: dedicated, value: web, effect: PreferNoSchedule}]\n",
                1,
            ),
            true,
        ),
        (
            "startupTaint",
            pool.replacen(
                template,
                "  template:\n    spec:\n      startupTaints: [{key: example.com/not-ready, effect: NoSchedule}]\n",
                1,
            ),
            true,
        ),
        (
            "nodeClassRef",
            pool.replacen(
                "        kind: ClusterAPINodeClass\n        name: default\n",
                "        kind: ClusterAPINodeClass\n        name: other\n",
                1,
            ),
            true,
        ),
        (
            "terminationGracePeriod",
            pool.replacen(
                "      expireAfter: Never\n",
                "      expireAfter: Never\n      terminationGracePeriod: 1h\n",
                1,
            ),
            true,
        ),
        (
            "expireAfter",
            pool.replacen("      expireAfter: Never\n", "      expireAfter: 2160h\n", 1),
            true,
        ),
        (
            "a widened requirement",
            pool.replacen(
                "      - key: kubernetes.io/arch\n",
                "      - key: topology.kubernetes.io/region\n        operator: In\n        values: [eu, us]\n      - key: kubernetes.io/arch\n",
                1,
            ),
            false,
        ),
        (
            "limits",
            pool.replacen("  limits:\n    cpu: '20'\n", "  limits:\n    cpu: '40'\n", 1),
            false,
        ),
        (
            "weight",
            pool.replacen("  limits:\n", "  weight: 50\n  limits:\n", 1),
            false,
        ),
        (
            "consolidateAfter",
            pool.replacen("    consolidateAfter: 30s\n", "    consolidateAfter: 1h\n", 1),
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
