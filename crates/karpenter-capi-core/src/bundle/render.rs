//! Rendering the two bundles from minijinja templates: the built-in ones under `templates/`
//! (embedded) or a user's overrides, over a context computed here so templates stay dumb. Every
//! rendered document is parsed back to make sure it is one Kubernetes object.
//!
//! # Errors
//! A template that fails to render or renders invalid YAML is an [`Error::Input`] naming the
//! template (and the flavor it was rendered for).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::CapiVersion;
use super::clone;
use super::{SetupInput, target_comment};
use crate::error::{ClusterRole, Error};
use crate::model::quantity;
use crate::vocab::capacity as annotations;
use crate::vocab::keys;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::UNREGISTERED_TAINT;
use crate::vocab::names;
use crate::vocab::permissions::{self, Permission};

/// The built-in templates, by their path under `templates/`.
pub(crate) const BUILTIN: &[(&str, &str)] = &[
    (
        "management/rbac.yaml.j2",
        include_str!("../../templates/management/rbac.yaml.j2"),
    ),
    (
        "management/kubeadmconfigtemplate.yaml.j2",
        include_str!("../../templates/management/kubeadmconfigtemplate.yaml.j2"),
    ),
    (
        "management/machinedeployment.yaml.j2",
        include_str!("../../templates/management/machinedeployment.yaml.j2"),
    ),
    (
        "infrastructure/clone.yaml.j2",
        include_str!("../../templates/infrastructure/clone.yaml.j2"),
    ),
    (
        "infrastructure/openstack.yaml.j2",
        include_str!("../../templates/infrastructure/openstack.yaml.j2"),
    ),
    (
        "infrastructure/docker.yaml.j2",
        include_str!("../../templates/infrastructure/docker.yaml.j2"),
    ),
    (
        "infrastructure/dev.yaml.j2",
        include_str!("../../templates/infrastructure/dev.yaml.j2"),
    ),
    (
        "infrastructure/aws.yaml.j2",
        include_str!("../../templates/infrastructure/aws.yaml.j2"),
    ),
    (
        "infrastructure/azure.yaml.j2",
        include_str!("../../templates/infrastructure/azure.yaml.j2"),
    ),
    (
        "infrastructure/gcp.yaml.j2",
        include_str!("../../templates/infrastructure/gcp.yaml.j2"),
    ),
    (
        "infrastructure/hetzner.yaml.j2",
        include_str!("../../templates/infrastructure/hetzner.yaml.j2"),
    ),
    (
        "infrastructure/vsphere.yaml.j2",
        include_str!("../../templates/infrastructure/vsphere.yaml.j2"),
    ),
    (
        "workload/namespace.yaml.j2",
        include_str!("../../templates/workload/namespace.yaml.j2"),
    ),
    (
        "workload/rbac.yaml.j2",
        include_str!("../../templates/workload/rbac.yaml.j2"),
    ),
    (
        "workload/secret.yaml.j2",
        include_str!("../../templates/workload/secret.yaml.j2"),
    ),
    (
        "workload/deployment.yaml.j2",
        include_str!("../../templates/workload/deployment.yaml.j2"),
    ),
    (
        "workload/pdb.yaml.j2",
        include_str!("../../templates/workload/pdb.yaml.j2"),
    ),
    (
        "workload/service.yaml.j2",
        include_str!("../../templates/workload/service.yaml.j2"),
    ),
    (
        "workload/servicemonitor.yaml.j2",
        include_str!("../../templates/workload/servicemonitor.yaml.j2"),
    ),
    (
        "workload/nodeclass.yaml.j2",
        include_str!("../../templates/workload/nodeclass.yaml.j2"),
    ),
    (
        "workload/nodepool.yaml.j2",
        include_str!("../../templates/workload/nodepool.yaml.j2"),
    ),
];

/// The template sources to render with: the built-in ones, possibly overridden by name.
#[derive(Debug, Clone)]
pub struct Templates {
    sources: BTreeMap<String, String>,
}

impl Default for Templates {
    fn default() -> Self {
        Templates {
            sources: BUILTIN
                .iter()
                .map(|(n, s)| (n.to_string(), s.to_string()))
                .collect(),
        }
    }
}

impl Templates {
    /// Replaces the built-in template `name` (a path such as `workload/nodepool.yaml.j2`).
    pub fn set(&mut self, name: &str, source: String) {
        self.sources.insert(name.to_string(), source);
    }

    /// The names of every template, for `--templates DIR` lookups.
    pub fn names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }
}

