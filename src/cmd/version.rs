//! `version`: the crate version, the git commit it was built from and the platform, as a line or
//! as JSON/YAML (`-o json`), like `kubectl version`.

use serde::Serialize;

use crate::cli::{GlobalArgs, OutputFormat};
use crate::error::{Outcome, Result};
use crate::render::Printer;

/// What `version` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    /// The crate version, as `--version` prints it.
    pub version: &'static str,
    /// Short git commit recorded by build.rs, or "unknown" when built without git.
    pub git_commit: &'static str,
    /// `os/arch` in kubectl's (Go's) spelling, e.g. `linux/amd64`, as krew selects platforms.
    pub platform: String,
    /// The Rust target triple the binary was built for.
    pub target: &'static str,
}

impl VersionInfo {
    /// The values baked into this binary.
    pub fn current() -> VersionInfo {
        VersionInfo {
            version: env!("CARGO_PKG_VERSION"),
            git_commit: env!("KARPENTER_CAPI_GIT_COMMIT"),
            platform: platform(std::env::consts::OS, std::env::consts::ARCH),
            target: env!("KARPENTER_CAPI_TARGET"),
        }
    }

    /// The one-line form.
    pub fn line(&self) -> String {
        format!(
            "kubectl-karpenter_capi {} (commit {}, {})",
            self.version, self.git_commit, self.platform
        )
    }
}

/// Go's GOOS/GOARCH names for Rust's, since kubectl users and krew manifests speak Go's.
fn platform(os: &str, arch: &str) -> String {
    let os = match os {
        "macos" => "darwin",
        other => other,
    };
    let arch = match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{os}/{arch}")
}

/// Runs `version`.
pub fn run(global: &GlobalArgs, printer: &Printer) -> Result<Outcome> {
    let info = VersionInfo::current();
    match global.output {
        OutputFormat::Table | OutputFormat::Wide => printer.line(&info.line())?,
        OutputFormat::Json | OutputFormat::Yaml => printer.structured(&info)?,
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_uses_go_names() {
        assert_eq!(platform("linux", "x86_64"), "linux/amd64");
        assert_eq!(platform("macos", "aarch64"), "darwin/arm64");
        assert_eq!(platform("windows", "x86_64"), "windows/amd64");
    }

    #[test]
    fn line_names_version_commit_and_platform() {
        let info = VersionInfo {
            version: "1.2.3",
            git_commit: "abc1234",
            platform: "linux/amd64".to_string(),
            target: "x86_64-unknown-linux-gnu",
        };
        assert_eq!(
            info.line(),
            "kubectl-karpenter_capi 1.2.3 (commit abc1234, linux/amd64)"
        );
    }
}
