//! `explain pod NAME` and `explain nodeclaim NAME`: look the object up in the snapshot (live or
//! `-f`), compute the explanation (`diagnose::explain`) and print it as a tree or JSON/YAML.

use crate::cli::{ExplainArgs, ExplainKind, GlobalArgs, OutputFormat};
use crate::controller::Config;
use crate::diagnose::explain::{explain_nodeclaim, explain_pod_at};
use crate::diagnose::suggest;
use crate::error::{Error, Outcome, Result};
use crate::model::snapshot::Snapshot;
use crate::render::Printer;
use crate::render::explain::{claim_tree, pod_tree};
use crate::render::tree::render;

/// Runs `explain`.
pub fn run(global: &GlobalArgs, args: ExplainArgs, printer: &Printer) -> Result<Outcome> {
    // -n names the pod's namespace; the management listing has its own flag.
    let loaded = super::doctor::load(
        global,
        &args.source,
        args.management_namespace.as_deref(),
        false,
        printer,
    )?;
    let origin = if args.source.files.is_empty() {
        "the workload cluster".to_string()
    } else {
        args.source.files.join(", ")
    };
    match args.kind {
        ExplainKind::Pod => {
            let index = find_pod(
                &loaded.snapshot,
                &args.name,
                global.namespace.as_deref(),
                &origin,
            )?;
            let e = explain_pod_at(&loaded.snapshot, index, Some(loaded.now));
            match printer.format {
                OutputFormat::Json | OutputFormat::Yaml => printer.structured(&e)?,
                _ => printer.write(&render(&pod_tree(&e), printer.color))?,
            }
        }
        ExplainKind::Nodeclaim => {
            let index = find_nodeclaim(&loaded.snapshot, &args.name, &origin)?;
            let e = explain_nodeclaim(&loaded.snapshot, index, loaded.now, &Config::default());
            match printer.format {
                OutputFormat::Json | OutputFormat::Yaml => printer.structured(&e)?,
                _ => printer.write(&render(&claim_tree(&e), printer.color))?,
            }
        }
    }
    Ok(Outcome::Success)
}

/// Finds a pod by `namespace/name`, or by name in `-n NAMESPACE`, or by a name unique across
/// namespaces.
pub fn find_pod(
    snapshot: &Snapshot,
    wanted: &str,
    namespace: Option<&str>,
    origin: &str,
) -> Result<usize> {
    let (ns, name) = match wanted.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (namespace, wanted),
    };
    let matches: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| {
            let d = &snapshot.pods[i].demand;
            d.name == name && ns.is_none_or(|n| d.namespace == n)
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => {
            let keys: Vec<String> = snapshot.pods.iter().map(|p| p.demand.key()).collect();
            let wanted_key = ns
                .map(|n| format!("{n}/{name}"))
                .unwrap_or_else(|| name.to_string());
            let close = suggest(&wanted_key, keys.iter().map(String::as_str));
            Err(not_found("pod", &wanted_key, origin, &close, keys.len()))
        }
        many => Err(Error::usage(format!(
            "pod name {name:?} is ambiguous in {origin}: {}; give namespace/name",
            many.iter()
                .map(|&i| snapshot.pods[i].demand.key())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Finds a NodeClaim by name.
pub fn find_nodeclaim(snapshot: &Snapshot, wanted: &str, origin: &str) -> Result<usize> {
    snapshot
        .nodeclaims
        .iter()
        .position(|c| c.name == wanted)
        .ok_or_else(|| {
            let close = suggest(wanted, snapshot.nodeclaims.iter().map(|c| c.name.as_str()));
            not_found(
                "NodeClaim",
                wanted,
                origin,
                &close,
                snapshot.nodeclaims.len(),
            )
        })
}

fn not_found(kind: &str, wanted: &str, origin: &str, close: &[String], total: usize) -> Error {
    let hint = if close.is_empty() {
        format!("{total} {kind}(s) there")
    } else {
        format!("did you mean {}?", close.join(", "))
    };
    Error::usage(format!("no {kind} {wanted:?} in {origin}: {hint}"))
}
