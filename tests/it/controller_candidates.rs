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

/// Core consolidation (`consolidation_test.go` Delete and Replace, `statenode.go`
/// ValidatePodsDisruptable, `utils/pod/scheduling.go` IsDoNotDisruptActive): of two
/// underutilized c3-8 nodes whose pods fit on either, the first is deleted; a PDB allowing
/// nothing (in the pod's namespace), a do-not-disrupt node or an active do-not-disrupt pod keeps
/// it, with or without a terminationGracePeriod, and the other goes instead; a PDB of another
/// namespace, an elapsed do-not-disrupt duration or an unparsable value does not protect it; an
/// ownerless pod is no obstacle (D-CONS-044, D-CONS-048, D-CONS-050, D-CONS-052,
/// D-CONS-060..068).
#[test]
fn consolidation_skips_protected_nodes_and_takes_the_other() {
    use crate::controller_disruption::{ago, evicts};
    use karpenter_capi::controller::Action;
    let only_a = |text: String| {
        text.replacen(
            "name: a, namespace: default, labels: {app: web}",
            "name: a, namespace: default, labels: {app: web, only: a}",
            1,
        )
    };
    let with_a_annotated = |text: String, a: &str| {
        text.replacen(
            "name: a, namespace: default, labels: {app: web, only: a}, annotations: {}",
            &format!(
                "name: a, namespace: default, labels: {{app: web, only: a}}, annotations: {{{a}}}"
            ),
            1,
        )
    };
    let graced = |text: String| {
        text.replacen(
            "      expireAfter: Never\n",
            "      expireAfter: Never\n      terminationGracePeriod: 1h\n",
            1,
        )
    };
    let blocking = pdb("a", "{only: a}", 0, "");
    let took = |text: &str| {
        let p = run(text);
        tainted_nodes(&p)
            .into_iter()
            .map(|(n, r)| format!("{n} {r}"))
            .collect::<Vec<_>>()
    };
    let one = vec!["node-1 Underutilized".to_string()];
    let two = vec!["node-2 Underutilized".to_string()];
    // The control: node-1 goes (a delete: b's node holds a), its ownerless pod a drains later.
    let control = only_a(two_c3_8("1500m"));
    let p = run(&control);
    assert_eq!(took(&control), one);
    assert!(
        p.pending
            .iter()
            .any(|a| matches!(a, Action::EvictPod { pod, .. } if pod == "default/a")),
        "{:?}",
        p.pending
    );
    assert_eq!(evicts(&p), Vec::<&str>::new());
    // A PDB allowing nothing, in a's namespace: node-2 instead, with or without a grace period.
    for text in [control.clone(), graced(control.clone())] {
        assert_eq!(took(&format!("{text}{blocking}")), two);
    }
    // The same PDB in another namespace protects nothing.
    let elsewhere = blocking.replacen("namespace: default}", "namespace: other}", 1);
    assert_ne!(elsewhere, blocking);
    assert_eq!(took(&format!("{control}{elsewhere}")), one);
    // do-not-disrupt on the Node.
    let guarded_node = control.replacen(
        "metadata: {name: node-1, labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}, annotations: {}}",
        "metadata: {name: node-1, labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}, annotations: {karpenter.sh/do-not-disrupt: 'true'}}",
        1,
    );
    assert!(guarded_node != control);
    assert_eq!(took(&guarded_node), two);
    // do-not-disrupt on the pod: "true", with or without a grace period; a duration still
    // running since the pod started; but not one that has elapsed, nor an unparsable value.
    let guarded = with_a_annotated(control.clone(), "karpenter.sh/do-not-disrupt: 'true'");
    assert!(guarded != control);
    assert_eq!(took(&guarded), two);
    assert_eq!(took(&graced(guarded)), two);
    let started = |text: String, secs: i64| {
        text.replacen(
            "spec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}\nstatus: {phase: Running}",
            &format!(
                "spec: {{nodeName: node-1, containers: [{{name: c, resources: {{requests: {{cpu: 1500m}}}}}}]}}\nstatus: {{phase: Running, startTime: '{}'}}",
                ago(secs)
            ),
            1,
        )
    };
    let ten_minutes = with_a_annotated(control.clone(), "karpenter.sh/do-not-disrupt: 10m");
    assert!(started(ten_minutes.clone(), 60) != ten_minutes);
    assert_eq!(took(&started(ten_minutes.clone(), 60)), two);
    assert_eq!(took(&started(ten_minutes, 3600)), one);
    let soon = with_a_annotated(control.clone(), "karpenter.sh/do-not-disrupt: soon");
    assert_eq!(took(&soon), one);
    // Replace (700m pods, both onto one cheaper c3-4): a's PDB keeps node-1 out of it.
    let small = only_a(two_c3_8("700m"));
    let p = run(&format!("{small}{blocking}"));
    assert!(
        !tainted_nodes(&p).iter().any(|(n, _)| *n == "node-1"),
        "{:?}",
        tainted_nodes(&p)
    );
}

