//! Reading `-f` inputs (files, directories, stdin) into [`Source`]s: the only file-system access
//! the offline commands need.

use jiff::Timestamp;

use crate::cli::{SourceArgs, Validate};
use crate::error::Result;
use crate::input::read_sources;
use crate::model::fields::{UnknownField, unknown_fields};
use crate::model::load::{load_sources, load_sources_judged};
use crate::model::snapshot::Snapshot;
use crate::render::Printer;

/// Reads the `-f` inputs and builds the snapshot, each object once; a repeated object is noted on
/// stderr (stdout stays the command's output), and so is each field no schema of its object's
/// kind has, as `kubectl --validate=warn` warns ([`unknown_field_warnings`]).
pub fn snapshot(source: &SourceArgs, printer: &Printer) -> Result<Snapshot> {
    snapshot_with(source, printer, true)
}

/// [`snapshot`], warning about unknown fields only if `warn` (`status -w` warns on its first
/// read only, not on every re-read of the same files).
pub fn snapshot_with(source: &SourceArgs, printer: &Printer, warn: bool) -> Result<Snapshot> {
    let (snapshot, notes) = {
        // A spinner on a terminal when reading and parsing take over a second (large dumps); not
        // while someone may be typing the input on a terminal.
        let _spinner = (!reads_typed_input(&source.files))
            .then(|| printer.spinner(loading_message(&source.files)));
        let sources = read_sources(&source.files, source.recursive)?;
        if !(warn && source.validate != Validate::Ignore) {
            load_sources(&sources)?
        } else {
            // The loader judges each object as it reads it; when the input cannot be read, the
            // warnings still come first (a misspelt field may be why).
            let (snapshot, notes, unknown) = match load_sources_judged(&sources) {
                Ok(read) => read,
                Err(e) => {
                    let unknown = sources.iter().flat_map(unknown_fields).collect();
                    for line in unknown_field_warnings(unknown) {
                        printer.err(&line)?;
                    }
                    return Err(e);
                }
            };
            let warnings = unknown_field_warnings(unknown);
            for line in &warnings {
                printer.err(line)?;
            }
            if source.validate == Validate::Strict && !warnings.is_empty() {
                return Err(crate::error::Error::usage(format!(
                    "{} unknown field(s) in the input (--validate=strict; --validate=warn only warns)",
                    warnings.len()
                )));
            }
            (snapshot, notes)
        }
    };
    for note in crate::model::dedup::counted(notes) {
        printer.err(&format!("note: {note}"))?;
    }
    Ok(snapshot)
}

/// The time a dump is judged at: `--now`, else the dump's own time, else the wall clock with
/// `fallback_warning` logged (when given), since ages and timeouts judged now are usually wrong.
pub fn as_of(
    source: &SourceArgs,
    snapshot: &Snapshot,
    fallback_warning: Option<&str>,
) -> Timestamp {
    source.now.or(snapshot.now).unwrap_or_else(|| {
        if let Some(w) = fallback_warning {
            tracing::warn!("{w}");
        }
        Timestamp::now()
    })
}

/// Logs the snapshot's load warnings (stdout stays the command's output).
pub fn log_warnings(snapshot: &Snapshot) {
    for w in &snapshot.warnings {
        tracing::warn!("{w}");
    }
}

/// The unknown-field warnings of `unknown` (the loader's findings, or [`unknown_fields`]'s
/// when the input could not be read), kubectl's words with the place added: one line per field
/// path, at its first place, with a count when it recurs (the same typo in every pod of a dump
/// reads once).
pub fn unknown_field_warnings(unknown: Vec<UnknownField>) -> Vec<String> {
    let mut order: Vec<(String, String, usize)> = Vec::new();
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for u in unknown {
        let n = counts.entry(u.path.clone()).or_insert(0);
        if *n == 0 {
            order.push((u.path, u.file, u.line));
        }
        *n += 1;
    }
    order
        .into_iter()
        .map(|(path, file, line)| {
            let times = counts.get(&path).copied().unwrap_or(1);
            let more = if times > 1 {
                format!(", {times} times")
            } else {
                String::new()
            };
            format!("Warning: unknown field \"{path}\" ({file}:{line}{more})")
        })
        .collect()
}

/// Whether `-f -` reads a terminal (input typed or pasted by hand).
fn reads_typed_input(files: &[String]) -> bool {
    use std::io::IsTerminal;
    files.iter().any(|f| f == "-") && std::io::stdin().is_terminal()
}

/// What the loading spinner says: the inputs, or their number when there are many.
fn loading_message(files: &[String]) -> String {
    if files.len() <= 3 {
        format!("loading {}", files.join(", "))
    } else {
        format!("loading {} inputs", files.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loading_message_names_few_inputs_and_counts_many() {
        let files = |n: usize| (0..n).map(|i| format!("f{i}.yaml")).collect::<Vec<_>>();
        assert_eq!(loading_message(&files(1)), "loading f0.yaml");
        assert_eq!(
            loading_message(&files(3)),
            "loading f0.yaml, f1.yaml, f2.yaml"
        );
        assert_eq!(loading_message(&files(4)), "loading 4 inputs");
    }
}
