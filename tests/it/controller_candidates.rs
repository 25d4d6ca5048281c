//! Which nodes disruption takes, against Karpenter core v1.14.1's candidate filtering and drift
//! suites (`disruption/suite_test.go`, `drift_test.go`): pods and annotations that block a node
//! or do not, with the plan asserted exactly on several cluster states.

use crate::controller_disruption::{
    app_pod, base, blocked_messages, drifted_node, names, node, pdb, run, tainted_nodes, two_c3_8,
};

const GUARD: &str = "karpenter.sh/do-not-disrupt: 'true'";

/// A mirror (static) pod or a DaemonSet pod with an active do-not-disrupt keeps an empty node
/// from being a candidate, reported in core's words; a finished pod with it does not
/// (D-SUITE-020, D-SUITE-021, D-SUITE-029).
#[test]
fn protected_mirror_and_daemonset_pods_block_finished_ones_do_not() {
    let mirror = format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: etcd-1, namespace: default, annotations: {{kubernetes.io/config.mirror: x, {GUARD}}}, ownerReferences: [{{apiVersion: v1, kind: Node, name: node-1, uid: node-uid, controller: true}}]}}\nspec: {{nodeName: node-1, containers: [{{name: c}}]}}\nstatus: {{phase: Running}}\n"
    );
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, &mirror, "")));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert_eq!(
        blocked_messages(&p),
        vec!["pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/etcd-1)"]
    );
    let daemon = format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: exporter-1, namespace: default, annotations: {{{GUARD}}}, ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: exporter, uid: e, controller: true}}]}}\nspec: {{nodeName: node-1, containers: [{{name: c, resources: {{requests: {{cpu: 50m}}}}}}]}}\nstatus: {{phase: Running}}\n"
    );
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, &daemon, "")));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert_eq!(
        blocked_messages(&p),
        vec!["pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/exporter-1)"]
    );
    // Without the annotation (the control): the node is Empty.
    let plain = daemon.replace(GUARD, "");
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, &plain, "")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    for phase in ["Succeeded", "Failed"] {
        let finished =
            app_pod("job-1", 1, GUARD).replace("phase: Running", &format!("phase: {phase}"));
        let p = run(&format!("{}{}", base(1, ""), node(1, 600, &finished, "")));
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")], "{phase}");
        assert_eq!(blocked_messages(&p), Vec::<&str>::new());
    }
}

/// Drift (core `drift_test.go`): a node annotated do-not-disrupt `"false"` is drifted like any
/// other, a pod's unparsable do-not-disrupt does not stop drift, and an empty drifted node goes
/// even when the pool never consolidates (D-DRIFT-009, D-DRIFT-014, D-DRIFT-018).
#[test]
fn drift_ignores_a_false_or_unparsable_do_not_disrupt_and_a_disabled_consolidation() {
    let web = app_pod("web-1", 1, "");
    let control = run(&format!("{}{}", base(1, ""), drifted_node(&web)));
    assert_eq!(names(&control), vec!["createNodeClaim", "taintNode"]);
    let node_false = drifted_node(&web).replace(
        "annotations: {}}",
        "annotations: {karpenter.sh/do-not-disrupt: 'false'}}",
    );
    let p = run(&format!("{}{node_false}", base(1, "")));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    let garbled = app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'sometimes'");
    let p = run(&format!("{}{}", base(1, ""), drifted_node(&garbled)));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    let never = base(1, "").replace("consolidateAfter: 30s", "consolidateAfter: Never");
    let p = run(&format!("{never}{}", drifted_node("")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    // Not drifted and never consolidating: the empty node stays.
    let p = run(&format!("{never}{}", node(1, 600, "", "")));
    assert_eq!(names(&p), Vec::<&str>::new());
}

/// Consolidation is graceful (core `types.go` NewCandidate): a terminationGracePeriod on the
/// claims does not let it take nodes whose pods are protected or under a budget that blocks
/// (D-SUITE-024, D-SUITE-025).
#[test]
fn a_grace_period_does_not_open_consolidation_to_blocked_pods() {
    let graced = |t: String| {
        t.replace(
            "requirements: []}",
            "requirements: [], terminationGracePeriod: 1h}",
        )
    };
    let control = run(&graced(two_c3_8("700m")));
    assert_eq!(
        names(&control)[0],
        "createNodeClaim",
        "{:?}",
        names(&control)
    );
    let guarded = graced(two_c3_8("700m")).replace(
        "annotations: {}}\nspec: {nodeName",
        &format!("annotations: {{{GUARD}}}}}\nspec: {{nodeName"),
    );
    let p = run(&guarded);
    assert_eq!(names(&p), Vec::<&str>::new());
    let held = format!(
        "{}{}",
        graced(two_c3_8("700m")),
        pdb("web", "{app: web}", 0, ", maxUnavailable: 0")
    );
    let p = run(&held);
    assert_eq!(names(&p), Vec::<&str>::new());
}

fn expired(p: &karpenter_capi::controller::Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            karpenter_capi::controller::Action::DeleteNodeClaim {
                node_claim, reason, ..
            } if reason == "Expired" => Some(node_claim.as_str()),
            _ => None,
        })
        .collect()
}