/// One generated Kubernetes object.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Which cluster it goes to.
    pub(crate) cluster: ClusterRole,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, for namespaced objects.
    pub namespace: Option<String>,
    /// The YAML text as rendered (no leading `---`, no target comment).
    pub yaml: String,
    /// The parsed object.
    pub value: Value,
}

impl Document {
    /// The document with its target comment, as printed and written.
    pub fn with_comment(&self) -> String {
        format!(
            "{}\n{}",
            target_comment(self.cluster, self.namespace.as_deref()),
            self.yaml
        )
    }

    /// A file name for `--output-dir`: order, kind and name, e.g. `03-machinedeployment-x.yaml`.
    pub fn file_name(&self, index: usize) -> String {
        format!(
            "{index:02}-{}-{}.yaml",
            self.kind.to_ascii_lowercase(),
            self.name
        )
    }
}

/// Both bundles, in apply order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bundle {
    /// Objects for the management cluster.
    pub management: Vec<Document>,
    /// Objects for the workload cluster.
    pub workload: Vec<Document>,
    /// Optional workload objects whose CRDs a cluster may lack (the ServiceMonitor): written by
    /// `--output-dir` as a kustomize component, never printed or applied by default.
    pub optional: Vec<Document>,
}

impl Bundle {
    /// The management bundle, then the workload bundle, each document with its target comment.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        for doc in self.management.iter().chain(&self.workload) {
            out.push_str("---\n");
            out.push_str(&doc.with_comment());
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    /// Both bundles as one `v1` `List`, as `kubectl get -o json|yaml` prints several objects:
    /// the management bundle's items first, as in the YAML.
    pub fn to_list(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"resourceVersion": ""},
            "items": self
                .management
                .iter()
                .chain(&self.workload)
                .map(|d| d.value.clone())
                .collect::<Vec<_>>(),
        })
    }
}

/// The MachineDeployment (and machine template) name of a flavor.
pub(crate) fn machine_deployment_name(cluster: &str, flavor: &str) -> String {
    format!("{cluster}-karpenter-{flavor}")
}

/// RBAC rules as the templates render them: one rule per permission.
pub fn rules(list: &[Permission]) -> Vec<Value> {
    list.iter()
        .map(|p| json!({"apiGroups": [p.group], "resources": [p.resource], "verbs": p.verbs}))
        .collect()
}

/// The management Role's rules: exactly [`permissions::MANAGEMENT`]. (`run` never reads the
/// provider's machine templates, so the Role grants nothing on them.)
pub(crate) fn management_rules(_input: &SetupInput) -> Vec<Value> {
    rules(permissions::MANAGEMENT)
}

