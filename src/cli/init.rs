//! The arguments of `init` and `init kubeconfig`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::values::capi_version_values;
use super::{CapiVersion, DryRun};

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
    /// NodePool consolidation policy: WhenEmpty, WhenEmptyOrUnderutilized or Balanced.
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
