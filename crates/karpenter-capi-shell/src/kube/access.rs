//! Asking a live cluster what the current identity may do: who it is (SelfSubjectReview) and its
//! rules per namespace (SelfSubjectRulesReview), as a [`crate::diagnose::access::Identity`] for
//! `doctor` to judge. Only reads; decides nothing.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{SelfSubjectRulesReview, SelfSubjectRulesReviewSpec};
use kube::Api;
use kube::api::PostParams;

use super::errors::cluster_error;
use crate::diagnose::access::{Grant, Identity, Rule};
use crate::error::{ClusterRole, Result};

/// The identity a client authenticates as, with its rules in each namespace. `fallback_subject`
/// names it when the cluster does not answer SelfSubjectReview (before Kubernetes 1.28).
pub async fn review_identity(
    client: &kube::Client,
    cluster: ClusterRole,
    namespaces: &[String],
    fallback_subject: &str,
) -> Result<Identity> {
    let subject = match Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
    {
        Ok(review) => review
            .status
            .and_then(|s| s.user_info)
            .and_then(|u| u.username)
            .map(|u| subject_of_username(&u))
            .unwrap_or_else(|| fallback_subject.to_string()),
        Err(e) => {
            tracing::debug!("SelfSubjectReview failed, naming the identity by its kubeconfig: {e}");
            fallback_subject.to_string()
        }
    };
    let api = Api::<SelfSubjectRulesReview>::all(client.clone());
    let mut grants = Vec::new();
    for ns in namespaces {
        let review = SelfSubjectRulesReview {
            spec: SelfSubjectRulesReviewSpec {
                namespace: Some(ns.clone()),
            },
            ..Default::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| {
                cluster_error(
                    cluster,
                    "create",
                    "selfsubjectrulesreviews.authorization.k8s.io",
                    "",
                    e,
                )
            })?;
        let status = answer.status.unwrap_or_default();
        if status.incomplete {
            tracing::warn!(
                "the {cluster} cluster's rules review for namespace {ns} is incomplete{}",
                status
                    .evaluation_error
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            );
        }
        for r in status.resource_rules {
            grants.push(Grant {
                rule: Rule {
                    api_groups: r.api_groups.unwrap_or_default(),
                    resources: r.resources.unwrap_or_default(),
                    verbs: r.verbs,
                    resource_names: r.resource_names.unwrap_or_default(),
                },
                namespace: Some(ns.clone()),
                via: "SelfSubjectRulesReview".to_string(),
            });
        }
    }
    Ok(Identity {
        subject,
        grants,
        builtin_roles: Vec::new(),
    })
}

/// `ServiceAccount/ns/name` for `system:serviceaccount:ns:name`, else `User/name`.
pub fn subject_of_username(username: &str) -> String {
    match username
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, name)) => format!("ServiceAccount/{ns}/{name}"),
        None => format!("User/{username}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_become_subjects() {
        assert_eq!(
            subject_of_username("system:serviceaccount:karpenter:karpenter"),
            "ServiceAccount/karpenter/karpenter"
        );
        assert_eq!(
            subject_of_username("kubernetes-admin"),
            "User/kubernetes-admin"
        );
    }
}
