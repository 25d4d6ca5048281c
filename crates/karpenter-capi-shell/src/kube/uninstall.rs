//! `uninstall`'s shell: removes what `init` installed on the workload cluster in an order that
//! never strands a Node or a Machine, CRDs last.
//!
//! - Default: the controller goes first (so nothing adds our finalizer back), then our
//!   `karpenter.sh/termination` finalizer comes off every NodeClaim and Node, and the Nodes lose
//!   their ownerReferences to NodeClaims (otherwise deleting the NodeClaims, or their CRD, would
//!   garbage-collect the Node objects of running machines). The Machines and their
//!   MachineDeployments stay: the nodes keep running as ordinary nodes.
//! - `--delete-nodes`: every NodeClaim is deleted while the controller runs, so it drains the
//!   nodes and scales their MachineDeployments down; uninstall waits until the NodeClaims and the
//!   Machines they were bound to are gone, and only then goes on as above.
//!
//! # Errors
//! Every API failure is an [`Error::Cluster`] naming the cluster, verb and object; a wait that
//! runs out names what is left and deletes nothing more.

use crate::vocab::kinds;
use std::time::{Duration, Instant};

use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::api::{dynamic_api, resource_name};
use super::errors::{cluster_error, object_error, status_code};
use crate::bundle::kustomize::CRDS;
use crate::error::{ClusterRole, Error, Result};
use crate::vocab::keys::MACHINE_ANNOTATION;
use crate::vocab::keys::TERMINATION_FINALIZER;
use crate::vocab::kinds::ResourceType;
use crate::vocab::names;

/// What `uninstall` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The controller's namespace on the workload cluster.
    pub controller_namespace: String,
    /// Delete every NodeClaim (and so its node and Machine) first.
    pub delete_nodes: bool,
    /// How long to wait for the controller's pods, and with `delete_nodes` for the NodeClaims and
    /// Machines, to go.
    pub timeout: Duration,
    /// How often to look while waiting.
    pub poll: Duration,
}

/// The merge patch that takes our finalizer, and ownerReferences to NodeClaims, off an object's
/// metadata; `None` when it has neither. The patch carries the `resourceVersion` it was computed
/// from, so a concurrent change makes it fail (409) instead of being overwritten.
pub fn strip_patch(object: &Value) -> Option<Value> {
    let meta = object.get("metadata")?;
    let finalizers: Vec<&Value> = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().collect())
        .unwrap_or_default();
    let owners: Vec<&Value> = meta
        .get("ownerReferences")
        .and_then(Value::as_array)
        .map(|o| o.iter().collect())
        .unwrap_or_default();
    let kept_finalizers: Vec<&Value> = finalizers
        .iter()
        .copied()
        .filter(|f| f.as_str() != Some(TERMINATION_FINALIZER))
        .collect();
    let is_claim = |o: &Value| {
        o.get("kind").and_then(Value::as_str) == Some("NodeClaim")
            && o.get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| a.starts_with("karpenter.sh/"))
    };
    let kept_owners: Vec<&Value> = owners.iter().copied().filter(|o| !is_claim(o)).collect();
    if kept_finalizers.len() == finalizers.len() && kept_owners.len() == owners.len() {
        return None;
    }
    let mut patch = json!({"metadata": {}});
    if kept_finalizers.len() != finalizers.len() {
        patch["metadata"]["finalizers"] = json!(kept_finalizers);
    }
    if kept_owners.len() != owners.len() {
        patch["metadata"]["ownerReferences"] = json!(kept_owners);
    }
    if let Some(rv) = meta.get("resourceVersion") {
        patch["metadata"]["resourceVersion"] = rv.clone();
    }
    Some(patch)
}

