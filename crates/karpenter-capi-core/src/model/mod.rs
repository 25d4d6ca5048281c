//! Domain types and the parsing of Kubernetes objects into them: quantities, resources, labels,
//! taints, pod demand, flavors, NodePools, and the [`Snapshot`] that holds them all.

pub(crate) mod condition;
pub(crate) mod constraints;
pub(crate) mod cron;
pub mod dedup;
pub mod duration;
pub mod fields;
pub mod flavor;
#[cfg(test)]
mod fuzz;
pub mod hostport;
pub(crate) mod labels;
pub mod load;
pub(crate) mod machine;
pub(crate) mod nodeclaim;
pub(crate) mod nodepool;
pub mod object;
pub mod odd;
pub(crate) mod pod;
pub(crate) mod pool_validation;
pub mod quantity;
pub mod resources;
pub mod snapshot;
pub mod taints;
pub(crate) mod volume;

pub use flavor::{Flavor, Price};
pub use resources::Resources;
pub use snapshot::Snapshot;
