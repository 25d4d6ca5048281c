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
//! unreachable) with the same messages as `run --once`; the caller retries with backoff. An
//! optional or advisory type that cannot be listed is a warning instead and gets no watcher.

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
use crate::error::Result;
use crate::model::load::{Builder, expands_templates};
use crate::model::object::RawObject;
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::LAST_APPLIED_ANNOTATION;
use crate::vocab::kinds::ResourceType;

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
/// security, the pod's restart policy (a sidecar's is per container and kept), scheduler and
/// preemption policy (the priority value and class name are read: the value weighs in the pod's
/// eviction cost, the class marks critical pods; the grace period bounds drains).
const POD_SPEC_NOISE: &[&str] = &[
    "dnsPolicy",
    "dnsConfig",
    "restartPolicy",
    "activeDeadlineSeconds",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "securityContext",
    "imagePullSecrets",
    "schedulerName",
    "preemptionPolicy",
    "readinessGates",
    "hostAliases",
    "hostname",
    "subdomain",
];
/// The pod status fields the core reads (`load::records::pod_record`, [`pod_facts`]); of its
/// conditions, only `PodScheduled` and `Ready` (a budget may let not-ready pods go).
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
        a.remove(LAST_APPLIED_ANNOTATION);
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
                keep_conditions(status, &["PodScheduled", "Ready"]);
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
                keep_conditions(status, &["Ready"]);
            }
        }
        _ => {}
    }
}

/// Keeps only the conditions of these types in `status.conditions` (the ones the loader reads).
fn keep_conditions(status: &mut serde_json::Map<String, serde_json::Value>, kinds: &[&str]) {
    if let Some(serde_json::Value::Array(conditions)) = status.get_mut("conditions") {
        conditions.retain(|c| {
            c.get("type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| kinds.contains(&t))
        });
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

    /// Like [`Stores::unsynced`], only among the stores of these plural resource names.
    pub fn unsynced_among(&self, plurals: &[&str]) -> Vec<String> {
        self.entries
            .iter()
            .zip(&self.synced)
            .filter(|((_, rt, _), s)| plurals.contains(&rt.plural) && !s.get())
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

    /// Whether the stores show what a write left: a created object is present; a changed one
    /// shows at least the resourceVersion the write was answered with (or is gone since).
    /// resourceVersions are compared as numbers when both are (etcd's are), else for equality.
    pub fn shows(&self, w: &super::apply::Written) -> bool {
        let stored = self
            .entries
            .iter()
            .filter(|(_, rt, _)| rt.plural == w.plural)
            .find_map(|(_, _, store)| {
                store.find(|o| {
                    o.metadata.name.as_deref() == Some(w.name.as_str())
                        && o.metadata.namespace.as_deref().unwrap_or("") == w.namespace
                })
            });
        let Some(obj) = stored else {
            // Not watched at all (events): nothing to wait for; watched and absent: a creation
            // not seen yet, or an object deleted since.
            return !w.created || !self.entries.iter().any(|(_, rt, _)| rt.plural == w.plural);
        };
        match (&obj.metadata.resource_version, &w.resource_version) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(have), Some(want)) => match (have.parse::<u64>(), want.parse::<u64>()) {
                (Ok(h), Ok(w)) => h >= w,
                _ => have == want,
            },
        }
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
                        // `Init` opens every (re-)list attempt, a failing one too: no proof.
                        if !matches!(event, watcher::Event::Init) {
                            metrics.watch_ok(&what);
                        }
                        notify.notify_one()
                    }
                    Err(e) => {
                        metrics.error("watch");
                        metrics.watch_failed(&what, &e.to_string());
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
mod tests;
