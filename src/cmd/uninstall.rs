//! `uninstall`: glue between the flags, both clusters and [`crate::kube::uninstall`], which does
//! the work; prints one line per object changed.

use std::time::Duration;

use crate::bundle::flavor;
use crate::cli::{GlobalArgs, UninstallArgs};
use crate::error::{Error, Outcome, Result};
use crate::kube::client::{ClusterTarget, connect};
use crate::kube::uninstall::{Options, uninstall};
use crate::render::Printer;

/// How often `--delete-nodes` looks at the NodeClaims and Machines while it waits.
const POLL: Duration = Duration::from_secs(5);

/// Runs `uninstall`.
pub fn run(global: &GlobalArgs, args: UninstallArgs, printer: &Printer) -> Result<Outcome> {
    flavor::check_dns_label(&args.controller_namespace)
        .map_err(|p| Error::usage(format!("--controller-namespace: {p}")))?;
    let options = Options {
        controller_namespace: args.controller_namespace,
        delete_nodes: args.delete_nodes,
        timeout: Duration::from_secs(args.timeout.as_secs()),
        poll: POLL,
    };
    let workload = ClusterTarget::workload(&global.connection());
    let management = ClusterTarget::management(&global.connection());
    let lines = crate::kube::list::block_on(async move {
        let w = connect(&workload).await?;
        let m = if management.same_as(&workload) {
            w.clone()
        } else {
            connect(&management).await?
        };
        uninstall(&w, &m, &options).await
    })??;
    for line in &lines {
        printer.line(line)?;
    }
    if lines.is_empty() {
        printer
            .line("nothing to uninstall: none of what init installs is on the workload cluster")?;
    }
    printer.err(
        "note: the management cluster's objects (member MachineDeployments and their Machines, templates, the controller's Role) are left in place; remove them with `kubectl delete -k DIR/management` once their nodes are no longer needed",
    )?;
    Ok(Outcome::Success)
}
