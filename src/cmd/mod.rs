//! One module per subcommand, each exposing `run`: glue between the CLI, the shell and the core.

pub mod completion;
pub mod doctor;
pub mod explain;
pub mod init;
pub mod run;
pub mod simulate;
pub mod source;
pub mod version;

use crate::cli::{Cli, Command, GlobalArgs};
use crate::error::{Outcome, Result};
use crate::render::Printer;

/// Runs the parsed command line.
pub fn dispatch(cli: Cli) -> Result<Outcome> {
    let printer = Printer::stdout(&cli.global);
    match cli.command {
        Command::Init(args) => init::run(&cli.global, args, &printer),
        Command::Doctor(args) => doctor::run(&cli.global, args, &printer),
        Command::Explain(args) => explain::run(&cli.global, args, &printer),
        Command::Simulate(args) => simulate::run(&cli.global, args, &printer),
        Command::Run(args) => run::run(&cli.global, args, &printer),
        Command::Completion(args) => completion::run(args, &printer),
        Command::Version => version::run(&cli.global, &printer),
    }
}

/// Sets up logging to stderr at the kubectl-style verbosity (`RUST_LOG` overrides it).
pub fn init_logging(global: &GlobalArgs) {
    let level = match global.verbosity {
        0 | 1 => "warn",
        2 | 3 => "info",
        4 | 5 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "karpenter_capi={level},kubectl_karpenter_capi={level}"
        ))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
