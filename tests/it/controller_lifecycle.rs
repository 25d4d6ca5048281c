//! Registration and initialization in the reconcile core, against Karpenter core v1.14.1
//! `nodeclaim/lifecycle` (`registration.go` syncNode, `initialization.go`): which taints a Node
//! gets on registration, and what holds a registered claim's initialization. Each case is a
//! plan over one cluster state, its actions asserted exactly.

use crate::controller_disruption::{ago, base, names, node, run};

use karpenter_capi::controller::Action;
use karpenter_capi::controller::write::Write;

/// node-1 with its claim carrying a taint and a startup taint; `registered` and `initialized`
/// set the claim's conditions; `node_labels` and `node_taints` are extra YAML on the Node.
fn joining(registered: bool, initialized: bool, node_labels: &str, node_taints: &str) -> String {
    let status = |b: bool| if b { "'True'" } else { "Unknown" };
    // Not registered yet: its Registered clock started a minute ago (no timeout).
    let registered_since = if registered {
        String::new()
    } else {
        format!(", lastTransitionTime: '{}'", ago(60))
    };
    node(1, 600, "", "")
        .replace(
            "{type: Registered, status: 'True'}",
            &format!(
                "{{type: Registered, status: {}{registered_since}}}",
                status(registered)
            ),
        )
        .replace(
            "{type: Initialized, status: 'True'",
            &format!("{{type: Initialized, status: {}", status(initialized)),
        )
        .replace(
            "requirements: []}",
            "requirements: [], taints: [{key: dedicated, value: gpu, effect: NoSchedule}], startupTaints: [{key: example.com/agent, effect: NoSchedule}]}",
        )
        .replace(
            "labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}",
            &format!("labels: {{karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1{node_labels}}}"),
        )
        .replace(
            "spec: {providerID: 'openstack:///n1'}",
            &format!("spec: {{providerID: 'openstack:///n1'{node_taints}}}"),
        )
}

fn registered_taints(p: &karpenter_capi::controller::Plan) -> Option<Vec<&str>> {
    p.actions.iter().find_map(|a| match a {
        Action::RegisterNode { taints, .. } => Some(taints.iter().map(String::as_str).collect()),
        _ => None,
    })
}

/// Core `registration.go` syncNode: the claim's taints and startup taints are put on the Node
/// unless it is labelled `karpenter.sh/do-not-sync-taints: "true"` (any other value syncs); a
/// registered claim is not registered again, so a startup taint removed is never put back
/// (L-REG-009..015).
#[test]
fn registration_syncs_taints_unless_the_node_opts_out() {
    let both = Some(vec![
        "dedicated=gpu:NoSchedule",
        "example.com/agent:NoSchedule",
    ]);
    let p = run(&format!("{}{}", base(1, ""), joining(false, false, "", "")));
    assert_eq!(names(&p), vec!["registerNode"]);
    assert_eq!(registered_taints(&p), both);
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        joining(
            false,
            false,
            ", karpenter.sh/do-not-sync-taints: 'false'",
            ""
        )
    ));
    assert_eq!(registered_taints(&p), both);
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        joining(
            false,
            false,
            ", karpenter.sh/do-not-sync-taints: 'true'",
            ""
        )
    ));
    assert_eq!(registered_taints(&p), Some(vec![]));
    // Registered, its Node Ready without the startup taint (removed by its agent): initialized,
    // and no taint is written back.
    let p = run(&format!("{}{}", base(1, ""), joining(true, false, "", "")));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
    assert_eq!(registered_taints(&p), None);
}

