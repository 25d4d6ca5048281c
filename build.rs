//! Build script: records the git commit the binary is built from, for `version`.
//!
//! It must never fail a build: a clean clone without `.git`, a machine without git, or a crate
//! unpacked by `cargo install` all build, with the best commit we can find or "unknown".

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Release pipelines building from a tarball can say which commit it was.
    println!("cargo:rerun-if-env-changed=KARPENTER_CAPI_GIT_COMMIT");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let dir = Path::new(&dir);
    let commit = std::env::var("KARPENTER_CAPI_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| packaged_commit(dir))
        .or_else(|| git_commit(dir))
        .unwrap_or_else(|| "unknown".to_string());
    println!(
        "cargo:rustc-env=KARPENTER_CAPI_GIT_COMMIT={}",
        commit.trim()
    );
    // The target triple, so `version` can say which platform a bug report's binary is for.
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=KARPENTER_CAPI_TARGET={target}");
}

/// The commit `cargo package` recorded: a crate from crates.io has no `.git`, and running git
/// there could report some unrelated enclosing repository instead.
fn packaged_commit(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let start = text.find("\"sha1\"")?;
    let rest = &text[start + "\"sha1\"".len()..];
    let hex: String = rest
        .chars()
        .skip_while(|c| !c.is_ascii_hexdigit())
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    (hex.len() >= 7).then(|| hex[..7].to_string())
}

/// `git rev-parse --short HEAD`, and rebuild when HEAD moves (a commit, a checkout).
fn git_commit(dir: &Path) -> Option<String> {
    let commit = git(dir, &["rev-parse", "--short", "HEAD"])?;
    // In a worktree `.git` is a file, so ask git where HEAD and the branch ref live.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        // A path that does not exist would make cargo rerun this script on every build.
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &name]).map(|p| dir.join(p))
            && path.exists()
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Some(commit)
}

/// Runs git in `dir`; any failure (no git, not a repository) is `None`.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}
