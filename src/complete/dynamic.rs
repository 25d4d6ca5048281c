//! Object names for completion, from the clusters the typed flags point at (or the kubeconfig
//! file, for contexts).
//!
//! # Errors
//! None surface: completion runs inside someone's shell, so any failure (no kubeconfig, an
//! unreachable or slow API server, missing permissions, a CRD that is not installed) yields no
//! names, and every lookup is cut off after [`TIMEOUT`].

use std::time::Duration;

use clap::{Args, FromArgMatches};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};

use super::{Candidate, ObjectKind};
use crate::cli::GlobalArgs;
use crate::kube::client::{ClusterTarget, connect};

/// How long a lookup may take before completion gives up on it: long enough for a kubeconfig
/// exec plugin and one round trip, short enough not to hang a TAB.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// Names of `kind` objects, in the clusters selected by the typed global flags
/// (`--kubeconfig=...`, `--context=...`, `--namespace=...`); empty when they cannot be listed.
pub fn names(kind: ObjectKind, global_flags: &[String]) -> Vec<Candidate> {
    let Some(global) = parse_global(global_flags) else {
        return Vec::new();
    };
    match kind {
        ObjectKind::Context => contexts(global.kubeconfig.as_deref()),
        ObjectKind::ManagementContext => contexts(
            global
                .management_kubeconfig
                .as_deref()
                .or(global.kubeconfig.as_deref()),
        ),
        _ => {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return Vec::new();
            };
            let names = runtime
                .block_on(async { tokio::time::timeout(TIMEOUT, list(kind, &global)).await })
                .ok()
                .flatten()
                .unwrap_or_default();
            // A DNS lookup or an exec credential plugin may still be running on a blocking
            // thread; waiting for it would defeat the timeout.
            runtime.shutdown_background();
            names
        }
    }
}

/// The typed global flags as [`GlobalArgs`], parsed by clap so every default applies.
fn parse_global(global_flags: &[String]) -> Option<GlobalArgs> {
    let cmd = GlobalArgs::augment_args(clap::Command::new("complete"));
    let argv = std::iter::once("complete".to_string()).chain(global_flags.iter().cloned());
    let matches = cmd.try_get_matches_from(argv).ok()?;
    GlobalArgs::from_arg_matches(&matches).ok()
}

/// Context names of a kubeconfig file (or the default chain: $KUBECONFIG, ~/.kube/config), with
/// their cluster as the description.
fn contexts(path: Option<&std::path::Path>) -> Vec<Candidate> {
    let config = match path {
        Some(path) => kube::config::Kubeconfig::read_from(path),
        None => kube::config::Kubeconfig::read(),
    };
    let Ok(config) = config else {
        return Vec::new();
    };
    config
        .contexts
        .into_iter()
        .map(|c| {
            let cluster = c.context.map(|ctx| format!("cluster {}", ctx.cluster));
            Candidate::new(c.name, cluster)
        })
        .collect()
}

