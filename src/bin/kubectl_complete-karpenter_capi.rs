//! `kubectl_complete-karpenter_capi`: the executable kubectl (1.26 and later) runs to complete
//! `kubectl karpenter-capi <TAB>`.
//!
//! A shim on purpose: it runs `kubectl-karpenter_capi __complete <words>` (the one next to it
//! first, so both come from the same install, else the one on PATH), which does the work in
//! `karpenter_capi::complete`. Using only std keeps it a few hundred KB instead of a second copy
//! of the kube client and runtime.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

const PLUGIN: &str = "kubectl-karpenter_capi";

fn main() -> ExitCode {
    let words: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut plugin = Command::new(sibling().unwrap_or_else(|| PathBuf::from(PLUGIN)));
    plugin.arg("__complete").args(&words);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Only returns if the plugin could not be started.
        let _ = plugin.exec();
    }
    #[cfg(not(unix))]
    {
        if plugin.status().is_ok() {
            return ExitCode::SUCCESS;
        }
    }
    // No plugin to ask: no candidates, and no file names either (cobra's NoFileComp).
    let _ = std::io::stdout().write_all(b":4\n");
    ExitCode::SUCCESS
}

/// `kubectl-karpenter_capi` in this executable's directory (symlinks resolved), if it is there.
fn sibling() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let path = exe.with_file_name(format!("{PLUGIN}{}", std::env::consts::EXE_SUFFIX));
    path.is_file().then_some(path)
}
