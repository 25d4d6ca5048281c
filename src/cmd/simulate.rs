//! `simulate`: placeholder.

use crate::cli::{GlobalArgs, SimulateArgs};
use crate::error::{Error, Outcome, Result};
use crate::render::Printer;

/// Runs `simulate`.
pub fn run(_global: &GlobalArgs, _args: SimulateArgs, _printer: &Printer) -> Result<Outcome> {
    Err(Error::NotImplemented("simulate"))
}
