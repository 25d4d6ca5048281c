//! `init --output-dir`'s file writes: writes the bundle's files without ever deleting what `init` did not
//! write. Every file is staged first, then renamed into place one by one; if any step fails the
//! previous files are put back, so the directory holds the old bundle or the new one, never half.
//!
//! What `init` wrote is recorded in [`RECORD`] inside the directory: the next run knows its own
//! files (replaced in place, or stale when a flavor was removed) from the user's (never touched;
//! their presence needs `--force`, as a directory `init` did not make).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::bundle::{Bundle, Templates, kustomize};
use crate::error::{Error, Result};

/// The record of the files the last `init` wrote, relative to the directory, one per line.
pub const RECORD: &str = ".karpenter-capi-init";

/// One file to write: its path relative to the directory, text, and whether it holds
/// credentials (written 0600).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// `management/04-secret-x.yaml`.
    pub path: String,
    /// The text.
    pub text: String,
    /// A Secret: readable by its owner only.
    pub secret: bool,
}

/// What a write did, for the summary.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// New files.
    pub created: Vec<String>,
    /// Files that existed and changed.
    pub replaced: Vec<String>,
    /// Files that existed with the same text.
    pub unchanged: Vec<String>,
    /// Files an earlier `init` wrote that this bundle no longer has, left in place.
    pub stale: Vec<String>,
    /// Stale files removed (`--prune`).
    pub pruned: Vec<String>,
    /// Files `init` did not write, left untouched (`--force`).
    pub foreign: Vec<String>,
}

impl Written {
    /// What a write did, for stderr: counts, then each file replaced, stale or pruned by name.
    pub fn report(&self, dir: &Path) -> Vec<String> {
        let mut lines = vec![format!(
            "wrote {}: {} created, {} replaced, {} unchanged",
            dir.display(),
            self.created.len(),
            self.replaced.len(),
            self.unchanged.len()
        )];
        lines.extend(self.replaced.iter().map(|f| format!("  replaced {f}")));
        lines.extend(self.pruned.iter().map(|f| format!("  removed stale {f}")));
        if !self.stale.is_empty() {
            lines.push(format!(
                "stale (written by an earlier init, no longer generated; --prune removes them): {}",
                self.stale.join(", ")
            ));
        }
        if !self.foreign.is_empty() {
            lines.push(format!(
                "left untouched (not written by init): {}",
                self.foreign.join(", ")
            ));
        }
        lines
    }
}

/// The text of a file a flag names; an error names the flag, the file and the problem.
pub fn read_text(path: &Path, flag: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: format!("{flag} {}", path.display()),
        problem: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => format!("cannot read: {e}"),
        },
    })
}

/// The built-in templates, overridden by the files of `dir` with the same relative paths.
pub fn load_templates(dir: Option<&Path>) -> Result<Templates> {
    let mut templates = Templates::default();
    let Some(dir) = dir else { return Ok(templates) };
    if !dir.is_dir() {
        return Err(Error::Input {
            path: format!("--templates {}", dir.display()),
            problem: "not a directory".to_string(),
        });
    }
    for name in Templates::names() {
        let path = dir.join(name);
        if path.exists() {
            templates.set(name, read_text(&path, "--templates")?);
        }
    }
    Ok(templates)
}

/// The files of a bundle, in apply order: the CRD base `crds/kustomization.yaml`, then
/// `management/NN-kind-name.yaml` and `workload/NN-kind-name.yaml`, each directory a kustomize
/// base listing its files, and the optional objects as the component `workload/monitoring/`.
pub fn plan(bundle: &Bundle) -> Vec<PlannedFile> {
    let mut out = vec![PlannedFile {
        path: format!("{}/{}", kustomize::CRDS_DIR, kustomize::KUSTOMIZATION),
        text: kustomize::crds_kustomization(),
        secret: false,
    }];
    let mut dir = |sub: &str, docs: &[crate::bundle::Document]| -> Vec<String> {
        let mut names = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let name = doc.file_name(i + 1);
            out.push(PlannedFile {
                path: format!("{sub}/{name}"),
                text: doc.with_comment(),
                secret: doc.kind == "Secret",
            });
            names.push(name);
        }
        names
    };
    let management = dir("management", &bundle.management);
    let workload = dir("workload", &bundle.workload);
    let monitoring_dir = format!("workload/{}", kustomize::MONITORING_DIR);
    let monitoring = dir(&monitoring_dir, &bundle.optional);
    for (sub, text) in [
        (
            "management".to_string(),
            kustomize::management_kustomization(&management),
        ),
        (
            "workload".to_string(),
            kustomize::workload_kustomization(&workload),
        ),
        (monitoring_dir, kustomize::monitoring_component(&monitoring)),
    ] {
        out.push(PlannedFile {
            path: format!("{sub}/{}", kustomize::KUSTOMIZATION),
            text,
            secret: false,
        });
    }
    out
}

