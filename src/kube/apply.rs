//! The executor: carries out a plan's actions by running each [`Action::steps`] write verbatim
//! against the workload or management cluster, with the field manager `karpenter-capi`.
//!
//! How each [`Write`] is sent:
//! - `Create`: `POST` (the name is usually generated); with a fixed `metadata.name`, a forced
//!   server-side apply instead, so a retry is a no-op.
//! - `MergePatch`: a JSON merge patch (labels and annotations: never conflicts).
//! - `Scale`: a merge patch of `spec.replicas` on the `scale` subresource: an absolute value,
//!   so sending it twice never overshoots.
//! - `EditNode`, `EditFinalizers`, `SetNodeClaimStatus`, `SetConditions`: read the object, compute the new lists
//!   (taints, finalizers, owner references, conditions), and send them in a merge patch carrying
//!   the `resourceVersion` read (an optimistic lock needing only the `patch` verb). A 409 re-reads
//!   and retries, up to [`CONFLICT_ATTEMPTS`] times. Nothing to change sends nothing.
//! - Every write is bounded by a deadline ([`WRITE_DEADLINE`], 30 s, and with leader election
//!   no longer than the Lease's validity left): one the API server does not answer fails like a
//!   refused one, so a hung request holds back only what shares its objects, and no write of
//!   a replica lands after its Lease may have passed to another.
//! - `Delete` and `Evict`: a 404 counts as done (the object is already gone); an eviction
//!   refused with 429 (a PodDisruptionBudget), or with the 500 the API server answers for a pod
//!   under several PodDisruptionBudgets, is retried by the next pass, not an error.
//! - `Event`, `EventForCreated`: a core/v1 Event, unless the same one was recorded within the
//!   de-duplication window ([`super::recorder`]); failing to record one is logged and never fails
//!   the action.
//!
//! # Guarantees
//! - Actions run in plan order (the core puts provisioning before disruption); the writes of an
//!   action run in order.
//! - When a write fails, the action's `rollback` writes run (best effort, each attempted even if
//!   an earlier one failed) and the action is reported failed. **One failure stays local**: every
//!   later action sharing an object with it ([`Action::scopes`]: the rest of its disruption
//!   decision, other actions on the same node, scales of the same MachineDeployment), or with an
//!   action skipped so, is skipped; everything else runs. A scale-down after marking its exact
//!   Machine never runs when the mark failed, or Cluster API would pick the victim. The next
//!   pass re-plans and retries what was skipped.
//! - Every write is idempotent or guarded, so whatever a failure leaves behind, the next pass
//!   (which re-reads the clusters and re-plans from scratch) finishes it: absolute replicas,
//!   merge patches of labels and annotations, read-modify-write with `resourceVersion`, deletes
//!   that accept 404. The one non-idempotent write, creating a NodeClaim with a generated name,
//!   is the first write of its action, and the core sees the created claim on the next pass.
//! - The executor never decides what to change; it only reports per action what happened.
//!
//! # Errors
//! Failures are values in [`ActionResult`]; each names the cluster, verb, resource and object.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, ObjectMeta, Preconditions, Time,
};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tracing::{debug, info, warn};

use super::api::{self, dynamic_api, object_key, resource_name};
use super::edit::{NodeEdit, finalizers_patch, status_patch};
use super::errors::{object_error, status_code};
use super::leader::Gate;
use super::list::Clients;
use crate::controller::Plan;
use crate::controller::action::Action;
use crate::controller::write::{self, ResourceType, Write};
use crate::error::{ClusterRole, Error, Result};

/// The field manager of every write.
pub const FIELD_MANAGER: &str = "karpenter-capi";
/// How often a read-modify-write is retried on a 409 conflict.
pub const CONFLICT_ATTEMPTS: usize = 5;

/// What happened to one action.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum ActionOutcome {
    /// Every write succeeded.
    Applied,
    /// Write number `write` (0-based) failed; the rollback writes ran.
    Failed {
        /// Index of the failed write.
        write: usize,
        /// What failed.
        error: String,
        /// Rollback writes that failed in turn (empty: rolled back cleanly, or nothing to undo).
        rollback_errors: Vec<String>,
    },
    /// Not attempted because an earlier action failed.
    Skipped,
    /// Not attempted: its object is backing off after a recent failure
    /// ([`super::backoff::ObjectBackoff`]); a later pass retries it.
    BackingOff,
}

