//! `status` (and `status -w`): read the live clusters or the `-f` files, build the core's status
//! model, render it. With `-w` it re-reads every `--interval` and prints again only when the
//! cluster changed (ages aside). It re-lists rather than watches: one view every two seconds
//! costs a LIST per kind, it needs no reflector stores or resource versions kept across
//! reads, and the same loop serves the `-f` files. Ctrl-C ends it with exit 0; a closed pipe
//! too (main treats a broken pipe as success).

use jiff::Timestamp;

use crate::cli::{GlobalArgs, OutputMode, StatusArgs};
use crate::error::{Error, Outcome, Result};
use crate::kube::client::{ClusterTarget, connect};
use crate::render::Printer;
use crate::render::status::{View, write};
use crate::status::{ClusterStatus, Options, build, selector};

/// Runs `status`.
pub fn run(global: &GlobalArgs, args: StatusArgs, printer: &Printer) -> Result<Outcome> {
    if args.watch && args.source.files.iter().any(|f| f == "-") {
        return Err(Error::usage(
            "-w re-reads its input every --interval; it cannot re-read stdin (-f -)",
        ));
    }
    let options = Options {
        selector: selector::parse(args.selector.as_deref().unwrap_or(""))
            .map_err(|e| Error::usage(format!("-l: {e}")))?,
        currency: args.currency.clone(),
        skip_comparison: args.no_compare,
    };
    let view = View {
        mode: global.output_mode.clone(),
        no_headers: args.no_headers,
        color: printer.color,
    };
    let redraw = args.watch
        && matches!(view.mode, OutputMode::Table | OutputMode::Wide)
        && std::io::IsTerminal::is_terminal(&std::io::stdout());
    crate::kube::list::block_on(async {
        let clients = if args.source.files.is_empty() {
            let workload = ClusterTarget::workload(&global.connection());
            let management = ClusterTarget::management(&global.connection());
            let w = connect(&workload).await?;
            let m = if management.same_as(&workload) {
                w.clone()
            } else {
                connect(&management).await?
            };
            Some((w, m, format!("User/({})", management.describe())))
        } else {
            None
        };
        let mut stop = std::pin::pin!(tokio::signal::ctrl_c());
        let mut shown: Option<ClusterStatus> = None;
        let mut first = true;
        loop {
            let read = async {
                match &clients {
                    Some((w, m, subject)) => {
                        let now = args.source.now.unwrap_or_else(Timestamp::now);
                        let ns = global.namespace.as_deref();
                        live_status(w, m, subject, ns, now, &options).await
                    }
                    None => {
                        let snapshot = super::source::snapshot_with(&args.source, printer, first)?;
                        let now = args.source.now.or(snapshot.now);
                        Ok(build(
                            &snapshot,
                            now.unwrap_or_else(Timestamp::now),
                            &options,
                        ))
                    }
                }
            };
            let status = tokio::select! {
                r = read => r?,
                _ = &mut stop => break,
            };
            first = false;
            if shown.as_ref().is_none_or(|s| !s.same_state(&status)) {
                let mut frame = Vec::new();
                if redraw {
                    // Home and clear, as watch(1) redraws a terminal.
                    frame.extend_from_slice(b"\x1b[H\x1b[2J");
                } else if shown.is_some() {
                    frame.extend_from_slice(separator(&view.mode));
                }
                write(&mut frame, &status, &view)?;
                printer.write(&String::from_utf8_lossy(&frame))?;
                shown = Some(status);
            }
            if !args.watch {
                break;
            }
            let pause = std::time::Duration::from_secs(args.interval.as_secs().max(1));
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = &mut stop => break,
            }
        }
        Ok::<_, Error>(())
    })??;
    Ok(Outcome::Success)
}

/// The status of both live clusters (Cluster API objects in `namespace`, or every namespace),
/// listed through the clients given (tests pass in-memory ones).
pub async fn live_status(
    workload: &kube::Client,
    management: &kube::Client,
    subject: &str,
    namespace: Option<&str>,
    now: Timestamp,
    options: &Options,
) -> Result<ClusterStatus> {
    let loaded =
        crate::input::load_live(workload, management, subject, namespace, now, false).await?;
    Ok(build(&loaded.snapshot, now, options))
}

/// What goes between two views on a pipe: YAML's document marker, nothing between JSON
/// objects (a stream of them, as `kubectl get -w -o json` prints), else a blank line.
fn separator(mode: &OutputMode) -> &'static [u8] {
    match mode {
        OutputMode::Yaml => b"---\n",
        OutputMode::Json | OutputMode::Name | OutputMode::JsonPath(_) => b"",
        _ => b"\n",
    }
}
