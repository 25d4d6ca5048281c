//! `doctor`'s check of the CRDs the controller lists: a CRD a cluster does not serve (in any
//! version the controller reads) is an error finding naming the CRD, the cluster and the command
//! that installs it, instead of an error that stops `doctor` before any other check.

use crate::error::ClusterRole;

use super::{Area, Cause, Finding, Report, Severity};

/// One CRD not served by a cluster, as the shell found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingCrd {
    /// The cluster that does not serve it.
    pub cluster: ClusterRole,
    /// `<plural>.<group>`, e.g. `nodepools.karpenter.sh`.
    pub resource: String,
    /// The `group/version`s tried, preferred first.
    pub api_versions: Vec<String>,
    /// What installs it (the shell's hint for a missing CRD).
    pub remedy: String,
}

/// One error per missing CRD, in the order the shell listed them.
pub(crate) fn check(missing: &[MissingCrd], out: &mut Vec<Finding>) {
    for m in missing {
        out.push(Finding::new(
            Area::Setup,
            Cause::CrdMissing,
            Severity::Error,
            format!("CustomResourceDefinition/{}", m.resource),
            format!(
                "not installed on the {} cluster (no API served for {}): the controller cannot list {} and stops every pass",
                m.cluster,
                m.api_versions.join(" or "),
                m.resource.split('.').next().unwrap_or(&m.resource)
            ),
            m.remedy.clone(),
        ));
    }
}

/// The report with one error per missing CRD first in its area (a missing CRD explains the
/// findings about the objects it would hold).
pub fn with_missing_crds(missing: &[MissingCrd], report: Report) -> Report {
    let mut findings = Vec::new();
    check(missing, &mut findings);
    findings.extend(report.findings);
    // Stable: areas in display order, the missing CRDs first within theirs.
    findings.sort_by_key(|f| f.area);
    Report { findings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_missing_crd_is_one_error_naming_cluster_versions_and_fix() {
        let missing = [
            MissingCrd {
                cluster: ClusterRole::Workload,
                resource: "nodepools.karpenter.sh".to_string(),
                api_versions: vec!["karpenter.sh/v1".to_string()],
                remedy: "kubectl apply --server-side -k DIR/crds".to_string(),
            },
            MissingCrd {
                cluster: ClusterRole::Management,
                resource: "machines.cluster.x-k8s.io".to_string(),
                api_versions: vec![
                    "cluster.x-k8s.io/v1beta2".to_string(),
                    "cluster.x-k8s.io/v1beta1".to_string(),
                ],
                remedy: "clusterctl init".to_string(),
            },
        ];
        let mut out = Vec::new();
        check(&missing, &mut out);
        let got: Vec<(Cause, Severity, &str, &str, &str)> = out
            .iter()
            .map(|f| {
                (
                    f.cause,
                    f.severity,
                    f.subject.as_str(),
                    f.message.as_str(),
                    f.remedy.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    Cause::CrdMissing,
                    Severity::Error,
                    "CustomResourceDefinition/nodepools.karpenter.sh",
                    "not installed on the workload cluster (no API served for karpenter.sh/v1): the controller cannot list nodepools and stops every pass",
                    "kubectl apply --server-side -k DIR/crds"
                ),
                (
                    Cause::CrdMissing,
                    Severity::Error,
                    "CustomResourceDefinition/machines.cluster.x-k8s.io",
                    "not installed on the management cluster (no API served for cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1): the controller cannot list machines and stops every pass",
                    "clusterctl init"
                ),
            ]
        );
        assert!(out.iter().all(|f| f.area == Area::Setup));
    }
}