/// The Machines (`namespace`, `name`) the NodeClaims are bound to (their
/// `cluster.x-k8s.io/machine` annotation).
pub fn bound_machines(claims: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = claims
        .iter()
        .filter_map(|c| {
            c.pointer("/metadata/annotations")
                .and_then(|a| a.get(MACHINE_ANNOTATION))
                .and_then(Value::as_str)
                .and_then(|m| m.split_once('/'))
                .map(|(ns, n)| (ns.to_string(), n.to_string()))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A built-in type of the controller's install, for deletes by name.
fn builtin(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> ResourceType {
    ResourceType {
        group,
        version,
        kind,
        plural,
        namespaced,
    }
}

const CRD: ResourceType = ResourceType {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
};

/// `kind.group/name`, as kubectl prints an object it acted on.
fn printed(rt: &ResourceType, name: &str) -> String {
    let kind = rt.kind.to_ascii_lowercase();
    if rt.group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{}/{name}", rt.group)
    }
}

async fn list(
    client: &kube::Client,
    cluster: ClusterRole,
    rt: &ResourceType,
    namespace: &str,
) -> Result<Vec<Value>> {
    let api = dynamic_api(client, rt, namespace);
    match api.list(&ListParams::default()).await {
        Ok(l) => Ok(l
            .items
            .into_iter()
            .map(|o| super::api::to_value(o, rt))
            .collect()),
        // Not served: nothing of it to remove (its CRD is already gone).
        Err(e) if status_code(&e) == Some(404) => Ok(Vec::new()),
        Err(e) => Err(cluster_error(
            cluster,
            "list",
            &resource_name(rt),
            namespace,
            e,
        )),
    }
}

/// Deletes one object; one already gone is no error. Returns whether it existed.
async fn delete(
    client: &kube::Client,
    cluster: ClusterRole,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
) -> Result<bool> {
    let api = dynamic_api(client, rt, namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(true),
        Err(e) if status_code(&e) == Some(404) => Ok(false),
        Err(e) => Err(object_error(
            cluster,
            "delete",
            &resource_name(rt),
            namespace,
            name,
            e,
        )),
    }
}

fn text(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// Takes our finalizer (and NodeClaim owners) off every object of `rt`, re-reading an object
/// that changed meanwhile (a few times at most).
async fn strip_all(client: &kube::Client, rt: &ResourceType, out: &mut Vec<String>) -> Result<()> {
    let cluster = ClusterRole::Workload;
    for object in list(client, cluster, rt, "").await? {
        let name = text(&object, "/metadata/name");
        let api = dynamic_api(client, rt, "");
        let mut current = object;
        let mut attempts = 0;
        while let Some(patch) = strip_patch(&current) {
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    out.push(format!(
                        "{} finalizer {TERMINATION_FINALIZER} removed",
                        printed(rt, &name)
                    ));
                    break;
                }
                Err(e) if status_code(&e) == Some(409) && attempts < 3 => {
                    attempts += 1;
                    match api.get_opt(&name).await {
                        Ok(Some(o)) => current = super::api::to_value(o, rt),
                        Ok(None) => break,
                        Err(e) => {
                            return Err(object_error(
                                cluster,
                                "get",
                                &resource_name(rt),
                                "",
                                &name,
                                e,
                            ));
                        }
                    }
                }
                Err(e) if status_code(&e) == Some(404) => break,
                Err(e) => {
                    return Err(object_error(
                        cluster,
                        "patch",
                        &resource_name(rt),
                        "",
                        &name,
                        e,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Deletes every NodeClaim and waits until they and their Machines are gone.
async fn delete_nodes(
    workload: &kube::Client,
    management: &kube::Client,
    opts: &Options,
    out: &mut Vec<String>,
) -> Result<()> {
    let deployment = builtin("apps", "v1", "Deployment", "deployments", true);
    let running = dynamic_api(workload, &deployment, &opts.controller_namespace)
        .get_opt(names::WORKLOAD_IDENTITY)
        .await
        .map_err(|e| {
            object_error(
                ClusterRole::Workload,
                "get",
                "deployments.apps",
                &opts.controller_namespace,
                names::WORKLOAD_IDENTITY,
                e,
            )
        })?;
    if running.is_none() {
        return Err(Error::usage(format!(
            "--delete-nodes needs the controller running (it drains the nodes and scales their MachineDeployments down), but Deployment {}/{} is not there; without it, run `kubectl karpenter-capi uninstall` (keeps the nodes) or start the controller first",
            opts.controller_namespace,
            names::WORKLOAD_IDENTITY
        )));
    }
    let claims = list(workload, ClusterRole::Workload, &kinds::NODE_CLAIM, "").await?;
    let machines = bound_machines(&claims);
    for c in &claims {
        let name = text(c, "/metadata/name");
        if delete(
            workload,
            ClusterRole::Workload,
            &kinds::NODE_CLAIM,
            "",
            &name,
        )
        .await?
        {
            out.push(format!("{} deleted", printed(&kinds::NODE_CLAIM, &name)));
        }
    }
    let started = Instant::now();
    loop {
        let claims_left: Vec<String> =
            list(workload, ClusterRole::Workload, &kinds::NODE_CLAIM, "")
                .await?
                .iter()
                .map(|c| format!("NodeClaim/{}", text(c, "/metadata/name")))
                .collect();
        let mut machines_left = Vec::new();
        for (ns, name) in &machines {
            let api = dynamic_api(management, &kinds::MACHINE, ns);
            let found = api.get_opt(name).await.map_err(|e| {
                object_error(
                    ClusterRole::Management,
                    "get",
                    &resource_name(&kinds::MACHINE),
                    ns,
                    name,
                    e,
                )
            })?;
            if found.is_some() {
                machines_left.push(format!("Machine/{ns}/{name}"));
            }
        }
        if claims_left.is_empty() && machines_left.is_empty() {
            out.push(format!(
                "every NodeClaim and its Machine is gone ({} Machine(s))",
                machines.len()
            ));
            return Ok(());
        }
        if started.elapsed() >= opts.timeout {
            let mut left = claims_left;
            left.extend(machines_left);
            return Err(Error::Cluster {
                cluster: ClusterRole::Workload,
                action: "uninstall --delete-nodes".to_string(),
                message: format!(
                    "still there after {}s: {}",
                    opts.timeout.as_secs(),
                    left.join(", ")
                ),
                hint: Some(
                    "nothing else was removed; check `kubectl karpenter-capi doctor` for what blocks them (a PodDisruptionBudget, do-not-disrupt pods), then run uninstall again"
                        .to_string(),
                ),
            });
        }
        tokio::time::sleep(opts.poll).await;
    }
}

/// Waits until no controller pod is left (a terminating leader could still add the finalizer
/// back); if one outlives the timeout, names it and removes nothing more.
async fn wait_for_controller_pods(
    workload: &kube::Client,
    opts: &Options,
    out: &mut Vec<String>,
) -> Result<()> {
    let api = dynamic_api(workload, &kinds::POD, &opts.controller_namespace);
    let params = ListParams::default().labels("app.kubernetes.io/name=karpenter-capi");
    let started = Instant::now();
    let mut waited = false;
    loop {
        let pods: Vec<String> = api
            .list(&params)
            .await
            .map_err(|e| {
                cluster_error(
                    ClusterRole::Workload,
                    "list",
                    "pods",
                    &opts.controller_namespace,
                    e,
                )
            })?
            .items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        if pods.is_empty() {
            if waited {
                out.push("the controller's pods are gone".to_string());
            }
            return Ok(());
        }
        if started.elapsed() >= opts.timeout {
            return Err(Error::Cluster {
                cluster: ClusterRole::Workload,
                action: "uninstall".to_string(),
                message: format!(
                    "the controller's pods are still running after {}s: {}",
                    opts.timeout.as_secs(),
                    pods.iter()
                        .map(|p| format!("Pod/{}/{p}", opts.controller_namespace))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                hint: Some(
                    "its Deployment is deleted; once they are gone, run uninstall again (a running controller would put its finalizers back)"
                        .to_string(),
                ),
            });
        }
        waited = true;
        tokio::time::sleep(opts.poll).await;
    }
}

/// Runs the uninstall; returns one line per thing done.
pub async fn uninstall(
    workload: &kube::Client,
    management: &kube::Client,
    opts: &Options,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if opts.delete_nodes {
        delete_nodes(workload, management, opts, &mut out).await?;
    }
    let ns = opts.controller_namespace.as_str();
    let cluster = ClusterRole::Workload;
    // The controller first: nothing may add the finalizer back once it is removed.
    let deployment = builtin("apps", "v1", "Deployment", "deployments", true);
    if delete(workload, cluster, &deployment, ns, names::WORKLOAD_IDENTITY).await? {
        out.push(format!(
            "{} deleted",
            printed(&deployment, names::WORKLOAD_IDENTITY)
        ));
    }
    wait_for_controller_pods(workload, opts, &mut out).await?;
    strip_all(workload, &kinds::NODE_CLAIM, &mut out).await?;
    strip_all(workload, &kinds::NODE, &mut out).await?;
    for rt in [kinds::NODE_CLAIM, kinds::NODE_POOL, kinds::NODE_CLASS] {
        for o in list(workload, cluster, &rt, "").await? {
            let name = text(&o, "/metadata/name");
            if delete(workload, cluster, &rt, "", &name).await? {
                out.push(format!("{} deleted", printed(&rt, &name)));
            }
        }
    }
    // The rest of the controller's install, by the names init gives them.
    let objects: [(ResourceType, &str, &str); 9] = [
        (
            builtin(
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
                true,
            ),
            ns,
            names::WORKLOAD_IDENTITY,
        ),
        (
            builtin("", "v1", "Service", "services", true),
            ns,
            names::METRICS_SERVICE,
        ),
        (
            builtin("", "v1", "Secret", "secrets", true),
            ns,
            names::MANAGEMENT_KUBECONFIG_SECRET,
        ),
        (
            builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "RoleBinding",
                "rolebindings",
                true,
            ),
            ns,
            names::LEADER_ELECTION,
        ),
        (
            builtin("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
            ns,
            names::LEADER_ELECTION,
        ),
        (
            builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRoleBinding",
                "clusterrolebindings",
                false,
            ),
            "",
            names::WORKLOAD_IDENTITY,
        ),
        (
            builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRole",
                "clusterroles",
                false,
            ),
            "",
            names::WORKLOAD_IDENTITY,
        ),
        (
            builtin("", "v1", "ServiceAccount", "serviceaccounts", true),
            ns,
            names::WORKLOAD_IDENTITY,
        ),
        (builtin("", "v1", "Namespace", "namespaces", false), "", ns),
    ];
    for (rt, namespace, name) in &objects {
        if delete(workload, cluster, rt, namespace, name).await? {
            out.push(format!("{} deleted", printed(rt, name)));
        }
    }
    // CRDs last: deleting one deletes every object of its kind.
    for crd in CRDS {
        let name = crd.crd_name();
        if delete(workload, cluster, &CRD, "", &name).await? {
            out.push(format!("{} deleted", printed(&CRD, &name)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_finalizer_and_nodeclaim_owners_are_stripped() {
        let node = json!({"metadata": {"name": "n", "resourceVersion": "7",
            "finalizers": ["example.com/keep", "karpenter.sh/termination"],
            "ownerReferences": [
                {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x", "uid": "u1"},
                {"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u2"}]}});
        assert_eq!(
            strip_patch(&node),
            Some(json!({"metadata": {"resourceVersion": "7",
                "finalizers": ["example.com/keep"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u2"}]}}))
        );
        // Only the finalizer: the owners are not written.
        let claim = json!({"metadata": {"name": "c", "finalizers": ["karpenter.sh/termination"]}});
        assert_eq!(
            strip_patch(&claim),
            Some(json!({"metadata": {"finalizers": []}}))
        );
        // Nothing of ours: no write at all.
        let other = json!({"metadata": {"name": "n", "finalizers": ["example.com/keep"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u"}]}});
        assert_eq!(strip_patch(&other), None);
        assert_eq!(strip_patch(&json!({"metadata": {"name": "bare"}})), None);
    }

    #[test]
    fn bound_machines_come_from_the_claims_annotation_once_each() {
        let claims = [
            json!({"metadata": {"name": "a", "annotations": {"cluster.x-k8s.io/machine": "capi/m-2"}}}),
            json!({"metadata": {"name": "b", "annotations": {"cluster.x-k8s.io/machine": "capi/m-1"}}}),
            json!({"metadata": {"name": "c", "annotations": {"cluster.x-k8s.io/machine": "capi/m-1"}}}),
            json!({"metadata": {"name": "d"}}),
            json!({"metadata": {"name": "e", "annotations": {"cluster.x-k8s.io/machine": "no-namespace"}}}),
        ];
        assert_eq!(
            bound_machines(&claims),
            [
                ("capi".to_string(), "m-1".to_string()),
                ("capi".to_string(), "m-2".to_string())
            ]
        );
    }
}
