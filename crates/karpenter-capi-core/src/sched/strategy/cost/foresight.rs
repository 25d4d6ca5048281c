//! Provisioning with foresight: the cheapest nodes for one small batch are not the cheapest
//! fleet while demand grows. The pods that arrived over the last [`WINDOW_SECS`] (creation
//! times of the pods in the cluster, so nothing is kept outside it) are taken as the pods that
//! will arrive over the next window; a new node is priced by what it will hold then, and a
//! larger flavor is bought only when it is cheaper per pod it will hold than the batch's own
//! plan.
//!
//! The rule, deterministic for the same snapshot and time:
//! - **Arrivals.** Alive pods (not DaemonSet, mirror, terminal or terminating ones) created in
//!   `(now − W, now]`, the batch's included; `W` = [`WINDOW_SECS`]. Only pods whose fit is per
//!   node (no pod affinity, anti-affinity, spread, host ports or volume zones) are forecast.
//! - **Growth must be observable.** No arrival outside the batch (a one-shot batch, a file, a
//!   load that stopped growing) forecasts nothing, so such plans are the batch's own; fewer
//!   arrivals than in the window before (`(now − 2W, now − W]`) means the load is falling: no
//!   forecast either. Consolidation's forecast ([`ahead`]) skips this test: it only ever keeps
//!   a node, and one window's count is noisy (the pods an eviction recreates land in one
//!   window or the other).
//! - **Arrivals that stopped** forecast nothing to consolidation: those that came at a pace (at
//!   two instants or more) count as stopped once none came for more than [`STOP_GAPS`] times
//!   the longest gap between them. [`Forecast::ends`] says when, for the controller's clock.
//!   (Provisioning's batch is an arrival now, so the rule does not apply there.)
//! - **What the policy allows.** A wrong forecast leaves a node larger than its pods need.
//!   `WhenEmptyOrUnderutilized` replaces such a node later, and so does `Balanced` (it
//!   consolidates underutilized nodes whose savings outweigh their disruption, which a node
//!   bought too large for a few pods is), so the forecast counts in full; `WhenEmpty` keeps it
//!   until it is empty, so only half the arrivals count; a pool that never consolidates
//!   (`consolidateAfter: Never`) gets no forecast.
//! - **At most one node's worth** of each shape is expected (the most the largest flavor holds):
//!   further pods would need nodes of their own and cannot change the ones bought now.
//! - **Cheaper per pod.** The nodes of one `cost` plan for the batch and the expected pods
//!   together are opened only as the batch's pods need them (largest first, first fit); they are
//!   bought instead of the batch's own plan only when their price per pod they will hold (the
//!   batch's and the expected pods that fit their room) is lower, or equal while they hold more
//!   pods (room a longer ramp fills instead of replacing the smaller nodes). [`Sizing`] says why.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use jiff::Timestamp;
use serde::Serialize;

use super::greedy::DemandKey;
use crate::controller::consolidation::balanced::BALANCED;
use crate::model::flavor::Price;
use crate::model::snapshot::{PodRecord, Snapshot};
use crate::sched::catalog::{self, Offering};
use crate::sched::state::{ClusterState, NodeOrigin};
use crate::sched::strategy::{Budget, NewNode, Placement, new_nodes, queue_order};

/// The arrival window: pods created this long ago or less are the recent arrivals, and as many
/// are expected over the same time ahead.
pub const WINDOW_SECS: i64 = 600;

/// Batches larger than this fill their own nodes; foresight is for the small batches of a
/// growing load.
pub const MAX_BATCH: usize = 400;

/// What the recent arrivals forecast: per shape, a template pod and how many more are expected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forecast {
    /// (snapshot index of the newest pod of the shape, pods of that shape expected).
    pub expected: Vec<(usize, usize)>,
    /// Arrivals in the last window (the batch's included).
    pub arrivals: usize,
    /// Arrivals in the window before.
    pub earlier: usize,
    /// The time of the forecast.
    pub now: Option<Timestamp>,
    /// When this forecast, not empty, becomes empty by itself (consolidation's only: the
    /// arrivals stop, or the newest leaves the window), so the controller looks again then.
    pub ends: Option<Timestamp>,
}

