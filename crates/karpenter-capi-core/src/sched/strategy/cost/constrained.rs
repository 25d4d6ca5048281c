//! Lower bounds on a batch's new nodes that count every pod and what constraints force, beside
//! the packing's linear relaxation (which covers only the pods it optimizes: pods with spread
//! or pod affinity are placed one at a time and left out of it, so on a mix of them it sits far
//! below any plan).
//!
//! - Resources: a node of an offering holds at most its allocatable, so the pods on it cost at
//!   least their CPU (or memory) times the offering's price per unit; per pod, the cheapest
//!   rate among the offerings it may use. The larger of the CPU and memory sums bounds the
//!   price.
//! - Hostname anti-affinity: pods that carry the same required anti-affinity term on the
//!   hostname and are selected by it never share a node, so each needs a node of its own, at
//!   least the cheapest offering it may use. The largest such sum over the groups bounds it.

use std::collections::HashMap;

use super::Allowed;
use crate::model::flavor::Price;
use crate::model::pod::AffinityTerm;
use crate::model::snapshot::Snapshot;
use crate::sched::catalog::Offering;
use crate::vocab::keys;

/// The larger of [`resource_bound`] and [`anti_affinity_bound`].
pub fn forced(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Price {
    resource_bound(snapshot, offerings, allowed, pods)
        .max(anti_affinity_bound(snapshot, offerings, allowed, pods))
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
            let rate = allowed
                .list(p)
                .into_iter()
                .filter_map(|o| offerings.get(o))
                .filter_map(|o| {
                    let room = [o.allocatable.cpu_millis, o.allocatable.memory_bytes][k];
                    (room > 0).then(|| o.flavor.price.0 as f64 / room as f64)
                })
                .fold(f64::INFINITY, f64::min);
            if rate.is_finite() {
                *sum += need[k] * rate;
            }
        }
    }
    // Floor, less a relative hair for floating point: a bound never exceeds the optimum.
    Price((sums[0].max(sums[1]) * (1.0 - 1e-9)).floor().max(0.0) as i64)
}

/// The least the new nodes for `pods` (snapshot indices, all bound for new nodes) can cost
/// because of hostname anti-affinity: per group of pods that exclude one another, the sum of
/// each pod's cheapest allowed offering; the largest group sum (zero without such groups).
pub fn anti_affinity_bound(
    snapshot: &Snapshot,
    offerings: &[Offering],
    allowed: &Allowed,
    pods: &[usize],
) -> Price {
    let mut groups: HashMap<&AffinityTerm, i64> = HashMap::new();
    for &p in pods {
        let demand = &snapshot.pods[p].demand;
        let cheapest = allowed
            .list(p)
            .into_iter()
            .filter_map(|o| offerings.get(o))
            .map(|o| o.flavor.price.0)
            .min();
        let Some(cheapest) = cheapest else { continue };
        for term in demand.anti_affinity.iter().filter(|t| {
            t.topology_key == keys::HOSTNAME && t.selects(&demand.namespace, &demand.labels)
        }) {
            // Every pod of the group carries `term` and is selected by it: no two share a node.
            *groups.entry(term).or_insert(0) += cheapest;
        }
    }
    Price(groups.into_values().max().unwrap_or(0))
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
}