/// One action's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The action's name (`createNodeClaim`, ...).
    pub action: &'static str,
    /// Its target.
    pub target: String,
    /// What happened.
    pub outcome: ActionOutcome,
    /// Objects created by the action (`Kind/name`), e.g. the generated NodeClaim name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
}

impl ActionResult {
    /// Whether the action failed.
    pub fn failed(&self) -> bool {
        matches!(self.outcome, ActionOutcome::Failed { .. })
    }
}

/// Executes plans against the clusters.
#[derive(Clone)]
pub struct Executor {
    clients: Clients,
    /// `component` of recorded Events and `reportingInstance`.
    instance: String,
    /// Checked before every write: with leader election, closed once leadership may have passed.
    gate: Gate,
    /// Events recorded recently (not sent again within the window).
    events: std::sync::Arc<super::recorder::Dedupe>,
    /// How long one write may go unanswered before it counts as failed.
    write_deadline: std::time::Duration,
    /// What the writes since the last [`Executor::take_written`] left on the objects.
    written: std::sync::Arc<std::sync::Mutex<Vec<Written>>>,
    /// Machines (`namespace/name`) whose delete-machine mark a successful scale-down relied on:
    /// no rollback removes it (see [`Executor::forget_marks_except`]).
    committed_marks: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

/// An object as one successful write left it: the resourceVersion the API server answered
/// with, for read-your-writes (the stores must show at least this version before a pass plans
/// on them again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Plural resource name (`nodeclaims`, `machinedeployments`, ...).
    pub plural: &'static str,
    /// Namespace ("" for cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The resourceVersion answered (None when the answer had none).
    pub resource_version: Option<String>,
    /// The write created the object.
    pub created: bool,
}

/// How long one write (with its conflict retries) may go unanswered by default.
pub const WRITE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

