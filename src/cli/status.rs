//! The arguments of `status`.

use clap::Args;

use super::SourceArgs;
use crate::model::duration::GoDuration;

/// Arguments of `status`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # The live clusters: nodes per NodePool, claims in flight, pending pods, cost per hour
  kubectl karpenter-capi status --management-kubeconfig mgmt.kubeconfig

  # Keep watching (re-lists every --interval, redraws when something changed; Ctrl-C stops)
  kubectl karpenter-capi status -w --currency EUR

  # A dump, as of the time it was taken; only the large nodes, more columns
  kubectl karpenter-capi status -f dump.yaml --now 2026-11-30T10:30:00Z -l karpenter.sh/nodepool=large -o wide

  # For scripts
  kubectl karpenter-capi status -o name
  kubectl karpenter-capi status -o jsonpath='{.cost.currentPerHour}'
  kubectl karpenter-capi status -o custom-columns=NODE:.name,POOL:.nodePool,PRICE:.pricePerHour --no-headers")]
pub struct StatusArgs {
    /// Objects to show instead of the live clusters (see -f).
    #[command(flatten)]
    pub source: SourceArgs,
    /// Every namespace.
    #[command(flatten)]
    pub all: super::AllNamespaces,
    /// After the first view, keep re-reading (the live clusters or the -f files) every
    /// --interval and print the view again whenever it changed, until Ctrl-C.
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// How often -w re-reads.
    #[arg(
        long,
        default_value = "2s",
        value_name = "DURATION",
        requires = "watch"
    )]
    pub interval: GoDuration,
    /// Only the nodes whose labels match this selector (kubectl's syntax: k=v, k!=v, k, !k,
    /// k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts
    /// every node.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Print tables (and custom columns) without their header lines.
    #[arg(long)]
    pub no_headers: bool,
    /// The currency of the flavors' prices, shown with them (e.g. EUR for OVHcloud); prices carry
    /// no unit otherwise.
    #[arg(long, value_name = "CODE")]
    pub currency: Option<String>,
    /// Skip what each strategy would pay for the current pods (it plans every pod again, which
    /// takes a while on large clusters).
    #[arg(long)]
    pub no_compare: bool,
}
