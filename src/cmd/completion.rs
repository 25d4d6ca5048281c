//! `completion`: not built yet in this revision.

use crate::cli::CompletionArgs;
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `completion`.
pub fn run(_args: CompletionArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("completion"))
}