impl Forecast {
    /// Whether nothing is expected.
    pub fn is_empty(&self) -> bool {
        self.expected.iter().all(|&(_, n)| n == 0)
    }

    /// Pods expected in all.
    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        self.expected.iter().map(|&(_, n)| n).sum()
    }
}

/// Why `cost` bought larger nodes than the batch alone needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "reason",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Sizing {
    /// Arrivals are not falling: the batch and the pods expected over the next window are
    /// cheaper on these nodes than bought batch by batch.
    ExpectedArrivals {
        /// Pods of the batch on new nodes.
        pending: usize,
        /// Pods expected over the next window.
        expected: usize,
        /// The window, in seconds.
        window_secs: i64,
        /// Price per hour of the nodes bought now.
        bought: Price,
        /// Pods they will hold: the batch's and the expected ones that fit their room.
        holds: usize,
        /// Price per hour of the batch's own plan.
        batch_alone: Price,
        /// Pods that plan's nodes would hold the same way.
        batch_alone_holds: usize,
    },
}

impl std::fmt::Display for Sizing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sizing::ExpectedArrivals {
                pending,
                expected,
                window_secs,
                bought,
                holds,
                batch_alone,
                batch_alone_holds,
            } => {
                write!(
                    f,
                    "sized for {pending} pending and ~{expected} expected pod(s) (as many arrived in the last {}m): \
                     {bought}/h for {holds} pod(s), {}/h per pod, instead of {batch_alone}/h for \
                     {batch_alone_holds}, {}/h per pod",
                    window_secs / 60,
                    per_pod(*bought, *holds),
                    per_pod(*batch_alone, *batch_alone_holds),
                )?;
                if i128::from(bought.0) * *batch_alone_holds as i128
                    == i128::from(batch_alone.0) * *holds as i128
                {
                    f.write_str(" (as cheap per pod, with room for more)")?;
                }
                Ok(())
            }
        }
    }
}

/// A price per hour shared by `pods` pods.
fn per_pod(price: Price, pods: usize) -> Price {
    Price(price.0 / (pods.max(1) as i64))
}

/// Whether a pod can be forecast: its fit is per node (nothing across nodes, no host port).
fn forecastable(p: &PodRecord) -> bool {
    let d = &p.demand;
    !d.has_topology()
        && d.anti_affinity.is_empty()
        && d.host_ports.is_empty()
        && d.volume_requirements.is_empty()
}

/// How much of the recent arrivals counts under the NodePools' consolidation policies (the
/// strictest pool decides): in halves.
fn policy_halves(snapshot: &Snapshot) -> usize {
    snapshot
        .nodepools
        .iter()
        .map(|p| {
            if p.consolidate_after.as_deref() == Some("Never") {
                0
            } else if p.consolidation_policy == "WhenEmptyOrUnderutilized"
                || p.consolidation_policy == BALANCED
            {
                2
            } else {
                1
            }
        })
        .min()
        .unwrap_or(0)
}

/// The forecast for a batch at `now` (see the module's rule).
pub fn observe(snapshot: &Snapshot, batch: &[usize], now: Timestamp) -> Forecast {
    let out = Forecast {
        now: Some(now),
        ..Forecast::default()
    };
    if batch.is_empty() || batch.len() > MAX_BATCH {
        return out;
    }
    let in_batch: std::collections::HashSet<usize> = batch.iter().copied().collect();
    observe_around(snapshot, &in_batch, out, Falling::ForecastsNothing)
}

