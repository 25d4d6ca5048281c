//! `run` through the real binary: replaying a dump with no cluster, flag combinations that
//! cannot work, and clusters that cannot be reached (exit 2 with the cluster named).

use crate::common::cli::run;
use crate::shared;

use assert_cmd::Command;
use serde_json::Value;

const SEED: &str = "scenarios/seed-3cpu.yaml";

fn bin() -> Command {
    let mut c = Command::cargo_bin("kubectl-karpenter_capi").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1");
    c
}

fn seed() -> String {
    shared::fixture(SEED).display().to_string()
}

/// A kubeconfig file for `server` (context `ctx`); its path.
fn kubeconfig(name: &str, server: &str) -> String {
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
    path.display().to_string()
}

#[test]
fn replays_a_dump_as_of_its_time_without_a_cluster() {
    let (code, stdout, stderr) = run(
        "run",
        &[
            "--once",
            "--dry-run",
            "-f",
            &seed(),
            "--now",
            "2026-11-30T10:00:00Z",
            "-o",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap();
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
    let (code, _, stderr) = run("run", &["-f", &seed()]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: -f plans from files and has no cluster to write to: use it with --once --dry-run, e.g. \
         `kubectl karpenter-capi run --once --dry-run -f dump.yaml`\n"
    );
    let (code, _, _) = run("run", &["--once", "-f", &seed()]);
    assert_eq!(code, 2);
}

#[test]
fn now_without_files_is_a_usage_error() {
    let (code, _, stderr) = run(
        "run",
        &["--once", "--dry-run", "--now", "2026-11-30T10:00:00Z"],
    );
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: --now evaluates a dump as of a past time and needs -f; a live pass uses the current time\n"
    );
}

#[test]
fn unreachable_workload_cluster_exits_2_naming_it() {
    let cfg = kubeconfig("down", "http://127.0.0.1:9");
    let (code, out, err) = run("run", &["--once", "--dry-run", "--kubeconfig", &cfg]);
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("error: workload cluster: list "), "{err}");
    assert!(err.ends_with("  hint: the workload cluster is unreachable: check the server address, network and --context\n"), "{err}");
    assert!(out.is_empty(), "no plan without a snapshot");
}

#[test]
fn unreadable_management_kubeconfig_names_the_management_cluster() {
    let cfg = kubeconfig("ok", "http://127.0.0.1:9");
    let (code, _, err) = run(
        "run",
        &[
            "--once",
            "--kubeconfig",
            &cfg,
            "--management-kubeconfig",
            "/nonexistent/mgmt.kubeconfig",
        ],
    );
    assert_eq!(code, 2, "{err}");
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
    let (code, _, err) = run(
        "run",
        &["--metrics-bind-address", "localhost", "--kubeconfig", &cfg],
    );
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: --metrics-bind-address \"localhost\" is not an address:port (invalid socket address syntax), e.g. 0.0.0.0:8080\n"
    );
}

#[test]
fn refused_connection_names_the_server_and_the_context() {
    let cfg = kubeconfig("refused", "http://127.0.0.1:9");
    let (code, _, err) = run("run", &["--once", "--dry-run", "--kubeconfig", &cfg]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(": the connection to the server 127.0.0.1:9 (context ctx) was refused: "),
        "{err}"
    );
}

