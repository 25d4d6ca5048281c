//! Every document `init` generates is valid: CRD kinds against the upstream CRD fixtures' schema
//! of the exact apiVersion generated, built-in kinds strictly through k8s-openapi types, for
//! v1beta2 and v1beta1 and every infrastructure provider.

use crate::support;

use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::infra::{FlavorField, KINDS};
use karpenter_capi::bundle::render::{Templates, render};
use serde_json::Value;
use support::{crd_schema, crds, has_crd, input, validate_builtin, validate_crd};

/// Flavors exercising every optional field: GPUs, disk, taints, zones, arch, spot, maxPods.
const RICH_FLAVORS: [&str; 3] = [
    "c3-4:cpu=2,memory=4G,price=0.05,zone=nova",
    "g1-16:cpu=8,memory=16Gi,price=1.2,zone=nova,gpu=nvidia.com/gpu:1,disk=100Gi,taints=nvidia.com/gpu=true:NoSchedule,maxPods=58,max=3",
    "a1-8:cpu=4,memory=8Gi,price=0.08,zone=nova,arch=arm64,capacityType=spot",
];

#[test]
fn every_document_validates_for_every_provider_and_version() {
    let crds = crds();
    let mut checked_crd = 0;
    let mut checked_builtin = 0;
    let mut checked_structure = 0;
    for capi in [CapiVersion::V1beta2, CapiVersion::V1beta1] {
        for kind in KINDS {
            let mut inp = input(capi, kind.short, &RICH_FLAVORS);
            inp.node_taints = vec!["example.com/dedicated=karpenter:NoSchedule".to_string()];
            inp.separate_management = true;
            inp.management_kubeconfig = Some(
                karpenter_capi::bundle::kubeconfig::ControllerCredential::from_kubeconfig(
                    "apiVersion: v1\nkind: Config\n".to_string(),
                ),
            );
            let bundle = render(&inp, &Templates::default()).unwrap();
            for doc in bundle.management.iter().chain(&bundle.workload) {
                let what = format!("{capi:?} {}: {} {}", kind.short, doc.kind, doc.name);
                if let Some(result) = validate_builtin(doc) {
                    result.unwrap_or_else(|e| panic!("{what}: {e}"));
                    checked_builtin += 1;
                } else if let Some(schema) = crd_schema(&crds, &doc.api_version, &doc.kind) {
                    let errors = validate_crd(&schema, doc);
                    assert!(
                        errors.is_empty(),
                        "{what}:\n{}\n{}",
                        errors.join("\n"),
                        doc.yaml
                    );
                    checked_crd += 1;
                } else {
                    assert!(
                        !has_crd(&crds, &doc.api_version, &doc.kind),
                        "{what}: a fixture defines {} but not version {}",
                        doc.kind,
                        doc.api_version
                    );
                    // Providers without a CRD fixture: check the structure we promise.
                    assert_eq!(
                        doc.kind, kind.kind,
                        "{what}: unexpected kind without a fixture"
                    );
                    assert_eq!(doc.api_version, kind.api_version(capi));
                    assert_eq!(doc.namespace.as_deref(), Some("capi-ovh"));
                    let spec = doc
                        .value
                        .pointer("/spec/template/spec")
                        .unwrap_or_else(|| panic!("{what}: no spec.template.spec"));
                    let name = doc.name.strip_prefix("capi-ovh-karpenter-").unwrap();
                    match kind.flavor_field {
                        FlavorField::InstanceType(field) => {
                            assert_eq!(spec.get(field), Some(&Value::from(name)), "{what}")
                        }
                        FlavorField::CpuMemory => {
                            let (cpus, mib) = match name {
                                "c3-4" => (2, 3815),
                                "g1-16" => (8, 16384),
                                _ => (4, 8192),
                            };
                            assert_eq!(spec.get("numCPUs"), Some(&Value::from(cpus)), "{what}");
                            assert_eq!(spec.get("memoryMiB"), Some(&Value::from(mib)), "{what}");
                        }
                        FlavorField::None => {}
                    }
                    checked_structure += 1;
                }
            }
        }
    }
    // 2 versions x 8 providers; per render: 3 management built-ins (RBAC) and 10 workload
    // built-ins (namespace, 5 RBAC, Secret, Deployment, PodDisruptionBudget, Service);
    // 3 KubeadmConfigTemplates (the flavors differ in taints and maxPods), 3 machine
    // templates, 3 MachineDeployments, the node class and the NodePool.
    assert_eq!(checked_builtin, 2 * 8 * (3 + 10));
    assert_eq!(checked_crd + checked_structure, 2 * 8 * (3 + 3 + 3 + 2));
    // OpenStack, Docker and Dev have CRD fixtures: their machine templates are schema-checked.
    assert_eq!(checked_structure, 2 * 5 * 3);
}

