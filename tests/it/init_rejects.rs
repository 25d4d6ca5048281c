//! `init` refusing bad inputs through the real binary: exit code 2, a message naming the flag or
//! field, nothing written (the happy paths are in `init_cli`).

use crate::init_cli::{bin, scratch};
use crate::support;

/// Runs `init` with the OVH flags minus its flavors, plus `extra`; expects exit 2 with a message
/// starting with `want` and nothing in --output-dir.
pub(crate) fn rejects(name: &str, extra: &[&str], want: &str) {
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
        "required flag(s) --flavor not set; pass them (prompting is off with --yes):\n  --flavor  a flavor NAME:cpu=N,memory=Q,price=P, e.g. c3-8:cpu=4,memory=8G,price=0.10\n",
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
    // Without --image (and no terminal to offer it on), the Deployment runs this version's image.
    let out = bin()
        .args(args)
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deployment =
        std::fs::read_to_string(dir.join("workload/07-deployment-karpenter-capi.yaml")).unwrap();
    assert!(
        deployment.contains(&format!(
            "        image: \"ghcr.io/karpenter-capi/kubectl-karpenter-capi:v{}\"\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{deployment}"
    );
}

#[test]
fn every_missing_input_is_listed_in_one_error() {
    let out = bin().args(["init", "--yes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: required flag(s) --namespace, --cluster-name, --kubernetes-version, --infrastructure-kind, --flavor not set; pass them (prompting is off with --yes):\n\
         \x20 --namespace            namespace of the Cluster API Cluster on the management cluster\n\
         \x20 --cluster-name         name of the Cluster API Cluster\n\
         \x20 --kubernetes-version   Kubernetes version of the new nodes, e.g. v1.36.1\n\
         \x20 --infrastructure-kind  infrastructure provider, one of openstack (OpenStackMachineTemplate), docker (DockerMachineTemplate), dev (DevMachineTemplate), aws (AWSMachineTemplate), azure (AzureMachineTemplate), gcp (GCPMachineTemplate), hetzner (HCloudMachineTemplate), vsphere (VSphereMachineTemplate)\n\
         \x20 --flavor               a flavor NAME:cpu=N,memory=Q,price=P, e.g. c3-8:cpu=4,memory=8G,price=0.10\n"
    );
    // The help marks them.
    let help = bin().args(["init", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--cluster-name",
        "--kubernetes-version",
        "--infrastructure-kind",
        "--flavor",
    ] {
        let line = help
            .lines()
            .skip_while(|l| !l.contains(&format!("{flag} <")))
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(line.contains("[required"), "{flag}: {line}");
    }
    // --image is not required: it defaults to this version's image, which the help names.
    let line = help
        .lines()
        .skip_while(|l| !l.contains("--image <"))
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!line.contains("[required"), "{line}");
    assert!(
        line.contains(&format!(
            "ghcr.io/karpenter-capi/kubectl-karpenter-capi:v{}",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
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
