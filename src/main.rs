//! Entry point: parse arguments, set up logging, run the command, map the result to an exit code.

// The last word: an error that ends the command is printed here, after every Printer is gone.
#![allow(clippy::print_stderr)]

use std::process::ExitCode;

use karpenter_capi::cli;
use karpenter_capi::cmd;

fn main() -> ExitCode {
    // Completion for kubectl (see karpenter_capi::complete): `__complete <words>`, as the
    // kubectl_complete-karpenter_capi shim or a wrapper script runs it, or the words alone when
    // this binary is itself linked as kubectl_complete-karpenter_capi (e.g. next to a krew install).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if karpenter_capi::complete::is_request(&args) {
        let answer = karpenter_capi::complete::run(&args[1..]);
        let _ = std::io::Write::write_all(&mut std::io::stdout(), answer.as_bytes());
        return ExitCode::SUCCESS;
    }
    // No arguments at all: the help, on stdout, as success (as kubectl does), rather than a
    // usage error about the missing subcommand.
    if args.len() <= 1 {
        let mut command = cli::command();
        let help = command.render_help().to_string();
        let _ = std::io::Write::write_all(&mut std::io::stdout(), help.as_bytes());
        return ExitCode::SUCCESS;
    }
    // clap prints --help, --version and usage errors itself and exits 0 or 2.
    let cli = cli::try_parse_from(args).unwrap_or_else(|e| e.exit());
    let (log_format, daemon) = cmd::log_settings(&cli);
    cmd::init_logging(&cli.global, log_format, daemon);
    match cmd::dispatch(cli) {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(err) => {
            if err.is_broken_pipe() {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
