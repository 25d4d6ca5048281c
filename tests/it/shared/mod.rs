//! Where the tests find the project's shared fixtures: `../shared/fixtures` beside the clone (the
//! scenarios from real reports and the upstream CRDs; CI and every developer machine lay it out
//! there). A test that needs it and does not find it says so, instead of a bare "No such file".
#![allow(dead_code)]

use std::path::PathBuf;

/// The path of `rel` under the shared fixtures, e.g. `scenarios/seed-3cpu.yaml`.
///
/// # Panics
/// When the shared fixtures are not there, with a message saying what is missing and why.
pub fn fixture(rel: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let path = root.join(rel);
    assert!(
        path.exists(),
        "this test reads {}: the project's shared fixtures (scenarios from real reports, upstream CRDs), \
         kept in `shared/` beside the repository, not inside it. Run the tests from a checkout that has \
         ../shared (as CI lays it out), or copy shared/fixtures there.",
        path.display()
    );
    path
}

/// The text of [`fixture`].
pub fn read(rel: &str) -> String {
    let path = fixture(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
