//! `init kubeconfig`: the controller's management kubeconfig, minted by the management cluster
//! (TokenRequest) through the shell, printed or written 0600.

use crate::bundle::{self, flavor, kubeconfig};
use crate::cli::{GlobalArgs, InitKubeconfigArgs};
use crate::error::{ClusterRole, Error, Outcome, Result};
use crate::files;
use crate::kube::client::ClusterTarget;
use crate::kube::init as live;
use crate::render::Printer;

use super::runtime;

/// `init kubeconfig`: a kubeconfig for the controller's management ServiceAccount, holding a
/// token the API server issues for `--duration` (TokenRequest). Re-running it before the token
/// expires is the rotation (README, "Credentials").
pub fn run(global: &GlobalArgs, args: &InitKubeconfigArgs, printer: &Printer) -> Result<Outcome> {
    let namespace = global.namespace.clone().ok_or_else(|| {
        Error::usage("--namespace is required: the Cluster API Cluster's namespace on the management cluster")
    })?;
    flavor::check_dns_label(&args.cluster_name)
        .map_err(|p| Error::usage(format!("--cluster-name: {p}")))?;
    let seconds = kubeconfig::token_seconds(args.duration, "--duration")?;
    let management = ClusterTarget::management(&global.connection());
    let server = args.server.as_deref();
    let minted = runtime()?.block_on(live::mint_kubeconfig(
        &management,
        &namespace,
        &args.cluster_name,
        seconds,
        server,
    ))?;
    let expires = minted.expires;
    if let Some(note) = kubeconfig::capped_note(jiff::Timestamp::now(), expires, args.duration) {
        printer.note(&note)?;
    }
    let out = if args.secret {
        // In the cluster the kubeconfig reads the token from the file beside it, so re-running
        // this (rotation) reaches the running controller without a restart.
        let credential = kubeconfig::ControllerCredential::minted(&minted.kubeconfig, expires)?;
        let secret = kubeconfig::secret(&args.controller_namespace, &credential)?;
        let target =
            bundle::target_comment(ClusterRole::Workload, Some(&args.controller_namespace));
        format!("{target}\n{secret}")
    } else {
        kubeconfig::render(&minted.kubeconfig)?
    };
    match &args.output_file {
        // It holds a credential: created 0600, replaced whole.
        Some(path) => {
            files::write_private(path, &out)?;
            printer.err(&format!(
                "wrote {} (mode 0600); the token expires at {expires}",
                path.display()
            ))?;
        }
        None => printer.write(&out)?,
    }
    Ok(Outcome::Success)
}
