//! `init`: glue between the flags, prompts, files, the live management cluster and the pure
//! generator in [`crate::setup`]. Everything is rendered before anything is written or applied.

pub mod live;
pub mod prompt;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{CapiVersion, DryRun, GlobalArgs, InitArgs, InitCommand, InitKubeconfigArgs};
use crate::error::{ClusterRole, Error, Outcome, Result};
use crate::kube::client::{ClusterTarget, config, connect};
use crate::render::Printer;
use crate::setup::render::names;
use crate::setup::{self, Bundle, FlavorSpec, SetupInput, Templates, flavor, infra};

use prompt::{Ask, NoPrompt, Terminal};

/// How long `--apply` waits for the token controller to fill the new token Secret.
const TOKEN_WAIT: Duration = Duration::from_secs(30);

/// Runs `init` or `init kubeconfig`.
pub fn run(global: &GlobalArgs, args: InitArgs, printer: &Printer) -> Result<Outcome> {
    if let Some(InitCommand::Kubeconfig(k)) = &args.command {
        return kubeconfig(global, k, printer);
    }
    let mut asker: Box<dyn Ask> = if args.yes {
        Box::new(NoPrompt {
            reason: "pass it (prompting is off with --yes)",
        })
    } else if !std::io::stdin().is_terminal() {
        Box::new(NoPrompt {
            reason: "pass it (stdin is not a terminal, so init cannot ask)",
        })
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
        Some(path) => Some(read_text(path, "--controller-kubeconfig")?),
        None => None,
    };

    let management = ClusterTarget::management(global);
    let separate = global.management_kubeconfig.is_some()
        || global.management_context.is_some()
        || controller_kubeconfig.is_some();
    let runtime = if args.from_cluster || args.apply {
        Some(runtime()?)
    } else {
        None
    };

    let namespace = match &global.namespace {
        Some(ns) => ns.clone(),
        None => asker.ask(
            "--namespace",
            "namespace of the Cluster API Cluster on the management cluster",
            None,
            false,
        )?,
    };
    let mut defaults = live::ClusterDefaults::default();
    if let (true, Some(rt)) = (args.from_cluster, &runtime) {
        let hint = match &args.infrastructure_kind {
            Some(k) => Some(infra::find(k)?),
            None => None,
        };
        defaults = rt.block_on(async {
            let client = connect(&management).await?;
            live::read_defaults(
                &client,
                &namespace,
                args.cluster_name.as_deref(),
                args.infrastructure_template.as_deref(),
                hint,
            )
            .await
        })?;
    }

    let cluster_name = match (&args.cluster_name, &defaults.cluster_name) {
        (Some(n), _) => n.clone(),
        (None, d) => asker.ask(
            "--cluster-name",
            "name of the Cluster API Cluster",
            d.as_deref(),
            false,
        )?,
    };
    let kubernetes_version = match &args.kubernetes_version {
        Some(v) => v.clone(),
        None => asker.ask(
            "--kubernetes-version",
            "Kubernetes version of the new nodes, e.g. v1.36.1",
            defaults.kubernetes_version.as_deref(),
            false,
        )?,
    };
    let infra = match (&args.infrastructure_kind, defaults.infra) {
        (Some(k), _) => infra::find(k)?,
        (None, Some(k)) => k,
        (None, None) => infra::find(&asker.ask(
            "--infrastructure-kind",
            &format!("infrastructure provider, one of {}", infra::known_list()),
            None,
            false,
        )?)?,
    };
    let clone_from = if args.from_cluster {
        defaults.template.clone()
    } else {
        None
    };
    let machine_image = match &args.machine_image {
        Some(i) => Some(i.clone()),
        None if infra.needs_image && clone_from.is_none() => Some(asker.ask(
            "--machine-image",
            &format!("OS image of the new machines ({} needs one)", infra.kind),
            None,
            false,
        )?),
        None => None,
    };
    if flavors.is_empty() {
        flavors = ask_flavors(asker.as_mut())?;
    }
    let image = match &args.image {
        Some(i) => i.clone(),
        None => asker.ask("--image", "container image of the controller", None, false)?,
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
        machine_image,
        clone_from,
        controller_namespace: args.controller_namespace.clone(),
        consolidation_policy: args.consolidation_policy.clone(),
        consolidate_after: args.consolidate_after,
        expire_after: args.expire_after,
        separate_management: separate,
        management_kubeconfig: controller_kubeconfig,
    };
    let bundle = setup::render::render(&input, &templates)?;

    if args.apply {
        let Some(rt) = runtime else {
            return Err(Error::usage("--apply needs a runtime"));
        };
        let dry_run = args.dry_run == DryRun::Server;
        return rt.block_on(apply_both(
            global, &input, &templates, bundle, dry_run, printer,
        ));
    }
    if args.dry_run == DryRun::Server {
        return Err(Error::usage(
            "--dry-run server only makes sense with --apply",
        ));
    }
    match &args.output_dir {
        Some(dir) => {
            write_output_dir(dir, &bundle)?;
            eprintln!(
                "wrote {} management and {} workload objects to {}",
                bundle.management.len(),
                bundle.workload.len(),
                dir.display()
            );
        }
        None => printer.write(&bundle.to_yaml())?,
    }
    if separate && input.management_kubeconfig.is_none() {
        eprintln!(
            "note: the controller reads the management cluster's kubeconfig from Secret {}/{}; after applying the management bundle, create it with:\n  kubectl karpenter-capi init kubeconfig -n {} --cluster-name {} --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -",
            input.controller_namespace,
            names::MANAGEMENT_KUBECONFIG_SECRET,
            input.namespace,
            input.cluster_name
        );
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
    printer: &Printer,
) -> Result<Outcome> {
    let management = ClusterTarget::management(global);
    let workload = ClusterTarget::workload(global);
    let mgmt = connect(&management).await?;
    for line in live::apply(&mgmt, ClusterRole::Management, &bundle.management, dry_run).await? {
        printer.line(&line)?;
    }
    if input.separate_management && input.management_kubeconfig.is_none() {
        if dry_run {
            printer.line("management: the controller's kubeconfig Secret is minted only on a real apply (its token does not exist in a dry run)")?;
        } else {
            let mgmt_config = config(&management).await?;
            let token = names::management_token(&input.cluster_name);
            let (token, ca) = live::read_token(&mgmt, &input.namespace, &token, TOKEN_WAIT).await?;
            let kubeconfig = setup::kubeconfig::render(&setup::kubeconfig::TokenKubeconfig {
                server: live::server_url(&mgmt_config),
                ca_base64: ca,
                token,
                namespace: input.namespace.clone(),
                user: names::management_identity(&input.cluster_name),
            })?;
            let mut with_secret = input.clone();
            with_secret.management_kubeconfig = Some(kubeconfig);
            bundle = setup::render::render(&with_secret, templates)?;
        }
    }
    let work = connect(&workload).await?;
    for line in live::apply(&work, ClusterRole::Workload, &bundle.workload, dry_run).await? {
        printer.line(&line)?;
    }
    Ok(Outcome::Success)
}

/// `init kubeconfig`: a kubeconfig for the controller's management ServiceAccount.
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
    let management = ClusterTarget::management(global);
    let rt = runtime()?;
    let text = rt.block_on(async {
        let client = connect(&management).await?;
        let server = match &args.server {
            Some(s) => s.clone(),
            None => live::server_url(&config(&management).await?),
        };
        let secret = names::management_token(&args.cluster_name);
        let (token, ca) = live::read_token(&client, &namespace, &secret, Duration::ZERO).await?;
        setup::kubeconfig::render(&setup::kubeconfig::TokenKubeconfig {
            server,
            ca_base64: ca,
            token,
            namespace: namespace.clone(),
            user: names::management_identity(&args.cluster_name),
        })
    })?;
    if args.secret {
        let secret = setup::kubeconfig::secret(&args.controller_namespace, &text)?;
        printer.write(&format!(
            "{}\n{secret}",
            setup::target_comment(ClusterRole::Workload, Some(&args.controller_namespace))
        ))?;
    } else {
        printer.write(&text)?;
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
    let mut flavors = Vec::new();
    loop {
        let optional = !flavors.is_empty();
        let question = if optional {
            "another flavor NAME:cpu=N,memory=Q,price=P (empty to finish)"
        } else {
            "a flavor NAME:cpu=N,memory=Q,price=P, e.g. c3-8:cpu=4,memory=8G,price=0.10"
        };
        let answer = asker.ask("--flavor", question, None, optional)?;
        if answer.trim().is_empty() {
            return Ok(flavors);
        }
        flavors.push(flavor::parse_flag(answer.trim())?);
    }
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

/// Writes DIR/management/*.yaml and DIR/workload/*.yaml all at once: into a temporary directory
/// inside DIR first, then renamed into place, so a failure leaves no partial bundle.
pub fn write_output_dir(dir: &Path, bundle: &Bundle) -> Result<()> {
    let io = |what: String, e: std::io::Error| Error::Input {
        path: format!("--output-dir {}", dir.display()),
        problem: format!("{what}: {e}"),
    };
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create the directory".to_string(), e))?;
    let tmp = dir.join(format!(".karpenter-capi-init-{}", std::process::id()));
    let result = (|| -> Result<()> {
        for (sub, docs) in [
            ("management", &bundle.management),
            ("workload", &bundle.workload),
        ] {
            let d = tmp.join("new").join(sub);
            std::fs::create_dir_all(&d)
                .map_err(|e| io(format!("cannot create {}", d.display()), e))?;
            for (i, doc) in docs.iter().enumerate() {
                let path = d.join(doc.file_name(i + 1));
                std::fs::write(&path, doc.with_comment())
                    .map_err(|e| io(format!("cannot write {}", path.display()), e))?;
            }
        }
        std::fs::create_dir_all(tmp.join("old"))
            .map_err(|e| io("cannot create a temporary directory".to_string(), e))?;
        for sub in ["management", "workload"] {
            let target: PathBuf = dir.join(sub);
            if target.exists() {
                std::fs::rename(&target, tmp.join("old").join(sub))
                    .map_err(|e| io(format!("cannot replace {}", target.display()), e))?;
            }
            std::fs::rename(tmp.join("new").join(sub), &target)
                .map_err(|e| io(format!("cannot create {}", target.display()), e))?;
        }
        Ok(())
    })();
    // The temporary directory holds only the previous bundle (or a failed new one) now.
    let _ = std::fs::remove_dir_all(&tmp);
    result
}
