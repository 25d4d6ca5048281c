//! Continuous observation: one kube-runtime watcher per observed type, each feeding a reflector
//! store, so a pass reads memory instead of listing. Watchers resume on their own (with the
//! default backoff) after API errors and re-list when their resourceVersion expires.
//!
//! Objects are trimmed before they are stored: `managedFields` and the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation are often most of an object's
//! size and the core reads neither.
//!
//! # Errors
//! [`start`] fails when a type cannot be listed at all (CRD missing, forbidden, cluster
//! unreachable) with the same messages as `run --once`; the caller retries with backoff.

use std::sync::Arc;

use futures::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use kube::runtime::{WatchStreamExt, reflector::store::Writer};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::warn;

use super::api::{self, api_resource, dynamic_api};
use super::list::{Clients, Listed, OBSERVED, list_one, snapshot_from_values};
use super::metrics::Metrics;
use crate::controller::write::ResourceType;
use crate::error::Result;
use crate::model::snapshot::Snapshot;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The reflector stores of every observed type.
pub struct Stores {
    entries: Vec<(Listed, ResourceType, Store<DynamicObject>)>,
    warnings: Vec<String>,
}

/// Drops what the core never reads, to keep the stores small.
pub fn trim(obj: &mut DynamicObject) {
    obj.metadata.managed_fields = None;
    if let Some(a) = obj.metadata.annotations.as_mut() {
        a.remove(LAST_APPLIED);
    }
}

impl Stores {
    /// Stores fed by the caller (tests and the memory benchmark seed them with
    /// [`Writer::apply_watcher_event`]).
    pub fn from_parts(
        entries: Vec<(Listed, ResourceType, Store<DynamicObject>)>,
        warnings: Vec<String>,
    ) -> Stores {
        Stores { entries, warnings }
    }

    /// Waits until every store has listed its objects once.
    pub async fn wait_until_ready(&self) {
        for (_, _, store) in &self.entries {
            // A dropped writer means the watcher task ended (shutdown): nothing to wait for.
            let _ = store.wait_until_ready().await;
        }
    }

    /// The objects of all stores, as a snapshot evaluated now.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let mut values = Vec::new();
        for (listed, rt, store) in &self.entries {
            for obj in store.state() {
                values.push((
                    api::to_value(DynamicObject::clone(&obj), rt),
                    listed.origin(),
                ));
            }
        }
        snapshot_from_values(values, self.warnings.clone())
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
    notify: Arc<Notify>,
    metrics: Arc<Metrics>,
) -> Result<(Stores, Vec<JoinHandle<()>>)> {
    let probes = futures::future::try_join_all(
        OBSERVED
            .iter()
            .map(|l| list_one(clients, l, namespace, true)),
    )
    .await?;
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let mut tasks = Vec::new();
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
        let stream = watcher(api, watcher::Config::default().page_size(500))
            .default_backoff()
            .modify(trim)
            .reflect(writer);
        let (notify, metrics) = (notify.clone(), metrics.clone());
        let what = format!("{} cluster {}", listed.cluster, api::resource_name(&rt));
        tasks.push(tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(_) => notify.notify_one(),
                    Err(e) => {
                        metrics.error("watch");
                        warn!(watch = %what, error = %e, "watch failed; retrying with backoff");
                    }
                }
            }
        }));
        entries.push((*listed, rt, store));
    }
    Ok((Stores { entries, warnings }, tasks))
}

/// A store and its writer for a type (tests, benchmarks).
pub fn store_for(rt: &ResourceType) -> (Store<DynamicObject>, Writer<DynamicObject>) {
    let writer: Writer<DynamicObject> = Writer::new(api_resource(rt));
    (writer.as_reader(), writer)
}

/// Re-exported so callers can seed stores.
pub use reflector::store::Writer as StoreWriter;
