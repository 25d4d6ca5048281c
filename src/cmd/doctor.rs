//! `doctor`: load a snapshot (live from both clusters, or `-f DUMP` with `--now`), run the
//! checks, print the findings grouped by area; exit 1 when any is an error.

use jiff::Timestamp;

use crate::cli::{DoctorArgs, GlobalArgs, OutputFormat, SourceArgs};
use crate::controller::Config;
use crate::diagnose::{self, AccessSource};
use crate::error::{Outcome, Result};
use crate::input::{Loaded, load_live};
use crate::kube::client::{ClusterTarget, connect};
use crate::render::Printer;
use crate::render::doctor::render_report;

/// Loads the snapshot `doctor` and `explain` work on: the `-f` files, else both live clusters,
/// their Cluster API objects in `namespace` (every namespace when none). Offline, ages are
/// judged at `--now`, else the wall clock.
pub fn load(
    global: &GlobalArgs,
    source: &SourceArgs,
    namespace: Option<&str>,
    review_access: bool,
    printer: &Printer,
) -> Result<Loaded> {
    if !source.files.is_empty() {
        let snapshot = super::source::snapshot(source, printer)?;
        let now = match source.now.or(snapshot.now) {
            Some(t) => t,
            None => {
                if !snapshot.nodeclaims.is_empty() {
                    tracing::warn!(
                        "judging NodeClaim ages at the current time; pass --now with the time the dump was taken"
                    );
                }
                Timestamp::now()
            }
        };
        return Ok(Loaded {
            snapshot,
            now,
            identity: None,
            missing_crds: Vec::new(),
        });
    }
    let workload = ClusterTarget::workload(&global.connection());
    let management = ClusterTarget::management(&global.connection());
    let namespace = namespace.map(str::to_string);
    let now = source.now.unwrap_or_else(Timestamp::now);
    crate::kube::list::block_on(async move {
        let w = connect(&workload).await?;
        let m = if management.same_as(&workload) {
            w.clone()
        } else {
            connect(&management).await?
        };
        let fallback = format!("User/({})", management.describe());
        // A spinner on a terminal when listing takes over a second (large or slow clusters).
        let _spinner = printer.spinner("listing the workload and management clusters");
        load_live(&w, &m, &fallback, namespace.as_deref(), now, review_access).await
    })?
}

/// Runs `doctor`.
pub fn run(global: &GlobalArgs, args: DoctorArgs, printer: &Printer) -> Result<Outcome> {
    let loaded = load(
        global,
        &args.source,
        global.namespace.as_deref(),
        true,
        printer,
    )?;
    let config = Config {
        launch_timeout: args.launch_timeout,
        registration_timeout: args.registration_timeout,
        ..Config::default()
    };
    let access = match &loaded.identity {
        Some(identity) => AccessSource::Reviewed(identity),
        None => AccessSource::RbacObjects,
    };
    let report = diagnose::crds::with_missing_crds(
        &loaded.missing_crds,
        diagnose::run(&loaded.snapshot, loaded.now, &config, access),
    );
    match printer.format {
        OutputFormat::Json | OutputFormat::Yaml => printer.structured(&report)?,
        OutputFormat::Table | OutputFormat::Wide => printer.write(&render_report(
            &report,
            printer.color,
            printer.format == OutputFormat::Wide,
        ))?,
    }
    Ok(if report.has_errors() {
        Outcome::ProblemsFound
    } else {
        Outcome::Success
    })
}
