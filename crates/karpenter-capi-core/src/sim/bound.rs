//! The replay's lower bound: what no autoscaler can bill less than over a trace. At each
//! instant the trace's alive pods (created and not yet removed, pending ones included) and the
//! scenario's own pending pods are covered fractionally by the cheapest mix of flavors — each
//! flavor's allocatable minus the requests of the DaemonSet pods that land on it, priced per
//! hour — after the free room of the scenario's own nodes; the rate is integrated over the
//! replay as Machines are billed (price per hour times hours, no minimum). Constraints
//! (anti-affinity, spread, pod slots) only raise the true optimum, so they are left out.

use super::Ms;
use super::cluster::{Mode, SimCluster};
use super::trace::Trace;
use crate::error::Error;
use crate::model::flavor::Price;
use crate::model::snapshot::Snapshot;
use crate::vocab::keys;

/// A flavor as the bound sees it: room for the trace's pods, and its price.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Room {
    cpu: f64,
    memory: f64,
    price: f64,
}

/// The cheapest fractional cover of `(cpu, memory)` by the flavors, per hour. With two
/// resources a linear program's optimum uses at most two flavors: one flavor sized by its
/// binding resource, or two with both resources exactly covered.
fn cover(rooms: &[Room], cpu: f64, memory: f64) -> f64 {
    if cpu <= 0.0 && memory <= 0.0 {
        return 0.0;
    }
    let mut best = f64::INFINITY;
    for r in rooms {
        let n = (cpu / r.cpu).max(memory / r.memory);
        best = best.min(n * r.price);
    }
    for (i, a) in rooms.iter().enumerate() {
        for b in &rooms[i + 1..] {
            let det = a.cpu * b.memory - b.cpu * a.memory;
            if det.abs() < 1e-9 {
                continue;
            }
            let x = (cpu * b.memory - b.cpu * memory) / det;
            let y = (a.cpu * memory - cpu * a.memory) / det;
            if x >= 0.0 && y >= 0.0 {
                best = best.min(x * a.price + y * b.price);
            }
        }
    }
    best
}

/// The lower bound on the cost (in the currency of the prices) of replaying `trace` over
/// `scenario` until `horizon`. `None` when no flavor has room for pods.
pub fn lower_bound(scenario: &Snapshot, trace: &Trace, horizon: Ms) -> Result<Option<f64>, Error> {
    let c = SimCluster::new(
        scenario,
        trace,
        Mode {
            karpenter: true,
            claim_finalizer: false,
        },
    )?;
    let snap = &c.snap;
    let mut rooms = Vec::new();
    for md in snap.all_members() {
        let Ok(f) = md.flavor.as_ref() else { continue };
        let mut labels = f.labels.clone();
        labels.insert(keys::HOSTNAME.to_string(), "bound".to_string());
        labels
            .entry(keys::OS.to_string())
            .or_insert_with(|| "linux".to_string());
        let (mut cpu, mut memory) = (f.capacity.cpu_millis, f.capacity.memory_bytes);
        // The DaemonSet pods that land on it (as the simulated DaemonSet controller places them).
        for d in snap
            .daemonsets
            .iter()
            .filter(|d| d.pod.node_requirement_unmet(&labels).is_none())
        {
            cpu -= d.pod.requests.cpu_millis;
            memory -= d.pod.requests.memory_bytes;
        }
        if cpu > 0 && memory > 0 {
            rooms.push(Room {
                cpu: cpu as f64,
                memory: memory as f64,
                price: f.price.0 as f64 / Price::UNIT as f64,
            });
        }
    }
    if rooms.is_empty() {
        return Ok(None);
    }
    // The scenario's own nodes (not billed by the replay) take what fits in their free room.
    let (mut free_cpu, mut free_memory) = (0i64, 0i64);
    for n in &snap.nodes {
        let (mut cpu, mut memory) = (n.allocatable.cpu_millis, n.allocatable.memory_bytes);
        for p in snap
            .pods
            .iter()
            .filter(|p| !p.terminal && p.node_name.as_deref() == Some(n.name.as_str()))
        {
            cpu -= p.demand.requests.cpu_millis;
            memory -= p.demand.requests.memory_bytes;
        }
        free_cpu += cpu.max(0);
        free_memory += memory.max(0);
    }
    // The scenario's own pending pods (not the trace's) wait for room all along.
    let (mut base_cpu, mut base_memory) = (0i64, 0i64);
    for p in snap.pods.iter().filter(|p| p.is_pending()) {
        base_cpu += p.demand.requests.cpu_millis;
        base_memory += p.demand.requests.memory_bytes;
    }
    let templates = c.templates();
    let alive = trace.alive(horizon);
    let mut total = 0.0;
    for (i, (t, counts)) in alive.iter().enumerate() {
        let until = alive.get(i + 1).map_or(horizon, |x| x.0).min(horizon);
        if until <= *t {
            continue;
        }
        let (mut cpu, mut memory) = (base_cpu, base_memory);
        for (w, n) in counts.iter().enumerate() {
            if let Some(d) = templates.get(w) {
                cpu += n * d.requests.cpu_millis;
                memory += n * d.requests.memory_bytes;
            }
        }
        let rate = cover(
            &rooms,
            (cpu - free_cpu).max(0) as f64,
            (memory - free_memory).max(0) as f64,
        );
        total += rate * (until - t) as f64 / 3_600_000.0;
    }
    Ok(Some(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_takes_the_cheapest_flavor_per_binding_resource() {
        let small = Room {
            cpu: 1900.0,
            memory: 3_800.0,
            price: 0.05,
        };
        let big = Room {
            cpu: 7900.0,
            memory: 15_800.0,
            price: 0.2,
        };
        // CPU binds: 10 cores on the big flavor's 7.9 (cheaper per core than 1.9 for 0.05).
        let got = cover(&[small, big], 10_000.0, 100.0);
        assert!((got - 10.0 / 7.9 * 0.2).abs() < 1e-12, "{got}");
        assert_eq!(cover(&[small, big], 0.0, 0.0), 0.0);
    }

    #[test]
    fn cover_mixes_two_flavors_when_each_is_cheap_in_one_resource() {
        // A CPU-heavy and a memory-heavy flavor, both priced 1: a demand of (10, 10) is met
        // exactly by 10/11 of each (10·a + 1·b = 10 both ways), cost 20/11; either alone
        // costs 10.
        let cpu = Room {
            cpu: 10.0,
            memory: 1.0,
            price: 1.0,
        };
        let mem = Room {
            cpu: 1.0,
            memory: 10.0,
            price: 1.0,
        };
        let got = cover(&[cpu, mem], 10.0, 10.0);
        assert!((got - 20.0 / 11.0).abs() < 1e-12, "{got}");
    }
}
