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
//!   under several PodDisruptionBudgets, is retried by the next pass, not an error; it records
//!   core's `FailedDraining` Warning on the Node, and only an eviction that went records
//!   `Evicted` on the pod.
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
use serde::Serialize;
use serde_json::Value;
use tracing::{debug, info, warn};

use super::api::object_key;
use super::edit::status_patch;
use super::leader::Gate;
use super::list::Clients;
use crate::controller::Plan;
use crate::controller::action::Action;
use crate::controller::write::{self, Write};
use crate::error::{ClusterRole, Error, Result};

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
    /// Objects created by the action (`Kind/name`), e.g. the generated NodeClaim name, or the
    /// `Eviction/ns/name` of an eviction the API server accepted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
}

impl ActionResult {
    /// Whether the action did what it was for: applied, and, for an eviction, accepted (one a
    /// PodDisruptionBudget refused or whose pod was gone is applied, to be retried, but evicted
    /// nothing). Karpenter's counters count only these.
    pub fn done(&self) -> bool {
        self.outcome == ActionOutcome::Applied
            && (self.action != "evictPod" || !self.created.is_empty())
    }

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
            .and_then(|a| a.get(crate::vocab::keys::DELETE_MACHINE_ANNOTATION))
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
}

mod send;
use crate::vocab::names::FIELD_MANAGER;
pub use send::MULTIPLE_PDBS_MESSAGE;
use send::{describe, resource_created};
