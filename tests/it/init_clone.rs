//! `init --from-cluster` clones the cluster's own worker templates: read from the in-memory API,
//! compared field by field with the worker's (only the unregistered taint, the kubelet's
//! max-pods and the flavor may differ; the member MachineDeployments copy the worker's placement
//! and deletion fields), validated against the CRD fixtures, and run end to end through the
//! binary against the in-memory API served on localhost.

use crate::common;
use crate::support;

use karpenter_capi::bundle::CapiVersion;
use karpenter_capi::bundle::render::{Document, Templates, render};
use karpenter_capi::kube::init as live;
use serde_json::{Value, json};

/// The seed's worker KubeadmConfigTemplate as a real cluster has it: node name, kubelet
/// arguments, an existing taint, files, pre/post commands, a user with an SSH key, NTP.
fn worker_bootstrap() -> Value {
    json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "capi-ovh-md-0", "namespace": "capi-ovh"},
        "spec": {"template": {"spec": {
            "joinConfiguration": {"nodeRegistration": {
                "name": "{{ local_hostname }}",
                "kubeletExtraArgs": [
                    {"name": "cloud-provider", "value": "external"},
                    {"name": "node-labels", "value": "example.com/pool=general"},
                    {"name": "max-pods", "value": "100"}],
                "taints": [{"key": "example.com/pool", "value": "general", "effect": "PreferNoSchedule"}]}},
            "files": [
                {"path": "/etc/containerd/certs.d/docker.io/hosts.toml", "owner": "root:root", "permissions": "0644",
                 "content": "server = \"https://registry-1.docker.io\"\n[host.\"https://mirror.gcr.io\"]\n  capabilities = [\"pull\", \"resolve\"]\n"},
                {"path": "/etc/sysctl.d/90-kubelet.conf", "content": "vm.overcommit_memory=1\nkernel.panic=10\n"}],
            "preKubeadmCommands": [
                "apt-get update",
                "apt-get install -y containerd kubelet=1.36.1-1.1 kubeadm=1.36.1-1.1",
                "sysctl --system"],
            "postKubeadmCommands": ["echo joined > /var/log/karpenter-joined"],
            "users": [{"name": "capi", "sudo": "ALL=(ALL) NOPASSWD:ALL",
                       "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample ops@example.com"]}],
            "ntp": {"enabled": true, "servers": ["ntp.ovh.net"]}
        }}}
    })
}

/// The seed's worker OpenStackMachineTemplate with its network, ports, security groups, key,
/// root volume, metadata and tags.
fn worker_machine_template() -> Value {
    json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackMachineTemplate",
        "metadata": {"name": "capi-ovh-md-0", "namespace": "capi-ovh"},
        "spec": {"template": {"spec": {
            "flavor": "b3-8",
            "image": {"filter": {"name": "ubuntu-2404-noble"}},
            "identityRef": {"cloudName": "ovh", "name": "capi-ovh-cloud-config", "type": "Secret"},
            "configDrive": true,
            "sshKeyName": "ops-ed25519",
            "ports": [{"network": {"filter": {"name": "capi-ovh-net"}}, "description": "primary"}],
            "securityGroups": [{"filter": {"name": "capi-ovh-workers"}}, {"id": "5b1ee1c4-7a2f-4b8e-9d3c-1f2a3b4c5d6e"}],
            "rootVolume": {"sizeGiB": 50, "type": "high-speed"},
            "serverMetadata": [{"key": "team", "value": "platform"}],
            "tags": ["capi-ovh", "worker"]
        }}}
    })
}

