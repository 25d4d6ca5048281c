//! Listing the workload and management clusters into a [`Snapshot`] with the same loader the
//! offline commands use (`RawObject` -> `build_snapshot`), so a live pass and a replayed dump are
//! planned by one code path.
//!
//! # Errors
//! An unreachable cluster, a CRD that is not installed, or a forbidden list becomes an
//! [`Error::Cluster`] naming the cluster (workload or management), the resource, the verb and
//! what to do. Cluster API types are tried as `v1beta2` first and `v1beta1` when `v1beta2` is not
//! served; only when neither is served is the CRD reported missing.
//!
//! RuntimeClasses only refine sizing ([`Listed::advisory`]): an API that is not served or a
//! forbidden list of them is a warning in the snapshot, and the pass goes on without them.

use crate::vocab::kinds;
use kube::api::ListParams;
use serde_json::Value;

use super::api;
use super::errors::{cluster_error, is_builtin, missing_crd, status_code};
use crate::diagnose::crds::MissingCrd;
use crate::error::{ClusterRole, Error, Result};
use crate::model::load::build_snapshot_tolerant;
use crate::model::object::RawObject;
use crate::model::odd::{Oddity, Treatment};
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::CLUSTER_NAME_LABEL;
use crate::vocab::kinds::ResourceType;
use crate::vocab::kinds::{
    DAEMON_SET, KUBEADM_CONFIG_TEMPLATE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM,
    POD_DISRUPTION_BUDGET, RUNTIME_CLASS, STORAGE_CLASS,
};

/// Page size of list calls: bounded responses on large clusters.
const PAGE_SIZE: u32 = 500;

/// One resource type the controller observes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed {
    /// Which cluster it lives on.
    pub cluster: ClusterRole,
    /// The type (its preferred version).
    pub resource: ResourceType,
    /// An older version to fall back to when the preferred one is not served.
    pub fallback_version: Option<&'static str>,
    /// Restricted to the Cluster API namespace when `-n` is given.
    pub in_capi_namespace: bool,
    /// A missing CRD is a warning, not an error (the kubeadm bootstrap provider is optional).
    pub optional: bool,
    /// Only refines decisions: an API that is not served or a list that is forbidden is a
    /// warning naming what goes uncounted, and the type is read as empty (RuntimeClasses: their
    /// overhead sizes DaemonSets that have no pod yet; without them, as before they were read).
    pub advisory: bool,
}

const fn workload(resource: ResourceType) -> Listed {
    Listed {
        cluster: ClusterRole::Workload,
        resource,
        fallback_version: None,
        in_capi_namespace: false,
        optional: false,
        advisory: false,
    }
}

/// A workload type that only refines decisions (see [`Listed::advisory`]).
const fn advisory(resource: ResourceType) -> Listed {
    Listed {
        advisory: true,
        ..workload(resource)
    }
}

const fn management(resource: ResourceType, optional: bool) -> Listed {
    Listed {
        cluster: ClusterRole::Management,
        resource,
        fallback_version: Some("v1beta1"),
        in_capi_namespace: true,
        optional,
        advisory: false,
    }
}

/// Everything the core reads, per cluster.
pub const OBSERVED: &[Listed] = &[
    workload(kinds::POD),
    workload(kinds::NODE),
    workload(DAEMON_SET),
    workload(POD_DISRUPTION_BUDGET),
    workload(PERSISTENT_VOLUME_CLAIM),
    workload(PERSISTENT_VOLUME),
    workload(STORAGE_CLASS),
    advisory(RUNTIME_CLASS),
    workload(kinds::NODE_POOL),
    workload(kinds::NODE_CLAIM),
    workload(kinds::NODE_CLASS),
    management(kinds::MACHINE_DEPLOYMENT, false),
    management(kinds::MACHINE, false),
    // Read to hold scale-downs back during rollouts and pauses. Optional only in that a missing
    // CRD is a warning; a forbidden list fails the pass like any other (safety needs them).
    management(kinds::MACHINE_SET, true),
    management(kinds::CLUSTER, true),
    management(KUBEADM_CONFIG_TEMPLATE, true),
];

