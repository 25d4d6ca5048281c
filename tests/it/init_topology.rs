//! Where Cluster API runs is asked, not assumed: a terminal asks whether the management cluster
//! is separate (then for its kubeconfig), `--management-kubeconfig` and `--self-hosted` answer
//! it, and a run that cannot ask says plainly that it assumes a self-hosted cluster.

use crate::init_cli::in_terminal;
use crate::support;

use assert_cmd::Command;

fn bin() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"));
    cmd.env("KUBECONFIG", "/nonexistent/kubeconfig");
    cmd
}

const ASSUMED: &str = "note: no --management-kubeconfig: assuming a self-hosted cluster (Cluster API runs in the workload cluster). If Cluster API runs in a separate management cluster, pass --management-kubeconfig MGMT.kubeconfig; pass --self-hosted to confirm and silence this note\n";

/// The Secret the controller reads the management kubeconfig from: only in a two-cluster bundle.
const SECRET: &str = "karpenter-capi-management-kubeconfig";

#[test]
fn without_a_terminal_init_says_it_assumes_a_self_hosted_cluster() {
    let out = bin().args(support::ovh_args()).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), ASSUMED);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    // Saying so silences the note; the bundle is the same.
    let own = bin()
        .args(support::ovh_args())
        .arg("--self-hosted")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&own.stderr), "");
    assert_eq!(own.stdout, out.stdout);
    // Stdin that is not a terminal never prompts either, even without --yes.
    let args: Vec<String> = support::ovh_args()
        .into_iter()
        .filter(|a| a != "--yes")
        .collect();
    let piped = bin().args(&args).write_stdin("y\n").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stderr), ASSUMED);
    assert_eq!(piped.stdout, out.stdout);
}

#[test]
fn self_hosted_contradicts_a_management_kubeconfig() {
    let out = bin()
        .args(support::ovh_args())
        .args([
            "--self-hosted",
            "--management-kubeconfig",
            "mgmt.kubeconfig",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("error: --self-hosted contradicts --management-kubeconfig"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_management_kubeconfig_makes_it_the_two_cluster_topology() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--management-kubeconfig", "/nonexistent/mgmt.kubeconfig"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("assuming"), "{stderr}");
    assert!(stderr.contains("kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(SECRET));
}

/// The OVH flags without --yes, as JSON.
fn interactive_args() -> Vec<String> {
    let mut args: Vec<String> = support::ovh_args()
        .into_iter()
        .filter(|a| a != "--yes")
        .collect();
    args.extend(["-o".to_string(), "json".to_string()]);
    args
}

#[test]
fn a_terminal_asks_for_the_topology_then_the_management_kubeconfig() {
    // Separate, kubeconfig left for later: the two-cluster bundle and how to mint the credential.
    let shown = in_terminal(
        &interactive_args(),
        &[
            ("separate management cluster", "y"),
            ("kubeconfig of the management cluster", "/nonexistent/mgmt"),
            ("no such file", ""),
        ],
    );
    assert!(shown.contains("(--management-kubeconfig) [Y/n]"), "{shown}");
    assert!(shown.contains(SECRET), "{shown}");
    assert!(shown.contains("init kubeconfig -n capi-ovh"), "{shown}");
    assert!(!shown.contains("assuming a self-hosted"), "{shown}");
    // Self-hosted, answered: no Secret, no note.
    let shown = in_terminal(&interactive_args(), &[("separate management cluster", "n")]);
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!shown.contains("init kubeconfig"), "{shown}");
    assert!(!shown.contains("assuming a self-hosted"), "{shown}");
    assert!(shown.contains("\"kind\": \"NodePool\""), "{shown}");
}
