//! The kustomize bases `init --output-dir` writes beside the bundles: `crds/` (the upstream
//! CustomResourceDefinitions at pinned release tags, as remote URLs, never copies), one
//! kustomization per bundle listing its files in apply order, and the optional ServiceMonitor as a
//! kustomize Component. Pure text: the shell (`karpenter-capi-shell`'s `files`) places the files.
//!
//! # Guarantees
//! - Every generated kustomization is named (`metadata.name`), so reading an output directory
//!   with `-f DIR -R` never sees two unnamed objects of one kind.
//! - The CRD URLs name a tag, never a branch: a re-run of the same `init` installs the same CRDs.

/// The Karpenter release whose NodePool and NodeClaim API the controller and `cost` follow.
pub(crate) const KARPENTER_TAG: &str = "v1.14.1";
/// The karpenter-provider-cluster-api release whose ClusterAPINodeClass CRD the node class is.
pub(crate) const PROVIDER_TAG: &str = "v0.2.0";

/// The directory of the CRD base under `--output-dir`.
pub const CRDS_DIR: &str = "crds";
/// The file every kustomize base is read from.
pub const KUSTOMIZATION: &str = "kustomization.yaml";
/// The optional ServiceMonitor component, under `workload/`.
pub const MONITORING_DIR: &str = "monitoring";

/// One upstream CRD file at a release tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamCrd {
    /// `owner/name` on GitHub.
    pub(crate) repository: &'static str,
    /// The release tag.
    pub(crate) tag: &'static str,
    /// The file's path in the repository at that tag.
    pub(crate) path: &'static str,
}

impl UpstreamCrd {
    /// The raw file at the tag, as a kustomize remote resource.
    pub fn url(&self) -> String {
        format!(
            "https://raw.githubusercontent.com/{}/{}/{}",
            self.repository, self.tag, self.path
        )
    }

    /// The file name (`karpenter.sh_nodepools.yaml`).
    pub fn file_name(&self) -> &'static str {
        self.path.rsplit('/').next().unwrap_or(self.path)
    }

    /// The CRD's name, `<plural>.<group>` (`nodepools.karpenter.sh`), from controller-gen's
    /// `<group>_<plural>.yaml` file name.
    pub fn crd_name(&self) -> String {
        let stem = self.file_name().trim_end_matches(".yaml");
        match stem.split_once('_') {
            Some((group, plural)) => format!("{plural}.{group}"),
            None => stem.to_string(),
        }
    }
}

/// The CRDs the workload cluster needs: Karpenter's NodePool and NodeClaim (core
/// `pkg/apis/crds/`) and the provider's ClusterAPINodeClass (its `pkg/apis/crds/`, the
/// canonical controller-gen output; `config/crd/bases/` at that tag is an older generation).
pub const CRDS: [UpstreamCrd; 3] = [
    UpstreamCrd {
        repository: "kubernetes-sigs/karpenter",
        tag: KARPENTER_TAG,
        path: "pkg/apis/crds/karpenter.sh_nodepools.yaml",
    },
    UpstreamCrd {
        repository: "kubernetes-sigs/karpenter",
        tag: KARPENTER_TAG,
        path: "pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
    },
    UpstreamCrd {
        repository: "kubernetes-sigs/karpenter-provider-cluster-api",
        tag: PROVIDER_TAG,
        path: "pkg/apis/crds/karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml",
    },
];

/// The command that installs (or upgrades) the CRDs from an `init --output-dir DIR`.
pub fn apply_crds_command(dir: &str) -> String {
    format!("kubectl apply --server-side -k {dir}/{CRDS_DIR}")
}

/// `kubectl wait` for the CRDs of [`CRDS`] to be served.
pub(crate) fn wait_crds_command() -> String {
    let names: Vec<String> = CRDS
        .iter()
        .map(|c| format!("crd/{}", c.crd_name()))
        .collect();
    format!(
        "kubectl wait --for condition=Established --timeout 60s {}",
        names.join(" ")
    )
}

/// The commands that apply an `init --output-dir DIR`, in order, one per line, each with the
/// cluster it runs against: CRDs, then the management bundle (RBAC first), then the controller.
pub fn apply_steps(dir: &str, separate_management: bool) -> String {
    let management = if separate_management {
        "kubectl --kubeconfig MGMT.kubeconfig apply --server-side -k"
    } else {
        "kubectl apply --server-side -k"
    };
    format!(
        "  {}    # workload cluster: the CRDs\n  {}\n  {management} {dir}/management    # management cluster: RBAC, templates, MachineDeployments\n  kubectl apply --server-side -k {dir}/workload    # workload cluster: RBAC, then the controller and the NodePool\n",
        apply_crds_command(dir),
        wait_crds_command(),
    )
}

fn header(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("# {l}\n")).collect()
}

fn resources(list: &[String]) -> String {
    let mut out = String::from("resources:\n");
    for r in list {
        // A JSON string is a YAML double-quoted scalar: any file name is safe.
        out.push_str(&format!(
            "- {}\n",
            serde_json::to_string(r).unwrap_or_default()
        ));
    }
    out
}