/// Core consolidation's destinations and candidates (`consolidation_test.go` Delete,
/// `suite_test.go` Candidate Filtering, `emptiness_test.go`): pods may move onto a Ready Node
/// Karpenter does not manage, so the candidate is deleted without a replacement; a node whose
/// pods could only go to a node that has not initialized is kept; Nodes without the
/// capacity-type, zone and instance-type labels are candidates (our price and flavor come from
/// the claim's MachineDeployment); an empty node that is also drifted is removed, as drifted
/// (D-CONS-059, D-CONS-069, D-SUITE-047..049, D-EMPTY-008, D-DRIFT-020).
#[test]
fn consolidation_moves_pods_only_onto_initialized_or_unmanaged_room() {
    use crate::controller_disruption::sized_pod;
    let underutilized = |replicas: usize| {
        base(replicas, "    budgets: [{nodes: '100%'}]\n").replacen(
            "    consolidationPolicy: WhenEmpty\n",
            "    consolidationPolicy: WhenEmptyOrUnderutilized\n",
            1,
        )
    };
    // node-1 (c3-4) with a 1500m pod; the only other room is a 4-CPU Node with no claim and no
    // Machine: node-1 is deleted onto it, no NodeClaim created.
    let unmanaged = "---\napiVersion: v1\nkind: Node\nmetadata: {name: static-1, labels: {kubernetes.io/hostname: static-1}}\nspec: {providerID: 'openstack:///static-1'}\nstatus: {capacity: {cpu: '4', memory: 8G, pods: '110'}, allocatable: {cpu: '4', memory: 8G, pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n";
    let one = node(1, 600, &sized_pod("a", 1, "", "1500m"), "");
    // Its Node has no capacity-type, zone or instance-type label.
    assert!(
        one.contains("metadata: {name: node-1, labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}")
    );
    let p = run(&format!("{}{one}{unmanaged}", underutilized(1)));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    // Without that room: no delete (a 1500m pod on a c3-4 has no cheaper home).
    let p = run(&format!("{}{one}", underutilized(1)));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    // Two c3-8 nodes: a 3000m pod on node-1 (no cheaper flavor holds it), 500m on node-2. The
    // control: one of them is deleted onto the other.
    let pair = crate::controller_disruption::two_c3_8("500m").replacen(
        "spec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}",
        "spec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: 3000m}}}]}",
        1,
    );
    let p = run(&pair);
    assert_eq!(tainted_nodes(&p).len(), 1, "{:?}", tainted_nodes(&p));
    // node-2 not initialized: node-1's pod has no initialized room, so node-1 is kept, and
    // node-2 is no candidate either.
    let (head, tail) = pair.split_at(pair.find("  name: default-2\n").unwrap());
    let fresh = format!(
        "{head}{}",
        tail.replacen(
            "{type: Initialized, status: 'True'",
            "{type: Initialized, status: Unknown",
            1
        )
    );
    assert!(fresh != pair);
    let p = run(&fresh);
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    // An empty node that is drifted too: removed, with the reason drifted as upstream's case
    // asserts, no replacement, its claim's deletion in the command's rest.
    let p = run(&format!("{}{}", base(1, ""), drifted_node("")));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    assert!(!names(&p).contains(&"createNodeClaim"), "{:?}", names(&p));
    assert!(
        p.pending
            .iter()
            .any(|a| matches!(a, karpenter_capi::controller::Action::DeleteNodeClaim { node_claim, .. } if node_claim == "default-1")),
        "{:?}",
        p.pending
    );
}

