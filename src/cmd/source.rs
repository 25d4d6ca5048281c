//! Reading `-f` inputs (files, directories, stdin) into [`Source`]s: the only file-system access
//! the offline commands need.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cli::SourceArgs;
use crate::error::{Error, Result};
use crate::model::load::{Source, load_sources};
use crate::model::snapshot::Snapshot;

/// Reads the `-f` inputs and builds the snapshot, each object once; a repeated object is noted on
/// stderr (stdout stays the command's output).
pub fn snapshot(source: &SourceArgs) -> Result<Snapshot> {
    let (snapshot, notes) = {
        // A spinner on a terminal when reading and parsing take over a second (large dumps); not
        // while someone may be typing the input on a terminal.
        let _spinner = (!reads_typed_input(&source.files))
            .then(|| crate::render::progress::spinner(loading_message(&source.files)));
        load_sources(&read_sources(&source.files, source.recursive)?)?
    };
    for note in notes {
        eprintln!("note: {note}");
    }
    Ok(snapshot)
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

/// Reads every `-f` argument: a file, a directory (its `.yaml`, `.yml` and `.json` files, sorted;
/// with `recursive` those of its subdirectories too, as kubectl's `-R`), or `-` for stdin.
pub fn read_sources(args: &[String], recursive: bool) -> Result<Vec<Source>> {
    let mut out = Vec::new();
    for arg in args {
        if arg == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::Input {
                    path: "<stdin>".to_string(),
                    problem: format!("cannot read: {e}"),
                })?;
            out.push(Source {
                name: "<stdin>".to_string(),
                text,
            });
            continue;
        }
        let path = Path::new(arg);
        if path.is_dir() {
            let mut files = Vec::new();
            manifest_files(path, recursive, &mut files)?;
            files.sort();
            if files.is_empty() {
                return Err(Error::Input {
                    path: arg.clone(),
                    problem: if recursive {
                        "directory has no .yaml, .yml or .json files".to_string()
                    } else {
                        "directory has no .yaml, .yml or .json files (pass -R to read its subdirectories)".to_string()
                    },
                });
            }
            for f in files {
                out.push(read_file(&f)?);
            }
        } else {
            out.push(read_file(path)?);
        }
    }
    Ok(out)
}

fn read_file(path: &Path) -> Result<Source> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: name.clone(),
        problem: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => format!("cannot read: {e}"),
        },
    })?;
    Ok(Source { name, text })
}

/// The manifest files of `dir`, and with `recursive` of its subdirectories.
fn manifest_files(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Input {
        path: dir.display().to_string(),
        problem: format!("cannot read directory: {e}"),
    })?;
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            if recursive {
                manifest_files(&path, true, out)?;
            }
        } else if path
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(path);
        }
    }
    Ok(())
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
