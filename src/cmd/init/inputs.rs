//! `init`'s inputs: the files the flags name, the topology, what `--from-cluster` reads from the
//! management cluster, and every question a flag did not answer (asked through [`super::prompt`],
//! the only place that asks), gathered into the core's [`SetupInput`].

use std::path::Path;

use crate::bundle::topology::{self, Topology, TopologyFlags};
use crate::bundle::{self, FlavorSpec, SetupInput, Templates, flavor, infra, kubeconfig};
use crate::cli::{CapiVersion, DryRun, GlobalArgs, InitArgs};
use crate::error::{Error, Result};
use crate::files;
use crate::kube::client::{ClusterTarget, Connection, connect};
use crate::kube::init as live;

use super::prompt::{self, Ask, Question};

/// Everything `init` needs before rendering.
pub struct Gathered {
    /// The validated-to-be inputs of the generator.
    pub input: SetupInput,
    /// The templates to render with.
    pub templates: Templates,
    /// The topology, None when assumed self-hosted (nothing said it and nothing could ask).
    pub topology: Option<Topology>,
    /// The clusters to talk to (the management kubeconfig may come from an answer).
    pub conn: Connection,
    /// A runtime, when a cluster is read or written.
    pub runtime: Option<tokio::runtime::Runtime>,
}

/// Reads the files, decides the topology, reads the cluster with `--from-cluster` and asks for
/// what is missing; every missing input is reported at once when nothing can ask.
pub fn gather(global: &GlobalArgs, args: &InitArgs) -> Result<Gathered> {
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
        Some(super::runtime()?)
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
    Ok(Gathered {
        input,
        templates,
        topology,
        conn,
        runtime,
    })
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
