//! Leader election on a `coordination.k8s.io/v1` Lease (`--leader-elect`), with only the verbs
//! [`permissions::LEADER_ELECTION`](crate::vocab::permissions::LEADER_ELECTION) grants: get, create,
//! update. Every update carries the resourceVersion read, so two replicas racing for an expired
//! Lease cannot both win: the loser gets a 409 and stays a follower.
//!
//! # Guarantees
//! - A replica acts only after a successful create or update naming it holder, and stops acting
//!   when it cannot renew before its own lease would expire (see [`LeaseLock::lead_until`]).
//! - Leadership cannot overlap even when the API hangs: each renewal is bounded by
//!   [`RENEW_DEADLINE`] (below [`LEASE_DURATION`]), and the [`Gate`] every write checks closes by
//!   itself when the last successful renewal's validity runs out, whatever the renewing task is
//!   doing. Validity is measured on the monotonic clock from when the renewal was *sent*.
//! - A clean shutdown releases the Lease (empty holder) so a standby takes over at once.
//! - The holder's watch health ([`LeaseLock::set_watch_health`]) rides on its renewals as the
//!   [`WATCH_HEALTH_ANNOTATION`] for `doctor`: no write of its own, and the value changes only
//!   when a watch crosses the failure bound, recovers or changes its error. A release removes it.
//!
//! # Errors
//! API failures are [`crate::Error::Cluster`] naming the Lease; a 409 is not an error (someone else won).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tracing::info;

use super::errors::{object_error, status_code};
use crate::error::{ClusterRole, Result};
use crate::vocab::keys::WATCH_HEALTH_ANNOTATION;
use crate::vocab::names::DRY_RUN_LEASE_NAME;
use crate::vocab::names::FIELD_MANAGER;
use crate::vocab::names::LEASE_NAME;

/// How long a Lease is valid without renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How often the holder renews (and a follower retries).
pub const RENEW_INTERVAL: Duration = Duration::from_secs(5);
/// The longest one renewal may take before it counts as failed: well below the lease duration,
/// so a hung API call cannot keep a replica believing it leads.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);

/// Whether this replica may write now: open without leader election; with it, open until the
/// validity of the last successful renewal runs out (a timer, not a message: a renewing task
/// stuck on a hung call cannot keep it open). Cheap to clone; clones share state.
#[derive(Clone, Debug)]
pub struct Gate {
    inner: std::sync::Arc<std::sync::Mutex<Option<tokio::time::Instant>>>,
    electing: bool,
}

impl Gate {
    /// Always open: no leader election.
    pub fn open() -> Gate {
        Gate {
            inner: std::sync::Arc::default(),
            electing: false,
        }
    }

    /// Closed until [`Gate::grant_until`]: leader election.
    pub fn elected() -> Gate {
        Gate {
            inner: std::sync::Arc::default(),
            electing: true,
        }
    }

    /// Open until `until` (monotonic).
    pub fn grant_until(&self, until: tokio::time::Instant) {
        if let Ok(mut g) = self.inner.lock() {
            *g = Some(until);
        }
    }

    /// Closed now (lost or released the Lease).
    pub fn revoke(&self) {
        if let Ok(mut g) = self.inner.lock() {
            *g = None;
        }
    }

    /// Until when the gate stays open, if it is granted.
    pub fn valid_until(&self) -> Option<tokio::time::Instant> {
        self.inner.lock().ok().and_then(|g| *g)
    }

    /// How long a write sent now may take: without leader election, unbounded (None); with it,
    /// the validity left of the last successful renewal (zero when closed), so a write cannot
    /// land after another replica may have taken over.
    pub fn time_left(&self) -> Option<std::time::Duration> {
        if !self.electing {
            return None;
        }
        let now = tokio::time::Instant::now();
        Some(
            self.valid_until()
                .map_or(std::time::Duration::ZERO, |until| {
                    until.saturating_duration_since(now)
                }),
        )
    }

    /// Whether a write may go out now.
    pub fn is_open(&self) -> bool {
        if !self.electing {
            return true;
        }
        self.inner
            .lock()
            .ok()
            .and_then(|g| *g)
            .is_some_and(|until| tokio::time::Instant::now() < until)
    }
}

/// Who holds the Lease after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leadership {
    /// This replica holds it.
    Leading,
    /// Another holder with a valid Lease.
    Following(String),
}

/// A Lease this replica competes for.
pub struct LeaseLock {
    api: Api<Lease>,
    namespace: String,
    /// The Lease's name ([`LEASE_NAME`] or [`DRY_RUN_LEASE_NAME`]).
    pub name: String,
    /// This replica's identity (`holderIdentity`).
    pub identity: String,
    duration: Duration,
    /// The watch-health annotation's value the next write carries (none: removed).
    watch_health: std::sync::Mutex<Option<String>>,
}

/// Sets (or, for `None`, removes) the watch-health annotation on a Lease about to be written.
fn annotate(meta: &mut ObjectMeta, health: Option<String>) {
    match health {
        Some(v) => {
            meta.annotations
                .get_or_insert_with(Default::default)
                .insert(WATCH_HEALTH_ANNOTATION.to_string(), v);
        }
        None => {
            if let Some(a) = meta.annotations.as_mut() {
                a.remove(WATCH_HEALTH_ANNOTATION);
            }
        }
    }
}

impl LeaseLock {
    /// A lock on Lease [`LEASE_NAME`] in `namespace` of the workload cluster.
    pub fn new(client: kube::Client, namespace: &str, identity: String) -> LeaseLock {
        LeaseLock {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: LEASE_NAME.to_string(),
            identity,
            duration: LEASE_DURATION,
            watch_health: std::sync::Mutex::new(None),
        }
    }

