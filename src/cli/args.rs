//! The arguments of `simulate`, `explain`, `doctor`, `uninstall`, `run` and `completion`, and
//! where a snapshot comes from (`-f`).

use clap::{Args, ValueEnum};

use super::values::strategy_values;
use super::{DryRun, StrategyName};
use crate::model::duration::GoDuration;

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
    /// Fields the objects' schemas lack, as kubectl's --validate: `warn` names each on stderr
    /// with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse).
    #[arg(long, value_enum, default_value_t = Validate::Warn, value_name = "MODE")]
    pub validate: Validate,
}

/// What `--validate` does with unknown fields in `-f` inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Validate {
    /// Warn on stderr and go on.
    #[default]
    Warn,
    /// Warn, then fail with exit 2.
    Strict,
    /// Do not check.
    Ignore,
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
    /// Only the pending pods whose labels match this selector (kubectl's syntax: k=v, k!=v, k,
    /// !k, k in (a,b), k notin (a,b)); running pods stay where they are.
    #[arg(
        short = 'l',
        long,
        value_name = "SELECTOR",
        conflicts_with = "timeline"
    )]
    pub selector: Option<String>,
    /// Print the tables without their header lines.
    #[arg(long)]
    pub no_headers: bool,
}

/// `-A/--all-namespaces`, as kubectl's: every namespace, said explicitly (the default when no
/// namespace is given); it cannot be combined with the namespace flag it overrides.
#[derive(Debug, Args, Clone, Default)]
pub struct AllNamespaces {
    /// Every namespace (the default without -n), as kubectl's -A; not with -n.
    #[arg(short = 'A', long = "all-namespaces", conflicts_with = "namespace")]
    pub all_namespaces: bool,
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
    /// Namespace of the Cluster API objects on the management cluster (default: every
    /// namespace). Here -n is the pod's namespace, and never scopes this listing.
    #[arg(long, value_name = "NAMESPACE")]
    pub management_namespace: Option<String>,
    /// List the Cluster API objects of every namespace (the default without
    /// --management-namespace), as kubectl's -A; not with --management-namespace.
    #[arg(short = 'A', long, conflicts_with = "management_namespace")]
    pub all_namespaces: bool,
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
    /// Every namespace.
    #[command(flatten)]
    pub all: AllNamespaces,
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

/// Arguments of `completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to print a completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
