//! Domain types and the parsing of Kubernetes objects into them: quantities, resources, labels,
//! taints, pod demand, flavors, NodePools, and the [`Snapshot`] that holds them all.

pub mod condition;
pub mod constraints;
pub mod cron;
pub mod dedup;
pub mod duration;
pub mod fields;
pub mod flavor;
#[cfg(test)]
mod fuzz;
pub mod hostport;
pub mod labels;
pub mod load;
pub mod machine;
pub mod nodeclaim;
pub mod nodepool;
pub mod object;
pub mod odd;
pub mod pod;
pub mod quantity;
pub mod resources;
pub mod snapshot;
pub mod taints;
pub mod volume;

pub use flavor::{Flavor, Price};
pub use labels::{Labels, Requirement};
pub use pod::PodDemand;
pub use resources::Resources;
pub use snapshot::Snapshot;
