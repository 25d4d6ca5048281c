//! Continuous observation: one kube-runtime watcher per observed type, each feeding a reflector
//! store, so a pass reads memory instead of listing. Watchers resume on their own (with the
//! default backoff) after API errors and re-list when their resourceVersion expires.
//!
//! Objects are trimmed before they are stored ([`trim`]): `managedFields` and the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation of every kind; a Node's images,
//! node info, addresses and conditions other than Ready; the parts of a Pod that do not bear on
//! scheduling (volumes other than claims, container env, probes, mounts, commands, DNS, service
//! account, security settings, status other than phase, start time, nomination and the
//! PodScheduled condition). They are most of an object's size and the core reads none of them
//! (`model::pod` reads requests, ports, tolerations, selectors, affinity, spread, overhead,
//! claims, owner, phase and the PodScheduled condition). Decisions are the same as from a full
//! listing. What writes need (name, namespace, uid, resourceVersion, labels, annotations,
//! finalizers, owners) is metadata, which is kept whole but for the two fields above.
//!
//! # Errors
//! [`start`] fails when a type cannot be listed at all (CRD missing, forbidden, cluster
//! unreachable) with the same messages as `run --once`; the caller retries with backoff.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::runtime::{WatchStreamExt, reflector::store::Writer};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::warn;

use super::api::{self, api_resource, dynamic_api};
use super::list::{Clients, Listed, OBSERVED, finish_listed, list_one_in, read_listed};
use super::metrics::Metrics;
use crate::controller::write::ResourceType;
use crate::error::Result;
use crate::model::load::{Builder, expands_templates};
use crate::model::object::RawObject;
use crate::model::snapshot::Snapshot;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The reflector stores of every observed type.
pub struct Stores {
    entries: Vec<(Listed, ResourceType, Store<DynamicObject>)>,
    warnings: Vec<String>,
    pod_events: PodEvents,
    /// Per store (same order as `entries`): whether its watcher has completed its latest
    /// (re-)list. See [`Synced`].
    synced: Vec<Synced>,
}

/// Whether a watcher's view is complete: false from kube-runtime's `Event::Init` (the initial
/// list, or a re-list after a restart or an expired resourceVersion) until its `Event::InitDone`.
/// Meanwhile the reflector still serves the objects of before the re-list, which may be stale.
#[derive(Clone, Default)]
pub struct Synced(Arc<AtomicBool>);

impl Synced {
    /// A flag that starts synced (stores seeded by the caller).
    pub fn new(synced: bool) -> Synced {
        Synced(Arc::new(AtomicBool::new(synced)))
    }

    /// Follows a watcher event: `Init` starts a (re-)list, `InitDone` completes it.
    pub fn observe<K>(&self, event: &watcher::Event<K>) {
        match event {
            watcher::Event::Init => self.0.store(false, Ordering::SeqCst),
            watcher::Event::InitDone => self.0.store(true, Ordering::SeqCst),
            _ => {}
        }
    }

    /// Whether the latest (re-)list completed.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The latest pod event seen per node name (see [`pod_event`]).
pub type PodEvents = Arc<Mutex<BTreeMap<String, Timestamp>>>;

/// What a pod event needs from a pod: its node, whether it is terminal or terminating, and
/// whether a DaemonSet owns it.
fn pod_facts(v: &serde_json::Value) -> (Option<String>, bool, bool, bool) {
    let node = v
        .pointer("/spec/nodeName")
        .and_then(serde_json::Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let terminal = matches!(
        v.pointer("/status/phase")
            .and_then(serde_json::Value::as_str),
        Some("Succeeded" | "Failed")
    );
    let terminating = v.pointer("/metadata/deletionTimestamp").is_some();
    let daemon = v
        .pointer("/metadata/ownerReferences")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.get("kind").and_then(serde_json::Value::as_str) == Some("DaemonSet"))
        });
    (node, terminal, terminating, daemon)
}

/// The node a pod watch event is a pod event for, as core's podevents controller counts them
/// (`nodeclaim/podevents/controller.go`): a pod newly bound to a node, or one on a node newly
/// terminal or terminating; and a pod deleted from a node. DaemonSet pods do not count, and
/// neither does a (re-)list: an object seen for the first time in a list is no event.
/// `old` is the stored object before the event, expanded.
pub fn pod_event(
    event: &watcher::Event<DynamicObject>,
    old: Option<&serde_json::Value>,
) -> Option<String> {
    let (new, listed) = match event {
        watcher::Event::Apply(o) => (o, false),
        watcher::Event::InitApply(o) => (o, true),
        watcher::Event::Delete(o) => {
            let (node, _, _, daemon) = pod_facts(&serde_json::to_value(o).ok()?);
            return node.filter(|_| !daemon);
        }
        _ => return None,
    };
    let new = serde_json::to_value(new).ok()?;
    let (node, terminal, terminating, daemon) = pod_facts(&new);
    let node = node.filter(|_| !daemon)?;
    match old.map(pod_facts) {
        None if listed => None,
        None => Some(node),
        Some((old_node, was_terminal, was_terminating, _)) => {
            let bound = old_node.is_none();
            (bound || (terminal && !was_terminal) || (terminating && !was_terminating))
                .then_some(node)
        }
    }
}

