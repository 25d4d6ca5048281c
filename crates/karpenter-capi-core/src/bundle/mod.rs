//! `init`'s pure core: validated setup inputs in, the management and workload bundles out.
//! Flavor parsing lives in [`flavor`], the provider table in [`infra`], template rendering in
//! [`render`]. Nothing here reads files, prompts or talks to a cluster.
//!
//! # Guarantees
//! - Member MachineDeployments carry the membership label on `metadata.labels` only, say
//!   `replicas: 0`, and carry capacity, labels, taints, price and size annotations.
//! - The KubeadmConfigTemplate registers nodes with `karpenter.sh/unregistered:NoExecute`.
//! - The RBAC lists exactly [`crate::vocab::permissions`] (plus read on the provider's templates).
//! - `consolidateAfter` is always set on the NodePool.

pub mod clone;
pub mod flavor;
pub mod infra;
pub mod kubeconfig;
pub mod kustomize;
pub mod render;
pub mod sizing;
pub mod topology;

use crate::error::{ClusterRole, Error};
use crate::model::duration::NillableDuration;
use crate::model::taints::Taint;

pub use flavor::FlavorSpec;
pub(crate) use infra::InfraKind;
pub use render::{Bundle, Document, Templates};

/// The controller image `init` names unless told otherwise: the project's image (built by the
/// `Dockerfile`) at this binary's own version, so the manifests run what generated them
/// (`--help` spells the same name; tests/it/packaging.rs keeps them and the Dockerfile equal).
pub const DEFAULT_IMAGE: &str = concat!(
    "ghcr.io/karpenter-capi/kubectl-karpenter-capi:v",
    env!("CARGO_PKG_VERSION")
);

/// Everything `init` needs, validated.
#[derive(Debug, Clone)]
pub struct SetupInput {
    /// The Cluster API Cluster's name.
    pub cluster_name: String,
    /// Its namespace on the management cluster.
    pub namespace: String,
    /// Kubernetes version of the workers, e.g. `v1.36.1`.
    pub kubernetes_version: String,
    /// Shape of the generated Cluster API objects.
    pub capi_version: CapiVersion,
    /// The infrastructure provider.
    pub infra: &'static InfraKind,
    /// The flavors, in the order given.
    pub flavors: Vec<FlavorSpec>,
    /// Extra taints every node registers with (`--node-taint`), as `key=value:Effect`.
    pub node_taints: Vec<String>,
    /// The controller's container image.
    pub image: String,
    /// Pods the cluster is expected to hold (`--expected-pods`): sizes the controller's memory.
    pub expected_pods: u64,
    /// Nodes it is expected to hold (`--expected-nodes`, or pods / 10).
    pub expected_nodes: u64,
    /// OS image for providers whose template requires one (`--machine-image`).
    pub machine_image: Option<String>,
    /// The worker templates to clone per flavor (`--from-cluster`), read from the cluster.
    pub clone_from: Option<clone::CloneSource>,
    /// Namespace of the controller on the workload cluster.
    pub controller_namespace: String,
    /// NodePool `consolidationPolicy`.
    pub consolidation_policy: String,
    /// NodePool `consolidateAfter`.
    pub consolidate_after: NillableDuration,
    /// NodePool `expireAfter`.
    pub expire_after: NillableDuration,
    /// Whether the management cluster is a different cluster: the controller then reads its
    /// kubeconfig from a Secret.
    pub separate_management: bool,
    /// The management credential to store in that Secret, when known.
    pub management_kubeconfig: Option<kubeconfig::ControllerCredential>,
}

