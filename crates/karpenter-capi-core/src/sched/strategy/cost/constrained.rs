//! Lower bounds on a batch's new nodes that count every pod and what constraints force, beside
//! the packing's linear relaxation (which covers only the pods it optimizes: pods with spread
//! or pod affinity are placed one at a time and left out of it, so on a mix of them it sits far
//! below any plan).
//!
//! - Resources: a node of an offering holds at most its allocatable, so the pods on it cost at
//!   least their CPU (or memory) times the offering's price per unit; per pod, the cheapest
//!   rate among the offerings it may use. The larger of the CPU and memory sums bounds the
//!   price.
//! - Spread minima: pods under one hard topology spread constraint on another key (a zone)
//!   that selects them end with every domain's count within `maxSkew` of the smallest (a
//!   domain's count at its last placement was, and the smallest only grows), so `k` of them over
//!   at most `Z` domains put at least `ceil((k - (Z - 1) maxSkew) / Z)` in each; the pods a
//!   domain must take beyond what it holds cost at least that domain's cheapest rate, so the
//!   sums grow by their premium over each pod's cheapest rate (the largest over the groups, as
//!   one pod may be in several). Domains are over-counted (every node, flavor and offering
//!   carrying the key) and the pods already there or pending elsewhere taken as anywhere: the
//!   bound stays below every plan.
//! - Per-node caps: pods that carry the same required anti-affinity term on the hostname and
//!   are selected by it never share a node; pods that carry the same hard topology spread
//!   constraint on the hostname and are selected by it are at most `maxSkew` to a node (a new
//!   node is a hostname domain of its own, so the smallest count is 0: `sched::topology`). A
//!   node costs at least the cheapest offering each of its pods may use, so the group's nodes
//!   cost at least the sum of every cap-th of those prices, largest first. The largest such sum
//!   over the groups bounds it.

use std::collections::HashMap;

use super::Allowed;
use crate::model::constraints::SpreadConstraint;
use crate::model::flavor::Price;
use crate::model::pod::AffinityTerm;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::Offering;
use crate::vocab::keys;

