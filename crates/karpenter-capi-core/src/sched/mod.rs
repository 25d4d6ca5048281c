//! Pure scheduling: the catalog of offerings, whether a pod fits (with reasons), the cluster
//! state a plan grows, and the provisioning strategies.

pub mod catalog;
pub(crate) mod fit;
pub(crate) mod free_index;
pub(crate) mod min_values;
pub mod report;
pub(crate) mod state;
pub mod strategy;
pub(crate) mod topology;

#[cfg(test)]
mod conformance;

pub(crate) use fit::{Rejection, Unfit};