/// Core `nodeclaim/expiration`: a claim older than its expireAfter goes; a younger one stays;
/// `Never` (here the pool's) never expires a claim, however old; expiry ignores a budget of zero
/// (E-EXP-005, E-EXP-006).
#[test]
fn expiry_takes_claims_past_their_expire_after_only() {
    let with_expiry = |i: usize, e: &str| {
        node(i, 600, "", "").replace(
            "requirements: []}",
            &format!("requirements: [], expireAfter: {e}}}"),
        )
    };
    // Both claims are an hour old.
    let text = format!(
        "{}{}{}",
        base(2, "    budgets: [{nodes: '0'}]\n"),
        with_expiry(1, "2h"),
        with_expiry(2, "30m")
    );
    assert_eq!(expired(&run(&text)), vec!["default-2"]);
    // The pool's `Never`, a claim three years old: kept.
    let ancient = node(1, 600, "", "").replacen(
        &format!(
            "creationTimestamp: '{}'",
            crate::controller_disruption::ago(3600)
        ),
        &format!(
            "creationTimestamp: '{}'",
            crate::controller_disruption::ago(3 * 365 * 86_400)
        ),
        1,
    );
    assert!(ancient.contains(&crate::controller_disruption::ago(3 * 365 * 86_400)));
    let p = run(&format!(
        "{}{ancient}",
        base(1, "    budgets: [{nodes: '0'}]\n")
    ));
    assert_eq!(expired(&p), Vec::<&str>::new());
    assert_eq!(names(&p), Vec::<&str>::new());
}

/// Core `BuildDisruptionBudgetMapping`: when more nodes are already disrupting than the budget
/// allows, the allowance is zero, never below: no new disruption starts (D-SUITE-010).
#[test]
fn a_budget_already_used_up_allows_nothing_new() {
    let deleting = |i: usize| {
        node(i, 600, "", "").replacen(
            &format!("  name: default-{i}\n"),
            &format!(
                "  name: default-{i}\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
                crate::controller_disruption::ago(10)
            ),
            1,
        )
    };
    let pool = "    budgets: [{nodes: '10%'}]\n";
    // The control: one empty node among three, nothing disrupting: 10% of 3 rounds up to one.
    let p = run(&format!(
        "{}{}{}{}",
        base(3, pool),
        node(1, 600, &app_pod("web-1", 1, ""), ""),
        node(2, 600, &app_pod("web-2", 2, ""), ""),
        node(3, 600, "", "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-3", "Empty")]);
    // Two of them deleting: 2 disrupting against an allowance of 1; node-3 stays.
    let p = run(&format!(
        "{}{}{}{}",
        base(3, pool),
        deleting(1),
        deleting(2),
        node(3, 600, "", "")
    ));
    assert!(
        tainted_nodes(&p).iter().all(|(_, r)| *r == "Deleted"),
        "{:?}",
        tainted_nodes(&p)
    );
    assert!(!names(&p).contains(&"deleteNodeClaim"), "{:?}", names(&p));
}