/// Writes `files` into `dir`. Files `init` did not write are refused unless `force` (then left
/// untouched, unless one has the path of a generated file: that one is replaced); stale files of
/// an earlier `init` are removed only with `prune`.
pub fn write(dir: &Path, files: &[PlannedFile], force: bool, prune: bool) -> Result<Written> {
    let fail = |problem: String| Error::Input {
        path: format!("--output-dir {}", dir.display()),
        problem,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    let recorded = read_record(dir).map_err(|e| fail(format!("cannot read {RECORD}: {e}")))?;
    let mut existing = Vec::new();
    list_files(dir, dir, &mut existing)
        .map_err(|e| fail(format!("cannot list the directory: {e}")))?;
    let wanted: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut written = Written::default();
    for path in &existing {
        if path == RECORD || path.starts_with(STAGING_PREFIX) {
            continue;
        }
        if recorded.contains(path) {
            if !wanted.contains(path.as_str()) {
                written.stale.push(path.clone());
            }
        } else {
            written.foreign.push(path.clone());
        }
    }
    if !written.foreign.is_empty() && !force {
        return Err(fail(format!(
            "holds files init did not write: {}; pass --force to write the bundle beside them (they are left untouched, except one with the name of a generated file), or choose another directory",
            written.foreign.join(", ")
        )));
    }

    // The staging directory sits in DIR (renames stay on one filesystem) and is removed when
    // dropped, holding only the previous files (or a failed new bundle) by then.
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(dir)
        .map_err(|e| fail(format!("cannot create a staging directory: {e}")))?;
    let stale = written.stale.clone();
    swap(dir, staging.path(), files, &stale, prune, &mut written).map_err(fail)?;
    if prune {
        written.pruned = std::mem::take(&mut written.stale);
    }
    Ok(written)
}

/// The temporary directory's name, before the process id.
const STAGING_PREFIX: &str = ".karpenter-capi-init-";

/// One completed step, to undo on failure.
enum Step {
    /// `path` is new; undo removes it.
    Created(PathBuf),
    /// `path` was moved to `backup`; undo moves it back (over whatever is at `path`).
    Moved { path: PathBuf, backup: PathBuf },
}

fn swap(
    dir: &Path,
    staging: &Path,
    files: &[PlannedFile],
    stale: &[String],
    prune: bool,
    written: &mut Written,
) -> std::result::Result<(), String> {
    let new = staging.join("new");
    let old = staging.join("old");
    // Stage every file first: a full disk or a bad path fails here, before anything is replaced.
    for f in files {
        let path = new.join(&f.path);
        write_file(&path, f.text.as_bytes(), f.secret)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut record = String::from(
        "# Files written by `kubectl karpenter-capi init --output-dir`; the next run replaces them\n# and lists those it no longer generates as stale (removed with --prune). Other files are never touched.\n",
    );
    // Stale files left in place are still ours: a later run may prune them.
    let kept_stale = stale.iter().filter(|_| !prune);
    for path in files.iter().map(|f| &f.path).chain(kept_stale) {
        record.push_str(path);
        record.push('\n');
    }
    write_file(&new.join(RECORD), record.as_bytes(), false)
        .map_err(|e| format!("cannot write {RECORD}: {e}"))?;

    let mut steps = Vec::new();
    let outcome = (|| -> std::result::Result<(), String> {
        let mut targets: Vec<(&str, bool)> =
            files.iter().map(|f| (f.path.as_str(), true)).collect();
        targets.push((RECORD, true));
        if prune {
            targets.extend(stale.iter().map(|s| (s.as_str(), false)));
        }
        for (rel, install) in targets {
            let path = dir.join(rel);
            if path.exists() {
                let backup = old.join(rel);
                if let Some(parent) = backup.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                }
                std::fs::rename(&path, &backup)
                    .map_err(|e| format!("cannot move {} aside: {e}", path.display()))?;
                steps.push(Step::Moved {
                    path: path.clone(),
                    backup,
                });
            } else if install {
                steps.push(Step::Created(path.clone()));
            }
            if install {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                }
                std::fs::rename(new.join(rel), &path)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
        }
        Ok(())
    })();
    if let Err(e) = outcome {
        // Undo in reverse: the directory is as it was.
        for step in steps.into_iter().rev() {
            match step {
                Step::Created(path) => {
                    let _ = std::fs::remove_file(path);
                }
                Step::Moved { path, backup } => {
                    let _ = std::fs::rename(backup, path);
                }
            }
        }
        return Err(format!("{e}; the previous files are restored"));
    }
    // Report against the moved-aside copies.
    for f in files {
        match std::fs::read(old.join(&f.path)) {
            Ok(before) if before == f.text.as_bytes() => written.unchanged.push(f.path.clone()),
            Ok(_) => written.replaced.push(f.path.clone()),
            Err(_) => written.created.push(f.path.clone()),
        }
    }
    Ok(())
}

/// Creates `path` (and its directories) with `text`; a secret is created 0600, never readable by
/// others even for a moment.
fn write_file(path: &Path, text: &[u8], secret: bool) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        if secret {
            options.mode(0o600);
        }
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut file = options.open(path)?;
    file.write_all(text)?;
    file.sync_all()
}

