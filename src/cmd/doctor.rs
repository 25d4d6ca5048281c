//! `doctor`: not built yet in this revision.

use crate::cli::{DoctorArgs, GlobalArgs};
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `doctor`.
pub fn run(_global: &GlobalArgs, _args: DoctorArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("doctor"))
}
