//! The names of the provisioning strategies: a domain type of the core, which the command line
//! derives its `--strategy` values (and their help) from.

use serde::Serialize;

/// The provisioning strategies `simulate` and `explain` compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrategyName {
    /// Ours: the cheapest set of nodes per hour for all placeable pods.
    Cost,
    /// The upstream Karpenter Cluster API provider: price 0 everywhere, first name wins.
    KarpenterCapi,
    /// Cluster Autoscaler's default least-waste expander.
    LeastWaste,
}

impl StrategyName {
    /// Every strategy, in display order.
    pub const ALL: [StrategyName; 3] = [
        StrategyName::Cost,
        StrategyName::KarpenterCapi,
        StrategyName::LeastWaste,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyName::Cost => "cost",
            StrategyName::KarpenterCapi => "karpenter-capi",
            StrategyName::LeastWaste => "least-waste",
        }
    }

    /// One line about it (the command line's help for the value).
    pub fn about(self) -> &'static str {
        match self {
            StrategyName::Cost => "Ours: the cheapest set of nodes per hour for all placeable pods",
            StrategyName::KarpenterCapi => {
                "The upstream Karpenter Cluster API provider: price 0 everywhere, first name wins"
            }
            StrategyName::LeastWaste => "Cluster Autoscaler's default least-waste expander",
        }
    }
}
