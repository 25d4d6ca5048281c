//! The plugin's binary run as a user runs it, offline: one subcommand with its arguments, colors
//! off and no kubeconfig from the environment; exit code, stdout and stderr back.

use assert_cmd::Command;

/// Runs `kubectl-karpenter_capi SUBCOMMAND ARGS… --color never` without `$KUBECONFIG`.
pub fn run(subcommand: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .arg(subcommand)
        .args(args)
        .args(["--color", "never"])
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
