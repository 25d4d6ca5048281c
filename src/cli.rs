//! Command-line definitions: kubectl-style global flags and one `Args` struct per subcommand.
//! Every flag documents itself here once; that text drives `--help`, completions and the man page.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::duration::GoDuration;

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
    /// Namespace of the Cluster API objects (the cluster's namespace on the management cluster).
    #[arg(short = 'n', long, global = true, help_heading = GLOBAL_HEADING, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Path to the management cluster's kubeconfig (default: the workload cluster's, i.e. a
    /// self-hosted cluster).
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "PATH")]
    pub management_kubeconfig: Option<PathBuf>,
    /// The kubeconfig context of the management cluster.
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_name = "NAME")]
    pub management_context: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, global = true, help_heading = GLOBAL_HEADING, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
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
    ("Operate", &["run"]),
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
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Whether the user gave `id` (on the command line or from the environment), not its default.
fn given(matches: &clap::ArgMatches, id: &str) -> bool {
    matches
        .value_source(id)
        .is_some_and(|s| s != clap::parser::ValueSource::DefaultValue)
}

/// Where a snapshot comes from: files (offline) or the live clusters.
#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for
    /// stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub files: Vec<String>,
    /// Read the directories given with -f recursively, as kubectl's -R.
    #[arg(short = 'R', long)]
    pub recursive: bool,
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
  kubectl karpenter-capi simulate -f scenario.yaml --strategy cost -o json

  # The live clusters, and what consolidation of the running nodes would save
  kubectl karpenter-capi simulate --live --management-kubeconfig mgmt.kubeconfig
  kubectl karpenter-capi simulate --live --consolidate

  # Replay all three over time (the seed report's first run), and draw it
  kubectl karpenter-capi simulate --timeline --chart timeline.svg
  kubectl karpenter-capi simulate --timeline --trace seed-benchmark -o json
  kubectl karpenter-capi simulate --timeline --trace day.trace.yaml -f catalog.yaml")]
pub struct SimulateArgs {
    /// Objects to simulate over (see -f); without any, the built-in scenario is used.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Run only this strategy (default: all three, compared).
    #[arg(long, value_parser = strategy_values(), value_name = "NAME")]
    pub strategy: Option<StrategyName>,
    /// Show what consolidation would do to the running nodes instead of provisioning.
    #[arg(long)]
    pub consolidate: bool,
    /// Read the live workload and management clusters instead of files or the built-in scenario.
    #[arg(long, conflicts_with = "files")]
    pub live: bool,
    /// Replay the strategies over time against simulated Cluster API and kubelets: milestones,
    /// time to Running, nodes and cost per strategy (default trace: the seed report's first run).
    #[arg(long, conflicts_with_all = ["consolidate", "live"])]
    pub timeline: bool,
    /// The load trace to replay: a YAML trace file, or a built-in one (seed-first-run,
    /// seed-benchmark). Without it, -f's pending workloads arrive at T+0 and leave at T+10m.
    #[arg(long, value_name = "FILE|NAME", requires = "timeline")]
    pub trace: Option<String>,
    /// Also draw the replay as an SVG: nodes and cost per hour over time, one line per strategy.
    #[arg(long, value_name = "FILE", requires = "timeline")]
    pub chart: Option<std::path::PathBuf>,
}

pub use crate::sched::strategy::StrategyName;

/// A core enum as a command-line value: its names and their help come from the core, so the two
/// cannot drift (the orphan rule keeps clap's `ValueEnum` off the core's types, and the core
/// knows no clap).
fn core_values<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    about: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        all.iter()
            .map(|&v| PossibleValue::new(name(v)).help(about(v))),
    )
    .map(move |text| {
        // The parser above admits only these names.
        all.iter()
            .copied()
            .find(|&v| name(v) == text)
            .unwrap_or(all[0])
    })
}