impl Executor {
    /// An executor writing through these clients.
    pub fn new(clients: Clients) -> Executor {
        let instance = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| FIELD_MANAGER.to_string());
        Executor {
            clients,
            instance,
            gate: Gate::open(),
            events: std::sync::Arc::default(),
            write_deadline: WRITE_DEADLINE,
            written: std::sync::Arc::default(),
            committed_marks: std::sync::Arc::default(),
        }
    }

    /// The objects written since the last call, as the writes left them.
    pub fn take_written(&self) -> Vec<Written> {
        self.written
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
    }

    /// Forgets the committed marks of Machines no longer present (`present`: `namespace/name`
    /// of the Machines observed): a Machine that is gone needs its mark no more.
    pub fn forget_marks_except(&self, present: &std::collections::BTreeSet<String>) {
        if let Ok(mut m) = self.committed_marks.lock() {
            m.retain(|k| present.contains(k));
        }
    }

    /// Machines whose mark a successful scale-down relies on (`namespace/name`).
    pub fn committed_marks(&self) -> std::collections::BTreeSet<String> {
        self.committed_marks
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    fn note_written(&self, w: Written) {
        if let Ok(mut list) = self.written.lock() {
            list.push(w);
        }
    }

    /// Whether a rollback write would take off the delete-machine mark of a Machine that an
    /// earlier successful scale-down relies on (Cluster API would then pick another victim).
    fn unmarks_committed(&self, w: &Write) -> bool {
        let Write::MergePatch {
            resource,
            namespace,
            name,
            patch,
            ..
        } = w
        else {
            return false;
        };
        let unmark = patch
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .and_then(|a| a.get(crate::model::machine::DELETE_MACHINE_ANNOTATION))
            .is_some_and(Value::is_null);
        resource.kind == "Machine"
            && unmark
            && self
                .committed_marks
                .lock()
                .is_ok_and(|m| m.contains(&object_key(namespace, name)))
    }

    /// This executor, giving up on a write unanswered after `deadline` ([`WRITE_DEADLINE`] by
    /// default).
    pub fn with_write_deadline(mut self, deadline: std::time::Duration) -> Executor {
        self.write_deadline = deadline;
        self
    }

    /// This executor, writing only while `gate` is open (leader election).
    pub fn with_gate(mut self, gate: Gate) -> Executor {
        self.gate = gate;
        self
    }

    /// Runs a plan's actions in order; a failed action skips the later actions that share an
    /// object with it (see the module's guarantees). `now` stamps condition transitions and
    /// Events.
    pub async fn execute(&self, plan: &Plan, now: Timestamp) -> Vec<ActionResult> {
        self.execute_holding(plan, now, &std::collections::BTreeSet::new())
            .await
    }

    /// [`Executor::execute`], except that the actions whose target is in `held` (objects
    /// backing off after a failure) are not attempted ([`ActionOutcome::BackingOff`]) and hold
    /// back the later actions sharing an object with them, as a failure would.
    pub async fn execute_holding(
        &self,
        plan: &Plan,
        now: Timestamp,
        held: &std::collections::BTreeSet<String>,
    ) -> Vec<ActionResult> {
        let mut results = Vec::with_capacity(plan.actions.len());
        let mut blocked: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for action in &plan.actions {
            let scopes = action.scopes();
            if held.contains(action.target()) {
                blocked.extend(scopes);
                results.push(ActionResult {
                    action: action.name(),
                    target: action.target().to_string(),
                    outcome: ActionOutcome::BackingOff,
                    created: Vec::new(),
                });
                continue;
            }
            if scopes.iter().any(|s| blocked.contains(s)) {
                blocked.extend(scopes);
                results.push(ActionResult {
                    action: action.name(),
                    target: action.target().to_string(),
                    outcome: ActionOutcome::Skipped,
                    created: Vec::new(),
                });
                continue;
            }
            let result = self.execute_action(action, now).await;
            if result.failed() {
                blocked.extend(scopes);
            }
            results.push(result);
        }
        // Status is reported after the actions; each update stands alone (one that fails does
        // not stop the others), but none is written about an object whose action failed.
        for action in &plan.status {
            if action.scopes().iter().any(|s| blocked.contains(s)) {
                results.push(ActionResult {
                    action: action.name(),
                    target: action.target().to_string(),
                    outcome: ActionOutcome::Skipped,
                    created: Vec::new(),
                });
                continue;
            }
            results.push(self.execute_action(action, now).await);
        }
        results
    }

    /// Runs one action's writes, and its rollback when one fails.
    pub async fn execute_action(&self, action: &Action, now: Timestamp) -> ActionResult {
        let steps = action.steps();
        let mut created = Vec::new();
        for (index, w) in steps.writes.iter().enumerate() {
            if let Write::StatusOfCreated {
                resource,
                fields,
                conditions,
            } = w
            {
                // The object exists either way: a status it could not get is reported and
                // left to the lifecycle steps, which set each condition as it happens.
                if let Some(name) = created
                    .last()
                    .and_then(|c: &String| c.split('/').next_back())
                    && let Err(e) = self
                        .read_modify_patch(ClusterRole::Workload, resource, name, true, |obj| {
                            status_patch(obj, fields, conditions, now)
                        })
                        .await
                {
                    warn!(action = action.name(), object = name, error = %e, "created, but its initial status was not written");
                }
                continue;
            }
            if let Write::EventForCreated {
                on,
                event_type,
                reason,
                message,
                rate_limited,
            } = w
            {
                // About or naming the object just created; nothing to say if none was.
                if let Some(created) = created
                    .last()
                    .and_then(|c: &String| c.split('/').next_back())
                {
                    let (resource, namespace, name) = on.clone().unwrap_or_else(|| {
                        (
                            *resource_created(&steps.writes),
                            String::new(),
                            created.to_string(),
                        )
                    });
                    let message = message.replace(write::CREATED_NAME, created);
                    let event = (event_type.as_str(), reason.as_str(), message.as_str());
                    self.event(&resource, &namespace, &name, event, *rate_limited, now)
                        .await;
                }
                continue;
            }
            match self.execute_write(w, now).await {
                Ok(Some(name)) => created.push(name),
                Ok(None) => {}
                Err(err) => {
                    warn!(action = action.name(), target = action.target(), error = %err, "write failed; rolling back");
                    let mut rollback_errors = Vec::new();
                    for r in &steps.rollback {
                        if self.unmarks_committed(r) {
                            info!(action = action.name(), write = %describe(r), "rollback write not sent: an earlier successful scale-down relies on this mark");
                            continue;
                        }
                        if let Err(e) = self.execute_write(r, now).await {
                            warn!(action = action.name(), error = %e, "rollback write failed");
                            rollback_errors.push(e.to_string());
                        }
                    }
                    return ActionResult {
                        action: action.name(),
                        target: action.target().to_string(),
                        outcome: ActionOutcome::Failed {
                            write: index,
                            error: err.to_string(),
                            rollback_errors,
                        },
                        created,
                    };
                }
            }
        }
        // The replica change went through: the marks it relied on must stay.
        if let Action::ScaleMachineDeployment {
            rollback_machines, ..
        } = action
            && let Ok(mut marks) = self.committed_marks.lock()
        {
            marks.extend(rollback_machines.iter().cloned());
        }
        info!(action = action.name(), target = action.target(), "applied");
        ActionResult {
            action: action.name(),
            target: action.target().to_string(),
            outcome: ActionOutcome::Applied,
            created,
        }
    }

    /// Executes one write; returns `Kind/name` of a created object. A write the API server does
    /// not answer within the executor's deadline fails like any other (rule 8: a hung eviction
    /// or patch on one node must not hold back the rest of the pass); the next pass re-plans.
    pub async fn execute_write(&self, w: &Write, now: Timestamp) -> Result<Option<String>> {
        if !self.gate.is_open() {
            return Err(Error::Apply(
                "not written: this replica no longer holds the leader Lease".to_string(),
            ));
        }
        debug!(write = ?w, "executing");
        // With leader election, no longer than the Lease's validity left: a write still in
        // flight when another replica may take over is abandoned (its resourceVersion, read
        // before, makes a late arrival fail with 409 anyway).
        let lease_left = self.gate.time_left();
        let deadline = lease_left.map_or(self.write_deadline, |left| left.min(self.write_deadline));
        match tokio::time::timeout(deadline, self.send(w, now)).await {
            Ok(result) => result,
            Err(_) if lease_left.is_some_and(|left| left < self.write_deadline) => {
                Err(Error::Apply(format!(
                    "abandoned after {}s, when this replica's leader Lease ran out: {}",
                    deadline.as_secs_f64(),
                    describe(w)
                )))
            }
            Err(_) => Err(Error::Apply(format!(
                "no answer from the API server within {}s: {}",
                self.write_deadline.as_secs_f64(),
                describe(w)
            ))),
        }
    }

    /// Sends one write (see the module documentation for how each kind goes).
    async fn send(&self, w: &Write, now: Timestamp) -> Result<Option<String>> {
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
                self.read_modify_patch(ClusterRole::Workload, &write::NODE, name, false, |obj| {
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
                    &write::NODE_CLAIM,
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
                match sent {
                    Ok(_) => Ok(None),
                    Err(e) if status_code(&e) == Some(404) => Ok(None),
                    // The UID precondition failed: the pod planned on is gone already.
                    Err(e) if uid.is_some() && status_code(&e) == Some(409) => Ok(None),
                    // A PodDisruptionBudget refuses for now: the node stays tainted and the next
                    // pass evicts again, as Karpenter's terminator retries. The API server's 500
                    // for a pod under several PDBs is a PDB block too, not an error (mirrors
                    // core terminator/eviction.go `Queue.Reconcile`, multiplePodDisruptionBudgetsError).
                    Err(e) if status_code(&e) == Some(429) || several_pdbs(&e) => {
                        let why = if several_pdbs(&e) {
                            "the pod has more than one PodDisruptionBudget"
                        } else {
                            "429"
                        };
                        tracing::info!(pod = %format!("{namespace}/{name}"), "eviction refused for now ({why}): retried next pass");
                        Ok(None)
                    }
                    Err(e) => Err(object_error(
                        ClusterRole::Workload,
                        "create",
                        "pods/eviction",
                        namespace,
                        name,
                        e,
                    )),
                }
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
    async fn read_modify_patch<F>(
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
    async fn event(
        &self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        (event_type, reason, message): (&str, &str, &str),
        rate_limited: bool,
        now: Timestamp,
    ) {
        let key = super::recorder::key(resource.kind, namespace, name, reason, message);
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
fn describe(w: &Write) -> String {
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
fn resource_created(writes: &[Write]) -> &ResourceType {
    writes
        .iter()
        .find_map(|w| match w {
            Write::Create { resource, .. } => Some(resource),
            _ => None,
        })
        .unwrap_or(&write::NODE_CLAIM)
}
