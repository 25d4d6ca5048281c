//! Reading `-f` inputs (files, directories, stdin) into [`Source`]s: the only file-system access
//! the offline commands need.

use jiff::Timestamp;

use crate::cli::SourceArgs;
use crate::error::Result;
use crate::input::read_sources;
use crate::model::load::load_sources;
use crate::model::snapshot::Snapshot;
use crate::render::Printer;

/// Reads the `-f` inputs and builds the snapshot, each object once; a repeated object is noted on
/// stderr (stdout stays the command's output).
pub fn snapshot(source: &SourceArgs, printer: &Printer) -> Result<Snapshot> {
    let (snapshot, notes) = {
        // A spinner on a terminal when reading and parsing take over a second (large dumps); not
        // while someone may be typing the input on a terminal.
        let _spinner = (!reads_typed_input(&source.files))
            .then(|| printer.spinner(loading_message(&source.files)));
        load_sources(&read_sources(&source.files, source.recursive)?)?
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