impl Listed {
    /// The namespace to list in (empty: all namespaces / cluster-scoped).
    pub fn namespace<'a>(&self, capi_namespace: Option<&'a str>) -> &'a str {
        if self.in_capi_namespace {
            capi_namespace.unwrap_or("")
        } else {
            ""
        }
    }

    /// Where objects of this type say they came from in error messages.
    pub fn origin(&self) -> &'static str {
        match self.cluster {
            ClusterRole::Workload => "workload cluster",
            ClusterRole::Management => "management cluster",
        }
    }

    /// The versions to try, preferred first.
    pub fn versions(&self) -> Vec<ResourceType> {
        let mut out = vec![self.resource];
        if let Some(v) = self.fallback_version {
            out.push(ResourceType {
                version: v,
                ..self.resource
            });
        }
        out
    }
}

/// The two clients of a controller; the same client twice for a self-hosted cluster.
#[derive(Clone)]
pub struct Clients {
    /// Pods, Nodes, NodePools, NodeClaims, node classes.
    pub workload: kube::Client,
    /// MachineDeployments and Machines.
    pub management: kube::Client,
}

impl Clients {
    /// The client of a cluster.
    pub fn of(&self, role: ClusterRole) -> &kube::Client {
        match role {
            ClusterRole::Workload => &self.workload,
            ClusterRole::Management => &self.management,
        }
    }
}

/// What one list returned: the version that answered and its objects as JSON.
#[derive(Debug)]
pub struct Listing {
    /// The version served (after fallback).
    pub resource: ResourceType,
    /// The objects.
    pub items: Vec<Value>,
    /// Set when an optional CRD is missing.
    pub warning: Option<String>,
}

impl Listed {
    /// The label selector scoping this type to one Cluster: MachineDeployments and Machines
    /// carry Cluster API's cluster-name label (its webhooks set it from `spec.clusterName`).
    pub fn cluster_selector(&self, cluster: Option<&str>) -> Option<String> {
        let scoped = self.cluster == ClusterRole::Management
            && matches!(self.resource.kind, "MachineDeployment" | "Machine");
        cluster
            .filter(|_| scoped)
            .map(|c| format!("{CLUSTER_NAME_LABEL}={c}"))
    }
}

/// Lists one type with paging, falling back to older versions when the preferred one is not
/// served. With `probe`, one item only: enough to learn which version is served.
pub async fn list_one(
    clients: &Clients,
    listed: &Listed,
    capi_namespace: Option<&str>,
    probe: bool,
) -> Result<Listing> {
    list_one_in(clients, listed, capi_namespace, None, probe).await
}

/// [`list_one`] scoped to one Cluster (see [`Listed::cluster_selector`]).
pub async fn list_one_in(
    clients: &Clients,
    listed: &Listed,
    capi_namespace: Option<&str>,
    cluster: Option<&str>,
    probe: bool,
) -> Result<Listing> {
    if let Some(listing) = list_served(clients, listed, capi_namespace, cluster, probe).await? {
        return Ok(listing);
    }
    let err = not_served(listed);
    if listed.optional || listed.advisory {
        return Ok(Listing {
            resource: listed.resource,
            items: Vec::new(),
            warning: Some(if listed.advisory {
                uncounted(listed, without_hint(err))
            } else {
                err.to_string()
            }),
        });
    }
    Err(err)
}

/// Lists one type in the first of its versions the cluster serves; `None` when it serves none.
async fn list_served(
    clients: &Clients,
    listed: &Listed,
    capi_namespace: Option<&str>,
    cluster: Option<&str>,
    probe: bool,
) -> Result<Option<Listing>> {
    let selector = listed.cluster_selector(cluster);
    let namespace = listed.namespace(capi_namespace);
    for rt in &listed.versions() {
        match list_pages(
            clients.of(listed.cluster),
            listed.cluster,
            rt,
            namespace,
            selector.as_deref(),
            probe,
        )
        .await
        {
            Ok(items) => {
                return Ok(Some(Listing {
                    resource: *rt,
                    items,
                    warning: None,
                }));
            }
            Err(ListError::NotServed) => continue,
            // A forbidden list of a type that only refines decisions: read as empty.
            Err(ListError::Forbidden(e)) if listed.advisory => {
                return Ok(Some(Listing {
                    resource: *rt,
                    items: Vec::new(),
                    warning: Some(uncounted(listed, e)),
                }));
            }
            Err(ListError::Forbidden(e) | ListError::Other(e)) => return Err(e),
        }
    }
    Ok(None)
}

