//! `kubectl_complete-karpenter_capi`: the executable kubectl (1.26 and later) runs to complete
//! `kubectl karpenter-capi <TAB>`. All the work is in [`karpenter_capi::complete`].

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let answer = karpenter_capi::complete::run(&args);
    // Completion must stay silent: a closed pipe or a full disk leaves nothing useful to say.
    let _ = std::io::stdout().lock().write_all(answer.as_bytes());
    ExitCode::SUCCESS
}
