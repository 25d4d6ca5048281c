//! What the generated bundle means to the rest of the tool: the loader `simulate -f` uses reads
//! back exactly the flavors given, and the RBAC is exactly `kube::permissions`.

use crate::support;

use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::render::{Templates, render};
use karpenter_capi::bundle::{Bundle, flavor};
use karpenter_capi::model::flavor::{Price, PriceSource};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::vocab::capacity as annotations;
use karpenter_capi::vocab::permissions::{self, Permission};
use serde_json::{Value, json};

fn bundle(capi: CapiVersion, kind: &str, flavors: &[&str]) -> Bundle {
    render(&support::input(capi, kind, flavors), &Templates::default()).unwrap()
}

#[test]
fn simulate_reads_back_the_flavors_given() {
    let specs = [
        "c3-4:cpu=2,memory=4G,price=0.05,zone=nova",
        "c3-8:cpu=4,memory=8G,price=0.1,zone=nova",
        "c3-16:cpu=8,memory=16G,price=0.2,zone=nova",
        "g1-16:cpu=7500m,memory=30Gi,price=1.25,gpu=nvidia.com/gpu:2,disk=200Gi,taints=nvidia.com/gpu=true:NoSchedule,maxPods=58,max=2,arch=arm64",
    ];
    for capi in [CapiVersion::V1beta2, CapiVersion::V1beta1] {
        let b = bundle(capi, "openstack", &specs);
        let snap = snapshot_from_sources(&[Source {
            name: "init.yaml".to_string(),
            text: b.to_yaml(),
        }])
        .unwrap();
        assert_eq!(snap.machine_deployments.len(), specs.len());
        assert!(!snap.implicit_nodepool);
        assert_eq!(snap.nodepools.len(), 1);
        for (record, spec) in snap.machine_deployments.iter().zip(specs) {
            let want = flavor::parse_flag(spec).unwrap();
            assert!(record.member, "{spec}: not a member");
            let f = record
                .flavor
                .as_ref()
                .unwrap_or_else(|p| panic!("{spec}: {p:?}"));
            assert_eq!(
                f.machine_deployment,
                format!("capi-ovh/capi-ovh-karpenter-{}", want.name)
            );
            assert_eq!(f.instance_type, want.name);
            assert_eq!(f.capacity.cpu_millis, want.cpu_millis, "{spec}");
            assert_eq!(f.capacity.memory_bytes, want.memory_bytes, "{spec}");
            assert_eq!(f.price, want.price_exact, "{spec}");
            assert_eq!(f.price_source, PriceSource::Annotation(annotations::PRICE));
            assert_eq!(f.capacity.pods, want.max_pods);
            assert_eq!(f.max_size, Some(want.max));
            assert_eq!(f.min_size, Some(0));
            assert_eq!(f.labels.get("kubernetes.io/arch"), Some(&want.arch));
        }
        let gpu = snap.machine_deployments[3].flavor.as_ref().unwrap();
        assert_eq!(gpu.capacity.extended.get("nvidia.com/gpu"), Some(&2));
        assert_eq!(gpu.capacity.ephemeral_storage_bytes, 200 << 30);
        assert_eq!(
            gpu.taints.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            ["nvidia.com/gpu=true:NoSchedule"]
        );
        assert_eq!(gpu.price, Price(1_250_000_000));
        let c34 = snap.machine_deployments[0].flavor.as_ref().unwrap();
        assert_eq!(c34.capacity.cpu_millis, 2000);
        assert_eq!(c34.capacity.memory_bytes, 4_000_000_000);
        assert_eq!(c34.price, Price(50_000_000));
        assert_eq!(c34.zone(), Some("nova"));
    }
}

#[test]
fn nodepool_offers_exactly_the_flavors_and_always_sets_consolidate_after() {
    let b = bundle(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    let np = b.workload.iter().find(|d| d.kind == "NodePool").unwrap();
    assert_eq!(
        np.value["spec"],
        json!({
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c3-4", "c3-8", "c3-16"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["nova"]},
                ],
                "expireAfter": "720h",
            }},
            // 10 of each at most: 10 x (2 + 4 + 8) CPUs, 10 x (4 + 8 + 16) GB.
            "limits": {"cpu": "140", "memory": "280G"},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s"},
        })
    );
    // Without a zone on every flavor, no zone requirement (it would exclude the zoneless ones).
    let b = bundle(
        CapiVersion::V1beta2,
        "docker",
        &[
            "a:cpu=1,memory=1G,price=1,zone=z1",
            "b:cpu=1,memory=1G,price=1",
        ],
    );
    let np = b.workload.iter().find(|d| d.kind == "NodePool").unwrap();
    let keys: Vec<&str> = np
        .value
        .pointer("/spec/template/spec/requirements")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "node.kubernetes.io/instance-type",
            "kubernetes.io/arch",
            "karpenter.sh/capacity-type"
        ]
    );
}

fn rules_of(doc: &Value) -> Vec<Value> {
    doc["rules"].as_array().unwrap().clone()
}

fn expected(list: &[Permission]) -> Vec<Value> {
    list.iter()
        .map(|p| json!({"apiGroups": [p.group], "resources": [p.resource], "verbs": p.verbs}))
        .collect()
}

