//! Where Cluster API runs, asked rather than assumed: in a separate management cluster (the
//! seed's OVH setup: an MKS cluster holding Cluster API, a workload cluster it created), or in
//! the workload cluster itself (self-hosted, after `clusterctl move`). The flags decide when
//! they say; otherwise a terminal asks, and a run that cannot ask assumes self-hosted and says so.

use crate::error::Error;
use crate::vocab::names;

/// The two topologies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// Cluster API runs in the workload cluster.
    SelfHosted,
    /// Cluster API runs in a separate management cluster: the controller reads its kubeconfig
    /// from a Secret on the workload cluster.
    Separate,
}

/// The flags that say which topology it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TopologyFlags {
    /// `--management-kubeconfig` or `--management-context` was given.
    pub management: bool,
    /// `--controller-kubeconfig` was given (a credential for a management cluster).
    pub controller_kubeconfig: bool,
    /// `--self-hosted` was given.
    pub self_hosted: bool,
}

impl TopologyFlags {
    /// The topology the flags say, None when they say nothing (ask, or assume self-hosted).
    pub fn topology(self) -> Result<Option<Topology>, Error> {
        let separate = self.management || self.controller_kubeconfig;
        match (self.self_hosted, separate) {
            (true, true) => Err(Error::usage(
                "--self-hosted contradicts --management-kubeconfig, --management-context and --controller-kubeconfig (they name a separate management cluster)",
            )),
            (true, false) => Ok(Some(Topology::SelfHosted)),
            (false, true) => Ok(Some(Topology::Separate)),
            (false, false) => Ok(None),
        }
    }
}

/// The question a terminal asks when the flags do not say.
pub const QUESTION: &str = "does Cluster API run in a separate management cluster (e.g. an OVH Managed Kubernetes cluster that created this one)?";

/// The question for the management cluster's kubeconfig, once it is separate.
pub const KUBECONFIG_QUESTION: &str = "kubeconfig of the management cluster (empty: apply the management bundle yourself, then mint the controller's kubeconfig with `init kubeconfig`)";

/// What a run that cannot ask says when it assumes self-hosted.
pub const ASSUMED_SELF_HOSTED: &str = "no --management-kubeconfig: assuming a self-hosted cluster (Cluster API runs in the workload cluster). If Cluster API runs in a separate management cluster, pass --management-kubeconfig MGMT.kubeconfig; pass --self-hosted to confirm and silence this note";

/// After a separate-topology bundle without the controller's credential: how to create it.
pub fn credential_note(controller_namespace: &str, namespace: &str, cluster_name: &str) -> String {
    format!(
        "the controller reads the management cluster's kubeconfig from Secret {controller_namespace}/{}; after applying the management bundle, create it with:\n  kubectl karpenter-capi init kubeconfig -n {namespace} --cluster-name {cluster_name} --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -",
        names::MANAGEMENT_KUBECONFIG_SECRET
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_decide_when_they_say() {
        let none = TopologyFlags::default();
        assert_eq!(none.topology().unwrap(), None);
        let mgmt = TopologyFlags {
            management: true,
            ..none
        };
        assert_eq!(mgmt.topology().unwrap(), Some(Topology::Separate));
        let cred = TopologyFlags {
            controller_kubeconfig: true,
            ..none
        };
        assert_eq!(cred.topology().unwrap(), Some(Topology::Separate));
        let own = TopologyFlags {
            self_hosted: true,
            ..none
        };
        assert_eq!(own.topology().unwrap(), Some(Topology::SelfHosted));
        let both = TopologyFlags {
            self_hosted: true,
            management: true,
            ..none
        };
        assert!(
            both.topology()
                .unwrap_err()
                .to_string()
                .starts_with("--self-hosted contradicts --management-kubeconfig")
        );
    }
}
