//! How the executor sends each kind of [`Write`] (see the module documentation of
//! [`super`]): creates, patches, read-modify-writes, scales, deletes, evictions and Events.

use crate::vocab::kinds;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, ObjectMeta, Preconditions, Time,
};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Map, Value, json};
use tracing::{debug, warn};

use super::{CONFLICT_ATTEMPTS, Executor, Written};
use crate::controller::events;
use crate::controller::write::Write;
use crate::error::{ClusterRole, Error, Result};
use crate::kube::api::{self, dynamic_api, object_key, resource_name};
use crate::kube::edit::{NodeEdit, finalizers_patch, status_patch};
use crate::kube::errors::{object_error, status_code};
use crate::vocab::kinds::ResourceType;
use crate::vocab::names::FIELD_MANAGER;

impl Executor {
    /// Sends one write (see the module documentation for how each kind goes).
    pub(super) async fn send(&self, w: &Write, now: Timestamp) -> Result<Option<String>> {
        match w {
            Write::Create {
                cluster,
                resource,
                object,
            } => self.create(*cluster, resource, object).await.map(Some),
            Write::MergePatch {
                cluster,
                resource,
                namespace,
                name,
                patch,
            } => {
                let api = dynamic_api(self.clients.of(*cluster), resource, namespace);
                // A merge patch carries no resourceVersion, so a 409 is transient: retried.
                let mut sent = api.patch(name, &patch_params(), &Patch::Merge(patch)).await;
                for _ in 1..CONFLICT_ATTEMPTS {
                    match &sent {
                        Err(e) if status_code(e) == Some(409) => {
                            sent = api.patch(name, &patch_params(), &Patch::Merge(patch)).await;
                        }
                        _ => break,
                    }
                }
                let obj = sent.map_err(|e| {
                    object_error(
                        *cluster,
                        "patch",
                        &resource_name(resource),
                        namespace,
                        name,
                        e,
                    )
                })?;
                self.note_written(Written {
                    plural: resource.plural,
                    namespace: namespace.clone(),
                    name: name.clone(),
                    resource_version: obj.metadata.resource_version,
                    created: false,
                });
                Ok(None)
            }
            Write::Scale {
                cluster,
                resource,
                namespace,
                name,
                replicas,
                resource_version,
            } => {
                let api = dynamic_api(self.clients.of(*cluster), resource, namespace);
                // The resourceVersion read is a precondition: if the MachineDeployment changed
                // since, the 409 fails this action and the next pass re-plans on what is there.
                let mut patch = json!({"spec": {"replicas": replicas}});
                if let Some(rv) = resource_version {
                    patch["metadata"] = json!({"resourceVersion": rv});
                }
                let scale = api
                    .patch_scale(name, &patch_params(), &Patch::Merge(patch))
                    .await
                    .map_err(|e| {
                        object_error(
                            *cluster,
                            "patch",
                            &format!("{}/scale", resource_name(resource)),
                            namespace,
                            name,
                            e,
                        )
                    })?;
                self.note_written(Written {
                    plural: resource.plural,
                    namespace: namespace.clone(),
                    name: name.clone(),
                    resource_version: scale.metadata.resource_version,
                    created: false,
                });
                Ok(None)
            }
            Write::EditNode {
                name,
                add_labels,
                add_taints,
                remove_taint_keys,
                add_finalizers,
                remove_finalizers,
                add_owner_references,
            } => {
                let edit = NodeEdit {
                    add_labels,
                    add_taints,
                    remove_taint_keys,
                    add_finalizers,
                    remove_finalizers,
                    add_owner_references,
                };
                self.read_modify_patch(ClusterRole::Workload, &kinds::NODE, name, false, |obj| {
                    edit.patch(obj)
                })
                .await?;
                Ok(None)
            }
            Write::EditFinalizers {
                resource,
                name,
                add,
                remove,
            } => {
                self.read_modify_patch(ClusterRole::Workload, resource, name, false, |obj| {
                    finalizers_patch(obj, add, remove)
                })
                .await?;
                Ok(None)
            }
            Write::SetNodeClaimStatus {
                name,
                fields,
                conditions,
            } => {
                self.read_modify_patch(
                    ClusterRole::Workload,
                    &kinds::NODE_CLAIM,
                    name,
                    true,
                    |obj| status_patch(obj, fields, conditions, now),
                )
                .await?;
                Ok(None)
            }
            Write::SetConditions {
                resource,
                name,
                conditions,
            } => {
                let none = Map::new();
                self.read_modify_patch(ClusterRole::Workload, resource, name, true, |obj| {
                    status_patch(obj, &none, conditions, now)
                })
                .await?;
                Ok(None)
            }
            // Only meaningful right after its create (see `execute_action`).
            Write::StatusOfCreated { .. } | Write::EventForCreated { .. } => Ok(None),
            Write::ClearConditions {
                resource,
                name,
                types,
            } => {
                self.read_modify_patch(ClusterRole::Workload, resource, name, true, |obj| {
                    clear_conditions_patch(obj, types)
                })
                .await?;
                Ok(None)
            }
            Write::SetStatus {
                resource,
                name,
                fields,
                conditions,
            } => {
                self.read_modify_patch(ClusterRole::Workload, resource, name, true, |obj| {
                    status_patch(obj, fields, conditions, now)
                })
                .await?;
                Ok(None)
            }
            Write::Delete {
                cluster,
                resource,
                namespace,
                name,
                uid,
                grace_period_seconds,
            } => {
                let api = dynamic_api(self.clients.of(*cluster), resource, namespace);
                let params = delete_params(uid.as_deref(), *grace_period_seconds);
                match api.delete(name, &params).await {
                    Ok(_) => Ok(None),
                    Err(e) if status_code(&e) == Some(404) => Ok(None),
                    // The UID precondition failed: the object planned on is gone already.
                    Err(e) if uid.is_some() && status_code(&e) == Some(409) => Ok(None),
                    Err(e) => Err(object_error(
                        *cluster,
                        "delete",
                        &resource_name(resource),
                        namespace,
                        name,
                        e,
                    )),
                }
            }
            Write::Evict {
                namespace,
                name,
                uid,
                node,
                reason,
            } => {
                let pods: Api<Pod> = Api::namespaced(self.clients.workload.clone(), namespace);
                // A policy/v1 Eviction sent as is: kube's `Api::evict` names the field
                // `delete_options`, which the API server ignores, so its UID precondition never
                // reached the server. Karpenter's terminator evicts with the pod's UID as the
                // precondition (core `pkg/controllers/node/termination/terminator/eviction.go`).
                let eviction = eviction(namespace, name, uid.as_deref());
                let sent: kube::Result<Value> = pods
                    .create_subresource("eviction", name, &PostParams::default(), &eviction)
                    .await;
                let pod = format!("{namespace}/{name}");
                // What came of it is recorded as core's `Queue.Reconcile` records it: `Evicted`
                // on the pod once it went, `FailedDraining` on its Node when a budget refused.
                let went = sent.is_ok();
                let recorded = match sent {
                    Ok(_) => Some(events::evicted(&pod, reason)),
                    Err(e) if status_code(&e) == Some(404) => None,
                    // The UID precondition failed: the pod planned on is gone already.
                    Err(e) if uid.is_some() && status_code(&e) == Some(409) => None,
                    // A PodDisruptionBudget refuses for now: the node stays tainted and the next
                    // pass evicts again, as Karpenter's terminator retries. The API server's 500
                    // for a pod under several PDBs is a PDB block too, not an error (mirrors
                    // core terminator/eviction.go `Queue.Reconcile`, multiplePodDisruptionBudgetsError).
                    Err(e) if status_code(&e) == Some(429) || several_pdbs(&e) => {
                        let several = several_pdbs(&e);
                        let why = if several {
                            "the pod has more than one PodDisruptionBudget"
                        } else {
                            "429"
                        };
                        tracing::info!(pod = %pod, "eviction refused for now ({why}): retried next pass");
                        Some(events::failed_draining(node, &pod, several))
                    }
                    Err(e) => {
                        return Err(object_error(
                            ClusterRole::Workload,
                            "create",
                            "pods/eviction",
                            namespace,
                            name,
                            e,
                        ));
                    }
                };
                if let Some(Write::Event {
                    resource,
                    namespace,
                    name,
                    event_type,
                    reason,
                    message,
                }) = recorded
                {
                    let event = (event_type.as_str(), reason.as_str(), message.as_str());
                    self.event(&resource, &namespace, &name, event, false, now)
                        .await;
                }
                // The API created an Eviction: the pod is on its way out (one refused by a
                // budget, or whose pod was gone, did nothing, and names nothing).
                Ok(went.then(|| format!("Eviction/{namespace}/{name}")))
            }
            Write::Event {
                resource,
                namespace,
                name,
                event_type,
                reason,
                message,
            } => {
                let event = (event_type.as_str(), reason.as_str(), message.as_str());
                self.event(resource, namespace, name, event, false, now)
                    .await;
                Ok(None)
            }
        }
    }

