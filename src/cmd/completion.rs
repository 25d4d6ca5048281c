//! `completion`: shell completion scripts generated from the clap definitions, for the
//! `kubectl-karpenter_capi` executable. The same scripts are committed under `completions/`
//! (kept in sync by `tests/it/generated.rs`). Completion of `kubectl karpenter-capi ...` through
//! kubectl itself is [`crate::complete`]'s job.

use clap_complete::{Generator, Shell};

use crate::cli::CompletionArgs;
use crate::error::{Outcome, Result};
use crate::render::Printer;

/// The executable the scripts complete: the name on PATH, not the `kubectl karpenter-capi`
/// spelling, since a shell completes the first word of a command line.
pub const BIN_NAME: &str = "kubectl-karpenter_capi";

/// Every shell `completion` supports, in the order the files are listed.
pub const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::PowerShell,
    Shell::Elvish,
];

/// The completion script for a shell.
pub fn script(shell: Shell) -> Vec<u8> {
    if shell == Shell::Bash {
        return bash_script();
    }
    // Set before clap builds the subcommands' names from it (the `kubectl karpenter-capi`
    // spelling has a space, which no shell function name can hold).
    let mut cmd = crate::cli::command().bin_name(BIN_NAME);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut out);
    out
}

/// clap_complete's bash script matches no subcommand when the executable's name has a hyphen
/// (clap-rs/clap#6421: its dispatch loop and its case labels escape the hyphen differently), so
/// nothing after a subcommand completed. Generate it for a hyphen-free name and register the
/// completion function for the real one.
fn bash_script() -> Vec<u8> {
    const STAND_IN: &str = "kubectl_karpenter_capi";
    let mut cmd = crate::cli::command().bin_name(STAND_IN);
    let mut out = Vec::new();
    clap_complete::generate(Shell::Bash, &mut cmd, STAND_IN, &mut out);
    // The name only appears as the last word of the `complete -F ...` lines.
    String::from_utf8_lossy(&out)
        .replace(&format!(" {STAND_IN}\n"), &format!(" {BIN_NAME}\n"))
        .into_bytes()
}

/// The conventional file name of a shell's script (`_kubectl-karpenter_capi` for zsh, ...).
pub fn file_name(shell: Shell) -> String {
    shell.file_name(BIN_NAME)
}

/// Runs `completion`.
pub fn run(args: CompletionArgs, printer: &Printer) -> Result<Outcome> {
    printer.write(&String::from_utf8_lossy(&script(args.shell)))?;
    Ok(Outcome::Success)
}
