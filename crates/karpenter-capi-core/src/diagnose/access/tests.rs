//! Tests of the access checks: missing and excess rules on the management and workload identities.

use super::*;

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Rule {
    let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Rule {
        api_groups: v(groups),
        resources: v(resources),
        verbs: v(verbs),
        resource_names: Vec::new(),
    }
}

#[test]
fn rules_match_wildcards_and_subresources() {
    assert!(rule(&["*"], &["*"], &["*"]).allows(CAPI_GROUP, "machinedeployments/scale", "patch"));
    assert!(rule(&[CAPI_GROUP], &["*/scale"], &["patch"]).allows(
        CAPI_GROUP,
        "machinedeployments/scale",
        "patch"
    ));
    assert!(
        !rule(&[CAPI_GROUP], &["machinedeployments"], &["patch"]).allows(
            CAPI_GROUP,
            "machinedeployments/scale",
            "patch"
        )
    );
    assert!(!rule(&[""], &["machinedeployments"], &["get"]).allows(
        CAPI_GROUP,
        "machinedeployments",
        "get"
    ));
}

#[test]
fn exact_rules_are_ok_and_extras_are_named() {
    let grants: Vec<Grant> = MANAGEMENT
        .iter()
        .map(|p| Grant {
            rule: rule(&[p.group], &[p.resource], p.verbs),
            namespace: Some("capi".into()),
            via: "RoleBinding r -> Role r".into(),
        })
        .collect();
    let mut id = Identity {
        subject: "User/karpenter".into(),
        grants,
        builtin_roles: Vec::new(),
    };
    let f = judge(&id, &["capi".to_string()]);
    assert_eq!(
        f.iter().map(|f| f.cause).collect::<Vec<_>>(),
        vec![Cause::ManagementAccessOk]
    );
    id.grants.push(Grant {
        rule: rule(&[CAPI_GROUP], &["machines"], &["delete"]),
        namespace: None,
        via: "ClusterRoleBinding x -> ClusterRole x".into(),
    });
    let f = judge(&id, &["capi".to_string()]);
    assert_eq!(f[0].cause, Cause::OverPrivilegedManagementAccess);
    assert_eq!(
        f[0].message,
        "can do more than the autoscaler needs: rights the autoscaler never uses (delete machines.cluster.x-k8s.io) via ClusterRoleBinding x -> ClusterRole x"
    );
    let f = judge(&id, &["other".to_string()]);
    assert_eq!(f[0].cause, Cause::InsufficientManagementAccess);
    assert!(
        f[0].message
            .contains("[list,watch] on machinedeployments (cluster.x-k8s.io) in other"),
        "{}",
        f[0].message
    );
}
fn grants_of(lists: &[&[Permission]], via: &str) -> Vec<Grant> {
    lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|p| Grant {
            rule: rule(&[p.group], &[p.resource], p.verbs),
            namespace: None,
            via: via.to_string(),
        })
        .collect()
}

#[test]
fn reads_beyond_the_lists_are_excess_for_the_management_identity() {
    let mut id = Identity {
        subject: "User/karpenter".into(),
        grants: grants_of(&[MANAGEMENT], "RoleBinding r -> Role r"),
        builtin_roles: Vec::new(),
    };
    // The self-reviews every identity holds are never excess.
    id.grants.push(Grant {
        rule: rule(
            &["authorization.k8s.io"],
            &["selfsubjectrulesreviews"],
            &["create"],
        ),
        namespace: None,
        via: "ClusterRoleBinding system:basic-user -> ClusterRole system:basic-user".into(),
    });
    let ns = ["capi".to_string()];
    assert_eq!(judge(&id, &ns)[0].cause, Cause::ManagementAccessOk);
    // `get` is not among the verbs `run` uses on MachineDeployments (it lists and watches),
    // and ConfigMaps are not read at all.
    id.grants.push(Grant {
        rule: rule(
            &[CAPI_GROUP, ""],
            &["machinedeployments", "configmaps"],
            &["get", "list"],
        ),
        namespace: Some("capi".into()),
        via: "RoleBinding extra -> Role extra".into(),
    });
    let f = judge(&id, &ns);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].cause, Cause::OverPrivilegedManagementAccess);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(
        f[0].message,
        "can do more than the autoscaler needs: rights the autoscaler never uses (get machinedeployments.cluster.x-k8s.io (read), \
         get configmaps.cluster.x-k8s.io (read), list configmaps.cluster.x-k8s.io (read), get machinedeployments.core (read), \
         list machinedeployments.core (read), get configmaps.core (read), list configmaps.core (read)) via RoleBinding extra -> Role extra"
    );
    assert_eq!(
        f[0].remedy,
        "replace its bindings with a Role limited to the cluster's namespace and the rules `kubectl karpenter-capi init` generates, and remove the rules named here"
    );
}