    async fn create(
        &self,
        cluster: ClusterRole,
        resource: &ResourceType,
        object: &Value,
    ) -> Result<String> {
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let fixed_name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let api = dynamic_api(self.clients.of(cluster), resource, &namespace);
        let display = fixed_name.clone().unwrap_or_else(|| {
            object
                .pointer("/metadata/generateName")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        });
        let fail = |verb: &str, e| {
            object_error(
                cluster,
                verb,
                &resource_name(resource),
                &namespace,
                &display,
                e,
            )
        };
        let created = match &fixed_name {
            Some(name) => api
                .patch(
                    name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(object),
                )
                .await
                .map_err(|e| fail("patch", e))?,
            None => {
                let obj: DynamicObject =
                    serde_json::from_value(object.clone()).map_err(|e| Error::Cluster {
                        cluster,
                        action: format!("create {} {display}", resource_name(resource)),
                        message: format!("the planned object is not a Kubernetes object: {e}"),
                        hint: None,
                    })?;
                let pp = PostParams {
                    field_manager: Some(FIELD_MANAGER.to_string()),
                    ..PostParams::default()
                };
                api.create(&pp, &obj).await.map_err(|e| fail("create", e))?
            }
        };
        let name = created
            .metadata
            .name
            .clone()
            .unwrap_or_else(|| display.clone());
        self.note_written(Written {
            plural: resource.plural,
            namespace: namespace.clone(),
            name: name.clone(),
            resource_version: created.metadata.resource_version,
            created: true,
        });
        Ok(format!(
            "{}/{}",
            resource.kind,
            object_key(&namespace, &name)
        ))
    }

