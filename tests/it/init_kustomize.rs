//! The kustomize bases `init --output-dir` writes, built offline with the real `kubectl kustomize`:
//! the CRD base (its remote URLs pointed at the CRD fixtures in ../shared), the management and
//! workload bases (the controller install: two replicas, PodDisruptionBudget, metrics Service),
//! and the optional ServiceMonitor component through an overlay. Skipped only where `kubectl` is
//! not on PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support;

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("init-kustomize-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `init` with the seed's OVH flags into `dir`; its stderr.
fn init_into(dir: &Path, extra: &[&str]) -> String {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"))
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .args(support::ovh_args())
        .args(extra)
        .arg("--output-dir")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// `kubectl kustomize DIR` (offline: kustomize needs no cluster), parsed into its objects.
fn kustomize(kubectl: &Path, dir: &Path) -> Vec<Value> {
    let home = dir.with_extension("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(kubectl)
        .arg("kustomize")
        .arg(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl kustomize {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

/// (kind, namespace/name) of each object, in the order kustomize emits them.
fn identities(objects: &[Value]) -> Vec<(String, String)> {
    objects
        .iter()
        .map(|o| {
            let s = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or("");
            let name = match s("/metadata/namespace") {
                "" => s("/metadata/name").to_string(),
                ns => format!("{ns}/{}", s("/metadata/name")),
            };
            (s("/kind").to_string(), name)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {:?}", identities(objects)))
}

#[test]
fn the_crd_base_names_the_pinned_upstream_files_and_builds_from_the_fixtures() {
    let Some(kubectl) = find_on_path("kubectl") else {
        eprintln!("skipped: kubectl is not on PATH");
        return;
    };
    let dir = scratch("crds");
    init_into(&dir.join("out"), &[]);
    let generated = std::fs::read_to_string(dir.join("out/crds/kustomization.yaml")).unwrap();
    let parsed: Value = serde_saphyr::from_str(&generated).unwrap();
    assert_eq!(
        parsed,
        json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "metadata": {"name": "karpenter-capi-crds"},
            "resources": [
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml",
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter/v1.14.1/pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter-provider-cluster-api/v0.2.0/pkg/apis/crds/karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml",
            ]
        })
    );
    assert!(
        generated.contains("kubectl apply --server-side -k crds\n"),
        "{generated}"
    );
    // Offline: the same base with each URL replaced by the fixture of that file, copied beside
    // it (kustomize loads no file from outside its root).
    let local = dir.join("crds-local");
    std::fs::create_dir_all(&local).unwrap();
    let mut text = generated.clone();
    for crd in karpenter_capi::bundle::kustomize::CRDS {
        let fixture = support::fixtures().join("crds").join(crd.file_name());
        std::fs::copy(&fixture, local.join(crd.file_name())).unwrap();
        assert!(text.contains(&crd.url()), "{text}");
        text = text.replace(&crd.url(), crd.file_name());
    }
    assert!(!text.contains("https://"), "{text}");
    std::fs::write(local.join("kustomization.yaml"), text).unwrap();
    let built = kustomize(&kubectl, &local);
    assert_eq!(
        identities(&built),
        pairs(&[
            (
                "CustomResourceDefinition",
                "clusterapinodeclasses.karpenter.cluster.x-k8s.io"
            ),
            ("CustomResourceDefinition", "nodeclaims.karpenter.sh"),
            ("CustomResourceDefinition", "nodepools.karpenter.sh"),
        ])
    );
    let served = |name: &str| -> Vec<(String, bool)> {
        built
            .iter()
            .find(|c| c["metadata"]["name"] == name)
            .unwrap()["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().to_string(),
                    v["served"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(served("nodepools.karpenter.sh"), [("v1".to_string(), true)]);
    assert_eq!(
        served("nodeclaims.karpenter.sh"),
        [("v1".to_string(), true)]
    );
    assert_eq!(
        served("clusterapinodeclasses.karpenter.cluster.x-k8s.io"),
        [("v1alpha1".to_string(), true)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_workload_base_installs_the_controller_highly_available() {
    let Some(kubectl) = find_on_path("kubectl") else {
        eprintln!("skipped: kubectl is not on PATH");
        return;
    };
    let dir = scratch("workload");
    let out = dir.join("setup");
    let stderr = init_into(&out, &["--self-hosted"]);
    // init says what to apply, in order, to which cluster (self-hosted here: no MGMT kubeconfig).
    let d = out.display();
    assert!(
        stderr.ends_with(&format!(
            "apply in this order:\n  kubectl apply --server-side -k {d}/crds    # workload cluster: the CRDs\n  \
             kubectl wait --for condition=Established --timeout 60s crd/nodepools.karpenter.sh crd/nodeclaims.karpenter.sh crd/clusterapinodeclasses.karpenter.cluster.x-k8s.io\n  \
             kubectl apply --server-side -k {d}/management    # management cluster: RBAC, templates, MachineDeployments\n  \
             kubectl apply --server-side -k {d}/workload    # workload cluster: RBAC, then the controller and the NodePool\n\n"
        )),
        "{stderr}"
    );
    let built = kustomize(&kubectl, &out.join("workload"));
    // kustomize's order: namespace, RBAC, then the Service, the Deployment and its budget, then
    // the custom resources.
    assert_eq!(
        identities(&built),
        pairs(&[
            ("Namespace", "karpenter-capi"),
            ("ServiceAccount", "karpenter-capi/karpenter-capi"),
            ("Role", "karpenter-capi/karpenter-capi-leader-election"),
            ("ClusterRole", "karpenter-capi"),
            (
                "RoleBinding",
                "karpenter-capi/karpenter-capi-leader-election"
            ),
            ("ClusterRoleBinding", "karpenter-capi"),
            ("Service", "karpenter-capi/karpenter-capi-metrics"),
            ("Deployment", "karpenter-capi/karpenter-capi"),
            ("PodDisruptionBudget", "karpenter-capi/karpenter-capi"),
            ("ClusterAPINodeClass", "default"),
            ("NodePool", "default"),
        ])
    );
    let deployment = find(&built, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(args.contains(&"--leader-elect"), "{args:?}");
    assert_eq!(
        pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        json!({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}]})
    );
    assert_eq!(
        pod["affinity"]["podAntiAffinity"],
        json!({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "karpenter-capi"}}}}]})
    );
    assert!(
        pod["affinity"]["podAntiAffinity"]
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .is_none(),
        "a one-node cluster must still run both replicas"
    );
    let pod_labels = &deployment["spec"]["template"]["metadata"]["labels"];
    let pdb = find(&built, "PodDisruptionBudget");
    assert_eq!(
        pdb["spec"],
        json!({"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow",
               "selector": {"matchLabels": {"app.kubernetes.io/name": "karpenter-capi"}}})
    );
    let service = find(&built, "Service");
    assert_eq!(
        service["spec"],
        json!({"type": "ClusterIP",
               "selector": {"app.kubernetes.io/name": "karpenter-capi"},
               "ports": [{"name": "metrics", "port": 8080, "targetPort": "metrics", "protocol": "TCP"}]})
    );
    // The budget and the Service select the Deployment's pods, on the port it names.
    for selector in [
        &pdb["spec"]["selector"]["matchLabels"],
        &service["spec"]["selector"],
    ] {
        for (k, v) in selector.as_object().unwrap() {
            assert_eq!(&pod_labels[k], v, "{k}");
        }
    }
    assert_eq!(
        pod["containers"][0]["ports"],
        json!([{"name": "metrics", "containerPort": 8080}])
    );

    // The management base: the identity first, then templates and MachineDeployments.
    let management = kustomize(&kubectl, &out.join("management"));
    let kinds: Vec<String> = identities(&management)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "KubeadmConfigTemplate",
            "MachineDeployment",
            "MachineDeployment",
            "MachineDeployment",
            "OpenStackMachineTemplate",
            "OpenStackMachineTemplate",
            "OpenStackMachineTemplate",
        ]
    );
    assert!(
        management
            .iter()
            .all(|o| o["metadata"]["namespace"] == "capi-ovh"),
        "{:?}",
        identities(&management)
    );

    // The ServiceMonitor only through an overlay naming the component.
    assert!(!built.iter().any(|o| o["kind"] == "ServiceMonitor"));
    let overlay = dir.join("overlay");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../setup/workload]\ncomponents: [../setup/workload/monitoring]\n",
    )
    .unwrap();
    let with_monitor = kustomize(&kubectl, &overlay);
    assert_eq!(with_monitor.len(), built.len() + 1);
    let monitor = find(&with_monitor, "ServiceMonitor");
    assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(
        monitor["metadata"]["name"], "karpenter-capi-metrics",
        "{monitor}"
    );
    assert_eq!(
        monitor["spec"],
        json!({"selector": {"matchLabels": {"app.kubernetes.io/name": "karpenter-capi"}},
               "namespaceSelector": {"matchNames": ["karpenter-capi"]},
               "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}]})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_workload_base_of_a_separate_management_cluster_lists_the_secret() {
    let Some(kubectl) = find_on_path("kubectl") else {
        eprintln!("skipped: kubectl is not on PATH");
        return;
    };
    let dir = scratch("secret");
    let kubeconfig = dir.join("controller.kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: [{name: x, context: {cluster: m, user: u}}]\nclusters: [{name: m, cluster: {server: 'https://10.0.0.1:6443'}}]\nusers: [{name: u, user: {token: abc}}]\n",
    )
    .unwrap();
    let out = dir.join("setup");
    init_into(
        &out,
        &["--controller-kubeconfig", kubeconfig.to_str().unwrap()],
    );
    let built = kustomize(&kubectl, &out.join("workload"));
    let secret = find(&built, "Secret");
    assert_eq!(
        secret["metadata"]["name"],
        "karpenter-capi-management-kubeconfig"
    );
    let deployment = find(&built, "Deployment");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
        "karpenter-capi-management-kubeconfig"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The output directory read back whole (`doctor -f DIR -R`): its kustomizations are not
/// Kubernetes objects the checks know, so they are skipped, never an error, and the bundle is
/// healthy but for the node class the controller has not reported Ready yet.
#[test]
fn doctor_reads_the_whole_output_directory_kustomizations_included() {
    let dir = scratch("doctor");
    init_into(&dir, &[]);
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"))
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .args([
            "doctor",
            "--now",
            "2026-11-30T10:30:00Z",
            "-o",
            "json",
            "-R",
            "-f",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "ok")
        .map(|f| {
            (
                f["cause"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        problems,
        [(
            "NodeClassNotReady".to_string(),
            "ClusterAPINodeClass/default".to_string()
        )]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
