//! Whether a replacement pays back its launch while the load falls. A replacement is billed
//! beside the nodes it replaces while it boots, and they are billed while they drain; when pods
//! are leaving, the same nodes may soon go by a plain deletion, their pods fitting on the room
//! the departures free, and then the replacement only added to the bill. A deliberate
//! difference from Karpenter, which replaces whenever the replacement is cheaper now: this only
//! ever rejects a replacement (deletions are never held back), and only while this process has
//! seen the load fall (see `super::super::pod_flow`).
//!
//! The rule: with `old` the removed nodes' price, `new` the replacements', `boot` the time this
//! cluster's claims take from creation to `Initialized` (the median), and `T` the time until the
//! departures free room for the moved pods on the nodes that stay (their shortfall over the net
//! fall rate, per resource, the longest), replacing ends the old nodes `T - boot` sooner and
//! bills the new ones about `T + boot` longer (their boot and their own drain), so it pays when
//! `old x (T - boot) > new x (T + boot)`, that is `T > boot x (old + new) / (old - new)`.

use std::collections::HashMap;

use super::Candidate;
use crate::controller::pod_flow::Load;
use crate::model::flavor::Price;
use crate::model::snapshot::Snapshot;

/// The falling load and the room the nodes that stay have now.
pub(crate) struct Falling {
    /// Net load leaving per second, `[CPU millicores, memory bytes]`.
    rate: [f64; 2],
    /// The median creation-to-`Initialized` time of the cluster's claims, seconds.
    boot_secs: f64,
    /// Free requests of each node that can take pods now ([`super::usable_free`]).
    free: HashMap<String, Load>,
    /// Their sum.
    total: Load,
}

impl Falling {
    /// The outlook over `snapshot` (with the pending pods' room already taken) for a load falling
    /// at `rate`; None when no claim shows how long a boot takes.
    pub(crate) fn new(snapshot: &Snapshot, rate: [f64; 2]) -> Option<Falling> {
        let mut boots: Vec<i64> = snapshot
            .nodeclaims
            .iter()
            .filter_map(|c| {
                let created = c.created?;
                let at = c
                    .conditions
                    .iter()
                    .find(|k| k.type_ == "Initialized" && k.status == "True")?
                    .last_transition_time?;
                Some(at.as_second() - created.as_second()).filter(|s| *s > 0)
            })
            .collect();
        if boots.is_empty() {
            return None;
        }
        boots.sort_unstable();
        let boot_secs = boots[boots.len() / 2] as f64;
        let free = super::usable_free(snapshot);
        let mut total = [0i64; 2];
        for room in free.values() {
            total[0] = total[0].saturating_add(room[0]);
            total[1] = total[1].saturating_add(room[1]);
        }
        Some(Falling {
            rate,
            boot_secs,
            free,
            total,
        })
    }

    /// Whether replacing `remove` (worth `removed` an hour, saving `saving`), whose pods `moved`
    /// are snapshot indices of `view`, pays back before the departures would let them go anyway.
    pub(crate) fn pays(
        &self,
        view: &Snapshot,
        moved: &[usize],
        remove: &[Candidate],
        removed: Price,
        saving: Price,
    ) -> bool {
        if saving.0 <= 0 {
            return false;
        }
        let mut need = [0i64; 2];
        for &i in moved {
            let r = &view.pods[i].demand.requests;
            need[0] = need[0].saturating_add(r.cpu_millis);
            need[1] = need[1].saturating_add(r.memory_bytes);
        }
        let mut room = self.total;
        for c in remove {
            if let Some(own) = self.free.get(&c.node) {
                room[0] = room[0].saturating_sub(own[0]);
                room[1] = room[1].saturating_sub(own[1]);
            }
        }
        let mut wait = 0f64;
        for k in 0..2 {
            let short = need[k].saturating_sub(room[k]);
            if short > 0 {
                if self.rate[k] <= 0.0 {
                    // This resource is not freed: the nodes could stay for good.
                    return true;
                }
                wait = wait.max(short as f64 / self.rate[k]);
            }
        }
        let added = removed.0 - saving.0;
        let payback = self.boot_secs * (removed.0 + added) as f64 / saving.0 as f64;
        wait > payback
    }
}