/// Core `initialization.go`: only a registered claim initializes, once its Node is Ready with
/// no startup taint of the claim, no ephemeral taint (a `readiness.k8s.io/` one included) and
/// every extended resource the claim requested; initializing labels the Node
/// `karpenter.sh/initialized: "true"` (L-INIT-003, L-INIT-004, L-INIT-006..009, L-INIT-012).
#[test]
fn initialization_waits_for_registration_startup_taints_and_resources() {
    // Launched, not registered, Node Ready: registered this pass, not initialized.
    let p = run(&format!("{}{}", base(1, ""), joining(false, false, "", "")));
    assert_eq!(names(&p), vec!["registerNode"]);
    // Registered, Node Ready and clean: initialized, with the label on the Node.
    let p = run(&format!("{}{}", base(1, ""), joining(true, false, "", "")));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
    let labels = match &p.actions[0].steps().writes[0] {
        Write::EditNode { add_labels, .. } => add_labels.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        labels.get("karpenter.sh/initialized").map(String::as_str),
        Some("true")
    );
    // A startup taint of the claim still on the Node, or a readiness gate taint: waits.
    for taint in [
        "{key: example.com/agent, effect: NoSchedule}",
        "{key: readiness.k8s.io/network, effect: NoSchedule}",
    ] {
        let p = run(&format!(
            "{}{}",
            base(1, ""),
            joining(true, false, "", &format!(", taints: [{taint}]"))
        ));
        assert_eq!(names(&p), Vec::<&str>::new(), "{taint}");
    }
    // A GPU requested and not yet on the Node: waits; once allocatable has it: initialized.
    let gpu = |allocatable: &str| {
        joining(true, false, "", "")
            .replace(
                "spec: {nodeClassRef:",
                "spec: {resources: {requests: {nvidia.com/gpu: '1'}}, nodeClassRef:",
            )
            .replace(
                "allocatable: {cpu: '2', memory: 4G, pods: '110'}",
                &format!("allocatable: {{cpu: '2', memory: 4G, pods: '110'{allocatable}}}"),
            )
    };
    let p = run(&format!("{}{}", base(1, ""), gpu("")));
    assert_eq!(names(&p), Vec::<&str>::new());
    let p = run(&format!("{}{}", base(1, ""), gpu(", nvidia.com/gpu: '1'")));
    assert_eq!(names(&p), vec!["initializeNodeClaim"]);
}

/// node-1 (empty) whose claim is labelled `example.com/tier: '5'` under a pool that adds
/// `requirement` (YAML list item lines) to its requirements: how the pass disrupts it.
fn tier_node_under(requirement: &str) -> Vec<(String, String)> {
    let pool = crate::controller_disruption::base(1, "").replacen(
        "      requirements:\n",
        &format!("      requirements:\n{requirement}"),
        1,
    );
    let claim = node(1, 600, "", "").replacen(
        "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}",
        "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4, example.com/tier: '5'}",
        1,
    );
    crate::controller_disruption::tainted_nodes(&run(&format!("{pool}{claim}")))
        .into_iter()
        .map(|(n, r)| (n.to_string(), r.to_string()))
        .collect()
}

/// Core `nodeclaim/disruption/drift.go` areRequirementsDrifted: a claim is drifted when a pool
/// requirement no longer admits its label value (values reduced, `DoesNotExist`, a bound it
/// misses), not when the pool widens (values added, `Exists`, a bound it meets). The empty node
/// is taken as Drifted when drifted and as Empty otherwise (N-DRIFT-015..020).
#[test]
fn requirement_changes_drift_only_claims_they_exclude() {
    let req = |op: &str, values: &str| {
        format!("      - key: example.com/tier\n        operator: {op}\n{values}")
    };
    let vals = |v: &[&str]| {
        format!(
            "        values:\n{}",
            v.iter()
                .map(|x| format!("        - '{x}'\n"))
                .collect::<String>()
        )
    };
    let drifted = vec![("node-1".to_string(), "Drifted".to_string())];
    let empty = vec![("node-1".to_string(), "Empty".to_string())];
    let cases = [
        (
            "In [5, 6] (expanded)",
            req("In", &vals(&["5", "6"])),
            &empty,
        ),
        ("In [6] (reduced)", req("In", &vals(&["6"])), &drifted),
        ("Exists", req("Exists", ""), &empty),
        ("DoesNotExist", req("DoesNotExist", ""), &drifted),
        ("Gt 3", req("Gt", &vals(&["3"])), &empty),
        ("Lt 9", req("Lt", &vals(&["9"])), &empty),
        ("Gt 7", req("Gt", &vals(&["7"])), &drifted),
        ("Lt 2", req("Lt", &vals(&["2"])), &drifted),
    ];
    for (what, requirement, want) in cases {
        assert_eq!(&tier_node_under(&requirement), want, "{what}");
    }
}

