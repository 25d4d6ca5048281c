//! `init`'s live parts, over a `kube::Client` (a real one, or an in-memory fake in tests):
//! server-side apply of a bundle, reading defaults from the management cluster, and minting
//! a short-lived token (TokenRequest) for the controller's management ServiceAccount.
//!
//! # Errors
//! Every API failure is an [`Error::Cluster`] naming the cluster, verb and resource.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;

use crate::bundle::clone;
use crate::bundle::infra::{self, InfraKind};
use crate::bundle::render::Templates;
use crate::bundle::{Bundle, CapiVersion, Document, SetupInput, kubeconfig};
use crate::error::{ClusterRole, Error, Result};
use crate::kube::client::{ClusterTarget, Connection, config, connect};
use crate::kube::errors::cluster_error;
use crate::model::duration::GoDuration;
use crate::vocab::keys::CLUSTER_NAME_LABEL;
use crate::vocab::names::{self, FIELD_MANAGER};

/// Plural and scope of the kinds `init` generates; other kinds (from custom templates) fall back
/// to the lower-cased kind plus `s`, namespaced when the document has a namespace.
const KINDS: &[(&str, &str, bool)] = &[
    ("Namespace", "namespaces", false),
    ("ServiceAccount", "serviceaccounts", true),
    ("Secret", "secrets", true),
    ("Role", "roles", true),
    ("RoleBinding", "rolebindings", true),
    ("ClusterRole", "clusterroles", false),
    ("ClusterRoleBinding", "clusterrolebindings", false),
    ("Deployment", "deployments", true),
    ("PodDisruptionBudget", "poddisruptionbudgets", true),
    ("Service", "services", true),
    ("KubeadmConfigTemplate", "kubeadmconfigtemplates", true),
    ("MachineDeployment", "machinedeployments", true),
    ("ClusterAPINodeClass", "clusterapinodeclasses", false),
    ("NodePool", "nodepools", false),
];

/// The API resource of a document.
pub fn api_resource(api_version: &str, kind: &str, namespace: Option<&str>) -> (ApiResource, bool) {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (plural, namespaced) = KINDS
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, p, n)| (p.to_string(), *n))
        .or_else(|| {
            infra::KINDS
                .iter()
                .find(|k| k.kind == kind)
                .map(|k| (k.plural.to_string(), true))
        })
        .unwrap_or_else(|| {
            (
                format!("{}s", kind.to_ascii_lowercase()),
                namespace.is_some(),
            )
        });
    (ApiResource::from_gvk_with_plural(&gvk, &plural), namespaced)
}

/// Server-side applies each document in order (field manager `karpenter-capi`, no force: a field
/// another manager owns is reported, not taken). An existing MachineDeployment keeps its
/// replicas. Returns one line per object.
pub async fn apply(
    client: &kube::Client,
    cluster: ClusterRole,
    docs: &[Document],
    dry_run: bool,
) -> Result<Vec<String>> {
    let mut params = PatchParams::apply(FIELD_MANAGER);
    if dry_run {
        params = params.dry_run();
    }
    let mut lines = Vec::new();
    for doc in docs {
        let (ar, namespaced) = api_resource(&doc.api_version, &doc.kind, doc.namespace.as_deref());
        let ns = doc.namespace.as_deref().unwrap_or("");
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(client.clone(), ns, &ar)
        } else {
            Api::all_with(client.clone(), &ar)
        };
        let resource = if ar.group.is_empty() {
            ar.plural.clone()
        } else {
            format!("{}.{}", ar.plural, ar.group)
        };
        let mut value = doc.value.clone();
        if doc.kind == "MachineDeployment" {
            // `replicas: 0` is for creation only: once the controller scales a member
            // MachineDeployment, re-running init must not scale its nodes away.
            let existing = api.get_opt(&doc.name).await.map_err(|e| {
                cluster_error(cluster, "get", &format!("{resource}/{}", doc.name), ns, e)
            })?;
            if existing.is_some()
                && let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut)
            {
                spec.remove("replicas");
            }
        }
        api.patch(&doc.name, &params, &Patch::Apply(&value))
            .await
            .map_err(|e| {
                cluster_error(cluster, "apply", &format!("{resource}/{}", doc.name), ns, e)
            })?;
        let suffix = if dry_run { " (server dry run)" } else { "" };
        lines.push(format!(
            "{cluster}: {}/{} serverside-applied{suffix}",
            doc.kind.to_ascii_lowercase(),
            doc.name
        ));
    }
    Ok(lines)
}

