//! Test helpers shared by every crate's tests, with no kube, no async runtime and no dependency
//! on the crates it tests (the core's tests build without kube or tokio, and
//! `tests/it/layering.rs` checks it): plain JSON and text in, plain JSON and text out.
//!
//! - [`objects`]: typed builders of the API objects (NodePool, MachineDeployment with its
//!   capacity and price annotations, Machine, Node, NodeClaim, Pod, PDB, ...) with defaults.
//! - [`world`]: a whole cluster state built from them ([`World`]).
//! - [`rng`]: the deterministic generator every generated test input is drawn from.
//! - [`Edit`]: edits of test inputs written as YAML text that fail loudly when the text they
//!   target is not there. A plain `str::replace` silently does nothing once a fixture's wording
//!   changes, and the test then checks a different world than it names.

pub mod objects;
// The core's generator, compiled here from its one source file: the generated traces and every
// generated test input draw from the same definition, and the testkit still depends on no crate
// of this workspace (a dependency on the core would put two copies of its types in its tests).
#[path = "../../karpenter-capi-core/src/rng.rs"]
pub mod rng;
pub mod world;

pub use objects::Object;
pub use world::World;

/// Checked text edits for test inputs.
pub trait Edit {
    /// `self` with every `from` replaced by `to`; panics (naming `from`) when `from` is absent.
    fn edit(&self, from: &str, to: &str) -> String;
    /// `self` with the first `n` of `from` replaced by `to`; panics unless `from` occurs at least
    /// `n` times.
    fn edit_n(&self, from: &str, to: &str, n: usize) -> String;
}

impl<T: AsRef<str> + ?Sized> Edit for T {
    #[track_caller]
    fn edit(&self, from: &str, to: &str) -> String {
        let text = self.as_ref();
        if from.is_empty() || !text.contains(from) {
            missing(text, from, 1, 0);
        }
        text.replace(from, to)
    }

    #[track_caller]
    fn edit_n(&self, from: &str, to: &str, n: usize) -> String {
        let text = self.as_ref();
        let found = if from.is_empty() {
            0
        } else {
            text.matches(from).count()
        };
        if found < n {
            missing(text, from, n, found);
        }
        text.replacen(from, to, n)
    }
}

#[track_caller]
fn missing(text: &str, from: &str, wanted: usize, found: usize) -> ! {
    let head: String = text.chars().take(400).collect();
    panic!(
        "test input edit: expected {wanted} occurrence(s) of {from:?}, found {found}; the input begins:\n{head}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_changes_the_text_or_fails() {
        assert_eq!(
            "replicas: 2\n".edit("replicas: 2", "replicas: 0"),
            "replicas: 0\n"
        );
        assert_eq!("a a a".edit_n("a", "b", 2), "b b a");
        assert_eq!(String::from("x-y").edit("-", "+"), "x+y");
        let absent = std::panic::catch_unwind(|| "replicas: 2".edit("replicas: 3", "x"));
        assert!(absent.is_err());
        let too_few = std::panic::catch_unwind(|| "a".edit_n("a", "b", 2));
        assert!(too_few.is_err());
        let empty = std::panic::catch_unwind(|| "a".edit("", "b"));
        assert!(empty.is_err());
    }
}
