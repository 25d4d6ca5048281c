//! Volume topology, after core v1.14's provisioning `suite_test.go` (`Volume Topology
//! Requirements`) and scheduling `suite_test.go` (`VolumeUsage`; core `volumetopology.go`), in
//! our own inputs through `cost`: a bound volume's zone pins the pod, whatever its claim's
//! class; the hostname of a local or hostPath volume is dropped and the rest kept; a StorageClass
//! or volume allowing several zones lets anti-affine pods use them; conflicts leave the pod
//! pending, and an invalid pod does not hold the others back.

use std::collections::BTreeMap;

use super::{flavor, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::Cost;
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

fn zonal() -> String {
    (1..=3)
        .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
        .collect()
}

/// A PersistentVolume `name` with these extra spec lines and required node-affinity terms
/// (each a `matchExpressions` flow list).
fn pv(name: &str, spec: &str, terms: &[&str]) -> String {
    let terms: String = terms
        .iter()
        .map(|t| format!("\n      - matchExpressions: {t}"))
        .collect();
    format!(
        "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}}}\nspec:\n  capacity: {{storage: 1Gi}}{spec}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:{terms}\n"
    )
}

/// A PersistentVolumeClaim `name` in `default` with this spec flow-map body; one naming a
/// volume carries the binder's bind-completed annotation (it is bound).
fn pvc(name: &str, spec: &str) -> String {
    let annotations = if spec.contains("volumeName") {
        ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"
    } else {
        ""
    };
    format!(
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: default{annotations}}}\nspec: {{{spec}}}\n"
    )
}

fn class(name: &str, zones: &str) -> String {
    format!(
        "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}}}\nprovisioner: x\nallowedTopologies:\n- matchLabelExpressions: [{{key: {ZONE}, values: [{zones}]}}]\n"
    )
}

/// A 1-core pod mounting claim `claim`, with extra spec lines.
fn mounting(name: &str, claim: &str, spec: &str) -> String {
    pod(
        name,
        "app: v",
        "1",
        "",
        &format!("\n  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]{spec}"),
    )
}

fn zones(s: &Snapshot, p: &Placement) -> BTreeMap<String, String> {
    p.new_nodes
        .iter()
        .flat_map(|n| {
            n.pods.iter().map(|&i| {
                (
                    s.pods[i].demand.name.clone(),
                    n.offering.labels.get(ZONE).cloned().unwrap_or_default(),
                )
            })
        })
        .collect()
}

fn zone_of(s: &Snapshot, p: &Placement, name: &str) -> Option<String> {
    zones(s, p).get(name).cloned()
}

const IN_Z2: &str = "[{key: topology.kubernetes.io/zone, operator: In, values: [z2]}]";

/// A claim bound to a z2 volume pins its pod to z2 with no class or the empty class
/// (P-PROV-068) or a class that does not exist (P-PROV-070).
#[test]
fn a_bound_volume_pins_its_pod_whatever_the_class() {
    for claim_spec in [
        "volumeName: pv-1",
        "volumeName: pv-1, storageClassName: ''",
        "volumeName: pv-1, storageClassName: gone",
    ] {
        let text = POOL.to_string()
            + &zonal()
            + &pv("pv-1", "", &[IN_Z2])
            + &pvc("data", claim_spec)
            + &mounting("p", "data", "");
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z2"), "{claim_spec}");
    }
}

/// A local or hostPath volume's hostname term is dropped, its zone kept (P-PROV-081,
/// P-PROV-082); one whose only other alternative is an impossible zone is then unconstrained
/// (S-SCHED-146, S-SCHED-147). A CSI volume keeps its hostname: no new node can be that host, so
/// the pod waits (P-PROV-085).
#[test]
fn the_hostname_of_node_local_volumes_is_dropped() {
    let host = "[{key: kubernetes.io/hostname, operator: In, values: [old-node]}]";
    let host_and_zone = "[{key: kubernetes.io/hostname, operator: In, values: [old-node]}, {key: topology.kubernetes.io/zone, operator: In, values: [z2]}]";
    let nowhere = "[{key: topology.kubernetes.io/zone, operator: In, values: [no-such-zone]}]";
    for kind in [
        "\n  local: {path: /mnt/disk}",
        "\n  hostPath: {path: /mnt/disk}",
    ] {
        let text = POOL.to_string()
            + &zonal()
            + &pv("pv-1", kind, &[host_and_zone])
            + &pvc("data", "volumeName: pv-1")
            + &mounting("p", "data", "");
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z2"), "{kind}");
        let text = POOL.to_string()
            + &zonal()
            + &pv("pv-1", kind, &[host, nowhere])
            + &pvc("data", "volumeName: pv-1")
            + &mounting("p", "data", "");
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert!(p.unschedulable.is_empty(), "{kind}");
    }
    let text = POOL.to_string()
        + &zonal()
        + &pv("pv-1", "\n  csi: {driver: x, volumeHandle: h}", &[host])
        + &pvc("data", "volumeName: pv-1")
        + &mounting("p", "data", "");
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["p"]);
}