/// Container fields that do not bear on scheduling.
const CONTAINER_NOISE: &[&str] = &[
    "env",
    "envFrom",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "volumeMounts",
    "volumeDevices",
    "command",
    "args",
    "lifecycle",
    "securityContext",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "workingDir",
    "imagePullPolicy",
    "resizePolicy",
    "stdin",
    "stdinOnce",
    "tty",
];
/// Pod spec fields the core does not read (`model::pod`, `constraints`): DNS, service account,
/// security, the pod's restart policy (a sidecar's is per container and kept), grace period,
/// scheduler and priority value (the priority class name is read).
const POD_SPEC_NOISE: &[&str] = &[
    "dnsPolicy",
    "dnsConfig",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "securityContext",
    "imagePullSecrets",
    "schedulerName",
    "priority",
    "preemptionPolicy",
    "readinessGates",
    "hostAliases",
    "hostname",
    "subdomain",
];
/// The pod status fields the core reads (`load::records::pod_record`, [`pod_facts`]); of its
/// conditions, only `PodScheduled`.
const POD_STATUS_READ: &[&str] = &["phase", "conditions", "nominatedNodeName", "startTime"];
/// Node status fields the core does not read.
const NODE_STATUS_NOISE: &[&str] = &[
    "images",
    "volumesAttached",
    "volumesInUse",
    "config",
    "daemonEndpoints",
    "nodeInfo",
    "addresses",
];

/// Drops what the core never reads from an object of `kind` (list items of built-in types come
/// without their kind, so the watcher passes it), to keep the stores small (see the module docs).
pub fn trim(obj: &mut DynamicObject, kind: &str) {
    obj.metadata.managed_fields = None;
    if let Some(a) = obj.metadata.annotations.as_mut() {
        a.remove(LAST_APPLIED);
    }
    let remove = |v: Option<&mut serde_json::Value>, keys: &[&str]| {
        if let Some(m) = v.and_then(serde_json::Value::as_object_mut) {
            for k in keys {
                m.remove(*k);
            }
        }
    };
    match kind {
        "Pod" => {
            if let Some(status) = obj.data.get_mut("status").and_then(|s| s.as_object_mut()) {
                status.retain(|k, _| POD_STATUS_READ.contains(&k.as_str()));
                keep_conditions(status, "PodScheduled");
            }
            remove(obj.data.get_mut("spec"), POD_SPEC_NOISE);
            // Only volumes backed by a claim bear on scheduling (`constraints::claims`).
            if let Some(spec) = obj.data.get_mut("spec").and_then(|s| s.as_object_mut()) {
                if let Some(serde_json::Value::Array(volumes)) = spec.get_mut("volumes") {
                    volumes.retain(|v| {
                        v.get("persistentVolumeClaim").is_some() || v.get("ephemeral").is_some()
                    });
                }
                if spec
                    .get("volumes")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    spec.remove("volumes");
                }
            }
            for list in ["containers", "initContainers", "ephemeralContainers"] {
                if let Some(cs) = obj
                    .data
                    .pointer_mut(&format!("/spec/{list}"))
                    .and_then(serde_json::Value::as_array_mut)
                {
                    for c in cs {
                        remove(Some(c), CONTAINER_NOISE);
                    }
                }
            }
        }
        "Node" => {
            remove(obj.data.get_mut("status"), NODE_STATUS_NOISE);
            if let Some(status) = obj.data.get_mut("status").and_then(|s| s.as_object_mut()) {
                keep_conditions(status, "Ready");
            }
        }
        _ => {}
    }
}

/// Keeps only the condition of type `kind` in `status.conditions` (the one the loader reads).
fn keep_conditions(status: &mut serde_json::Map<String, serde_json::Value>, kind: &str) {
    if let Some(serde_json::Value::Array(conditions)) = status.get_mut("conditions") {
        conditions.retain(|c| c.get("type").and_then(serde_json::Value::as_str) == Some(kind));
    }
}

/// Trims an object and keeps it as one JSON string, the object's `data` itself: a parsed
/// `serde_json::Value` costs about ten times its text (a B-tree node per map, some 600 bytes
/// even for one entry), and the stores hold every pod of the cluster. Only the identity stays
/// typed in `metadata` (name and namespace for lookups and order, uid and resourceVersion for
/// the reflector); labels, annotations, owners and the rest of the metadata go in the text too.
/// Read it back with [`expand`].
pub fn compact(obj: &mut DynamicObject, kind: &str) {
    trim(obj, kind);
    let mut rest = std::mem::take(&mut obj.metadata);
    obj.metadata = ObjectMeta {
        name: rest.name.take(),
        namespace: rest.namespace.take(),
        uid: rest.uid.take(),
        resource_version: rest.resource_version.take(),
        ..ObjectMeta::default()
    };
    let mut body = std::mem::take(&mut obj.data);
    if let (Some(map), Ok(meta)) = (body.as_object_mut(), serde_json::to_value(&rest)) {
        map.insert("metadata".into(), meta);
    }
    match serde_json::to_string(&body) {
        Ok(mut text) => {
            // The serializer grows its buffer by doubling: up to half of it unused.
            text.shrink_to_fit();
            obj.data = serde_json::Value::String(text);
        }
        Err(_) => {
            // Not reached (a Value always serializes): the object as it was.
            if let Some(map) = body.as_object_mut() {
                map.remove("metadata");
            }
            obj.data = body;
            let identity = std::mem::take(&mut obj.metadata);
            obj.metadata = ObjectMeta {
                name: identity.name,
                namespace: identity.namespace,
                uid: identity.uid,
                resource_version: identity.resource_version,
                ..rest
            };
        }
    }
}

