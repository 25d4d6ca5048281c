//! Rules 2 and 3 of issue 10: replicas drop by at most the Machines marked, stale views and rollouts hold scale-downs, and Cluster API must delete the Machine we marked.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 2: replicas drop by at most the Machines marked; stale views hold scale-downs.

#[test]
fn replicas_drop_by_the_machines_marked_even_when_spec_is_higher() {
    // spec.replicas 5 but one Machine seen (others being created): 5 -> 4, never 5 -> 0.
    let p = one_empty(5).plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    assert!(matches!(
        p.actions[2],
        Action::ScaleMachineDeployment {
            from: 5,
            replicas: 4,
            ..
        }
    ));
    // The scale carries the resourceVersion read.
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&p.actions[2].steps().writes[0], Write::Scale { resource_version: Some(rv), replicas: 4, .. } if rv == "7")
    );
}

#[test]
fn a_stale_view_holds_the_scale_down_with_a_note() {
    let behind = one_empty(1).with("MachineDeployment", "md-4", |md| {
        md["metadata"]["generation"] = json!(2);
    });
    let p = behind.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(
            &p,
            "MachineDeployment capi-ovh/md-4: replicas not lowered from 1: status.observedGeneration 1 is behind metadata.generation 2"
        ),
        "{:?}",
        p.notes
    );
    // Machines seen do not match what the MachineSets report.
    let p = one_empty(1).add(machine_set(4, "md-4-a", 2, 600)).plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment"))
    );
    assert!(
        has_note(&p, "stale view: 1 Machines seen, its MachineSets report 2"),
        "{:?}",
        p.notes
    );
    // Consistent: the scale goes.
    let p = one_empty(1).add(machine_set(4, "md-4-a", 1, 600)).plan();
    assert!(
        lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment"))
    );
}

#[test]
fn a_watch_not_yet_resynced_holds_every_scale_down() {
    // Rule 2: while any watch is (re-)listing, the stores serve the objects of before it: no
    // replicas are lowered, whatever the MachineDeployment (the mark is kept: it is idempotent
    // and a later pass scales once the view is fresh).
    let why = "stale view: the watches of management cluster machinesets.cluster.x-k8s.io have not re-synced yet";
    let states: Vec<(World, Vec<&str>)> = vec![
        // An empty node removed.
        (
            one_empty(1),
            vec![
                "markMachineForDeletion Machine/capi-ovh/m-1",
                "deleteNodeClaim NodeClaim/c-1",
            ],
        ),
        // A surplus Machine (no Node, no claim waiting): not even marked while stale (a note
        // "surplus Machine(s) m-2 not removed: ...").
        (
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, true)
                .pod("web", Some(1), "1")
                .machine(4, 2, false, false),
            vec![],
        ),
    ];
    for (w, held) in states {
        let fresh = w.plan();
        assert!(
            lines(&fresh)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            "{:?}",
            lines(&fresh)
        );
        let p = w.plan_unsynced(&["management cluster machinesets.cluster.x-k8s.io"]);
        assert_eq!(lines(&p), held);
        assert!(
            p.notes
                .iter()
                .any(|n| n.starts_with("MachineDeployment capi-ovh/md-4: ") && n.contains(why)),
            "{:?}",
            p.notes
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 3: Cluster API must delete the Machine we marked.

#[test]
fn rollouts_pauses_and_deletions_in_progress_hold_the_scale_down() {
    let cases: Vec<(World, &str)> = vec![
        (
            one_empty(2)
                .add(machine_set(4, "md-4-a", 1, 600))
                .add(machine_set(4, "md-4-b", 1, 60))
                .machine(4, 9, false, false)
                .with("Machine", "m-9", |m| {
                    m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"] = json!("");
                }),
            "rolling out: MachineSets md-4-a, md-4-b have replicas",
        ),
        (
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["metadata"]["annotations"]["cluster.x-k8s.io/paused"] = json!("")
            }),
            "MachineDeployment capi-ovh/md-4 carries cluster.x-k8s.io/paused",
        ),
        (
            one_empty(1)
                .add(machine_set(4, "md-4-a", 1, 600))
                .with("MachineSet", "md-4-a", |ms| {
                    ms["metadata"]["annotations"] = json!({"cluster.x-k8s.io/paused": ""});
                }),
            "MachineSet md-4-a carries cluster.x-k8s.io/paused",
        ),
        (
            one_empty(1).add(Cluster::new(NS, NS).paused()),
            "Cluster capi-ovh is paused",
        ),
        (
            one_empty(2)
                .machine(4, 2, false, false)
                .with("Machine", "m-2", |m| {
                    m["metadata"]["deletionTimestamp"] = json!(ago(10));
                    m["metadata"]["finalizers"] = json!(["machine.cluster.x-k8s.io"]);
                }),
            "Machine m-2 is being deleted (Cluster API counts it first)",
        ),
        (
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["status"]["replicas"] = json!(2);
                md["status"]["upToDateReplicas"] = json!(1);
            }),
            "rolling out: 1 of 2 Machines up to date",
        ),
    ];
    for (w, why) in cases {
        let p = w.plan();
        assert!(
            !lines(&p)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            "{why}: {:?}",
            lines(&p)
        );
        assert!(has_note(&p, why), "{why}: {:?}", p.notes);
    }
}