/// A StorageClass allowing z1 and z2 (S-SCHED-148), or a volume whose terms allow z1 or z2
/// (S-SCHED-145): two pods repelling each other by zone use both allowed zones, never z3.
#[test]
fn several_allowed_zones_serve_anti_affine_pods() {
    let anti = format!(
        "\n  affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {{matchLabels: {{app: v}}}}, topologyKey: {ZONE}}}]}}}}"
    );
    let by_class = class("two", "z1, z2")
        + &pvc("a", "storageClassName: two")
        + &pvc("b", "storageClassName: two");
    let in_z1 = "[{key: topology.kubernetes.io/zone, operator: In, values: [z1]}]";
    let by_volume = pv("pv-a", "", &[in_z1, IN_Z2])
        + &pv("pv-b", "", &[in_z1, IN_Z2])
        + &pvc("a", "volumeName: pv-a")
        + &pvc("b", "volumeName: pv-b");
    for volumes in [by_class, by_volume] {
        let text = POOL.to_string()
            + &zonal()
            + &volumes
            + &mounting("p", "a", &anti)
            + &mounting("q", "b", &anti);
        let s = snap(&text);
        let p = plan(&s, Cost);
        let mut got: Vec<String> = zones(&s, &p).into_values().collect();
        got.sort();
        assert_eq!(got, ["z1", "z2"], "{volumes}");
    }
}

/// A class allowing only z1 (P-PROV-077) or a volume in z2 (P-PROV-086) against a pod selecting
/// z3: pending. Valid pods beside one whose claim names a missing class (P-PROV-073) or volume
/// (P-PROV-074) are placed.
#[test]
fn conflicts_leave_the_pod_pending_and_the_others_placed() {
    let in_z3 = format!("\n  nodeSelector: {{{ZONE}: z3}}");
    for volumes in [
        class("one", "z1") + &pvc("data", "storageClassName: one"),
        pv("pv-1", "", &[IN_Z2]) + &pvc("data", "volumeName: pv-1"),
    ] {
        let text = POOL.to_string() + &zonal() + &volumes + &mounting("p", "data", &in_z3);
        let s = snap(&text);
        let p = plan(&s, Cost);
        assert_eq!(unschedulable(&s, &p), ["p"], "{volumes}");
    }
    for bad in ["storageClassName: missing", "volumeName: missing-pv"] {
        let text = POOL.to_string()
            + &zonal()
            + &pvc("bad", bad)
            + &mounting("odd", "bad", "")
            + &pod("fine-1", "app: f", "1", "", "")
            + &pod("fine-2", "app: f", "1", "", "");
        let s = snap(&text);
        let p = plan(&s, Cost);
        let placed = zones(&s, &p);
        assert!(
            placed.contains_key("fine-1") && placed.contains_key("fine-2"),
            "{bad}"
        );
    }
}

/// A pod whose required node affinity ORs z1 and z3, with its volume in z3: however the terms
/// are tried and relaxed, it lands in z3 (P-PROV-088).
#[test]
fn relaxing_node_affinity_keeps_the_volumes_zone() {
    let terms = "\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [z1]}]}, {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [z3]}]}]}}}";
    let in_z3 = "[{key: topology.kubernetes.io/zone, operator: In, values: [z3]}]";
    let text = POOL.to_string()
        + &zonal()
        + &pv("pv-1", "", &[in_z3])
        + &pvc("data", "volumeName: pv-1")
        + &mounting("p", "data", terms);
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z3"));
}

/// A 1-core pod `name` with a generic ephemeral volume `d` of this class (its claim is
/// `{name}-d`), and extra spec lines.
fn ephemeral(name: &str, class: &str, spec: &str) -> String {
    pod(
        name,
        "app: v",
        "1",
        "",
        &format!(
            "\n  volumes: [{{name: d, ephemeral: {{volumeClaimTemplate: {{spec: {{storageClassName: {class}, accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}}}}}}}]{spec}"
        ),
    )
}