/// The error of a type no version of which is served: a missing CRD, with what installs it.
fn not_served(listed: &Listed) -> Error {
    let names: Vec<&str> = listed.versions().iter().map(|r| r.version).collect();
    missing_crd(
        listed.cluster,
        &api::resource_name(&listed.resource),
        &names,
    )
}

/// The warning of an advisory type that cannot be read: the error, and what goes uncounted.
fn uncounted(listed: &Listed, err: Error) -> String {
    let what = match listed.resource.kind {
        "RuntimeClass" => {
            "RuntimeClass overhead is not added to pods and DaemonSets without spec.overhead"
        }
        _ => "its objects are not read",
    };
    format!("{err}\n  {what}")
}

/// An error without its hint: a built-in API that is not served is no sign of a wrong address
/// when it is an optional one (RuntimeClasses can be switched off).
fn without_hint(err: Error) -> Error {
    match err {
        Error::Cluster {
            cluster,
            action,
            message,
            ..
        } => Error::Cluster {
            cluster,
            action,
            message,
            hint: None,
        },
        other => other,
    }
}

enum ListError {
    NotServed,
    /// 403: the identity may not list the type.
    Forbidden(Error),
    Other(Error),
}

async fn list_pages(
    client: &kube::Client,
    cluster: ClusterRole,
    rt: &ResourceType,
    namespace: &str,
    selector: Option<&str>,
    probe: bool,
) -> Result<Vec<Value>, ListError> {
    let api = api::dynamic_api(client, rt, namespace);
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(if probe { 1 } else { PAGE_SIZE });
        if let Some(s) = selector {
            params = params.labels(s);
        }
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = match api.list(&params).await {
            Ok(page) => page,
            // A 404 on a collection means the API (group/version/resource) is not served.
            Err(e) if status_code(&e) == Some(404) => return Err(ListError::NotServed),
            Err(e) => {
                let forbidden = status_code(&e) == Some(403);
                let err = cluster_error(cluster, "list", &api::resource_name(rt), namespace, e);
                return Err(if forbidden {
                    ListError::Forbidden(err)
                } else {
                    ListError::Other(err)
                });
            }
        };
        token = page.metadata.continue_.clone().filter(|t| !t.is_empty());
        items.extend(page.items.into_iter().map(|o| api::to_value(o, rt)));
        if probe || token.is_none() {
            return Ok(items);
        }
    }
}

