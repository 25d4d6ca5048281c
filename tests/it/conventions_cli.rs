//! kubectl's conventions beyond `status` (issue 27 item 7): explain's `-n` is the pod's namespace
//! and `--management-namespace` the Cluster API listing's; `simulate` names its fallback to the
//! built-in scenario when a kubeconfig is set; a dump given twice is one note with a count;
//! `doctor` on an empty cluster reports the missing NodePool, members and controller (exit 1);
//! unknown fields in `-f` inputs are warned about with file and line, as `kubectl --validate=warn`
//! does; `-A`, and simulate's `-l` and `--no-headers`; `-o` completes what each command takes.

use karpenter_capi_testkit::Edit;

use crate::common::cli::{bin, run, run_env};
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

/// The status fixture with `replica` for `replicas` in its first MachineDeployment (line 50) and
/// a misspelt `imagePullPolic` after the image of each of its 11 pods (the first at line 290).
fn misspelt_input() -> (String, String) {
    let fixture = format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&fixture)
        .unwrap()
        .edit_n("  replicas: 1\n", "  replica: 1\n", 1)
        .edit(
            "    image: registry.example/app:1\n",
            "    image: registry.example/app:1\n    imagePullPolic: Always\n",
        );
    let dir = std::env::temp_dir().join(format!("conventions-cli-typo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cluster.yaml");
    std::fs::write(&path, &text).unwrap();
    (path.display().to_string(), text)
}

fn warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("Warning:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn unknown_fields_are_warned_with_file_and_line_and_the_exit_code_is_unchanged() {
    let (path, text) = misspelt_input();
    let clean = format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let now = "--now=2026-11-30T10:30:00Z";
    for cmd in [
        vec!["simulate"],
        vec!["doctor", now],
        vec!["status", now, "--no-compare"],
        vec!["run", "--once", "--dry-run", now],
        vec!["explain", "pod", "shop/web-6b8f9c7d4-uvwxy", now],
    ] {
        let out = bin().args(&cmd).args(["-f", &path]).output().unwrap();
        assert_eq!(
            warnings(&out.stderr),
            [
                format!("Warning: unknown field \"spec.replica\" ({path}:50)"),
                format!(
                    "Warning: unknown field \"spec.containers[0].imagePullPolic\" ({path}:290, 11 times)"
                ),
            ],
            "{cmd:?}"
        );
        let before = bin().args(&cmd).args(["-f", &clean]).output().unwrap();
        assert_eq!(out.status.code(), before.status.code(), "{cmd:?}");
        assert!(warnings(&before.stderr).is_empty(), "{cmd:?}");
    }
    // --validate as kubectl's: strict fails after the same warnings, ignore does not check.
    let strict = bin()
        .args(["simulate", "--validate=strict", "-f", &path])
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(2));
    assert_eq!(warnings(&strict.stderr).len(), 2);
    assert!(
        String::from_utf8_lossy(&strict.stderr)
            .contains("error: 2 unknown field(s) in the input (--validate=strict"),
        "{}",
        String::from_utf8_lossy(&strict.stderr)
    );
    let ignore = bin()
        .args(["simulate", "--validate", "ignore", "-f", &path])
        .output()
        .unwrap();
    assert_eq!(ignore.status.code(), Some(0));
    assert!(warnings(&ignore.stderr).is_empty());
    // Stdin is named as kubectl names it.
    let out = bin()
        .args(["simulate", "-f", "-"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        warnings(&out.stderr)[0],
        "Warning: unknown field \"spec.replica\" (<stdin>:50)"
    );
}

#[test]
fn every_fixture_and_scenario_reads_without_unknown_fields() {
    // The inputs this project ships are written against the schemas the check knows.
    let mut inputs = vec![format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    )];
    for e in std::fs::read_dir(shared::fixture("scenarios")).unwrap() {
        inputs.push(e.unwrap().path().display().to_string());
    }
    for input in inputs {
        let out = bin().args(["simulate", "-f", &input]).output().unwrap();
        assert!(
            warnings(&out.stderr).is_empty(),
            "{input}: {:?}",
            warnings(&out.stderr)
        );
    }
}

#[test]
fn all_namespaces_is_taken_where_it_means_something_and_not_with_a_namespace() {
    let fixture = format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let now = "--now=2026-11-30T10:30:00Z";
    for cmd in [
        vec!["status", "-A", now, "--no-compare"],
        vec!["doctor", "--all-namespaces", now],
        vec!["explain", "pod", "shop/web-6b8f9c7d4-uvwxy", "-A", now],
    ] {
        let with = bin().args(&cmd).args(["-f", &fixture]).output().unwrap();
        let without: Vec<&str> = cmd
            .iter()
            .copied()
            .filter(|a| *a != "-A" && *a != "--all-namespaces")
            .collect();
        let plain = bin()
            .args(&without)
            .args(["-f", &fixture])
            .output()
            .unwrap();
        assert_eq!(with.status.code(), plain.status.code(), "{cmd:?}");
        assert_eq!(
            with.stdout, plain.stdout,
            "{cmd:?}: every namespace is the default"
        );
    }
    for (cmd, flag) in [
        (vec!["status", "-A", "-n", "capi-ovh"], "--namespace"),
        (vec!["doctor", "-A", "-n", "capi-ovh"], "--namespace"),
        (
            vec![
                "explain",
                "pod",
                "p",
                "-A",
                "--management-namespace",
                "capi-ovh",
            ],
            "--management-namespace",
        ),
    ] {
        let out = bin().args(&cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot be used with") && stderr.contains(flag),
            "{stderr}"
        );
    }
}

#[test]
fn simulate_selects_pending_pods_with_l_and_drops_headers() {
    let seed = shared::fixture("scenarios/seed-3cpu.yaml")
        .display()
        .to_string();
    let all = bin().args(["simulate", "-f", &seed]).output().unwrap();
    let all = String::from_utf8_lossy(&all.stdout).to_string();
    assert!(all.starts_with("STRATEGY "), "{all}");
    let headless = bin()
        .args(["simulate", "-f", &seed, "--no-headers"])
        .output()
        .unwrap();
    let headless = String::from_utf8_lossy(&headless.stdout).to_string();
    assert!(!headless.contains("STRATEGY"), "{headless}");
    assert!(headless.starts_with("cost "), "{headless}");
    let timeline = bin()
        .args(["simulate", "--timeline", "--no-headers"])
        .output()
        .unwrap();
    assert_eq!(timeline.status.code(), Some(0));
    let timeline = String::from_utf8_lossy(&timeline.stdout).to_string();
    assert!(!timeline.contains("STRATEGY"), "{timeline}");
    assert!(timeline.contains("\n\nreport (upstream) "), "{timeline}");
    // No pending pod matches: nothing is provisioned by any strategy.
    let none = bin()
        .args(["simulate", "-f", &seed, "-l", "app=nothing-has-this"])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(0));
    let none = String::from_utf8_lossy(&none.stdout).to_string();
    let rows: Vec<Vec<&str>> = none
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().take(5).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["cost", "-", "0", "0", "0.0000"],
            ["karpenter-capi", "-", "0", "0", "0.0000"],
            ["least-waste", "-", "0", "0", "0.0000"]
        ],
        "{none}"
    );
    let bad = bin()
        .args(["simulate", "-f", &seed, "-l", "a b"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).starts_with("error: -l: invalid label selector term")
    );
}