/// What the management cluster says about a Cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterDefaults {
    /// The Cluster's name (found when there is exactly one in the namespace).
    pub cluster_name: Option<String>,
    /// Kubernetes version: the Cluster's topology version, else its control plane's.
    pub kubernetes_version: Option<String>,
    /// The Cluster API version the Cluster is served as (v1beta2 when available).
    pub capi_version: Option<CapiVersion>,
    /// The provider, from an existing MachineDeployment's infrastructureRef.
    pub infra: Option<&'static InfraKind>,
    /// The worker templates to clone.
    pub clone: Option<clone::CloneSource>,
}

fn capi_resource(version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cluster.x-k8s.io", version, kind),
        plural,
    )
}

/// Reads the Cluster (by name, or the only one in the namespace), its version, and the machine
/// template of one of its MachineDeployments (or `template_name`) from the management cluster.
pub async fn read_defaults(
    client: &kube::Client,
    namespace: &str,
    cluster_name: Option<&str>,
    template_name: Option<&str>,
    kind_hint: Option<&'static InfraKind>,
) -> Result<ClusterDefaults> {
    let mgmt = ClusterRole::Management;
    let mut out = ClusterDefaults::default();
    // v1beta2 first; an older Cluster API only serves v1beta1.
    let mut clusters = None;
    for (version, capi) in [
        ("v1beta2", CapiVersion::V1beta2),
        ("v1beta1", CapiVersion::V1beta1),
    ] {
        let api: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            namespace,
            &capi_resource(version, "Cluster", "clusters"),
        );
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                clusters = Some(list.items);
                out.capi_version = Some(capi);
                break;
            }
            Err(e) if crate::kube::errors::status_code(&e) == Some(404) && version == "v1beta2" => {
                continue;
            }
            Err(e) => {
                return Err(cluster_error(
                    mgmt,
                    "list",
                    "clusters.cluster.x-k8s.io",
                    namespace,
                    e,
                ));
            }
        }
    }
    let clusters = clusters.unwrap_or_default();
    let cluster = match cluster_name {
        Some(name) => clusters
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
            .ok_or_else(|| Error::Cluster {
                cluster: mgmt,
                action: format!("get clusters.cluster.x-k8s.io/{name} in namespace {namespace}"),
                message: "not found".to_string(),
                hint: Some(format!(
                    "clusters in {namespace}: {}",
                    clusters
                        .iter()
                        .filter_map(|c| c.metadata.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            })?,
        None => match clusters.as_slice() {
            [one] => one,
            _ => {
                return Err(Error::usage(format!(
                    "--cluster-name is required: namespace {namespace} has {} clusters ({})",
                    clusters.len(),
                    clusters
                        .iter()
                        .filter_map(|c| c.metadata.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        },
    };
    let name = cluster.metadata.name.clone().unwrap_or_default();
    out.cluster_name = Some(name.clone());
    let version = out
        .capi_version
        .map(|v| {
            if v == CapiVersion::V1beta2 {
                "v1beta2"
            } else {
                "v1beta1"
            }
        })
        .unwrap_or("v1beta2");
    out.kubernetes_version = cluster
        .data
        .pointer("/spec/topology/version")
        .and_then(Value::as_str)
        .map(str::to_string);
    if out.kubernetes_version.is_none() {
        out.kubernetes_version = control_plane_version(client, namespace, &cluster.data).await?;
    }

    // The cluster's worker MachineDeployment tells the provider and the templates to clone.
    let mds: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &capi_resource(version, "MachineDeployment", "machinedeployments"),
    );
    let list = mds
        .list(&ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={name}")))
        .await
        .map_err(|e| {
            cluster_error(
                mgmt,
                "list",
                "machinedeployments.cluster.x-k8s.io",
                namespace,
                e,
            )
        })?;
    let items: Vec<Value> = list
        .items
        .iter()
        .filter_map(|md| serde_json::to_value(md).ok())
        .collect();
    let Some(worker) = clone::worker_machine_deployment(&items, &name) else {
        if template_name.is_some() {
            return Err(Error::usage(format!(
                "--infrastructure-template: cluster {name} in namespace {namespace} has no worker MachineDeployment to take the template's kind from"
            )));
        }
        return Ok(out);
    };
    let worker_name = worker
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(mut infra_ref) = clone::template_ref(worker, "/spec/template/spec/infrastructureRef")
    else {
        return Ok(out);
    };
    out.infra = infra::find(&infra_ref.kind).ok().or(kind_hint);
    if let Some(hint) = kind_hint {
        if hint.kind != infra_ref.kind {
            infra_ref.api_version = None;
        }
        infra_ref.kind = hint.kind.to_string();
        infra_ref.group = infra::GROUP.to_string();
    }
    if let Some(t) = template_name {
        infra_ref.name = t.to_string();
    }
    let capi = out.capi_version.unwrap_or(CapiVersion::V1beta2);
    // A known provider's version for this Cluster API first, then the usual ones.
    let mut preferred: Vec<&str> = Vec::new();
    if let Some(k) = infra::KINDS.iter().find(|k| k.kind == infra_ref.kind) {
        preferred.push(match capi {
            CapiVersion::V1beta2 => k.version_v1beta2,
            CapiVersion::V1beta1 => k.version_v1beta1,
        });
    }
    preferred.extend(["v1beta2", "v1beta1", "v1alpha1"]);
    let infrastructure = read_template(client, namespace, &infra_ref, &preferred).await?;
    let bootstrap = match clone::template_ref(worker, "/spec/template/spec/bootstrap/configRef") {
        Some(r) if clone::is_kubeadm(&r) => Some(
            read_template(
                client,
                namespace,
                &r,
                &[capi.as_str(), "v1beta2", "v1beta1"],
            )
            .await?,
        ),
        _ => None,
    };
    out.clone = Some(clone::CloneSource {
        machine_deployment: worker_name,
        infrastructure,
        bootstrap,
        machine_deployment_fields: clone::machine_deployment_fields(worker),
    });
    Ok(out)
}

/// Reads a template at the first of its apiVersions that serves it.
async fn read_template(
    client: &kube::Client,
    namespace: &str,
    reference: &clone::TemplateRef,
    preferred: &[&str],
) -> Result<clone::SourceTemplate> {
    let versions = reference.api_versions(preferred);
    let plural = infra::KINDS
        .iter()
        .find(|k| k.kind == reference.kind)
        .map(|k| k.plural.to_string())
        .unwrap_or_else(|| format!("{}s", reference.kind.to_ascii_lowercase()));
    let what = format!("{plural}.{}/{}", reference.group, reference.name);
    let mut last = None;
    for api_version in &versions {
        let (ar, _) = api_resource(api_version, &reference.kind, Some(namespace));
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &ar);
        match api.get(&reference.name).await {
            Ok(obj) => {
                let mut value = serde_json::to_value(&obj).map_err(|e| Error::Cluster {
                    cluster: ClusterRole::Management,
                    action: format!("get {what} in namespace {namespace}"),
                    message: e.to_string(),
                    hint: None,
                })?;
                // A dynamic object comes back without its type when the server omits it.
                value["apiVersion"] = Value::from(api_version.as_str());
                value["kind"] = Value::from(reference.kind.as_str());
                return clone::SourceTemplate::from_object(&value);
            }
            Err(e) if crate::kube::errors::status_code(&e) == Some(404) => last = Some(e),
            Err(e) => {
                return Err(cluster_error(
                    ClusterRole::Management,
                    "get",
                    &what,
                    namespace,
                    e,
                ));
            }
        }
    }
    Err(match last {
        Some(e) => cluster_error(ClusterRole::Management, "get", &what, namespace, e),
        None => Error::usage(format!("{what}: no apiVersion to read it at")),
    })
}

async fn control_plane_version(
    client: &kube::Client,
    namespace: &str,
    cluster: &Value,
) -> Result<Option<String>> {
    let Some(reference) = cluster.pointer("/spec/controlPlaneRef") else {
        return Ok(None);
    };
    let (Some(kind), Some(name)) = (
        reference.get("kind").and_then(Value::as_str),
        reference.get("name").and_then(Value::as_str),
    ) else {
        return Ok(None);
    };
    // v1beta2 references carry apiGroup only; the control plane's own v1beta2 is tried then.
    let api_version = match (
        reference.get("apiVersion").and_then(Value::as_str),
        reference.get("apiGroup").and_then(Value::as_str),
    ) {
        (Some(v), _) => v.to_string(),
        (None, Some(g)) => format!("{g}/v1beta2"),
        _ => return Ok(None),
    };
    let (ar, _) = api_resource(&api_version, kind, Some(namespace));
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &ar);
    match api.get(name).await {
        Ok(obj) => Ok(obj
            .data
            .pointer("/spec/version")
            .and_then(Value::as_str)
            .map(str::to_string)),
        Err(e) if crate::kube::errors::status_code(&e) == Some(404) => Ok(None),
        Err(e) => Err(cluster_error(
            ClusterRole::Management,
            "get",
            &format!("{plural}/{name}"),
            namespace,
            e,
        )),
    }
}

/// A token minted for the controller's management ServiceAccount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MintedToken {
    /// The bearer token.
    pub token: String,
    /// When it expires, as the API server says (it may cap the lifetime asked for).
    pub expires: jiff::Timestamp,
}

/// Asks the API server for a token of the controller's management ServiceAccount valid for
/// `seconds` (a TokenRequest on the `serviceaccounts/<name>/token` subresource, default
/// audiences, bound to no object), so no long-lived token Secret has to exist.
pub async fn request_token(
    client: &kube::Client,
    namespace: &str,
    service_account: &str,
    seconds: i64,
) -> Result<MintedToken> {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(seconds),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let resource = format!("serviceaccounts/{service_account}/token");
    let answer = api
        .create_token_request(service_account, &PostParams::default(), &request)
        .await
        .map_err(|e| {
            let code = crate::kube::errors::status_code(&e);
            let mut err =
                cluster_error(ClusterRole::Management, "create", &resource, namespace, e);
            if let Error::Cluster { hint, .. } = &mut err {
                match code {
                    Some(404) => {
                        *hint = Some(
                            "apply the management bundle of `kubectl karpenter-capi init` first (it creates the ServiceAccount)"
                                .to_string(),
                        )
                    }
                    Some(403) => {
                        *hint = Some(format!(
                            "the identity running init needs `create` on `serviceaccounts/token` in namespace {namespace} (the controller itself does not)"
                        ))
                    }
                    _ => {}
                }
            }
            err
        })?;
    let Some(status) = answer.status.filter(|s| !s.token.is_empty()) else {
        return Err(Error::Cluster {
            cluster: ClusterRole::Management,
            action: format!("create {resource} in namespace {namespace}"),
            message: "the API server returned no token".to_string(),
            hint: None,
        });
    };
    Ok(MintedToken {
        token: status.token,
        expires: status.expiration_timestamp.0,
    })
}

pub use crate::bundle::kubeconfig::base64;

/// What applying both bundles did: one line per object, and notes for the user.
#[derive(Debug, Default)]
pub struct Applied {
    /// `management: serviceaccount/x serverside-applied`, in order.
    pub lines: Vec<String>,
    /// Things to know (a capped token).
    pub notes: Vec<String>,
}

/// Applies the management bundle, mints the controller's kubeconfig when the management cluster
/// is separate and none was given (re-rendering the bundle with it), then applies the workload
/// bundle.
pub async fn apply_bundles(
    conn: &Connection,
    input: &SetupInput,
    templates: &Templates,
    mut bundle: Bundle,
    dry_run: bool,
    token_duration: GoDuration,
) -> Result<Applied> {
    let management = ClusterTarget::management(conn);
    let mgmt = connect(&management).await?;
    let mut out = Applied {
        lines: apply(&mgmt, ClusterRole::Management, &bundle.management, dry_run).await?,
        ..Applied::default()
    };
    if input.separate_management && input.management_kubeconfig.is_none() {
        if dry_run {
            out.lines.push("management: the controller's kubeconfig Secret is minted only on a real apply (its token does not exist in a dry run)".to_string());
        } else {
            let seconds = kubeconfig::token_seconds(token_duration, "--token-duration")?;
            let minted = mint_kubeconfig(
                &management,
                &input.namespace,
                &input.cluster_name,
                seconds,
                None,
            )
            .await?;
            out.notes.extend(kubeconfig::capped_note(
                jiff::Timestamp::now(),
                minted.expires,
                token_duration,
            ));
            let credential =
                kubeconfig::ControllerCredential::minted(&minted.kubeconfig, minted.expires)?;
            let mut with_secret = input.clone();
            with_secret.management_kubeconfig = Some(credential);
            bundle = crate::bundle::render::render(&with_secret, templates)?;
        }
    }
    let work = connect(&ClusterTarget::workload(conn)).await?;
    out.lines
        .extend(apply(&work, ClusterRole::Workload, &bundle.workload, dry_run).await?);
    Ok(out)
}

/// A kubeconfig for the controller's management ServiceAccount, minted by the management cluster.
#[derive(Debug, Clone)]
pub struct Minted {
    /// The kubeconfig's parts.
    pub kubeconfig: kubeconfig::TokenKubeconfig,
    /// When its token expires, as the API server granted it.
    pub expires: jiff::Timestamp,
}

/// Mints a token of `cluster_name`'s management ServiceAccount valid for `seconds` and builds
/// the kubeconfig around it: the management kubeconfig's server (or `server`) and CA.
pub async fn mint_kubeconfig(
    management: &ClusterTarget,
    namespace: &str,
    cluster_name: &str,
    seconds: i64,
    server: Option<&str>,
) -> Result<Minted> {
    let client = connect(management).await?;
    let mgmt_config = config(management).await?;
    let identity = names::management_identity(cluster_name);
    let minted = request_token(&client, namespace, &identity, seconds).await?;
    Ok(Minted {
        kubeconfig: kubeconfig::TokenKubeconfig {
            server: server.map_or_else(|| server_url(&mgmt_config), str::to_string),
            // Same server, same CA; None when it trusts the system roots.
            ca_base64: mgmt_config
                .root_cert
                .as_deref()
                .and_then(kubeconfig::pem_base64),
            token: minted.token,
            token_file: None,
            namespace: namespace.to_string(),
            user: identity,
        },
        expires: minted.expires,
    })
}

/// The API server URL of a kube config, as a string.
pub fn server_url(config: &kube::Config) -> String {
    config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_of_generated_kinds() {
        let (ar, ns) = api_resource("cluster.x-k8s.io/v1beta2", "MachineDeployment", Some("x"));
        assert_eq!(
            (
                ar.group.as_str(),
                ar.version.as_str(),
                ar.plural.as_str(),
                ns
            ),
            ("cluster.x-k8s.io", "v1beta2", "machinedeployments", true)
        );
        let (ar, ns) = api_resource("karpenter.sh/v1", "NodePool", None);
        assert_eq!((ar.plural.as_str(), ns), ("nodepools", false));
        let (ar, ns) = api_resource("v1", "Namespace", None);
        assert_eq!(
            (ar.group.as_str(), ar.plural.as_str(), ns),
            ("", "namespaces", false)
        );
        let (ar, _) = api_resource(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackMachineTemplate",
            Some("x"),
        );
        assert_eq!(ar.plural, "openstackmachinetemplates");
    }
}
