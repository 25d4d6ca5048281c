//! Entry point: parse arguments, set up logging, run the command, map the result to an exit code.

use std::process::ExitCode;

use clap::Parser;
use karpenter_capi::cli::Cli;
use karpenter_capi::cmd;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
