//! A MachineDeployment's scale-downs one after another: a Machine leaving by an earlier
//! scale-down of ours (being deleted, already left out of `spec.replicas`) does not hold the
//! next one, because Cluster API counts it among the MachineSet's Machines and takes it first
//! (`syncReplicas`, `machineset_deletion_order.go`). One being deleted that the replicas still
//! count (a MachineHealthCheck's, or by hand) does hold it, as does a MachineSet whose replicas
//! lag the MachineDeployment's.

use karpenter_capi::controller::{Action, Config, Plan, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi_testkit::objects::{MachineSet, Object};
use karpenter_capi_testkit::world::{self, World, ago};
use serde_json::json;

/// `md-4` at `replicas`, node-1 empty and taken by emptiness a minute ago (past validation),
/// and Machine m-2 of the same MachineDeployment being deleted after a mark of ours.
fn second_leaving(replicas: i64) -> World {
    World::new("WhenEmpty")
        .md(4, replicas)
        .machine(4, 1, true, true)
        .with(
            "Node",
            "node-1",
            |n| {
                n["spec"]["taints"] =
                    json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
            },
        )
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["annotations"]["karpenter-capi/disruption-reason"] = json!("Empty");
            c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(ago(60));
        })
        .machine(4, 2, false, false)
        .with("Machine", "m-2", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(30));
            m["metadata"]["finalizers"] = json!(["machine.cluster.x-k8s.io"]);
            m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"] = json!("Empty");
            m["metadata"]["annotations"]["karpenter-capi/marked-for"] = json!("c-2");
        })
}

fn plan_of(w: &World) -> Plan {
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    plan(&s, world::NOW.parse().unwrap(), &Config::default())
}

fn scales(p: &Plan) -> Vec<(i64, i64)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::ScaleMachineDeployment { from, replicas, .. } => Some((*from, *replicas)),
            _ => None,
        })
        .collect()
}

fn marks(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::MarkMachineForDeletion { machine, .. } => Some(machine.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_machine_left_out_of_the_replicas_does_not_hold_the_next_scale_down() {
    // m-2 already left out: one replica for m-1, which goes now (1 -> 0).
    let p = plan_of(&second_leaving(1));
    assert_eq!(marks(&p), ["capi-ovh/m-1"], "{:?}", p.notes);
    assert_eq!(scales(&p), [(1, 0)], "{:?}", p.notes);
    assert!(
        !p.notes.iter().any(|n| n.contains("not lowered")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_deleting_machine_the_replicas_still_count_holds_it() {
    // Replicas 2 count m-2 too (deleted by someone else): lowering to 1 would be spent on it.
    let p = plan_of(&second_leaving(2));
    assert!(scales(&p).is_empty(), "{:?}", p.actions);
    assert!(
        p.notes.iter().any(|n| n.contains(
            "replicas not lowered from 2: Machine m-2 is being deleted (Cluster API counts it first)"
        )),
        "{:?}",
        p.notes
    );
    // The MachineDeployment agrees, but its MachineSet still asks for 2: held too.
    let lagging = second_leaving(1).add(
        MachineSet::new(world::NAMESPACE, "md-4-a", "md-4", 2)
            .created(&ago(600))
            .build(),
    );
    let p = plan_of(&lagging);
    assert!(scales(&p).is_empty(), "{:?}", p.actions);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("Machine m-2 is being deleted")),
        "{:?}",
        p.notes
    );
}
