//! `run`: the controller. `--once` does one observe -> plan -> act pass and prints the plan;
//! `--dry-run` never writes; `--once --dry-run -f DUMP [--now T]` plans from files with no
//! cluster at all; without `--once`, the continuous loop with watches, leader election, metrics
//! and clean shutdown on SIGTERM/SIGINT.
//!
//! # Errors
//! Flag combinations that cannot work are usage errors; cluster faults name the cluster, verb and
//! resource; a `--once` pass whose actions failed is [`Error::Apply`] (exit 2) after the plan is
//! printed.

use crate::cli::{DryRun, GlobalArgs, RunArgs};
use crate::controller::{self, Config};
use crate::error::{Error, Outcome, Result};
use crate::kube::client::ClusterTarget;
use crate::kube::daemon::{self, DaemonSettings, connect_both};
use crate::kube::leader::LeaseLock;
use crate::kube::list::{Clients, live_snapshot_in};
use crate::kube::reconciler::{Context, pass};
use crate::render::Printer;
use crate::render::plan::{print_pass, print_plan};

/// The core settings from the flags.
pub fn config(args: &RunArgs) -> Config {
    Config {
        batch_idle: args.batch_idle_duration,
        batch_max: args.batch_max_duration,
        launch_timeout: args.launch_timeout,
        registration_timeout: args.registration_timeout,
    }
}

/// Rejects flag combinations that cannot do what they say.
pub fn validate(args: &RunArgs) -> Result<()> {
    if args.dry_run == DryRun::Server {
        return Err(Error::usage(
            "run does not support --dry-run=server: the writes of a pass depend on each other (a Machine is scaled \
             up for a NodeClaim created in the same pass), so the API server cannot judge them one by one; \
             use --dry-run=client (or --dry-run) to print the plan",
        ));
    }
    let replay_ok = args.once && args.dry_run.is_dry();
    if !args.source.files.is_empty() && !replay_ok {
        return Err(Error::usage(
            "-f plans from files and has no cluster to write to: use it with --once --dry-run, e.g. \
             `kubectl karpenter-capi run --once --dry-run -f dump.yaml`",
        ));
    }
    if args.source.now.is_some() && args.source.files.is_empty() {
        return Err(Error::usage(
            "--now evaluates a dump as of a past time and needs -f; a live pass uses the current time",
        ));
    }
    if args.batch_max_duration.as_secs() < args.batch_idle_duration.as_secs() {
        return Err(Error::usage(format!(
            "--batch-max-duration ({}s) is shorter than --batch-idle-duration ({}s)",
            args.batch_max_duration.as_secs(),
            args.batch_idle_duration.as_secs()
        )));
    }
    Ok(())
}

/// Runs `run`.
pub fn run(global: &GlobalArgs, args: RunArgs, printer: &Printer) -> Result<Outcome> {
    validate(&args)?;
    if !args.source.files.is_empty() {
        return replay(&args, printer);
    }
    let workload = ClusterTarget::workload(&global.connection());
    let management = ClusterTarget::management(&global.connection());
    let namespace = global.namespace.clone();
    if args.once {
        return crate::kube::list::block_on(async {
            let clients = connect_both(&workload, &management).await?;
            once(
                &clients,
                namespace.as_deref(),
                args.cluster_name.as_deref(),
                &config(&args),
                args.dry_run.is_dry(),
                printer,
            )
            .await
        })?;
    }
    let settings = DaemonSettings {
        namespace,
        cluster_name: args.cluster_name.clone(),
        config: config(&args),
        dry_run: args.dry_run.is_dry(),
        leader_elect: args.leader_elect,
        leader_election_namespace: args.leader_election_namespace.clone(),
        metrics_bind_address: args.metrics_bind_address.clone(),
    };
    daemon::run_blocking(&workload, &management, settings)?;
    Ok(Outcome::Success)
}

/// Logged when a dump is planned as of the wall clock.
const UNDATED: &str = "planning as of the current time (the input says no time); pass --now with the time the dump was taken";

/// `--once --dry-run -f`: plans from files, as of `--now` (else the dump's time, else now).
fn replay(args: &RunArgs, printer: &Printer) -> Result<Outcome> {
    let snapshot = super::source::snapshot(&args.source, printer)?;
    super::source::log_warnings(&snapshot);
    let now = super::source::as_of(&args.source, &snapshot, Some(UNDATED));
    print_plan(printer, &controller::plan(&snapshot, now, &config(args)))?;
    Ok(Outcome::Success)
}

/// One observe -> plan -> act pass against live clusters; prints the plan, then (tables only)
/// a summary of what was applied.
pub async fn once(
    clients: &Clients,
    namespace: Option<&str>,
    cluster: Option<&str>,
    config: &Config,
    dry_run: bool,
    printer: &Printer,
) -> Result<Outcome> {
    let spinner = printer.spinner("listing the workload and management clusters");
    let snapshot =
        live_snapshot_in(&clients.workload, &clients.management, namespace, cluster).await?;
    drop(spinner);
    super::source::log_warnings(&snapshot);
    let ns = namespace.map(str::to_string);
    let ctx = Context::new(clients.clone(), config.clone(), ns, dry_run);
    let report = pass(&ctx, &snapshot).await;
    let applied = (!dry_run).then(|| (report.applied(), report.results.len()));
    print_pass(printer, &report.plan, applied)?;
    report.into_result()?;
    Ok(Outcome::Success)
}

/// The Lease `run --leader-elect` competes for: a dry run competes for its own
/// ([`crate::vocab::names::DRY_RUN_LEASE_NAME`]), never the live controller's.
pub fn lease_lock(client: kube::Client, args: &RunArgs, identity: String) -> LeaseLock {
    LeaseLock::for_mode(
        client,
        &args.leader_election_namespace,
        identity,
        args.dry_run.is_dry(),
    )
}
