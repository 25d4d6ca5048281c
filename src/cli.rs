//! Command-line definitions: kubectl-style global flags and one `Args` struct per subcommand.
//! Every flag documents itself here once; that text drives `--help`, completions and the man page.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::duration::GoDuration;

/// Cost-aware, just-in-time node autoscaling for Cluster API clusters, compatible with Karpenter's
/// NodePool and NodeClaim API.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-karpenter_capi",
    bin_name = "kubectl karpenter-capi",
    version,
    propagate_version = true,
    about = "Cost-aware, just-in-time node autoscaling for Cluster API clusters",
    long_about = None,
)]
pub struct Cli {
    /// Flags shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand accepts, named as kubectl names them.
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Path to the workload cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the workload cluster.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Namespace of the Cluster API objects (the cluster's namespace on the management cluster).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Path to the management cluster's kubeconfig (default: the workload cluster's, i.e. a
    /// self-hosted cluster).
    #[arg(long, global = true, value_name = "PATH")]
    pub management_kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the management cluster.
    #[arg(long, global = true, value_name = "NAME")]
    pub management_context: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// When to use colors; NO_COLOR in the environment turns them off for `auto`.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Log verbosity, as kubectl's -v: 0 warnings, 2 info, 4 debug, 6 and up trace.
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        default_value_t = 0,
        value_name = "LEVEL"
    )]
    pub verbosity: u8,
}

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
    Init(InitArgs),
    /// Check a setup and every stuck NodeClaim; name the cause and the fix.
    Doctor(DoctorArgs),
    /// Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck.
    Explain(ExplainArgs),
    /// Show which flavors each strategy would provision for the pending pods, and the cost.
    Simulate(SimulateArgs),
    /// Run the controller loop in the foreground (one-shot with --once).
    Run(RunArgs),
    /// Print a shell completion script.
    Completion(CompletionArgs),
    /// Print the version and the git commit it was built from.
    Version,
}

/// Where a snapshot comes from: files (offline) or the live clusters.
#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for
    /// stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub files: Vec<String>,
    /// Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken.
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<jiff::Timestamp>,
}

/// Arguments of `simulate`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # The built-in scenario: eight 1-vCPU pods on a three-flavor catalog
  kubectl karpenter-capi simulate

  # A scenario file, or a dump of a live cluster
  kubectl karpenter-capi simulate -f scenario.yaml
  kubectl get machinedeployments,nodepools,pods,daemonsets -A -o yaml | kubectl karpenter-capi simulate -f -

  # One strategy, as JSON
  kubectl karpenter-capi simulate -f scenario.yaml --strategy cost -o json")]
pub struct SimulateArgs {
    /// Objects to simulate over (see -f); without any, the built-in scenario is used.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Run only this strategy (default: all three, compared).
    #[arg(long, value_enum, value_name = "NAME")]
    pub strategy: Option<StrategyName>,
    /// Show what consolidation would do to the running nodes instead of provisioning.
    #[arg(long)]
    pub consolidate: bool,
}

/// The provisioning strategies `simulate` and `explain` compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum StrategyName {
    /// Ours: the cheapest set of nodes per hour for all placeable pods.
    Cost,
    /// The upstream Karpenter Cluster API provider: price 0 everywhere, first name wins.
    #[value(name = "karpenter-capi")]
    KarpenterCapi,
    /// Cluster Autoscaler's default least-waste expander.
    #[value(name = "least-waste")]
    LeastWaste,
}

impl StrategyName {
    /// Every strategy, in display order.
    pub const ALL: [StrategyName; 3] = [
        StrategyName::Cost,
        StrategyName::KarpenterCapi,
        StrategyName::LeastWaste,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyName::Cost => "cost",
            StrategyName::KarpenterCapi => "karpenter-capi",
            StrategyName::LeastWaste => "least-waste",
        }
    }
}

/// Arguments of `explain`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # Why does this pod stay pending, and what would each strategy provision for it?
  kubectl karpenter-capi explain pod default/big-0 -f ../shared/fixtures/scenarios/seed-3cpu.yaml

  # The timeline and blocking cause of a NodeClaim, live
  kubectl karpenter-capi explain nodeclaim default-mrnnj")]
pub struct ExplainArgs {
    /// What to explain.
    #[arg(value_enum)]
    pub kind: ExplainKind,
    /// The object's name (`namespace/name` or `name` with -n for pods).
    pub name: String,
    /// Objects to read instead of the live clusters.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// What `explain` can explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainKind {
    /// A pod: which flavors fit it, and what each strategy would choose.
    Pod,
    /// A NodeClaim: its timeline, Machine, Node and blocking cause.
    #[value(alias = "nodeclaims")]
    Nodeclaim,
}