#[test]
fn the_workload_identity_is_judged_against_the_workload_lists() {
    let mut id = Identity {
        subject: "ServiceAccount/karpenter-capi/karpenter-capi".into(),
        grants: grants_of(
            &[WORKLOAD, LEADER_ELECTION],
            "ClusterRoleBinding karpenter-capi -> ClusterRole karpenter-capi",
        ),
        builtin_roles: Vec::new(),
    };
    let f = judge_workload(&id);
    assert_eq!(f.cause, Cause::WorkloadAccessOk);
    assert_eq!(f.severity, Severity::Ok);
    // `run` lists pods and never gets one, and never deletes a Node (Cluster API does).
    id.grants.push(Grant {
        rule: rule(&[""], &["pods"], &["get", "list"]),
        namespace: None,
        via: "ClusterRoleBinding extra -> ClusterRole view-pods".into(),
    });
    id.grants.push(Grant {
        rule: rule(&[""], &["nodes"], &["delete"]),
        namespace: None,
        via: "ClusterRoleBinding extra2 -> ClusterRole reaper".into(),
    });
    let f = judge_workload(&id);
    assert_eq!(f.cause, Cause::OverPrivilegedWorkloadAccess);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        f.message,
        "can do more than the autoscaler needs on the workload cluster: \
         rights the autoscaler never uses (get pods.core (read)) via ClusterRoleBinding extra -> ClusterRole view-pods; \
         rights the autoscaler never uses (delete nodes.core) via ClusterRoleBinding extra2 -> ClusterRole reaper"
    );
    assert_eq!(
        f.remedy,
        "bind it only to the ClusterRole and leader-election Role `kubectl karpenter-capi init` generates, and remove the rules named here"
    );
    // Self-hosted, the same ServiceAccount holds the management Role: its rules are not
    // excess then, but a write on MachineDeployments `run` never makes still is.
    let mut hosted = Identity {
        subject: "ServiceAccount/karpenter-capi/karpenter-capi".into(),
        grants: grants_of(
            &[WORKLOAD, LEADER_ELECTION, MANAGEMENT],
            "ClusterRoleBinding karpenter-capi -> ClusterRole karpenter-capi",
        ),
        builtin_roles: Vec::new(),
    };
    assert_eq!(judge_workload(&hosted).cause, Cause::WorkloadAccessOk);
    hosted.grants.push(Grant {
        rule: rule(&[CAPI_GROUP], &["machinedeployments/scale"], &["update"]),
        namespace: None,
        via: "ClusterRoleBinding extra3 -> ClusterRole scaler".into(),
    });
    assert_eq!(
        judge_workload(&hosted).message,
        "can do more than the autoscaler needs on the workload cluster: rights the autoscaler never uses \
         (update machinedeployments/scale.cluster.x-k8s.io) via ClusterRoleBinding extra3 -> ClusterRole scaler"
    );
}

#[test]
fn workload_identities_are_found_by_name_and_role_and_judged_in_check() {
    let object = |v: Value| RawObject::from_value(v, "test").expect("a valid object");
    let objects = vec![
        object(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karpenter-capi"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch", "delete"]}]
        })),
        object(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "karpenter-capi"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karpenter-capi"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "karpenter-capi", "namespace": "karpenter-capi"},
                {"kind": "ServiceAccount", "name": "node-controller", "namespace": "kube-system"}
            ]
        })),
        // Another ServiceAccount bound to other roles is not the autoscaler's.
        object(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "other"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "other"},
            "subjects": [{"kind": "ServiceAccount", "name": "other", "namespace": "default"}]
        })),
        object(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "other"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["delete"]}]
        })),
    ];
    let snapshot = crate::model::load::build_snapshot(objects).expect("a snapshot");
    let found: Vec<String> = workload_identities_from_rbac(&snapshot)
        .into_iter()
        .map(|i| i.subject)
        .collect();
    // kube-system's node-controller is Kubernetes' own: left out.
    assert_eq!(found, vec!["ServiceAccount/karpenter-capi/karpenter-capi"]);
    let mut out = Vec::new();
    check(&snapshot, AccessSource::RbacObjects, &mut out);
    let workload: Vec<(&str, Cause, &str)> = out
        .iter()
        .filter(|f| f.cause == Cause::OverPrivilegedWorkloadAccess)
        .map(|f| (f.subject.as_str(), f.cause, f.message.as_str()))
        .collect();
    assert_eq!(
        workload,
        vec![(
            "ServiceAccount/karpenter-capi/karpenter-capi",
            Cause::OverPrivilegedWorkloadAccess,
            "can do more than the autoscaler needs on the workload cluster: rights the autoscaler never uses \
             (delete nodes.core) via ClusterRoleBinding karpenter-capi -> ClusterRole karpenter-capi"
        )]
    );
}
