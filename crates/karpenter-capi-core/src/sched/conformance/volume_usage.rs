//! Volume claims that keep a pod from any node, after core v1.14's scheduling `suite_test.go`
//! (`VolumeUsage`) and provisioning `suite_test.go` (`Volume Topology Requirements`; core
//! `volumetopology.go` `ValidatePersistentVolumeClaims`), in our own inputs through every
//! strategy: a claim being deleted or Lost, a volume being deleted, a claim naming a volume it is
//! not bound to yet, an unbound claim with no class or an Immediate one. The pod stays pending
//! with the reason; the pods beside it are still placed.

use super::{ALL, flavor, plan, pod, snap, unschedulable};
use crate::vocab::keys::ZONE;

const POOL: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements: []\n";

/// A PersistentVolume `pv-1` in zone z2 with extra metadata fields.
fn pv(meta: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv-1{meta}}}\nspec:\n  capacity: {{storage: 1Gi}}\n  csi: {{driver: x, volumeHandle: h}}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions: [{{key: {ZONE}, operator: In, values: [z2]}}]\n"
    )
}

/// A StorageClass `name` allowing zone z1, with this binding mode (none: the field absent).
fn class(name: &str, mode: Option<&str>) -> String {
    let mode = mode
        .map(|m| format!("volumeBindingMode: {m}\n"))
        .unwrap_or_default();
    format!(
        "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {name}}}\nprovisioner: x\n{mode}allowedTopologies:\n- matchLabelExpressions: [{{key: {ZONE}, values: [z1]}}]\n"
    )
}

/// The PersistentVolumeClaim `data` in `default`, with extra metadata fields, spec flow-map
/// body and status flow-map body.
fn pvc(meta: &str, spec: &str, status: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data, namespace: default{meta}}}\nspec: {{{spec}}}\nstatus: {{{status}}}\n"
    )
}

const BOUND: &str = ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}";
const DELETING: &str =
    ", deletionTimestamp: '2026-12-01T00:00:00Z', finalizers: [kubernetes.io/pvc-protection]";

/// Three zonal flavors, the pod `p` mounting claim `data`, and a plain pod `other`.
fn cluster(volumes: &str) -> String {
    POOL.to_string()
        + &(1..=3)
            .map(|z| flavor(&format!("c4-z{z}"), 4, "0.10", &format!("{ZONE}=z{z}")))
            .collect::<String>()
        + volumes
        + &pod(
            "p",
            "app: v",
            "1",
            "",
            "\n  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]",
        )
        + &pod("other", "app: o", "1", "", "")
}

/// Each claim below keeps `p` pending in every strategy, with the reason on every flavor, while
/// `other` is placed: a Lost claim (S-SCHED-159), a claim being deleted (S-SCHED-157), a bound
/// volume being deleted (S-SCHED-158), a claim naming its volume without bind-completed
/// (S-SCHED-160), an unbound claim of an Immediate class (S-SCHED-156) and an unbound claim
/// with no class (P-PROV-069).
#[test]
fn unusable_claims_keep_their_pod_pending_with_the_reason() {
    let bound_pvc = pvc(BOUND, "volumeName: pv-1", "phase: Bound");
    let cases = [
        (
            pv("") + &pvc(BOUND, "volumeName: pv-1", "phase: Lost"),
            "is Lost",
        ),
        (
            pv("")
                + &pvc(
                    &format!("{BOUND}{DELETING}"),
                    "volumeName: pv-1",
                    "phase: Bound",
                ),
            "is being deleted",
        ),
        (
            pv(DELETING) + &bound_pvc,
            "is bound to a PersistentVolume being deleted",
        ),
        (
            pv("") + &pvc("", "volumeName: pv-1", "phase: Pending"),
            "is not bound yet",
        ),
        (
            class("fast", Some("Immediate")) + &pvc("", "storageClassName: fast", "phase: Pending"),
            "binds Immediate",
        ),
        (
            pvc("", "accessModes: [ReadWriteOnce]", "phase: Pending"),
            "names no StorageClass",
        ),
    ];
    for (volumes, reason) in cases {
        let s = snap(&cluster(&volumes));
        for strategy in ALL {
            let p = plan(&s, strategy);
            let case = format!("{strategy:?}, {reason}");
            assert_eq!(unschedulable(&s, &p), ["p"], "{case}");
            assert_eq!(p.new_nodes.len(), 1, "{case}");
            assert_eq!(p.new_nodes[0].pods.len(), 1, "{case}");
            let (_, rejections) = &p.unschedulable[0];
            assert_eq!(rejections.len(), 3, "{case}: {rejections:?}");
            for r in rejections {
                let text = r.to_string();
                assert!(
                    text.contains("PersistentVolumeClaim default/data") && text.contains(reason),
                    "{case}: {text}"
                );
            }
        }
    }
}

/// The same claims when usable: bound with bind-completed, the pod follows its volume to z2
/// (S-SCHED-161); unbound in a WaitForFirstConsumer class or one with no binding mode given,
/// it follows the class to z1.
#[test]
fn usable_claims_pin_their_pod() {
    let cases = [
        (
            pv("") + &pvc(BOUND, "volumeName: pv-1", "phase: Bound"),
            "z2",
        ),
        (
            class("late", Some("WaitForFirstConsumer"))
                + &pvc("", "storageClassName: late", "phase: Pending"),
            "z1",
        ),
        (
            class("plain", None) + &pvc("", "storageClassName: plain", "phase: Pending"),
            "z1",
        ),
    ];
    for (volumes, zone) in cases {
        let s = snap(&cluster(&volumes));
        for strategy in ALL {
            let p = plan(&s, strategy);
            assert!(p.unschedulable.is_empty(), "{strategy:?}, {zone}");
            let of_p = p
                .new_nodes
                .iter()
                .find(|n| n.pods.iter().any(|&i| s.pods[i].demand.name == "p"))
                .map(|n| n.offering.labels.get(ZONE).cloned());
            assert_eq!(of_p, Some(Some(zone.to_string())), "{strategy:?}");
        }
    }
}