#[test]
fn the_validator_catches_mistakes() {
    // A schema check that cannot fail proves nothing: break a MachineDeployment and a NodePool.
    let crds = crds();
    let bundle = render(
        &input(CapiVersion::V1beta2, "openstack", &RICH_FLAVORS[..1]),
        &Templates::default(),
    )
    .unwrap();
    let md = bundle
        .management
        .iter()
        .find(|d| d.kind == "MachineDeployment")
        .unwrap();
    let schema = crd_schema(&crds, &md.api_version, &md.kind).unwrap();
    let mut broken = md.clone();
    // A v1beta1-style reference in a v1beta2 object.
    broken.value["spec"]["template"]["spec"]["infrastructureRef"]["apiVersion"] =
        Value::from("x/v1");
    let errors = validate_crd(&schema, &broken);
    assert!(
        errors.iter().any(|e| e.contains("apiVersion")),
        "{errors:?}"
    );
    let np = bundle
        .workload
        .iter()
        .find(|d| d.kind == "NodePool")
        .unwrap();
    let schema = crd_schema(&crds, &np.api_version, &np.kind).unwrap();
    let mut broken = np.clone();
    broken.value["spec"]["disruption"]["consolidateAfter"] = Value::from("soon");
    assert!(!validate_crd(&schema, &broken).is_empty());
    let sa = bundle
        .management
        .iter()
        .find(|d| d.kind == "ServiceAccount")
        .unwrap();
    let mut broken = sa.clone();
    broken.value["spec"] = Value::from("unknown");
    assert!(validate_builtin(&broken).unwrap().is_err());
}

#[test]
fn v1beta1_and_v1beta2_shapes_differ_where_the_contract_says() {
    let v2 = render(
        &input(CapiVersion::V1beta2, "docker", &RICH_FLAVORS[..1]),
        &Templates::default(),
    )
    .unwrap();
    let v1 = render(
        &input(CapiVersion::V1beta1, "docker", &RICH_FLAVORS[..1]),
        &Templates::default(),
    )
    .unwrap();
    let find = |b: &karpenter_capi::bundle::Bundle, kind: &str| {
        b.management
            .iter()
            .find(|d| d.kind == kind)
            .unwrap()
            .value
            .clone()
    };
    let kct2 = find(&v2, "KubeadmConfigTemplate");
    let kct1 = find(&v1, "KubeadmConfigTemplate");
    assert_eq!(
        kct2.pointer("/spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs")
            .unwrap(),
        &serde_json::json!([{"name": "max-pods", "value": "110"}])
    );
    assert_eq!(
        kct1.pointer("/spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs")
            .unwrap(),
        &serde_json::json!({"max-pods": "110"})
    );
    let md2 = find(&v2, "MachineDeployment");
    let md1 = find(&v1, "MachineDeployment");
    assert_eq!(
        md2.pointer("/spec/template/spec/infrastructureRef")
            .unwrap(),
        &serde_json::json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "capi-ovh-karpenter-c3-4"})
    );
    assert_eq!(
        md1.pointer("/spec/template/spec/infrastructureRef")
            .unwrap(),
        &serde_json::json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "capi-ovh-karpenter-c3-4"})
    );
    assert_eq!(
        md1.pointer("/spec/template/spec/bootstrap/configRef")
            .unwrap(),
        &serde_json::json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "capi-ovh-karpenter"})
    );
    for md in [&md1, &md2] {
        assert_eq!(md.pointer("/spec/replicas"), Some(&Value::from(0)));
        assert_eq!(
            md.pointer("/metadata/labels/node.cluster.x-k8s.io~1karpenter-member"),
            Some(&Value::from(""))
        );
        let template_labels = md
            .pointer("/spec/template/metadata/labels")
            .unwrap()
            .as_object()
            .unwrap();
        assert!(
            !template_labels.contains_key("node.cluster.x-k8s.io/karpenter-member"),
            "membership label must stay off the template"
        );
    }
}
