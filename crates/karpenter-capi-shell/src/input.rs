//! Where a snapshot comes from, in one place: `-f` files, directories and stdin, or both live
//! clusters (listed, and for `doctor` the Secrets, RBAC and access reviews it judges).

use std::io::Read;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::diagnose;
use crate::diagnose::access::Identity;
use crate::error::{ClusterRole, Error, Result};
use crate::model::load::Source;
use crate::model::snapshot::Snapshot;

/// A snapshot and where it came from.
pub struct Loaded {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// The time to judge ages at.
    pub now: Timestamp,
    /// The management identity's reviewed rules (live only).
    pub identity: Option<Identity>,
    /// CRDs the clusters do not serve (live `doctor` only: other commands fail on them).
    pub missing_crds: Vec<diagnose::crds::MissingCrd>,
}

/// The live half of `load`, on clients already built (tests pass in-memory ones): lists both
/// clusters and, for `doctor` (`review_access`), reviews the management identity's rules in the
/// namespaces of the member MachineDeployments and returns a CRD that is not installed as
/// [`Loaded::missing_crds`] instead of failing (`explain` and `simulate` fail on it).
/// `fallback_subject` names that identity if the cluster cannot say.
pub async fn load_live(
    workload: &kube::Client,
    management: &kube::Client,
    fallback_subject: &str,
    namespace: Option<&str>,
    now: Timestamp,
    review_access: bool,
) -> Result<Loaded> {
    let (mut snapshot, missing_crds) = if review_access {
        crate::kube::list::live_snapshot_reporting_missing_crds(workload, management, namespace)
            .await?
    } else {
        (
            crate::kube::list::live_snapshot(workload, management, namespace).await?,
            Vec::new(),
        )
    };
    if review_access {
        let found = credential_secrets(workload, management, &snapshot).await;
        snapshot.objects.extend(found);
        let leases = controller_leases(workload, &snapshot).await;
        snapshot.objects.extend(leases);
        snapshot.objects.extend(workload_rbac(workload).await);
    }
    let identity = if review_access {
        let namespaces = diagnose::access::capi_namespaces(&snapshot);
        Some(
            crate::kube::access::review_identity(
                management,
                ClusterRole::Management,
                &namespaces,
                fallback_subject,
            )
            .await?,
        )
    } else {
        None
    };
    Ok(Loaded {
        snapshot,
        now,
        identity,
        missing_crds,
    })
}

/// The namespaces a controller may run in on the workload cluster: those of its pods, and the
/// default one.
fn controller_namespaces(snapshot: &Snapshot) -> Vec<String> {
    let mut out: Vec<String> = snapshot
        .pods
        .iter()
        .filter(|p| diagnose::controller::is_controller_pod(p))
        .map(|p| p.demand.namespace.clone())
        .collect();
    out.push(crate::vocab::names::WORKLOAD_IDENTITY.to_string());
    out.sort();
    out.dedup();
    out
}

