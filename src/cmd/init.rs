//! `init`: glue between the flags, the prompts ([`prompt`], the only place that asks), the shell
//! (files, the live management cluster) and the pure generator in [`crate::bundle`] (topology,
//! clones, rendering). Everything is rendered before anything is written or applied.

pub mod prompt;

use std::path::Path;

use crate::bundle::topology::{self, Topology, TopologyFlags};
use crate::bundle::{self, FlavorSpec, SetupInput, flavor, infra, kubeconfig, kustomize};
use crate::cli::OutputFormat;
use crate::cli::{CapiVersion, DryRun, GlobalArgs, InitArgs, InitCommand, InitKubeconfigArgs};
use crate::error::{ClusterRole, Error, Outcome, Result};
use crate::files;
use crate::kube::client::{ClusterTarget, Connection, connect};
use crate::kube::init as live;
use crate::render::Printer;

use prompt::{Ask, Question};

/// Runs `init` or `init kubeconfig`.
pub fn run(global: &GlobalArgs, args: InitArgs, printer: &Printer) -> Result<Outcome> {
    if let Some(InitCommand::Kubeconfig(k)) = &args.command {
        return kubeconfig(global, k, printer);
    }
    if args.infrastructure_template.is_some() && !args.from_cluster {
        return Err(Error::usage(
            "--infrastructure-template needs --from-cluster: the template is read from the management cluster",
        ));
    }
    let mut asker = prompt::for_run(args.yes);
    // Files first: a bad --flavors or --templates fails before any cluster is contacted.
    let mut flavors = args
        .flavors
        .iter()
        .map(|f| flavor::parse_flag(f))
        .collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.flavors_file {
        let text = files::read_text(path, "--flavors")?;
        flavors.extend(flavor::parse_file(&path.display().to_string(), &text)?);
    }
    let templates = files::load_templates(args.templates.as_deref())?;
    let controller_kubeconfig = match &args.controller_kubeconfig {
        Some(path) => Some(kubeconfig::ControllerCredential::from_kubeconfig(
            files::read_text(path, "--controller-kubeconfig")?,
        )),
        None => None,
    };
    let mut conn = global.connection();
    let flags = TopologyFlags {
        management: global.management_kubeconfig.is_some() || global.management_context.is_some(),
        controller_kubeconfig: controller_kubeconfig.is_some(),
        self_hosted: args.self_hosted,
    };
    let topology = ask_topology(flags, &mut conn, asker.as_mut())?;
    let separate = topology == Some(Topology::Separate);
    let client_dry_run = args.dry_run == DryRun::Client;
    let runtime = if args.from_cluster || (args.apply && !client_dry_run) {
        Some(runtime()?)
    } else {
        None
    };

    let dns_label = |a: &str| flavor::check_dns_label(a);
    let namespace = match &global.namespace {
        Some(ns) => Some(ns.clone()),
        None => asker.ask(&Question {
            flag: "--namespace",
            text: "namespace of the Cluster API Cluster on the management cluster",
            default: None,
            optional: false,
            check: &dns_label,
        })?,
    };
    let mut defaults = live::ClusterDefaults::default();
    if let (true, Some(rt), Some(namespace)) = (args.from_cluster, &runtime, &namespace) {
        let hint = args
            .infrastructure_kind
            .as_deref()
            .map(infra::find)
            .transpose()?;
        defaults = rt.block_on(async {
            let client = connect(&ClusterTarget::management(&conn)).await?;
            let (name, template) = (
                args.cluster_name.as_deref(),
                args.infrastructure_template.as_deref(),
            );
            live::read_defaults(&client, namespace, name, template, hint).await
        })?;
    }
    let cluster_name = match (&args.cluster_name, &defaults.cluster_name) {
        (Some(n), _) => Some(n.clone()),
        (None, d) => asker.ask(&Question {
            flag: "--cluster-name",
            text: "name of the Cluster API Cluster",
            default: d.as_deref(),
            optional: false,
            check: &dns_label,
        })?,
    };
    let version_check = |a: &str| bundle::check_version(a).map_err(|e| e.to_string());
    let kubernetes_version = match &args.kubernetes_version {
        Some(v) => Some(v.clone()),
        None => asker.ask(&Question {
            flag: "--kubernetes-version",
            text: "Kubernetes version of the new nodes, e.g. v1.36.1",
            default: defaults.kubernetes_version.as_deref(),
            optional: false,
            check: &version_check,
        })?,
    };
    let clone_from = defaults.clone.take();
    let infra_check = |a: &str| infra::find(a).map(|_| ()).map_err(|e| e.to_string());
    let infra_question = format!("infrastructure provider, one of {}", infra::known_list());
    let infra = match (&args.infrastructure_kind, defaults.infra, &clone_from) {
        (Some(k), _, _) => Some(infra::find(k)?),
        (None, Some(k), _) => Some(k),
        // A worker template of a kind init has no table entry for: cloned as it is.
        (None, None, Some(_)) => Some(&infra::CLONED),
        (None, None, None) => asker
            .ask(&Question {
                flag: "--infrastructure-kind",
                text: &infra_question,
                default: None,
                optional: false,
                check: &infra_check,
            })?
            .map(|k| infra::find(&k))
            .transpose()?,
    };
    let machine_image = match (&args.machine_image, infra) {
        (Some(i), _) => Some(i.clone()),
        (None, Some(infra)) if infra.needs_image && clone_from.is_none() => {
            asker.ask(&Question {
                flag: "--machine-image",
                text: &format!("OS image of the new machines ({} needs one)", infra.kind),
                default: None,
                optional: false,
                check: &prompt::any,
            })?
        }
        (None, _) => None,
    };
    if flavors.is_empty() {
        flavors = ask_flavors(asker.as_mut())?;
    }
    let image_check = |a: &str| match a.chars().any(char::is_whitespace) {
        true => Err(format!("{a:?} is not a container image reference")),
        false => Ok(()),
    };
    let image = match &args.image {
        Some(i) => Some(i.clone()),
        None => asker.ask(&Question {
            flag: "--image",
            text: "container image of the controller",
            default: Some(bundle::DEFAULT_IMAGE),
            optional: false,
            check: &image_check,
        })?,
    };
    // Every missing input at once, before anything is rendered.
    asker.finish()?;
    let (Some(namespace), Some(cluster_name), Some(kubernetes_version), Some(infra), Some(image)) =
        (namespace, cluster_name, kubernetes_version, infra, image)
    else {
        return Err(Error::usage("init: a required input is missing"));
    };
    let input = SetupInput {
        cluster_name,
        namespace,
        kubernetes_version,
        capi_version: args
            .capi_version
            .or(defaults.capi_version)
            .unwrap_or(CapiVersion::V1beta2),
        infra,
        flavors,
        node_taints: args.node_taints.clone(),
        image,
        expected_pods: args.expected_pods,
        expected_nodes: bundle::sizing::nodes_for(args.expected_pods, args.expected_nodes),
        machine_image,
        clone_from,
        controller_namespace: args.controller_namespace.clone(),
        consolidation_policy: args.consolidation_policy.clone(),
        consolidate_after: args.consolidate_after,
        expire_after: args.expire_after,
        separate_management: separate,
        management_kubeconfig: controller_kubeconfig,
    };
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

/// The topology: as the flags say; else asked on a terminal (then the management cluster's
/// kubeconfig, which `conn` then uses); else None: assumed self-hosted (the caller says so once
/// the bundle is rendered).
fn ask_topology(
    flags: TopologyFlags,
    conn: &mut Connection,
    asker: &mut dyn Ask,
) -> Result<Option<Topology>> {
    if let Some(t) = flags.topology()? {
        return Ok(Some(t));
    }
    match asker.confirm("--management-kubeconfig", topology::QUESTION, true)? {
        None => Ok(None),
        Some(false) => Ok(Some(Topology::SelfHosted)),
        Some(true) => {
            let is_file = |a: &str| match Path::new(a).is_file() {
                true => Ok(()),
                false => Err(format!("{a}: no such file")),
            };
            let answer = asker.ask(&Question {
                flag: "--management-kubeconfig",
                text: topology::KUBECONFIG_QUESTION,
                default: None,
                optional: true,
                check: &is_file,
            })?;
            if let Some(path) = answer.filter(|p| !p.is_empty()) {
                conn.management_kubeconfig = Some(path.into());
            }
            Ok(Some(Topology::Separate))
        }
    }
}

/// `init kubeconfig`: a kubeconfig for the controller's management ServiceAccount, holding a
/// token the API server issues for `--duration` (TokenRequest). Re-running it before the token
/// expires is the rotation (README, "Credentials").
fn kubeconfig(
    global: &GlobalArgs,
    args: &InitKubeconfigArgs,
    printer: &Printer,
) -> Result<Outcome> {
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

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Io)
}

fn ask_flavors(asker: &mut dyn Ask) -> Result<Vec<FlavorSpec>> {
    let check = |a: &str| flavor::parse_flag(a).map(|_| ()).map_err(|e| e.to_string());
    let mut flavors = Vec::new();
    loop {
        let optional = !flavors.is_empty();
        let question = if optional {
            "another flavor NAME:cpu=N,memory=Q,price=P (empty to finish)"
        } else {
            "a flavor NAME:cpu=N,memory=Q,price=P, e.g. c3-8:cpu=4,memory=8G,price=0.10"
        };
        let answer = asker.ask(&Question {
            flag: "--flavor",
            text: question,
            default: None,
            optional,
            check: &check,
        })?;
        match answer {
            Some(a) if !a.trim().is_empty() => flavors.push(flavor::parse_flag(a.trim())?),
            _ => return Ok(flavors),
        }
    }
}
