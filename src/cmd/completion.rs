//! `completion`: shell completion scripts generated from the clap definitions, for the
//! `kubectl-karpenter_capi` executable. The same scripts are committed under `completions/`
//! (kept in sync by `tests/generated.rs`). Completion of `kubectl karpenter-capi ...` through
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
    let mut cmd = crate::cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut out);
    out
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
