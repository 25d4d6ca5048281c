//! Entry point: parse arguments, set up logging, run the command, map the result to an exit code.

use std::process::ExitCode;

use karpenter_capi::cli;
use karpenter_capi::cmd;

fn main() -> ExitCode {
    // clap prints --help, --version and usage errors itself and exits 0 or 2.
    let cli = cli::try_parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit());
    cmd::init_logging(&cli.global);
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
