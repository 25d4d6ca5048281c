//! kubectl's conventions beyond `status` (issue 27 item 7): explain's `-n` is the pod's namespace
//! and `--management-namespace` the Cluster API listing's; `simulate` names its fallback to the
//! built-in scenario when a kubeconfig is set; a dump given twice is one note with a count;
//! `doctor` on an empty cluster reports the missing NodePool, members and controller (exit 1).

use crate::common::cli::{run, run_env};
use crate::shared;

#[test]
fn explain_pod_namespace_and_management_namespace_are_two_flags() {
    use karpenter_capi::cli::{Command as Sub, try_parse_from};
    let cli = try_parse_from([
        "kubectl-karpenter_capi",
        "explain",
        "pod",
        "web-6b8f9c7d4-uvwxy",
        "-n",
        "shop",
        "--management-namespace",
        "capi-ovh",
    ])
    .unwrap();
    assert_eq!(cli.global.namespace.as_deref(), Some("shop"));
    let Sub::Explain(args) = cli.command else {
        panic!("not explain");
    };
    assert_eq!(args.management_namespace.as_deref(), Some("capi-ovh"));
    let fixture = format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, stdout, stderr) = run(
        "explain",
        &["pod", "web-6b8f9c7d4-uvwxy", "-n", "shop", "-f", &fixture],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("shop/web-6b8f9c7d4-uvwxy"));
}

#[test]
fn simulate_names_the_built_in_scenario_when_a_kubeconfig_is_set() {
    let (code, _, stderr) = run_env(
        "simulate",
        &[],
        &[("KUBECONFIG", "/nonexistent/kubeconfig")],
    );
    assert_eq!(code, 0);
    assert!(
        stderr.contains(
            "note: simulating the built-in scenario (seed-8x1cpu), not the cluster of KUBECONFIG=/nonexistent/kubeconfig"
        ),
        "{stderr}"
    );
    let (_, _, quiet) = run("simulate", &[]);
    assert!(!quiet.contains("built-in scenario"));
}

#[test]
fn a_dump_given_twice_is_one_note_with_a_count() {
    let seed = shared::fixture("scenarios/seed-3cpu.yaml")
        .display()
        .to_string();
    let (code, _, stderr) = run("simulate", &["-f", &seed, "-f", &seed]);
    assert_eq!(code, 0);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("given twice"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].contains(" objects are given twice in "),
        "{stderr}"
    );
}

#[test]
fn doctor_on_an_empty_cluster_reports_what_is_missing() {
    let dir = std::env::temp_dir().join(format!("conventions-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("empty.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n",
    )
    .unwrap();
    let (code, stdout, _) = run("doctor", &["-f", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    for cause in [
        "NodePoolMissing",
        "NoMemberMachineDeployments",
        "ControllerMissing",
    ] {
        assert!(stdout.contains(cause), "{cause}: {stdout}");
    }
    assert!(stdout.contains("3 error(s)"), "{stdout}");
}