/// Writes one file holding a credential (`init kubeconfig --output-file`): a temporary file
/// beside it (tempfile creates it 0600), then renamed over the target, so the file is whole and
/// never readable by others, even when it replaces one with wider permissions.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    let err = |e: std::io::Error| Error::Input {
        path: format!("--output-file {}", path.display()),
        problem: format!("cannot write: {e}"),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .ok_or_else(|| Error::Input {
            path: format!("--output-file {}", path.display()),
            problem: "not a file name".to_string(),
        })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(parent)
        .map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// The paths the last `init` recorded; none when there is no record.
fn read_record(dir: &Path) -> std::io::Result<BTreeSet<String>> {
    match std::fs::read_to_string(dir.join(RECORD)) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(e) => Err(e),
    }
}

/// Every file under `dir`, as `/`-separated paths relative to `root`, sorted.
fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        if rel.starts_with(STAGING_PREFIX) {
            continue;
        }
        if path.is_dir() {
            list_files(root, &path, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "karpenter-capi-output-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn file(path: &str, text: &str) -> PlannedFile {
        PlannedFile {
            path: path.to_string(),
            text: text.to_string(),
            secret: path.contains("secret"),
        }
    }

    fn read(dir: &Path, rel: &str) -> String {
        std::fs::read_to_string(dir.join(rel)).unwrap()
    }

    #[test]
    fn a_second_run_replaces_its_own_files_and_lists_stale_ones() {
        let dir = scratch("rerun");
        let first = [
            file("management/01-a.yaml", "a1"),
            file("management/02-b.yaml", "b1"),
        ];
        let w = write(&dir, &first, false, false).unwrap();
        assert_eq!(w.created, ["management/01-a.yaml", "management/02-b.yaml"]);
        let second = [file("management/01-a.yaml", "a2")];
        let w = write(&dir, &second, false, false).unwrap();
        assert_eq!(w.replaced, ["management/01-a.yaml"]);
        assert_eq!(w.stale, ["management/02-b.yaml"]);
        assert_eq!(
            read(&dir, "management/02-b.yaml"),
            "b1",
            "kept without --prune"
        );
        // Still recorded as ours: a third run can prune it.
        let w = write(&dir, &second, false, true).unwrap();
        assert_eq!(w.unchanged, ["management/01-a.yaml"]);
        assert_eq!(w.pruned, ["management/02-b.yaml"]);
        assert!(!dir.join("management/02-b.yaml").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_init_did_not_write_need_force_and_are_never_touched() {
        let dir = scratch("foreign");
        std::fs::create_dir_all(dir.join("management")).unwrap();
        std::fs::write(dir.join("management/kustomization.yaml"), "mine").unwrap();
        let files = [file("management/01-a.yaml", "a")];
        let err = write(&dir, &files, false, false).unwrap_err().to_string();
        assert!(
            err.contains(
                "holds files init did not write: management/kustomization.yaml; pass --force"
            ),
            "{err}"
        );
        assert!(!dir.join("management/01-a.yaml").exists());
        let w = write(&dir, &files, true, true).unwrap();
        assert_eq!(w.foreign, ["management/kustomization.yaml"]);
        assert_eq!(read(&dir, "management/kustomization.yaml"), "mine");
        assert_eq!(read(&dir, "management/01-a.yaml"), "a");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn secrets_are_written_for_the_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("secret");
        write(
            &dir,
            &[
                file("workload/01-secret-x.yaml", "s"),
                file("workload/02-y.yaml", "y"),
            ],
            false,
            false,
        )
        .unwrap();
        let mode = |rel: &str| {
            std::fs::metadata(dir.join(rel))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("workload/01-secret-x.yaml"), 0o600);
        assert_ne!(
            mode("workload/02-y.yaml") & 0o044,
            0,
            "others as the umask says"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_step_restores_the_previous_files() {
        let dir = scratch("restore");
        write(&dir, &[file("management/01-a.yaml", "old")], false, false).unwrap();
        // A file where the workload directory should go makes the second step fail after the
        // first file was already replaced.
        std::fs::write(dir.join("workload"), "in the way").unwrap();
        let err = write(
            &dir,
            &[
                file("management/01-a.yaml", "new"),
                file("workload/02-b.yaml", "b"),
            ],
            true,
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("the previous files are restored"), "{err}");
        assert_eq!(read(&dir, "management/01-a.yaml"), "old");
        let top: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            top.iter().all(|n| !n.starts_with(STAGING_PREFIX)),
            "{top:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_credential_file_is_0600_even_over_a_readable_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("kc-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("controller.kubeconfig");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, "token: x\n").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "token: x\n");
        // Nothing left beside it.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let err = write_private(&path.join("x"), "t").unwrap_err().to_string();
        assert!(err.contains("--output-file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
