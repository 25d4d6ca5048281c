//! Drift tests for the files generated from the clap definitions and committed: the shell
//! completion scripts in `completions/`, the man pages in `man/`, and the unknown-field check's
//! known fields of the CRD fixtures.
//!
//! After changing a flag or a help text, regenerate them with
//! `KARPENTER_CAPI_REGENERATE=1 cargo test --test generated` and commit the result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use karpenter_capi::cmd::completion;
use karpenter_capi::render::man;

const REGENERATE: &str = "KARPENTER_CAPI_REGENERATE";

/// Compares `dir` with `expected` (file name -> contents); with the env var set, rewrites it.
fn check_dir(dir: &str, expected: BTreeMap<String, Vec<u8>>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let present: BTreeMap<String, PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    if std::env::var_os(REGENERATE).is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, path) in &present {
            if !expected.contains_key(name) {
                std::fs::remove_file(path).unwrap();
            }
        }
        for (name, contents) in &expected {
            std::fs::write(dir.join(name), contents).unwrap();
        }
        return;
    }
    let mut problems = Vec::new();
    for (name, contents) in &expected {
        match std::fs::read(dir.join(name)) {
            Ok(committed) if &committed == contents => {}
            Ok(_) => problems.push(format!("{} is out of date", dir.join(name).display())),
            Err(_) => problems.push(format!("{} is missing", dir.join(name).display())),
        }
    }
    for name in present.keys().filter(|n| !expected.contains_key(*n)) {
        problems.push(format!(
            "{} is no longer generated",
            dir.join(name).display()
        ));
    }
    assert!(
        problems.is_empty(),
        "{}\nThe files are generated from src/cli/; regenerate them with\n  \
         {REGENERATE}=1 cargo test --test generated\nand commit the result.",
        problems.join("\n")
    );
}

#[test]
fn completion_scripts_match_the_cli() {
    let expected = completion::SHELLS
        .iter()
        .map(|&shell| (completion::file_name(shell), completion::script(shell)))
        .collect();
    check_dir("completions", expected);
}

#[test]
fn man_pages_match_the_cli() {
    check_dir("man", man::pages().unwrap().into_iter().collect());
}

#[test]
fn completion_files_have_the_conventional_names() {
    let names: Vec<String> = completion::SHELLS
        .iter()
        .map(|&s| completion::file_name(s))
        .collect();
    assert_eq!(
        names,
        [
            "kubectl-karpenter_capi.bash",
            "_kubectl-karpenter_capi",
            "kubectl-karpenter_capi.fish",
            "_kubectl-karpenter_capi.ps1",
            "kubectl-karpenter_capi.elv",
        ]
    );
}

#[test]
fn a_man_page_per_visible_subcommand() {
    let names: Vec<String> = man::pages().unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "kubectl-karpenter_capi.1",
            "kubectl-karpenter_capi-init.1",
            "kubectl-karpenter_capi-init-kubeconfig.1",
            "kubectl-karpenter_capi-doctor.1",
            "kubectl-karpenter_capi-explain.1",
            "kubectl-karpenter_capi-simulate.1",
            "kubectl-karpenter_capi-status.1",
            "kubectl-karpenter_capi-run.1",
            "kubectl-karpenter_capi-uninstall.1",
            "kubectl-karpenter_capi-completion.1",
            "kubectl-karpenter_capi-version.1",
        ]
    );
}

/// The unknown-field check's trees of the Karpenter and Cluster API kinds
/// (`crates/karpenter-capi-core/src/model/fields/known.json`) are generated from the CRD fixtures,
/// so a fixture update that adds a field cannot leave the check warning about it.
#[test]
fn known_fields_are_those_of_the_crd_fixtures() {
    let dir = crate::support::fixtures().join("crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let crds: Vec<serde_json::Value> = files
        .iter()
        .map(|p| serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let text = karpenter_capi::model::fields::schema::known_json(&crds);
    assert!(text.contains("\"cluster.x-k8s.io/v1beta2/MachineDeployment\": "));
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/karpenter-capi-core/src/model/fields/known.json");
    if std::env::var_os(REGENERATE).is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    assert!(
        std::fs::read_to_string(&path).unwrap() == text,
        "{} is out of date; regenerate it with\n  {REGENERATE}=1 cargo test --test it generated\nand commit the result.",
        path.display()
    );
}
