//! `version`: the crate version.

use crate::cli::GlobalArgs;
use crate::error::{Outcome, Result};
use crate::render::Printer;

/// Runs `version`.
pub fn run(_global: &GlobalArgs, printer: &Printer) -> Result<Outcome> {
    printer.line(&format!(
        "kubectl-karpenter_capi {}",
        env!("CARGO_PKG_VERSION")
    ))?;
    Ok(Outcome::Success)
}
