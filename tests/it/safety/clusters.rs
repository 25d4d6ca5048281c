//! Scoping and marks: every management list and watch is scoped to the one Cluster (issue 11 item 9), foreign delete-machine marks, unclaimed Machines as capacity, another Karpenter's objects.

use super::*;

// ---------------------------------------------------------------------------------------------
// Issue 11 item 9: every management list and watch is scoped to the one Cluster.

/// Labels a World's Machines and MachineDeployments with Cluster API's cluster-name label (its
/// webhooks set it from `spec.clusterName`).
fn cluster_labelled(mut w: World) -> World {
    for o in w.objects_mut() {
        if o["kind"] == "Machine" || o["kind"] == "MachineDeployment" {
            let c = o["spec"]["clusterName"].clone();
            o["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = c;
        }
    }
    w
}

/// Cluster B's member MachineDeployment in the same namespace, with a Machine that has no Node
/// and no claim (surplus to a controller that saw it as its own) and one with a Node.
fn cluster_b(w: World) -> World {
    let other = "other";
    let machine = |name: &str| {
        Machine::new(NS, name)
            .created(&ago(7200))
            .deployment("other-md-4")
            .label("cluster.x-k8s.io/cluster-name", other)
            .cluster(other)
    };
    w.add(Cluster::new(NS, other))
        .add(
            MachineDeployment::new(NS, "other-md-4")
                .member()
                .label("cluster.x-k8s.io/cluster-name", other)
                .capacity("4", "8G")
                .node_labels("kubernetes.io/arch=amd64,node.kubernetes.io/instance-type=c-4")
                .price("0.01")
                .replicas(2)
                .cluster(other)
                .selecting()
                .version("v1.36.1")
                .observed("3", 1),
        )
        .add(machine("other-m-1"))
        .add(
            machine("other-m-2")
                .provider_id("openstack:///other-2")
                .node("other-node-2"),
        )
}

async fn run_pass_for(
    fake: &FakeApi,
    cluster: Option<&str>,
) -> Result<karpenter_capi::error::Outcome, karpenter_capi::Error> {
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(std::io::sink()));
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    once(
        &clients,
        Some(NS),
        cluster,
        &Config::default(),
        false,
        &printer,
    )
    .await
}

/// The requests that named one of cluster B's objects (any verb).
fn touching_b(fake: &FakeApi) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.path.contains("/other-"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test]
async fn the_controller_of_one_cluster_never_touches_another_clusters_machines() {
    // Cluster A (capi-ovh): an empty node due for removal, and a Machine without Node.
    for a in [
        one_empty(1),
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .pod("web", Some(1), "1")
            .machine(4, 2, false, false),
    ] {
        let w = cluster_b(cluster_labelled(a));
        let fake = fake_of(&w);
        run_pass_for(&fake, Some(NS)).await.unwrap();
        assert_eq!(touching_b(&fake), Vec::<String>::new());
        let b_md = fake
            .get("cluster.x-k8s.io", "machinedeployments", NS, "other-md-4")
            .unwrap();
        assert_eq!(b_md["spec"]["replicas"], 2);
        for m in ["other-m-1", "other-m-2"] {
            let m = fake.get("cluster.x-k8s.io", "machines", NS, m).unwrap();
            assert!(m["metadata"]["annotations"].is_null(), "{m}");
        }
        assert!(
            names(&fake, "karpenter.sh", "nodeclaims")
                .iter()
                .all(|c| !c.contains("other")),
        );
        // The Machine and MachineDeployment lists asked for cluster A's only.
        let lists: Vec<String> = fake
            .requests()
            .iter()
            .filter(|r| {
                r.method == "GET"
                    && (r.path.ends_with("/machines") || r.path.ends_with("/machinedeployments"))
            })
            .map(|r| r.query.clone())
            .collect();
        assert!(!lists.is_empty());
        assert!(
            lists
                .iter()
                .all(|q| q.contains("labelSelector=cluster.x-k8s.io%2Fcluster-name%3Dcapi-ovh")),
            "{lists:?}"
        );
        // A did its own work.
        assert!(
            fake.requests()
                .iter()
                .any(|r| r.method == "PATCH" && r.path.ends_with("/machinedeployments/md-4/scale")),
            "{:?}",
            fake.writes()
        );

        // The control: unscoped, the same pass takes B's Machine for surplus.
        let fake = fake_of(&w);
        run_pass_for(&fake, None).await.unwrap();
        assert_ne!(touching_b(&fake), Vec::<String>::new());
    }
}