/// Core drift (`drift_test.go`, `utils/pod/scheduling.go` IsDoNotDisruptActive per pod): with
/// several pods whose do-not-disrupt durations run from their start (30 minutes ago here), the
/// drifted node waits until the longest has elapsed (D-DRIFT-015).
#[test]
fn drift_waits_for_the_longest_do_not_disrupt_duration() {
    use crate::controller_disruption::pod_with;
    let guarded =
        |name: &str, d: &str| pod_with(name, &format!("karpenter.sh/do-not-disrupt: {d}"), "", "");
    let drift = |a: &str, b: &str| {
        let pods = format!("{}{}", guarded("p", a), guarded("q", b));
        run(&format!("{}{}", base(1, ""), drifted_node(&pods)))
    };
    // 40m and 2h: both still running.
    let p = drift("40m", "2h");
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert_eq!(
        blocked_messages(&p),
        vec!["pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/p)"]
    );
    // 20m has elapsed, 40m has not: still waiting, now on q.
    let p = drift("20m", "40m");
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert_eq!(
        blocked_messages(&p),
        vec!["pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/q)"]
    );
    // Both elapsed: drifted.
    let p = drift("20m", "25m");
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    assert_eq!(blocked_messages(&p), Vec::<&str>::new());
}

/// Core `queue.go` (two commands in the queue): each command waits only for its own
/// replacements; the one whose replacement initialized deletes its claim, the other keeps
/// waiting (D-QUEUE-008).
#[test]
fn two_commands_finish_each_on_its_own_replacement() {
    use crate::controller_disruption::{ago, under_way};
    use karpenter_capi::controller::Action;
    let candidate = |i: usize| {
        under_way(
            &node(i, 600, &app_pod(&format!("web-{i}"), i, ""), ""),
            i,
            "Drifted",
            60,
        )
        .replacen(
            "karpenter-capi/disruption-reason: Drifted,",
            "karpenter-capi/disruption-reason: Drifted, karpenter-capi/replacements: '1',",
            1,
        )
    };
    let replacement = |i: usize, status: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-r{i}\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/replaces: node-{i}, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {status}\n",
            ago(60)
        )
    };
    let up = |i: usize| {
        format!(
            "{}---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-r{i}}}\nspec: {{providerID: 'openstack:///r{i}'}}\nstatus: {{capacity: {{cpu: '2', memory: 4G, pods: '110'}}, allocatable: {{cpu: '2', memory: 4G, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n",
            replacement(
                i,
                &format!(
                    "{{providerID: 'openstack:///r{i}', nodeName: node-r{i}, conditions: [{{type: Registered, status: 'True'}}, {{type: Initialized, status: 'True'}}]}}"
                )
            )
        )
    };
    let deleted = |p: &karpenter_capi::controller::Plan| -> Vec<String> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::DeleteNodeClaim { node_claim, .. } => Some(node_claim.clone()),
                _ => None,
            })
            .collect()
    };
    let waiting = |p: &karpenter_capi::controller::Plan, i: usize| {
        p.notes.iter().any(|n| {
            n == &format!(
                "node node-{i}: waiting for its replacement default-r{i} to initialize before draining"
            )
        })
    };
    // Neither replacement up: both wait.
    let p = run(&format!(
        "{}{}{}{}{}",
        base(4, ""),
        candidate(1),
        candidate(2),
        replacement(1, "{}"),
        replacement(2, "{}")
    ));
    assert_eq!(deleted(&p), Vec::<String>::new());
    assert!(waiting(&p, 1) && waiting(&p, 2), "{:?}", p.notes);
    // node-2's replacement is up first: only node-2's claim goes; node-1 still waits.
    let p = run(&format!(
        "{}{}{}{}{}",
        base(4, ""),
        candidate(1),
        candidate(2),
        replacement(1, "{}"),
        up(2)
    ));
    assert_eq!(deleted(&p), vec!["default-2".to_string()]);
    assert!(waiting(&p, 1), "{:?}", p.notes);
    // Then node-1's: only node-1's.
    let p = run(&format!(
        "{}{}{}{}{}",
        base(4, ""),
        candidate(1),
        candidate(2),
        up(1),
        replacement(2, "{}")
    ));
    assert_eq!(deleted(&p), vec!["default-1".to_string()]);
    assert!(waiting(&p, 2), "{:?}", p.notes);
}