#[test]
fn on_delete_scales_down_when_the_marked_machine_is_in_the_oldest_machine_set() {
    let w = |set: &str| {
        one_empty(2)
            .machine(4, 2, true, true)
            .pod("web", Some(2), "1")
            .with("MachineDeployment", "md-4", |md| {
                md["spec"]["rollout"] = json!({"strategy": {"type": "OnDelete"}});
            })
            .add(machine_set(4, "old", 1, 6000))
            .add(machine_set(4, "new", 1, 60))
            .with("Machine", "m-1", |m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] = json!(set)
            })
            .with("Machine", "m-2", |m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] =
                    json!(if set == "old" { "new" } else { "old" })
            })
    };
    let p = w("old").plan();
    assert!(
        p.actions.iter().any(|a| matches!(
            a,
            Action::ScaleMachineDeployment {
                from: 2,
                replicas: 1,
                ..
            }
        )),
        "{:?}",
        lines(&p)
    );
    // Marked in the newer MachineSet: Cluster API would scale the old one down first.
    let p = w("new").plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(&p, "rolling out: MachineSets old, new have replicas"),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_marked_machine_still_alive_after_the_hold_is_marked_and_scaled_again() {
    // c-1 is being deleted (our finalizer), its node drained, m-1 marked earlier but the scale
    // was held; the hold is over.
    let w = one_empty(1)
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
        .with("Machine", "m-1", |m| {
            m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "Empty"})
        });
    let w = excluded(w, "node-1");
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // While paused: no scale and no repeated mark, a note.
    let p = w
        .clone()
        .with("MachineDeployment", "md-4", |md| {
            md["metadata"]["annotations"]["cluster.x-k8s.io/paused"] = json!("")
        })
        .plan();
    assert_eq!(lines(&p), Vec::<String>::new());
    assert!(
        has_note(
            &p,
            "NodeClaim c-1: termination waits: MachineDeployment capi-ovh/md-4 carries cluster.x-k8s.io/paused"
        ),
        "{:?}",
        p.notes
    );
    // `spec.paused` pauses rollouts only: Cluster API still scales, and so do we.
    let p = w
        .with("MachineDeployment", "md-4", |md| {
            md["spec"]["paused"] = json!(true)
        })
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
}

