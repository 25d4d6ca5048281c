//! Cases of core v1.14's scheduling `suite_test.go` (`In-Flight Nodes`, `No Pre-Binding`) and
//! `topology_test.go` (`Combined Hostname and Zonal Topology`) that run several provisioning
//! passes: after each pass, every new node of the plan becomes a NodeClaim in flight (launched,
//! not registered), the earlier pods stay pending as they do until their node registers, and
//! the next pass plans them with the new batch. Through `cost`, and `karpenter-capi` where the
//! case says so.

use std::collections::BTreeMap;

use super::{flavor, plan, pod, snap};
use crate::model::snapshot::Snapshot;
use crate::rng::Lcg;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};
use crate::sched::strategy::{Placement, StrategyName};
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// Claims in flight so far: their text, and per claim name its instance type and zone.
#[derive(Default)]
struct InFlight {
    text: String,
    claims: BTreeMap<String, (String, String)>,
}

impl InFlight {
    /// Adds one claim in flight per new node of the plan, launched for the node's flavor and
    /// labelled with its zone.
    fn launch(&mut self, p: &Placement) {
        for n in &p.new_nodes {
            let name = format!("default-{}", self.claims.len());
            let md = n.offering.flavor.instance_type.clone();
            let zone = n.offering.labels.get(ZONE).cloned().unwrap_or_default();
            let zone_label = if zone.is_empty() {
                String::new()
            } else {
                format!(", {ZONE}: {zone}")
            };
            self.text.push_str(&format!(
                "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: {md}{zone_label}}}\n  annotations: {{karpenter-capi/machine-deployment: capi/{md}}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{conditions: [{{type: Launched, status: 'True'}}]}}\n"
            ));
            self.claims.insert(name, (md, zone));
        }
    }

    /// Pod names per node of the plan, claims in flight (by claim name) and new nodes
    /// (`new-<i>`), each with its zone.
    fn nodes(&self, s: &Snapshot, p: &Placement) -> BTreeMap<String, (String, Vec<String>)> {
        let mut out: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
        for (i, claim) in &p.on_in_flight {
            let zone = self
                .claims
                .get(claim)
                .map(|c| c.1.clone())
                .unwrap_or_default();
            out.entry(claim.clone())
                .or_insert((zone, Vec::new()))
                .1
                .push(s.pods[*i].demand.name.clone());
        }
        for (k, n) in p.new_nodes.iter().enumerate() {
            let zone = n.offering.labels.get(ZONE).cloned().unwrap_or_default();
            let pods = n
                .pods
                .iter()
                .map(|&i| s.pods[i].demand.name.clone())
                .collect();
            out.insert(format!("new-{k}"), (zone, pods));
        }
        out
    }
}

/// Pods per zone over every node of the plan, sorted descending.
fn zone_counts(nodes: &BTreeMap<String, (String, Vec<String>)>) -> Vec<usize> {
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for (zone, pods) in nodes.values() {
        *per.entry(zone.as_str()).or_insert(0) += pods.len();
    }
    let mut out: Vec<usize> = per.into_values().collect();
    out.sort_unstable_by(|a, b| b.cmp(a));
    out
}

fn hostname_spread(skew: u32) -> String {
    format!(
        "{{maxSkew: {skew}, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}"
    )
}

/// Four spread pods over hostnames get four nodes; once those are in flight, five more get
/// five new nodes, one pod on each of the nine (S-SCHED-120): a claim in flight is a hostname
/// domain holding the pods planned onto it.
#[test]
fn claims_in_flight_are_hostname_domains_for_the_next_batch() {
    let catalog = flavor("c4", 4, "0.10", "");
    let spec = format!("\n  topologySpreadConstraints: [{}]", hostname_spread(1));
    for strategy in [Cost, KarpenterCapi] {
        let mut flight = InFlight::default();
        let mut pods = String::new();
        let mut total = 0;
        for (batch, count) in [4, 5].into_iter().enumerate() {
            for _ in 0..count {
                pods.push_str(&pod(&format!("web-{total}"), "app: web", "500m", "", &spec));
                total += 1;
            }
            let s = snap(&(POOL.to_string() + &catalog + &flight.text + &pods));
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?} batch {batch}");
            let got = flight.nodes(&s, &p);
            assert_eq!(got.len(), total, "{strategy:?} batch {batch}: {got:?}");
            assert!(
                got.values().all(|(_, pods)| pods.len() == 1),
                "{strategy:?} batch {batch}: {got:?}"
            );
            assert_eq!(p.on_in_flight.len(), flight.claims.len(), "{strategy:?}");
            flight.launch(&p);
        }
    }
}

/// Ten passes of 0 to 9 one-core pods (a fixed pseudo-random sequence) on 4-core nodes: the
/// claims in flight are filled before new nodes are bought, so at the end at most one node has
/// a core free (S-SCHED-130).
#[test]
fn claims_in_flight_are_filled_before_new_nodes_across_passes() {
    let catalog = flavor("c4", 4, "0.10", "");
    for strategy in [Cost, KarpenterCapi] {
        let mut flight = InFlight::default();
        let mut pods = String::new();
        let mut total: usize = 0;
        let mut rng = Lcg(0x2545_f491_4f6c_dd1d);
        let mut last = None;
        for _ in 0..10 {
            let count = rng.below(10);
            for _ in 0..count {
                pods.push_str(&pod(&format!("p-{total}"), "app: p", "1", "", ""));
                total += 1;
            }
            let s = snap(&(POOL.to_string() + &catalog + &flight.text + &pods));
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?}");
            flight.launch(&p);
            last = Some(flight.nodes(&s, &p));
        }
        assert!(total > 20, "the sequence has {total} pods");
        let nodes = last.unwrap_or_default();
        let with_room = nodes.values().filter(|(_, p)| p.len() < 4).count();
        assert!(with_room <= 1, "{strategy:?}: {nodes:?}");
        assert_eq!(flight.claims.len(), total.div_ceil(4), "{strategy:?}");
    }
}

