//! `init` through the real binary: the seed's OVH setup pinned in snapshots, `--output-dir`
//! layout, and bad inputs (exit code 2, a message naming the flag or field, nothing written).

mod support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn bin() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"));
    // No kubeconfig of the machine running the tests may leak in.
    cmd.env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("NO_COLOR");
    cmd
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("init-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn ovh_setup_v1beta2() {
    let out = bin().args(support::ovh_args()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("ovh_v1beta2", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn ovh_setup_v1beta1() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--capi-version", "v1beta1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("ovh_v1beta1", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn ovh_setup_with_a_separate_management_cluster() {
    let dir = scratch("kubeconfig");
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("controller.kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n",
    )
    .unwrap();
    let out = bin()
        .args(support::ovh_args())
        .arg("--controller-kubeconfig")
        .arg(&kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let workload = &text[text.find("kind: Namespace").unwrap()..];
    insta::assert_snapshot!("ovh_workload_separate_management", workload);
}

#[test]
fn output_dir_layout() {
    let dir = scratch("layout");
    let out = bin()
        .args(support::ovh_args())
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = |sub: &str| {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        list("management"),
        [
            "01-serviceaccount-capi-ovh-karpenter-capi.yaml",
            "02-role-capi-ovh-karpenter-capi.yaml",
            "03-rolebinding-capi-ovh-karpenter-capi.yaml",
            "04-secret-capi-ovh-karpenter-capi-token.yaml",
            "05-kubeadmconfigtemplate-capi-ovh-karpenter.yaml",
            "06-openstackmachinetemplate-capi-ovh-karpenter-c3-4.yaml",
            "07-machinedeployment-capi-ovh-karpenter-c3-4.yaml",
            "08-openstackmachinetemplate-capi-ovh-karpenter-c3-8.yaml",
            "09-machinedeployment-capi-ovh-karpenter-c3-8.yaml",
            "10-openstackmachinetemplate-capi-ovh-karpenter-c3-16.yaml",
            "11-machinedeployment-capi-ovh-karpenter-c3-16.yaml",
        ]
    );
    assert_eq!(
        list("workload"),
        [
            "01-namespace-karpenter-capi.yaml",
            "02-serviceaccount-karpenter-capi.yaml",
            "03-clusterrole-karpenter-capi.yaml",
            "04-clusterrolebinding-karpenter-capi.yaml",
            "05-role-karpenter-capi-leader-election.yaml",
            "06-rolebinding-karpenter-capi-leader-election.yaml",
            "07-deployment-karpenter-capi.yaml",
            "08-clusterapinodeclass-default.yaml",
            "09-nodepool-default.yaml",
        ]
    );
    let md = std::fs::read_to_string(
        dir.join("management/07-machinedeployment-capi-ovh-karpenter-c3-4.yaml"),
    )
    .unwrap();
    assert!(md.starts_with("# target: management cluster (where Cluster API runs), namespace capi-ovh\napiVersion: \"cluster.x-k8s.io/v1beta2\"\n"), "{md}");
    // Concatenating the files gives the stdout output (minus the separators).
    let stdout =
        String::from_utf8(bin().args(support::ovh_args()).output().unwrap().stdout).unwrap();
    assert!(stdout.contains(&format!("---\n{md}")));
    // A second run replaces the bundle in place and leaves no temporary directory behind.
    let again = bin()
        .args(support::ovh_args())
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(again.status.success());
    let mut top: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["management", "workload"]);
}

/// Runs `init` with the OVH flags minus its flavors, plus `extra`; expects exit 2 with a message
/// starting with `want` and nothing in --output-dir.
fn rejects(name: &str, extra: &[&str], want: &str) {
    let dir = scratch(name);
    // The OVH flags without flavors; a flag in `extra` replaces the OVH one.
    let base = support::ovh_args();
    let mut args = Vec::new();
    let mut i = 0;
    while i < base.len() {
        let takes_value =
            base[i].starts_with('-') && base.get(i + 1).is_some_and(|v| !v.starts_with('-'));
        let skip = base[i] == "--flavor" || extra.contains(&base[i].as_str());
        if !skip {
            args.push(base[i].clone());
            if takes_value {
                args.push(base[i + 1].clone());
            }
        }
        i += if takes_value { 2 } else { 1 };
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = bin()
        .args(&args)
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    assert!(
        stderr.starts_with(&format!("error: {want}")),
        "{name}: got {stderr:?}\nwant {want:?}"
    );
    assert!(out.stdout.is_empty(), "{name}: wrote to stdout");
    assert!(!dir.exists(), "{name}: {} was created", dir.display());
}

#[test]
fn invalid_flavor_spec() {
    rejects(
        "spec",
        &["--flavor", "c3-4:cpu=2,memory=4G"],
        "--flavor c3-4:cpu=2,memory=4G: price: missing (cpu, memory and price are required)\n",
    );
    rejects(
        "quantity",
        &["--flavor", "c3-4:cpu=two,memory=4G,price=0.05"],
        "--flavor c3-4:cpu=two,memory=4G,price=0.05: cpu: invalid quantity \"two\"",
    );
    rejects(
        "nocolon",
        &["--flavor", "c3-4"],
        "--flavor c3-4: expected NAME:cpu=N,memory=Q,price=P (e.g. c3-8:cpu=4,memory=8G,price=0.10)\n",
    );
}

#[test]
fn duplicate_flavor_names() {
    rejects(
        "duplicate",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--flavor",
            "c3-4:cpu=4,memory=8G,price=0.1",
        ],
        "duplicate flavor name \"c3-4\": each --flavor/--flavors entry needs its own name\n",
    );
}

#[test]
fn non_dns_1123_names() {
    rejects(
        "flavorname",
        &["--flavor", "C3_4:cpu=2,memory=4G,price=0.05"],
        "--flavor C3_4:cpu=2,memory=4G,price=0.05: name: \"C3_4\" is not a DNS-1123 name",
    );
    rejects(
        "clustername",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--cluster-name",
            "Capi_OVH",
        ],
        "--cluster-name: \"Capi_OVH\" is not a DNS-1123 label",
    );
}

#[test]
fn unknown_infrastructure_kind_lists_the_known_ones() {
    rejects(
        "kind",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--infrastructure-kind",
            "NutanixMachineTemplate",
        ],
        "--infrastructure-kind: unknown infrastructure kind \"NutanixMachineTemplate\"; known kinds: openstack (OpenStackMachineTemplate), docker (DockerMachineTemplate), dev (DevMachineTemplate), aws (AWSMachineTemplate), azure (AzureMachineTemplate), gcp (GCPMachineTemplate), hetzner (HCloudMachineTemplate), vsphere (VSphereMachineTemplate)\n",
    );
}

#[test]
fn unreadable_flavors_file() {
    rejects(
        "missingfile",
        &["--flavors", "/nonexistent/flavors.yaml"],
        "--flavors /nonexistent/flavors.yaml: no such file\n",
    );
    let dir = scratch("badfile-input");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("flavors.yaml");
    std::fs::write(
        &bad,
        "- name: c3-4\n  cpu: 2\n  memory: 4G\n  price: cheap\n",
    )
    .unwrap();
    rejects(
        "badfile",
        &["--flavors", bad.to_str().unwrap()],
        &format!(
            "{}: flavor 1 (c3-4): price: invalid price \"cheap\"",
            bad.display()
        ),
    );
}

#[test]
fn missing_required_input_names_the_flag() {
    rejects(
        "noflavor",
        &[],
        "--flavor is required (a flavor NAME:cpu=N,memory=Q,price=P, e.g. c3-8:cpu=4,memory=8G,price=0.10); pass it (prompting is off with --yes)\n",
    );
    let dir = scratch("noimage");
    let args: Vec<String> = support::ovh_args()
        .into_iter()
        .filter(|a| a != "--yes")
        .collect();
    let pos = args.iter().position(|a| a == "--image").unwrap();
    let args: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != pos && *i != pos + 1)
        .map(|(_, a)| a)
        .collect();
    // stdin is not a terminal here, so init cannot ask either.
    let out = bin()
        .args(args)
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: --image is required (container image of the controller); pass it (stdin is not a terminal, so init cannot ask)\n"
    );
    assert!(!dir.exists());
}