/// Core `drift.go` areStaticFieldsDrifted: without a hash on the claim, or without its hash
/// version, there is no static drift; a claim without our version is stamped instead
/// (N-DRIFT-030, N-DRIFT-032).
#[test]
fn a_claim_without_our_hash_is_never_drifted_by_it() {
    let empty = vec![("node-1", "Empty")];
    let versioned = node(1, 600, "", "").replace(
        "annotations: {cluster.x-k8s.io/machine",
        "annotations: {karpenter.sh/nodepool-hash-version: karpenter-capi-v1, cluster.x-k8s.io/machine",
    );
    let p = run(&format!("{}{versioned}", base(1, "")));
    assert_eq!(crate::controller_disruption::tainted_nodes(&p), empty);
    let bare = node(1, 600, "", "");
    let p = run(&format!("{}{bare}", base(1, "")));
    assert_eq!(crate::controller_disruption::tainted_nodes(&p), empty);
    assert!(
        p.status.iter().any(|a| matches!(a,
            Action::StampNodeClaimHash { node_claim, hash_version, previous_version, .. }
                if node_claim == "default-1" && hash_version == "karpenter-capi-v1" && previous_version.is_none())),
        "{:?}",
        p.status
    );
}

/// Empty nodes 1..=`n` whose claims record the seed pool's requirements in `spec.requirements`
/// (as we, upstream and adoption write them; arch and capacity type have no label on the
/// claim), under the seed pool plus `requirement` (YAML list item lines): the claims the pass
/// marks Drifted, with the reason.
fn recorded_claims_under(n: usize, requirement: &str, claim_labels: &str) -> Vec<(String, String)> {
    let recorded = "requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}, {key: node.kubernetes.io/instance-type, operator: In, values: [c3-4]}, {key: karpenter.sh/nodepool, operator: In, values: [default]}]";
    let pool = base(n, "    budgets: [{nodes: '100%'}]\n").replacen(
        "      requirements:\n",
        &format!("      requirements:\n{requirement}"),
        1,
    );
    let claims: String = (1..=n)
        .map(|i| {
            node(i, 600, "", "")
                .replacen("requirements: []", recorded, 1)
                .replacen(
                    "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}",
                    &format!("labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4{claim_labels}}}"),
                    1,
                )
        })
        .collect();
    drift_conditions(&run(&format!("{pool}{claims}")))
}

/// The claims whose Drifted condition the pass sets, with its reason.
fn drift_conditions(p: &karpenter_capi::controller::Plan) -> Vec<(String, String)> {
    p.status
        .iter()
        .filter_map(|a| match a {
            Action::SetNodeClaimConditions {
                node_claim, set, ..
            } => set
                .iter()
                .find(|c| c.type_ == "Drifted" && c.status == "True")
                .map(|c| (node_claim.clone(), c.reason.clone())),
            _ => None,
        })
        .collect()
}