/// Generic ephemeral volumes: before their claim exists, the template's class decides the zone
/// (P-PROV-076) or, conflicting with the pod's selector, leaves it pending (P-PROV-078); once
/// their claim is bound, its volume decides (P-PROV-080, P-PROV-087), even with a class that does
/// not exist or is empty (S-SCHED-162, S-SCHED-163), and a local or hostPath volume's hostname
/// is dropped (P-PROV-083, P-PROV-084).
#[test]
fn ephemeral_volumes_follow_their_class_then_their_volume() {
    let in_z3 = format!("\n  nodeSelector: {{{ZONE}: z3}}");
    let s = snap(&(POOL.to_string() + &zonal() + &class("one", "z1") + &ephemeral("p", "one", "")));
    let p = plan(&s, Cost);
    assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z1"));
    let s =
        snap(&(POOL.to_string() + &zonal() + &class("one", "z1") + &ephemeral("p", "one", &in_z3)));
    let p = plan(&s, Cost);
    assert_eq!(unschedulable(&s, &p), ["p"]);
    for claim_class in ["one", "gone", "''"] {
        let bound = pv("pv-1", "", &[IN_Z2])
            + &pvc(
                "p-d",
                &format!("volumeName: pv-1, storageClassName: {claim_class}"),
            );
        let s = snap(
            &(POOL.to_string()
                + &zonal()
                + &class("one", "z1")
                + &bound
                + &ephemeral("p", "one", "")),
        );
        let p = plan(&s, Cost);
        assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z2"), "{claim_class}");
        let s = snap(
            &(POOL.to_string()
                + &zonal()
                + &class("one", "z1")
                + &bound
                + &ephemeral("p", "one", &in_z3)),
        );
        let p = plan(&s, Cost);
        assert_eq!(unschedulable(&s, &p), ["p"], "{claim_class}");
    }
    let host_and_zone = "[{key: kubernetes.io/hostname, operator: In, values: [old-node]}, {key: topology.kubernetes.io/zone, operator: In, values: [z2]}]";
    for kind in [
        "\n  local: {path: /mnt/disk}",
        "\n  hostPath: {path: /mnt/disk}",
    ] {
        let bound = pv("pv-1", kind, &[host_and_zone])
            + &pvc("p-d", "volumeName: pv-1, storageClassName: one");
        let s = snap(
            &(POOL.to_string()
                + &zonal()
                + &class("one", "z1, z2")
                + &bound
                + &ephemeral("p", "one", "")),
        );
        let p = plan(&s, Cost);
        assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z2"), "{kind}");
    }
}

/// A pod whose volume is in z1, spread over zones with `minDomains: 3`: the volume pins the
/// node to z1 but the spread still counts three domains, so the pod is placed (S-TOPO-091).
#[test]
fn a_volume_zone_does_not_shrink_the_spread_domains() {
    let in_z1 = "[{key: topology.kubernetes.io/zone, operator: In, values: [z1]}]";
    let spread = format!(
        "\n  topologySpreadConstraints: [{{maxSkew: 1, minDomains: 3, topologyKey: {ZONE}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: v}}}}}}]"
    );
    let text = POOL.to_string()
        + &zonal()
        + &pv("pv-1", "", &[in_z1])
        + &pvc("data", "volumeName: pv-1")
        + &mounting("p", "data", &spread);
    let s = snap(&text);
    let p = plan(&s, Cost);
    assert_eq!(zone_of(&s, &p, "p").as_deref(), Some("z1"));
}

/// Two claims of two classes, each allowing two alternatives: class a `special=required` OR
/// `special=optional`, class b `z1 and optional` OR `z2 and required`. No flavor carries
/// `special=required`, so the only combination that holds is z1 with `optional`: the pod
/// gets a node of the `optional` flavor in z1 (S-SCHED-149).
#[test]
fn two_volumes_keep_the_one_combination_of_alternatives_that_holds() {
    let special = "example.com/special";
    let catalog: String = (1..=3)
        .map(|z| {
            flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}"))
                + &flavor(
                    &format!("c8-z{z}"),
                    8,
                    "0.20",
                    &format!("{ZONE}=z{z},{special}=optional"),
                )
        })
        .collect();
    let class_with = |name: &str, terms: &[&str]| {
        let terms: String = terms
            .iter()
            .map(|t| format!("\n- matchLabelExpressions: {t}"))
            .collect();
        format!(
            "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}}}\nprovisioner: x\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:{terms}\n"
        )
    };
    let a = class_with(
        "a",
        &[
            &format!("[{{key: {special}, values: [required]}}]"),
            &format!("[{{key: {special}, values: [optional]}}]"),
        ],
    );
    let b = class_with(
        "b",
        &[
            &format!("[{{key: {ZONE}, values: [z1]}}, {{key: {special}, values: [optional]}}]"),
            &format!("[{{key: {ZONE}, values: [z2]}}, {{key: {special}, values: [required]}}]"),
        ],
    );
    let p = pod(
        "v",
        "app: v",
        "1",
        "",
        "\n  volumes: [{name: a, persistentVolumeClaim: {claimName: pa}}, {name: b, persistentVolumeClaim: {claimName: pb}}]",
    );
    let text = POOL.to_string()
        + &catalog
        + &a
        + &b
        + &pvc("pa", "storageClassName: a")
        + &pvc("pb", "storageClassName: b")
        + &p;
    let s = snap(&text);
    let plan = plan(&s, Cost);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.new_nodes.len(), 1);
    let node = &plan.new_nodes[0].offering;
    assert_eq!(node.flavor.instance_type, "c8-z1");
    assert_eq!(node.labels.get(ZONE).map(String::as_str), Some("z1"));
    assert_eq!(
        node.labels.get(special).map(String::as_str),
        Some("optional")
    );
}
