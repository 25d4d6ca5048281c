//! Candidates, volumes, counters and expiry: a claim whose flavor left the pool, a
//! hostname-pinned local volume, the multi-node decision counter, and expiry by the clock.

use super::*;

/// D-SUITE-050 (`suite_test.go` "should consider candidates that have an instance type that
/// cannot be resolved"): a claim whose flavor's MachineDeployment left the pool is still a
/// candidate (drifted, `InstanceTypeNotFound`): empty, it is removed; with a pod, replaced by a
/// flavor the pool still has.
#[test]
fn a_claim_whose_flavor_left_the_pool_is_still_a_candidate() {
    let left = |w: World| {
        w.with("MachineDeployment", "md-8", |m| {
            m["metadata"]["labels"]
                .as_object_mut()
                .unwrap()
                .remove("node.cluster.x-k8s.io/karpenter-member");
        })
    };
    let empty = left(
        World::new("WhenEmpty")
            .md(8, 1)
            .md(4, 0)
            .machine(8, 1, true, true),
    );
    let p = plan_of(&empty);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    let busy = empty.add(pod_on("web", 1, "1", &[]));
    let p = plan_of(&busy);
    assert_eq!(created(&p), vec![("c-4", vec!["default/web"])]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
}

/// D-SUITE-003 (`suite_test.go` "can replace node with a local PV (ignoring hostname
/// affinity)"): a StatefulSet pod whose claim is bound to a local PersistentVolume pinned to
/// node-1's hostname is still planned onto a replacement (the pin means nothing once node-1
/// goes): node-1, a c-8, is replaced by a c-2. A volume that is not node-local keeps its
/// hostname pin, and the node stays.
#[test]
fn a_hostname_pinned_local_volume_does_not_stop_a_replacement() {
    let with_volume = |source: &str, value: Value| {
        underutilized("100%")
            .md(8, 1)
            .md(2, 0)
            .machine(8, 1, true, true)
            .add(
                pod_on("web-0", 1, "1", &[])
                    .set(
                        "/metadata/ownerReferences",
                        json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                            "uid": "uid-sts", "controller": true}]),
                    )
                    .set(
                        "/spec/volumes",
                        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]),
                    ),
            )
            .add(json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "local-path"}, "provisioner": "kubernetes.io/no-provisioner"}))
            .add(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data-web-0", "namespace": "default"},
                "spec": {"volumeName": "pv-1", "storageClassName": "local-path"}}))
            .add(json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                "spec": {
                    "storageClassName": "local-path",
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}
                }}))
            .with("PersistentVolume", "pv-1", |pv| pv["spec"][source] = value)
    };
    let local = with_volume("local", json!({"path": "/mnt/disk"}));
    let p = plan_of(&local);
    assert_eq!(created(&p), vec![("c-2", vec!["default/web-0"])]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Underutilized")]);
    let remote = with_volume(
        "csi",
        json!({"driver": "cinder.csi.openstack.org", "volumeHandle": "v-1"}),
    );
    let p = plan_of(&remote);
    assert!(created(&p).is_empty(), "{:?}", created(&p));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
}

/// The Karpenter counters a plan of `w` increments (as `karpenter_metrics::counts` names them).
fn counted(w: &World) -> Vec<String> {
    use karpenter_capi::controller::karpenter_metrics::counts;
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    let p = plan(&s, world::NOW.parse().unwrap(), &Config::default());
    counts(p.actions.iter().chain(p.status.iter()), &s)
        .iter()
        .map(|c| {
            let labels: Vec<String> = c.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{}{{{}}} {}", c.counter.name(), labels.join(","), c.by)
        })
        .collect()
}

/// D-SUITE-056 (`suite_test.go` "should fire metrics for multi-node delete disruption"): three
/// underutilized nodes deleted together, their pods fitting on a fourth: one multi-node delete
/// decision, overall and for the pool, and three disrupted claims.
#[test]
fn a_multi_node_delete_counts_one_multi_decision() {
    let mut w = underutilized("100%").md(8, 4);
    for i in 1..=4 {
        w = w
            .machine(8, i, true, true)
            .add(pod_on(&format!("p{i}"), i, "500m", &[]));
    }
    let c = counted(&w);
    assert_eq!(
        c.iter()
            .filter(|l| l.starts_with("voluntary_disruption_decisions"))
            .collect::<Vec<_>>(),
        vec![
            "voluntary_disruption_decisions_by_nodepool{nodepool=default,decision=delete,reason=underutilized,consolidation_type=multi} 1",
            "voluntary_disruption_decisions{decision=delete,reason=underutilized,consolidation_type=multi} 1",
        ]
    );
    assert_eq!(
        c.iter()
            .filter(|l| l.starts_with("nodeclaims_disrupted{reason=underutilized,"))
            .count(),
        3,
        "{c:?}"
    );
    assert!(
        !c.iter().any(|l| l.starts_with("nodeclaims_created")),
        "{c:?}"
    );
}

/// E-EXP-008 (`nodeclaim/expiration/suite_test.go`, requeue at the moment the claim expires):
/// the claim's expiry is decided by the clock alone, so the first pass after it deletes the
/// claim (continuous mode runs a pass at least every 10 s without events): a claim made an hour
/// ago with `expireAfter: 90m` is kept by passes up to 30 min from now and deleted as Expired
/// by the next.
#[test]
fn a_claim_expires_at_the_first_pass_after_its_expire_after() {
    let w = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, true, true)
        .add(pod_on("web", 1, "3", &[]))
        .with("NodeClaim", "c-1", |c| {
            c["spec"]["expireAfter"] = json!("90m")
        });
    let expired = |p: &Plan| -> Vec<String> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::DeleteNodeClaim {
                    node_claim, reason, ..
                } if reason == "Expired" => Some(node_claim.clone()),
                _ => None,
            })
            .collect()
    };
    for secs in [0, 1790, 1800] {
        assert_eq!(
            expired(&plan_at(&w, secs)),
            Vec::<String>::new(),
            "+{secs}s"
        );
    }
    for secs in [1801, 1810] {
        assert_eq!(expired(&plan_at(&w, secs)), vec!["c-1"], "+{secs}s");
    }
}