/// N-DRIFT-014. Core `drift.go` areRequirementsDrifted (`Requirements.Compatible`): a
/// requirement the pool gained on a key the claim has no label for drifts the claim when it
/// needs the label (`In`, `Exists`, `Gt`, `Lt`), not when it excludes it (`NotIn`,
/// `DoesNotExist`). We judge the missing key only for a requirement added since the claim was
/// made (a key its `spec.requirements` does not list): claims made under the pool as it is are
/// never drifted for a label they lack (here arch and capacity type), so no claim drifts for a
/// label nobody gave it, and no pool's claims all drift at once.
#[test]
fn a_requirement_the_pool_gained_drifts_claims_lacking_its_label() {
    let req = |key: &str, op: &str, values: &str| {
        format!("      - key: {key}\n        operator: {op}\n{values}")
    };
    let region = |op: &str, values: &str| req("topology.kubernetes.io/region", op, values);
    let drifted = |n: usize| -> Vec<(String, String)> {
        (1..=n)
            .map(|i| (format!("default-{i}"), "RequirementsDrifted".to_string()))
            .collect()
    };
    let none = Vec::<(String, String)>::new();
    // Unchanged pool: three claims lacking the arch and capacity-type labels their own
    // requirements name are not drifted.
    assert_eq!(recorded_claims_under(3, "", ""), none.clone());
    let cases = [
        (
            "In [eu, us]",
            region("In", "        values: [eu, us]\n"),
            drifted(3),
        ),
        ("Exists", region("Exists", ""), drifted(3)),
        (
            "NotIn [eu]",
            region("NotIn", "        values: [eu]\n"),
            none.clone(),
        ),
        ("DoesNotExist", region("DoesNotExist", ""), none.clone()),
        (
            "Gt 2 on a custom key",
            req("example.com/generation", "Gt", "        values: ['2']\n"),
            drifted(3),
        ),
        (
            "Lt 9 on a custom key",
            req("example.com/generation", "Lt", "        values: ['9']\n"),
            drifted(3),
        ),
    ];
    for (what, requirement, want) in cases {
        assert_eq!(recorded_claims_under(3, &requirement, ""), want, "{what}");
    }
    // A claim that has the label is judged by its value, as before.
    let labelled = ", topology.kubernetes.io/region: us";
    let wide = region("In", "        values: [eu, us]\n");
    assert_eq!(recorded_claims_under(1, &wide, labelled), none.clone());
    let narrow = region("In", "        values: [eu]\n");
    assert_eq!(recorded_claims_under(1, &narrow, labelled), drifted(1));
    // A claim recording no requirements (made by hand, or by something that writes none) is
    // not judged on keys it lacks: the added requirement does not drift it.
    let bare = run(&format!(
        "{}{}",
        base(1, "").replacen(
            "      requirements:\n",
            &format!("      requirements:\n{wide}"),
            1
        ),
        node(1, 600, "", "")
    ));
    assert_eq!(drift_conditions(&bare), none.clone());
    assert_eq!(
        crate::controller_disruption::tainted_nodes(&bare),
        vec![("node-1", "Empty")]
    );
}

/// The Drifted and Consolidatable conditions the pass sets (type, reason) and clears on claim
/// `name`, from its `setNodeClaimConditions`.
fn condition_writes(
    p: &karpenter_capi::controller::Plan,
    name: &str,
) -> (Vec<(String, String)>, Vec<String>) {
    p.status
        .iter()
        .find_map(|a| match a {
            Action::SetNodeClaimConditions {
                node_claim,
                set,
                clear,
                ..
            } if node_claim == name => Some((
                set.iter()
                    .map(|c| (c.type_.clone(), c.reason.clone()))
                    .collect(),
                clear.clone(),
            )),
            _ => None,
        })
        .unwrap_or_default()
}

/// `node_text` (one `node(..)`) with `conditions` (YAML flow items) added to its claim's status.
fn with_conditions(node_text: &str, conditions: &[&str]) -> String {
    let extra: String = conditions.iter().map(|c| format!("  - {c}\n")).collect();
    node_text.replacen(
        "  - {type: Launched, status: 'True'}\n",
        &format!("{extra}  - {{type: Launched, status: 'True'}}\n"),
        1,
    )
}