/// Turns listed JSON objects into a snapshot evaluated at the current time.
pub fn snapshot_from_values(
    values: Vec<(Value, &'static str)>,
    warnings: Vec<String>,
) -> Result<Snapshot> {
    let mut objects = Vec::with_capacity(values.len());
    // The API server accepted every one of these: one we cannot read is left out, with a
    // warning naming it, and the pass goes on for everything else.
    let mut unreadable = Vec::new();
    for (value, origin) in values {
        match read_listed(value, origin) {
            Ok(o) => objects.push(o),
            Err(odd) => unreadable.push(*odd),
        }
    }
    let snapshot = build_snapshot_tolerant(objects)?;
    Ok(finish_listed(snapshot, unreadable, warnings))
}

/// One listed object read for the loader, or the [`Oddity`] leaving it out (the API server
/// accepted it, so one we cannot read does not stop the pass).
pub fn read_listed(
    value: Value,
    origin: &'static str,
) -> std::result::Result<RawObject, Box<Oddity>> {
    let (kind, name) = identity(&value);
    RawObject::from_value(value, origin).map_err(|e| {
        Box::new(Oddity {
            origin: origin.to_string(),
            kind,
            name,
            field: String::new(),
            value: e.to_string(),
            treatment: Treatment::Skipped,
            used: String::new(),
        })
    })
}

/// What a live view adds to the snapshot the loader built from it: the objects left out
/// ([`read_listed`]), the listing's `warnings`, whether the Machines were all seen, and the
/// time of evaluation.
pub fn finish_listed(
    mut snapshot: Snapshot,
    unreadable: Vec<Oddity>,
    warnings: Vec<String>,
) -> Snapshot {
    // A Machine the API server listed but that we could not read (or that the loader left out)
    // is absent from the snapshot without being gone.
    let machine_left_out = unreadable
        .iter()
        .chain(&snapshot.oddities)
        .any(|o| o.kind == "Machine" && o.treatment == Treatment::Skipped);
    snapshot
        .warnings
        .extend(unreadable.iter().map(Oddity::to_string));
    snapshot.oddities.extend(unreadable);
    snapshot.warnings.extend(warnings);
    // Machines are a mandatory listing: a failed list fails the snapshot, so an absent Machine
    // here is really gone, unless one listed was left out. Then the view of Machines is not
    // complete and no NodeClaim is garbage-collected for a missing Machine this pass (core
    // `nodeclaim/garbagecollection/controller.go` acts only on a complete cloud-provider list).
    snapshot.machines_observed = !machine_left_out;
    snapshot.now = Some(jiff::Timestamp::now());
    snapshot
}

/// Kind and `namespace/name` of an object that may not be readable.
fn identity(value: &Value) -> (String, String) {
    let text = |p: &str| value.pointer(p).and_then(Value::as_str).unwrap_or("");
    let name = match text("/metadata/namespace") {
        "" => text("/metadata/name").to_string(),
        ns => format!("{ns}/{}", text("/metadata/name")),
    };
    (text("/kind").to_string(), name)
}

/// Lists everything the core needs from both clusters. `namespace` restricts the Cluster API
/// objects to the cluster's namespace on the management cluster.
pub async fn live_snapshot(
    workload: &kube::Client,
    management: &kube::Client,
    namespace: Option<&str>,
) -> Result<Snapshot> {
    live_snapshot_in(workload, management, namespace, None).await
}

/// [`live_snapshot`] with the Cluster API objects scoped to one Cluster.
pub async fn live_snapshot_in(
    workload: &kube::Client,
    management: &kube::Client,
    namespace: Option<&str>,
    cluster: Option<&str>,
) -> Result<Snapshot> {
    let clients = Clients {
        workload: workload.clone(),
        management: management.clone(),
    };
    let listings = futures::future::try_join_all(
        OBSERVED
            .iter()
            .map(|l| list_one_in(&clients, l, namespace, cluster, false)),
    )
    .await?;
    let mut values = Vec::new();
    let mut warnings = Vec::new();
    for (listed, listing) in OBSERVED.iter().zip(listings) {
        warnings.extend(listing.warning);
        values.extend(listing.items.into_iter().map(|v| (v, listed.origin())));
    }
    snapshot_from_values(values, warnings)
}

/// [`live_snapshot`] for `doctor`: a CRD no cluster serves is returned as a [`MissingCrd`] (and
/// its objects are absent) instead of failing the listing, so every other check still runs. A
/// built-in API that is not served (not a Kubernetes API server) and every other error still fail.
pub async fn live_snapshot_reporting_missing_crds(
    workload: &kube::Client,
    management: &kube::Client,
    namespace: Option<&str>,
) -> Result<(Snapshot, Vec<MissingCrd>)> {
    let clients = Clients {
        workload: workload.clone(),
        management: management.clone(),
    };
    let listings = futures::future::try_join_all(
        OBSERVED
            .iter()
            .map(|l| list_served(&clients, l, namespace, None, false)),
    )
    .await?;
    let mut values = Vec::new();
    let mut warnings = Vec::new();
    let mut missing = Vec::new();
    for (listed, listing) in OBSERVED.iter().zip(listings) {
        let Some(listing) = listing else {
            let resource = api::resource_name(&listed.resource);
            let err = not_served(listed);
            if listed.advisory {
                warnings.push(uncounted(listed, without_hint(err)));
                continue;
            }
            if is_builtin(&resource) {
                return Err(err);
            }
            if listed.optional {
                warnings.push(err.to_string());
                continue;
            }
            let remedy = match err {
                Error::Cluster { hint, .. } => hint.unwrap_or_default(),
                _ => String::new(),
            };
            missing.push(MissingCrd {
                cluster: listed.cluster,
                resource,
                api_versions: listed
                    .versions()
                    .iter()
                    .map(|r| format!("{}/{}", r.group, r.version))
                    .collect(),
                remedy,
            });
            continue;
        };
        warnings.extend(listing.warning);
        values.extend(listing.items.into_iter().map(|v| (v, listed.origin())));
    }
    Ok((snapshot_from_values(values, warnings)?, missing))
}

/// Runs a future on a fresh current-thread runtime (the offline commands are synchronous).
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Io)?;
    Ok(rt.block_on(future))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::controller::{Config, plan};

    const MGMT: &str = "management cluster";
    const WL: &str = "workload cluster";

    /// A registered NodeClaim bound to Machine `capi/m-<i>`, whose Node is not Ready.
    fn claim_and_node(i: u32) -> Vec<(Value, &'static str)> {
        let pid = format!("openstack:///{i}");
        vec![
            (
                json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                    "metadata": {"name": format!("c-{i}"), "finalizers": ["karpenter.sh/termination"],
                      "labels": {"karpenter.sh/nodepool": "default"},
                      "annotations": {"cluster.x-k8s.io/machine": format!("capi/m-{i}")}},
                    "spec": {"requirements": []},
                    "status": {"providerID": pid, "nodeName": format!("node-{i}"), "conditions": [
                      {"type": "Launched", "status": "True"}, {"type": "Registered", "status": "True"}]}}),
                WL,
            ),
            (
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i}")},
                    "spec": {"providerID": pid},
                    "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
                WL,
            ),
        ]
    }

    fn machine(i: u32) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": format!("m-{i}"), "namespace": "capi"},
            "spec": {"clusterName": "capi", "providerID": format!("openstack:///{i}")},
            "status": {"nodeRef": {"name": format!("node-{i}")}}})
    }

    /// The claims a plan garbage-collects.
    fn collected(values: Vec<(Value, &'static str)>) -> (bool, Vec<String>) {
        let snapshot = snapshot_from_values(values, Vec::new()).unwrap();
        let now = "2026-11-30T10:00:00Z".parse().unwrap();
        let p = serde_json::to_value(plan(&snapshot, now, &Config::default())).unwrap();
        let gc = p["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["reason"] == "GarbageCollected")
            .map(|a| a["target"].as_str().unwrap().to_string())
            .collect();
        (snapshot.machines_observed, gc)
    }

    #[test]
    fn a_machine_listed_but_unreadable_keeps_every_claim_from_garbage_collection() {
        // m-1 is gone, m-2 is readable: c-1 is collected, c-2 is not.
        let mut base = claim_and_node(1);
        base.extend(claim_and_node(2));
        base.push((machine(2), MGMT));
        assert_eq!(
            collected(base.clone()),
            (true, vec!["NodeClaim/c-1".to_string()])
        );
        // A third Machine the API server listed but that cannot be read (its labels are not a
        // map; or its apiVersion is missing): the view of Machines is incomplete, so not even
        // c-1 is collected (the unreadable one may be m-1).
        for broken in [
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                "metadata": {"name": "m-3", "namespace": "capi", "labels": 5}}),
            json!({"kind": "Machine", "metadata": {"name": "m-1", "namespace": "capi"}}),
        ] {
            let mut values = base.clone();
            values.push((broken, MGMT));
            assert_eq!(collected(values), (false, Vec::new()));
        }
        // An unreadable object of another kind proves nothing about Machines.
        let mut values = base.clone();
        values.push((
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": 5}}),
            WL,
        ));
        assert_eq!(collected(values), (true, vec!["NodeClaim/c-1".to_string()]));
    }

    #[test]
    fn only_machine_deployments_and_machines_are_scoped_to_the_cluster() {
        let by_kind = |kind: &str| {
            OBSERVED
                .iter()
                .find(|l| l.resource.kind == kind)
                .copied()
                .unwrap_or_else(|| panic!("{kind} not observed"))
        };
        for kind in ["MachineDeployment", "Machine"] {
            assert_eq!(
                by_kind(kind).cluster_selector(Some("prod")).as_deref(),
                Some("cluster.x-k8s.io/cluster-name=prod"),
                "{kind}"
            );
            assert_eq!(by_kind(kind).cluster_selector(None), None, "{kind}");
        }
        // Workload types are never scoped by a management label; the Cluster object itself does
        // not carry the label, and MachineSets/templates are matched to their owners.
        for kind in [
            "Pod",
            "Node",
            "NodeClaim",
            "NodePool",
            "Cluster",
            "MachineSet",
        ] {
            assert_eq!(by_kind(kind).cluster_selector(Some("prod")), None, "{kind}");
        }
        // A workload type named like a management one is still not scoped.
        let wl_machine = Listed {
            cluster: ClusterRole::Workload,
            ..by_kind("Machine")
        };
        assert_eq!(wl_machine.cluster_selector(Some("prod")), None);
    }
}