#[test]
fn the_in_memory_api_filters_lists_by_label_selector() {
    let obj = json!({"metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "a", "tier": "x"}}});
    for (sel, want) in [
        ("cluster.x-k8s.io/cluster-name=a", true),
        ("cluster.x-k8s.io/cluster-name==a", true),
        ("cluster.x-k8s.io/cluster-name=b", false),
        ("cluster.x-k8s.io/cluster-name!=b", true),
        ("cluster.x-k8s.io/cluster-name in (b, a)", true),
        ("cluster.x-k8s.io/cluster-name in (b,c)", false),
        ("cluster.x-k8s.io/cluster-name notin (a)", false),
        ("cluster.x-k8s.io/cluster-name in (a,b),tier=x", true),
        ("cluster.x-k8s.io/cluster-name in (a,b),tier=y", false),
        ("tier", true),
        ("!tier", false),
        ("missing", false),
        ("!missing", true),
    ] {
        assert_eq!(common::selector_matches(sel, &obj), want, "{sel}");
    }
}

/// Rule 10 of the conformance round: Cluster API deletes every Machine carrying
/// `cluster.x-k8s.io/delete-machine` first (`machineset_deletion_order.go`), so no scale-down
/// goes while a mark this decision did not make is on a Machine of the MachineDeployment; our
/// own stale marks are taken off; our marks say they are ours.
#[test]
fn a_mark_that_is_not_this_decisions_holds_the_scale_down() {
    // Someone else marked m-2 (Cluster Autoscaler writes a timestamp).
    let foreign = one_empty(2)
        .machine(4, 2, true, false)
        .with(
            "Machine",
            "m-2",
            |m| {
                m["metadata"]["annotations"] =
                    json!({"cluster.x-k8s.io/delete-machine": "2026-11-30 09:00:00 +0000 UTC"})
            },
        );
    let p = foreign.plan();
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
            "Machine m-2 carries cluster.x-k8s.io/delete-machine (not ours): Cluster API would delete it first"
        ),
        "{:?}",
        p.notes
    );
    // A stale mark of ours (its claim c-2 lives on): taken off, and the scale-down waits a pass.
    let stale = one_empty(2).machine(4, 2, true, true).with("Machine", "m-2", |m| {
        m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "Empty", "karpenter-capi/marked-for": "c-2"})
    });
    let p = stale.plan();
    assert!(
        lines(&p).contains(&"unmarkMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    // Our own mark names the claim it is for.
    let p = one_empty(1).plan();
    let mark = p
        .actions
        .iter()
        .find(|a| a.name() == "markMachineForDeletion")
        .unwrap();
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&mark.steps().writes[0], Write::MergePatch { patch, .. }
            if patch == &json!({"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": "Empty", "karpenter-capi/marked-for": "c-1"}}})),
        "{:?}",
        mark.steps().writes
    );
}

/// Unclaimed Machines are capacity (karpenter-provider-cluster-api `pkg/batcher/create.go`
/// countUnclaimedMachines): a Machine whose Node has not registered yet (it still carries
/// `karpenter.sh/unregistered`, e.g. made for a claim before a restart) is bound to a claim
/// waiting for its flavor rather than bought again, and is never adopted as initialized.
#[test]
fn an_unclaimed_machine_whose_node_has_not_registered_is_capacity() {
    let unregistered = |w: World| {
        w.with(
            "Node",
            "node-2",
            |n| {
                n["spec"]["taints"] =
                    json!([{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
            },
        )
    };
    // No claim waits for it: not adopted (it is no running node yet), not removed.
    let w = unregistered(idle(2).pod("busy", Some(1), "1").machine(4, 2, true, false));
    let p = w.plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("adoptMachine")
            || l.starts_with("scaleMachineDeployment")
            || l.starts_with("markMachine")),
        "{:?}",
        lines(&p)
    );
    // A pending pod of that flavor: a claim is created and the replicas do not rise (the
    // Machine covers it); next pass the claim is bound to it.
    let p = w.clone().pod("pending", None, "3").plan();
    assert_eq!(lines(&p), vec!["createNodeClaim NodeClaim/default-"]);
    let waiting = w.add(waiting_claim("default-w", 5));
    let p = waiting.plan();
    assert!(
        lines(&p).contains(&"claimMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    // Registered (the taint gone) without a claim: adopted, as before.
    let registered = idle(2).pod("busy", Some(1), "1").machine(4, 2, true, false);
    assert!(
        lines(&registered.plan()).contains(&"adoptMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&registered.plan())
    );
}

/// Core IsManaged (`utils/nodeclaim`, the cloud provider's supported node classes): another
/// Karpenter's NodePools and NodeClaims (a `nodeClassRef` that is not a `ClusterAPINodeClass`)
/// are never acted on — not provisioned for, expired, drifted, emptied or finalized — and their
/// Nodes, which carry a finalizer of the same name, are never released.
#[test]
fn another_karpenters_nodepools_and_claims_are_left_alone() {
    let aws = json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"});
    let w = idle(1)
        .add(
            NodePool::new("aws")
                .set("/spec/template/spec/nodeClassRef", aws.clone())
                .expire_after("1m")
                .disruption("WhenEmpty", "0s", "100%"),
        )
        .add(
            NodeClaim::new("aws-1", "aws")
                .created(&ago(7200))
                .finalizer("karpenter.sh/termination")
                .set("/spec/nodeClassRef", aws)
                .set("/spec/expireAfter", "1m")
                .initialized("aws:///i-1", "ip-1", &ago(7200)),
        )
        .add(
            Node::new("ip-1")
                .finalizer("karpenter.sh/termination")
                .deleting(&ago(5))
                .label("karpenter.sh/nodepool", "aws")
                .provider_id("aws:///i-1")
                .set(
                    "/status/allocatable",
                    json!({"cpu": "2", "memory": "4G", "pods": "110"}),
                )
                .ready(),
        );
    let p = w.plan();
    let touching: Vec<String> = lines(&p)
        .into_iter()
        .filter(|l| l.contains("aws") || l.contains("ip-1"))
        .collect();
    assert_eq!(touching, Vec::<String>::new());
    assert!(
        p.notes.iter().all(|n| !n.contains("aws-1")),
        "{:?}",
        p.notes
    );
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    assert_eq!(
        s.nodepools
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        vec!["default"]
    );
    assert_eq!(s.foreign_claims.len(), 1);
    assert!(
        s.warnings.iter().any(|w| w
            == "NodePool aws: its nodeClassRef is a EC2NodeClass.karpenter.k8s.aws, not a ClusterAPINodeClass: left to the Karpenter that owns it"),
        "{:?}",
        s.warnings
    );
}

/// Found by `plans_never_harm`: two claims being deleted whose Machines (no Node yet) carry
/// someone else's delete-machine mark. Both are this decision's to remove, so each is marked
/// again as ours (the mark then reads as this decision's) before the replicas drop by exactly
/// those two.
#[test]
fn foreign_marks_on_machines_we_remove_are_made_ours() {
    let mut w = World::new("WhenEmpty").md(2, 2);
    for i in 1..=2 {
        w = w
            .machine(2, i, false, true)
            .with("NodeClaim", &format!("c-{i}"), |c| {
                c["metadata"]["deletionTimestamp"] = json!(ago(30))
            })
            .with("Machine", &format!("m-{i}"), |m| {
                m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "x"})
            });
    }
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "markMachineForDeletion Machine/capi-ovh/m-2",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-2"
        ]
    );
}