/// The context every template sees.
pub(crate) fn context(input: &SetupInput) -> Result<Value, Error> {
    let capi = match input.capi_version {
        CapiVersion::V1beta2 => "v1beta2",
        CapiVersion::V1beta1 => "v1beta1",
    };
    // One KubeadmConfigTemplate for all flavors when they agree on pods and taints, else one each:
    // max-pods and registration taints are per node, and the template is what sets them.
    let shared = input
        .flavors
        .windows(2)
        .all(|w| w[0].max_pods == w[1].max_pods && w[0].taints == w[1].taints);
    let mut kubeadm = Vec::new();
    let mut flavors = Vec::new();
    for f in &input.flavors {
        let kubeadm_name = if shared {
            format!("{}-karpenter", input.cluster_name)
        } else {
            format!("{}-karpenter-{}", input.cluster_name, f.name)
        };
        if !shared || kubeadm.is_empty() {
            let mut args = Vec::new();
            if input.infra.external_cloud_provider {
                args.push(json!({"name": "cloud-provider", "value": "external"}));
            }
            args.push(json!({"name": "max-pods", "value": f.max_pods.to_string()}));
            let mut taints = vec![clone::taint_value(UNREGISTERED_TAINT)?];
            let extra: Vec<String> = input.node_taints.iter().chain(&f.taints).cloned().collect();
            for t in &extra {
                taints.push(clone::taint_value(t)?);
            }
            // Cloned from the cluster's worker: its spec whole, plus the taints.
            let cloned = match input.clone_from.as_ref().and_then(|c| c.bootstrap.as_ref()) {
                Some(b) => Some((
                    b,
                    clone::bootstrap_spec(&b.spec, &extra, f.max_pods, &b.api_version)?,
                )),
                None => None,
            };
            kubeadm.push(json!({
                "name": kubeadm_name,
                "kubelet_args": args,
                "taints": taints,
                "node_name": input.infra.node_name,
                "cloned_from": cloned.as_ref().map(|(b, _)| &b.name),
                "api_version": cloned.as_ref().map(|(b, _)| &b.api_version),
                "clone_spec": cloned.map(|(_, spec)| spec),
            }));
        }
        let mut labels = vec![
            format!("{}={}", keys::INSTANCE_TYPE, f.instance_type),
            format!("{}={}", keys::ARCH, f.arch),
            format!("{}=linux", keys::OS),
        ];
        if let Some(z) = &f.zone {
            labels.push(format!("{}={}", keys::ZONE, z));
        }
        labels.push(format!("{}={}", keys::CAPACITY_TYPE, f.capacity_type));
        let mut taints: Vec<String> = input.node_taints.clone();
        taints.extend(f.taints.iter().cloned());
        let md = machine_deployment_name(&input.cluster_name, &f.name);
        flavors.push(json!({
            "name": f.name,
            "machine_deployment": md,
            "machine_template": md,
            "kubeadm_template": kubeadm_name,
            "instance_type": f.instance_type,
            "cpu": f.cpu,
            "cpu_cores": f.cpu_millis / 1000,
            "memory": f.memory,
            "memory_mib": clone::mib(f.memory_bytes),
            "price": f.price,
            "max": f.max.to_string(),
            "max_pods": f.max_pods.to_string(),
            "disk": f.disk,
            "gpu_count": f.gpu.as_ref().map(|g| g.count.to_string()),
            "gpu_type": f.gpu.as_ref().map(|g| g.resource.clone()),
            "labels": labels.join(","),
            "taints": if taints.is_empty() { Value::Null } else { json!(taints.join(",")) },
            "clone_spec": clone_spec(input, f),
            // The worker MachineDeployment's placement and deletion fields (--from-cluster).
            "md_spec": md_fields(input, |m| &m.spec),
            "md_template_spec": md_fields(input, |m| &m.template_spec),
        }));
    }

    // NodePool requirements: exactly the flavors offered. Zones only when every flavor has one,
    // else a flavor without a zone label would never match.
    let distinct = |f: &dyn Fn(&super::FlavorSpec) -> Option<String>| -> Option<Vec<String>> {
        let mut v: Vec<String> = Vec::new();
        for flavor in &input.flavors {
            let value = f(flavor)?;
            if !v.contains(&value) {
                v.push(value);
            }
        }
        Some(v)
    };
    let mut requirements = Vec::new();
    for (key, values) in [
        (
            keys::INSTANCE_TYPE,
            distinct(&|f| Some(f.instance_type.clone())),
        ),
        (keys::ARCH, distinct(&|f| Some(f.arch.clone()))),
        (
            keys::CAPACITY_TYPE,
            distinct(&|f| Some(f.capacity_type.clone())),
        ),
        (keys::ZONE, distinct(&|f| f.zone.clone())),
    ] {
        if let Some(values) = values {
            requirements.push(json!({"key": key, "values": values}));
        }
    }
    // Limits: what every member MachineDeployment at its max size adds up to.
    let cpu_limit: i64 = input
        .flavors
        .iter()
        .map(|f| f.cpu_millis.saturating_mul(f.max))
        .sum();
    let memory_limit: i64 = input
        .flavors
        .iter()
        .map(|f| f.memory_bytes.saturating_mul(f.max))
        .sum();
    let memory = super::sizing::controller_memory_mib(input.expected_pods, input.expected_nodes);

    Ok(json!({
        "cluster": {
            "name": input.cluster_name,
            "namespace": input.namespace,
            "version": input.kubernetes_version,
        },
        "capi": {
            "version": capi,
            "v1beta2": input.capi_version == CapiVersion::V1beta2,
            "core_api_version": format!("cluster.x-k8s.io/{capi}"),
            "bootstrap_api_version": format!("bootstrap.cluster.x-k8s.io/{capi}"),
        },
        "infra": match &input.clone_from {
            // A clone keeps the worker template's kind and version, whatever the provider.
            Some(c) => json!({
                "kind": c.infrastructure.kind,
                "api_version": c.infrastructure.api_version,
                "group": c.infrastructure.group(),
                "instance_type_field": input.infra.instance_type_field(),
                "machine_image": input.machine_image,
                "cloned_from": c.infrastructure.name,
            }),
            None => json!({
                "kind": input.infra.kind,
                "api_version": input.infra.api_version(input.capi_version),
                "group": super::infra::GROUP,
                "instance_type_field": input.infra.instance_type_field(),
                "machine_image": input.machine_image,
                "cloned_from": Value::Null,
            }),
        },
        "annotations": {
            "cpu": annotations::CPU,
            "memory": annotations::MEMORY,
            "max_pods": annotations::MAX_PODS,
            "ephemeral_disk": annotations::EPHEMERAL_DISK,
            "gpu_count": annotations::GPU_COUNT,
            "gpu_type": annotations::GPU_TYPE,
            "labels": annotations::LABELS,
            "taints": annotations::TAINTS,
            "price": annotations::PRICE,
            "min_size": annotations::MIN_SIZE,
            "max_size": annotations::MAX_SIZE,
        },
        "member_label": MEMBER_LABEL,
        "kubeadm_templates": kubeadm,
        "flavors": flavors,
        "management": {
            "service_account": names::management_identity(&input.cluster_name),
            "rules": management_rules(input),
        },
        "workload": {
            "namespace": input.controller_namespace,
            "service_account": names::WORKLOAD_IDENTITY,
            "cluster_role": names::WORKLOAD_IDENTITY,
            "rules": rules(permissions::WORKLOAD),
            "leader_election_role": names::LEADER_ELECTION,
            "leader_election_rules": rules(permissions::LEADER_ELECTION),
            "metrics_service": names::METRICS_SERVICE,
            "image": input.image,
            "memory_request": format!("{}Mi", memory.0),
            "memory_limit": format!("{}Mi", memory.1),
            "separate_management": input.separate_management,
            "management_secret": names::MANAGEMENT_KUBECONFIG_SECRET,
            "management_secret_key": names::MANAGEMENT_KUBECONFIG_KEY,
            "management_kubeconfig_dir": names::MANAGEMENT_KUBECONFIG_DIR,
            "management_kubeconfig": input.management_kubeconfig.as_ref().map(|c| &c.kubeconfig),
            "management_token_key": names::MANAGEMENT_TOKEN_KEY,
            "management_token": input.management_kubeconfig.as_ref().and_then(|c| c.token.as_ref()),
            "management_token_expires_annotation": keys::TOKEN_EXPIRES_ANNOTATION,
            "management_token_expires": input
                .management_kubeconfig
                .as_ref()
                .and_then(|c| c.expires)
                .map(|t| t.to_string()),
        },
        "nodepool": {
            "name": names::NODEPOOL,
            "nodeclass": names::NODEPOOL,
            "requirements": requirements,
            "cpu_limit": quantity::format_millis(cpu_limit),
            "memory_limit": quantity::format_bytes(memory_limit),
            "consolidation_policy": input.consolidation_policy,
            "consolidate_after": input.consolidate_after.to_string(),
            "expire_after": input.expire_after.to_string(),
        },
    }))
}

