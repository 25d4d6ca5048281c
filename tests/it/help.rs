//! `--help` as users see it: commands grouped as clusterctl groups them, every command with
//! examples, and every example a command line the current flags accept.

use assert_cmd::Command;
use karpenter_capi::cli::{self, COMMAND_GROUPS};

fn bin() -> Command {
    Command::cargo_bin("kubectl-karpenter_capi").unwrap()
}

fn visible_subcommands() -> Vec<String> {
    let mut cmd = cli::command();
    cmd.build();
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn help_lists_commands_by_group_with_their_about_text() {
    let out = bin().arg("--help").env("NO_COLOR", "1").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let expected = "\
Setup Commands:
  init       Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling
  uninstall  Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster

Troubleshooting Commands:
  doctor    Check a setup and every stuck NodeClaim; name the cause and the fix
  explain   Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck
  simulate  Show which flavors each strategy would provision for the pending pods, and the cost

Operate Commands:
  status  Show the nodes per NodePool, the claims in flight, why pods are pending and the cost
  run     Run the controller loop in the foreground (one-shot with --once)

Other Commands:
  completion  Print a shell completion script
  version     Print the version and the git commit it was built from
  help        Print this message or the help of the given subcommand(s)

Options:
";
    assert!(
        help.contains(expected),
        "grouped listing not found in:\n{help}"
    );
    assert!(
        !help.contains("\nCommands:"),
        "the flat clap listing is still there:\n{help}"
    );
    assert!(
        help.contains("  -o, --output <OUTPUT>"),
        "options missing:\n{help}"
    );
    let pointer =
        "\nUse \"kubectl karpenter-capi <command> --help\" for more information about a command.\n";
    assert!(help.ends_with(pointer), "{help}");
}

#[test]
fn short_help_is_grouped_too() {
    let out = bin().arg("-h").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("Troubleshooting Commands:\n  doctor "),
        "{help}"
    );
}

#[test]
fn every_visible_subcommand_is_in_exactly_one_group() {
    for name in visible_subcommands() {
        let groups: Vec<&str> = COMMAND_GROUPS
            .iter()
            .filter(|(_, names)| names.contains(&name.as_str()))
            .map(|(g, _)| *g)
            .collect();
        assert_eq!(
            groups.len(),
            1,
            "`{name}` is in groups {groups:?}; add it to exactly one of cli::COMMAND_GROUPS"
        );
    }
}

#[test]
fn every_grouped_name_is_a_subcommand() {
    let visible = visible_subcommands();
    for (group, names) in COMMAND_GROUPS {
        for name in *names {
            assert!(
                visible.iter().any(|v| v == name),
                "{group} lists `{name}`, which is not a visible subcommand"
            );
        }
    }
}

/// The `kubectl karpenter-capi ...` command lines in a subcommand's examples (indented lines;
/// prose is not), continuation lines joined, cut at a pipe, a redirection or the end of a process
/// substitution.
fn example_command_lines(text: &str) -> Vec<Vec<String>> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .filter(|line| line.starts_with("  ") && !line.trim_start().starts_with('#'))
        .filter_map(|line| {
            let start = line.find("kubectl karpenter-capi ")?;
            let rest = &line[start + "kubectl karpenter-capi ".len()..];
            let end = rest.find(['|', '>', ')']).unwrap_or(rest.len());
            Some(rest[..end].split_whitespace().map(str::to_string).collect())
        })
        .collect()
}

#[test]
fn every_subcommand_has_examples_that_parse() {
    let cmd = cli::command();
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        let after = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            after.starts_with("Examples:\n"),
            "`{name}` has no examples in its after_help"
        );
        let lines = example_command_lines(&after);
        assert!(
            !lines.is_empty(),
            "`{name}`'s examples have no `kubectl karpenter-capi` line"
        );
        for words in lines {
            assert_eq!(
                words.first().map(String::as_str),
                Some(name),
                "example {words:?} under `{name}`"
            );
            let argv =
                std::iter::once("kubectl-karpenter_capi".to_string()).chain(words.iter().cloned());
            if let Err(e) = cli::try_parse_from(argv) {
                panic!(
                    "example `kubectl karpenter-capi {}` no longer parses:\n{e}",
                    words.join(" ")
                );
            }
        }
    }
}

#[test]
fn example_lines_are_found_through_pipes_and_continuations() {
    let text = "Examples:\n  kubectl get pods -o yaml | kubectl karpenter-capi simulate -f -\n  \
                source <(kubectl karpenter-capi completion bash)\n  kubectl karpenter-capi init --a \\\n      --b x > f\nProse about `kubectl karpenter-capi <TAB>`.\n";
    assert_eq!(
        example_command_lines(text),
        [
            vec!["simulate", "-f", "-"],
            vec!["completion", "bash"],
            vec!["init", "--a", "--b", "x"]
        ]
    );
}

#[test]
fn completion_prints_the_committed_scripts() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (shell, file) in [
        ("bash", "kubectl-karpenter_capi.bash"),
        ("zsh", "_kubectl-karpenter_capi"),
    ] {
        let out = bin().args(["completion", shell]).output().unwrap();
        assert!(out.status.success());
        let committed = std::fs::read(format!("{root}/completions/{file}")).unwrap();
        assert!(
            out.stdout == committed,
            "`completion {shell}` differs from completions/{file}"
        );
    }
}

#[test]
fn completion_rejects_an_unknown_shell_and_lists_the_valid_ones() {
    let out = bin().args(["completion", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{err}"
    );
}

#[test]
fn version_names_the_commit_and_has_json() {
    let out = bin().arg("version").output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with(&format!(
            "kubectl-karpenter_capi {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );

    let out = bin().args(["version", "-o", "json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    let commit = json["gitCommit"].as_str().unwrap();
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
    assert!(line.contains(&format!("(commit {commit}, ")), "{line}");
}