/// The forecast at `now` with no batch: every recent arrival counts as growth, even when
/// fewer arrived than in the window before (consolidation prices a replacement with it, see
/// `controller::consolidation`: a forecast there can only keep a node, and a fall is not told
/// from noise by one window, so in doubt it disrupts less).
pub fn ahead(snapshot: &Snapshot, now: Timestamp) -> Forecast {
    let out = Forecast {
        now: Some(now),
        ..Forecast::default()
    };
    observe_around(
        snapshot,
        &std::collections::HashSet::new(),
        out,
        Falling::Counted,
    )
}

/// What fewer arrivals than in the window before do to a forecast.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Falling {
    /// The load is taken as falling: nothing is forecast (provisioning's bet).
    ForecastsNothing,
    /// The recent arrivals are expected all the same (consolidation's caution).
    Counted,
}

/// [`observe`]'s rule around the batch `in_batch` (maybe none), into `out` (its time set).
fn observe_around(
    snapshot: &Snapshot,
    in_batch: &std::collections::HashSet<usize>,
    mut out: Forecast,
    falling: Falling,
) -> Forecast {
    let Some(now) = out.now else {
        return out;
    };
    let halves = policy_halves(snapshot);
    if halves == 0 {
        return out;
    }
    let window = WINDOW_SECS * 1000;
    let now_ms = now.as_millisecond();
    // Recent arrivals outside the batch: without one, no growth is observable.
    let mut outside = 0;
    // The distinct arrival instants of the window (to the second), to tell a pause from a
    // stop.
    let mut instants: std::collections::BTreeSet<i64> = std::collections::BTreeSet::new();
    // Per shape: count, and the newest pod (creation time, then key: a total order).
    let mut shapes: HashMap<DemandKey, (usize, (i64, String, usize))> = HashMap::new();
    for (i, p) in snapshot.pods.iter().enumerate() {
        if p.daemon || p.mirror || p.terminal || p.terminating {
            continue;
        }
        let Some(created) = p.created.map(|c| c.as_millisecond()) else {
            continue;
        };
        let age = now_ms - created;
        if !(0..2 * window).contains(&age) {
            continue;
        }
        if age >= window {
            out.earlier += 1;
            continue;
        }
        out.arrivals += 1;
        if !in_batch.contains(&i) {
            outside += 1;
            instants.insert(created.div_euclid(1000));
        }
        if !forecastable(p) {
            continue;
        }
        let newest = (created, p.demand.key(), i);
        let e = shapes
            .entry(DemandKey::unlabelled(&p.demand))
            .or_insert((0, newest.clone()));
        e.0 += 1;
        if newest > e.1 {
            e.1 = newest;
        }
    }
    if outside == 0 {
        return out;
    }
    if out.arrivals == 0 || (falling == Falling::ForecastsNothing && out.arrivals < out.earlier) {
        return out;
    }
    let ends = match falling {
        Falling::Counted => match stops_at(&instants) {
            Some(at) if at <= now_ms.div_euclid(1000) => return out,
            at => instants
                .last()
                .map(|last| last + WINDOW_SECS)
                .into_iter()
                .chain(at)
                .min()
                .and_then(|s| Timestamp::from_second(s).ok()),
        },
        Falling::ForecastsNothing => None,
    };
    let (offerings, _) = catalog::offerings(snapshot, true);
    let mut expected: BTreeMap<(i64, String, usize), usize> = BTreeMap::new();
    for (count, newest) in shapes.into_values() {
        let requests = &snapshot.pods[newest.2].demand.requests;
        let most = offerings
            .iter()
            .map(|o: &Offering| requests.copies_in(&o.allocatable).max(0) as usize)
            .max()
            .unwrap_or(0);
        let n = (count * halves / 2).min(most);
        if n > 0 {
            expected.insert(newest, n);
        }
    }
    // Oldest newest-pod first: a fixed order whatever the hash map's.
    out.expected = expected.into_iter().map(|(k, n)| (k.2, n)).collect();
    if !out.is_empty() {
        out.ends = ends;
    }
    out
}