/// The seed's management cluster: the Cluster, its control plane, the worker MachineDeployment
/// and its two templates, and a member MachineDeployment of an earlier init (never cloned).
fn management_objects() -> Vec<Value> {
    let md = |name: &str, member: bool, bootstrap: &str, infra: &str| {
        let mut labels = json!({"cluster.x-k8s.io/cluster-name": "capi-ovh"});
        if member {
            labels["node.cluster.x-k8s.io/karpenter-member"] = json!("");
        }
        let mut md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": name, "namespace": "capi-ovh", "labels": labels},
            "spec": {"clusterName": "capi-ovh", "replicas": 1, "template": {"spec": {"clusterName": "capi-ovh", "version": "v1.36.1",
                "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": bootstrap}},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": infra}}}}});
        if !member {
            // The worker's own placement and deletion settings, which the members copy, and
            // settings they must not copy (deletion order, pause, rollout).
            md["spec"]["deletion"] = json!({"order": "Newest"});
            md["spec"]["paused"] = json!(false);
            md["spec"]["rollout"] = json!({"strategy": {"type": "RollingUpdate"}});
            let spec = &mut md["spec"]["template"]["spec"];
            spec["failureDomain"] = json!("nova");
            spec["minReadySeconds"] = json!(30);
            spec["deletion"] = json!({"nodeDrainTimeoutSeconds": 600,
                "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 20});
            spec["readinessGates"] = json!([{"conditionType": "example.com/NetworkReady"}]);
        }
        md
    };
    vec![
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "capi-ovh", "namespace": "capi-ovh"},
            "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "capi-ovh-cp"}}}),
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
            "metadata": {"name": "capi-ovh-cp", "namespace": "capi-ovh"}, "spec": {"version": "v1.36.1", "replicas": 3}}),
        md(
            "capi-ovh-karpenter-c3-4",
            true,
            "capi-ovh-karpenter",
            "capi-ovh-karpenter-c3-4",
        ),
        md("capi-ovh-md-0", false, "capi-ovh-md-0", "capi-ovh-md-0"),
        worker_bootstrap(),
        worker_machine_template(),
    ]
}

/// The in-memory management cluster, serving the OpenStack machine templates too.
fn management() -> common::FakeApi {
    let mut types = common::all_types();
    types.extend(common::provider_types());
    let api = common::FakeApi::with_types(types);
    for o in management_objects() {
        api.seed(o);
    }
    api
}

/// Every JSON pointer where `a` and `b` differ (leaves, or a whole side that one lacks).
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &path, out),
                    _ => out.push(path),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let path = format!("{at}/{i}");
                match (x.get(i), y.get(i)) {
                    (Some(p), Some(q)) => differences(p, q, &path, out),
                    _ => out.push(path),
                }
            }
        }
        _ if a != b => out.push(at.to_string()),
        _ => {}
    }
}

fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    differences(a, b, "", &mut out);
    out
}

/// The bundle `--from-cluster` renders for the seed's three flavors.
async fn cloned_bundle() -> (karpenter_capi::bundle::Bundle, live::ClusterDefaults) {
    let client = management().client();
    let mut d = live::read_defaults(&client, "capi-ovh", None, None, None)
        .await
        .unwrap();
    let mut inp = support::input(CapiVersion::V1beta2, "openstack", &support::OVH_FLAVORS);
    inp.machine_image = None;
    inp.clone_from = d.clone.take();
    (render(&inp, &Templates::default()).unwrap(), d)
}

fn of_kind<'a>(b: &'a karpenter_capi::bundle::Bundle, kind: &str) -> Vec<&'a Document> {
    b.management.iter().filter(|d| d.kind == kind).collect()
}