/// The cloned template's `spec.template.spec` with only the flavor changed.
fn clone_spec(input: &SetupInput, f: &super::FlavorSpec) -> Value {
    let Some(source) = &input.clone_from else {
        return Value::Null;
    };
    let worker = &source.infrastructure;
    let field = clone::flavor_field(&worker.kind, &worker.spec);
    clone::infrastructure_spec(&worker.spec, field, f)
}

/// Some of the worker MachineDeployment's copied fields, or null (no clone, or none set).
fn md_fields(
    input: &SetupInput,
    part: impl Fn(&clone::MachineDeploymentFields) -> &serde_json::Map<String, Value>,
) -> Value {
    match &input.clone_from {
        Some(c) if !part(&c.machine_deployment_fields).is_empty() => {
            Value::Object(part(&c.machine_deployment_fields).clone())
        }
        _ => Value::Null,
    }
}

fn environment(templates: &Templates) -> Result<minijinja::Environment<'static>, Error> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // `q`: a JSON string, which is also a YAML double-quoted scalar: safe for any value.
    env.add_filter(
        "q",
        |v: minijinja::Value| -> Result<String, minijinja::Error> {
            let text = if v.is_none() || v.is_undefined() {
                String::new()
            } else {
                v.to_string()
            };
            serde_json::to_string(&text).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
            })
        },
    );
    // `json`: any value as flow-style JSON (valid YAML), for cloned template specs.
    env.add_filter(
        "json",
        |v: minijinja::Value| -> Result<String, minijinja::Error> {
            serde_json::to_string(&v).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
            })
        },
    );
    // `yaml(n)`: any value as block YAML indented by n spaces, for cloned specs a user reads
    // (files, commands and keys stay one per line, as in the worker's own template).
    env.add_filter(
        "yaml",
        |v: minijinja::Value, indent: usize| -> Result<String, minijinja::Error> {
            let text = serde_saphyr::to_string(&v).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
            })?;
            let pad = " ".repeat(indent);
            Ok(text
                .lines()
                .map(|l| {
                    if l.is_empty() {
                        String::new()
                    } else {
                        format!("{pad}{l}")
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"))
        },
    );
    for (name, source) in &templates.sources {
        env.add_template_owned(name.clone(), source.clone())
            .map_err(|e| Error::Input {
                path: format!("template {name}"),
                problem: describe(&e),
            })?;
    }
    Ok(env)
}

fn describe(e: &minijinja::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}

/// Renders both bundles.
pub fn render(input: &SetupInput, templates: &Templates) -> Result<Bundle, Error> {
    input.validate()?;
    let ctx = context(input)?;
    let env = environment(templates)?;
    let mut bundle = Bundle::default();
    let one = |name: &str,
               ctx: &Value,
               cluster: ClusterRole,
               what: &str|
     -> Result<Vec<Document>, Error> {
        let tmpl = env.get_template(name).map_err(|e| Error::Input {
            path: format!("template {name}"),
            problem: describe(&e),
        })?;
        let text = tmpl
            .render(minijinja::value::Serde(ctx))
            .map_err(|e| Error::Input {
                path: format!("template {name}{what}"),
                problem: describe(&e),
            })?;
        documents(&text, cluster).map_err(|p| Error::Input {
            path: format!("template {name}{what}"),
            problem: p,
        })
    };
    use ClusterRole::{Management, Workload};
    bundle
        .management
        .extend(one("management/rbac.yaml.j2", &ctx, Management, "")?);
    bundle.management.extend(one(
        "management/kubeadmconfigtemplate.yaml.j2",
        &ctx,
        Management,
        "",
    )?);
    let infra_template = if input.clone_from.is_some() {
        "infrastructure/clone.yaml.j2"
    } else {
        input.infra.template
    };
    let flavors = ctx
        .get("flavors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for f in &flavors {
        let mut c = ctx.clone();
        c["flavor"] = f.clone();
        let what = format!(
            " (flavor {})",
            f.get("name").and_then(Value::as_str).unwrap_or("")
        );
        bundle
            .management
            .extend(one(infra_template, &c, Management, &what)?);
        bundle.management.extend(one(
            "management/machinedeployment.yaml.j2",
            &c,
            Management,
            &what,
        )?);
    }
    for name in [
        "workload/namespace.yaml.j2",
        "workload/rbac.yaml.j2",
        "workload/secret.yaml.j2",
        "workload/deployment.yaml.j2",
        "workload/pdb.yaml.j2",
        "workload/service.yaml.j2",
        "workload/nodeclass.yaml.j2",
        "workload/nodepool.yaml.j2",
    ] {
        bundle.workload.extend(one(name, &ctx, Workload, "")?);
    }
    bundle
        .optional
        .extend(one("workload/servicemonitor.yaml.j2", &ctx, Workload, "")?);
    Ok(bundle)
}

/// Splits rendered text into documents and checks each is one Kubernetes object.
fn documents(text: &str, cluster: ClusterRole) -> Result<Vec<Document>, String> {
    let mut out = Vec::new();
    let mut chunks = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            chunks.push(String::new());
        } else if let Some(last) = chunks.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    for (i, chunk) in chunks.into_iter().enumerate() {
        if chunk
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue;
        }
        let value: Value = serde_saphyr::from_str(&chunk)
            .map_err(|e| format!("document {} is not valid YAML: {e}", i + 1))?;
        let field = |p: &str| value.pointer(p).and_then(Value::as_str).map(str::to_string);
        let (Some(api_version), Some(kind), Some(name)) = (
            field("/apiVersion"),
            field("/kind"),
            field("/metadata/name"),
        ) else {
            return Err(format!(
                "document {} is not a Kubernetes object (apiVersion, kind, metadata.name)",
                i + 1
            ));
        };
        let namespace = field("/metadata/namespace");
        let yaml = chunk.trim_start_matches('\n').to_string();
        out.push(Document {
            cluster,
            api_version,
            kind,
            name,
            namespace,
            yaml,
            value,
        });
    }
    Ok(out)
}
