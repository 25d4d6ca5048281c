//! Which nodes disruption takes, against Karpenter core v1.14.1's candidate filtering and drift
//! suites (`disruption/suite_test.go`, `drift_test.go`): pods and annotations that block a node
//! or do not, with the plan asserted exactly on several cluster states.

use crate::controller_disruption::{
    app_pod, base, blocked_messages, drifted_node, names, node, pdb, run, tainted_nodes, two_c3_8,
};
use karpenter_capi_testkit::Edit;

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
    let plain = daemon.edit(GUARD, "");
    let p = run(&format!("{}{}", base(1, ""), node(1, 600, &plain, "")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    for phase in ["Succeeded", "Failed"] {
        let finished =
            app_pod("job-1", 1, GUARD).edit("phase: Running", &format!("phase: {phase}"));
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
    let node_false = drifted_node(&web).edit(
        "annotations: {}}",
        "annotations: {karpenter.sh/do-not-disrupt: 'false'}}",
    );
    let p = run(&format!("{}{node_false}", base(1, "")));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    let garbled = app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'sometimes'");
    let p = run(&format!("{}{}", base(1, ""), drifted_node(&garbled)));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    let never = base(1, "").edit("consolidateAfter: 30s", "consolidateAfter: Never");
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
        t.edit(
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
    let guarded = graced(two_c3_8("700m")).edit(
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
        node(i, 600, "", "").edit(
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
    let ancient = node(1, 600, "", "").edit_n(
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
        node(i, 600, "", "").edit_n(
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

/// Core `queue.go` GetMaxRetryDuration: 80 ms per command under way, at least 10 minutes, at
/// most an hour, with core's own table (D-QUEUE-009..014).
#[test]
fn the_command_timeout_grows_with_the_commands_under_way() {
    use karpenter_capi::controller::command::command_timeout_secs;
    let table = [
        (100, 600),
        (4_000, 600),
        (10_000, 800),
        (40_000, 3_200),
        (80_000, 3_600),
        (100_000, 3_600),
    ];
    for (queued, secs) in table {
        assert_eq!(command_timeout_secs(queued), secs, "{queued} commands");
    }
}

/// Core `disruption/helpers.go` GetCandidates and `statenode.go` ValidateNodeDisruptable: only
/// a Node with a claim of a NodePool that exists is a candidate; a claim without its Node, a Node
/// without a claim, a claim without the nodepool label or of a NodePool that is gone are never
/// disrupted (D-SUITE-039, D-SUITE-040, D-SUITE-045, D-SUITE-046).
#[test]
fn only_claimed_nodes_of_a_known_pool_are_candidates() {
    let budget = "    budgets: [{nodes: '100%'}]\n";
    // The control: an empty node of the pool is disrupted.
    let p = run(&format!("{}{}", base(1, budget), node(1, 600, "", "")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    // Without the nodepool label, or labelled for a pool that is gone: left alone.
    for label in ["", "karpenter.sh/nodepool: gone, "] {
        let text = node(1, 600, "", "").edit_n(
            "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}",
            &format!("labels: {{{label}node.kubernetes.io/instance-type: c3-4}}"),
            1,
        );
        let p = run(&format!("{}{text}", base(1, budget)));
        assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new(), "{label:?}");
        assert!(!names(&p).contains(&"deleteNodeClaim"), "{:?}", names(&p));
    }
    // A Node of the pool with no claim and no Machine: nothing.
    let lone = "---\napiVersion: v1\nkind: Node\nmetadata: {name: lone, labels: {karpenter.sh/nodepool: default}}\nspec: {providerID: 'openstack:///lone'}\nstatus: {capacity: {cpu: '2', memory: 4G, pods: '110'}, allocatable: {cpu: '2', memory: 4G, pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n";
    let p = run(&format!("{}{lone}", base(0, budget)));
    assert_eq!(names(&p), Vec::<&str>::new());
    // A launched claim whose Node has not appeared (its registration clock a minute old).
    let nodeless = format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-x\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{providerID: 'openstack:///x', conditions: [{{type: Launched, status: 'True'}}, {{type: Registered, status: Unknown, lastTransitionTime: '{}'}}]}}\n",
        crate::controller_disruption::ago(3600),
        crate::controller_disruption::ago(60)
    );
    // (replicas 1: the Machine it waits for is already asked for)
    let p = run(&format!("{}{nodeless}", base(1, budget)));
    assert_eq!(names(&p), Vec::<&str>::new());
}

/// Core emptiness (`emptiness_test.go`, `suite_test.go`): an empty node annotated
/// do-not-disrupt `"false"` is removed; a budget over a finished pod only blocks nothing; a
/// terminating StatefulSet pod keeps its node from being Empty, since it comes back under its
/// name (D-EMPTY-011, D-SUITE-037, D-EMPTY-018).
#[test]
fn what_keeps_an_empty_node_and_what_does_not() {
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node(1, 600, "", "karpenter.sh/do-not-disrupt: 'false'")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    let done = app_pod("job-1", 1, "").edit("phase: Running", "phase: Succeeded");
    let p = run(&format!(
        "{}{}{}",
        base(1, ""),
        node(1, 600, &done, ""),
        pdb("web", "{app: web}", 0, ", maxUnavailable: 0")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
    assert_eq!(blocked_messages(&p), Vec::<&str>::new());
    let leaving = |owner: &str| {
        app_pod("db-0", 1, "").edit(
            "labels: {app: web}",
            &format!(
                "labels: {{app: web}}, deletionTimestamp: '{}', ownerReferences: [{{apiVersion: apps/v1, kind: {owner}, name: db, uid: s, controller: true}}]",
                crate::controller_disruption::ago(5)
            ),
        )
    };
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node(1, 600, &leaving("StatefulSet"), "")
    ));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    // A terminating ReplicaSet pod does not come back there: the node is Empty.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node(1, 600, &leaving("ReplicaSet"), "")
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Empty")]);
}