/// `crds/kustomization.yaml`: the pinned upstream CRDs, applied first, to the workload cluster.
pub fn crds_kustomization() -> String {
    let wait = format!("  {}", wait_crds_command());
    let mut out = header(&[
        "Step 1, workload cluster: the CRDs of NodePool, NodeClaim (Karpenter) and",
        "ClusterAPINodeClass (karpenter-provider-cluster-api), at pinned release tags.",
        "  kubectl apply --server-side -k crds",
        &wait,
        "Upgrading: re-run a newer `kubectl karpenter-capi init --output-dir` (new tags here),",
        "then the same apply; CRDs are never deleted by it, and stored objects stay readable as",
        "long as the new CRD still serves their version (check with `kubectl karpenter-capi doctor`).",
    ]);
    out.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n");
    out.push_str("metadata:\n  name: karpenter-capi-crds\n");
    out.push_str(&resources(
        &CRDS.iter().map(UpstreamCrd::url).collect::<Vec<_>>(),
    ));
    out
}

/// `management/kustomization.yaml`: the management bundle's files in apply order.
pub fn management_kustomization(files: &[String]) -> String {
    let mut out = header(&[
        "Step 2, management cluster (where Cluster API runs): the controller's least-privilege",
        "identity (ServiceAccount, Role, RoleBinding), then the bootstrap and machine templates and",
        "the member MachineDeployments (replicas: 0).",
        "  kubectl --kubeconfig MANAGEMENT.kubeconfig apply --server-side -k management",
    ]);
    out.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n");
    out.push_str("metadata:\n  name: karpenter-capi-management\n");
    out.push_str(&resources(files));
    out
}

/// `workload/kustomization.yaml`: the controller's base, in apply order: namespace, RBAC, the
/// controller (Deployment, PodDisruptionBudget, metrics Service), then the node class and NodePool.
pub fn workload_kustomization(files: &[String]) -> String {
    let mut out = header(&[
        "Step 3, workload cluster, after step 1 (the NodePool and node class need their CRDs):",
        "namespace, RBAC, then the controller (two replicas under leader election, a",
        "PodDisruptionBudget, the /metrics Service), then the node class and the NodePool.",
        "  kubectl apply --server-side -k workload",
        "kustomize keeps RBAC ahead of the Deployment. For a ServiceMonitor (Prometheus Operator),",
        "build an overlay with `components: [<this dir>/monitoring]`.",
    ]);
    out.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n");
    out.push_str("metadata:\n  name: karpenter-capi-workload\n");
    out.push_str(&resources(files));
    out
}

/// `workload/monitoring/kustomization.yaml`: the ServiceMonitor as a Component, not in the
/// default resources (its CRD exists only where the Prometheus Operator runs).
pub fn monitoring_component(files: &[String]) -> String {
    let mut out = header(&[
        "Optional: a ServiceMonitor for the controller's /metrics (needs the Prometheus Operator's",
        "CRDs). Use it from an overlay:",
        "  resources: [../setup/workload]",
        "  components: [../setup/workload/monitoring]",
    ]);
    out.push_str("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n");
    out.push_str("metadata:\n  name: karpenter-capi-monitoring\n");
    out.push_str(&resources(files));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_urls_name_the_pinned_tags_and_the_crd_names_follow_the_file_names() {
        let urls: Vec<String> = CRDS.iter().map(UpstreamCrd::url).collect();
        assert_eq!(
            urls,
            [
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml",
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter/v1.14.1/pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
                "https://raw.githubusercontent.com/kubernetes-sigs/karpenter-provider-cluster-api/v0.2.0/pkg/apis/crds/karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml",
            ]
        );
        let names: Vec<String> = CRDS.iter().map(UpstreamCrd::crd_name).collect();
        assert_eq!(
            names,
            [
                "nodepools.karpenter.sh",
                "nodeclaims.karpenter.sh",
                "clusterapinodeclasses.karpenter.cluster.x-k8s.io"
            ]
        );
        assert_eq!(
            apply_crds_command("setup"),
            "kubectl apply --server-side -k setup/crds"
        );
    }

    #[test]
    fn the_apply_steps_go_crds_management_workload() {
        assert_eq!(
            apply_steps("setup", true),
            "  kubectl apply --server-side -k setup/crds    # workload cluster: the CRDs\n  \
             kubectl wait --for condition=Established --timeout 60s crd/nodepools.karpenter.sh crd/nodeclaims.karpenter.sh crd/clusterapinodeclasses.karpenter.cluster.x-k8s.io\n  \
             kubectl --kubeconfig MGMT.kubeconfig apply --server-side -k setup/management    # management cluster: RBAC, templates, MachineDeployments\n  \
             kubectl apply --server-side -k setup/workload    # workload cluster: RBAC, then the controller and the NodePool\n"
        );
        assert!(
            apply_steps("d", false)
                .contains("\n  kubectl apply --server-side -k d/management    # management")
        );
    }

    #[test]
    fn kustomizations_list_their_files_quoted_and_are_named() {
        let text = workload_kustomization(&["01-namespace-x.yaml".to_string()]);
        assert!(
            text.ends_with(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n  name: karpenter-capi-workload\nresources:\n- \"01-namespace-x.yaml\"\n"
            ),
            "{text}"
        );
        assert!(text.lines().take_while(|l| l.starts_with('#')).count() >= 4);
        let text = monitoring_component(&["servicemonitor.yaml".to_string()]);
        assert!(text.contains("kind: Component\nmetadata:\n  name: karpenter-capi-monitoring\n"));
    }
}
