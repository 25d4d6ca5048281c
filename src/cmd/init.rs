//! `init`: glue between the flags, the inputs ([`inputs`]: files, topology, the cluster's
//! templates and the questions, asked only through [`prompt`]), the pure generator in
//! [`crate::bundle`] and the shell (files, the live clusters). Everything is rendered before
//! anything is written or applied.

pub mod inputs;
pub mod kubeconfig;
pub mod prompt;

use crate::bundle::{self, kustomize, topology};
use crate::cli::{DryRun, GlobalArgs, InitArgs, InitCommand, OutputFormat};
use crate::error::{Error, Outcome, Result};
use crate::files;
use crate::kube::init as live;
use crate::render::Printer;

/// Runs `init` or `init kubeconfig`.
pub fn run(global: &GlobalArgs, args: InitArgs, printer: &Printer) -> Result<Outcome> {
    if let Some(InitCommand::Kubeconfig(k)) = &args.command {
        return kubeconfig::run(global, k, printer);
    }
    let inputs::Gathered {
        input,
        templates,
        topology,
        conn,
        runtime,
    } = inputs::gather(global, &args)?;
    let separate = input.separate_management;
    let client_dry_run = args.dry_run == DryRun::Client;
    let bundle = bundle::render::render(&input, &templates)?;
    // Said once the bundle is out, so an error stays the only line of a failed run.
    let assumed = |printer: &Printer| match topology {
        None => printer.note(topology::ASSUMED_SELF_HOSTED),
        Some(_) => Ok(()),
    };

    if args.apply && !client_dry_run {
        let Some(rt) = runtime else {
            return Err(Error::usage("--apply needs a runtime"));
        };
        let dry_run = args.dry_run == DryRun::Server;
        let applied = rt.block_on(live::apply_bundles(
            &conn,
            &input,
            &templates,
            bundle,
            dry_run,
            args.token_duration,
        ))?;
        for line in &applied.lines {
            printer.line(line)?;
        }
        for note in &applied.notes {
            printer.note(note)?;
        }
        assumed(printer)?;
        return Ok(Outcome::Success);
    }
    if args.dry_run == DryRun::Server {
        return Err(Error::usage(
            "--dry-run=server only makes sense with --apply",
        ));
    }
    match (&args.output_dir, global.output) {
        (Some(dir), _) if client_dry_run => {
            for f in &files::plan(&bundle) {
                printer.err(&format!("would write {}", dir.join(&f.path).display()))?;
            }
        }
        (Some(dir), _) => {
            let written = files::write(dir, &files::plan(&bundle), args.force, args.prune)?;
            for line in written.report(dir) {
                printer.err(&line)?;
            }
            let steps = kustomize::apply_steps(&dir.display().to_string(), separate);
            printer.err(&format!("apply in this order:\n{steps}"))?;
        }
        (None, OutputFormat::Json | OutputFormat::Yaml) => printer.structured(&bundle.to_list())?,
        (None, OutputFormat::Table | OutputFormat::Wide) => printer.write(&bundle.to_yaml())?,
    }
    assumed(printer)?;
    if separate && input.management_kubeconfig.is_none() {
        let ns = (&input.controller_namespace, &input.namespace);
        printer.note(&topology::credential_note(ns.0, ns.1, &input.cluster_name))?;
    }
    Ok(Outcome::Success)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Io)
}