#[test]
fn rbac_is_exactly_the_permissions_run_uses() {
    for kind in karpenter_capi::bundle::infra::KINDS {
        let b = bundle(CapiVersion::V1beta2, kind.short, &support::OVH_FLAVORS);
        let find = |docs: &[karpenter_capi::bundle::Document], k: &str| {
            docs.iter()
                .filter(|d| d.kind == k)
                .cloned()
                .collect::<Vec<_>>()
        };
        // Management: one namespaced Role, nothing cluster-wide, no wildcard.
        assert!(
            find(&b.management, "ClusterRole").is_empty()
                && find(&b.management, "ClusterRoleBinding").is_empty()
        );
        let roles = find(&b.management, "Role");
        assert_eq!(roles.len(), 1);
        assert_eq!(roles[0].namespace.as_deref(), Some("capi-ovh"));
        let want = expected(permissions::MANAGEMENT);
        assert_eq!(rules_of(&roles[0].value), want, "{}", kind.kind);
        assert!(
            !roles[0].yaml.contains('*'),
            "wildcard in the management Role"
        );
        let binding = &find(&b.management, "RoleBinding")[0].value;
        assert_eq!(
            binding["subjects"],
            // Self-hosted (the default here): the controller's own ServiceAccount is bound too,
            // so it does not get 403 on the management objects.
            json!([
                {"kind": "ServiceAccount", "name": "capi-ovh-karpenter-capi", "namespace": "capi-ovh"},
                {"kind": "ServiceAccount", "name": "karpenter-capi", "namespace": "karpenter-capi"}
            ])
        );
        assert_eq!(
            binding["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "capi-ovh-karpenter-capi"})
        );
        // No long-lived token Secret: `init kubeconfig` mints a short-lived token instead.
        assert!(find(&b.management, "Secret").is_empty());

        // Workload: the ClusterRole is WORKLOAD, the leader-election Role is LEADER_ELECTION.
        let cr = &find(&b.workload, "ClusterRole")[0];
        assert_eq!(rules_of(&cr.value), expected(permissions::WORKLOAD));
        let le = &find(&b.workload, "Role")[0];
        assert_eq!(le.namespace.as_deref(), Some("karpenter-capi"));
        assert_eq!(rules_of(&le.value), expected(permissions::LEADER_ELECTION));
        assert!(!cr.yaml.contains('*') && !le.yaml.contains('*'));
    }
}

#[test]
fn kubeadm_template_registers_the_unregistered_taint_and_node_taints() {
    let mut inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    inp.node_taints = vec!["example.com/pool=karpenter:NoSchedule".to_string()];
    let b = render(&inp, &Templates::default()).unwrap();
    let kct: Vec<_> = b
        .management
        .iter()
        .filter(|d| d.kind == "KubeadmConfigTemplate")
        .collect();
    assert_eq!(
        kct.len(),
        1,
        "flavors agreeing on pods and taints share one template"
    );
    assert_eq!(
        kct[0]
            .value
            .pointer("/spec/template/spec/joinConfiguration/nodeRegistration/taints")
            .unwrap(),
        &json!([
            {"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
            {"key": "example.com/pool", "value": "karpenter", "effect": "NoSchedule"},
        ])
    );
    // The node taints are announced to the schedulers too.
    let md = b
        .management
        .iter()
        .find(|d| d.kind == "MachineDeployment")
        .unwrap();
    assert_eq!(
        md.value["metadata"]["annotations"][annotations::TAINTS],
        "example.com/pool=karpenter:NoSchedule"
    );
}

#[test]
fn deployment_runs_the_controller_with_leader_election() {
    let mut inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    inp.separate_management = true;
    let b = render(&inp, &Templates::default()).unwrap();
    let d = b.workload.iter().find(|d| d.kind == "Deployment").unwrap();
    let c = &d.value.pointer("/spec/template/spec/containers/0").unwrap();
    assert_eq!(c["image"], "ghcr.io/example/kubectl-karpenter-capi:v0.1.0");
    assert_eq!(
        c["args"],
        json!([
            "run",
            "--leader-elect",
            "--leader-election-namespace=karpenter-capi",
            "--namespace=capi-ovh",
            "--cluster-name=capi-ovh",
            "--management-kubeconfig=/etc/karpenter-capi/management/kubeconfig",
            "--log-format=json"
        ])
    );
    assert_eq!(
        d.value
            .pointer("/spec/template/spec/volumes/0/secret/secretName"),
        Some(&json!("karpenter-capi-management-kubeconfig"))
    );
    // Without a kubeconfig to store, no Secret is generated (the note tells how to mint one).
    assert!(!b.workload.iter().any(|d| d.kind == "Secret"));
}

#[test]
fn custom_templates_override_the_built_in_ones() {
    let mut templates = Templates::default();
    templates.set(
        "workload/nodeclass.yaml.j2",
        "apiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata:\n  name: {{ cluster.name | q }}\nspec: {}\n".to_string(),
    );
    let b = render(
        &support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS),
        &templates,
    )
    .unwrap();
    assert!(
        b.workload
            .iter()
            .any(|d| d.kind == "ClusterAPINodeClass" && d.name == "capi-ovh")
    );
    templates.set(
        "workload/nodepool.yaml.j2",
        "{{ nope.nothing }}".to_string(),
    );
    let err = render(
        &support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS),
        &templates,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("template workload/nodepool.yaml.j2: "),
        "{err}"
    );
    templates.set("workload/nodepool.yaml.j2", "kind: [broken\n".to_string());
    let err = render(
        &support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS),
        &templates,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("template workload/nodepool.yaml.j2: document 1 is not valid YAML"),
        "{err}"
    );
}
