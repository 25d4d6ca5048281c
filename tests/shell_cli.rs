//! `run` through the real binary: replaying a dump with no cluster, flag combinations that
//! cannot work, and clusters that cannot be reached (exit 2 with the cluster named).

use assert_cmd::Command;
use serde_json::Value;

const SEED: &str = "../shared/fixtures/scenarios/seed-3cpu.yaml";

fn bin() -> Command {
    let mut c = Command::cargo_bin("kubectl-karpenter_capi").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1");
    c
}

fn seed() -> String {
    let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SEED);
    if local.exists() {
        local.display().to_string()
    } else {
        "/work/shared/fixtures/scenarios/seed-3cpu.yaml".to_string()
    }
}

fn kubeconfig(name: &str, server: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("karpenter-capi-{name}-{}.yaml", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{server}\"}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\n\
             contexts: [{{name: ctx, context: {{cluster: c, user: u}}}}]\ncurrent-context: ctx\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn replays_a_dump_as_of_its_time_without_a_cluster() {
    let out = bin()
        .args([
            "run",
            "--once",
            "--dry-run",
            "-f",
            &seed(),
            "--now",
            "2026-11-30T10:00:00Z",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions: Vec<(&str, &str)> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["action"].as_str().unwrap(), a["target"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        vec![
            ("setNodeClassReady", "ClusterAPINodeClass/default"),
            ("createNodeClaim", "NodeClaim/default-"),
            (
                "scaleMachineDeployment",
                "MachineDeployment/capi-ovh/capi-ovh-karpenter-c3-8"
            ),
        ]
    );
    assert_eq!(plan["actions"][1]["instanceType"], "c3-8");
    assert_eq!(plan["actions"][2]["replicas"], 1);
    assert_eq!(plan["actions"][2]["from"], 0);
}

#[test]
fn files_without_once_dry_run_is_a_usage_error() {
    let out = bin().args(["run", "-f", &seed()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: -f plans from files and has no cluster to write to: use it with --once --dry-run, e.g. \
         `kubectl karpenter-capi run --once --dry-run -f dump.yaml`\n"
    );
    let out = bin()
        .args(["run", "--once", "-f", &seed()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn now_without_files_is_a_usage_error() {
    let out = bin()
        .args([
            "run",
            "--once",
            "--dry-run",
            "--now",
            "2026-11-30T10:00:00Z",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: --now evaluates a dump as of a past time and needs -f; a live pass uses the current time\n"
    );
}

#[test]
fn unreachable_workload_cluster_exits_2_naming_it() {
    let cfg = kubeconfig("down", "http://127.0.0.1:9");
    let out = bin()
        .args(["run", "--once", "--dry-run", "--kubeconfig"])
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: workload cluster: list "), "{err}");
    assert!(err.ends_with("  hint: the workload cluster is unreachable: check the server address, network and --context\n"), "{err}");
    assert!(out.stdout.is_empty(), "no plan without a snapshot");
}

#[test]
fn unreadable_management_kubeconfig_names_the_management_cluster() {
    let cfg = kubeconfig("ok", "http://127.0.0.1:9");
    let out = bin()
        .args(["run", "--once", "--kubeconfig"])
        .arg(&cfg)
        .args(["--management-kubeconfig", "/nonexistent/mgmt.kubeconfig"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "error: management cluster: load kubeconfig (/nonexistent/mgmt.kubeconfig): "
        ),
        "{err}"
    );
    assert!(
        err.ends_with(
            "hint: pass --management-kubeconfig/--management-context for the management cluster\n"
        ),
        "{err}"
    );
}

#[test]
fn bad_metrics_address_fails_before_watching() {
    let cfg = kubeconfig("metrics", "http://127.0.0.1:9");
    let out = bin()
        .args(["run", "--metrics-bind-address", "localhost"])
        .arg("--kubeconfig")
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: --metrics-bind-address \"localhost\" is not an address:port (invalid socket address syntax), e.g. 0.0.0.0:8080\n"
    );
}
