//! Command-line definitions: kubectl-style global flags and one `Args` struct per subcommand.
//! Every flag documents itself here once; that text drives `--help`, completions and the man page.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::duration::GoDuration;

mod args;
mod init;
mod output;
mod status;
mod values;

pub use crate::sched::strategy::StrategyName;
pub use args::{
    AllNamespaces, CompletionArgs, DoctorArgs, ExplainArgs, ExplainKind, LogFormat, RunArgs,
    SimulateArgs, SourceArgs, UninstallArgs, Validate,
};
pub use init::{InitArgs, InitCommand, InitKubeconfigArgs};
pub use output::{OutputMode, accepts as output_accepts, parse as parse_output};
pub use status::StatusArgs;

/// `--version`: the crate version and the git commit build.rs recorded, as `version` prints them.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("KARPENTER_CAPI_GIT_COMMIT"),
    ")"
);

/// Cost-aware, just-in-time node autoscaling for Cluster API clusters, compatible with Karpenter's
/// NodePool and NodeClaim API.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-karpenter_capi",
    bin_name = "kubectl karpenter-capi",
    version = VERSION,
    propagate_version = true,
    about = "Cost-aware, just-in-time node autoscaling for Cluster API clusters",
    long_about = None,
    after_help = "Use \"kubectl karpenter-capi <command> --help\" for more information about a command.",
)]
pub struct Cli {
    /// Flags shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags shared by the subcommands, named as kubectl names them; `--help` lists them under their
/// own heading, as `kubectl options` does. `completion` and `version` reject the cluster flags
/// (see [`try_parse_from`]) rather than accept and ignore them.
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Path to the workload cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the workload cluster.
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "NAME")]
    pub context: Option<String>,
    /// Namespace of the Cluster API objects (the cluster's namespace on the management cluster);
    /// for `explain pod`, the pod's namespace (there --management-namespace scopes Cluster API).
    #[arg(short = 'n', long, global = true, help_heading = GLOBAL_HEADING, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Path to the management cluster's kubeconfig (default: the workload cluster's, i.e. a
    /// self-hosted cluster).
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "PATH")]
    pub management_kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the management cluster.
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "NAME")]
    pub management_context: Option<String>,
    /// Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only).
    #[arg(short = 'o', long, global = true, help_heading = GLOBAL_HEADING, value_parser = output::OutputParser, default_value = "table")]
    pub output: OutputFormat,
    /// The whole `-o` choice (its templates included), set by [`try_parse_from`].
    #[arg(skip)]
    pub output_mode: OutputMode,
    /// When to use colors; NO_COLOR in the environment turns them off for `auto`.
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Log verbosity, as kubectl's -v: 0 warnings, 2 info, 4 debug, 6 and up trace.
    #[arg(
        short = 'v',
        long = "v",
        global = true, help_heading = GLOBAL_HEADING,
        default_value_t = 0,
        value_name = "LEVEL"
    )]
    pub verbosity: u8,
    /// How long to wait for one API request before giving up, as kubectl's: a duration (1s, 2m,
    /// 3h) or 0 for no limit beyond the client's own (30s to connect).
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, default_value = "0", value_name = "DURATION")]
    pub request_timeout: GoDuration,
}

impl GlobalArgs {
    /// The connection flags as the shell takes them.
    pub fn connection(&self) -> crate::kube::client::Connection {
        crate::kube::client::Connection {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            management_kubeconfig: self.management_kubeconfig.clone(),
            management_context: self.management_context.clone(),
            request_timeout: std::time::Duration::from_secs(self.request_timeout.as_secs()),
        }
    }
}

/// The help heading of [`GlobalArgs`], as kubectl lists its global flags apart (`kubectl options`).
const GLOBAL_HEADING: &str = "Global Options";

/// The cluster flags, by argument id: meaningless to `completion` and `version`.
const CLUSTER_FLAGS: &[(&str, &str)] = &[
    ("kubeconfig", "--kubeconfig"),
    ("context", "--context"),
    ("namespace", "--namespace"),
    ("management_kubeconfig", "--management-kubeconfig"),
    ("management_context", "--management-context"),
    ("request_timeout", "--request-timeout"),
];

/// Output formats, as kubectl's `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A human-readable table or tree.
    Table,
    /// The table with more columns.
    Wide,
    /// JSON for scripts.
    Json,
    /// YAML for scripts.
    Yaml,
}

/// When to color the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colors when writing to a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The subcommands, grouped in `--help` as Setup, Troubleshooting, Operate and Other.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling.
    Init(Box<InitArgs>),
    /// Check a setup and every stuck NodeClaim; name the cause and the fix.
    Doctor(DoctorArgs),
    /// Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck.
    Explain(ExplainArgs),
    /// Show which flavors each strategy would provision for the pending pods, and the cost.
    Simulate(SimulateArgs),
    /// Show the nodes per NodePool, the claims in flight, why pods are pending and the cost.
    Status(StatusArgs),
    /// Run the controller loop in the foreground (one-shot with --once).
    Run(RunArgs),
    /// Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster.
    Uninstall(UninstallArgs),
    /// Print a shell completion script.
    #[command(after_help = "Examples:
  # Bash, for this session (add the line to ~/.bashrc to keep it)
  source <(kubectl karpenter-capi completion bash)

  # Zsh, once: a file in a directory of $fpath
  kubectl karpenter-capi completion zsh > \"${fpath[1]}/_kubectl-karpenter_capi\"

  # Fish
  kubectl karpenter-capi completion fish | source