/// The second from which arrivals that came at a pace (two instants or more) count as
/// stopped: nothing arrived for more than [`STOP_GAPS`] times the longest gap between them
/// (the longest, so that a pod recreated between two arrivals does not shorten it).
fn stops_at(instants: &std::collections::BTreeSet<i64>) -> Option<i64> {
    let last = *instants.last()?;
    let longest = instants
        .iter()
        .zip(instants.iter().skip(1))
        .map(|(a, b)| b - a)
        .max()?;
    Some(last + STOP_GAPS * longest + 1)
}

/// How many longest gaps without an arrival mean the arrivals stopped.
const STOP_GAPS: i64 = 2;

/// The snapshot with the expected pods added as pending pods created at the forecast's time
/// (copies of their shape's newest pod), and their indices.
pub fn with_expected(snapshot: &Snapshot, forecast: &Forecast) -> (Snapshot, Vec<usize>) {
    let mut out = snapshot.clone();
    let mut added = Vec::new();
    for &(template, count) in &forecast.expected {
        let base = &snapshot.pods[template];
        for k in 0..count {
            let mut rec: PodRecord = (**base).clone();
            rec.node_name = None;
            rec.marked_unschedulable = true;
            rec.nominated = false;
            rec.gated = false;
            rec.uid = None;
            rec.created = forecast.now;
            let demand = Arc::make_mut(&mut rec.demand);
            demand.name = format!("{}~expected-{k}", demand.name);
            out.pods.push(Arc::new(rec));
            added.push(out.pods.len() - 1);
        }
    }
    (out, added)
}

/// `cost`'s plan for the batch with the forecast: the batch's own plan ([`super::plan_within`])
/// unless nodes sized with foresight are cheaper per pod they will hold, or as cheap while
/// holding more (module rule).
pub fn plan(snapshot: &Snapshot, pending: &[usize], forecast: &Forecast) -> Placement {
    let base = super::plan_within(snapshot, pending, None);
    if forecast.is_empty()
        || base.new_nodes.is_empty()
        || snapshot.pods.iter().any(|p| p.demand.has_topology())
        || snapshot.nodepools.iter().any(|p| !p.min_values.is_empty())
    {
        return base;
    }
    foreseen(snapshot, pending, forecast, &base).unwrap_or(base)
}

/// The plan sized with foresight, when it is cheaper per pod (or as cheap, holding more).
fn foreseen(
    snapshot: &Snapshot,
    pending: &[usize],
    forecast: &Forecast,
    base: &Placement,
) -> Option<Placement> {
    let (aug, expected) = with_expected(snapshot, forecast);
    let mut together: Vec<usize> = pending.to_vec();
    together.extend(&expected);
    let joint = super::plan_within(&aug, &together, None);
    let is_real: std::collections::HashSet<usize> = base
        .new_nodes
        .iter()
        .flat_map(|n| n.pods.iter().copied())
        .collect();
    if joint.unschedulable.iter().any(|(p, _)| is_real.contains(p)) {
        return None;
    }
    // The joint plan's nodes, the dearest (largest) first, then those holding more of the
    // batch, then by name: the batch's pods fill them in that order.
    let mut order: Vec<&NewNode> = joint.new_nodes.iter().collect();
    let real_on = |n: &NewNode| n.pods.iter().filter(|p| is_real.contains(p)).count();
    order.sort_by(|a, b| {
        b.offering
            .flavor
            .price
            .cmp(&a.offering.flavor.price)
            .then(real_on(b).cmp(&real_on(a)))
            .then_with(|| a.name.cmp(&b.name))
    });
    let real: Vec<usize> = queue_order(snapshot, &is_real.iter().copied().collect::<Vec<_>>());
    let kept = fill(&aug, &order, &real)?;
    let flavors = |nodes: &[NewNode]| {
        let mut v: Vec<String> = nodes
            .iter()
            .map(|n| n.offering.flavor.machine_deployment.clone())
            .collect();
        v.sort();
        v
    };
    if flavors(&kept) == flavors(&base.new_nodes) {
        return None;
    }
    // Cheaper per pod over the window: price / pods held, compared crosswise in integers.
    let price = |nodes: &[NewNode]| Price(nodes.iter().map(|n| n.offering.flavor.price.0).sum());
    let (bought, alone) = (price(&kept), price(&base.new_nodes));
    let holds = held(&aug, &kept, &expected)?;
    let alone_holds = held(&aug, &base.new_nodes, &expected)?;
    // At an equal price per pod the nodes that hold more win: a ramp longer than the window
    // fills their room too, where the batch's smaller nodes would need replacing (each
    // replacement bills two nodes while it launches and drains).
    let (per_bought, per_alone) = (
        i128::from(bought.0) * alone_holds as i128,
        i128::from(alone.0) * holds as i128,
    );
    if per_bought > per_alone || (per_bought == per_alone && holds <= alone_holds) {
        return None;
    }
    let mut out = base.clone();
    out.sizing = Some(Sizing::ExpectedArrivals {
        pending: real.len(),
        expected: expected.len(),
        window_secs: WINDOW_SECS,
        bought,
        holds,
        batch_alone: alone,
        batch_alone_holds: alone_holds,
    });
    out.new_nodes = kept;
    Some(out)
}