/// Core drift (`drift_test.go`: continue to the next drifted node if the first cannot
/// reschedule all pods): node-1 is the drifted node taken first (the control); once its pod
/// asks for a label no flavor offers, it fits nowhere, node-1 stays, and node-2 is replaced
/// instead (D-DRIFT-005).
#[test]
fn drift_moves_on_when_the_first_drifted_nodes_pods_fit_nowhere() {
    use crate::controller_disruption::pod_with;
    let stale = |text: String| {
        text.replacen(
            "annotations: {cluster.x-k8s.io/machine",
            "annotations: {karpenter.sh/nodepool-hash: 'stale', karpenter.sh/nodepool-hash-version: karpenter-capi-v1, cluster.x-k8s.io/machine",
            1,
        )
    };
    let second = stale(node(2, 600, &app_pod("web-2", 2, ""), ""));
    let cluster = |pod1: &str| {
        let first = drifted_node(pod1).replacen(
            "labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}",
            "labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1, example.com/disk: local}",
            1,
        );
        run(&format!("{}{first}{second}", base(2, "")))
    };
    let p = cluster(&pod_with("plain", "", "", ""));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    let p = cluster(&pod_with(
        "pinned",
        "",
        "nodeSelector: {example.com/disk: local}, ",
        "",
    ));
    assert_eq!(tainted_nodes(&p), vec![("node-2", "Drifted")]);
    assert!(
        p.notes
            .iter()
            .any(|n| n
                == "node node-1: Drifted, but pods default/pinned fit nowhere else; not drained"),
        "{:?}",
        p.notes
    );
}

/// Core consolidation (`consolidation_test.go` Replace, on-demand): one underutilized c3-8 whose
/// 700m pod a c3-4 holds is replaced by one c3-4, the command's replacement created with the
/// taint (D-CONS-031).
#[test]
fn one_underutilized_node_is_replaced_by_a_cheaper_one() {
    let two = two_c3_8("700m");
    let cut = two
        .find("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-2")
        .unwrap();
    let one = two[..cut].replacen(
        "  replicas: 2\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        "  replicas: 1\n  selector:\n    matchLabels:\n      cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-8",
        1,
    );
    let p = run(&one);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    let created: Vec<(&str, &str, usize)> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            karpenter_capi::controller::Action::CreateNodeClaim {
                instance_type,
                reason,
                pods,
                ..
            } => Some((instance_type.as_str(), reason.as_str(), pods.len())),
            _ => None,
        })
        .collect();
    assert_eq!(created, vec![("c3-4", "Underutilized", 1)]);
}

/// Core's decision counters (`suite_test.go` Metrics): a drifted node removed without a
/// replacement is one `delete` decision, one replaced is one `replace` decision, both with
/// reason `drifted`, in the global and the per-pool series (D-SUITE-053, D-SUITE-054).
#[test]
fn drift_decisions_count_delete_or_replace() {
    use crate::controller_disruption::counted;
    let decisions = |text: String| -> Vec<String> {
        counted(&text)
            .into_iter()
            .filter(|l| l.starts_with("voluntary_disruption_decisions"))
            .collect()
    };
    assert_eq!(
        decisions(format!("{}{}", base(1, ""), drifted_node(""))),
        vec![
            "voluntary_disruption_decisions_by_nodepool{nodepool=default,decision=delete,reason=drifted,consolidation_type=} 1",
            "voluntary_disruption_decisions{decision=delete,reason=drifted,consolidation_type=} 1"
        ]
    );
    assert_eq!(
        decisions(format!(
            "{}{}",
            base(1, ""),
            drifted_node(&app_pod("web-1", 1, ""))
        )),
        vec![
            "voluntary_disruption_decisions_by_nodepool{nodepool=default,decision=replace,reason=drifted,consolidation_type=} 1",
            "voluntary_disruption_decisions{decision=replace,reason=drifted,consolidation_type=} 1"
        ]
    );
}