#[test]
fn template_drift_is_suspended_while_cluster_api_rolls_out() {
    let drifted = |w: World| {
        w.machine(4, 2, true, true)
            .pod("web", Some(2), "1")
            .with("NodeClaim", "c-2", |c| {
                c["metadata"]["annotations"]["karpenter-capi/machine-template-hash"] =
                    json!("stale")
            })
    };
    let base = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .pod("other", Some(1), "1");
    let p = drifted(base.clone()).plan();
    assert!(
        lines(&p).contains(&"taintNode Node/node-2".to_string()),
        "{:?}",
        lines(&p)
    );
    let rolling = base.with("MachineDeployment", "md-4", |md| {
        md["metadata"]["generation"] = json!(3)
    });
    let p = drifted(rolling.clone()).plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
    // OnDelete (what `init` generates): Cluster API leaves the replacement to our drift.
    let on_delete = rolling.with("MachineDeployment", "md-4", |md| {
        md["spec"]["rollout"] = json!({"strategy": {"type": "OnDelete"}})
    });
    let p = drifted(on_delete).plan();
    assert!(
        lines(&p).contains(&"taintNode Node/node-2".to_string()),
        "{:?}",
        lines(&p)
    );
}

#[test]
fn a_past_rollout_after_is_a_rollout_in_progress() {
    // Cluster API (`mdutil/util.go` `FindNewAndOldMachineSets`): once `spec.rollout.after`
    // (v1beta1 `spec.rolloutAfter`) has passed, every MachineSet created before it is old and
    // is replaced; until then a scale-down could remove another Machine than the one we marked.
    let scaled = |p: &Plan| {
        p.actions.iter().any(|a| {
            matches!(
                a,
                Action::ScaleMachineDeployment {
                    from: 1,
                    replicas: 0,
                    ..
                }
            )
        })
    };
    let after = |w: World, field: &str, t: String| {
        w.with("MachineDeployment", "md-4", |md| match field {
            "v1beta1" => md["spec"]["rolloutAfter"] = json!(t),
            _ => md["spec"]["rollout"] = json!({"after": t}),
        })
    };
    let held: Vec<(World, String)> = vec![
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-a", 1, 6000)),
                "v1beta2",
                ago(60),
            ),
            format!(
                "replicas not lowered from 1: rolling out: spec.rollout.after {} has passed and MachineSet md-4-a, created before it, is still there",
                ago(60)
            ),
        ),
        (
            // No MachineSet in view: the Machine's own age tells.
            after(one_empty(1), "v1beta1", ago(60)),
            format!(
                "replicas not lowered from 1: rolling out: spec.rollout.after {} has passed and Machine m-1, created before it, is still there",
                ago(60)
            ),
        ),
    ];
    for (w, why) in held {
        let p = w.plan();
        assert!(!scaled(&p), "{why}: {:?}", lines(&p));
        assert!(has_note(&p, &why), "{why}: {:?}", p.notes);
        // The claim is still deleted and its Machine marked: it goes once the rollout is over.
        assert!(lines(&p).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()));
    }
    let free: Vec<(World, &str)> = vec![
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-a", 1, 6000)),
                "v1beta2",
                ago(-3600),
            ),
            "in the future",
        ),
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-b", 1, 30)),
                "v1beta2",
                ago(60),
            ),
            "the MachineSet with replicas is newer than it: rolled out",
        ),
        (
            after(
                one_empty(1)
                    .add(machine_set(4, "md-4-a", 0, 6000))
                    .add(machine_set(4, "md-4-b", 1, 30)),
                "v1beta1",
                ago(60),
            ),
            "the old MachineSet has no replicas left",
        ),
    ];
    for (w, case) in free {
        let p = w.plan();
        assert!(scaled(&p), "{case}: {:?} {:?}", lines(&p), p.notes);
    }
}

#[test]
fn a_past_rollout_after_suspends_template_drift_unless_on_delete() {
    // node-2's claim recorded an older template: drift, unless Cluster API is itself rolling
    // the MachineDeployment out because of `spec.rollout.after`.
    let w = |strategy: &str, t: String| {
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("other", Some(1), "1")
            .pod("web", Some(2), "1")
            .add(machine_set(4, "md-4-a", 2, 6000))
            .with("NodeClaim", "c-2", |c| {
                c["metadata"]["annotations"]["karpenter-capi/machine-template-hash"] =
                    json!("stale")
            })
            .with("MachineDeployment", "md-4", |md| {
                md["spec"]["rollout"] = json!({"after": t, "strategy": {"type": strategy}})
            })
    };
    let tainted = |p: &Plan| lines(p).contains(&"taintNode Node/node-2".to_string());
    let p = w("RollingUpdate", ago(60)).plan();
    assert!(!tainted(&p), "{:?}", lines(&p));
    let p = w("RollingUpdate", ago(-60)).plan();
    assert!(tainted(&p), "not yet due: {:?}", lines(&p));
    let p = w("OnDelete", ago(60)).plan();
    assert!(
        tainted(&p),
        "OnDelete leaves replacement to our drift: {:?}",
        lines(&p)
    );
}