/// The batch's pods (queue order) first-fit onto `nodes`, each node opened only when no opened
/// one takes the next pod; None when some pod fits none of them or a limit is reached.
fn fill(snapshot: &Snapshot, nodes: &[&NewNode], pods: &[usize]) -> Option<Vec<NewNode>> {
    let (all, _) = catalog::offerings(snapshot, true);
    let offerings = super::distinct(snapshot, &all);
    let mut state = ClusterState::new(snapshot, &all);
    let mut budget = Budget::new(snapshot);
    let mut opened: Vec<usize> = Vec::new();
    let mut next = 0;
    for &p in pods {
        loop {
            if let Some(&n) = opened.iter().find(|&&n| state.can_place(p, n)) {
                state.place(p, n);
                break;
            }
            let node = nodes.get(next)?;
            next += 1;
            let o = offerings.iter().position(|x| *x == node.offering)?;
            budget.check(&offerings[o]).ok()?;
            budget.take(&offerings[o]);
            opened.push(state.open(&offerings[o], NodeOrigin::New(o), None));
        }
    }
    Some(new_nodes(&state, &offerings))
}

/// The pods `nodes` will hold over the window: their own (the batch's) and the expected pods
/// that fit their room, first fit.
fn held(aug: &Snapshot, nodes: &[NewNode], expected: &[usize]) -> Option<usize> {
    let (all, _) = catalog::offerings(aug, true);
    let offerings = super::distinct(aug, &all);
    let mut state = ClusterState::new(aug, &all);
    let mut opened = Vec::new();
    let mut count = 0;
    for node in nodes {
        let o = offerings.iter().position(|x| *x == node.offering)?;
        let n = state.open(&offerings[o], NodeOrigin::New(o), None);
        for &p in &node.pods {
            state.place(p, n);
        }
        count += node.pods.len();
        opened.push(n);
    }
    for &p in expected {
        if let Some(&n) = opened.iter().find(|&&n| state.can_place(p, n)) {
            state.place(p, n);
            count += 1;
        }
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};
    use crate::sched::strategy::StrategyName;

    /// The built-in catalog (c3-4, c3-8, c3-16 at 0.05, 0.1, 0.2/h; a 100m DaemonSet) without
    /// its limit or its own pods, under this consolidation policy, a full 5-vCPU worker holding
    /// `recent` pods created 5 minutes before `NOW` and `older` pods created 15 minutes before,
    /// and `pending` pods (500m / 512Mi) created just now.
    fn cluster(policy: &str, recent: usize, older: usize, pending: usize) -> Snapshot {
        let mut y = crate::sim::trace::DEFAULT_SCENARIO
            .replace("  limits:\n    cpu: '20'\n", "")
            .replace("replicas: 8", "replicas: 0")
            .replace(
                "consolidationPolicy: WhenEmptyOrUnderutilized",
                &format!("consolidationPolicy: {policy}"),
            );
        y.push_str("---\napiVersion: v1\nkind: Node\nmetadata: {name: worker}\nstatus: {capacity: {cpu: '100', memory: 200Gi, pods: '110'}, allocatable: {cpu: '100', memory: 200Gi, pods: '110'}}\n");
        let pod = |name: String, created: &str, bound: bool| {
            let node = if bound { "nodeName: worker, " } else { "" };
            let status = if bound {
                "\nstatus: {phase: Running}"
            } else {
                ""
            };
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, creationTimestamp: '{created}'}}\nspec: {{{node}containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}}}]}}{status}\n"
            )
        };
        for i in 0..recent {
            y.push_str(&pod(format!("recent-{i}"), "2026-12-02T10:05:00Z", true));
        }
        for i in 0..older {
            y.push_str(&pod(format!("older-{i}"), "2026-12-02T09:55:00Z", true));
        }
        // Fill the worker so the batch needs new nodes.
        let filler = 100_000 - 500 * (recent + older);
        y.push_str(&format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: filler, namespace: default, creationTimestamp: '2026-12-01T00:00:00Z'}}\nspec: {{nodeName: worker, containers: [{{name: c, resources: {{requests: {{cpu: {filler}m, memory: 100Gi}}}}}}]}}\nstatus: {{phase: Running}}\n"));
        for i in 0..pending {
            y.push_str(&pod(format!("new-{i}"), "2026-12-02T10:09:58Z", false));
        }
        snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: y,
        }])
        .unwrap()
    }

    const NOW: &str = "2026-12-02T10:10:00Z";

    fn batch(s: &Snapshot) -> Vec<usize> {
        (0..s.pods.len())
            .filter(|&i| s.pods[i].is_provisionable())
            .collect()
    }

    fn flavors(p: &Placement) -> Vec<(String, usize)> {
        p.node_counts()
    }

    #[test]
    fn a_rising_load_buys_the_node_the_next_arrivals_fill() {
        let s = cluster("WhenEmptyOrUnderutilized", 5, 0, 5);
        let pending = batch(&s);
        assert_eq!(pending.len(), 5);
        let forecast = observe(&s, &pending, NOW.parse().unwrap());
        assert_eq!(
            (forecast.arrivals, forecast.earlier, forecast.total()),
            (10, 0, 10)
        );
        let alone = super::super::plan_within(&s, &pending, None);
        assert_eq!(flavors(&alone), vec![("c3-8".to_string(), 1)]);
        let p = plan(&s, &pending, &forecast);
        assert_eq!(flavors(&p), vec![("c3-16".to_string(), 1)]);
        assert_eq!(p.new_nodes[0].pods.len(), 5);
        let sizing = p.sizing.clone().unwrap();
        assert_eq!(
            sizing,
            Sizing::ExpectedArrivals {
                pending: 5,
                expected: 10,
                window_secs: 600,
                bought: Price(200_000_000),
                holds: 15,
                batch_alone: Price(100_000_000),
                batch_alone_holds: 7,
            }
        );
        assert_eq!(
            sizing.to_string(),
            "sized for 5 pending and ~10 expected pod(s) (as many arrived in the last 10m): \
             0.2000/h for 15 pod(s), 0.0133/h per pod, instead of 0.1000/h for 7, 0.0143/h per pod"
        );
        // The same input, the same plan.
        let again = plan(&s, &pending, &observe(&s, &pending, NOW.parse().unwrap()));
        assert_eq!(again.new_nodes, p.new_nodes);
    }

    #[test]
    fn at_an_equal_price_per_pod_the_node_with_room_for_more_is_bought() {
        // One pending pod and ~5 expected: the batch's c3-4 holds 3 of them (0.05/h, 1/60 per
        // pod), a c3-8 all 6 (0.1/h, the same per pod). The larger one is bought: a longer ramp
        // fills it, where the c3-4 would be replaced.
        let s = cluster("WhenEmptyOrUnderutilized", 4, 0, 1);
        let pending = batch(&s);
        let forecast = observe(&s, &pending, NOW.parse().unwrap());
        assert_eq!((forecast.arrivals, forecast.total()), (5, 5));
        let alone = super::super::plan_within(&s, &pending, None);
        assert_eq!(flavors(&alone), vec![("c3-4".to_string(), 1)]);
        let p = plan(&s, &pending, &forecast);
        assert_eq!(flavors(&p), vec![("c3-8".to_string(), 1)]);
        let sizing = p.sizing.clone().unwrap();
        assert_eq!(
            sizing.to_string(),
            "sized for 1 pending and ~5 expected pod(s) (as many arrived in the last 10m): \
             0.1000/h for 6 pod(s), 0.0167/h per pod, instead of 0.0500/h for 3, 0.0167/h per pod \
             (as cheap per pod, with room for more)"
        );
        // One pod fewer expected: the c3-8 would hold 5, dearer per pod; the batch's own c3-4.
        let s = cluster("WhenEmptyOrUnderutilized", 3, 0, 1);
        let pending = batch(&s);
        let p = plan(&s, &pending, &observe(&s, &pending, NOW.parse().unwrap()));
        assert_eq!(flavors(&p), vec![("c3-4".to_string(), 1)]);
        assert_eq!(p.sizing, None);
    }

    #[test]
    fn the_controller_provisions_with_the_forecast_and_notes_why() {
        use crate::controller::action::Action;
        let s = cluster("WhenEmptyOrUnderutilized", 5, 0, 5);
        let now: Timestamp = NOW.parse().unwrap();
        let (actions, notes) =
            crate::controller::provision::provision(&s, now, &crate::controller::Config::default());
        let bought: Vec<(String, usize)> = actions
            .iter()
            .filter_map(|a| match a {
                Action::CreateNodeClaim {
                    instance_type,
                    pods,
                    ..
                } => Some((instance_type.clone(), pods.len())),
                _ => None,
            })
            .collect();
        assert_eq!(bought, vec![("c3-16".to_string(), 5)]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("sized for 5 pending and ~10 expected pod(s)"),
            "{notes:?}"
        );
        // The same cluster with the recent pods 20 minutes old: nothing observable, c3-8.
        let old = cluster("WhenEmptyOrUnderutilized", 0, 5, 5);
        let (actions, notes) = crate::controller::provision::provision(
            &old,
            now,
            &crate::controller::Config::default(),
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert!(matches!(
            &actions[..],
            [Action::CreateNodeClaim { instance_type, .. }] if instance_type == "c3-8"
        ));
    }

    #[test]
    fn a_falling_load_or_a_one_shot_batch_is_planned_alone() {
        let now: Timestamp = NOW.parse().unwrap();
        // Fewer arrivals than in the window before: falling.
        let s = cluster("WhenEmptyOrUnderutilized", 5, 20, 5);
        let pending = batch(&s);
        let forecast = observe(&s, &pending, now);
        assert_eq!((forecast.arrivals, forecast.earlier), (10, 20));
        assert!(forecast.is_empty());
        let p = plan(&s, &pending, &forecast);
        assert_eq!(flavors(&p), vec![("c3-8".to_string(), 1)]);
        assert_eq!(p.sizing, None);
        // Consolidation's forecast expects them all the same (it only ever keeps a node).
        let caution = ahead(&s, now);
        assert_eq!(
            (caution.arrivals, caution.earlier, caution.total()),
            (10, 20, 10)
        );
        // Nothing arrived besides the batch: no growth is observable.
        let s = cluster("WhenEmptyOrUnderutilized", 0, 0, 5);
        let pending = batch(&s);
        let forecast = observe(&s, &pending, now);
        assert_eq!((forecast.arrivals, forecast.is_empty()), (5, true));
        // A pool that never consolidates keeps a wrong guess forever: no forecast.
        let mut never = cluster("WhenEmptyOrUnderutilized", 5, 0, 5);
        never.nodepools[0].consolidate_after = Some("Never".into());
        assert!(observe(&never, &batch(&never), now).is_empty());
        // WhenEmpty counts half the arrivals.
        let s = cluster("WhenEmpty", 5, 0, 5);
        assert_eq!(observe(&s, &batch(&s), now).total(), 5);
    }

    #[test]
    fn consolidations_forecast_ends_when_arrivals_at_a_pace_stop() {
        let at = |t: &str| -> Timestamp { format!("2026-12-02T{t}Z").parse().unwrap() };
        // Six recent pods, two a minute at 10:05, 10:06 and 10:07: a pace, 60 s the longest gap.
        let mut s = cluster("WhenEmptyOrUnderutilized", 6, 0, 0);
        let recent: Vec<usize> = (0..s.pods.len())
            .filter(|&i| s.pods[i].demand.name.starts_with("recent-"))
            .collect();
        for (k, &i) in recent.iter().enumerate() {
            Arc::make_mut(&mut s.pods[i]).created =
                Some(at(["10:05:00", "10:06:00", "10:07:00"][k / 2]));
        }
        // 90 s without an arrival, not yet twice the longest gap: all six expected again, until
        // 10:09:01.
        let f = ahead(&s, at("10:08:30"));
        assert_eq!((f.total(), f.ends), (6, Some(at("10:09:01"))));
        // 121 s without one: the arrivals stopped, nothing is expected.
        let f = ahead(&s, at("10:09:01"));
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(f.ends, None);
        // All six at one instant: no pace to tell a stop by; expected until the window passes.
        for &i in &recent {
            Arc::make_mut(&mut s.pods[i]).created = Some(at("10:05:00"));
        }
        let f = ahead(&s, at("10:14:59"));
        assert_eq!((f.total(), f.ends), (6, Some(at("10:15:00"))));
        assert!(ahead(&s, at("10:15:00")).is_empty());
    }

    #[test]
    fn balanced_counts_the_arrivals_in_full_as_it_consolidates_underutilized_nodes() {
        let now: Timestamp = NOW.parse().unwrap();
        let s = cluster("Balanced", 5, 0, 5);
        assert_eq!(s.nodepools[0].consolidation_policy, "Balanced");
        let pending = batch(&s);
        let forecast = observe(&s, &pending, now);
        assert_eq!((forecast.arrivals, forecast.total()), (10, 10));
        // The same plan as under WhenEmptyOrUnderutilized: a c3-16 for the 5 pending and the
        // ~10 expected, where WhenEmpty's half forecast keeps the batch's own c3-8.
        assert_eq!(
            flavors(&plan(&s, &pending, &forecast)),
            vec![("c3-16".to_string(), 1)]
        );
        let empty = cluster("WhenEmpty", 5, 0, 5);
        let half = observe(&empty, &batch(&empty), now);
        assert_eq!(
            flavors(&plan(&empty, &batch(&empty), &half)),
            vec![("c3-8".to_string(), 1)]
        );
        // The strictest pool decides: a Balanced pool beside a WhenEmpty one counts half.
        let mut mixed = cluster("Balanced", 5, 0, 5);
        let mut other = mixed.nodepools[0].clone();
        other.name = "other".into();
        other.consolidation_policy = "WhenEmpty".into();
        mixed.nodepools.push(other);
        assert_eq!(observe(&mixed, &batch(&mixed), now).total(), 5);
    }

    #[test]
    fn without_a_forecast_the_plan_is_the_batch_alone() {
        let s = cluster("WhenEmptyOrUnderutilized", 0, 0, 9);
        let pending = batch(&s);
        let alone = crate::sched::strategy::by_name(StrategyName::Cost).plan(&s, &pending);
        let p = plan(&s, &pending, &Forecast::default());
        assert_eq!(p.new_nodes, alone.new_nodes);
        assert_eq!(p.sizing, None);
    }
}
