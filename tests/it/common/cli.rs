//! The plugin's binary run as a user runs it, offline: one subcommand with its arguments, colors
//! off and no kubeconfig from the environment; exit code, stdout and stderr back.

use assert_cmd::Command;

/// The plugin's binary without `$KUBECONFIG` (tests that need one set it).
pub fn bin() -> Command {
    let mut c = Command::cargo_bin("kubectl-karpenter_capi").unwrap();
    c.env_remove("KUBECONFIG");
    c
}

/// Runs `kubectl-karpenter_capi SUBCOMMAND ARGS… --color never` without `$KUBECONFIG`.
pub fn run(subcommand: &str, args: &[&str]) -> (i32, String, String) {
    run_env(subcommand, args, &[])
}

/// [`run`] with environment variables set.
pub fn run_env(subcommand: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = bin();
    c.arg(subcommand).args(args).args(["--color", "never"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