    /// The watch health the next create or renewal publishes
    /// ([`crate::diagnose::watches::encode`] of the watches failing past the bound; `None` when
    /// all work).
    pub fn set_watch_health(&self, value: Option<String>) {
        if let Ok(mut h) = self.watch_health.lock() {
            *h = value;
        }
    }

    fn watch_health(&self) -> Option<String> {
        self.watch_health.lock().ok().and_then(|h| h.clone())
    }

    /// A lock on the Lease of a dry-run (`dry_run`) or live controller: [`DRY_RUN_LEASE_NAME`]
    /// or [`LEASE_NAME`].
    pub fn for_mode(
        client: kube::Client,
        namespace: &str,
        identity: String,
        dry_run: bool,
    ) -> LeaseLock {
        let mut lock = LeaseLock::new(client, namespace, identity);
        if dry_run {
            lock.name = DRY_RUN_LEASE_NAME.to_string();
        }
        lock
    }

    /// This pod's name (or the host name) plus a random suffix, so a restarted process is a new holder.
    pub fn default_identity() -> String {
        let host = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| "karpenter-capi".to_string());
        let nanos = Timestamp::now().subsec_nanosecond();
        format!("{host}_{:08x}", (nanos as u32) ^ std::process::id())
    }

    fn fail(&self, verb: &str, e: kube::Error) -> crate::error::Error {
        object_error(
            ClusterRole::Workload,
            verb,
            "leases.coordination.k8s.io",
            &self.namespace,
            &self.name,
            e,
        )
    }

    /// Acquires or renews the Lease at `now`.
    pub async fn try_acquire(&self, now: Timestamp) -> Result<Leadership> {
        let pp = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        let secs = i32::try_from(self.duration.as_secs()).unwrap_or(15);
        let current = match self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.fail("get", e))?
        {
            Some(l) => l,
            None => {
                let mut metadata = ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                };
                annotate(&mut metadata, self.watch_health());
                let lease = Lease {
                    metadata,
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.identity.clone()),
                        lease_duration_seconds: Some(secs),
                        acquire_time: Some(MicroTime(now)),
                        renew_time: Some(MicroTime(now)),
                        lease_transitions: Some(0),
                        ..LeaseSpec::default()
                    }),
                };
                return match self.api.create(&pp, &lease).await {
                    Ok(_) => {
                        info!(identity = %self.identity, "acquired the leader Lease");
                        Ok(Leadership::Leading)
                    }
                    Err(e) if status_code(&e) == Some(409) => {
                        Ok(Leadership::Following("another replica".to_string()))
                    }
                    Err(e) => Err(self.fail("create", e)),
                };
            }
        };
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let mine = holder.as_deref() == Some(self.identity.as_str());
        if !mine && let Some(other) = &holder {
            let valid_for = i64::from(spec.lease_duration_seconds.unwrap_or(secs));
            let renewed = spec
                .renew_time
                .as_ref()
                .or(spec.acquire_time.as_ref())
                .map(|t| t.0);
            let expired = renewed.is_none_or(|r| r.as_second() + valid_for <= now.as_second());
            if !expired {
                return Ok(Leadership::Following(other.clone()));
            }
        }
        let mut lease = current;
        annotate(&mut lease.metadata, self.watch_health());
        let transitions = spec.lease_transitions.unwrap_or(0);
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(secs),
            acquire_time: if mine {
                spec.acquire_time.clone()
            } else {
                Some(MicroTime(now))
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(if mine { transitions } else { transitions + 1 }),
            ..spec
        });
        match self.api.replace(&self.name, &pp, &lease).await {
            Ok(_) => {
                if !mine {
                    info!(identity = %self.identity, "acquired the leader Lease");
                }
                Ok(Leadership::Leading)
            }
            Err(e) if status_code(&e) == Some(409) => Ok(Leadership::Following(
                holder.unwrap_or_else(|| "another replica".to_string()),
            )),
            Err(e) => Err(self.fail("update", e)),
        }
    }

    /// Until when, after a successful renewal at `renewed`, this replica may act: a safety margin
    /// before the Lease would expire for the others.
    pub fn lead_until(&self, renewed: Timestamp) -> Timestamp {
        let margin = self.duration.as_secs_f64() * 0.8;
        renewed
            .checked_add(jiff::SignedDuration::from_secs_f64(margin))
            .unwrap_or(renewed)
    }

    /// [`LeaseLock::lead_until`] on the monotonic clock, from the instant the renewal was sent
    /// (the others count the Lease's validity from no earlier than that).
    pub fn lead_until_instant(&self, sent: tokio::time::Instant) -> tokio::time::Instant {
        sent + self.duration.mul_f64(0.8)
    }

    /// A lock with another lease duration (tests shorten it).
    pub fn with_duration(mut self, duration: Duration) -> LeaseLock {
        self.duration = duration;
        self
    }

    /// Gives the Lease up (on shutdown), if this replica still holds it.
    pub async fn release(&self) -> Result<()> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.fail("get", e))?
        else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        annotate(&mut lease.metadata, None);
        let pp = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        match self.api.replace(&self.name, &pp, &lease).await {
            Ok(_) => {
                info!(identity = %self.identity, "released the leader Lease");
                Ok(())
            }
            Err(e) if status_code(&e) == Some(409) => Ok(()),
            Err(e) => Err(self.fail("update", e)),
        }
    }
}
