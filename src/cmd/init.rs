//! `init`: not built yet in this revision.

use crate::cli::{GlobalArgs, InitArgs};
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `init`.
pub fn run(_global: &GlobalArgs, _args: InitArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("init"))
}
