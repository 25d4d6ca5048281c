//! Rules 6 and 7 of issue 10: no voluntary drain without a home, and consolidation and provisioning agree.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 6: no voluntary drain without a home.

#[test]
fn a_drift_whose_replacement_vanished_is_aborted_with_an_event() {
    // node-1 drifted and tainted; its pod (3 cpu) fits on no existing node; no replacement.
    let w = tainted(
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("big", Some(1), "3")
            .pod("other", Some(2), "3"),
        "node-1",
        "Drifted",
    );
    let p = w.plan();
    assert_eq!(lines(&p), vec!["abortDisruption Node/node-1"]);
    let steps = p.actions[0].steps();
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&steps.writes[0], Write::EditNode { remove_taint_keys, .. } if remove_taint_keys == &vec!["karpenter.sh/disrupted".to_string()])
    );
    assert!(
        matches!(&steps.writes[1], Write::Event { event_type, reason, .. } if event_type == "Warning" && reason == "DisruptionAborted")
    );
    // Expiry is forceful: it drains regardless, and its pod is provisioned for meanwhile.
    let p = deleted(
        tainted(
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, true)
                .machine(4, 2, true, true)
                .pod("big", Some(1), "3")
                .pod("other", Some(2), "3"),
            "node-1",
            "Expired",
        ),
        "node-1",
    )
    .plan();
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "excludeFromLoadBalancers Node/node-1",
            "evictPod Pod/default/big"
        ]
    );
}

/// A replacement claim (annotated `karpenter-capi/replaces`) for a drifted or underutilized
/// node whose pods need it: while it comes up, the drain waits; once it failed (being deleted,
/// or its launch or registration timed out this pass), the disruption is called off at once:
/// the taint comes off and a Warning Event says why.
#[test]
fn a_replacement_that_failed_aborts_the_disruption_with_an_event() {
    use karpenter_capi::controller::write::Write;
    let with_replacement = |reason: &str, f: &dyn Fn(&mut Value)| {
        let mut r = waiting_claim("default-r", 60)
            .annotation("karpenter-capi/replaces", "node-1")
            .build();
        f(&mut r);
        tainted(
            World::new("WhenEmptyOrUnderutilized")
                .md(4, 3)
                .machine(4, 1, true, true)
                .machine(4, 2, true, true)
                .pod("big", Some(1), "3")
                .pod("other", Some(2), "3"),
            "node-1",
            reason,
        )
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["annotations"]["karpenter-capi/replacements"] = json!("1")
        })
        .add(r)
    };
    for reason in ["Drifted", "Underutilized"] {
        // Coming up (a minute old): the drain waits for it.
        let p = with_replacement(reason, &|_| {}).plan();
        assert_eq!(lines(&p), Vec::<String>::new(), "{reason}");
        assert!(
            has_note(
                &p,
                "node node-1: waiting for its replacement default-r to initialize before draining"
            ),
            "{reason}: {:?}",
            p.notes
        );
        type Failure<'a> = (&'a str, &'a dyn Fn(&mut Value), Vec<&'a str>);
        let failed: [Failure; 3] = [
            (
                "being deleted",
                &|r| r["metadata"]["deletionTimestamp"] = json!(ago(5)),
                vec![
                    "abortDisruption Node/node-1",
                    "removeNodeClaimFinalizer NodeClaim/default-r",
                ],
            ),
            (
                "launch timed out",
                &|r| r["metadata"]["creationTimestamp"] = json!(ago(600)),
                vec![
                    "deleteNodeClaim NodeClaim/default-r",
                    "abortDisruption Node/node-1",
                ],
            ),
            (
                "registration timed out",
                &|r| {
                    r["metadata"]["creationTimestamp"] = json!(ago(1200));
                    r["status"] = json!({"providerID": "openstack:///9", "conditions": [{"type": "Launched", "status": "True"}]});
                },
                vec![
                    "deleteNodeClaim NodeClaim/default-r",
                    "abortDisruption Node/node-1",
                ],
            ),
        ];
        for (what, f, want) in failed {
            let p = with_replacement(reason, f).plan();
            assert_eq!(
                lines(&p),
                want,
                "{reason}, replacement {what}: {:?}",
                p.notes
            );
            let abort = p
                .actions
                .iter()
                .find(|a| a.name() == "abortDisruption")
                .unwrap();
            let steps = abort.steps();
            assert_eq!(
                steps.writes.len(),
                4,
                "{reason}, {what}: {:?}",
                steps.writes
            );
            assert!(
                matches!(&steps.writes[0], Write::EditNode { name, remove_taint_keys, add_taints, .. }
                    if name == "node-1" && remove_taint_keys == &vec!["karpenter.sh/disrupted".to_string()] && add_taints.is_empty()),
                "{reason}, {what}: {:?}",
                steps.writes[0]
            );
            match &steps.writes[1] {
                Write::Event {
                    event_type,
                    reason: r,
                    name,
                    message,
                    ..
                } => {
                    assert_eq!(
                        (event_type.as_str(), r.as_str(), name.as_str()),
                        ("Warning", "DisruptionAborted", "node-1")
                    );
                    assert_eq!(
                        message,
                        &format!(
                            "{reason} disruption called off: a replacement NodeClaim failed or vanished"
                        ),
                        "{what}"
                    );
                }
                other => panic!("{reason}, {what}: {other:?}"),
            }
            // The claim reads as no longer disrupted: its bookkeeping annotations and Karpenter's
            // DisruptionReason condition go.
            assert!(
                matches!(&steps.writes[2], Write::MergePatch { name, patch, .. } if name == "c-1"
                    && patch == &json!({"metadata": {"annotations": {"karpenter-capi/drain-started": null, "karpenter-capi/disruption-reason": null, "karpenter-capi/replacements": null}}})),
                "{:?}",
                steps.writes[2]
            );
            assert!(
                matches!(&steps.writes[3], Write::ClearConditions { name, types, .. } if name == "c-1" && types == &vec!["DisruptionReason".to_string()]),
                "{:?}",
                steps.writes[3]
            );
            // No pod is evicted, no Machine marked.
            assert!(evictions(&p).is_empty());
        }
    }
}

