//! `init`: glue between the flags, prompts, files, the live management cluster and the pure
//! generator in [`crate::bundle`]. Everything is rendered before anything is written or applied.

pub mod prompt;

use crate::files;
use crate::kube::init as init_live;
use std::io::IsTerminal;
use std::path::Path;

use crate::bundle::{self, Bundle, FlavorSpec, SetupInput, Templates, flavor, infra};
use crate::cli::{
    CapiVersion, DryRun, GlobalArgs, InitArgs, InitCommand, InitKubeconfigArgs, OutputFormat,
};
use crate::error::{ClusterRole, Error, Outcome, Result};
use crate::kube::client::{ClusterTarget, config, connect};
use crate::model::duration::GoDuration;
use crate::render::Printer;
use crate::vocab::names;

use prompt::{Ask, NoPrompt, Question, Terminal};

/// The shortest token the API server issues (`expirationSeconds` must be at least 10 minutes).
const MIN_TOKEN_SECS: u64 = 600;

/// Runs `init` or `init kubeconfig`.
pub fn run(global: &GlobalArgs, args: InitArgs, printer: &Printer) -> Result<Outcome> {
    if let Some(InitCommand::Kubeconfig(k)) = &args.command {
        return kubeconfig(global, k, printer);
    }
    let mut asker: Box<dyn Ask> = if args.yes {
        Box::new(NoPrompt::new("pass them (prompting is off with --yes)"))
    } else if !std::io::stdin().is_terminal() {
        Box::new(NoPrompt::new(
            "pass them (stdin is not a terminal, so init cannot ask)",
        ))
    } else {
        Box::new(Terminal)
    };
    if args.infrastructure_template.is_some() && !args.from_cluster {
        return Err(Error::usage(
            "--infrastructure-template needs --from-cluster: the template is read from the management cluster",
        ));
    }
    // Files first: a bad --flavors or --templates fails before any cluster is contacted.
    let mut flavors = Vec::new();
    for spec in &args.flavors {
        flavors.push(flavor::parse_flag(spec)?);
    }
    if let Some(path) = &args.flavors_file {
        let name = path.display().to_string();
        let text = read_text(path, "--flavors")?;
        flavors.extend(flavor::parse_file(&name, &text)?);
    }
    let templates = load_templates(args.templates.as_deref())?;
    let controller_kubeconfig = match &args.controller_kubeconfig {
        Some(path) => Some(bundle::kubeconfig::ControllerCredential::from_kubeconfig(
            read_text(path, "--controller-kubeconfig")?,
        )),
        None => None,
    };

    let management = ClusterTarget::management(&global.connection());
    let separate = global.management_kubeconfig.is_some()
        || global.management_context.is_some()
        || controller_kubeconfig.is_some();
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
    let mut defaults = init_live::ClusterDefaults::default();
    if let (true, Some(rt), Some(namespace)) = (args.from_cluster, &runtime, &namespace) {
        let hint = match &args.infrastructure_kind {
            Some(k) => Some(infra::find(k)?),
            None => None,
        };
        defaults = rt.block_on(async {
            let client = connect(&management).await?;
            init_live::read_defaults(
                &client,
                namespace,
                args.cluster_name.as_deref(),
                args.infrastructure_template.as_deref(),
                hint,
            )
            .await
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
    let infra_check = |a: &str| infra::find(a).map(|_| ()).map_err(|e| e.to_string());
    let infra_question = format!("infrastructure provider, one of {}", infra::known_list());
    let infra = match (&args.infrastructure_kind, defaults.infra) {
        (Some(k), _) => Some(infra::find(k)?),
        (None, Some(k)) => Some(k),
        (None, None) => match asker.ask(&Question {
            flag: "--infrastructure-kind",
            text: &infra_question,
            default: None,
            optional: false,
            check: &infra_check,
        })? {
            Some(k) => Some(infra::find(&k)?),
            None => None,
        },
    };
    let clone_from = if args.from_cluster {
        defaults.template.clone()
    } else {
        None
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
    let image_check = |a: &str| {
        if a.chars().any(char::is_whitespace) {
            Err(format!("{a:?} is not a container image reference"))
        } else {
            Ok(())
        }
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

    if args.apply && !client_dry_run {
        let Some(rt) = runtime else {
            return Err(Error::usage("--apply needs a runtime"));
        };
        let dry_run = args.dry_run == DryRun::Server;
        return rt.block_on(apply_both(
            global,
            &input,
            &templates,
            bundle,
            dry_run,
            args.token_duration,
            printer,
        ));
    }
    if args.dry_run == DryRun::Server {
        return Err(Error::usage(
            "--dry-run=server only makes sense with --apply",
        ));
    }
    match &args.output_dir {
        Some(dir) => {
            let files = files::plan(&bundle);
            if client_dry_run {
                for f in &files {
                    printer.err(&format!("would write {}", dir.join(&f.path).display()))?;
                }
            } else {
                let written = files::write(dir, &files, args.force, args.prune)?;
                report_written(dir, &written, printer)?;
                printer.err(&format!(
                    "apply in this order:\n{}",
                    bundle::kustomize::apply_steps(&dir.display().to_string(), separate)
                ))?;
            }
        }
        None => match global.output {
            OutputFormat::Json | OutputFormat::Yaml => printer.structured(&bundle_list(&bundle))?,
            OutputFormat::Table | OutputFormat::Wide => printer.write(&bundle.to_yaml())?,
        },
    }
    if separate && input.management_kubeconfig.is_none() {
        printer.err(&format!(
            "note: the controller reads the management cluster's kubeconfig from Secret {}/{}; after applying the management bundle, create it with:\n  kubectl karpenter-capi init kubeconfig -n {} --cluster-name {} --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -",
            input.controller_namespace,
            names::MANAGEMENT_KUBECONFIG_SECRET,
            input.namespace,
            input.cluster_name
        ))?;
    }
    Ok(Outcome::Success)
}

/// Applies the management bundle, mints the controller's kubeconfig when the management cluster
/// is separate and none was given, then applies the workload bundle.
async fn apply_both(
    global: &GlobalArgs,
    input: &SetupInput,
    templates: &Templates,
    mut bundle: Bundle,
    dry_run: bool,
    token_duration: GoDuration,
    printer: &Printer,
) -> Result<Outcome> {
    let management = ClusterTarget::management(&global.connection());
    let workload = ClusterTarget::workload(&global.connection());
    let mgmt = connect(&management).await?;
    for line in
        init_live::apply(&mgmt, ClusterRole::Management, &bundle.management, dry_run).await?
    {
        printer.line(&line)?;
    }
    if input.separate_management && input.management_kubeconfig.is_none() {
        if dry_run {
            printer.line("management: the controller's kubeconfig Secret is minted only on a real apply (its token does not exist in a dry run)")?;
        } else {
            let mgmt_config = config(&management).await?;
            let minted = init_live::request_token(
                &mgmt,
                &input.namespace,
                &names::management_identity(&input.cluster_name),
                token_seconds(token_duration, "--token-duration")?,
            )
            .await?;
            note_capped(minted.expires, token_duration, printer)?;
            let credential = bundle::kubeconfig::ControllerCredential::minted(
                &bundle::kubeconfig::TokenKubeconfig {
                    server: init_live::server_url(&mgmt_config),
                    ca_base64: ca_of(&mgmt_config),
                    token: minted.token,
                    token_file: None,
                    namespace: input.namespace.clone(),
                    user: names::management_identity(&input.cluster_name),
                },
                minted.expires,
            )?;
            let mut with_secret = input.clone();
            with_secret.management_kubeconfig = Some(credential);
            bundle = bundle::render::render(&with_secret, templates)?;
        }
    }
    let work = connect(&workload).await?;
    for line in init_live::apply(&work, ClusterRole::Workload, &bundle.workload, dry_run).await? {
        printer.line(&line)?;
    }
    Ok(Outcome::Success)
}

/// `init kubeconfig`: a kubeconfig for the controller's management ServiceAccount, holding a
/// token the API server issues for `--duration` (TokenRequest). Re-running it before the token
/// expires is the rotation (README, "Credentials").
fn kubeconfig(
    global: &GlobalArgs,
    args: &InitKubeconfigArgs,
    printer: &Printer,
) -> Result<Outcome> {
    let namespace = global
        .namespace
        .clone()
        .ok_or_else(|| Error::usage("--namespace is required: the Cluster API Cluster's namespace on the management cluster"))?;
    flavor::check_dns_label(&args.cluster_name)
        .map_err(|p| Error::usage(format!("--cluster-name: {p}")))?;
    let seconds = token_seconds(args.duration, "--duration")?;
    let management = ClusterTarget::management(&global.connection());
    let rt = runtime()?;
    let (kubeconfig, expires) = rt.block_on(async {
        let client = connect(&management).await?;
        let mgmt_config = config(&management).await?;
        let server = match &args.server {
            Some(s) => s.clone(),
            None => init_live::server_url(&mgmt_config),
        };
        let identity = names::management_identity(&args.cluster_name);
        let minted = init_live::request_token(&client, &namespace, &identity, seconds).await?;
        let kubeconfig = bundle::kubeconfig::TokenKubeconfig {
            server,
            ca_base64: ca_of(&mgmt_config),
            token: minted.token,
            token_file: None,
            namespace: namespace.clone(),
            user: identity,
        };
        Ok::<_, Error>((kubeconfig, minted.expires))
    })?;
    note_capped(expires, args.duration, printer)?;
    let out = if args.secret {
        // In the cluster the kubeconfig reads the token from the file beside it, so re-running
        // this (rotation) reaches the running controller without a restart.
        let credential = bundle::kubeconfig::ControllerCredential::minted(&kubeconfig, expires)?;
        let secret = bundle::kubeconfig::secret(&args.controller_namespace, &credential)?;
        format!(
            "{}\n{secret}",
            bundle::target_comment(ClusterRole::Workload, Some(&args.controller_namespace))
        )
    } else {
        bundle::kubeconfig::render(&kubeconfig)?
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

/// A token lifetime in seconds, at least the API server's minimum.
fn token_seconds(d: GoDuration, flag: &str) -> Result<i64> {
    if d.as_secs() < MIN_TOKEN_SECS {
        return Err(Error::usage(format!(
            "{flag} {d}: a ServiceAccount token lives at least 10m (the API server's minimum)"
        )));
    }
    Ok(d.as_secs_i64())
}

/// Says so when the API server granted a shorter token than asked for (its
/// `--service-account-max-token-expiration` caps it).
fn note_capped(expires: jiff::Timestamp, asked: GoDuration, printer: &Printer) -> Result<()> {
    let wanted = jiff::Timestamp::now()
        .as_second()
        .saturating_add(asked.as_secs_i64());
    // A minute of slack for the round trip.
    if expires.as_second() + 60 < wanted {
        printer.err(&format!(
            "note: the API server issued the token until {expires}, shorter than the {asked} asked for (its --service-account-max-token-expiration); rotate before then"
        ))?;
    }
    Ok(())
}

/// The CA bundle the management kubeconfig trusts, for the controller's kubeconfig (same server,
/// same CA); None when it trusts the system roots.
fn ca_of(config: &kube::Config) -> Option<String> {
    config
        .root_cert
        .as_deref()
        .and_then(bundle::kubeconfig::pem_base64)
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

/// What `--output-dir` did, on stderr: counts, and each file replaced, stale or pruned by name.
fn report_written(dir: &Path, w: &files::Written, printer: &Printer) -> Result<()> {
    printer.err(&format!(
        "wrote {}: {} created, {} replaced, {} unchanged",
        dir.display(),
        w.created.len(),
        w.replaced.len(),
        w.unchanged.len()
    ))?;
    for f in &w.replaced {
        printer.err(&format!("  replaced {f}"))?;
    }
    for f in &w.pruned {
        printer.err(&format!("  removed stale {f}"))?;
    }
    if !w.stale.is_empty() {
        printer.err(&format!(
            "stale (written by an earlier init, no longer generated; --prune removes them): {}",
            w.stale.join(", ")
        ))?;
    }
    if !w.foreign.is_empty() {
        printer.err(&format!(
            "left untouched (not written by init): {}",
            w.foreign.join(", ")
        ))?;
    }
    Ok(())
}

/// Both bundles as one `v1` `List`, as `kubectl get -o json|yaml` prints several objects: the
/// management bundle's items first, as in the YAML.
fn bundle_list(bundle: &Bundle) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": bundle
            .management
            .iter()
            .chain(&bundle.workload)
            .map(|d| d.value.clone())
            .collect::<Vec<_>>(),
    })
}

fn read_text(path: &Path, flag: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: format!("{flag} {}", path.display()),
        problem: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => format!("cannot read: {e}"),
        },
    })
}

/// The built-in templates, overridden by the files of `dir` with the same relative paths.
fn load_templates(dir: Option<&Path>) -> Result<Templates> {
    let mut templates = Templates::default();
    let Some(dir) = dir else { return Ok(templates) };
    if !dir.is_dir() {
        return Err(Error::Input {
            path: format!("--templates {}", dir.display()),
            problem: "not a directory".to_string(),
        });
    }
    for name in Templates::names() {
        let path = dir.join(name);
        if path.exists() {
            templates.set(name, read_text(&path, "--templates")?);
        }
    }
    Ok(templates)
}
