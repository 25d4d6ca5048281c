//! One module per subcommand, each exposing `run`: glue between the CLI, the shell and the core.

pub mod completion;
pub mod doctor;
pub mod explain;
pub mod init;
pub mod run;
pub mod simulate;
pub mod source;
pub mod status;
pub mod uninstall;
pub mod version;

use crate::cli::{Cli, Command, GlobalArgs, LogFormat};
use crate::error::{Outcome, Result};
use crate::render::{Printer, PrinterSettings};

/// Runs the parsed command line.
pub fn dispatch(cli: Cli) -> Result<Outcome> {
    let g = &cli.global;
    let printer = Printer::new(PrinterSettings::detect(g.output, g.color, g.verbosity));
    match cli.command {
        Command::Init(args) => init::run(&cli.global, *args, &printer),
        Command::Doctor(args) => doctor::run(&cli.global, args, &printer),
        Command::Explain(args) => explain::run(&cli.global, args, &printer),
        Command::Simulate(args) => simulate::run(&cli.global, args, &printer),
        Command::Status(args) => status::run(&cli.global, args, &printer),
        Command::Run(args) => run::run(&cli.global, args, &printer),
        Command::Uninstall(args) => uninstall::run(&cli.global, args, &printer),
        Command::Completion(args) => completion::run(args, &printer),
        Command::Version => version::run(&cli.global, &printer),
    }
}

/// How `run` wants its logs: JSON lines with `--log-format json`, and at least `info` for the
/// continuous controller (a daemon with nothing logged looks dead).
pub fn log_settings(cli: &Cli) -> (LogFormat, bool) {
    match &cli.command {
        Command::Run(args) => (args.log_format, !args.once),
        _ => (LogFormat::Text, false),
    }
}

/// Sets up logging to stderr at the kubectl-style verbosity (`RUST_LOG` overrides it), as text
/// or one JSON object per line.
pub fn init_logging(global: &GlobalArgs, format: LogFormat, daemon: bool) {
    let level = match global.verbosity {
        0 | 1 if !daemon => "warn",
        0..=3 => "info",
        4 | 5 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "karpenter_capi={level},kubectl_karpenter_capi={level}"
        ))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        // Escape codes only for a person watching a terminal.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        );
    // A second initialisation (tests) keeps the first subscriber.
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