fn strategy_values() -> impl clap::builder::TypedValueParser<Value = StrategyName> {
    core_values(
        &StrategyName::ALL,
        StrategyName::as_str,
        StrategyName::about,
    )
}

fn capi_version_values() -> impl clap::builder::TypedValueParser<Value = CapiVersion> {
    core_values(&CapiVersion::ALL, CapiVersion::as_str, CapiVersion::about)
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

/// Arguments of `uninstall`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # Keep the nodes: stop the controller, take its finalizers off NodeClaims and Nodes, then remove
  # the NodePools, NodeClaims, the controller's RBAC and namespace, and the CRDs last
  kubectl karpenter-capi uninstall

  # Remove the nodes too: the running controller drains them and scales their MachineDeployments
  # down; uninstall waits for the Machines to go before removing the rest
  kubectl karpenter-capi uninstall --delete-nodes --management-kubeconfig mgmt.kubeconfig --timeout 30m

The management cluster's objects (member MachineDeployments, templates, the controller's Role) are
left in place: remove them with `kubectl delete -k DIR/management` (DIR from `init --output-dir`).")]
pub struct UninstallArgs {
    /// Delete every NodeClaim first and wait until its Machine is gone (needs the controller
    /// running); without it the nodes and Machines stay.
    #[arg(long)]
    pub delete_nodes: bool,
    /// How long to wait for the controller's pods to stop, and with --delete-nodes for the
    /// NodeClaims and Machines to go.
    #[arg(long, default_value = "15m", value_name = "DURATION")]
    pub timeout: GoDuration,
    /// Namespace of the controller on the workload cluster.
    #[arg(long, default_value = "karpenter-capi", value_name = "NAMESPACE")]
    pub controller_namespace: String,
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
    /// `client` (or `--dry-run` alone) prints the plan without writing anything; `server` is
    /// refused: a pass's writes depend on each other, so the server could not judge them one by one.
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = DryRun::None,
        default_missing_value = "client",
        value_name = "MODE"
    )]
    pub dry_run: DryRun,
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
    /// Hold a Lease so only one replica acts at a time (Lease karpenter-capi). With --dry-run
    /// the replicas compete for Lease karpenter-capi-dry-run instead, never the live controller's.
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
    /// Only the MachineDeployments and Machines of this Cluster (label
    /// cluster.x-k8s.io/cluster-name): two clusters in one namespace never touch each other's.
    #[arg(long, value_name = "NAME")]
    pub cluster_name: Option<String>,
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
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:
  # The seed's OVH setup, printed (management bundle, then workload bundle)
  kubectl karpenter-capi init -n capi-ovh --cluster-name capi-ovh \\
    --kubernetes-version v1.36.1 --infrastructure-kind openstack \\
    --machine-image ubuntu-2404-noble \\
    --flavor c3-4:cpu=2,memory=4G,price=0.05 \\
    --flavor c3-8:cpu=4,memory=8G,price=0.10 \\
    --flavor c3-16:cpu=8,memory=16G,price=0.20 --yes

  # Write DIR/management/*.yaml and DIR/workload/*.yaml instead, flavors from a file
  kubectl karpenter-capi init -n capi-ovh --cluster-name capi-ovh --flavors flavors.yaml \\
    --output-dir karpenter-setup

  # Defaults from the live management cluster, server-side applied (dry run first)
  kubectl karpenter-capi init -n capi-ovh --cluster-name capi-ovh --from-cluster \\
    --management-kubeconfig mgmt.kubeconfig --flavors flavors.yaml \\
    --apply --dry-run=server

  # A least-privilege kubeconfig for the controller: a 30-day ServiceAccount token, as the
  # workload Secret (re-run before it expires to rotate)
  kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --duration 720h \\
    --management-kubeconfig mgmt.kubeconfig --secret | kubectl apply -f -"
)]
pub struct InitArgs {
    /// `init kubeconfig`: mint a kubeconfig for the controller's management ServiceAccount.
    #[command(subcommand)]
    pub command: Option<InitCommand>,
    /// Name of the Cluster API Cluster [required; asked on a terminal, or read with
    /// --from-cluster].
    #[arg(long, value_name = "NAME")]
    pub cluster_name: Option<String>,
    /// Kubernetes version of the worker nodes, e.g. v1.36.1 [required; asked on a terminal, or
    /// read with --from-cluster].
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,
    /// Cluster API version of the generated objects [default: v1beta2, or the Cluster's with
    /// --from-cluster].
    #[arg(long, value_parser = capi_version_values(), value_name = "CAPI_VERSION")]
    pub capi_version: Option<CapiVersion>,
    /// Infrastructure provider: openstack, docker, dev, aws, azure, gcp, hetzner, vsphere (or the
    /// machine-template kind, e.g. OpenStackMachineTemplate) [required; asked on a terminal, or
    /// read with --from-cluster].
    #[arg(long, value_name = "KIND")]
    pub infrastructure_kind: Option<String>,
    /// Clone this existing infrastructure machine template (read with --from-cluster), changing
    /// only the flavor.
    #[arg(long, value_name = "NAME")]
    pub infrastructure_template: Option<String>,
    /// OS image of the new machines, for providers whose template needs one (OpenStack image
    /// name, Hetzner image, vSphere VM template; optional AMI, Azure or GCP image) [required for
    /// openstack, hetzner and vsphere unless a template is cloned].
    #[arg(long, value_name = "IMAGE")]
    pub machine_image: Option<String>,
    /// A flavor: NAME:cpu=4,memory=8Gi,price=0.10[,arch=..,zone=..,gpu=[RESOURCE:]N,max=..,
    /// maxPods=..,taints=k=v:Effect;..,disk=..,type=..,capacityType=..]. Repeatable [required:
    /// at least one flavor, here or with --flavors; asked on a terminal].
    #[arg(long = "flavor", value_name = "SPEC")]
    pub flavors: Vec<String>,
    /// A YAML list of flavors with `name` and the same keys as --flavor.
    #[arg(long = "flavors", value_name = "FILE")]
    pub flavors_file: Option<PathBuf>,
    /// An extra taint every node registers with (key=value:Effect). Repeatable.
    #[arg(long = "node-taint", value_name = "TAINT")]
    pub node_taints: Vec<String>,
    /// Namespace of the controller on the workload cluster.
    #[arg(long, default_value = "karpenter-capi", value_name = "NAMESPACE")]
    pub controller_namespace: String,
    /// NodePool consolidation policy: WhenEmpty or WhenEmptyOrUnderutilized.
    #[arg(
        long,
        default_value = "WhenEmptyOrUnderutilized",
        value_name = "POLICY"
    )]
    pub consolidation_policy: String,
    /// NodePool consolidateAfter (a duration such as 30s, or Never).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub consolidate_after: crate::model::duration::NillableDuration,
    /// NodePool expireAfter (a duration such as 720h, or Never).
    #[arg(long, default_value = "720h", value_name = "DURATION")]
    pub expire_after: crate::model::duration::NillableDuration,
    /// Use the templates in this directory (same relative paths as the built-in ones, e.g.
    /// workload/nodepool.yaml.j2) instead of the built-in ones; missing files fall back.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Write DIR/management/*.yaml and DIR/workload/*.yaml instead of printing. Only the files
    /// init generates are written (all or none); other files in DIR are never touched.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// With --output-dir: write even though DIR holds files init did not write (they are left
    /// as they are).
    #[arg(long, requires = "output_dir")]
    pub force: bool,
    /// With --output-dir: remove the files an earlier init wrote that this one no longer
    /// generates (e.g. of a removed flavor); without it they are only listed as stale.
    #[arg(long, requires = "output_dir")]
    pub prune: bool,
    /// Container image of the controller Deployment.
    #[arg(
        long,
        value_name = "IMAGE",
        help = concat!(
            "Container image of the controller Deployment [default: this version's image, ",
            "ghcr.io/karpenter-capi/kubectl-karpenter-capi:v",
            env!("CARGO_PKG_VERSION"),
            "; offered on a terminal]"
        )
    )]
    pub image: Option<String>,
    /// The management kubeconfig the controller uses (mint one with `init kubeconfig`); stored in
    /// a Secret on the workload cluster.
    #[arg(long, value_name = "FILE")]
    pub controller_kubeconfig: Option<PathBuf>,
    /// Pods the cluster is expected to hold: sizes the controller Deployment's memory request and
    /// limit (about 10 MiB + 10 KiB per pod + 26 KiB per node, plus 25%; README "Memory sizing").
    #[arg(long, default_value_t = crate::bundle::sizing::DEFAULT_EXPECTED_PODS, value_name = "N")]
    pub expected_pods: u64,
    /// Nodes the cluster is expected to hold [default: expected pods / 10].
    #[arg(long, value_name = "N")]
    pub expected_nodes: Option<u64>,
    /// With --apply and a separate management cluster: how long the controller's token is valid
    /// (a Go duration, at least 10m); rotate with `init kubeconfig` before it expires.
    #[arg(long, default_value = crate::bundle::kubeconfig::DEFAULT_TOKEN_DURATION, value_name = "DURATION")]
    pub token_duration: crate::model::duration::GoDuration,
    /// Apply both bundles with server-side apply (field manager karpenter-capi): the management
    /// bundle to --management-kubeconfig/--management-context, the workload bundle to
    /// --kubeconfig/--context.
    #[arg(long, conflicts_with = "output_dir")]
    pub apply: bool,
    /// With --apply: `none` applies, `server` sends a server-side dry run, `client` (or
    /// `--dry-run` alone) prints what would be applied without contacting the clusters.
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = DryRun::None,
        default_missing_value = "client",
        value_name = "MODE"
    )]
    pub dry_run: DryRun,
    /// Read the Cluster, its version, API version and an existing machine template from the
    /// management cluster as defaults.
    #[arg(long)]
    pub from_cluster: bool,
    /// Never prompt; a missing required input is an error.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Cluster API runs in the workload cluster itself (no separate management cluster) [asked
    /// on a terminal unless --management-kubeconfig says otherwise].
    #[arg(long)]
    pub self_hosted: bool,
}