/// Core `nodeclaim/disruption/consolidation.go`: the quiet time counts from initialization when
/// no pod event is known, and Consolidatable is removed when the pool's consolidateAfter is
/// Never or the claim is not initialized (Unknown or False); `drift.go`: Drifted is removed when
/// drift ends; both can go in one write (N-CONS-003, N-CONS-005..007, N-DRIFT-012, N-SUITE-003).
#[test]
fn consolidatable_and_drifted_are_cleared_when_they_stop_holding() {
    let consolidatable = "{type: Consolidatable, status: 'True', reason: Consolidatable}";
    let drifted = "{type: Drifted, status: 'True', reason: NodePoolDrifted}";
    let set = |t: &str| vec![(t.to_string(), t.to_string())];
    // Created an hour ago, initialized 10 s ago, consolidateAfter 30 s: not yet; at 60 s: yes.
    let p = run(&format!("{}{}", base(1, ""), node(1, 10, "", "")));
    assert_eq!(condition_writes(&p, "default-1"), Default::default());
    let p = run(&format!("{}{}", base(1, ""), node(1, 60, "", "")));
    assert_eq!(
        condition_writes(&p, "default-1"),
        (set("Consolidatable"), vec![])
    );
    // consolidateAfter: Never clears it.
    let never = base(1, "").replacen("consolidateAfter: 30s", "consolidateAfter: Never", 1);
    let stale = with_conditions(&node(1, 600, "", ""), &[consolidatable]);
    let p = run(&format!("{never}{stale}"));
    assert_eq!(
        condition_writes(&p, "default-1"),
        (vec![], vec!["Consolidatable".to_string()])
    );
    // Not initialized (Unknown, False) clears it.
    for status in ["Unknown", "'False'"] {
        let uninit = stale.replacen(
            "{type: Initialized, status: 'True'",
            &format!("{{type: Initialized, status: {status}"),
            1,
        );
        let p = run(&format!("{}{uninit}", base(1, "")));
        assert_eq!(
            condition_writes(&p, "default-1"),
            (vec![], vec!["Consolidatable".to_string()]),
            "{status}"
        );
    }
    // A Drifted condition on a claim that no longer drifts goes (the node stays Consolidatable).
    let was_drifted = with_conditions(&node(1, 600, "", ""), &[drifted, consolidatable]);
    let p = run(&format!("{}{was_drifted}", base(1, "")));
    assert_eq!(
        condition_writes(&p, "default-1"),
        (vec![], vec!["Drifted".to_string()])
    );
    // Both in one write.
    let p = run(&format!("{never}{was_drifted}"));
    assert_eq!(
        condition_writes(&p, "default-1"),
        (
            vec![],
            vec!["Drifted".to_string(), "Consolidatable".to_string()]
        )
    );
}

/// Core `drift.go`: only a launched claim is judged; Drifted is removed from a claim whose
/// Launched condition is Unknown or False, even when its labels no longer fit the pool
/// (N-DRIFT-009, N-DRIFT-010). The launched control is RequirementsDrifted.
#[test]
fn an_unlaunched_claim_loses_its_drifted_condition() {
    use crate::controller_termination::young_claim;
    let pool = base(1, "").replacen(
        "      requirements:\n",
        "      requirements:\n      - key: example.com/tier\n        operator: DoesNotExist\n",
        1,
    );
    let tier = |text: String| {
        text.replacen(
            "node.kubernetes.io/instance-type: c3-4}",
            "node.kubernetes.io/instance-type: c3-4, example.com/tier: '5'}",
            1,
        )
    };
    for launched in ["Unknown", "'False'"] {
        let claim = tier(young_claim(
            "default-9",
            30,
            &format!(
                "{{conditions: [{{type: Launched, status: {launched}}}, {{type: Drifted, status: 'True', reason: RequirementsDrifted}}]}}"
            ),
        ));
        let p = run(&format!("{pool}{claim}"));
        assert_eq!(
            condition_writes(&p, "default-9"),
            (vec![], vec!["Drifted".to_string()]),
            "{launched}"
        );
    }
    let launched = tier(node(1, 600, "", ""));
    let p = run(&format!("{pool}{launched}"));
    assert_eq!(
        condition_writes(&p, "default-1").0,
        vec![
            ("Drifted".to_string(), "RequirementsDrifted".to_string()),
            ("Consolidatable".to_string(), "Consolidatable".to_string())
        ]
    );
}

