//! The man pages, generated from the clap definitions: one for the command and one per visible
//! subcommand (`kubectl-karpenter_capi-init.1`, ...), committed under `man/` and kept in sync by
//! `tests/it/generated.rs`. Not a subcommand: packagers install the committed files.

use crate::error::Result;

/// Every page as (file name, roff text), the top-level page first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    // Man pages are named after the executable, as `man kubectl-karpenter_capi` finds them.
    let mut root = crate::cli::command()
        .name(crate::cmd::completion::BIN_NAME)
        .bin_name(crate::cmd::completion::BIN_NAME)
        .disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    collect(&root, &mut pages)?;
    Ok(pages)
}

fn collect(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    // The committed pages carry the crate version only: `--version` adds the git commit, which
    // would make every commit outdate them.
    let man = clap_mangen::Man::new(cmd.clone().version(env!("CARGO_PKG_VERSION")));
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    pages.push((man.get_filename(), roff));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, pages)?;
    }
    Ok(())
}
