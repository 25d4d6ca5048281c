//! `explain`: not built yet in this revision.

use crate::cli::{ExplainArgs, GlobalArgs};
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `explain`.
pub fn run(_global: &GlobalArgs, _args: ExplainArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("explain"))
}
