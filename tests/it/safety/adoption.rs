//! Rule 1 of issue 10: adoption, never surprise deletion.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rule 1: adoption, never surprise deletion.

#[test]
fn labelling_a_populated_machine_deployment_adopts_its_nodes_and_deletes_none() {
    for (pods, replicas) in [(0, 3), (2, 3), (1, 5)] {
        let mut w = World::new("WhenEmptyOrUnderutilized")
            .md(4, replicas)
            .machine(4, 1, true, false)
            .machine(4, 2, true, false)
            .machine(4, 3, true, false);
        for p in 0..pods {
            w = w.pod(&format!("web-{p}"), Some(p + 1), "500m");
        }
        let p = w.plan();
        assert_eq!(
            lines(&p),
            vec![
                "adoptMachine Machine/capi-ovh/m-1",
                "adoptMachine Machine/capi-ovh/m-2",
                "adoptMachine Machine/capi-ovh/m-3"
            ],
            "{pods} pods, replicas {replicas}"
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["actions"][0]["nodeClaim"], "node-1");
        assert_eq!(json["actions"][0]["nodePool"], "default");
    }
}

#[test]
fn an_adopted_claim_is_registered_initialized_and_named_after_its_node() {
    let p = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, true, false)
        .plan();
    let steps = p.actions[0].steps();
    use karpenter_capi::controller::write::Write;
    let Write::Create { object, .. } = &steps.writes[0] else {
        panic!("{:?}", steps.writes[0])
    };
    assert_eq!(object["metadata"]["name"], "node-1");
    assert_eq!(
        object["metadata"]["annotations"]["cluster.x-k8s.io/machine"],
        "capi-ovh/m-1"
    );
    assert_eq!(
        object["metadata"]["annotations"]["karpenter-capi/adopted"],
        NOW
    );
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    let Write::SetNodeClaimStatus {
        conditions, fields, ..
    } = &steps.writes[1]
    else {
        panic!()
    };
    let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(
        types,
        vec!["Launched", "Registered", "Initialized", "Ready"]
    );
    assert_eq!(fields["providerID"], "openstack:///1");
}

#[test]
fn a_machine_no_nodepool_fits_is_left_alone() {
    // The only pool requires a zone the node does not have.
    let p = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, false)
        .machine(4, 2, true, false)
        .with("NodePool", "default", |np| {
            np["spec"]["template"]["spec"]["requirements"] =
                json!([{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]);
        })
        .plan();
    assert_eq!(lines(&p), Vec::<String>::new());
    assert!(
        has_note(
            &p,
            "Machine capi-ovh/m-1 (node node-1) has no NodeClaim and no NodePool fits it: left alone"
        ),
        "{:?}",
        p.notes
    );
}

#[test]
fn the_highest_weight_fitting_pool_adopts() {
    let heavy =
        NodePool::new("heavy")
            .weight(50)
            .requirement("kubernetes.io/arch", "In", &["amd64"]);
    let picky = NodePool::new("picky").weight(90).requirement(
        "node.kubernetes.io/instance-type",
        "In",
        &["c-16"],
    );
    let p = World::new("WhenEmpty")
        .add(heavy)
        .add(picky)
        .md(4, 1)
        .machine(4, 1, true, false)
        .plan();
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][0]["action"], "adoptMachine");
    assert_eq!(json["actions"][0]["nodePool"], "heavy");
}

#[test]
fn only_machines_without_a_node_are_bound_to_new_claims() {
    // A waiting claim; m-1 has a Node and no claim (adopted, never bound), m-2 has no Node.
    let waiting = waiting_claim("c-new", 30);
    let p = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, false)
        .machine(4, 2, false, false)
        .add(waiting)
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "adoptMachine Machine/capi-ovh/m-1",
            "claimMachine Machine/capi-ovh/m-2"
        ]
    );
}

#[test]
fn a_machine_without_node_or_waiting_claim_is_the_only_surplus() {
    // replicas 3: m-1 claimed with a node, m-2 a Node without claim (adopted), m-3 nothing.
    let p = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .pod("web", Some(1), "1")
        .machine(4, 2, true, false)
        .machine(4, 3, false, false)
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "adoptMachine Machine/capi-ovh/m-2",
            "markMachineForDeletion Machine/capi-ovh/m-3",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    assert!(matches!(
        p.actions[2],
        Action::ScaleMachineDeployment {
            from: 3,
            replicas: 2,
            ..
        }
    ));
}

