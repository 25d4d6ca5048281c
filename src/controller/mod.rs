//! The pure reconcile core: snapshot + now + config -> actions, and the API writes they imply.

pub mod write;
