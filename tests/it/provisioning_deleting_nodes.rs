//! What provisioning makes room for when a node is being deleted (core v1.14 scheduling
//! `suite_test.go` `Deleting Nodes`; core `provisioner.go` `GetPendingPods` and
//! `reschedulable` pods of deleting nodes): its ordinary pods, but not its terminating pods,
//! DaemonSet pods, or pods a PodDisruptionBudget fully blocks.

use karpenter_capi::controller::{Action, Plan};
use karpenter_capi_testkit::Edit;

use crate::controller_disruption::{ago, base, node, run, sized_pod};

/// Node 1's claim being deleted, holding `web` and the extra pods `pods` (its cilium
/// DaemonSet pod too), and node 2 full; plus `extra` objects.
fn deleting_node(pods: &str, extra: &str) -> String {
    let n1 = node(1, 600, &(sized_pod("web", 1, "", "500m") + pods), "").edit(
        "  name: default-1\n",
        &format!(
            "  name: default-1\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
            ago(30)
        ),
    );
    format!("{}{n1}{extra}", base(1, ""))
}

/// The pods the plan's new NodeClaims are for.
fn provisioned_for(p: &Plan) -> Vec<String> {
    let mut out: Vec<String> = p
        .actions
        .iter()
        .chain(&p.pending)
        .filter_map(|a| match a {
            Action::CreateNodeClaim { pods, .. } => Some(pods.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A pod of `app` bound to node 1, with extra metadata fields.
fn on_node_1(name: &str, app: &str, meta: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: {app}}}{meta}}}\nspec: {{nodeName: node-1, containers: [{{name: c, resources: {{requests: {{cpu: 500m}}}}}}]}}\nstatus: {{phase: Running}}\n"
    )
}

/// Only `web` is provisioned for: a terminating pod (S-SCHED-169), a terminating ReplicaSet pod
/// (S-SCHED-171) and the node's DaemonSet pod (S-SCHED-170) are not.
#[test]
fn only_the_ordinary_pods_of_a_deleting_node_are_provisioned_for() {
    let terminating = format!(
        ", deletionTimestamp: '{}', finalizers: [example.com/hold]",
        ago(5)
    );
    let rs = format!(
        "{terminating}, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u-rs, controller: true}}]"
    );
    let pods = on_node_1("leaving", "leaving", &terminating) + &on_node_1("rs-pod", "rs", &rs);
    let p = run(&deleting_node(&pods, ""));
    assert_eq!(provisioned_for(&p), ["default/web"], "{:?}", p.notes);
}

/// A pod that a PodDisruptionBudget fully blocks stays where it is until the budget allows,
/// so no room is made for it early: maxUnavailable 0 (S-SCHED-173) or 0% (S-SCHED-174),
/// minAvailable 100% (S-SCHED-175), or two budgets over it (S-SCHED-176).
#[test]
fn pods_a_budget_fully_blocks_are_not_provisioned_for() {
    let pdb = |name: &str, spec: &str| {
        format!(
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: default}}\nspec: {{selector: {{matchLabels: {{app: locked}}}}, {spec}}}\n"
        )
    };
    for budgets in [
        pdb("zero", "maxUnavailable: 0"),
        pdb("zero-percent", "maxUnavailable: '0%'"),
        pdb("all", "minAvailable: '100%'"),
        pdb("one", "maxUnavailable: 1") + &pdb("two", "maxUnavailable: 1"),
    ] {
        let p = run(&deleting_node(&on_node_1("locked", "locked", ""), &budgets));
        assert_eq!(
            provisioned_for(&p),
            ["default/web"],
            "{budgets}: {:?}",
            p.notes
        );
    }
}

/// U-PDB-012, U-PDB-013: a pod that is not Ready under a budget with `AlwaysAllow` can be
/// evicted, so it is provisioned for with the node's other pods; without the policy, or Ready,
/// the budget holds it and it is not. A Ready pod that is `do-not-disrupt` is not either.
#[test]
fn a_not_ready_pod_under_an_always_allow_budget_is_provisioned_for() {
    let budget = |policy: &str| {
        format!(
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: all, namespace: default}}\nspec: {{selector: {{matchLabels: {{app: locked}}}}, minAvailable: '100%'{policy}}}\n"
        )
    };
    let unready = on_node_1("locked", "locked", "").edit(
        "status: {phase: Running}",
        "status: {phase: Running, conditions: [{type: Ready, status: 'False'}]}",
    );
    let always = budget(", unhealthyPodEvictionPolicy: AlwaysAllow");
    let p = run(&deleting_node(&unready, &always));
    assert_eq!(provisioned_for(&p), ["default/locked", "default/web"]);
    let p = run(&deleting_node(&unready, &budget("")));
    assert_eq!(provisioned_for(&p), ["default/web"]);
    let p = run(&deleting_node(&on_node_1("locked", "locked", ""), &always));
    assert_eq!(provisioned_for(&p), ["default/web"]);
    let guarded = on_node_1(
        "locked",
        "locked",
        ", annotations: {karpenter.sh/do-not-disrupt: 'true'}",
    );
    let p = run(&deleting_node(&guarded, ""));
    assert_eq!(provisioned_for(&p), ["default/web"]);
}