/// Subcommands of `init`.
#[derive(Debug, Subcommand)]
pub enum InitCommand {
    /// Print a kubeconfig for the controller's management ServiceAccount, with a token the live
    /// management cluster issues for --duration (apply the management bundle first).
    Kubeconfig(InitKubeconfigArgs),
}

/// Arguments of `init kubeconfig`.
#[derive(Debug, Args)]
pub struct InitKubeconfigArgs {
    /// Name of the Cluster API Cluster (names the ServiceAccount).
    #[arg(long, value_name = "NAME")]
    pub cluster_name: String,
    /// The API server URL as the workload cluster reaches it [default: the management
    /// kubeconfig's].
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Print a Secret for the workload cluster holding the kubeconfig instead of the kubeconfig
    /// (annotated karpenter-capi.sh/token-expires with the token's expiry).
    #[arg(long)]
    pub secret: bool,
    /// How long the token is valid (a Go duration, at least 10m). The API server issues it
    /// (TokenRequest) and may cap it; re-run before it expires to rotate.
    #[arg(long, default_value = crate::bundle::kubeconfig::DEFAULT_TOKEN_DURATION, value_name = "DURATION")]
    pub duration: crate::model::duration::GoDuration,
    /// Write to FILE (mode 0600, replaced whole) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Namespace of that Secret (the controller's namespace).
    #[arg(long, default_value = "karpenter-capi", value_name = "NAMESPACE")]
    pub controller_namespace: String,
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

/// Arguments of `completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to print a completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
