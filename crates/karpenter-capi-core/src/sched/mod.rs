//! Pure scheduling: the catalog of offerings, whether a pod fits (with reasons), the cluster
//! state a plan grows, and the provisioning strategies.

pub mod catalog;
pub mod fit;
pub mod free_index;
pub mod min_values;
pub mod report;
pub mod state;
pub mod strategy;
pub mod topology;

#[cfg(test)]
mod conformance;

pub use fit::{Rejection, Unfit};
pub use strategy::{Placement, Strategy};