/// Two pods with self affinity on zones, not bound: the first gets a node; with that node in
/// flight the second, planned alone or with its unbound peer, goes onto it and no second node
/// is bought (S-SCHED-141).
#[test]
fn self_zonal_affinity_follows_the_claim_in_flight() {
    let catalog: String = (1..=3)
        .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
        .collect();
    let spec = format!(
        "\n  affinity: {{podAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{security: s2}}}}, topologyKey: {ZONE}}}]}}}}"
    );
    let first = pod("s-0", "security: s2", "1", "", &spec);
    let second = pod("s-1", "security: s2", "1", "", &spec);
    for strategy in [Cost, KarpenterCapi] {
        let mut flight = InFlight::default();
        let s = snap(&(POOL.to_string() + &catalog + &first));
        let p = plan(&s, strategy);
        assert_eq!(p.new_nodes.len(), 1, "{strategy:?}");
        flight.launch(&p);
        let s = snap(&(POOL.to_string() + &catalog + &flight.text + &first + &second));
        // Both pending pods, then the second alone (its peer left out of the batch).
        for pending in [vec![0, 1], vec![1]] {
            let p = by_name_plan(&s, strategy, &pending);
            assert!(p.unschedulable.is_empty(), "{strategy:?} {pending:?}");
            assert!(p.new_nodes.is_empty(), "{strategy:?} {pending:?}");
            assert_eq!(
                p.on_in_flight.len(),
                pending.len(),
                "{strategy:?} {pending:?}"
            );
        }
    }
}

fn by_name_plan(s: &Snapshot, strategy: StrategyName, pending: &[usize]) -> Placement {
    crate::sched::strategy::by_name(strategy).plan(s, pending)
}

/// Pods spread over zones (skew 1) and hostnames (skew 3), in batches of 2, 3, 5 and 11 with
/// the earlier nodes in flight: the zones hold 1-1, then 2-2-1, 4-3-3 and 7-7-7, and no node
/// more than 3 pods (S-TOPO-036).
#[test]
fn zonal_and_hostname_spreads_hold_across_batches() {
    let catalog: String = (1..=3)
        .map(|z| flavor(&format!("c8-z{z}"), 8, "0.10", &format!("{ZONE}=z{z}")))
        .collect();
    let spec = format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}, {}]",
        hostname_spread(3)
    );
    for strategy in [Cost, KarpenterCapi] {
        let mut flight = InFlight::default();
        let mut pods = String::new();
        let mut total = 0;
        for (count, want) in [
            (2, vec![1, 1]),
            (3, vec![2, 2, 1]),
            (5, vec![4, 3, 3]),
            (11, vec![7, 7, 7]),
        ] {
            for _ in 0..count {
                pods.push_str(&pod(&format!("web-{total}"), "app: web", "500m", "", &spec));
                total += 1;
            }
            let s = snap(&(POOL.to_string() + &catalog + &flight.text + &pods));
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?} {total}");
            let nodes = flight.nodes(&s, &p);
            assert_eq!(zone_counts(&nodes), want, "{strategy:?}: {nodes:?}");
            assert!(
                nodes.values().all(|(_, pods)| pods.len() <= 3),
                "{strategy:?}: {nodes:?}"
            );
            flight.launch(&p);
        }
    }
}

/// A zonal spread limited by required node affinity, over three passes: six pods allowed z1
/// and z2 go 3-3; one allowed z2 and z3 then goes to the empty z3 (3-3-1, the skew improving);
/// five unconstrained ones then even the zones out at 4-4-4 (S-TOPO-053).
#[test]
fn node_affinity_limits_the_spread_domains_across_batches() {
    let catalog: String = (1..=3)
        .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
        .collect();
    let spread = format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}]"
    );
    let within = |zones: &str| {
        format!(
            "{spread}\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {ZONE}, operator: In, values: [{zones}]}}]}}]}}}}}}"
        )
    };
    for strategy in [Cost, KarpenterCapi] {
        let mut flight = InFlight::default();
        let mut pods = String::new();
        let mut total = 0;
        for (count, spec, want) in [
            (6, within("z1, z2"), vec![3, 3]),
            (1, within("z2, z3"), vec![3, 3, 1]),
            (5, spread.clone(), vec![4, 4, 4]),
        ] {
            for _ in 0..count {
                pods.push_str(&pod(
                    &format!("web-{total:02}"),
                    "app: web",
                    "500m",
                    "",
                    &spec,
                ));
                total += 1;
            }
            let s = snap(&(POOL.to_string() + &catalog + &flight.text + &pods));
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?} {total}");
            let nodes = flight.nodes(&s, &p);
            assert_eq!(zone_counts(&nodes), want, "{strategy:?}: {nodes:?}");
            flight.launch(&p);
        }
    }
}