#[test]
fn a_drifted_node_whose_pods_fit_nowhere_is_not_drained() {
    // A 7-cpu pod: only the 8-cpu flavor holds it, and that flavor is the drifted one's own
    // MachineDeployment... which the pool no longer offers.
    let w = World::new("WhenEmpty")
        .md(8, 1)
        .machine(8, 1, true, true)
        .pod("huge", Some(1), "7")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("MachineDeployment", "md-8", |md| {
            md["metadata"]["labels"] = json!({})
        })
        .md(4, 0);
    let p = w.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("taintNode") || l.starts_with("evictPod")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(
            &p,
            "node node-1: Drifted, but pods default/huge fit nowhere else; not drained"
        ),
        "{:?}",
        p.notes
    );
}

#[test]
fn room_that_is_not_initialized_is_no_home() {
    // node-1 (drifted, 1 cpu pod) could move to node-2, but node-2's claim is not initialized.
    let w = World::new("WhenEmpty").md(4, 2).machine(4, 1, true, true).machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("NodeClaim", "c-2", |c| c["status"]["conditions"] = json!([{"type": "Launched", "status": "True"}, {"type": "Registered", "status": "True"}]));
    let p = w.plan();
    // A replacement first; no eviction.
    assert_eq!(
        lines(&p)
            .iter()
            .filter(|l| !l.starts_with("initializeNodeClaim"))
            .cloned()
            .collect::<Vec<_>>(),
        vec![
            "createNodeClaim NodeClaim/default-",
            "taintNode Node/node-1"
        ]
    );
}