/// The full JSON of a stored object, its compacted body expanded again.
pub fn expand(obj: &DynamicObject, rt: &ResourceType) -> serde_json::Value {
    let serde_json::Value::String(text) = &obj.data else {
        return api::value_of(obj, rt);
    };
    let mut map = match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(body)) => body,
        _ => serde_json::Map::new(),
    };
    let (api_version, kind) = match &obj.types {
        Some(t) => (t.api_version.clone(), t.kind.clone()),
        None => (rt.api_version(), rt.kind.to_string()),
    };
    map.insert("apiVersion".into(), api_version.into());
    map.insert("kind".into(), kind.into());
    let mut meta = match map.remove("metadata") {
        Some(serde_json::Value::Object(meta)) => meta,
        _ => serde_json::Map::new(),
    };
    if let Ok(serde_json::Value::Object(identity)) = serde_json::to_value(&obj.metadata) {
        meta.extend(identity);
    }
    map.insert("metadata".into(), meta.into());
    serde_json::Value::Object(map)
}

impl Stores {
    /// Stores fed by the caller (tests and the memory benchmark seed them with
    /// [`Writer::apply_watcher_event`]).
    pub fn from_parts(
        entries: Vec<(Listed, ResourceType, Store<DynamicObject>)>,
        warnings: Vec<String>,
    ) -> Stores {
        let synced = entries.iter().map(|_| Synced::new(true)).collect();
        Stores {
            entries,
            warnings,
            pod_events: PodEvents::default(),
            synced,
        }
    }

    /// The sync flags of the stores, in the order of their entries (the watchers set them;
    /// tests seeding stores by hand may too).
    pub fn synced(&self) -> &[Synced] {
        &self.synced
    }

    /// The stores whose watch has not completed its latest (re-)list, as `<cluster> <resource>`.
    pub fn unsynced(&self) -> Vec<String> {
        self.entries
            .iter()
            .zip(&self.synced)
            .filter(|(_, s)| !s.get())
            .map(|((listed, rt, _), _)| {
                format!("{} cluster {}", listed.cluster, api::resource_name(rt))
            })
            .collect()
    }

    /// Records a pod event on `node` at `at` (what the pod watch does; tests feed it too).
    pub fn record_pod_event(&self, node: &str, at: Timestamp) {
        if let Ok(mut map) = self.pod_events.lock() {
            let e = map.entry(node.to_string()).or_insert(at);
            *e = (*e).max(at);
        }
    }

    /// Waits until every store has listed its objects once.
    pub async fn wait_until_ready(&self) {
        for (_, _, store) in &self.entries {
            // A dropped writer means the watcher task ended (shutdown): nothing to wait for.
            let _ = store.wait_until_ready().await;
        }
    }

    /// The objects of all stores, as a snapshot evaluated now, in a stable order (namespace,
    /// name) so two passes over the same state plan the same, and the order of a full listing
    /// (`run --once`), so both plan the same.
    ///
    /// Objects go through the loader one at a time ([`Builder`]), each expanded to JSON just
    /// before it is read and dropped after: the stores are the only copy of the cluster, and
    /// expanding a large cluster's objects all at once would more than double the memory (a
    /// parsed `serde_json::Value` costs about ten times its compact text).
    pub fn snapshot(&self) -> Result<Snapshot> {
        // The flags are read before the objects: a store whose flag reads synced here holds at
        // least that complete list (a re-list starting meanwhile keeps serving it until done).
        let unsynced = self.unsynced();
        let machines_unsynced = self
            .entries
            .iter()
            .zip(&self.synced)
            .any(|((_, rt, _), s)| rt.kind == "Machine" && !s.get());
        let stored: Vec<_> = self
            .entries
            .iter()
            .map(|(listed, rt, store)| {
                let mut objects = store.state();
                objects.sort_by(|a, b| {
                    (&a.metadata.namespace, &a.metadata.name)
                        .cmp(&(&b.metadata.namespace, &b.metadata.name))
                });
                (listed.origin(), rt, objects)
            })
            .collect();
        let mut builder = Builder::new(true);
        // Owners matter only to workload templates (none is watched today): their pass
        // expands every object once more.
        let templates = stored
            .iter()
            .any(|(_, rt, objects)| !objects.is_empty() && expands_templates(rt.group, rt.kind));
        for (_, rt, objects) in stored.iter().filter(|_| templates) {
            for o in objects {
                if let Ok(raw) = RawObject::from_value(expand(o, rt), "") {
                    let owners = raw.meta.owner_references.unwrap_or_default();
                    builder.note_owners(
                        rt.kind,
                        raw.meta.namespace.as_deref().unwrap_or(""),
                        &owners,
                    );
                }
            }
        }
        let mut unreadable = Vec::new();
        for (origin, rt, objects) in &stored {
            for o in objects {
                match read_listed(expand(o, rt), origin) {
                    Ok(raw) => builder.add(raw)?,
                    Err(odd) => unreadable.push(*odd),
                }
            }
        }
        drop(stored);
        let mut snapshot = finish_listed(builder.finish(), unreadable, self.warnings.clone());
        snapshot.unsynced = unsynced;
        if machines_unsynced {
            // A Machine missing from a view being re-listed proves nothing (garbage collection
            // waits for a complete view).
            snapshot.machines_observed = false;
        }
        if let Ok(mut map) = self.pod_events.lock() {
            // Nodes that are gone need no more events.
            map.retain(|node, _| snapshot.nodes.iter().any(|n| &n.name == node));
            snapshot.pod_events = map.clone();
        }
        Ok(snapshot)
    }

