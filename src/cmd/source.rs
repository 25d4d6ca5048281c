//! Reading `-f` inputs (files, directories, stdin) into [`Source`]s: the only file-system access
//! the offline commands need.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::load::Source;

/// Reads every `-f` argument: a file, a directory (its `.yaml`, `.yml` and `.json` files, sorted),
/// or `-` for stdin.
pub fn read_sources(args: &[String]) -> Result<Vec<Source>> {
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
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| Error::Input {
                    path: arg.clone(),
                    problem: format!("cannot read directory: {e}"),
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                })
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(Error::Input {
                    path: arg.clone(),
                    problem: "directory has no .yaml, .yml or .json files".to_string(),
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