impl SetupInput {
    /// Checks names and cross-field rules not covered by parsing.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        flavor::check_dns_label(&self.cluster_name)
            .map_err(|p| Error::usage(format!("--cluster-name: {p}")))?;
        flavor::check_dns_label(&self.namespace)
            .map_err(|p| Error::usage(format!("--namespace: {p}")))?;
        flavor::check_dns_label(&self.controller_namespace)
            .map_err(|p| Error::usage(format!("--controller-namespace: {p}")))?;
        check_version(&self.kubernetes_version)?;
        if self.image.trim().is_empty() || self.image.chars().any(char::is_whitespace) {
            return Err(Error::usage(format!(
                "--image: {:?} is not a container image reference",
                self.image
            )));
        }
        flavor::validate_catalog(&self.flavors)?;
        for f in &self.flavors {
            let md = render::machine_deployment_name(&self.cluster_name, &f.name);
            // The name is also the value of the `cluster.x-k8s.io/deployment-name` label.
            if md.len() > 63 {
                return Err(Error::usage(format!(
                    "flavor {:?}: the MachineDeployment name {md:?} is longer than 63 characters; use a shorter --cluster-name or flavor name",
                    f.name
                )));
            }
            if self.infra.flavor_field == infra::FlavorField::CpuMemory && f.cpu_millis % 1000 != 0
            {
                return Err(Error::usage(format!(
                    "flavor {:?}: cpu: {} machines need whole CPUs, got {}",
                    f.name, self.infra.kind, f.cpu
                )));
            }
        }
        for t in &self.node_taints {
            Taint::parse(t).map_err(|e| Error::usage(format!("--node-taint: {e}")))?;
        }
        // The policies of Karpenter v1.14.1's NodePool CRD.
        if !["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]
            .contains(&self.consolidation_policy.as_str())
        {
            return Err(Error::usage(format!(
                "--consolidation-policy: {:?} is not WhenEmpty, WhenEmptyOrUnderutilized or Balanced",
                self.consolidation_policy
            )));
        }
        if self.infra.needs_image
            && self.clone_from.is_none()
            && self.machine_image.as_deref().is_none_or(str::is_empty)
        {
            return Err(Error::usage(format!(
                "--machine-image: required for {} (the OS image of the new machines), or clone an existing template with --infrastructure-template",
                self.infra.kind
            )));
        }
        Ok(())
    }
}

/// A Kubernetes version as Cluster API wants it: `v1.36.1`.
pub fn check_version(text: &str) -> Result<(), Error> {
    let ok = text.strip_prefix('v').is_some_and(|rest| {
        let core = rest.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    });
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "--kubernetes-version: {text:?} is not a version like v1.36.1"
        )))
    }
}

/// The comment heading every document: which cluster it is for.
pub fn target_comment(cluster: ClusterRole, namespace: Option<&str>) -> String {
    match (cluster, namespace) {
        (ClusterRole::Management, Some(ns)) => {
            format!("# target: management cluster (where Cluster API runs), namespace {ns}")
        }
        (ClusterRole::Management, None) => {
            "# target: management cluster (where Cluster API runs)".to_string()
        }
        (ClusterRole::Workload, Some(ns)) => {
            format!("# target: workload cluster (where pods run), namespace {ns}")
        }
        (ClusterRole::Workload, None) => "# target: workload cluster (where pods run)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert!(check_version("v1.36.1").is_ok());
        assert!(check_version("v1.36.1-rc.0").is_ok());
        assert_eq!(
            check_version("1.36").unwrap_err().to_string(),
            "--kubernetes-version: \"1.36\" is not a version like v1.36.1"
        );
    }
}

/// Cluster API versions `init` can generate (the command line derives `--capi-version` from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapiVersion {
    /// cluster.x-k8s.io/v1beta2 (storage version since Cluster API 1.11).
    V1beta2,
    /// cluster.x-k8s.io/v1beta1 (deprecated, still served).
    V1beta1,
}

impl CapiVersion {
    /// Every version, newest first.
    pub const ALL: [CapiVersion; 2] = [CapiVersion::V1beta2, CapiVersion::V1beta1];

    /// The version's name (`v1beta2`).
    pub fn as_str(self) -> &'static str {
        match self {
            CapiVersion::V1beta2 => "v1beta2",
            CapiVersion::V1beta1 => "v1beta1",
        }
    }

    /// One line about it.
    pub fn about(self) -> &'static str {
        match self {
            CapiVersion::V1beta2 => {
                "cluster.x-k8s.io/v1beta2 (storage version since Cluster API 1.11)"
            }
            CapiVersion::V1beta1 => "cluster.x-k8s.io/v1beta1 (deprecated, still served)",
        }
    }
}