#[test]
fn infrastructure_template_needs_from_cluster() {
    rejects(
        "clone",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--infrastructure-template",
            "capi-ovh-md-0",
        ],
        "--infrastructure-template needs --from-cluster: the template is read from the management cluster\n",
    );
}

#[test]
fn templates_dir_overrides_built_in_templates() {
    let dir = scratch("templates");
    std::fs::create_dir_all(dir.join("workload")).unwrap();
    std::fs::write(
        dir.join("workload/nodeclass.yaml.j2"),
        "apiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata:\n  name: {{ (cluster.name ~ \"-custom\") | q }}\nspec: {}\n",
    )
    .unwrap();
    let out = bin()
        .args(support::ovh_args())
        .arg("--templates")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kind: ClusterAPINodeClass\nmetadata:\n  name: \"capi-ovh-custom\"\n"),
        "{text}"
    );
    // The other templates are still the built-in ones.
    assert!(text.contains("kind: NodePool\n"));
    rejects(
        "notemplates",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--templates",
            "/nonexistent/templates",
        ],
        "--templates /nonexistent/templates: not a directory\n",
    );
    std::fs::write(dir.join("workload/nodepool.yaml.j2"), "{% if %}").unwrap();
    rejects(
        "badtemplate",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--templates",
            dir.to_str().unwrap(),
        ],
        "template workload/nodepool.yaml.j2: syntax error",
    );
}

#[test]
fn apply_and_output_dir_do_not_mix() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--apply", "--output-dir", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("'--apply' cannot be used with '--output-dir <DIR>'")
    );
}

#[test]
fn separate_management_without_a_kubeconfig_mounts_the_secret_and_says_how_to_create_it() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--management-kubeconfig", "/nonexistent/mgmt.kubeconfig"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "        - --management-kubeconfig=/etc/karpenter-capi/management/kubeconfig\n"
        )
    );
    assert!(text.contains("          secretName: \"karpenter-capi-management-kubeconfig\"\n"));
    // The admin kubeconfig given to reach the management cluster is never copied into the bundle.
    assert!(!text.contains("kind: Secret\ntype: Opaque"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "note: the controller reads the management cluster's kubeconfig from Secret karpenter-capi/karpenter-capi-management-kubeconfig; after applying the management bundle, create it with:\n  kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -\n"
    );
}

#[test]
fn init_kubeconfig_needs_a_namespace_and_a_reachable_cluster() {
    let out = bin()
        .args(["init", "kubeconfig", "--cluster-name", "capi-ovh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: --namespace is required: the Cluster API Cluster's namespace on the management cluster\n"
    );
    let out = bin()
        .args([
            "init",
            "kubeconfig",
            "-n",
            "capi-ovh",
            "--cluster-name",
            "capi-ovh",
            "--management-kubeconfig",
            "/nonexistent/mgmt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: management cluster: load kubeconfig (/nonexistent/mgmt): "),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