#[test]
fn verbosity_6_logs_api_requests_as_kubectl_does() {
    let cfg = kubeconfig("verbose", "http://127.0.0.1:9");
    let run = |verbosity: &str| {
        let out = bin()
            .args([
                "run",
                "--once",
                "--dry-run",
                "-v",
                verbosity,
                "--kubeconfig",
            ])
            .arg(&cfg)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = run("6");
    // kubectl -v 6: `GET https://host/api/v1/pods 200 OK in 12 milliseconds`; a refused
    // connection has no status, so the line says it failed and why.
    let logged: Vec<&str> = err.lines().filter(|l| l.contains(" TRACE GET ")).collect();
    assert!(!logged.is_empty(), "no request logged:\n{err}");
    for line in &logged {
        let request = &line[line
            .find("GET http://127.0.0.1:9/")
            .unwrap_or_else(|| panic!("not a GET request line: {line}"))..];
        let (url, rest) = request["GET ".len()..]
            .split_once(' ')
            .unwrap_or_else(|| panic!("no URL end: {line}"));
        assert!(
            (url.starts_with("http://127.0.0.1:9/api/v1/")
                || url.starts_with("http://127.0.0.1:9/apis/"))
                && url.contains("?limit=500")
                && !url.contains("?&"),
            "{line}"
        );
        let (took, cause) = rest
            .strip_prefix("failed in ")
            .and_then(|r| r.split_once(" milliseconds: "))
            .unwrap_or_else(|| panic!("not `failed in N milliseconds: cause`: {line}"));
        assert!(took.parse::<u64>().is_ok(), "{line}");
        assert!(
            cause.to_ascii_lowercase().contains("connection refused") || cause.contains("Connect"),
            "{line}"
        );
    }
    // Below 6, no request lines.
    let quiet = run("4");
    assert!(
        !quiet.lines().any(|l| l.contains("GET http://127.0.0.1:9/")),
        "{quiet}"
    );
}

#[test]
fn request_timeout_gives_up_on_a_silent_server_naming_it() {
    // A server that accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let cfg = kubeconfig("silent", &format!("http://127.0.0.1:{port}"));
    let started = std::time::Instant::now();
    let out = bin()
        .args([
            "run",
            "--once",
            "--dry-run",
            "--request-timeout",
            "1s",
            "--kubeconfig",
        ])
        .arg(&cfg)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            ": the server 127.0.0.1:{port} (context ctx) did not answer within 1s (--request-timeout): "
        )),
        "{err}"
    );
    // Without the flag the client waits for minutes; with it, one request's worth (plus the
    // start-up of a debug binary on a busy machine).
    assert!(elapsed < std::time::Duration::from_secs(60), "{elapsed:?}");
}

#[test]
fn dry_run_values() {
    // --dry-run alone is client, as kubectl's.
    let (code, _, stderr) = run(
        "run",
        &[
            "--once",
            "--dry-run",
            "-f",
            &seed(),
            "--now",
            "2026-11-30T10:00:00Z",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(
        "run",
        &[
            "--once",
            "--dry-run=client",
            "-f",
            &seed(),
            "--now",
            "2026-11-30T10:00:00Z",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    // none writes, so -f (no cluster) is refused.
    let (code, _, stderr) = run("run", &["--once", "--dry-run=none", "-f", &seed()]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: -f plans from files"));
    // server is refused with the reason.
    let (code, _, stderr) = run("run", &["--once", "--dry-run=server", "-f", &seed()]);
    assert_eq!(code, 2);
    assert!(
        stderr
            .starts_with("error: run does not support --dry-run=server: the writes of a pass depend on each other"),
        "{}",
        stderr
    );
    // Anything else is a usage error listing the values.
    let (code, _, stderr) = run("run", &["--once", "--dry-run=maybe"]);
    assert_eq!(code, 2);
    let err = stderr;
    assert!(
        err.contains("[possible values: none, client, server]"),
        "{err}"
    );
}

#[test]
fn replaying_a_dump_without_now_warns() {
    let (code, _, stderr) = run("run", &["--once", "--dry-run", "-f", &seed()]);
    let err = stderr;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("pass --now with the time the dump was taken"),
        "{err}"
    );
}

#[test]
fn commands_without_a_cluster_refuse_cluster_flags() {
    let (code, _, stderr) = run("completion", &["bash", "--kubeconfig", "x", "-n", "y"]);
    assert_eq!(code, 2);
    let err = stderr;
    assert!(
        err.starts_with(
            "error: `completion` does not talk to a cluster and takes no --kubeconfig, --namespace"
        ),
        "{err}"
    );
    let (code, _, _) = run("version", &["--context", "x"]);
    assert_eq!(code, 2);
    // -o stays meaningful for version.
    let (code, _, _) = run("version", &["-o", "json"]);
    assert_eq!(code, 0);
}

#[test]
fn no_arguments_print_the_help_on_stdout_and_succeed() {
    let out = bin().output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Usage: kubectl karpenter-capi"), "{help}");
    // A subcommand's help lists the global flags under their own heading, as kubectl does.
    let out = bin().args(["simulate", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let global = help.split("Global Options:").nth(1).unwrap_or_default();
    assert!(global.contains("--kubeconfig <PATH>"), "{help}");
    assert!(global.contains("--request-timeout <DURATION>"), "{help}");
    assert!(
        !help
            .split("Global Options:")
            .next()
            .unwrap()
            .contains("--kubeconfig"),
        "{help}"
    );
}

#[test]
fn version_flag_names_the_commit() {
    let out = bin().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!(
            "kubectl-karpenter_capi {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
}