/// Budgets count like Karpenter (core `disruption/helpers.go` `BuildDisruptionBudgetMapping`):
/// a node already disrupting (tainted `karpenter.sh/disrupted`) or being deleted (its claim, its
/// Node, or its Machine) uses up a `nodes: "1"` budget, so no further voluntary disruption
/// starts; with a budget of two, one more goes.
#[test]
fn a_disrupting_or_deleting_node_uses_up_a_budget_of_one() {
    let budget = |w: World, nodes: &str| {
        let nodes = nodes.to_string();
        w.with("NodePool", "default", move |np| {
            np["spec"]["disruption"]["budgets"] = json!([{"nodes": nodes}])
        })
    };
    // node-1 and node-2 empty (Empty candidates); node-3 is the one already in progress.
    let three = || {
        World::new("WhenEmpty")
            .md(4, 3)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .machine(4, 3, true, true)
            .pod("web", Some(3), "1")
    };
    // The empty nodes tainted (node-3's own termination may taint node-3).
    let tainted_now = |p: &Plan| -> Vec<String> {
        lines(p)
            .into_iter()
            .filter(|l| l.starts_with("taintNode") && !l.ends_with("node-3"))
            .collect()
    };
    // Nothing in progress: the budget of one lets node-1 go, not node-2.
    let p = budget(three(), "1").plan();
    assert_eq!(tainted_now(&p), vec!["taintNode Node/node-1"]);
    let in_progress: [(&str, &dyn Fn(World) -> World); 4] = [
        ("tainted (drifting, pods left)", &|w| {
            tainted(w, "node-3", "Drifted")
        }),
        ("its claim deleting", &|w| {
            w.with("NodeClaim", "c-3", |c| {
                c["metadata"]["deletionTimestamp"] = json!(ago(10))
            })
        }),
        ("its Node deleting", &|w| {
            w.with("Node", "node-3", |n| {
                n["metadata"]["deletionTimestamp"] = json!(ago(10));
                n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
            })
        }),
        ("its Machine deleting", &|w| {
            w.with("Machine", "m-3", |m| {
                m["metadata"]["deletionTimestamp"] = json!(ago(10))
            })
        }),
    ];
    for (what, f) in in_progress {
        // A budget of one is used up by node-3: neither empty node is tainted.
        let p = budget(f(three()), "1").plan();
        assert_eq!(
            tainted_now(&p),
            Vec::<String>::new(),
            "node-3 {what}: {:?}",
            lines(&p)
        );
        assert!(
            !lines(&p).iter().any(
                |l| l.starts_with("markMachineForDeletion Machine/capi-ovh/m-1")
                    || l.starts_with("markMachineForDeletion Machine/capi-ovh/m-2")
            ),
            "node-3 {what}: {:?}",
            lines(&p)
        );
        // A budget of two: exactly one more.
        let p = budget(f(three()), "2").plan();
        assert_eq!(
            tainted_now(&p),
            vec!["taintNode Node/node-1"],
            "node-3 {what}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 7: consolidation and provisioning agree.

#[test]
fn a_node_a_pending_pod_fits_on_is_not_empty() {
    let p = idle(1).pod("pending", None, "1").plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
    // No new claim either: the pod goes to the node kept for it.
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    // A pending pod too big for the node leaves it Empty: it goes, and nothing is created.
    let p = idle(1).pod("huge", None, "64").plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    // Two empty nodes, one pending pod: one node is kept for it, the other goes.
    let p = idle(2)
        .machine(4, 2, true, true)
        .pod("pending", None, "1")
        .plan();
    let tainted: Vec<String> = lines(&p)
        .into_iter()
        .filter(|l| l.starts_with("taintNode") || l.starts_with("createNodeClaim"))
        .collect();
    assert_eq!(tainted.len(), 1, "{:?}", lines(&p));
    assert!(tainted[0].starts_with("taintNode"), "{tainted:?}");
}

#[test]
fn disrupting_a_node_pending_pods_need_provisions_for_them() {
    // node-1 (8 cpu) drifted with a small pod that fits on node-2; a pending 3-cpu pod fits only
    // on node-1: it gets a NodeClaim of its own in the same pass.
    let w = World::new("WhenEmpty")
        .md(8, 1)
        .md(4, 1)
        .machine(8, 1, true, true)
        .machine(4, 2, true, true)
        .pod("small", Some(1), "500m")
        .pod("busy", Some(2), "1")
        .pod("pending", None, "3")
        .with("NodeClaim", "c-1", stamp_stale);
    let p = w.plan();
    let l = lines(&p);
    assert_eq!(
        l,
        vec![
            "createNodeClaim NodeClaim/default-",
            "taintNode Node/node-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ],
        "{l:?}"
    );
    assert!(
        matches!(&p.actions[0], Action::CreateNodeClaim { pods, reason, .. } if pods == &vec!["default/pending".to_string()] && reason == "Provisioning")
    );
}

#[test]
fn pending_pods_take_their_room_before_consolidation() {
    // node-1 (4 cpu) holds web (1 cpu), which fits in node-2's 2.9 free cpu; node-2 is not to be
    // disrupted. Without pending pods node-1 is consolidated away; a pending 2.5-cpu pod takes
    // that room first (on either node), so node-1 stays.
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(4, 1)
        .md(8, 1)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "5")
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        });
    let p = w.plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    let p = w.pod("pending", None, "2500m").plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
}

#[test]
fn pending_pods_that_fit_nowhere_neither_block_nor_loop_consolidation() {
    // node-1's web (1 cpu) fits beside busy on node-2 (do-not-disrupt): node-1 is consolidated
    // away. A pending pod no flavor holds (64 cpu) takes no room anywhere, so the same decision
    // is made with it (core simulates pending pods with the candidates' but only the candidates'
    // pods must schedule), and the next pass finishes it instead of calling it off or
    // provisioning for it again.
    let base = World::new("WhenEmptyOrUnderutilized")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "1")
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        });
    let alone = base.clone().plan();
    let w = base.pod("huge", None, "64");
    let with = w.plan();
    assert_eq!(lines(&with), vec!["taintNode Node/node-1"]);
    assert_eq!(lines(&alone), lines(&with));
    assert!(
        has_note(
            &with,
            "pod default/huge fits no flavor: c-4: needs 64 cpu, c-4 has 3900m allocatable"
        ),
        "{:?}",
        with.notes
    );
    // Validated, the claim goes (and termination evicts web, which runs on node-2 again); huge
    // still pending.
    let validated = tainted(w, "node-1", "Underutilized");
    assert_eq!(
        lines(&validated.plan()),
        vec!["deleteNodeClaim NodeClaim/c-1"]
    );
    let next = validated.with("Pod", "web", |p| p["spec"]["nodeName"] = json!("node-2"));
    let p = next.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // And once node-1 is gone, nothing more: no claim for huge, no disruption.
    let mut done = next;
    done.objects_mut().retain(|o| {
        !(o["metadata"]["name"] == "node-1"
            || o["metadata"]["name"] == "m-1"
            || o["metadata"]["name"] == "c-1"
            || o["metadata"]["name"] == "cilium-1")
    });
    let done = done.with("MachineDeployment", "md-4", |md| {
        md["spec"]["replicas"] = json!(1)
    });
    let p = done.plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
}

