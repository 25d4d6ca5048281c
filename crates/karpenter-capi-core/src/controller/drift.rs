//! Drift as Karpenter defines it (core `pkg/controllers/nodeclaim/disruption/drift.go`): static
//! drift by a hash of the NodePool's template, requirement drift by checking the claim's labels
//! against the pool's requirements, and a flavor the pool no longer offers. Plus the stamping of
//! our hash on NodeClaims (core `pkg/controllers/nodepool/hash/controller.go`).
//!
//! The hash is ours, not Karpenter's: it covers exactly the fields Karpenter hashes
//! (`pkg/apis/v1/nodepool.go`: the template's labels, annotations, taints, startup taints,
//! nodeClassRef, terminationGracePeriod and expireAfter; requirements are `hash:"ignore"`), but
//! with our own function, so its version is ours ([`HASH_VERSION`], never Karpenter's `v3`). It is
//! computed from the NodePool on every pass and written on NodeClaims only: a
//! `karpenter.sh/nodepool-hash` written on a NodePool by another controller is never read.

use crate::vocab::keys;
use serde_json::Value;

use super::action::Action;
use super::fnv::Fnv1a;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::nodepool::NodePool;
use crate::model::snapshot::Snapshot;
use crate::model::taints::Taint;
use crate::vocab::keys::HASH_VERSION_ANNOTATION;
use crate::vocab::keys::NODEPOOL_HASH_ANNOTATION;

/// The version of our hash. A claim stamped with any other version (Karpenter's `v3`, or an
/// older one of ours) is re-stamped, never judged drifted by a hash it cannot be compared with.
pub const HASH_VERSION: &str = "karpenter-capi-v1";

/// Why a claim is drifted, with Karpenter's reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriftReason {
    /// The NodePool's template (hashed fields) changed.
    NodePoolDrifted,
    /// A requirement of the NodePool no longer admits the claim's labels.
    RequirementsDrifted,
    /// The pool no longer offers the claim's flavor (the MachineDeployment left or broke).
    InstanceTypeNotFound,
    /// The MachineDeployment's `spec.template` changed since the claim was made (ours: the
    /// provider's `IsDrifted` has no equivalent upstream).
    MachineTemplateDrifted,
}

impl DriftReason {
    /// Karpenter's CamelCase reason.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DriftReason::NodePoolDrifted => "NodePoolDrifted",
            DriftReason::RequirementsDrifted => "RequirementsDrifted",
            DriftReason::InstanceTypeNotFound => "InstanceTypeNotFound",
            DriftReason::MachineTemplateDrifted => "MachineTemplateDrifted",
        }
    }
}

/// Sorted `key=value:Effect` renderings: Karpenter hashes taint lists as sets.
fn taint_set(taints: &[Taint]) -> Vec<String> {
    let mut v: Vec<String> = taints.iter().map(|t| t.to_string()).collect();
    v.sort();
    v.dedup();
    v
}

/// Keys sorted (serde_json maps are), so the rendering is canonical.
fn canonical(v: &Value) -> String {
    v.to_string()
}

/// Our hash of a NodePool's template over exactly the fields Karpenter hashes. Requirements are
/// not hashed (widening one is no drift; a claim a requirement no longer admits is caught by
/// [`DriftReason::RequirementsDrifted`]). Unset and zero values hash like absent ones, and
/// `expireAfter` is taken with its CRD default (`720h`), as Karpenter hashes the defaulted object.
pub fn nodepool_hash(pool: &NodePool) -> String {
    let mut h = Fnv1a::new();
    for (k, v) in &pool.labels {
        h.field(&format!("label:{k}={v}"));
    }
    for (k, v) in &pool.annotations {
        h.field(&format!("annotation:{k}={v}"));
    }
    for t in taint_set(&pool.taints) {
        h.field(&format!("taint:{t}"));
    }
    for t in taint_set(&pool.startup_taints) {
        h.field(&format!("startupTaint:{t}"));
    }
    if let Some(r) = &pool.node_class_ref {
        h.field(&format!("nodeClassRef:{}", canonical(r)));
    } else if let Some(n) = &pool.node_class {
        h.field(&format!("nodeClassRef:{n}"));
    }
    if let Some(t) = pool
        .termination_grace_period
        .as_deref()
        .filter(|t| !t.is_empty())
    {
        h.field(&format!("terminationGracePeriod:{t}"));
    }
    let expire = pool
        .expire_after
        .as_deref()
        .filter(|e| !e.is_empty())
        .unwrap_or("720h");
    h.field(&format!("expireAfter:{expire}"));
    format!("{}", h.finish())
}