/// The controller's leader-election Lease in each namespace a controller may run in, read for
/// `doctor` only: the running controller publishes its failing watches there
/// ([`diagnose::watches`]). One that cannot be read is left unchecked, with a warning unless it
/// does not exist (no controller, or one without leader election).
pub async fn controller_leases(
    workload: &kube::Client,
    snapshot: &Snapshot,
) -> Vec<crate::model::object::RawObject> {
    use k8s_openapi::api::coordination::v1::Lease;
    use kube::api::Api;

    let mut out = Vec::new();
    for ns in controller_namespaces(snapshot) {
        let api: Api<Lease> = Api::namespaced(workload.clone(), &ns);
        match api.get_opt(crate::vocab::names::LEASE_NAME).await {
            Ok(Some(lease)) => {
                let Ok(mut v) = serde_json::to_value(&lease) else {
                    continue;
                };
                v["apiVersion"] = serde_json::json!("coordination.k8s.io/v1");
                v["kind"] = serde_json::json!("Lease");
                if let Ok(o) = crate::model::object::RawObject::from_value(v, "workload cluster") {
                    out.push(o);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(
                "doctor: cannot read leases/{} in namespace {ns} on the workload cluster ({e}); the controller's watch health is not checked",
                crate::vocab::names::LEASE_NAME
            ),
        }
    }
    out
}

/// The Secrets the credential checks judge ([`diagnose::credentials`]), read for `doctor` only
/// (the controller never reads Secrets): the controller's management kubeconfig Secret in each
/// namespace a controller pod runs in (and the default one) on the workload cluster, and the
/// legacy ServiceAccount token Secrets in the Cluster API namespaces on the management cluster.
/// What cannot be read is left unchecked, with a warning unless it simply does not exist.
pub async fn credential_secrets(
    workload: &kube::Client,
    management: &kube::Client,
    snapshot: &Snapshot,
) -> Vec<crate::model::object::RawObject> {
    use k8s_openapi::api::core::v1::Secret;
    use kube::api::{Api, ListParams};

    use crate::vocab::names;
    let controller_namespaces = controller_namespaces(snapshot);
    let mut values = Vec::new();
    let skipped = |what: &str, e: kube::Error| {
        if crate::kube::errors::status_code(&e) != Some(404) {
            tracing::warn!("doctor: cannot read {what} ({e}); its token lifetime is not checked");
        }
    };
    for ns in &controller_namespaces {
        let api: Api<Secret> = Api::namespaced(workload.clone(), ns);
        match api.get(names::MANAGEMENT_KUBECONFIG_SECRET).await {
            Ok(s) => values.push((s, "workload cluster")),
            Err(e) => skipped(
                &format!(
                    "secrets/{} in namespace {ns} on the workload cluster",
                    names::MANAGEMENT_KUBECONFIG_SECRET
                ),
                e,
            ),
        }
    }
    let legacy = ListParams::default().fields(&format!(
        "type={}",
        diagnose::credentials::LEGACY_TOKEN_TYPE
    ));
    for ns in diagnose::access::capi_namespaces(snapshot) {
        let api: Api<Secret> = Api::namespaced(management.clone(), &ns);
        match api.list(&legacy).await {
            Ok(list) => values.extend(list.items.into_iter().map(|s| (s, "management cluster"))),
            Err(e) => skipped(
                &format!("secrets in namespace {ns} on the management cluster"),
                e,
            ),
        }
    }
    values
        .into_iter()
        .filter_map(|(s, origin)| {
            let mut v = serde_json::to_value(&s).ok()?;
            v["apiVersion"] = serde_json::json!("v1");
            v["kind"] = serde_json::json!("Secret");
            crate::model::object::RawObject::from_value(v, origin).ok()
        })
        .collect()
}

/// The RBAC objects that bind the controller's workload identity on the workload cluster, read
/// for `doctor` only so that identity is judged live as in a dump
/// ([`diagnose::access::workload_identities_from_rbac`]): the bindings whose subject is `init`'s
/// ServiceAccount (`karpenter-capi`) or whose role is `init`'s ClusterRole or leader-election Role,
/// and the roles they name. What cannot be read is left unchecked, with a warning.
pub async fn workload_rbac(workload: &kube::Client) -> Vec<crate::model::object::RawObject> {
    use k8s_openapi::api::rbac::v1::{
        ClusterRole as K8sClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
    };
    use kube::api::{Api, ListParams};

    use crate::vocab::names;
    let skipped = |what: &str, e: kube::Error| {
        tracing::warn!(
            "doctor: cannot read {what} on the workload cluster ({e}); the controller's workload identity is not checked"
        );
    };
    let ours = |role: &RoleRef, subjects: &Option<Vec<Subject>>| {
        (role.kind == "ClusterRole" && role.name == names::WORKLOAD_IDENTITY)
            || (role.kind == "Role" && role.name == names::LEADER_ELECTION)
            || subjects
                .iter()
                .flatten()
                .any(|s| s.kind == "ServiceAccount" && s.name == names::WORKLOAD_IDENTITY)
    };
    let params = ListParams::default();
    let cluster_bindings = match Api::<ClusterRoleBinding>::all(workload.clone())
        .list(&params)
        .await
    {
        Ok(l) => l.items,
        Err(e) => {
            skipped("clusterrolebindings", e);
            return Vec::new();
        }
    };
    let bindings = match Api::<RoleBinding>::all(workload.clone())
        .list(&params)
        .await
    {
        Ok(l) => l.items,
        Err(e) => {
            skipped("rolebindings", e);
            return Vec::new();
        }
    };
    let mut values: Vec<(serde_json::Value, &str)> = Vec::new();
    // (kind, namespace, name) of the roles the kept bindings name, each read once.
    let mut roles: Vec<(String, String, String)> = Vec::new();
    for b in cluster_bindings
        .into_iter()
        .filter(|b| ours(&b.role_ref, &b.subjects))
    {
        roles.push((
            b.role_ref.kind.clone(),
            String::new(),
            b.role_ref.name.clone(),
        ));
        if let Ok(v) = serde_json::to_value(&b) {
            values.push((v, "ClusterRoleBinding"));
        }
    }
    for b in bindings
        .into_iter()
        .filter(|b| ours(&b.role_ref, &b.subjects))
    {
        let ns = if b.role_ref.kind == "Role" {
            b.metadata.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        };
        roles.push((b.role_ref.kind.clone(), ns, b.role_ref.name.clone()));
        if let Ok(v) = serde_json::to_value(&b) {
            values.push((v, "RoleBinding"));
        }
    }
    roles.sort();
    roles.dedup();
    for (kind, ns, name) in roles {
        let found = if kind == "Role" {
            Api::<Role>::namespaced(workload.clone(), &ns)
                .get_opt(&name)
                .await
                .map(|r| r.and_then(|r| serde_json::to_value(r).ok()))
        } else {
            Api::<K8sClusterRole>::all(workload.clone())
                .get_opt(&name)
                .await
                .map(|r| r.and_then(|r| serde_json::to_value(r).ok()))
        };
        match found {
            Ok(Some(v)) => values.push((
                v,
                if kind == "Role" {
                    "Role"
                } else {
                    "ClusterRole"
                },
            )),
            Ok(None) => {}
            Err(e) => skipped(&format!("{kind} {name}"), e),
        }
    }
    values
        .into_iter()
        .filter_map(|(mut v, kind)| {
            v["apiVersion"] = serde_json::json!("rbac.authorization.k8s.io/v1");
            v["kind"] = serde_json::json!(kind);
            crate::model::object::RawObject::from_value(v, "workload cluster").ok()
        })
        .collect()
}

/// Reads every `-f` argument: a file, a directory (its `.yaml`, `.yml` and `.json` files, sorted;
/// with `recursive` those of its subdirectories too, as kubectl's `-R`), or `-` for stdin.
pub fn read_sources(args: &[String], recursive: bool) -> Result<Vec<Source>> {
    let mut out = Vec::new();
    for arg in args {
        if arg == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::Input {
                    path: "<stdin>".to_string(),
                    problem: format!("cannot read: {e}"),
                })?;
            out.push(Source {
                name: "<stdin>".to_string(),
                text,
            });
            continue;
        }
        let path = Path::new(arg);
        if path.is_dir() {
            let mut files = Vec::new();
            manifest_files(path, recursive, &mut files)?;
            files.sort();
            if files.is_empty() {
                return Err(Error::Input {
                    path: arg.clone(),
                    problem: if recursive {
                        "directory has no .yaml, .yml or .json files".to_string()
                    } else {
                        "directory has no .yaml, .yml or .json files (pass -R to read its subdirectories)".to_string()
                    },
                });
            }
            for f in files {
                out.push(read_file(&f)?);
            }
        } else {
            out.push(read_file(path)?);
        }
    }
    Ok(out)
}

fn read_file(path: &Path) -> Result<Source> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: name.clone(),
        problem: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => format!("cannot read: {e}"),
        },
    })?;
    Ok(Source { name, text })
}

/// The manifest files of `dir`, and with `recursive` of its subdirectories.
fn manifest_files(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Input {
        path: dir.display().to_string(),
        problem: format!("cannot read directory: {e}"),
    })?;
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            if recursive {
                manifest_files(&path, true, out)?;
            }
        } else if path
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(path);
        }
    }
    Ok(())
}
