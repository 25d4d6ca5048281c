//! Why a node is disrupted, as data: the reasons Karpenter names on claims, Events, metrics and
//! budgets, spelled once here and serialized exactly as Karpenter spells them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A disruption reason. The first three are the NodePool CRD's budget reasons (core
/// `pkg/apis/v1/nodepool.go` `DisruptionReason`); `Expired` is the expiry of `expireAfter`, a
/// forceful disruption that no budget names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) enum DisruptionReason {
    /// Removal of an empty node.
    Empty,
    /// Consolidation of an underutilized node (deleted or replaced by a cheaper one).
    Underutilized,
    /// Replacement of a node that no longer matches its NodePool.
    Drifted,
    /// A node older than its `expireAfter`.
    Expired,
}

impl DisruptionReason {
    /// Every reason, in the order above.
    pub(crate) const ALL: [DisruptionReason; 4] = [
        DisruptionReason::Empty,
        DisruptionReason::Underutilized,
        DisruptionReason::Drifted,
        DisruptionReason::Expired,
    ];

    /// The reason as Karpenter spells it (annotations, Events, metrics, JSON).
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            DisruptionReason::Empty => "Empty",
            DisruptionReason::Underutilized => "Underutilized",
            DisruptionReason::Drifted => "Drifted",
            DisruptionReason::Expired => "Expired",
        }
    }

    /// The reason spelled `text`, exactly (case matters, as in the API).
    pub(crate) fn parse(text: &str) -> Option<DisruptionReason> {
        DisruptionReason::ALL
            .into_iter()
            .find(|r| r.as_str() == text)
    }

    /// The reason a budget's `reasons` list may name as `text` (the CRD's enum: not `Expired`).
    pub(crate) fn parse_budget(text: &str) -> Option<DisruptionReason> {
        DisruptionReason::parse(text).filter(|r| r.budgeted())
    }

    /// Whether budgets can name this reason.
    pub(crate) const fn budgeted(self) -> bool {
        !matches!(self, DisruptionReason::Expired)
    }

    /// Whether this disruption is voluntary (emptiness, consolidation, drift: the claim is
    /// deleted only once its pods have a home) rather than forceful (expiry: drained at once).
    pub(crate) const fn is_voluntary(self) -> bool {
        matches!(
            self,
            DisruptionReason::Empty | DisruptionReason::Underutilized | DisruptionReason::Drifted
        )
    }
}

impl fmt::Display for DisruptionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for DisruptionReason {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_as_karpenter_spells_them_both_ways() {
        for r in DisruptionReason::ALL {
            assert_eq!(DisruptionReason::parse(r.as_str()), Some(r));
            assert_eq!(r.to_string(), r.as_str());
            assert_eq!(
                serde_json::to_string(&r).ok(),
                Some(format!("\"{}\"", r.as_str()))
            );
        }
        let names: Vec<_> = DisruptionReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, ["Empty", "Underutilized", "Drifted", "Expired"]);
        assert_eq!(DisruptionReason::parse("empty"), None);
        assert_eq!(DisruptionReason::parse_budget("Expired"), None);
        assert_eq!(
            DisruptionReason::parse_budget("Drifted"),
            Some(DisruptionReason::Drifted)
        );
        assert!(!DisruptionReason::Expired.is_voluntary());
    }
}