/// Every object the in-memory API holds, as a cluster state the pure core plans from.
fn world_of(fake: &FakeApi) -> World {
    let mut objs = Vec::new();
    for (group, plural) in [
        ("karpenter.cluster.x-k8s.io", "clusterapinodeclasses"),
        ("karpenter.sh", "nodepools"),
        ("karpenter.sh", "nodeclaims"),
        ("apps", "daemonsets"),
        ("cluster.x-k8s.io", "machinedeployments"),
        ("cluster.x-k8s.io", "machinesets"),
        ("cluster.x-k8s.io", "machines"),
        ("", "nodes"),
        ("", "pods"),
    ] {
        objs.extend(fake.all(group, plural));
    }
    World::from_objects(objs)
}

/// The disruptions (`action target`) of a plan.
fn disruption_lines(p: &Plan) -> Vec<String> {
    lines(p)
        .into_iter()
        .filter(|l| {
            [
                "taintNode",
                "evictPod",
                "markMachineForDeletion",
                "deleteNodeClaim",
                "scaleMachineDeployment",
            ]
            .iter()
            .any(|a| l.starts_with(&format!("{a} ")))
        })
        .collect()
}

/// Rule 1, "ages counted from adoption": an adopted node that is empty (or underutilized) is
/// consolidated only once `consolidateAfter` has passed since the adoption, however old the
/// Node and its Machine are (hours here), as core counts it from the claim's initialization
/// (`nodeclaim/disruption/consolidation.go`). The adoption pass runs on the in-memory API (the
/// executor stamps the times); the next passes plan from what it wrote, at chosen times.
#[tokio::test]
async fn an_adopted_node_is_consolidated_only_consolidate_after_its_adoption() {
    // (world, consolidateAfter in seconds, the node that goes, its reason)
    let cases: Vec<(World, i64, &str, &str)> = vec![
        (
            World::new("WhenEmpty").md(4, 1).machine(4, 1, true, false),
            30,
            "node-1",
            "Empty",
        ),
        (
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, false)
                .machine(4, 2, true, false)
                .pod("web", Some(1), "1")
                .with("NodePool", "default", |p| {
                    p["spec"]["disruption"]["consolidateAfter"] = json!("10m")
                }),
            600,
            "node-2",
            "Empty",
        ),
        (
            // Underutilized: one node's pod fits beside the other's, so one node is deleted;
            // never both replaced by a new node of their own type (core `filterOutSameType`).
            World::new("WhenEmptyOrUnderutilized")
                .md(4, 2)
                .machine(4, 1, true, false)
                .machine(4, 2, true, false)
                .pod("busy", Some(1), "1")
                .pod("web", Some(2), "500m")
                .with("NodePool", "default", |p| {
                    p["spec"]["disruption"]["consolidateAfter"] = json!("5m")
                }),
            300,
            "node-1",
            "Underutilized",
        ),
    ];
    for (w, after, goes, reason) in cases {
        let fake = fake_of(&w);
        run_pass(&fake).await.unwrap();
        let claims = names(&fake, "karpenter.sh", "nodeclaims");
        assert!(
            !claims.is_empty() && claims.iter().all(|c| c.starts_with("node-")),
            "{claims:?}"
        );
        let claim = fake.get("karpenter.sh", "nodeclaims", "", goes).unwrap();
        let adopted: Timestamp = claim["metadata"]["annotations"]["karpenter-capi/adopted"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let node_created: Timestamp = fake
            .get(
                "cluster.x-k8s.io",
                "machines",
                NS,
                &format!("m-{}", &goes[5..]),
            )
            .unwrap()["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(adopted.as_second() - node_created.as_second() > 3600);
        let next = world_of(&fake);
        let at = |secs: i64| {
            let s = snapshot_from_sources(&[Source {
                name: "w.yaml".into(),
                text: next.text(),
            }])
            .unwrap();
            plan(
                &s,
                Timestamp::from_second(adopted.as_second() + secs).unwrap(),
                &Config::default(),
            )
        };
        for early in [1, after / 2, after - 5] {
            let p = at(early);
            assert_eq!(
                disruption_lines(&p),
                Vec::<String>::new(),
                "{early}s after adoption (consolidateAfter {after}s): {:?}",
                lines(&p)
            );
        }
        let p = at(after + 5);
        assert!(
            !lines(&p).iter().any(|l| l.starts_with("createNodeClaim")),
            "{:?}",
            lines(&p)
        );
        assert_eq!(
            p.actions
                .iter()
                .filter(|a| matches!(a, Action::TaintNode { .. }))
                .count(),
            1,
            "{:?}",
            lines(&p)
        );
        assert!(
            disruption_lines(&p).contains(&format!("taintNode Node/{goes}")),
            "{after}s after adoption: {:?}",
            lines(&p)
        );
        assert!(
            p.actions.iter().any(|a| matches!(a,
                Action::TaintNode { node, reason: r, .. } if node == goes && r == reason)),
            "{:?}",
            lines(&p)
        );
    }
}

#[test]
fn a_claim_with_a_provider_id_but_no_machine_annotation_keeps_its_machine() {
    // K-MACH-006: claims an earlier provider release made name their Machine only by
    // status.providerID. Such a claim's Machine is its own: not counted again in the replicas,
    // not bound to anyone else, and marked (exactly it) when the claim goes.
    let unannotated = |w: World| {
        w.with("NodeClaim", "c-1", |c| {
            c["metadata"]["annotations"]
                .as_object_mut()
                .unwrap()
                .remove("cluster.x-k8s.io/machine");
        })
    };
    let w = unannotated(
        World::new("WhenEmpty")
            .md(4, 1)
            .machine(4, 1, true, true)
            .pod("web", Some(1), "1"),
    );
    let p = w.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment") || l.starts_with("claimMachine")),
        "{:?}",
        lines(&p)
    );
    let gone = unannotated(excluded(
        tainted(deleted(idle(1), "node-1"), "node-1", ""),
        "node-1",
    ));
    let p = gone.plan();
    let l = lines(&p);
    assert!(
        l.contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()),
        "{l:?}"
    );
    assert!(
        l.contains(&"scaleMachineDeployment MachineDeployment/capi-ovh/md-4".to_string()),
        "{l:?}"
    );
    assert!(
        !l.contains(&"removeNodeClaimFinalizer NodeClaim/c-1".to_string()),
        "{l:?}"
    );
    assert!(p.actions.iter().any(|a| matches!(
        a,
        Action::ScaleMachineDeployment {
            from: 1,
            replicas: 0,
            ..
        }
    )));
}