    /// Reads an object, lets `change` compute a merge patch from it (None: nothing to do), and
    /// sends it with the read `resourceVersion`; retries on 409.
    pub(super) async fn read_modify_patch<F>(
        &self,
        cluster: ClusterRole,
        resource: &ResourceType,
        name: &str,
        status: bool,
        change: F,
    ) -> Result<()>
    where
        F: Fn(&Value) -> Option<Value>,
    {
        let api = dynamic_api(self.clients.of(cluster), resource, "");
        let rname = resource_name(resource);
        let sub = if status {
            format!("{rname}/status")
        } else {
            rname.clone()
        };
        let mut last = None;
        for attempt in 1..=CONFLICT_ATTEMPTS {
            let current = api
                .get(name)
                .await
                .map_err(|e| object_error(cluster, "get", &rname, "", name, e))?;
            let rv = current
                .metadata
                .resource_version
                .clone()
                .unwrap_or_default();
            let value = api::to_value(current, resource);
            let Some(mut patch) = change(&value) else {
                return Ok(());
            };
            if let Some(obj) = patch.as_object_mut() {
                let meta = obj.entry("metadata").or_insert_with(|| json!({}));
                meta["resourceVersion"] = json!(rv);
            }
            let sent = if status {
                api.patch_status(name, &patch_params(), &Patch::Merge(&patch))
                    .await
            } else {
                api.patch(name, &patch_params(), &Patch::Merge(&patch))
                    .await
            };
            match sent {
                Ok(obj) => {
                    self.note_written(Written {
                        plural: resource.plural,
                        namespace: String::new(),
                        name: name.to_string(),
                        resource_version: obj.metadata.resource_version,
                        created: false,
                    });
                    return Ok(());
                }
                Err(e) if status_code(&e) == Some(409) => {
                    debug!(object = name, attempt, "conflict; re-reading");
                    last = Some(e);
                }
                Err(e) => return Err(object_error(cluster, "patch", &sub, "", name, e)),
            }
        }
        Err(match last {
            Some(e) => object_error(cluster, "patch", &sub, "", name, e),
            None => Error::Cluster {
                cluster,
                action: format!("patch {sub} {name}"),
                message: "no attempt made".to_string(),
                hint: None,
            },
        })
    }