/// Core `drift.go` isDrifted: static drift is checked first, then requirements, then the
/// instance type, then the provider's own drift (ours: the MachineDeployment template); a claim
/// whose instance type the pool no longer offers (its MachineDeployment left the pool) is
/// InstanceTypeNotFound; after a pool update only the claims that no longer fit are Drifted
/// (N-DRIFT-004, N-DRIFT-007, N-DRIFT-008, N-DRIFT-021).
#[test]
fn drift_reasons_come_in_upstreams_order_and_only_for_claims_that_no_longer_fit() {
    let tier_pool = base(2, "").replacen(
        "      requirements:\n",
        "      requirements:\n      - key: example.com/tier\n        operator: DoesNotExist\n",
        1,
    );
    let annotate = |text: String, a: &str| {
        text.replacen(
            "annotations: {cluster.x-k8s.io/machine",
            &format!("annotations: {{{a}, cluster.x-k8s.io/machine"),
            1,
        )
    };
    let tiered = |text: String| {
        text.replacen(
            "node.kubernetes.io/instance-type: c3-4}",
            "node.kubernetes.io/instance-type: c3-4, example.com/tier: '5'}",
            1,
        )
    };
    let template = "karpenter-capi/machine-template-hash: stale";
    let hash =
        "karpenter.sh/nodepool-hash: stale, karpenter.sh/nodepool-hash-version: karpenter-capi-v1";
    let reason = |text: &str| {
        condition_writes(&run(text), "default-1")
            .0
            .into_iter()
            .find(|(t, _)| t == "Drifted")
            .map(|(_, r)| r)
    };
    let one = node(1, 600, "", "");
    // The template alone (the control): MachineTemplateDrifted.
    let t = annotate(one.clone(), template);
    assert_eq!(
        reason(&format!("{}{t}", base(1, ""))).as_deref(),
        Some("MachineTemplateDrifted")
    );
    // A stale pool hash wins over it.
    let t = annotate(one.clone(), &format!("{template}, {hash}"));
    assert_eq!(
        reason(&format!("{}{t}", base(1, ""))).as_deref(),
        Some("NodePoolDrifted")
    );
    // So does a requirement the claim's label no longer meets.
    let t = tiered(annotate(one.clone(), template));
    assert_eq!(
        reason(&format!("{tier_pool}{t}")).as_deref(),
        Some("RequirementsDrifted")
    );
    // Its MachineDeployment left the pool: InstanceTypeNotFound.
    let left = base(1, "").replacen(
        "  name: capi-ovh-karpenter-c3-4\n  namespace: capi-ovh\n  labels:\n    node.cluster.x-k8s.io/karpenter-member: ''\n",
        "  name: capi-ovh-karpenter-c3-4\n  namespace: capi-ovh\n",
        1,
    );
    assert_ne!(left, base(1, ""));
    assert_eq!(
        reason(&format!("{left}{one}")).as_deref(),
        Some("InstanceTypeNotFound")
    );
    // Two claims under the tier requirement, only one labelled: only that one drifts.
    let p = run(&format!(
        "{tier_pool}{}{}",
        tiered(node(1, 600, "", "")),
        node(2, 600, "", "")
    ));
    let drifted: Vec<(String, String)> = ["default-1", "default-2"]
        .into_iter()
        .filter_map(|c| {
            condition_writes(&p, c)
                .0
                .into_iter()
                .find(|(t, _)| t == "Drifted")
                .map(|(_, r)| (c.to_string(), r))
        })
        .collect();
    assert_eq!(
        drifted,
        vec![("default-1".to_string(), "RequirementsDrifted".to_string())]
    );
}

/// Core `nodeclaim/expiration` (controller.go): an expired claim counts once in
/// `karpenter_nodeclaims_disrupted_total` with reason `expired`, its pool and capacity type
/// (E-EXP-001, E-EXP-002: on-demand and spot).
#[test]
fn an_expiry_counts_as_a_disruption_with_reason_expired() {
    use crate::controller_disruption::counted;
    for capacity in ["on-demand", "spot"] {
        let expired = node(1, 600, "", "")
            .replacen("requirements: []}", "requirements: [], expireAfter: 30m}", 1)
            .replacen(
                "node.kubernetes.io/instance-type: c3-4}",
                &format!("node.kubernetes.io/instance-type: c3-4, karpenter.sh/capacity-type: {capacity}}}"),
                1,
            );
        let c = counted(&format!("{}{expired}", base(1, "")));
        assert_eq!(
            c.iter()
                .filter(|l| l.starts_with("nodeclaims_disrupted"))
                .collect::<Vec<_>>(),
            vec![&format!(
                "nodeclaims_disrupted{{reason=expired,nodepool=default,capacity_type={capacity},consolidation_policy=,termination_mode=graceful}} 1"
            )],
            "{c:?}"
        );
    }
    // Not expired yet (expireAfter 2h): no expiry counted (the empty node goes as Empty).
    let young =
        node(1, 600, "", "").replacen("requirements: []}", "requirements: [], expireAfter: 2h}", 1);
    let c = counted(&format!("{}{young}", base(1, "")));
    assert!(!c.iter().any(|l| l.contains("reason=expired")), "{c:?}");
    assert!(
        c.iter()
            .any(|l| l.starts_with("nodeclaims_disrupted{reason=empty,")),
        "{c:?}"
    );
}

