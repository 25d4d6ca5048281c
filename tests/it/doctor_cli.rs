//! `doctor` as a user runs it: the JSON shape, exit codes (0 ok or warnings, 1 errors, 2 bad
//! input or no cluster), and errors that name what was tried.

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/doctor/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn doctor(args: &[&str]) -> (i32, String, String) {
    crate::common::cli::run("doctor", args)
}

#[test]
fn seed_stuck_nodeclaim_json_is_pinned() {
    let (code, stdout, _) = doctor(&[
        "-f",
        &fixture("unregistered-taint-missing-node.yaml"),
        "--now",
        "2026-11-30T10:03:00Z",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "an error finding exits 1");
    // Field order is part of the contract: cause, severity, subject, message, remedy.
    let expected = r#"{
  "findings": [
    {
      "cause": "UnregisteredTaintMissing",
      "severity": "error",
      "subject": "NodeClaim/default-mrnnj",
      "message": "node capi-ovh-karpenter-c3-8-7b9c4-x2k8p joined without karpenter.sh/unregistered:NoExecute (taints: [node.cluster.x-k8s.io/uninitialized:NoSchedule]): Karpenter v1.0-v1.2 never adopts it; later versions adopt it with a warning, after pods may already have landed (3m after creation)",
      "remedy": "add {key: karpenter.sh/unregistered, effect: NoExecute} to spec.template.spec.joinConfiguration.nodeRegistration.taints of the KubeadmConfigTemplate of MachineDeployment capi-ovh/capi-ovh-karpenter-c3-8, then `kubectl delete nodeclaim default-mrnnj`"
    }
  ]
}
"#;
    assert_eq!(stdout, expected);
}

#[test]
fn yaml_output_has_the_same_fields() {
    let (code, stdout, _) = doctor(&["-f", &fixture("missing-price.yaml"), "-o", "yaml"]);
    assert_eq!(code, 0, "warnings alone exit 0");
    assert!(stdout.starts_with("findings:\n"), "{stdout}");
    assert!(stdout.contains("cause: MissingPrice\n"), "{stdout}");
    assert!(
        stdout.contains("subject: MachineDeployment/capi-ovh/capi-ovh-karpenter-c3-16\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("for a small pod upstream (no prices, first name wins) would choose c3-16 and cost would choose c3-8"),
        "{stdout}"
    );
}

#[test]
fn healthy_dump_folds_ok_checks_into_one_line() {
    let (code, stdout, stderr) = doctor(&[
        "-f",
        &fixture("healthy.yaml"),
        "--now",
        "2026-11-30T10:30:00Z",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "All ok: Setup and catalog (4), NodeClaims (1), Access (1), Controller (1) (-o wide lists each check)\n\n0 error(s), 0 warning(s), 7 ok\n"
    );
}

#[test]
fn healthy_dump_wide_exits_0_with_areas_and_summary() {
    let (code, stdout, stderr) = doctor(&[
        "-f",
        &fixture("healthy.yaml"),
        "--now",
        "2026-11-30T10:30:00Z",
        "-o",
        "wide",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let headings: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(['├', '└', '│', ' ']) && !l.is_empty())
        .collect();
    assert_eq!(
        headings,
        vec![
            "Setup and catalog",
            "NodeClaims",
            "Access",
            "Controller",
            "0 error(s), 0 warning(s), 7 ok"
        ]
    );
    assert!(
        stdout.contains("└─ ok      NodeClaim/default-mrnnj  NodeClaimInitialized\n"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('\u{1b}'),
        "--color never prints no escapes"
    );
}

#[test]
fn error_findings_print_the_fix_and_exit_1() {
    let (code, stdout, _) = doctor(&["-f", &fixture("unregistered-taint-missing-template.yaml")]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "error   KubeadmConfigTemplate/capi-ovh/capi-ovh-karpenter  UnregisteredTaintMissing"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: add {key: karpenter.sh/unregistered, effect: NoExecute} to spec.template.spec.joinConfiguration.nodeRegistration.taints of KubeadmConfigTemplate/capi-ovh/capi-ovh-karpenter"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("1 error(s), 0 warning(s), 3 ok\n"),
        "{stdout}"
    );
    // Problems first; the ok checks of the same area are a count.
    assert!(!stdout.contains("ok      "), "{stdout}");
}

#[test]
fn timeouts_are_flags() {
    // 6 minutes without a node: a warning with the default 15m, RegistrationTimeout with 5m.
    let f = fixture("node-without-provider-id.yaml");
    let (code, _, _) = doctor(&["-f", &f, "--now", "2026-11-30T10:06:00Z"]);
    assert_eq!(code, 0);
    let (code, stdout, _) = doctor(&[
        "-f",
        &f,
        "--now",
        "2026-11-30T10:06:00Z",
        "--registration-timeout",
        "5m",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("\"cause\": \"RegistrationTimeout\""),
        "{stdout}"
    );
}

#[test]
fn unreadable_dump_exits_2_naming_the_file() {
    let (code, stdout, stderr) = doctor(&["-f", "/nonexistent/dump.yaml"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: /nonexistent/dump.yaml: no such file or directory\n"
    );

    let dir = std::env::temp_dir().join(format!("kkc-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: Node\n---\nkind: [unclosed\n").unwrap();
    let (code, _, stderr) = doctor(&["-f", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "error: {}:4:7: not valid YAML (document 2): unclosed bracket '['",
            bad.display()
        )),
        "{stderr}"
    );
}

#[test]
fn bad_now_is_a_usage_error() {
    let (code, _, stderr) = doctor(&["-f", &fixture("healthy.yaml"), "--now", "yesterday"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--now"), "{stderr}");
}

#[test]
fn no_cluster_reachable_exits_2_naming_what_was_tried() {
    let (code, stdout, stderr) = doctor(&["--kubeconfig", "/nonexistent/kubeconfig"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("error: workload cluster: load kubeconfig (/nonexistent/kubeconfig): "),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: pass --kubeconfig/--context for the workload cluster"),
        "{stderr}"
    );
}