#[test]
fn a_machine_of_no_known_machine_deployment_is_neither_adopted_nor_bound() {
    // K-CP-022, K-CP-023: the provider cannot describe a Machine without the deployment-name
    // label, or whose MachineDeployment is not there. Ours leaves such a Machine alone: a
    // populated one is not adopted, a free one is not bound to a waiting claim.
    let relabel = |w: World, m: &str, to: Option<&str>| {
        w.with("Machine", m, |o| {
            let labels = o["metadata"]["labels"].as_object_mut().unwrap();
            match to {
                Some(d) => {
                    labels.insert("cluster.x-k8s.io/deployment-name".into(), json!(d));
                }
                None => {
                    labels.remove("cluster.x-k8s.io/deployment-name");
                }
            }
        })
    };
    let populated = World::new("WhenEmpty").md(4, 1).machine(4, 1, true, false);
    assert_eq!(
        lines(&populated.plan()),
        vec!["adoptMachine Machine/capi-ovh/m-1"]
    );
    for to in [None, Some("gone")] {
        assert!(
            lines(&relabel(populated.clone(), "m-1", to).plan()).is_empty(),
            "{to:?}"
        );
    }
    let free = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 2, false, false)
        .add(waiting_claim("c-new", 30));
    assert_eq!(
        lines(&free.plan()),
        vec!["claimMachine Machine/capi-ovh/m-2"]
    );
    for to in [None, Some("gone")] {
        let l = lines(&relabel(free.clone(), "m-2", to).plan());
        assert!(
            !l.contains(&"claimMachine Machine/capi-ovh/m-2".to_string()),
            "{to:?}: {l:?}"
        );
    }
}

#[test]
fn an_empty_machine_reference_is_no_reference_and_a_malformed_one_binds_nothing() {
    // K-PROVS-003 (differs): an empty cluster.x-k8s.io/machine reads as no annotation, so the
    // waiting claim is bound to the free Machine (the provider refuses the claim instead).
    // K-PROVS-005: a reference with a second slash names no Machine: nothing is bound to it,
    // and the free Machine is not taken for it either.
    let with_ref = |v: &str| {
        World::new("WhenEmpty")
            .md(4, 1)
            .machine(4, 2, false, false)
            .add(waiting_claim("c-new", 30).annotation("cluster.x-k8s.io/machine", v))
    };
    assert_eq!(
        lines(&with_ref("").plan()),
        vec!["claimMachine Machine/capi-ovh/m-2"]
    );
    let l = lines(&with_ref("capi-ovh/m-2/x").plan());
    assert!(!l.iter().any(|x| x.starts_with("claimMachine")), "{l:?}");
}