#[test]
fn an_empty_node_removed_this_pass_is_no_home_for_a_consolidation() {
    // node-2 is empty and goes; node-1's pod fits only on node-2, so node-1 stays this pass
    // (found by plans_never_harm: both were drained and the pod had no home).
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(2, 2)
        .machine(2, 1, true, true)
        .machine(2, 2, true, true)
        .pod("p", Some(1), "250m");
    let p = w.plan();
    // node-2, empty, is no home for node-1's pod in the consolidation search (emptiness takes
    // it): no decision at all, so no deferred one either.
    assert_eq!(lines(&p), vec!["taintNode Node/node-2"]);
    assert!(!has_note(
        &p,
        "consolidation of node-1 deferred: its pods' room is not ready yet"
    ));
    // Next pass, node-2's command under way: it goes, and node-1 still stays.
    let p = tainted(w, "node-2", "Empty").plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-2",
            "deleteNodeClaim NodeClaim/c-2",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-2",
        ]
    );
}

#[test]
fn a_pod_with_dynamic_resource_claims_has_no_home_and_keeps_its_node() {
    // U-POD-016..018: core (its default --ignore-dra-requests) schedules no pod that asks for
    // Dynamic Resource Allocation, so its node is never consolidated or drifted and nothing is
    // provisioned for it. Two half-used nodes: the control consolidates one of them; with pod
    // `a` claiming a device (in the spec, a container, or an init container), node-1 keeps it
    // and only node-2 can go (its pod moves onto node-1).
    let tainted = |p: &Plan| -> Vec<String> {
        lines(p)
            .into_iter()
            .filter(|l| l.starts_with("taintNode"))
            .collect()
    };
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("a", Some(1), "1")
        .pod("b", Some(2), "1");
    assert_eq!(tainted(&w.plan()), vec!["taintNode Node/node-1"]);
    let claims: [fn(&mut Value); 3] = [
        |p| p["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": "gpu-a"}]),
        |p| p["spec"]["containers"][0]["resources"]["claims"] = json!([{"name": "gpu"}]),
        |p| p["spec"]["initContainers"] = json!([{"name": "init", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}]),
    ];
    for claim in claims {
        let p = w.clone().with("Pod", "a", claim).plan();
        assert_eq!(
            tainted(&p),
            vec!["taintNode Node/node-2"],
            "{:?}",
            lines(&p)
        );
    }
    // Pending, it gets no node: the plan says why.
    let pending = World::new("WhenEmpty")
        .md(4, 0)
        .pod("p", None, "1")
        .with("Pod", "p", claims[0]);
    let p = pending.plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("createNodeClaim")),
        "{:?}",
        lines(&p)
    );
}