/// The larger of [`resource_bound`] and [`per_node_cap_bound`].
pub fn forced(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Price {
    resource_bound(snapshot, offerings, allowed, pods)
        .max(per_node_cap_bound(snapshot, offerings, allowed, pods))
}

/// The least the new nodes for `pods` can cost for their CPU, or for their memory: each pod's
/// request times the cheapest price per unit of allocatable among the offerings it may use.
pub fn resource_bound(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Price {
    let mut sums = [0.0f64; 2];
    for &p in pods {
        let r = &snapshot.pods[p].demand.requests;
        let need = [r.cpu_millis as f64, r.memory_bytes as f64];
        for (k, sum) in sums.iter_mut().enumerate() {
            let rate = cheapest_rate(offerings, allowed, p, k, |_| true);
            if rate.is_finite() {
                *sum += need[k] * rate;
            }
        }
    }
    let premium = spread_premium(snapshot, offerings, allowed, pods);
    for (sum, extra) in sums.iter_mut().zip(premium) {
        *sum += extra;
    }
    // Floor, less a relative hair for floating point: a bound never exceeds the optimum.
    Price((sums[0].max(sums[1]) * (1.0 - 1e-9)).floor().max(0.0) as i64)
}

/// The cheapest price per unit of CPU (k = 0) or memory (k = 1) among the offerings `pod` may
/// use that `keep` admits; infinite without one.
fn cheapest_rate(
    offerings: &[Offering],
    allowed: &Allowed,
    pod: usize,
    k: usize,
    keep: impl Fn(&Offering) -> bool,
) -> f64 {
    allowed
        .list(pod)
        .into_iter()
        .filter_map(|o| offerings.get(o))
        .filter(|o| keep(o))
        .filter_map(|o| {
            let room = [o.allocatable.cpu_millis, o.allocatable.memory_bytes][k];
            (room > 0).then(|| o.flavor.price.0 as f64 / room as f64)
        })
        .fold(f64::INFINITY, f64::min)
}

/// What the spread minima (the module's rule) add to the CPU and the memory sums of
/// [`resource_bound`].
fn spread_premium(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> [f64; 2] {
    let mut groups: HashMap<(&str, &SpreadConstraint), Vec<usize>> = HashMap::new();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        for c in demand.spread.iter().filter(|c| {
            c.hard
                && c.max_skew > 0
                && c.topology_key != keys::HOSTNAME
                && c.selector.matches(&demand.labels)
        }) {
            groups.entry((&demand.namespace, c)).or_default().push(p);
        }
    }
    let mut best = [0.0f64; 2];
    for ((namespace, c), members) in groups {
        let key = c.topology_key.as_str();
        // Every domain a plan might count.
        let mut domains: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        domains.extend(
            snapshot
                .nodes
                .iter()
                .filter_map(|n| n.labels.get(key).map(String::as_str)),
        );
        domains.extend(
            offerings
                .iter()
                .filter_map(|o| o.labels.get(key).map(String::as_str)),
        );
        domains.extend(
            snapshot
                .machine_deployments
                .iter()
                .filter_map(|md| md.flavor.as_ref().ok())
                .filter_map(|f| f.labels.get(key).map(String::as_str)),
        );
        let z = domains.len() as i64;
        let k = members.len() as i64;
        let spare = k - (z - 1) * i64::from(c.max_skew);
        if z == 0 || spare <= 0 {
            continue;
        }
        let least = (spare + z - 1) / z;
        // Per domain and resource, the least premium a member pays there (over its cheapest
        // rate anywhere); a domain none pays one for adds nothing, and with none at all (zones
        // priced alike) the group's pods are not counted.
        let premiums: Vec<(&str, [f64; 2])> = domains
            .into_iter()
            .map(|domain| {
                let per = [0, 1].map(|r| {
                    members
                        .iter()
                        .map(|&p| {
                            let req = &snapshot.pods[p].demand.requests;
                            let amount = [req.cpu_millis, req.memory_bytes][r] as f64;
                            let there = cheapest_rate(offerings, allowed, p, r, |o| {
                                o.labels.get(key).map(String::as_str) == Some(domain)
                            });
                            amount * (there - cheapest_rate(offerings, allowed, p, r, |_| true))
                        })
                        .fold(f64::INFINITY, f64::min)
                });
                (domain, per)
            })
            .filter(|(_, per)| per.iter().any(|x| x.is_finite() && *x > 0.0))
            .collect();
        if premiums.is_empty() {
            continue;
        }
        // Selected pods already bound, per domain, and those pending outside the group (they
        // may land anywhere).
        let zone_of: HashMap<&str, &str> = snapshot
            .nodes
            .iter()
            .filter_map(|n| Some((n.name.as_str(), n.labels.get(key)?.as_str())))
            .collect();
        let mut held: HashMap<&str, i64> = HashMap::new();
        let mut elsewhere = 0i64;
        let in_group: std::collections::HashSet<usize> = members.iter().copied().collect();
        for (i, p) in snapshot.pods.iter().enumerate() {
            let d = &p.demand;
            if p.terminal || d.namespace != namespace || !c.selector.matches(&d.labels) {
                continue;
            }
            match p.node_name.as_deref() {
                Some(node) => {
                    if let Some(v) = zone_of.get(node) {
                        *held.entry(v).or_insert(0) += 1;
                    }
                }
                None if !in_group.contains(&i) => elsewhere += 1,
                None => {}
            }
        }
        let mut extra = [0.0f64; 2];
        for (domain, per) in premiums {
            let need = least - held.get(domain).copied().unwrap_or(0) - elsewhere;
            if need <= 0 {
                continue;
            }
            for (e, premium) in extra.iter_mut().zip(per) {
                if premium.is_finite() && premium > 0.0 {
                    *e += need as f64 * premium;
                }
            }
        }
        for (b, e) in best.iter_mut().zip(extra) {
            *b = b.max(e);
        }
    }
    best
}

/// A group of pods of which one node holds at most a few.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Capped<'a> {
    /// Carrying this required hostname anti-affinity term, and selected by it: one per node.
    AntiAffinity(&'a AffinityTerm),
    /// Carrying this hard hostname spread constraint in this namespace, and selected by it:
    /// `maxSkew` per node.
    Spread(&'a str, &'a SpreadConstraint),
}

/// The least the new nodes for `pods` (snapshot indices, all bound for new nodes) can cost
/// because of per-node caps (the module's rule); zero without such groups.
pub fn per_node_cap_bound(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Price {
    // Per group: its cap, and each pod's cheapest allowed offering.
    let mut groups: HashMap<Capped<'_>, (usize, Vec<i64>)> = HashMap::new();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        let cheapest = allowed
            .list(p)
            .into_iter()
            .filter_map(|o| offerings.get(o))
            .map(|o| o.flavor.price.0)
            .min();
        let Some(cheapest) = cheapest else { continue };
        let anti = demand
            .anti_affinity
            .iter()
            .filter(|t| {
                t.topology_key == keys::HOSTNAME && t.selects(&demand.namespace, &demand.labels)
            })
            .map(|t| (Capped::AntiAffinity(t), 1));
        let spread = demand
            .spread
            .iter()
            .filter(|c| {
                c.hard
                    && c.max_skew > 0
                    && c.topology_key == keys::HOSTNAME
                    && c.selector.matches(&demand.labels)
            })
            .map(|c| (Capped::Spread(&demand.namespace, c), c.max_skew as usize));
        for (group, cap) in anti.chain(spread) {
            groups
                .entry(group)
                .or_insert((cap, Vec::new()))
                .1
                .push(cheapest);
        }
    }
    let least = groups.into_values().map(|(cap, mut prices)| {
        // Nodes of at most `cap` pods each, a node at least its dearest pod's cheapest price:
        // the dearest `cap` on one node, the next `cap` on another, and so on.
        prices.sort_unstable_by(|a, b| b.cmp(a));
        prices.iter().step_by(cap.max(1)).sum::<i64>()
    });
    Price(least.max().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use crate::model::load::{Source, snapshot_from_sources};
    use crate::sched::strategy::{StrategyName, by_name};

    /// Karpenter's scheduling-benchmark shape, small: `fake-it-<i>` with i+1 vCPU and 2(i+1)
    /// GiB at 0.1 per vCPU and per GiB, a 100m / 10Mi DaemonSet; a fifth of the pods with
    /// required hostname anti-affinity (`app: nginx`), a fifth with hostname spread, a fifth
    /// with zone spread, the rest generic.
    fn full_mix(types: usize, pods: usize) -> String {
        let mut y = String::from(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}\n      requirements: []\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kube-reserved, namespace: kube-system}\nspec:\n  selector: {matchLabels: {app: r}}\n  template:\n    metadata: {labels: {app: r}}\n    spec:\n      tolerations: [{operator: Exists}]\n      containers: [{name: r, resources: {requests: {cpu: 100m, memory: 10Mi}}}]\n",
        );
        for i in 0..types {
            let (cpu, mem) = (i + 1, 2 * (i + 1));
            let price = format!("{:.1}", 0.3 * cpu as f64);
            for zone in ["zone-a", "zone-b"] {
                let _ = write!(
                    y,
                    "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: fake-it-{i}-{zone}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {mem}Gi\n    capacity.cluster-autoscaler.kubernetes.io/maxPods: '110'\n    capacity.cluster-autoscaler.kubernetes.io/price: '{price}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-{i},topology.kubernetes.io/zone={zone},kubernetes.io/arch=amd64\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n"
                );
            }
        }
        let cpus = [100, 250, 500, 1000, 1500];
        let mems = [100, 256, 512, 1024, 2048];
        for i in 0..pods {
            let (cpu, mem) = (cpus[(i * 7) % 5], mems[(i * 3) % 5]);
            let v = ["a", "b", "c"][i % 3];
            let (labels, extra) = match i % 5 {
                1 => (
                    format!("{{my-label: {v}}}"),
                    format!("\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{my-label: {v}}}}}}}"),
                ),
                2 => (
                    format!("{{my-label: {v}}}"),
                    format!("\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{my-label: {v}}}}}}}"),
                ),
                4 => (
                    "{app: nginx}".to_string(),
                    "\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {matchLabels: {app: nginx}}\n        topologyKey: kubernetes.io/hostname".to_string(),
                ),
                _ => (format!("{{my-label: {v}}}"), String::new()),
            };
            let _ = write!(
                y,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {labels}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}}}]{extra}\n"
            );
        }
        y
    }

    fn plan(
        text: String,
    ) -> (
        crate::model::snapshot::Snapshot,
        crate::sched::strategy::Placement,
    ) {
        let snap = snapshot_from_sources(&[Source {
            name: "mix".into(),
            text,
        }])
        .unwrap();
        let pending: Vec<usize> = (0..snap.pods.len()).collect();
        let p = by_name(StrategyName::Cost).plan(&snap, &pending);
        assert!(p.unschedulable.is_empty(), "{:?}", p.unschedulable);
        (snap, p)
    }

    fn per_hour(p: crate::model::flavor::Price) -> f64 {
        p.0 as f64 / crate::model::flavor::Price::UNIT as f64
    }

    #[test]
    fn the_bound_counts_every_pod_of_the_full_mix() {
        let (snap, p) = plan(full_mix(8, 150));
        let bound = per_hour(p.lower_bound.unwrap());
        // Every pod's CPU at the cheapest rate (fake-it-7: 2.4/h for 7.9 vCPU after the
        // DaemonSet), whether the optimizer or the one-at-a-time placement packs it: 100.5
        // vCPU.
        let cpu: i64 = snap.pods.iter().map(|p| p.demand.requests.cpu_millis).sum();
        assert_eq!(cpu, 100_500);
        let by_cpu = cpu as f64 * 2.4 / 7_900.0;
        assert!(bound >= by_cpu * 0.999_999, "bound {bound}, CPU {by_cpu}");
        let price = per_hour(p.price());
        assert!(price >= bound, "{price} vs {bound}");
        assert!(price <= 1.25 * bound, "plan {price}/h, bound {bound}/h");
    }

    #[test]
    fn pods_that_exclude_one_another_count_a_node_each() {
        // Twelve 100m nginx pods, one per node: twelve fake-it-0 (0.3/h) at least, where their
        // 1.2 vCPU alone would say 0.36/h.
        let mut text = full_mix(4, 0);
        for i in 0..12 {
            let _ = write!(
                text,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: n{i}, namespace: default, labels: {{app: nginx}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 100Mi}}}}}}]\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {{matchLabels: {{app: nginx}}}}\n        topologyKey: kubernetes.io/hostname\n"
            );
        }
        let (_, p) = plan(text);
        let bound = per_hour(p.lower_bound.unwrap());
        assert!((bound - 3.6).abs() < 1e-6, "{bound}");
        assert_eq!(p.new_nodes.len(), 12);
        assert!((per_hour(p.price()) - 3.6).abs() < 1e-6);
    }

    /// Twelve 100m pods under one hostname spread constraint that selects them, `maxSkew` 2.
    fn hostname_spread(when: &str) -> String {
        let mut text = full_mix(4, 0);
        for i in 0..12 {
            let _ = write!(
                text,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: s{i}, namespace: default, labels: {{app: spread}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 100m, memory: 100Mi}}}}}}]\n  topologySpreadConstraints:\n  - {{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: spread}}}}}}\n"
            );
        }
        text
    }

    #[test]
    fn pods_spread_over_zones_pay_each_zone_its_share() {
        // The mix's four flavors, zone-b's at twice zone-a's price; ten 500m pods spread over
        // the zones with maxSkew 1: five must go to zone-b. The cheapest CPU is fake-it-3's in
        // zone-a (1.2/h for 3.9 vCPU after the DaemonSet), zone-b's twice that: 5 vCPU at the
        // first rate plus 2.5 vCPU at the difference, 1.5385 + 0.7692 = 2.3077/h, where the
        // CPU alone said 1.5385/h. The plan is a fake-it-2 in each zone (0.9 + 1.8).
        let mut text = full_mix(4, 0).replace(
            "capacity.cluster-autoscaler.kubernetes.io/price: '0.3'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-0,topology.kubernetes.io/zone=zone-b",
            "capacity.cluster-autoscaler.kubernetes.io/price: '0.6'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-0,topology.kubernetes.io/zone=zone-b",
        );
        for (i, (a, b)) in [("0.6", "1.2"), ("0.9", "1.8"), ("1.2", "2.4")]
            .iter()
            .enumerate()
        {
            text = text.replace(
                &format!("price: '{a}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-{},topology.kubernetes.io/zone=zone-b", i + 1),
                &format!("price: '{b}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=fake-it-{},topology.kubernetes.io/zone=zone-b", i + 1),
            );
        }
        assert_eq!(text.matches("price: '2.4'").count(), 1, "{text}");
        for i in 0..10 {
            let _ = write!(
                text,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: z{i}, namespace: default, labels: {{app: zoned}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 500m, memory: 100Mi}}}}}}]\n  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: zoned}}}}}}\n"
            );
        }
        let (_, p) = plan(text);
        let bound = per_hour(p.lower_bound.unwrap());
        let expected = 5_000.0 * 1.2 / 3_900.0 + 2_500.0 * 1.2 / 3_900.0;
        assert!((bound - expected).abs() < 1e-4, "{bound} vs {expected}");
        assert!(
            (per_hour(p.price()) - 2.7).abs() < 1e-6,
            "{}",
            per_hour(p.price())
        );
    }

    #[test]
    fn pods_spread_over_hostnames_count_a_node_per_max_skew() {
        // At most two to a node: six fake-it-0 (0.3/h) at least, 1.8/h, where their 1.2 vCPU
        // alone would say 0.36/h; the plan is those six nodes.
        let (_, p) = plan(hostname_spread("DoNotSchedule"));
        let bound = per_hour(p.lower_bound.unwrap());
        assert!((bound - 1.8).abs() < 1e-6, "{bound}");
        assert_eq!(p.new_nodes.len(), 6);
        assert!((per_hour(p.price()) - 1.8).abs() < 1e-6);
        // ScheduleAnyway forces nothing: the resource bound, one fake-it-1 for all twelve (1.2
        // vCPU of its 1.9 after the DaemonSet, 0.6/h).
        let (_, p) = plan(hostname_spread("ScheduleAnyway"));
        let bound = per_hour(p.lower_bound.unwrap());
        assert!(bound < 0.4, "{bound}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 24,
            rng_seed: proptest::test_runner::RngSeed::Fixed(7),
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// On catalogs whose zones differ in price, with pods under zone spread (half of them),
        /// hostname spread and none, of random skews, no plan is cheaper than its bound.
        #[test]
        fn no_plan_is_below_the_bound_under_spread(
            zone_prices in proptest::collection::vec(1u32..4, 2..4),
            pods in proptest::collection::vec((0usize..4, 0usize..4, 1i32..3, 0usize..2), 1..40),
        ) {
            let mut text = full_mix(0, 0);
            for (z, factor) in zone_prices.iter().enumerate() {
                for cpu in [1u32, 2, 4] {
                    let _ = write!(
                        text,
                        "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata:\n  name: t{cpu}-z{z}\n  namespace: capi\n  labels: {{node.cluster.x-k8s.io/karpenter-member: ''}}\n  annotations:\n    capacity.cluster-autoscaler.kubernetes.io/cpu: '{cpu}'\n    capacity.cluster-autoscaler.kubernetes.io/memory: {}Gi\n    capacity.cluster-autoscaler.kubernetes.io/maxPods: '110'\n    capacity.cluster-autoscaler.kubernetes.io/price: '{}'\n    capacity.cluster-autoscaler.kubernetes.io/labels: node.kubernetes.io/instance-type=t{cpu},topology.kubernetes.io/zone=z{z},kubernetes.io/arch=amd64\nspec: {{clusterName: c, replicas: 0, template: {{spec: {{clusterName: c}}}}}}\n",
                        2 * cpu,
                        cpu * factor
                    );
                }
            }
            for (i, (size, kind, skew, group)) in pods.iter().enumerate() {
                let cpu = [100, 250, 500, 900][*size];
                let spread = match kind {
                    0 => String::new(),
                    1 | 2 => format!("\n  topologySpreadConstraints:\n  - {{maxSkew: {skew}, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{g: z{group}}}}}}}"),
                    _ => format!("\n  topologySpreadConstraints:\n  - {{maxSkew: {skew}, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{g: h{group}}}}}}}"),
                };
                let label = ["plain", "z", "z", "h"][*kind];
                let _ = write!(
                    text,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {{g: {label}{group}}}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m, memory: 100Mi}}}}}}]{spread}\n"
                );
            }
            let snap = snapshot_from_sources(&[Source { name: "spread".into(), text }]).unwrap();
            let pending: Vec<usize> = (0..snap.pods.len()).collect();
            let p = by_name(StrategyName::Cost).plan(&snap, &pending);
            if let Some(bound) = p.lower_bound {
                proptest::prop_assert!(bound <= p.price(), "bound {:?} above the plan {:?}", bound, p.price());
            }
        }
    }
}