    /// Whether the store of `plural` holds `namespace/name` (a read-your-writes check).
    pub fn contains(&self, plural: &str, namespace: &str, name: &str) -> bool {
        self.entries
            .iter()
            .filter(|(_, rt, _)| rt.plural == plural)
            .any(|(_, _, store)| {
                store
                    .find(|o| {
                        o.metadata.name.as_deref() == Some(name)
                            && o.metadata.namespace.as_deref().unwrap_or("") == namespace
                    })
                    .is_some()
            })
    }

    /// Objects across all stores.
    pub fn len(&self) -> usize {
        self.entries.iter().map(|(_, _, s)| s.len()).sum()
    }

    /// Whether every store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Resolves each type's served version (a one-item probe list), then starts one watcher per
/// type. Every event wakes `notify`.
pub async fn start(
    clients: &Clients,
    namespace: Option<&str>,
    cluster: Option<&str>,
    notify: Arc<Notify>,
    metrics: Arc<Metrics>,
) -> Result<(Stores, Vec<JoinHandle<()>>)> {
    let probes = futures::future::try_join_all(
        OBSERVED
            .iter()
            .map(|l| list_one_in(clients, l, namespace, cluster, true)),
    )
    .await?;
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let mut tasks = Vec::new();
    let pod_events = PodEvents::default();
    let mut synced = Vec::new();
    for (listed, probe) in OBSERVED.iter().zip(probes) {
        if let Some(w) = probe.warning {
            warn!("{w}");
            warnings.push(w);
            continue;
        }
        let rt = probe.resource;
        let writer: Writer<DynamicObject> = Writer::new(api_resource(&rt));
        let store = writer.as_reader();
        let api = dynamic_api(clients.of(listed.cluster), &rt, listed.namespace(namespace));
        let is_pod = rt.group.is_empty() && rt.kind == "Pod";
        let (before, events) = (store.clone(), pod_events.clone());
        let flag = Synced::new(false);
        synced.push(flag.clone());
        let mut config = watcher::Config::default().page_size(500);
        if let Some(selector) = listed.cluster_selector(cluster) {
            config = config.labels(&selector);
        }
        let stream = watcher(api, config)
            .default_backoff()
            // Pod events are read off the stream before the store takes the new object, so
            // the stored one is the object before the event.
            .inspect_ok(move |event| {
                if !is_pod {
                    return;
                }
                let old = match event {
                    watcher::Event::Apply(o) | watcher::Event::InitApply(o) => before
                        .get(&ObjectRef::from_obj_with(o, api_resource(&rt)))
                        .map(|o| expand(&o, &rt)),
                    _ => None,
                };
                if let Some(node) = pod_event(event, old.as_ref())
                    && let Ok(mut map) = events.lock()
                {
                    map.insert(node, Timestamp::now());
                }
            })
            .modify(move |o| compact(o, rt.kind))
            .reflect(writer);
        let (notify, metrics) = (notify.clone(), metrics.clone());
        let what = format!("{} cluster {}", listed.cluster, api::resource_name(&rt));
        tasks.push(tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    // After the reflector applied it: `InitDone` means the store holds the
                    // new list.
                    Ok(event) => {
                        flag.observe(&event);
                        notify.notify_one()
                    }
                    Err(e) => {
                        metrics.error("watch");
                        warn!(watch = %what, error = %e, "watch failed; retrying with backoff");
                    }
                }
            }
        }));
        entries.push((*listed, rt, store));
    }
    Ok((
        Stores {
            entries,
            warnings,
            pod_events,
            synced,
        },
        tasks,
    ))
}

/// A store and its writer for a type (tests, benchmarks).
pub fn store_for(rt: &ResourceType) -> (Store<DynamicObject>, Writer<DynamicObject>) {
    let writer: Writer<DynamicObject> = Writer::new(api_resource(rt));
    (writer.as_reader(), writer)
}

/// Re-exported so callers can seed stores.
pub use reflector::store::Writer as StoreWriter;

#[cfg(test)]
mod tests {
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;
    use crate::controller::{self, Config};
    use crate::kube::list::snapshot_from_values;
    use crate::model::snapshot::PodRecord;

