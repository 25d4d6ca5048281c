//! The vocabulary shared with the API server, in one room: kinds, keys, object names and the
//! RBAC the controller needs. `init` renders these names, `doctor` judges a cluster by them, the
//! controller plans with them and the shell sends them; nothing else spells them out.

pub mod capacity;
pub mod keys;
pub mod kinds;
pub mod names;
pub mod permissions;
pub(crate) mod reasons;