/// Core `registration.go`: a Node that joins without the `karpenter.sh/unregistered:NoExecute`
/// taint (and not registered before) is still registered, with an `UnregisteredTaintMissing`
/// Warning on its claim; with the taint, no Event, and the taint comes off (L-REG-006).
#[test]
fn a_node_joining_without_the_unregistered_taint_is_registered_with_a_warning() {
    let events = |p: &karpenter_capi::controller::Plan| -> Vec<(String, String, String)> {
        p.actions
            .iter()
            .filter(|a| a.name() == "registerNode")
            .flat_map(|a| a.steps().writes)
            .filter_map(|w| match w {
                Write::Event {
                    name,
                    event_type,
                    reason,
                    ..
                } => Some((name, event_type, reason)),
                _ => None,
            })
            .collect()
    };
    let warned = vec![(
        "default-1".to_string(),
        "Warning".to_string(),
        "UnregisteredTaintMissing".to_string(),
    )];
    // Without the taint: registered, warned.
    let p = run(&format!("{}{}", base(1, ""), joining(false, false, "", "")));
    assert_eq!(names(&p), vec!["registerNode"]);
    assert_eq!(events(&p), warned);
    // With it: registered, no Event; the registration removes it.
    let tainted = ", taints: [{key: karpenter.sh/unregistered, effect: NoExecute}]";
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        joining(false, false, "", tainted)
    ));
    assert_eq!(names(&p), vec!["registerNode"]);
    assert_eq!(events(&p), Vec::<(String, String, String)>::new());
    let removes = p.actions[0].steps().writes.iter().any(|w| {
        matches!(w, Write::EditNode { remove_taint_keys, .. }
            if remove_taint_keys == &vec!["karpenter.sh/unregistered".to_string()])
    });
    assert!(removes);
    // The same key with another effect is not the taint core looks for: warned.
    let other = ", taints: [{key: karpenter.sh/unregistered, effect: NoSchedule}]";
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        joining(false, false, "", other)
    ));
    assert_eq!(events(&p), warned);
    // Already labelled registered (a claim re-created for a registered Node): no warning.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        joining(false, false, ", karpenter.sh/registered: 'true'", "")
    ));
    assert_eq!(names(&p), vec!["registerNode"]);
    assert_eq!(events(&p), Vec::<(String, String, String)>::new());
}

