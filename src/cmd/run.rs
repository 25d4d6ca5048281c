//! `run`: not built yet in this revision.

use crate::cli::{GlobalArgs, RunArgs};
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `run`.
pub fn run(_global: &GlobalArgs, _args: RunArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("run"))
}