/// Every scale of a plan: (MachineDeployment, from, to, the Machines it rolls back on failure).
fn scales(p: &Plan) -> Vec<(String, i64, i64, Vec<String>)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::ScaleMachineDeployment {
                machine_deployment,
                from,
                replicas,
                rollback_machines,
                ..
            } => Some((
                machine_deployment.clone(),
                *from,
                *replicas,
                rollback_machines.clone(),
            )),
            _ => None,
        })
        .collect()
}

/// How many claims a plan's lines create.
fn created(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|x| *x == "createNodeClaim NodeClaim/default-")
        .count()
}

/// `World` with `n` Machines of `md-4` whose claims are being deleted (never registered, so
/// each Machine is marked at once).
fn leaving(replicas: i64, n: usize) -> World {
    let mut w = World::new("WhenEmpty").md(4, replicas);
    for i in 1..=n {
        w = w
            .machine(4, i, false, true)
            .with("NodeClaim", &format!("c-{i}"), |c| {
                c["metadata"]["deletionTimestamp"] = json!(ago(30))
            });
    }
    w
}

#[test]
fn several_removals_on_one_machine_deployment_lower_it_once_by_their_number() {
    // The provider's delete batch (K-BATCH-006): three Machines leave one MachineDeployment in
    // one pass; one scale write lowers it by three and rolls back exactly those three.
    let p = leaving(3, 3).plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "markMachineForDeletion Machine/capi-ovh/m-2",
            "markMachineForDeletion Machine/capi-ovh/m-3",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    let marked: Vec<String> = (1..=3).map(|i| format!("capi-ovh/m-{i}")).collect();
    assert_eq!(
        scales(&p),
        vec![("capi-ovh/md-4".to_string(), 3, 0, marked)]
    );
}

#[test]
fn replicas_below_the_machines_marked_drop_to_zero_never_below() {
    // K-BATCH-011: three Machines marked against one replica: 1 -> 0, not -2.
    let p = leaving(1, 3).plan();
    let marked: Vec<String> = (1..=3).map(|i| format!("capi-ovh/m-{i}")).collect();
    assert_eq!(
        lines(&p)
            .iter()
            .filter(|l| l.starts_with("markMachineForDeletion"))
            .count(),
        3
    );
    assert_eq!(
        scales(&p),
        vec![("capi-ovh/md-4".to_string(), 1, 0, marked)]
    );
}

#[test]
fn new_claims_beyond_the_free_machines_raise_replicas_by_the_shortfall_once() {
    // K-BATCH-005: two free Machines, five pods that each need a c-4: five claims, and replicas
    // rise by three (2 -> 5) in one write; the free Machines are bound next pass, nothing undone.
    let mut w = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, false, false)
        .machine(4, 2, false, false);
    for i in 0..5 {
        w = w.pod(&format!("pending-{i}"), None, "3");
    }
    let p = w.plan();
    let l = lines(&p);
    assert_eq!(created(&l), 5, "{l:?}");
    assert!(p.actions.iter().all(|a| !matches!(a, Action::CreateNodeClaim { machine_deployment, .. } if machine_deployment != "capi-ovh/md-4")));
    assert_eq!(
        scales(&p),
        vec![("capi-ovh/md-4".to_string(), 2, 5, vec![])]
    );
    assert!(!l.iter().any(|x| x.starts_with("markMachineForDeletion")));

    // The next pass: five waiting claims at five replicas, the two free Machines still free.
    let mut w = World::new("WhenEmpty")
        .md(4, 5)
        .machine(4, 1, false, false)
        .machine(4, 2, false, false);
    for (i, name) in ["c-a", "c-b", "c-c", "c-d", "c-e"].iter().enumerate() {
        w = w.add(waiting_claim(name, 50 - 10 * i as i64));
    }
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "claimMachine Machine/capi-ovh/m-1",
            "claimMachine Machine/capi-ovh/m-2"
        ]
    );
    assert!(scales(&p).is_empty());
}