/// Whether (and why) a claim of `pool` is drifted. Only launched claims drift, as upstream.
pub(crate) fn drift_reason(
    snapshot: &Snapshot,
    pool: &NodePool,
    claim: &NodeClaimRecord,
    now: jiff::Timestamp,
) -> Option<DriftReason> {
    if !(claim.condition_true("Launched") || claim.provider_id.is_some()) {
        return None;
    }
    // Static drift: only a hash of our own version is comparable.
    if claim
        .annotations
        .get(HASH_VERSION_ANNOTATION)
        .is_some_and(|v| v == HASH_VERSION)
        && claim
            .annotations
            .get(NODEPOOL_HASH_ANNOTATION)
            .is_some_and(|h| *h != nodepool_hash(pool))
    {
        return Some(DriftReason::NodePoolDrifted);
    }
    if requirements_drifted(pool, claim) {
        return Some(DriftReason::RequirementsDrifted);
    }
    if let Some(md) = snapshot.claim_machine_deployment(claim)
        && !snapshot
            .members_of(pool)
            .any(|m| m.key() == md && m.flavor.is_ok())
    {
        return Some(DriftReason::InstanceTypeNotFound);
    }
    if let (Some(recorded), Some(md)) = (
        claim
            .annotations
            .get(keys::TEMPLATE_HASH_ANNOTATION),
        snapshot
            .claim_machine_deployment(claim)
            .and_then(|md| snapshot.machine_deployments.iter().find(|m| m.key() == md)),
    ) && *recorded != super::provision::template_hash(md)
        // Cluster API's own rollout replaces these Machines: not a second time by us
        // (OnDelete leaves the replacement to our budgeted drift).
        && (super::rollout::strategy(md) == "OnDelete"
            || super::rollout::rolling_out(snapshot, md, now).is_none())
    {
        return Some(DriftReason::MachineTemplateDrifted);
    }
    None
}

/// Whether a requirement of the pool no longer admits the claim's labels, as core's
/// `areRequirementsDrifted` (`drift.go`) judges with `Requirements.Compatible`: on a key the
/// claim has, its value must satisfy the requirement; a key the claim lacks is drift when the
/// requirement needs the label (`In`, `Exists`, `Gt`, `Lt`; never `NotIn` or `DoesNotExist`).
///
/// The missing key is judged only for a requirement the pool gained after the claim was made:
/// one on a key the claim's own `spec.requirements` does not list, while that list is not empty.
/// A claim made under a requirement whose label it never got (a multi-valued or `Exists`
/// requirement no offering resolved) is not drifted by it, nor is a claim recording no
/// requirements: upstream would drift both, but then a claim could drift for a label nobody ever
/// gave it, and every adopted or older claim of a pool at once.
fn requirements_drifted(pool: &NodePool, claim: &NodeClaimRecord) -> bool {
    let added_since = |key: &str| {
        !claim.requirement_keys.is_empty() && !claim.requirement_keys.iter().any(|k| k == key)
    };
    pool.requirements.iter().any(|r| {
        (claim.labels.contains_key(&r.key) || added_since(&r.key)) && !r.matches(&claim.labels)
    })
}

/// `stampNodeClaimHash` for every live claim of a pool whose hash version is not ours: the hash
/// computed now and our version. A claim already marked Drifted keeps its hash (it stays
/// drifted; the new version alone is written), as upstream's hash controller does.
pub(crate) fn stamps(snapshot: &Snapshot) -> Vec<Action> {
    let mut out = Vec::new();
    for pool in &snapshot.nodepools {
        let hash = nodepool_hash(pool);
        for claim in snapshot
            .nodeclaims
            .iter()
            .filter(|c| !c.deleting && c.node_pool.as_deref() == Some(pool.name.as_str()))
        {
            if claim
                .annotations
                .get(HASH_VERSION_ANNOTATION)
                .is_some_and(|v| v == HASH_VERSION)
            {
                continue;
            }
            let drifted = claim.condition_true("Drifted");
            out.push(Action::StampNodeClaimHash {
                target: format!("NodeClaim/{}", claim.name),
                node_claim: claim.name.clone(),
                hash: (!drifted).then(|| hash.clone()),
                hash_version: HASH_VERSION.to_string(),
                previous_version: claim.annotations.get(HASH_VERSION_ANNOTATION).cloned(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::{Operator, Requirement};

    #[test]
    fn requirements_are_not_hashed_but_template_fields_are() {
        let base = NodePool::implicit();
        let h = nodepool_hash(&base);
        let mut widened = base.clone();
        widened.requirements.push(Requirement {
            key: "topology.kubernetes.io/zone".into(),
            operator: Operator::In,
            values: vec!["a".into(), "b".into()],
        });
        assert_eq!(
            nodepool_hash(&widened),
            h,
            "requirements are hash:\"ignore\""
        );
        let mut labelled = base.clone();
        labelled.labels.insert("team".into(), "a".into());
        assert_ne!(nodepool_hash(&labelled), h);
        let mut expiring = base.clone();
        expiring.expire_after = None;
        assert_eq!(
            nodepool_hash(&expiring),
            h,
            "expireAfter defaults to 720h before hashing"
        );
        expiring.expire_after = Some("24h".into());
        assert_ne!(nodepool_hash(&expiring), h);
        let mut tainted = base.clone();
        tainted.taints = vec![
            Taint::parse("a=1:NoSchedule").unwrap(),
            Taint::parse("b=2:NoSchedule").unwrap(),
        ];
        let mut reordered = base.clone();
        reordered.taints = vec![
            Taint::parse("b=2:NoSchedule").unwrap(),
            Taint::parse("a=1:NoSchedule").unwrap(),
        ];
        assert_eq!(
            nodepool_hash(&tainted),
            nodepool_hash(&reordered),
            "taints hash as a set"
        );
        assert_ne!(HASH_VERSION, "v3");
    }
}