/// Arguments of `doctor`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # Check the live workload and management clusters
  kubectl karpenter-capi doctor --management-kubeconfig mgmt.kubeconfig

  # Check a dump, as of the time it was taken
  kubectl karpenter-capi doctor -f dump.yaml --now 2026-11-30T10:00:00Z -o json")]
pub struct DoctorArgs {
    /// Objects to check instead of the live clusters.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Judge NodeClaims without a providerID as stuck after this long (as `run` does).
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub launch_timeout: GoDuration,
    /// Judge NodeClaims not registered as stuck after this long (as `run` does).
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub registration_timeout: GoDuration,
}

/// Arguments of `run`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # One observe -> plan -> act pass, printing the plan without writing anything
  kubectl karpenter-capi run --once --dry-run

  # Replay a support dump as of the time it was taken
  kubectl karpenter-capi run --once --dry-run -f dump.yaml --now 2026-11-30T10:00:00Z -o json

  # The controller, in the foreground
  kubectl karpenter-capi run --management-kubeconfig mgmt.kubeconfig --leader-elect")]
pub struct RunArgs {
    /// Objects to plan from instead of the live clusters (requires --once --dry-run).
    #[command(flatten)]
    pub source: SourceArgs,
    /// Do one observe -> plan -> act pass, print the plan and exit.
    #[arg(long)]
    pub once: bool,
    /// Print the plan without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Close a batch of pending pods after this long without a new one.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub batch_idle_duration: GoDuration,
    /// Close a batch of pending pods after this long at most.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub batch_max_duration: GoDuration,
    /// Delete a NodeClaim whose Machine has no providerID after this long.
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub launch_timeout: GoDuration,
    /// Delete a NodeClaim whose Node has not registered after this long.
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub registration_timeout: GoDuration,
    /// Hold a Lease so only one replica acts at a time.
    #[arg(long)]
    pub leader_elect: bool,
    /// Namespace of the leader-election Lease.
    #[arg(long, default_value = "kube-system", value_name = "NAMESPACE")]
    pub leader_election_namespace: String,
    /// Serve Prometheus metrics and /healthz, /readyz here.
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "ADDR")]
    pub metrics_bind_address: String,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Log line formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Arguments of `init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Name of the Cluster API Cluster.
    #[arg(long, value_name = "NAME")]
    pub cluster_name: Option<String>,
    /// Kubernetes version of the worker nodes, e.g. v1.32.4.
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,
    /// Cluster API version of the generated objects.
    #[arg(long, value_enum, default_value_t = CapiVersion::V1beta2)]
    pub capi_version: CapiVersion,
    /// Infrastructure provider kind of the machine templates, e.g. OpenStackMachineTemplate.
    #[arg(long, value_name = "KIND")]
    pub infrastructure_kind: Option<String>,
    /// Clone this existing infrastructure machine template, changing only the flavor.
    #[arg(long, value_name = "NAME")]
    pub infrastructure_template: Option<String>,
    /// A flavor: NAME:cpu=4,memory=8Gi,price=0.10[,arch=..,zone=..,gpu=..,max=..,maxPods=..,taints=..].
    #[arg(long = "flavor", value_name = "SPEC")]
    pub flavors: Vec<String>,
    /// A YAML list of flavors with the same fields as --flavor.
    #[arg(long = "flavors", value_name = "FILE")]
    pub flavors_file: Option<PathBuf>,
    /// An extra taint every node registers with (key=value:Effect).
    #[arg(long = "node-taint", value_name = "TAINT")]
    pub node_taints: Vec<String>,
    /// Use the templates in this directory instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Write DIR/management/*.yaml and DIR/workload/*.yaml instead of printing.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Container image of the controller Deployment.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Apply both bundles with server-side apply.
    #[arg(long)]
    pub apply: bool,
    /// With --apply: `server` sends a server-side dry run, `none` applies.
    #[arg(long, value_enum, default_value_t = DryRun::None, value_name = "MODE")]
    pub dry_run: DryRun,
    /// Read the Cluster, its version and an existing machine template from the management cluster.
    #[arg(long)]
    pub from_cluster: bool,
    /// Never prompt; a missing required input is an error.
    #[arg(short = 'y', long)]
    pub yes: bool,
}

/// Cluster API versions `init` can generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CapiVersion {
    /// cluster.x-k8s.io/v1beta2 (storage version since Cluster API 1.11).
    V1beta2,
    /// cluster.x-k8s.io/v1beta1 (deprecated, still served).
    V1beta1,
}

/// Dry-run modes, as kubectl's --dry-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// Write for real.
    None,
    /// Ask the API server to validate without persisting.
    Server,
}

/// Arguments of `completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to print a completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