/// L-LAUNCH-006. Core `launch.go` puts a failed launch's error on the claim's `Launched`
/// condition (Unknown, reason `LaunchFailed`, at most 300 characters then `...`). Here the error
/// is the bound Machine's terminal failure; the condition stays Unknown, so the launch timeout
/// still counts from its last transition; nothing is rewritten once it says so, and nothing is
/// written for a Machine without a failure or a claim already launched.
#[test]
fn a_machine_failure_lands_on_the_claims_launched_condition() {
    let claim = |launched: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: default-1\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{cluster.x-k8s.io/machine: capi-ovh/m-1, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus:\n  conditions:\n  - {launched}\n",
            ago(120)
        )
    };
    let machine = |status: &str| {
        format!(
            "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {{name: m-1, namespace: capi-ovh, creationTimestamp: '{}', labels: {{cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4, node.cluster.x-k8s.io/karpenter-member: '', karpenter.sh/nodeclaim: default-1}}}}\nspec: {{clusterName: capi-ovh}}\nstatus: {status}\n",
            ago(110)
        )
    };
    let unknown = format!(
        "{{type: Launched, status: Unknown, reason: AwaitingReconciliation, lastTransitionTime: '{}'}}",
        ago(120)
    );
    let launched_updates = |text: &str| -> Vec<(String, String, String)> {
        let p = run(&format!("{}{text}", base(1, "")));
        p.status
            .iter()
            .filter_map(|a| match a {
                Action::SetNodeClaimConditions {
                    node_claim, set, ..
                } if node_claim == "default-1" => Some(set.clone()),
                _ => None,
            })
            .flatten()
            .filter(|c| c.type_ == "Launched")
            .map(|c| (c.status, c.reason, c.message))
            .collect()
    };
    let failed = "{failureReason: CreateError, failureMessage: 'quota exceeded for flavor c3-4'}";
    assert_eq!(
        launched_updates(&format!("{}{}", claim(&unknown), machine(failed))),
        vec![(
            "Unknown".to_string(),
            "LaunchFailed".to_string(),
            "CreateError: quota exceeded for flavor c3-4".to_string()
        )]
    );
    // A v1beta2 failure condition, and a long message cut at 300 characters.
    let long = "x".repeat(400);
    let v1beta2 = format!(
        "{{conditions: [{{type: InfrastructureReady, status: 'False', reason: InstanceCreateFailed, message: '{long}'}}]}}"
    );
    let got = launched_updates(&format!("{}{}", claim(&unknown), machine(&v1beta2)));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, "LaunchFailed");
    assert_eq!(got[0].2.chars().count(), 303);
    assert!(
        got[0]
            .2
            .starts_with("InfrastructureReady=False (InstanceCreateFailed): xxx")
    );
    assert!(got[0].2.ends_with("x..."));
    // Already saying so: nothing.
    let said = format!(
        "{{type: Launched, status: Unknown, reason: LaunchFailed, message: 'CreateError: quota exceeded for flavor c3-4', lastTransitionTime: '{}'}}",
        ago(120)
    );
    assert_eq!(
        launched_updates(&format!("{}{}", claim(&said), machine(failed))),
        vec![]
    );
    // No failure: nothing.
    assert_eq!(
        launched_updates(&format!("{}{}", claim(&unknown), machine("{}"))),
        vec![]
    );
    // The launch timeout still runs from the condition's transition: the plan of a claim 120 s
    // into a 60 s launch timeout deletes it whatever the message.
    let s = karpenter_capi::model::load::snapshot_from_sources(&[
        karpenter_capi::model::load::Source {
            name: "t.yaml".into(),
            text: format!("{}{}{}", base(1, ""), claim(&said), machine(failed)),
        },
    ])
    .unwrap();
    let p = karpenter_capi::controller::plan(
        &s,
        crate::controller_disruption::NOW.parse().unwrap(),
        &karpenter_capi::controller::Config {
            launch_timeout: karpenter_capi::model::duration::GoDuration(60),
            ..karpenter_capi::controller::Config::default()
        },
    );
    assert!(
        p.actions.iter().any(|a| matches!(a, Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-1" && reason == "LaunchTimeout")),
        "{:?}",
        names(&p)
    );
}

/// M-HASH-007: a claim of another hash version that is already Drifted keeps its hash: only our
/// version is stamped (the hash left out), so it stays drifted; the same claim not Drifted gets
/// our hash computed now.
#[test]
fn a_drifted_claim_of_another_hash_version_keeps_its_hash() {
    let foreign = |drifted: bool| {
        let claim = node(1, 600, "", "").replace(
            "annotations: {cluster.x-k8s.io/machine",
            "annotations: {karpenter.sh/nodepool-hash: '123456', karpenter.sh/nodepool-hash-version: v3, cluster.x-k8s.io/machine",
        );
        if drifted {
            claim.replacen(
                "  - {type: Launched, status: 'True'}\n",
                "  - {type: Launched, status: 'True'}\n  - {type: Drifted, status: 'True', reason: NodePoolDrifted}\n",
                1,
            )
        } else {
            claim
        }
    };
    let stamp = |p: &karpenter_capi::controller::Plan| {
        p.status
            .iter()
            .find_map(|a| match a {
                Action::StampNodeClaimHash {
                    node_claim,
                    hash,
                    hash_version,
                    previous_version,
                    ..
                } if node_claim == "default-1" => {
                    Some((hash.clone(), hash_version.clone(), previous_version.clone()))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no stamp: {:?}", p.status))
    };
    let (hash, version, previous) = stamp(&run(&format!("{}{}", base(1, ""), foreign(true))));
    assert_eq!(hash, None);
    assert_eq!(version, "karpenter-capi-v1");
    assert_eq!(previous.as_deref(), Some("v3"));
    let (hash, _, _) = stamp(&run(&format!("{}{}", base(1, ""), foreign(false))));
    assert!(hash.is_some_and(|h| h != "123456"));
}