/// Lists the names; `None` for any kubeconfig or API error, which completion does not report.
async fn list(kind: ObjectKind, global: &GlobalArgs) -> Option<Vec<Candidate>> {
    let workload = ClusterTarget::workload(&global.connection());
    let management = ClusterTarget::management(&global.connection());
    let namespace = global.namespace.as_deref();
    match kind {
        ObjectKind::Context | ObjectKind::ManagementContext => Some(Vec::new()),
        ObjectKind::NodeClaim => {
            let api: Api<DynamicObject> =
                Api::all_with(connect(&workload).await.ok()?, &karpenter("NodeClaim"));
            Some(plain(
                api.list_metadata(&ListParams::default()).await.ok()?.items,
            ))
        }
        ObjectKind::NodePool => {
            let api: Api<DynamicObject> =
                Api::all_with(connect(&workload).await.ok()?, &karpenter("NodePool"));
            Some(plain(
                api.list_metadata(&ListParams::default()).await.ok()?.items,
            ))
        }
        ObjectKind::PendingPod => {
            let client = connect(&workload).await.ok()?;
            let pending = ListParams::default().fields("status.phase=Pending");
            // `explain pod` takes `namespace/name`, or `name` with -n.
            match namespace {
                Some(ns) => {
                    let api: Api<Pod> = Api::namespaced(client, ns);
                    Some(plain(api.list_metadata(&pending).await.ok()?.items))
                }
                None => {
                    let api: Api<Pod> = Api::all(client);
                    let items = api.list_metadata(&pending).await.ok()?.items;
                    Some(
                        items
                            .into_iter()
                            .filter_map(|p| {
                                let name = p.metadata.name?;
                                let ns = p
                                    .metadata
                                    .namespace
                                    .unwrap_or_else(|| "default".to_string());
                                Some(Candidate::new(format!("{ns}/{name}"), None))
                            })
                            .collect(),
                    )
                }
            }
        }
        ObjectKind::Namespace => {
            let api: Api<Namespace> = Api::all(connect(&management).await.ok()?);
            Some(plain(
                api.list_metadata(&ListParams::default()).await.ok()?.items,
            ))
        }
        ObjectKind::Cluster | ObjectKind::MachineDeployment => {
            let kind_name = if kind == ObjectKind::Cluster {
                "Cluster"
            } else {
                "MachineDeployment"
            };
            let client = connect(&management).await.ok()?;
            // v1beta2 is the storage version since Cluster API 1.11; older ones serve v1beta1.
            for version in ["v1beta2", "v1beta1"] {
                let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
                    "cluster.x-k8s.io",
                    version,
                    kind_name,
                ));
                let api: Api<DynamicObject> = match namespace {
                    Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
                    None => Api::all_with(client.clone(), &resource),
                };
                if let Ok(listed) = api.list_metadata(&ListParams::default()).await {
                    return Some(with_namespace(listed.items));
                }
            }
            None
        }
        ObjectKind::InfrastructureKind => {
            let client = connect(&management).await.ok()?;
            let group = kube::discovery::group(&client, "infrastructure.cluster.x-k8s.io")
                .await
                .ok()?;
            let mut kinds: Vec<String> = group
                .recommended_resources()
                .into_iter()
                .map(|(resource, _)| resource.kind)
                .filter(|kind| kind.ends_with("MachineTemplate"))
                .collect();
            kinds.sort();
            kinds.dedup();
            Some(kinds.into_iter().map(|k| Candidate::new(k, None)).collect())
        }
    }
}

fn karpenter(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("karpenter.sh", "v1", kind))
}

/// Names, sorted, for objects the user names without a namespace.
fn plain<K>(items: Vec<kube::core::PartialObjectMeta<K>>) -> Vec<Candidate> {
    let mut names: Vec<String> = items.into_iter().filter_map(|o| o.metadata.name).collect();
    names.sort();
    names.into_iter().map(|n| Candidate::new(n, None)).collect()
}

/// Names with their namespace as the description, for namespaced objects listed across namespaces.
fn with_namespace<K>(items: Vec<kube::core::PartialObjectMeta<K>>) -> Vec<Candidate> {
    let mut names: Vec<(String, Option<String>)> = items
        .into_iter()
        .filter_map(|o| Some((o.metadata.name?, o.metadata.namespace)))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|(n, ns)| Candidate::new(n, ns.map(|ns| format!("namespace {ns}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_flags_parse_with_defaults() {
        let global = parse_global(&[
            "--kubeconfig=k.yaml".to_string(),
            "--namespace=capi".to_string(),
        ])
        .unwrap();
        assert_eq!(
            global.kubeconfig.as_deref(),
            Some(std::path::Path::new("k.yaml"))
        );
        assert_eq!(global.namespace.as_deref(), Some("capi"));
        assert_eq!(global.context, None);
    }

    #[test]
    fn contexts_of_a_kubeconfig_file_with_their_cluster() {
        let dir = std::env::temp_dir().join(format!("kc-contexts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts:\n\
             - name: prod\n  context: {cluster: prod-eu, user: admin}\n\
             - name: dev\n  context: {cluster: kind-dev, user: admin}\n",
        )
        .unwrap();
        let names = contexts(Some(&path));
        assert_eq!(
            names,
            [
                Candidate::new("prod", Some("cluster prod-eu".to_string())),
                Candidate::new("dev", Some("cluster kind-dev".to_string()))
            ]
        );
        assert!(contexts(Some(&dir.join("missing"))).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