#[test]
fn creates_and_removals_on_one_machine_deployment_make_one_scale_of_their_sum() {
    // K-BATCH-012: at 8 replicas, two Machines leave (claims deleting), three are busy, three
    // are free, and three pods need a c-4 each: one write, 8 -> 6 (three kept claims and three
    // new ones), rolling back only the two marked Machines; the free ones are not marked.
    let mut w = leaving(8, 2);
    for i in 3..=5 {
        w = w
            .machine(4, i, true, true)
            .pod(&format!("busy-{i}"), Some(i), "3");
    }
    for i in 6..=8 {
        w = w.machine(4, i, false, false);
    }
    for i in 0..3 {
        w = w.pod(&format!("pending-{i}"), None, "3");
    }
    let p = w.plan();
    let l = lines(&p);
    assert_eq!(created(&l), 3, "{l:?}");
    let marks: Vec<&String> = l
        .iter()
        .filter(|x| x.starts_with("markMachineForDeletion"))
        .collect();
    assert_eq!(
        marks,
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "markMachineForDeletion Machine/capi-ovh/m-2"
        ]
    );
    assert_eq!(
        scales(&p),
        vec![(
            "capi-ovh/md-4".to_string(),
            8,
            6,
            vec!["capi-ovh/m-1".to_string(), "capi-ovh/m-2".to_string()]
        )]
    );
}

#[test]
fn a_removed_claims_machine_deployment_outside_the_members_is_still_lowered_or_says_why() {
    // K-MD-002, K-CP-005: a user deleted c-1 (drained, tainted a minute ago). Its MachineDeployment
    // then left the members (label taken off): the mark of its exact Machine is still followed by
    // md-4's scale-down, as the provider's Delete finds the MachineDeployment by name.
    let w = excluded(tainted(deleted(idle(1), "node-1"), "node-1", ""), "node-1");
    let control = w.plan();
    assert!(lines(&control).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()));
    let down = vec![(
        "capi-ovh/md-4".to_string(),
        1,
        0,
        vec!["capi-ovh/m-1".to_string()],
    )];
    assert_eq!(scales(&control), down);

    let outside = w.clone().with("MachineDeployment", "md-4", |m| {
        m["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("node.cluster.x-k8s.io/karpenter-member");
    });
    let p = outside.plan();
    assert_eq!(lines(&p), lines(&control));
    assert_eq!(scales(&p), down);

    // Gone altogether: the mark stays the claim's own, no replicas are written, a note says why.
    let gone = outside.retain(|o| o["kind"] != "MachineDeployment");
    let p = gone.plan();
    assert!(lines(&p).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()));
    assert!(scales(&p).is_empty());
    assert!(
        has_note(
            &p,
            "MachineDeployment capi-ovh/md-4 of the marked Machine(s) m-1 is not there: its replicas cannot be lowered"
        ),
        "{:?}",
        p.notes
    );
}

#[test]
fn replicas_at_zero_are_never_lowered_further() {
    // K-CP-007: the provider refuses to lower a MachineDeployment already at 0. Our removal at
    // 0 replicas still marks the claim's exact Machine and writes no scale; at 1 it goes to 0.
    let p = one_empty(0).plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1"
        ]
    );
    assert!(scales(&p).is_empty());
    assert_eq!(
        scales(&one_empty(1).plan()),
        vec![(
            "capi-ovh/md-4".to_string(),
            1,
            0,
            vec!["capi-ovh/m-1".to_string()]
        )]
    );
}