These scripts complete the `kubectl-karpenter_capi` executable. For `kubectl karpenter-capi <TAB>`
(kubectl 1.26 or later), put `kubectl_complete-karpenter_capi` on PATH next to it: `cargo install`
installs both.")]
    Completion(CompletionArgs),
    /// Print the version and the git commit it was built from.
    #[command(after_help = "Examples:
  kubectl karpenter-capi version

  # For a bug report or a script
  kubectl karpenter-capi version -o json")]
    Version,
}

/// How `--help` groups the subcommands, in order, as clusterctl does. The lines under each heading
/// are rendered from the subcommands' own about text; `tests/it/help.rs` fails on a subcommand that no
/// group names.
pub const COMMAND_GROUPS: &[(&str, &[&str])] = &[
    ("Setup", &["init", "uninstall"]),
    ("Troubleshooting", &["doctor", "explain", "simulate"]),
    ("Operate", &["status", "run"]),
    ("Other", &["completion", "version", "help"]),
];

/// The clap command with the grouped `--help`. `main`, the completion scripts, the kubectl
/// completion helper and the man page all start from it.
pub fn command() -> clap::Command {
    crate::render::help::grouped(<Cli as clap::CommandFactory>::command(), COMMAND_GROUPS)
}

/// Parses a command line (the program name first) with [`command`]; `--help`, `--version` and
/// usage errors come back as the `clap::Error` to print and exit with.
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    if let Some((name @ ("completion" | "version"), sub)) = matches.subcommand() {
        // Global flags are accepted everywhere by clap; these two commands would ignore them.
        let mut refused: Vec<&str> = CLUSTER_FLAGS
            .iter()
            .filter(|(id, _)| given(sub, id))
            .map(|(_, flag)| *flag)
            .collect();
        if name == "completion" && given(sub, "output") {
            refused.push("--output");
        }
        if !refused.is_empty() {
            let message = format!(
                "`{name}` does not talk to a cluster and takes no {}",
                refused.join(", ")
            );
            return Err(cmd
                .find_subcommand_mut(name)
                .map(|c| c.error(clap::error::ErrorKind::ArgumentConflict, &message))
                .unwrap_or_else(|| cmd.error(clap::error::ErrorKind::ArgumentConflict, &message)));
        }
    }
    if let Some(("uninstall", sub)) = matches.subcommand() {
        // Uninstall acts on everything init installed, in every namespace; it prints lines only.
        let refused: Vec<&str> = [("namespace", "--namespace"), ("output", "--output")]
            .iter()
            .filter(|(id, _)| given(sub, id))
            .map(|(_, flag)| *flag)
            .collect();
        if !refused.is_empty() {
            let message = format!(
                "`uninstall` takes no {} (the controller's namespace is --controller-namespace)",
                refused.join(", ")
            );
            return Err(cmd
                .find_subcommand_mut("uninstall")
                .map(|c| c.error(clap::error::ErrorKind::ArgumentConflict, &message))
                .unwrap_or_else(|| cmd.error(clap::error::ErrorKind::ArgumentConflict, &message)));
        }
    }
    let raw_output = matches
        .subcommand()
        .and_then(|(_, sub)| sub.get_raw("output"))
        .or_else(|| matches.get_raw("output"))
        .and_then(|mut v| v.next_back())
        .and_then(|v| v.to_str())
        .unwrap_or("table")
        .to_string();
    let output_mode = output::parse(&raw_output)
        .map_err(|e| cmd.error(clap::error::ErrorKind::InvalidValue, e))?;
    if output_mode.status_only()
        && let Some((name, _)) = matches.subcommand()
        && name != "status"
    {
        let message =
            format!("`{name}` takes -o table, wide, json or yaml; `{raw_output}` is for `status`");
        return Err(cmd
            .find_subcommand_mut(name)
            .map(|c| c.error(clap::error::ErrorKind::ArgumentConflict, &message))
            .unwrap_or_else(|| cmd.error(clap::error::ErrorKind::ArgumentConflict, &message)));
    }
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    cli.global.output_mode = output_mode;
    Ok(cli)
}

/// Whether the user gave `id` (on the command line or from the environment), not its default.
fn given(matches: &clap::ArgMatches, id: &str) -> bool {
    matches
        .value_source(id)
        .is_some_and(|s| s != clap::parser::ValueSource::DefaultValue)
}

pub use crate::bundle::CapiVersion;

/// Dry-run modes, as kubectl's --dry-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// Write for real.
    None,
    /// Only print what would be written; nothing is sent.
    Client,
    /// Ask the API server to validate without persisting.
    Server,
}

impl DryRun {
    /// Whether nothing is persisted.
    pub fn is_dry(self) -> bool {
        self != DryRun::None
    }
}
