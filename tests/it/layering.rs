//! The layering the crates promise, checked: the core's dependency tree holds no client, runtime,
//! terminal or parser crate, and every name of the API contract is defined once, in the core's
//! `vocab` room.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(file, line, name, value)` of every `const NAME: &str = "value";` in the crates' sources.
fn string_consts() -> Vec<(PathBuf, usize, String, String)> {
    let mut files = Vec::new();
    for dir in [
        "src",
        "crates/karpenter-capi-core/src",
        "crates/karpenter-capi-shell/src",
    ] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            let Some(rest) = line.strip_prefix("const ") else {
                continue;
            };
            let Some((name, value)) = rest.split_once(": &str = \"") else {
                continue;
            };
            let Some(value) = value.strip_suffix("\";") else {
                continue;
            };
            found.push((file.clone(), n + 1, name.to_string(), value.to_string()));
        }
    }
    found
}

/// A key of the API contract: a label, annotation, taint or finalizer of Kubernetes, Karpenter,
/// Cluster API or ours, or the field manager.
fn is_contract_name(value: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "karpenter.sh/",
        "karpenter-capi/",
        "karpenter-capi.sh/",
        "cluster.x-k8s.io/",
        "node.cluster.x-k8s.io/",
        "karpenter.cluster.x-k8s.io/",
        "capacity.cluster-autoscaler.kubernetes.io/",
        "kubernetes.io/",
        "node.kubernetes.io/",
        "topology.kubernetes.io/",
        "kubectl.kubernetes.io/",
    ];
    PREFIXES.iter().any(|p| value.starts_with(p))
}

#[test]
fn every_contract_name_is_defined_once_in_vocab() {
    let vocab = root().join("crates/karpenter-capi-core/src/vocab");
    let consts = string_consts();
    let outside: Vec<String> = consts
        .iter()
        .filter(|(file, ..)| !file.starts_with(&vocab))
        .filter(|(.., value)| is_contract_name(value))
        .filter(|(file, ..)| !file.to_string_lossy().contains("test"))
        .map(|(file, line, name, value)| format!("{}:{line}: {name} = {value:?}", file.display()))
        .collect();
    assert!(
        outside.is_empty(),
        "contract names defined outside crates/karpenter-capi-core/src/vocab:\n{}",
        outside.join("\n")
    );
    // A key is spelled once; object names (field manager, Lease, identity) may share a value.
    let mut inside: Vec<(&str, &str)> = consts
        .iter()
        .filter(|(file, ..)| {
            file.starts_with(vocab.join("keys.rs")) || file.starts_with(vocab.join("capacity.rs"))
        })
        .map(|(_, _, name, value)| (value.as_str(), name.as_str()))
        .collect();
    inside.sort();
    let twice: Vec<String> = inside
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| format!("{:?} as {} and {}", w[0].0, w[0].1, w[1].1))
        .collect();
    assert!(twice.is_empty(), "defined twice in vocab: {twice:?}");
    // The few that matter most, found where they belong.
    for (name, value) in [
        ("FIELD_MANAGER", "karpenter-capi"),
        ("UNREGISTERED_TAINT_KEY", "karpenter.sh/unregistered"),
        (
            "DELETE_MACHINE_ANNOTATION",
            "cluster.x-k8s.io/delete-machine",
        ),
        ("TERMINATION_FINALIZER", "karpenter.sh/termination"),
    ] {
        assert!(
            consts
                .iter()
                .any(|(f, _, n, v)| f.starts_with(&vocab) && n == name && v == value),
            "{name} = {value:?} is not in vocab"
        );
    }
    let managers: Vec<_> = consts
        .iter()
        .filter(|(_, _, n, _)| n == "FIELD_MANAGER")
        .collect();
    assert_eq!(
        managers.len(),
        1,
        "FIELD_MANAGER defined {} times",
        managers.len()
    );
}

#[test]
fn the_core_depends_on_no_client_runtime_terminal_or_parser() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([
            "tree",
            "--offline",
            "-p",
            "karpenter-capi-core",
            "-e",
            "normal,build,dev",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"karpenter-capi-core"), "{tree}");
    for banned in [
        "kube",
        "kube-client",
        "kube-runtime",
        "tokio",
        "hyper",
        "clap",
        "owo-colors",
        "indicatif",
        "dialoguer",
        "karpenter-capi-shell",
    ] {
        assert!(
            !names.contains(&banned),
            "karpenter-capi-core depends on {banned}:\n{tree}"
        );
    }
}