    fn pod(name: &str, node: Option<&str>) -> serde_json::Value {
        let mut p = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name, "creationTimestamp": "2026-11-30T09:00:00Z",
                "annotations": {LAST_APPLIED: "{...}", "keep": "me"}, "managedFields": [{"manager": "kubectl"}]},
            "spec": {"containers": [{"name": "c", "image": "app", "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "3"}}}],
                "volumes": [{"name": "v", "emptyDir": {}}]},
            "status": {"phase": "Pending", "containerStatuses": [{"name": "c"}],
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
        });
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
            p["status"] = json!({"phase": "Running"});
        }
        p
    }

    /// `pod_event` on one watch event, `old` the stored pod before it.
    fn event_of(
        kind: &str,
        new: &serde_json::Value,
        old: Option<&serde_json::Value>,
    ) -> Option<String> {
        let obj: DynamicObject = serde_json::from_value(new.clone()).unwrap();
        let event = match kind {
            "apply" => Event::Apply(obj),
            "list" => Event::InitApply(obj),
            "delete" => Event::Delete(obj),
            _ => Event::InitDone,
        };
        pod_event(&event, old)
    }

    #[test]
    fn pod_events_are_binds_leaves_terminal_phases_and_deletes() {
        let pending = pod("p", None);
        let bound = pod("p", Some("node-1"));
        let node = Some("node-1".to_string());
        // Bind: pending -> bound is an event on the node it is bound to.
        assert_eq!(event_of("apply", &bound, Some(&pending)), node);
        // An update that changes nothing that counts (a label) is none.
        let mut relabelled = bound.clone();
        relabelled["metadata"]["labels"] = json!({"x": "y"});
        assert_eq!(event_of("apply", &relabelled, Some(&bound)), None);
        // A pod first seen already bound (created with nodeName) counts; first seen in a
        // (re-)list does not.
        assert_eq!(event_of("apply", &bound, None), node);
        assert_eq!(event_of("list", &bound, None), None);
        // Terminal phase: once, on the transition.
        for phase in ["Succeeded", "Failed"] {
            let mut done = bound.clone();
            done["status"]["phase"] = json!(phase);
            assert_eq!(event_of("apply", &done, Some(&bound)), node, "{phase}");
            assert_eq!(event_of("apply", &done, Some(&done)), None, "{phase}");
        }
        // Leaving: terminating (deletionTimestamp set), once.
        let mut leaving = bound.clone();
        leaving["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:00:00Z");
        assert_eq!(event_of("apply", &leaving, Some(&bound)), node);
        assert_eq!(event_of("apply", &leaving, Some(&leaving)), None);
        // Deleted from a node: an event there; a pending pod deleted is none.
        assert_eq!(event_of("delete", &bound, Some(&bound)), node);
        assert_eq!(event_of("delete", &pending, Some(&pending)), None);
        // DaemonSet pods never count, whatever happens to them.
        let mut daemon = bound.clone();
        daemon["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u"}]);
        let mut daemon_pending = pending.clone();
        daemon_pending["metadata"]["ownerReferences"] =
            daemon["metadata"]["ownerReferences"].clone();
        assert_eq!(event_of("apply", &daemon, Some(&daemon_pending)), None);
        assert_eq!(event_of("delete", &daemon, Some(&daemon)), None);
        // The other node of another pod: the event names the pod's own node.
        let elsewhere = pod("q", Some("node-2"));
        assert_eq!(
            event_of("apply", &elsewhere, Some(&pod("q", None))),
            Some("node-2".to_string())
        );
        // Watch bookkeeping is no pod event.
        assert_eq!(event_of("init-done", &bound, Some(&bound)), None);
    }

    #[test]
    fn compacted_objects_expand_to_the_object_minus_the_noise() {
        let mut obj: DynamicObject = serde_json::from_value(pod("p", None)).unwrap();
        obj.types = None; // as list items of built-in types arrive
        compact(&mut obj, "Pod");
        assert!(obj.data.is_string(), "one string holds the body");
        let v = expand(&obj, &crate::controller::write::POD);
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["kind"], "Pod");
        assert_eq!(v["metadata"]["annotations"], json!({"keep": "me"}));
        assert!(v["metadata"].get("managedFields").is_none());
        assert_eq!(
            v["spec"],
            json!({"containers": [{"name": "c", "image": "app", "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "3"}}}]})
        );
        assert_eq!(
            v["status"],
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]})
        );
    }

    #[test]
    fn trimming_keeps_every_field_the_pod_and_node_models_read() {
        let full = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2026-11-30T09:00:00Z", "labels": {"app": "a"},
                "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}]},
            "spec": {
                "priorityClassName": "high", "nodeSelector": {"disk": "ssd"}, "schedulingGates": [],
                "overhead": {"cpu": "50m"},
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a"}}}]}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}],
                "initContainers": [{"name": "side", "image": "s", "restartPolicy": "Always", "env": [{"name": "X", "value": "1"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                "containers": [{"name": "c", "image": "i", "command": ["run"], "env": [{"name": "Y", "value": "2"}],
                    "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
                    "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                "volumes": [{"name": "v", "emptyDir": {}}]},
            "status": {"phase": "Pending", "nominatedNodeName": "",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}], "containerStatuses": []}
        });
        let mut obj: DynamicObject = serde_json::from_value(full.clone()).unwrap();
        compact(&mut obj, "Pod");
        let trimmed = expand(&obj, &crate::controller::write::POD);
        let mut a = snapshot_from_values(vec![(full, "workload cluster")], Vec::new()).unwrap();
        let b = snapshot_from_values(vec![(trimmed, "workload cluster")], Vec::new()).unwrap();
        // Container args are read by `doctor` only (the controller's flags), which lists
        // instead of watching: the stores need not keep them.
        assert_eq!(a.pods[0].containers[0].args, ["run"]);
        a.pods[0].containers[0].args.clear();
        assert_eq!(a.pods, b.pods);

        let node = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n", "labels": {"zone": "a"}, "annotations": {"x": "y"}, "creationTimestamp": "2026-11-30T09:00:00Z"},
            "spec": {"providerID": "openstack:///1", "unschedulable": true, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}], "images": [{"names": ["i"], "sizeBytes": 1}], "volumesInUse": ["v"]}
        });
        let mut obj: DynamicObject = serde_json::from_value(node.clone()).unwrap();
        compact(&mut obj, "Node");
        let trimmed = expand(&obj, &crate::controller::write::NODE);
        assert!(trimmed["status"].get("images").is_none());
        let a = snapshot_from_values(vec![(node, "workload cluster")], Vec::new()).unwrap();
        let b = snapshot_from_values(vec![(trimmed, "workload cluster")], Vec::new()).unwrap();
        assert_eq!(a.nodes, b.nodes);
    }

    /// Stores holding `objects`, fed as the watchers feed them (compacted), and their writers
    /// (which must outlive the stores' use).
    fn stores_of(objects: &[serde_json::Value]) -> (Stores, Vec<Writer<DynamicObject>>) {
        let mut entries = Vec::new();
        let mut writers = Vec::new();
        for l in OBSERVED {
            let (store, mut writer) = store_for(&l.resource);
            writer.apply_watcher_event(&Event::Init);
            for v in objects.iter().filter(|v| {
                v["kind"] == l.resource.kind
                    && v["apiVersion"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with(l.resource.group)
            }) {
                let mut o: DynamicObject = serde_json::from_value(v.clone()).unwrap();
                compact(&mut o, l.resource.kind);
                writer.apply_watcher_event(&Event::InitApply(o));
            }
            writer.apply_watcher_event(&Event::InitDone);
            entries.push((*l, l.resource, store));
            writers.push(writer);
        }
        (Stores::from_parts(entries, Vec::new()), writers)
    }

    /// Objects as an API server returns them: managedFields, last-applied, a Node's images and
    /// node info, every status a kubelet writes, a pod with a sidecar, a claim and all the
    /// defaults the API server fills in.
    fn realistic_cluster() -> Vec<serde_json::Value> {
        let managed = json!([{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T09:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}]);
        let conditions = |types: &[&str], time: &str| -> serde_json::Value {
            types
                .iter()
                .map(|t| {
                    json!({"type": t, "status": "True", "reason": t, "message": "m",
                "lastHeartbeatTime": time, "lastTransitionTime": time})
                })
                .collect()
        };
        let node = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "uid": "n1", "resourceVersion": "41", "creationTimestamp": "2026-11-30T08:00:00Z",
                "labels": {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a", "karpenter.sh/nodepool": "default",
                    "node.kubernetes.io/instance-type": "f00", "karpenter.sh/registered": "true"},
                "annotations": {LAST_APPLIED: "{\"big\": true}", "cluster.x-k8s.io/machine": "m-1", "node.alpha.kubernetes.io/ttl": "0"},
                "finalizers": ["karpenter.sh/termination"], "managedFields": managed},
            "spec": {"providerID": "openstack:///1", "podCIDR": "10.0.0.0/24", "taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"},
                "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110", "ephemeral-storage": "95Gi"},
                "conditions": conditions(&["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"], "2026-11-30T09:59:00Z"),
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "nodeInfo": {"kubeletVersion": "v1.36.1", "architecture": "amd64", "machineID": "x"},
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": [{"names": ["registry.example.com/app@sha256:0123", "registry.example.com/app:v1"], "sizeBytes": 100000000}]}});
        let claim = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "default-1", "uid": "c1", "resourceVersion": "42", "creationTimestamp": "2026-11-30T08:00:00Z",
                "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "f00"},
                "annotations": {"cluster.x-k8s.io/machine": "capi/m-1", LAST_APPLIED: "{}"},
                "finalizers": ["karpenter.sh/termination"], "managedFields": managed},
            "spec": {"nodeClassRef": {"group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["f00"]}],
                "resources": {"requests": {"cpu": "1"}}, "expireAfter": "720h"},
            "status": {"providerID": "openstack:///1", "nodeName": "node-1", "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110"}, "lastPodEventTime": "2026-11-30T09:30:00Z",
                "conditions": conditions(&["Launched", "Registered", "Initialized", "Ready"], "2026-11-30T08:05:00Z")}});
        let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": "m-1", "namespace": "capi", "uid": "m1", "resourceVersion": "43", "creationTimestamp": "2026-11-30T08:00:00Z",
                "labels": {"cluster.x-k8s.io/deployment-name": "capi-karpenter-f00", "node.cluster.x-k8s.io/karpenter-member": ""},
                "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet", "name": "ms", "uid": "ms", "controller": true}],
                "managedFields": managed},
            "spec": {"clusterName": "capi", "providerID": "openstack:///1",
                "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "cfg"}},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": "osm"}},
            "status": {"phase": "Running", "nodeRef": {"name": "node-1"}, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "conditions": conditions(&["Available", "Ready", "NodeHealthy"], "2026-11-30T08:05:00Z")}});
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "capi-karpenter-f00", "namespace": "capi", "uid": "md", "resourceVersion": "44", "generation": 3,
                "labels": {"node.cluster.x-k8s.io/karpenter-member": "", "cluster.x-k8s.io/cluster-name": "capi"},
                "annotations": {LAST_APPLIED: "{\"spec\": {}}",
                    "capacity.cluster-autoscaler.kubernetes.io/cpu": "4", "capacity.cluster-autoscaler.kubernetes.io/memory": "16Gi",
                    "capacity.cluster-autoscaler.kubernetes.io/maxPods": "110",
                    "capacity.cluster-autoscaler.kubernetes.io/labels": "topology.kubernetes.io/zone=a,node.kubernetes.io/instance-type=f00",
                    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "10"},
                "managedFields": managed},
            "spec": {"clusterName": "capi", "replicas": 1, "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "capi-karpenter-f00"}},
                "template": {"spec": {"clusterName": "capi", "version": "v1.36.1",
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "t"}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "f00"}}}},
            "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 3,
                "conditions": conditions(&["Available"], "2026-11-30T08:05:00Z")}});
        let pod = |name: &str, bound: bool| {
            let mut p = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "team", "uid": format!("uid-{name}"), "resourceVersion": "45", "generateName": "web-",
                    "creationTimestamp": "2026-11-30T09:00:00Z", "labels": {"app": "web", "pod-template-hash": "h"},
                    "annotations": {LAST_APPLIED: "x".repeat(200), "karpenter.sh/do-not-disrupt": "true", "prometheus.io/scrape": "true"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-h", "uid": "rs", "controller": true}],
                    "managedFields": managed},
                "spec": {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority",
                    "schedulerName": "default-scheduler", "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "serviceAccountName": "web",
                    "serviceAccount": "web", "enableServiceLinks": true, "terminationGracePeriodSeconds": 30,
                    "securityContext": {"runAsNonRoot": true}, "imagePullSecrets": [{"name": "pull"}], "nodeSelector": {"topology.kubernetes.io/zone": "a"},
                    "overhead": {"cpu": "10m"}, "schedulingGates": [],
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
                        "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"app": "web"}}}],
                    "initContainers": [{"name": "proxy", "image": "proxy:1", "restartPolicy": "Always", "imagePullPolicy": "IfNotPresent",
                        "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}, "env": [{"name": "A", "value": "1"}]}],
                    "containers": [{"name": "web", "image": "web:1", "imagePullPolicy": "Always", "command": ["/web"], "args": ["--port=8080"],
                        "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": 8080}}, "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": format!("data-{name}")}},
                        {"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"]}}}},
                        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]},
                "status": {"phase": "Pending", "qosClass": "Burstable",
                    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes",
                        "lastProbeTime": null, "lastTransitionTime": "2026-11-30T09:00:01Z"}]}});
            if bound {
                p["spec"]["nodeName"] = json!("node-1");
                p["status"] = json!({"phase": "Running", "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}], "hostIP": "10.0.0.1",
                    "startTime": "2026-11-30T09:00:02Z", "qosClass": "Burstable",
                    "conditions": conditions(&["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"], "2026-11-30T09:00:03Z"),
                    "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "web:1", "imageID": "sha", "state": {"running": {}}}]});
            }
            p
        };
        vec![
            node,
            claim,
            machine,
            md,
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a", "managedFields": managed},
                "spec": {"csi": {"driver": "d", "volumeHandle": "h"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-web-0", "namespace": "team"},
                "spec": {"volumeName": "pv-a"}}),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"}, "provisioner": "d",
                "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]}),
            pod("web-0", false),
            pod("web-1", true),
        ]
    }

    /// Every record the core reads is the same from the stores' trimmed, compacted objects as
    /// from the objects as listed, and what writes send back (resourceVersion, uid, finalizers,
    /// labels and annotations but last-applied, which nothing reads) survives. Container args and statuses are `doctor`'s, which
    /// lists instead of watching.
    #[test]
    fn stores_keep_everything_the_snapshot_and_the_writes_read() {
        let objects = realistic_cluster();
        let full = objects
            .iter()
            .map(|v| (v.clone(), "workload cluster"))
            .collect();
        let listed = snapshot_from_values(full, Vec::new()).unwrap();
        let (stores, _writers) = stores_of(&objects);
        let stored = stores.snapshot().unwrap();

        let doctors = |s: &Snapshot| -> Vec<PodRecord> {
            s.pods
                .iter()
                .cloned()
                .map(|mut p| {
                    p.annotations.remove(LAST_APPLIED);
                    for c in &mut p.containers {
                        c.args.clear();
                        (c.ready, c.restart_count) = (false, 0);
                        (c.waiting, c.last_terminated) = (None, None);
                    }
                    p
                })
                .collect()
        };
        assert_eq!(stored.pods.len(), 2);
        assert_eq!(doctors(&stored), doctors(&listed));
        assert!(
            listed
                .pods
                .iter()
                .all(|p| !p.demand.volume_requirements.is_empty())
        );
        assert_eq!(stored.pods[0].uid.as_deref(), Some("uid-web-0"));
        let mut nodes = listed.nodes.clone();
        nodes[0].annotations.remove(LAST_APPLIED);
        assert_eq!(stored.nodes, nodes);
        assert_eq!(stored.nodes[0].finalizers, ["karpenter.sh/termination"]);
        let mut claims = listed.nodeclaims.clone();
        claims[0].annotations.remove(LAST_APPLIED);
        assert_eq!(stored.nodeclaims, claims);
        assert_eq!(stored.machines, listed.machines);
        assert_eq!(stored.volume_claims, listed.volume_claims);
        assert_eq!(stored.volumes, listed.volumes);
        assert_eq!(stored.storage_classes, listed.storage_classes);
        assert_eq!(stored.nodepools, listed.nodepools);
        assert_eq!(stored.warnings, listed.warnings);
        assert_eq!(stored.machines_observed, listed.machines_observed);
        // MachineDeployments are kept whole (the controller reads them as objects): only
        // managedFields and last-applied go, and the resourceVersion a scale sends stays.
        let (a, b) = (
            &listed.machine_deployments[0],
            &stored.machine_deployments[0],
        );
        assert_eq!((a.member, &a.flavor), (b.member, &b.flavor));
        assert_eq!(b.object.meta.resource_version.as_deref(), Some("44"));
        assert_eq!(b.object.meta.generation, Some(3));
        let mut whole = a.object.value.clone();
        whole["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        whole["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(LAST_APPLIED);
        assert_eq!(b.object.value, whole);

        let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
        let a = controller::plan(&listed, now, &Config::default());
        let b = controller::plan(&stored, now, &Config::default());
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap()
        );
        // What was dropped is gone from the stores.
        let text = format!(
            "{:?}",
            stores
                .entries
                .iter()
                .flat_map(|(_, _, s)| s.state())
                .collect::<Vec<_>>()
        );
        for gone in [
            "managedFields",
            "last-applied",
            "sizeBytes",
            "kubeletVersion",
            "qosClass",
            "dnsPolicy",
            "readinessProbe",
            "projected",
            "MemoryPressure",
            "ContainersReady",
        ] {
            assert!(!text.contains(gone), "{gone} is still stored");
        }
    }

    /// A pending pod whose claim is bound to a volume of zone `b`: the stores keep the claim
    /// volume (the others are dropped) and the snapshot resolves it against the claim and the
    /// volume, as a full listing does; before, continuous mode planned such pods in any zone.
    #[test]
    fn stores_resolve_pod_volumes_like_a_full_listing() {
        let mut claimed = pod("db-0", None);
        claimed["spec"]["volumes"] = json!([
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "cfg", "configMap": {"name": "cfg"}}]);
        let objects = vec![
            json!({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": "pv-1", "managedFields": [{"manager": "x"}]},
                "spec": {"capacity": {"storage": "1Gi"}, "csi": {"driver": "d", "volumeHandle": "h"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data-db-0", "namespace": "default"},
                "spec": {"volumeName": "pv-1", "storageClassName": "zonal"}}),
            claimed,
            pod("web", None),
        ];
        let full = objects
            .iter()
            .map(|v| (v.clone(), "workload cluster"))
            .collect();
        let listed = snapshot_from_values(full, Vec::new()).unwrap();
        let (stores, _writers) = stores_of(&objects);
        let stored = stores.snapshot().unwrap();
        let db = |s: &Snapshot| {
            s.pods
                .iter()
                .find(|p| p.demand.name == "db-0")
                .unwrap()
                .demand
                .volume_requirements
                .clone()
        };
        assert_eq!(db(&listed).len(), 1, "the claim's volume restricts the pod");
        assert_eq!(db(&stored), db(&listed));
        assert_eq!(stored.warnings, listed.warnings);
        for (a, b) in listed.pods.iter().zip(&stored.pods) {
            assert_eq!(a.demand, b.demand);
        }
    }

    #[test]
    fn stores_plan_like_a_full_listing() {
        let seed = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/fixtures/scenarios/seed-3cpu.yaml"
        ));
        let Ok(seed) = seed else { return };
        let mut objects: Vec<serde_json::Value> = seed
            .split("\n---\n")
            .map(|d| serde_saphyr::from_str::<serde_json::Value>(d).unwrap())
            .filter(|v| v["kind"] != "Deployment")
            .collect();
        // Some pods bound, some pending, in no particular order.
        for i in (0..257).rev() {
            objects.push(pod(
                &format!("p-{i:04}"),
                (i % 3 != 0).then_some("elsewhere"),
            ));
        }
        // A live listing comes sorted by namespace and name, as etcd keys are.
        let key = |v: &serde_json::Value| {
            (
                v["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                v["metadata"]["name"].as_str().unwrap_or("").to_string(),
            )
        };
        objects.sort_by_key(key);
        let full: Vec<(serde_json::Value, &'static str)> = objects
            .iter()
            .map(|v| (v.clone(), "workload cluster"))
            .collect();
        let listed = snapshot_from_values(full, Vec::new()).unwrap();

        let (stores, _writers) = stores_of(&objects);
        let stored = stores.snapshot().unwrap();
        assert_eq!(stored.pods.len(), listed.pods.len());
        let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
        let a = controller::plan(&listed, now, &Config::default());
        let b = controller::plan(&stored, now, &Config::default());
        assert!(!a.actions.is_empty());
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap()
        );
    }
}