    /// Records an Event (type, reason, message) unless the same one was recorded within the
    /// de-duplication window, or it is rate-limited and the bucket is empty; a failure is
    /// logged, never an error of the action.
    pub(super) async fn event(
        &self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        (event_type, reason, message): (&str, &str, &str),
        rate_limited: bool,
        now: Timestamp,
    ) {
        let key = crate::kube::recorder::key(resource.kind, namespace, name, reason, message);
        if !self.events.first(&key) {
            debug!(
                reason,
                object = name,
                "Event recorded recently; not sent again"
            );
            return;
        }
        if rate_limited && !self.events.token() {
            debug!(reason, object = name, "Event rate-limited; not sent");
            return;
        }
        if let Err(e) = self
            .record_event(resource, namespace, name, event_type, reason, message, now)
            .await
        {
            warn!(error = %e, reason, object = name, "could not record the Event");
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn record_event(
        &self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        event_type: &str,
        reason: &str,
        message: &str,
        now: Timestamp,
    ) -> Result<()> {
        // Events about cluster-scoped objects go to `default`, as kubectl and controllers do.
        let event_ns = if namespace.is_empty() {
            "default"
        } else {
            namespace
        };
        let events: Api<Event> = Api::namespaced(self.clients.workload.clone(), event_ns);
        let event = Event {
            metadata: ObjectMeta {
                generate_name: Some(format!("{name}.")),
                namespace: Some(event_ns.to_string()),
                ..ObjectMeta::default()
            },
            involved_object: ObjectReference {
                api_version: Some(resource.api_version()),
                kind: Some(resource.kind.to_string()),
                name: Some(name.to_string()),
                namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                ..ObjectReference::default()
            },
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            type_: Some(event_type.to_string()),
            source: Some(k8s_openapi::api::core::v1::EventSource {
                component: Some(FIELD_MANAGER.to_string()),
                host: None,
            }),
            reporting_component: Some(FIELD_MANAGER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            ..Event::default()
        };
        let pp = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        events
            .create(&pp, &event)
            .await
            .map(|_| ())
            .map_err(|e| object_error(ClusterRole::Workload, "create", "events", event_ns, name, e))
    }
}

/// The API server's refusal to evict a pod selected by several PodDisruptionBudgets (a 500).
pub const MULTIPLE_PDBS_MESSAGE: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// Whether an eviction error is the several-PDBs refusal.
fn several_pdbs(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 500 && s.message == MULTIPLE_PDBS_MESSAGE)
}

/// The status patch removing conditions of these types (None: none present).
fn clear_conditions_patch(obj: &Value, types: &[String]) -> Option<Value> {
    let list = obj.pointer("/status/conditions")?.as_array()?;
    let kept: Vec<Value> = list
        .iter()
        .filter(|c| {
            !c.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| types.iter().any(|x| x == t))
        })
        .cloned()
        .collect();
    (kept.len() != list.len()).then(|| json!({"status": {"conditions": kept}}))
}

/// `op namespace/name` of a write, for messages.
pub(super) fn describe(w: &Write) -> String {
    let v = serde_json::to_value(w).unwrap_or_default();
    let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    match text("namespace") {
        "" => format!("{} {}", text("op"), text("name")),
        ns => format!("{} {ns}/{}", text("op"), text("name")),
    }
}

/// The policy/v1 Eviction of a pod, with its UID as the precondition when known.
fn eviction(namespace: &str, name: &str, uid: Option<&str>) -> Eviction {
    Eviction {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            ..ObjectMeta::default()
        },
        delete_options: uid.map(|u| DeleteOptions {
            preconditions: Some(Preconditions {
                uid: Some(u.to_string()),
                resource_version: None,
            }),
            ..DeleteOptions::default()
        }),
    }
}

/// Delete options with a UID precondition when one is known.
fn delete_params(uid: Option<&str>, grace_period_seconds: Option<i64>) -> DeleteParams {
    DeleteParams {
        preconditions: uid.map(|u| kube::api::Preconditions {
            uid: Some(u.to_string()),
            resource_version: None,
        }),
        // Saturated into the API's range: the planner never asks for more than the claim's
        // terminationGracePeriod, nor for less than 1.
        grace_period_seconds: grace_period_seconds
            .map(|g| u32::try_from(g.max(1)).unwrap_or(u32::MAX)),
        ..DeleteParams::default()
    }
}

fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    }
}

/// The type of the object an action creates (its `Create` write).
pub(super) fn resource_created(writes: &[Write]) -> &ResourceType {
    writes
        .iter()
        .find_map(|w| match w {
            Write::Create { resource, .. } => Some(resource),
            _ => None,
        })
        .unwrap_or(&kinds::NODE_CLAIM)
}