#[tokio::test]
async fn clones_differ_from_the_worker_only_in_the_taint_and_the_flavor() {
    let (bundle, defaults) = cloned_bundle().await;
    assert_eq!(
        defaults.infra.map(|k| k.kind),
        Some("OpenStackMachineTemplate")
    );
    // One KubeadmConfigTemplate (the flavors agree on pods and taints), cloned whole.
    let kcts = of_kind(&bundle, "KubeadmConfigTemplate");
    assert_eq!(kcts.len(), 1);
    let kct = kcts[0];
    assert_eq!(kct.name, "capi-ovh-karpenter");
    assert_eq!(kct.api_version, "bootstrap.cluster.x-k8s.io/v1beta2");
    assert_eq!(
        kct.value["metadata"]["annotations"]["karpenter-capi/cloned-from"],
        "capi-ovh-md-0"
    );
    let worker = &worker_bootstrap()["spec"]["template"]["spec"];
    let clone = &kct.value["spec"]["template"]["spec"];
    assert_eq!(
        diff(worker, clone),
        vec![
            "/joinConfiguration/nodeRegistration/kubeletExtraArgs/2/value",
            "/joinConfiguration/nodeRegistration/taints/1"
        ],
        "only the unregistered taint is added, and max-pods is the flavors'"
    );
    // The kubelet holds as many pods as the members' capacity annotation says.
    assert_eq!(
        clone["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"][2],
        json!({"name": "max-pods", "value": "110"})
    );
    assert_eq!(
        clone["joinConfiguration"]["nodeRegistration"]["taints"],
        json!([{"key": "example.com/pool", "value": "general", "effect": "PreferNoSchedule"},
               {"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
    );
    // Multi-line file contents and the templated node name survive the YAML round trip.
    assert_eq!(
        clone["joinConfiguration"]["nodeRegistration"]["name"],
        "{{ local_hostname }}"
    );
    assert!(kct.yaml.contains("preKubeadmCommands:\n"), "{}", kct.yaml);

    // One machine template per flavor: the worker's, with only the flavor changed.
    let templates = of_kind(&bundle, "OpenStackMachineTemplate");
    assert_eq!(
        templates
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        vec![
            "capi-ovh-karpenter-c3-4",
            "capi-ovh-karpenter-c3-8",
            "capi-ovh-karpenter-c3-16"
        ]
    );
    let worker = &worker_machine_template()["spec"]["template"]["spec"];
    for (t, flavor) in templates.iter().zip(["c3-4", "c3-8", "c3-16"]) {
        let clone = &t.value["spec"]["template"]["spec"];
        assert_eq!(diff(worker, clone), vec!["/flavor"], "{}", t.name);
        assert_eq!(clone["flavor"], flavor);
        assert_eq!(t.api_version, "infrastructure.cluster.x-k8s.io/v1beta1");
    }
    // The member MachineDeployments copy the worker's placement and deletion fields: field by
    // field, their Machine template differs only in the references to the clones, and of the
    // worker's own spec nothing but those fields is taken.
    let worker_md = management_objects()
        .into_iter()
        .find(|o| o["metadata"]["name"] == "capi-ovh-md-0")
        .unwrap();
    let mds = of_kind(&bundle, "MachineDeployment");
    assert_eq!(mds.len(), 3);
    for md in &mds {
        assert_eq!(
            diff(
                &worker_md["spec"]["template"]["spec"],
                &md.value["spec"]["template"]["spec"]
            ),
            vec!["/bootstrap/configRef/name", "/infrastructureRef/name"],
            "{}",
            md.yaml
        );
        assert_eq!(
            md.value["spec"]["template"]["spec"]["failureDomain"],
            "nova"
        );
        assert_eq!(md.value["spec"]["rollout"]["strategy"]["type"], "OnDelete");
        assert_eq!(md.value["spec"]["replicas"], 0);
        assert!(md.value["spec"].get("deletion").is_none());
        assert!(md.value["spec"].get("paused").is_none());
    }
    let md = mds[1];
    assert_eq!(
        md.value["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"],
        "capi-ovh-karpenter"
    );
    assert_eq!(
        md.value["spec"]["template"]["spec"]["infrastructureRef"],
        json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "capi-ovh-karpenter-c3-8"})
    );
}

#[tokio::test]
async fn clones_validate_against_the_crd_fixtures() {
    let (bundle, _) = cloned_bundle().await;
    let crds = support::crds();
    let mut checked = 0;
    for doc in bundle.management.iter().filter(|d| {
        [
            "KubeadmConfigTemplate",
            "OpenStackMachineTemplate",
            "MachineDeployment",
        ]
        .contains(&d.kind.as_str())
    }) {
        let schema = support::crd_schema(&crds, &doc.api_version, &doc.kind)
            .unwrap_or_else(|| panic!("no fixture for {} {}", doc.api_version, doc.kind));
        assert_eq!(
            support::validate_crd(&schema, doc),
            Vec::<String>::new(),
            "{}",
            doc.yaml
        );
        checked += 1;
    }
    assert_eq!(checked, 1 + 3 + 3);
    // The check can fail: a field the CRD does not have is caught in a clone too.
    let mut broken = of_kind(&bundle, "KubeadmConfigTemplate")[0].clone();
    broken.value["spec"]["template"]["spec"]["preKubeadmCommand"] = json!(["typo"]);
    let schema = support::crd_schema(&crds, &broken.api_version, &broken.kind).unwrap();
    assert!(!support::validate_crd(&schema, &broken).is_empty());
}

#[tokio::test]
async fn a_provider_init_does_not_know_is_cloned_as_it_is() {
    // A worker on a provider with no table entry: its kind, version and flavor field are read
    // from the template itself.
    let mut types = common::all_types();
    types.push(common::t(
        "infrastructure.cluster.x-k8s.io",
        &["v1alpha1"],
        "ionoscloudmachinetemplates",
        "IonosCloudMachineTemplate",
        true,
        false,
        false,
    ));
    let api = common::FakeApi::with_types(types);
    let mut objects = management_objects();
    objects
        .retain(|o| o["kind"] != "KubeadmControlPlane" && o["kind"] != "OpenStackMachineTemplate");
    for o in &mut objects {
        if o["kind"] == "MachineDeployment" {
            o["spec"]["template"]["spec"]["infrastructureRef"]["kind"] =
                json!("IonosCloudMachineTemplate");
        }
    }
    objects.push(json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "IonosCloudMachineTemplate",
        "metadata": {"name": "capi-ovh-md-0", "namespace": "capi-ovh"},
        "spec": {"template": {"spec": {"serverType": "ENTERPRISE", "cores": 2, "disk": {"image": {"id": "img-1"}}}}}}));
    for o in objects {
        api.seed(o);
    }
    let mut d = live::read_defaults(&api.client(), "capi-ovh", None, None, None)
        .await
        .unwrap();
    assert_eq!(d.infra, None);
    let mut inp = support::input(
        CapiVersion::V1beta2,
        "openstack",
        &support::OVH_FLAVORS[..1],
    );
    inp.infra = &karpenter_capi::bundle::infra::CLONED;
    inp.machine_image = None;
    inp.clone_from = d.clone.take();
    let bundle = render(&inp, &Templates::default()).unwrap();
    let t = of_kind(&bundle, "IonosCloudMachineTemplate")[0];
    assert_eq!(t.api_version, "infrastructure.cluster.x-k8s.io/v1alpha1");
    assert_eq!(
        t.value["spec"]["template"]["spec"],
        json!({"serverType": "c3-4", "cores": 2, "disk": {"image": {"id": "img-1"}}})
    );
    let md = &of_kind(&bundle, "MachineDeployment")[0].value;
    assert_eq!(
        md["spec"]["template"]["spec"]["infrastructureRef"]["kind"],
        "IonosCloudMachineTemplate"
    );
}