#[test]
fn the_node_class_selector_narrows_the_members_and_may_leave_none() {
    // K-MD-007, K-MD-008: the node class's scalableResourceSelector narrows the members: md-8
    // selected, the cheaper md-4 not, so the pod gets a c-8. An unlabelled md-2 matching the
    // selector stays out (deliberate difference 8: upstream's selector replaces the label).
    // A selector that no member matches offers nothing.
    let select = |w: World| {
        w.with("ClusterAPINodeClass", "default", |c| {
            c["spec"]["scalableResourceSelector"] =
                json!({"matchLabels": {"label-for-selection": ""}})
        })
    };
    let labelled = |w: World, md: &str| {
        w.with("MachineDeployment", md, |m| {
            m["metadata"]["labels"]["label-for-selection"] = json!("")
        })
    };
    let created = |p: &Plan| -> Vec<String> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::CreateNodeClaim { instance_type, .. } => Some(instance_type.clone()),
                _ => None,
            })
            .collect()
    };
    let base = World::new("WhenEmpty")
        .md(4, 0)
        .md(8, 0)
        .pod("web", None, "1");
    assert_eq!(created(&base.plan()), ["c-4"]);
    let w = labelled(select(base.clone()), "md-8");
    assert_eq!(created(&w.plan()), ["c-8"]);
    let unlabelled_cheap = labelled(w.md(2, 0), "md-2").with("MachineDeployment", "md-2", |m| {
        m["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("node.cluster.x-k8s.io/karpenter-member");
    });
    assert_eq!(created(&unlabelled_cheap.plan()), ["c-8"]);
    assert!(created(&select(base).plan()).is_empty());
}

#[test]
fn a_static_pools_nodes_are_not_disrupted_nor_marked_consolidatable() {
    // D-EMPTY-020, D-CONS-110, N-SUITE-002: core's emptiness, consolidation and drift pass over
    // the nodes of a pool with spec.replicas (OwnedByStaticNodePool), and its claims are never
    // judged Consolidatable. An empty node of the pool: tainted Empty while the pool is dynamic,
    // left alone (no taint, no Consolidatable) once the pool says replicas: 1.
    let consolidatable = |p: &Plan| {
        serde_json::to_string(&p.status)
            .unwrap()
            .contains("\"Consolidatable\"")
    };
    let w = idle(1);
    let p = w.plan();
    assert!(
        lines(&p).contains(&"taintNode Node/node-1".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(consolidatable(&p));
    let fixed = w.with("NodePool", "default", |np| {
        np["spec"]["replicas"] = json!(1)
    });
    let p = fixed.plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
    assert!(!consolidatable(&p));
}