#[test]
fn init_from_cluster_through_the_binary_against_the_in_memory_api() {
    let api = management();
    let url = common::serve::serve(&api);
    let dir =
        std::env::temp_dir().join(format!("karpenter-capi-init-clone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mgmt = common::serve::kubeconfig(&dir, "mgmt.kubeconfig", &url);
    let mut cmd = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"));
    cmd.env("KUBECONFIG", "/nonexistent/kubeconfig")
        .args([
            "init",
            "-n",
            "capi-ovh",
            "--from-cluster",
            "--yes",
            "--management-kubeconfig",
        ])
        .arg(&mgmt)
        .args([
            "--image",
            "ghcr.io/example/kubectl-karpenter-capi:v0.1.0",
            "-o",
            "json",
        ]);
    for f in support::OVH_FLAVORS {
        cmd.args(["--flavor", f]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Two clusters: the controller's credential is still to be minted, and init says how.
    assert!(
        stderr.contains("init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("assuming a self-hosted cluster"),
        "{stderr}"
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = list["items"].as_array().unwrap();
    let find = |kind: &str, name: &str| {
        items
            .iter()
            .find(|i| i["kind"] == kind && i["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    let kct = find("KubeadmConfigTemplate", "capi-ovh-karpenter");
    assert_eq!(
        diff(
            &worker_bootstrap()["spec"]["template"]["spec"],
            &kct["spec"]["template"]["spec"]
        ),
        vec![
            "/joinConfiguration/nodeRegistration/kubeletExtraArgs/2/value",
            "/joinConfiguration/nodeRegistration/taints/1"
        ]
    );
    let osmt = find("OpenStackMachineTemplate", "capi-ovh-karpenter-c3-16");
    assert_eq!(
        diff(
            &worker_machine_template()["spec"]["template"]["spec"],
            &osmt["spec"]["template"]["spec"]
        ),
        vec!["/flavor"]
    );
    // Version and cluster name came from the cluster; the controller reads its kubeconfig from
    // the Secret (separate management cluster).
    let md = find("MachineDeployment", "capi-ovh-karpenter-c3-4");
    assert_eq!(md["spec"]["template"]["spec"]["version"], "v1.36.1");
    // The worker's placement and deletion fields, through the binary too.
    assert_eq!(md["spec"]["template"]["spec"]["failureDomain"], "nova");
    assert_eq!(
        md["spec"]["template"]["spec"]["deletion"],
        json!({"nodeDrainTimeoutSeconds": 600, "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 20})
    );
    let deployment = find("Deployment", "karpenter-capi");
    assert!(
        deployment
            .to_string()
            .contains("karpenter-capi-management-kubeconfig")
    );
    // init only read: no write reached the management cluster.
    let methods: Vec<String> = api.requests().iter().map(|r| r.method.clone()).collect();
    assert!(methods.iter().all(|m| m == "GET"), "{methods:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
