//! Do no harm (issue 10): for each safety rule, cluster states that broke it give the safe plan
//! (dry-run JSON asserted), the in-memory API shows the writes in order with failures injected
//! between any two writes of a disruption, and a property test over random cluster states.

use crate::common;

use std::collections::BTreeMap;

use common::FakeApi;
use jiff::Timestamp;
use karpenter_capi::cli::OutputFormat;
use karpenter_capi::cmd::run::once;
use karpenter_capi::controller::{Action, Config, Plan, plan};
use karpenter_capi::kube::list::Clients;
use karpenter_capi::model::load::{Source, snapshot_from_sources};
use karpenter_capi::render::Printer;
use karpenter_capi_testkit::objects::{
    Cluster, Machine, MachineDeployment, MachineSet, Node, NodeClaim, NodePool, Object, Pod,
};
use karpenter_capi_testkit::world::{self, World, ago};
use serde_json::{Value, json};

const NOW: &str = world::NOW;
const NS: &str = world::NAMESPACE;

/// Plans a world with the pure core.
trait Plans {
    /// The plan at [`NOW`].
    fn plan(&self) -> Plan;
    /// Plans with the watches of `unsynced` not re-synced (what `kube::watch` reports).
    fn plan_unsynced(&self, unsynced: &[&str]) -> Plan;
}

impl Plans for World {
    fn plan(&self) -> Plan {
        self.plan_unsynced(&[])
    }

    fn plan_unsynced(&self, unsynced: &[&str]) -> Plan {
        let mut s = snapshot_from_sources(&[Source {
            name: "w.yaml".into(),
            text: self.text(),
        }])
        .unwrap();
        s.unsynced = unsynced.iter().map(|u| u.to_string()).collect();
        plan(&s, NOW.parse().unwrap(), &Config::default())
    }
}

/// A NodeClaim of `default` for a `c-4` of `md-4`, `age` seconds old, not launched yet.
fn waiting_claim(name: &str, age: i64) -> NodeClaim {
    NodeClaim::new(name, "default")
        .created(&ago(age))
        .finalizer("karpenter.sh/termination")
        .instance_type("c-4")
        .machine_deployment(&format!("{NS}/md-4"))
}

/// A MachineSet of `md-<cpu>` with spec and status replicas.
fn machine_set(cpu: u32, name: &str, replicas: i64, age: i64) -> Value {
    MachineSet::new(NS, name, &format!("md-{cpu}"), replicas)
        .created(&ago(age))
        .build()
}

/// `action target` per action, as `-o json` prints them.
fn lines(p: &Plan) -> Vec<String> {
    let v = serde_json::to_value(p).unwrap();
    v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            format!(
                "{} {}",
                a["action"].as_str().unwrap(),
                a["target"].as_str().unwrap()
            )
        })
        .collect()
}

fn has_note(p: &Plan, text: &str) -> bool {
    p.notes.iter().any(|n| n.contains(text))
}

// ---------------------------------------------------------------------------------------------
// Rule 1: adoption, never surprise deletion.

/// Marks a claim drifted as this controller sees it: a NodePool hash that does not match,
/// stamped with our own hash version (a foreign version is re-stamped, not drifted).
fn stamp_stale(c: &mut Value) {
    c["metadata"]["annotations"]["karpenter.sh/nodepool-hash"] = json!("stale");
    c["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"] =
        json!(karpenter_capi::controller::drift::HASH_VERSION);
}

#[test]
fn labelling_a_populated_machine_deployment_adopts_its_nodes_and_deletes_none() {
    for (pods, replicas) in [(0, 3), (2, 3), (1, 5)] {
        let mut w = World::new("WhenEmptyOrUnderutilized")
            .md(4, replicas)
            .machine(4, 1, true, false)
            .machine(4, 2, true, false)
            .machine(4, 3, true, false);
        for p in 0..pods {
            w = w.pod(&format!("web-{p}"), Some(p + 1), "500m");
        }
        let p = w.plan();
        assert_eq!(
            lines(&p),
            vec![
                "adoptMachine Machine/capi-ovh/m-1",
                "adoptMachine Machine/capi-ovh/m-2",
                "adoptMachine Machine/capi-ovh/m-3"
            ],
            "{pods} pods, replicas {replicas}"
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["actions"][0]["nodeClaim"], "node-1");
        assert_eq!(json["actions"][0]["nodePool"], "default");
    }
}

#[test]
fn an_adopted_claim_is_registered_initialized_and_named_after_its_node() {
    let p = World::new("WhenEmpty")
        .md(4, 1)
        .machine(4, 1, true, false)
        .plan();
    let steps = p.actions[0].steps();
    use karpenter_capi::controller::write::Write;
    let Write::Create { object, .. } = &steps.writes[0] else {
        panic!("{:?}", steps.writes[0])
    };
    assert_eq!(object["metadata"]["name"], "node-1");
    assert_eq!(
        object["metadata"]["annotations"]["cluster.x-k8s.io/machine"],
        "capi-ovh/m-1"
    );
    assert_eq!(
        object["metadata"]["annotations"]["karpenter-capi/adopted"],
        NOW
    );
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    let Write::SetNodeClaimStatus {
        conditions, fields, ..
    } = &steps.writes[1]
    else {
        panic!()
    };
    let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(
        types,
        vec!["Launched", "Registered", "Initialized", "Ready"]
    );
    assert_eq!(fields["providerID"], "openstack:///1");
}

#[test]
fn a_machine_no_nodepool_fits_is_left_alone() {
    // The only pool requires a zone the node does not have.
    let p = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, false)
        .machine(4, 2, true, false)
        .with("NodePool", "default", |np| {
            np["spec"]["template"]["spec"]["requirements"] =
                json!([{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]);
        })
        .plan();
    assert_eq!(lines(&p), Vec::<String>::new());
    assert!(
        has_note(
            &p,
            "Machine capi-ovh/m-1 (node node-1) has no NodeClaim and no NodePool fits it: left alone"
        ),
        "{:?}",
        p.notes
    );
}

#[test]
fn the_highest_weight_fitting_pool_adopts() {
    let heavy =
        NodePool::new("heavy")
            .weight(50)
            .requirement("kubernetes.io/arch", "In", &["amd64"]);
    let picky = NodePool::new("picky").weight(90).requirement(
        "node.kubernetes.io/instance-type",
        "In",
        &["c-16"],
    );
    let p = World::new("WhenEmpty")
        .add(heavy)
        .add(picky)
        .md(4, 1)
        .machine(4, 1, true, false)
        .plan();
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][0]["action"], "adoptMachine");
    assert_eq!(json["actions"][0]["nodePool"], "heavy");
}

#[test]
fn only_machines_without_a_node_are_bound_to_new_claims() {
    // A waiting claim; m-1 has a Node and no claim (adopted, never bound), m-2 has no Node.
    let waiting = waiting_claim("c-new", 30);
    let p = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, false)
        .machine(4, 2, false, false)
        .add(waiting)
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "adoptMachine Machine/capi-ovh/m-1",
            "claimMachine Machine/capi-ovh/m-2"
        ]
    );
}

#[test]
fn a_machine_without_node_or_waiting_claim_is_the_only_surplus() {
    // replicas 3: m-1 claimed with a node, m-2 a Node without claim (adopted), m-3 nothing.
    let p = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .pod("web", Some(1), "1")
        .machine(4, 2, true, false)
        .machine(4, 3, false, false)
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "adoptMachine Machine/capi-ovh/m-2",
            "markMachineForDeletion Machine/capi-ovh/m-3",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    assert!(matches!(
        p.actions[2],
        Action::ScaleMachineDeployment {
            from: 3,
            replicas: 2,
            ..
        }
    ));
}

/// Every object the in-memory API holds, as a cluster state the pure core plans from.
fn world_of(fake: &FakeApi) -> World {
    let mut objs = Vec::new();
    for (group, plural) in [
        ("karpenter.cluster.x-k8s.io", "clusterapinodeclasses"),
        ("karpenter.sh", "nodepools"),
        ("karpenter.sh", "nodeclaims"),
        ("apps", "daemonsets"),
        ("cluster.x-k8s.io", "machinedeployments"),
        ("cluster.x-k8s.io", "machinesets"),
        ("cluster.x-k8s.io", "machines"),
        ("", "nodes"),
        ("", "pods"),
    ] {
        objs.extend(fake.all(group, plural));
    }
    World::from_objects(objs)
}

/// The disruptions (`action target`) of a plan.
fn disruption_lines(p: &Plan) -> Vec<String> {
    lines(p)
        .into_iter()
        .filter(|l| {
            [
                "taintNode",
                "evictPod",
                "markMachineForDeletion",
                "deleteNodeClaim",
                "scaleMachineDeployment",
            ]
            .iter()
            .any(|a| l.starts_with(&format!("{a} ")))
        })
        .collect()
}

/// Rule 1, "ages counted from adoption": an adopted node that is empty (or underutilized) is
/// consolidated only once `consolidateAfter` has passed since the adoption, however old the
/// Node and its Machine are (hours here), as core counts it from the claim's initialization
/// (`nodeclaim/disruption/consolidation.go`). The adoption pass runs on the in-memory API (the
/// executor stamps the times); the next passes plan from what it wrote, at chosen times.
#[tokio::test]
async fn an_adopted_node_is_consolidated_only_consolidate_after_its_adoption() {
    // (world, consolidateAfter in seconds, the node that goes, its reason)
    let cases: Vec<(World, i64, &str, &str)> = vec![
        (
            World::new("WhenEmpty").md(4, 1).machine(4, 1, true, false),
            30,
            "node-1",
            "Empty",
        ),
        (
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, false)
                .machine(4, 2, true, false)
                .pod("web", Some(1), "1")
                .with("NodePool", "default", |p| {
                    p["spec"]["disruption"]["consolidateAfter"] = json!("10m")
                }),
            600,
            "node-2",
            "Empty",
        ),
        (
            // Underutilized: one node's pod fits beside the other's, so one node is deleted;
            // never both replaced by a new node of their own type (core `filterOutSameType`).
            World::new("WhenEmptyOrUnderutilized")
                .md(4, 2)
                .machine(4, 1, true, false)
                .machine(4, 2, true, false)
                .pod("busy", Some(1), "1")
                .pod("web", Some(2), "500m")
                .with("NodePool", "default", |p| {
                    p["spec"]["disruption"]["consolidateAfter"] = json!("5m")
                }),
            300,
            "node-1",
            "Underutilized",
        ),
    ];
    for (w, after, goes, reason) in cases {
        let fake = fake_of(&w);
        run_pass(&fake).await.unwrap();
        let claims = names(&fake, "karpenter.sh", "nodeclaims");
        assert!(
            !claims.is_empty() && claims.iter().all(|c| c.starts_with("node-")),
            "{claims:?}"
        );
        let claim = fake.get("karpenter.sh", "nodeclaims", "", goes).unwrap();
        let adopted: Timestamp = claim["metadata"]["annotations"]["karpenter-capi/adopted"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let node_created: Timestamp = fake
            .get(
                "cluster.x-k8s.io",
                "machines",
                NS,
                &format!("m-{}", &goes[5..]),
            )
            .unwrap()["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(adopted.as_second() - node_created.as_second() > 3600);
        let next = world_of(&fake);
        let at = |secs: i64| {
            let s = snapshot_from_sources(&[Source {
                name: "w.yaml".into(),
                text: next.text(),
            }])
            .unwrap();
            plan(
                &s,
                Timestamp::from_second(adopted.as_second() + secs).unwrap(),
                &Config::default(),
            )
        };
        for early in [1, after / 2, after - 5] {
            let p = at(early);
            assert_eq!(
                disruption_lines(&p),
                Vec::<String>::new(),
                "{early}s after adoption (consolidateAfter {after}s): {:?}",
                lines(&p)
            );
        }
        let p = at(after + 5);
        assert!(
            !lines(&p).iter().any(|l| l.starts_with("createNodeClaim")),
            "{:?}",
            lines(&p)
        );
        assert_eq!(
            p.actions
                .iter()
                .filter(|a| matches!(a, Action::TaintNode { .. }))
                .count(),
            1,
            "{:?}",
            lines(&p)
        );
        assert!(
            disruption_lines(&p).contains(&format!("taintNode Node/{goes}")),
            "{after}s after adoption: {:?}",
            lines(&p)
        );
        assert!(
            p.actions.iter().any(|a| matches!(a,
                Action::TaintNode { node, reason: r, .. } if node == goes && r == reason)),
            "{:?}",
            lines(&p)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 2: replicas drop by at most the Machines marked; stale views hold scale-downs.

/// An empty node (only its DaemonSet pod) whose claim is due for removal, in `md-4` at
/// `replicas`: its Empty command started a minute ago (tainted, validated), so this pass removes
/// it.
fn one_empty(replicas: i64) -> World {
    tainted(idle(replicas), "node-1", "Empty")
}

/// The same node before any decision: empty, untainted.
fn idle(replicas: i64) -> World {
    World::new("WhenEmpty")
        .md(4, replicas)
        .machine(4, 1, true, true)
}

#[test]
fn replicas_drop_by_the_machines_marked_even_when_spec_is_higher() {
    // spec.replicas 5 but one Machine seen (others being created): 5 -> 4, never 5 -> 0.
    let p = one_empty(5).plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    assert!(matches!(
        p.actions[2],
        Action::ScaleMachineDeployment {
            from: 5,
            replicas: 4,
            ..
        }
    ));
    // The scale carries the resourceVersion read.
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&p.actions[2].steps().writes[0], Write::Scale { resource_version: Some(rv), replicas: 4, .. } if rv == "7")
    );
}

#[test]
fn a_stale_view_holds_the_scale_down_with_a_note() {
    let behind = one_empty(1).with("MachineDeployment", "md-4", |md| {
        md["metadata"]["generation"] = json!(2);
    });
    let p = behind.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(
            &p,
            "MachineDeployment capi-ovh/md-4: replicas not lowered from 1: status.observedGeneration 1 is behind metadata.generation 2"
        ),
        "{:?}",
        p.notes
    );
    // Machines seen do not match what the MachineSets report.
    let p = one_empty(1).add(machine_set(4, "md-4-a", 2, 600)).plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment"))
    );
    assert!(
        has_note(&p, "stale view: 1 Machines seen, its MachineSets report 2"),
        "{:?}",
        p.notes
    );
    // Consistent: the scale goes.
    let p = one_empty(1).add(machine_set(4, "md-4-a", 1, 600)).plan();
    assert!(
        lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment"))
    );
}

#[test]
fn a_watch_not_yet_resynced_holds_every_scale_down() {
    // Rule 2: while any watch is (re-)listing, the stores serve the objects of before it: no
    // replicas are lowered, whatever the MachineDeployment (the mark is kept: it is idempotent
    // and a later pass scales once the view is fresh).
    let why = "stale view: the watches of management cluster machinesets.cluster.x-k8s.io have not re-synced yet";
    let states: Vec<(World, Vec<&str>)> = vec![
        // An empty node removed.
        (
            one_empty(1),
            vec![
                "markMachineForDeletion Machine/capi-ovh/m-1",
                "deleteNodeClaim NodeClaim/c-1",
            ],
        ),
        // A surplus Machine (no Node, no claim waiting): not even marked while stale (a note
        // "surplus Machine(s) m-2 not removed: ...").
        (
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, true)
                .pod("web", Some(1), "1")
                .machine(4, 2, false, false),
            vec![],
        ),
    ];
    for (w, held) in states {
        let fresh = w.plan();
        assert!(
            lines(&fresh)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            "{:?}",
            lines(&fresh)
        );
        let p = w.plan_unsynced(&["management cluster machinesets.cluster.x-k8s.io"]);
        assert_eq!(lines(&p), held);
        assert!(
            p.notes
                .iter()
                .any(|n| n.starts_with("MachineDeployment capi-ovh/md-4: ") && n.contains(why)),
            "{:?}",
            p.notes
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 3: Cluster API must delete the Machine we marked.

#[test]
fn rollouts_pauses_and_deletions_in_progress_hold_the_scale_down() {
    let cases: Vec<(World, &str)> = vec![
        (
            one_empty(2)
                .add(machine_set(4, "md-4-a", 1, 600))
                .add(machine_set(4, "md-4-b", 1, 60))
                .machine(4, 9, false, false)
                .with("Machine", "m-9", |m| {
                    m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"] = json!("");
                }),
            "rolling out: MachineSets md-4-a, md-4-b have replicas",
        ),
        (
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["metadata"]["annotations"]["cluster.x-k8s.io/paused"] = json!("")
            }),
            "MachineDeployment capi-ovh/md-4 carries cluster.x-k8s.io/paused",
        ),
        (
            one_empty(1)
                .add(machine_set(4, "md-4-a", 1, 600))
                .with("MachineSet", "md-4-a", |ms| {
                    ms["metadata"]["annotations"] = json!({"cluster.x-k8s.io/paused": ""});
                }),
            "MachineSet md-4-a carries cluster.x-k8s.io/paused",
        ),
        (
            one_empty(1).add(Cluster::new(NS, NS).paused()),
            "Cluster capi-ovh is paused",
        ),
        (
            one_empty(2)
                .machine(4, 2, false, false)
                .with("Machine", "m-2", |m| {
                    m["metadata"]["deletionTimestamp"] = json!(ago(10));
                    m["metadata"]["finalizers"] = json!(["machine.cluster.x-k8s.io"]);
                }),
            "Machine m-2 is being deleted (Cluster API counts it first)",
        ),
        (
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["status"]["replicas"] = json!(2);
                md["status"]["upToDateReplicas"] = json!(1);
            }),
            "rolling out: 1 of 2 Machines up to date",
        ),
    ];
    for (w, why) in cases {
        let p = w.plan();
        assert!(
            !lines(&p)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            "{why}: {:?}",
            lines(&p)
        );
        assert!(has_note(&p, why), "{why}: {:?}", p.notes);
    }
}

#[test]
fn on_delete_scales_down_when_the_marked_machine_is_in_the_oldest_machine_set() {
    let w = |set: &str| {
        one_empty(2)
            .machine(4, 2, true, true)
            .pod("web", Some(2), "1")
            .with("MachineDeployment", "md-4", |md| {
                md["spec"]["rollout"] = json!({"strategy": {"type": "OnDelete"}});
            })
            .add(machine_set(4, "old", 1, 6000))
            .add(machine_set(4, "new", 1, 60))
            .with("Machine", "m-1", |m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] = json!(set)
            })
            .with("Machine", "m-2", |m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] =
                    json!(if set == "old" { "new" } else { "old" })
            })
    };
    let p = w("old").plan();
    assert!(
        p.actions.iter().any(|a| matches!(
            a,
            Action::ScaleMachineDeployment {
                from: 2,
                replicas: 1,
                ..
            }
        )),
        "{:?}",
        lines(&p)
    );
    // Marked in the newer MachineSet: Cluster API would scale the old one down first.
    let p = w("new").plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(&p, "rolling out: MachineSets old, new have replicas"),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_marked_machine_still_alive_after_the_hold_is_marked_and_scaled_again() {
    // c-1 is being deleted (our finalizer), its node drained, m-1 marked earlier but the scale
    // was held; the hold is over.
    let w = one_empty(1)
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
        .with("Machine", "m-1", |m| {
            m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "Empty"})
        });
    let w = excluded(w, "node-1");
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // While paused: no scale and no repeated mark, a note.
    let p = w
        .clone()
        .with("MachineDeployment", "md-4", |md| {
            md["metadata"]["annotations"]["cluster.x-k8s.io/paused"] = json!("")
        })
        .plan();
    assert_eq!(lines(&p), Vec::<String>::new());
    assert!(
        has_note(
            &p,
            "NodeClaim c-1: termination waits: MachineDeployment capi-ovh/md-4 carries cluster.x-k8s.io/paused"
        ),
        "{:?}",
        p.notes
    );
    // `spec.paused` pauses rollouts only: Cluster API still scales, and so do we.
    let p = w
        .with("MachineDeployment", "md-4", |md| {
            md["spec"]["paused"] = json!(true)
        })
        .plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
}

#[test]
fn template_drift_is_suspended_while_cluster_api_rolls_out() {
    let drifted = |w: World| {
        w.machine(4, 2, true, true)
            .pod("web", Some(2), "1")
            .with("NodeClaim", "c-2", |c| {
                c["metadata"]["annotations"]["karpenter-capi/machine-template-hash"] =
                    json!("stale")
            })
    };
    let base = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .pod("other", Some(1), "1");
    let p = drifted(base.clone()).plan();
    assert!(
        lines(&p).contains(&"taintNode Node/node-2".to_string()),
        "{:?}",
        lines(&p)
    );
    let rolling = base.with("MachineDeployment", "md-4", |md| {
        md["metadata"]["generation"] = json!(3)
    });
    let p = drifted(rolling.clone()).plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
    // OnDelete (what `init` generates): Cluster API leaves the replacement to our drift.
    let on_delete = rolling.with("MachineDeployment", "md-4", |md| {
        md["spec"]["rollout"] = json!({"strategy": {"type": "OnDelete"}})
    });
    let p = drifted(on_delete).plan();
    assert!(
        lines(&p).contains(&"taintNode Node/node-2".to_string()),
        "{:?}",
        lines(&p)
    );
}

#[test]
fn a_past_rollout_after_is_a_rollout_in_progress() {
    // Cluster API (`mdutil/util.go` `FindNewAndOldMachineSets`): once `spec.rollout.after`
    // (v1beta1 `spec.rolloutAfter`) has passed, every MachineSet created before it is old and
    // is replaced; until then a scale-down could remove another Machine than the one we marked.
    let scaled = |p: &Plan| {
        p.actions.iter().any(|a| {
            matches!(
                a,
                Action::ScaleMachineDeployment {
                    from: 1,
                    replicas: 0,
                    ..
                }
            )
        })
    };
    let after = |w: World, field: &str, t: String| {
        w.with("MachineDeployment", "md-4", |md| match field {
            "v1beta1" => md["spec"]["rolloutAfter"] = json!(t),
            _ => md["spec"]["rollout"] = json!({"after": t}),
        })
    };
    let held: Vec<(World, String)> = vec![
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-a", 1, 6000)),
                "v1beta2",
                ago(60),
            ),
            format!(
                "replicas not lowered from 1: rolling out: spec.rollout.after {} has passed and MachineSet md-4-a, created before it, is still there",
                ago(60)
            ),
        ),
        (
            // No MachineSet in view: the Machine's own age tells.
            after(one_empty(1), "v1beta1", ago(60)),
            format!(
                "replicas not lowered from 1: rolling out: spec.rollout.after {} has passed and Machine m-1, created before it, is still there",
                ago(60)
            ),
        ),
    ];
    for (w, why) in held {
        let p = w.plan();
        assert!(!scaled(&p), "{why}: {:?}", lines(&p));
        assert!(has_note(&p, &why), "{why}: {:?}", p.notes);
        // The claim is still deleted and its Machine marked: it goes once the rollout is over.
        assert!(lines(&p).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()));
    }
    let free: Vec<(World, &str)> = vec![
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-a", 1, 6000)),
                "v1beta2",
                ago(-3600),
            ),
            "in the future",
        ),
        (
            after(
                one_empty(1).add(machine_set(4, "md-4-b", 1, 30)),
                "v1beta2",
                ago(60),
            ),
            "the MachineSet with replicas is newer than it: rolled out",
        ),
        (
            after(
                one_empty(1)
                    .add(machine_set(4, "md-4-a", 0, 6000))
                    .add(machine_set(4, "md-4-b", 1, 30)),
                "v1beta1",
                ago(60),
            ),
            "the old MachineSet has no replicas left",
        ),
    ];
    for (w, case) in free {
        let p = w.plan();
        assert!(scaled(&p), "{case}: {:?} {:?}", lines(&p), p.notes);
    }
}

#[test]
fn a_past_rollout_after_suspends_template_drift_unless_on_delete() {
    // node-2's claim recorded an older template: drift, unless Cluster API is itself rolling
    // the MachineDeployment out because of `spec.rollout.after`.
    let w = |strategy: &str, t: String| {
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("other", Some(1), "1")
            .pod("web", Some(2), "1")
            .add(machine_set(4, "md-4-a", 2, 6000))
            .with("NodeClaim", "c-2", |c| {
                c["metadata"]["annotations"]["karpenter-capi/machine-template-hash"] =
                    json!("stale")
            })
            .with("MachineDeployment", "md-4", |md| {
                md["spec"]["rollout"] = json!({"after": t, "strategy": {"type": strategy}})
            })
    };
    let tainted = |p: &Plan| lines(p).contains(&"taintNode Node/node-2".to_string());
    let p = w("RollingUpdate", ago(60)).plan();
    assert!(!tainted(&p), "{:?}", lines(&p));
    let p = w("RollingUpdate", ago(-60)).plan();
    assert!(tainted(&p), "not yet due: {:?}", lines(&p));
    let p = w("OnDelete", ago(60)).plan();
    assert!(
        tainted(&p),
        "OnDelete leaves replacement to our drift: {:?}",
        lines(&p)
    );
}

// ---------------------------------------------------------------------------------------------
// Rule 4: NodeClaim finalizer, garbage collection, user deletions.

#[test]
fn a_deleting_claim_keeps_its_finalizer_until_its_machine_is_being_deleted() {
    let deleting = |w: World| {
        w.with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
    };
    // A user deleted the claim of a node with a pod: drained at once (forceful), no home check;
    // its pod is provisioned for in the same pass.
    let p = deleting(idle(1).pod("web", Some(1), "1")).plan();
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1",
            "evictPod Pod/default/web"
        ]
    );
    // Machine being deleted: the finalizer comes off.
    let p = deleting(one_empty(0))
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5));
        })
        .plan();
    assert_eq!(lines(&p), vec!["removeNodeClaimFinalizer NodeClaim/c-1"]);
}

#[test]
fn a_claim_whose_machine_vanished_is_garbage_collected_only_when_machines_were_seen() {
    let vanished = |ready: &str| {
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("a", Some(1), "1")
            .pod("b", Some(2), "1")
            .with("Node", "node-1", |n| {
                n["status"]["conditions"][0]["status"] = json!(ready)
            })
    };
    let mut w = vanished("False");
    w.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    let p = w.plan();
    assert!(
        lines(&p).contains(&"deleteNodeClaim NodeClaim/c-1".to_string()),
        "{:?}",
        lines(&p)
    );
    let json = serde_json::to_value(&p).unwrap();
    let gc = json["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "deleteNodeClaim")
        .unwrap();
    assert_eq!(gc["reason"], "GarbageCollected");
    // Whatever the consolidation policy: also under WhenEmptyOrUnderutilized.
    let mut w2 = w.clone();
    w2 = w2.with("NodePool", "default", |np| {
        np["spec"]["disruption"]["consolidationPolicy"] = json!("WhenEmptyOrUnderutilized")
    });
    assert!(lines(&w2.plan()).contains(&"deleteNodeClaim NodeClaim/c-1".to_string()));
    // Node still Ready: not collected.
    let mut w = vanished("True");
    w.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    assert!(
        !lines(&w.plan())
            .iter()
            .any(|l| l.starts_with("deleteNodeClaim"))
    );
    // No Machines in the input at all: the Machine list is missing, nothing is collected.
    let mut w = vanished("False");
    w.objects_mut().retain(|o| o["kind"] != "Machine");
    assert!(
        !lines(&w.plan())
            .iter()
            .any(|l| l.starts_with("deleteNodeClaim"))
    );
}

#[test]
fn kubectl_delete_node_is_a_disruption_request_but_cluster_api_deleting_it_is_not() {
    let node_deleted = idle(1)
        .pod("web", Some(1), "1")
        .with("Node", "node-1", |n| {
            n["metadata"]["deletionTimestamp"] = json!(ago(5));
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        });
    let p = node_deleted.plan();
    // Its pod is provisioned for in the same pass.
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "deleteNodeClaim NodeClaim/c-1"
        ]
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["actions"][1]["reason"], "NodeDeleted");
    // Cluster API deletes the Machine (and then its Node): nothing to do, finalizer kept.
    let p = node_deleted
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5))
        })
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["deletionTimestamp"] = json!(ago(60))
        })
        .plan();
    // Its pod still needs a home: provisioned for as a deleting node's.
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "removeNodeClaimFinalizer NodeClaim/c-1"
        ]
    );
}

/// Cluster API deletes a Machine and its Node (a MachineHealthCheck remediation, a rollout, a
/// `kubectl delete machine`) while our NodeClaim is alive: Cluster API drains and removes the
/// node itself, so the plan neither drains it, nor deletes its claim as a user request, nor picks
/// it for a disruption of its own; once the Machine is gone the claim is garbage-collected.
#[test]
fn cluster_api_deleting_a_machine_and_its_node_takes_no_disruption_action() {
    let capi_deletes = |w: World, i: usize| {
        w.with("Machine", &format!("m-{i}"), |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(20));
            m["metadata"]["finalizers"] = json!(["machine.cluster.x-k8s.io"]);
        })
        .with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["deletionTimestamp"] = json!(ago(5));
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        })
    };
    let touches_1 = |p: &Plan| -> Vec<String> {
        let v = serde_json::to_value(p).unwrap();
        v["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                let t = a["target"].as_str().unwrap();
                t == "Node/node-1"
                    || t == "NodeClaim/c-1"
                    || t.ends_with("/m-1")
                    || a["node"] == "node-1"
            })
            .map(|a| {
                format!(
                    "{} {}",
                    a["action"].as_str().unwrap(),
                    a["target"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Empty (emptiness would pick it), WhenEmpty: no action at all.
    let p = capi_deletes(idle(1), 1).plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    // With pods and room on node-2, under WhenEmptyOrUnderutilized: node-1 is neither tainted nor
    // drained nor consolidated, its claim is not deleted (it is no user deletion).
    let busy = World::new("WhenEmptyOrUnderutilized")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("a", Some(1), "500m")
        .pod("b", Some(2), "500m");
    let p = capi_deletes(busy.clone(), 1).plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Without Cluster API deleting it, the same node-1 is consolidated: the state above does
    // exercise the rule.
    assert!(
        !touches_1(&busy.plan()).is_empty(),
        "{:?}",
        lines(&busy.plan())
    );
    // Drifted and NotReady (Cluster API drained it): still nothing, not garbage-collected while
    // its Machine exists.
    let p = capi_deletes(busy.clone(), 1)
        .with("NodeClaim", "c-1", stamp_stale)
        .with("Node", "node-1", |n| {
            n["status"]["conditions"][0]["status"] = json!("False")
        })
        .plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Only the Machine being deleted (the Node not yet): the same.
    let p = busy
        .clone()
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(20))
        })
        .plan();
    assert_eq!(touches_1(&p), Vec::<String>::new(), "{:?}", lines(&p));
    // Once Cluster API removed the Machine and the Node is NotReady: garbage-collected.
    let mut gone = capi_deletes(busy, 1).with("Node", "node-1", |n| {
        n["status"]["conditions"][0]["status"] = json!("False")
    });
    gone.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    let p = gone.plan();
    let json = serde_json::to_value(&p).unwrap();
    let gc: Vec<(&str, &str)> = json["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "deleteNodeClaim")
        .map(|a| (a["target"].as_str().unwrap(), a["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(gc, vec![("NodeClaim/c-1", "GarbageCollected")]);
}

#[test]
fn the_node_finalizer_stays_until_the_machine_is_gone() {
    let w = World::new("WhenEmpty")
        .md(4, 0)
        .machine(4, 1, true, false)
        .with("Machine", "m-1", |m| {
            m["metadata"]["deletionTimestamp"] = json!(ago(5))
        })
        .with("Node", "node-1", |n| {
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"])
        });
    assert_eq!(lines(&w.plan()), Vec::<String>::new());
    let mut gone = w.machine(4, 2, false, false);
    gone.objects_mut()
        .retain(|o| !(o["kind"] == "Machine" && o["metadata"]["name"] == "m-1"));
    assert!(lines(&gone.plan()).contains(&"removeNodeFinalizer Node/node-1".to_string()));
}

// ---------------------------------------------------------------------------------------------
// Rule 5: drain like Karpenter.

fn tainted(w: World, node: &str, reason: &str) -> World {
    let claim = node.replace("node-", "c-");
    w.with(
        "Node",
        node,
        |n| {
            n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
        },
    )
    .with("NodeClaim", &claim, |c| {
        // No reason: tainted by termination (a deletion), not by a command.
        if !reason.is_empty() {
            c["metadata"]["annotations"]["karpenter-capi/disruption-reason"] = json!(reason);
        }
        // Started a minute ago: past the 15 s validation delay.
        c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(ago(60));
    })
}

/// The claim of `node` deleted a minute ago (our finalizer holds it): termination drains it.
/// `w` after a first termination pass of `node`: labelled out of external load balancers (core
/// `terminator.go` Taint), as every later pass finds it.
fn excluded(w: World, node: &str) -> World {
    w.with("Node", node, |n| {
        n["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] =
            json!("karpenter")
    })
}

fn deleted(w: World, node: &str) -> World {
    let claim = node.replace("node-", "c-");
    w.with("NodeClaim", &claim, |c| {
        c["metadata"]["deletionTimestamp"] = json!(ago(60))
    })
}

/// A DaemonSet pod on `node-1` that does not tolerate the disrupted taint, with a priority class.
fn ds_pod(name: &str, node: usize, priority: Option<&str>) -> Value {
    let p = Pod::new("kube-system", name)
        .uid(&format!("uid-{name}"))
        .daemon_set(name, "d")
        .on(&format!("node-{node}"))
        .cpu("50m");
    match priority {
        Some(pc) => p.priority_class(pc).build(),
        None => p.build(),
    }
}

fn evictions(p: &Plan) -> Vec<String> {
    lines(p)
        .into_iter()
        .filter(|l| l.starts_with("evictPod"))
        .collect()
}

#[test]
fn evictions_go_tier_by_tier_and_skip_mirror_tolerating_and_terminating_pods() {
    // Core `terminator.go` `groupPodsByPriority`: non-critical, non-critical DaemonSet, critical,
    // critical DaemonSet; each tier only once the previous one is gone. cilium-1 (tolerates every
    // taint), the mirror pod and the tolerating pod are never evicted and never wait.
    let critical = Pod::new("kube-system", "dns")
        .uid("uid-dns")
        .on("node-1")
        .priority_class("system-cluster-critical");
    let mirror = Pod::new("kube-system", "etcd")
        .annotation("kubernetes.io/config.mirror", "x")
        .set(
            "/metadata/ownerReferences",
            json!([{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n", "controller": true}]),
        )
        .on("node-1")
        .priority_class("system-node-critical");
    let tolerant = Pod::new("default", "tolerant")
        .on("node-1")
        .toleration("karpenter.sh/disrupted");
    let base = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("busy", Some(2), "1")
        .add(critical)
        .add(mirror)
        .add(tolerant)
        .add(ds_pod("exporter", 1, None))
        .add(ds_pod("proxy", 1, Some("system-node-critical")));
    for reason in ["Expired", "Drifted", "Empty"] {
        // Tier 1 (non-critical) first: only web. The claim is deleted: termination drains.
        let w = deleted(
            tainted(base.clone().pod("web", Some(1), "500m"), "node-1", reason),
            "node-1",
        );
        let p = w.plan();
        assert_eq!(evictions(&p), vec!["evictPod Pod/default/web"], "{reason}");
        use karpenter_capi::controller::write::Write;
        let ev = p.actions.iter().find(|a| a.name() == "evictPod").unwrap();
        assert!(
            matches!(&ev.steps().writes[0], Write::Evict { uid: Some(u), .. } if u == "uid-web")
        );
        // web terminating: nothing of the next tier goes yet, and the node is not finished.
        let w = excluded(w, "node-1").with("Pod", "web", |p| {
            p["metadata"]["deletionTimestamp"] = json!(ago(1))
        });
        let p = w.plan();
        assert!(evictions(&p).is_empty(), "{reason} {:?}", lines(&p));
        assert!(!lines(&p).iter().any(|l| l.starts_with("markMachine")));
        // web gone: the non-critical DaemonSet pod (tier 2) ...
        let w = w.without("web");
        let p = w.plan();
        assert_eq!(
            evictions(&p),
            vec!["evictPod Pod/kube-system/exporter"],
            "{reason}"
        );
        assert!(!lines(&p).iter().any(|l| l.starts_with("markMachine")));
        // ... then the critical pod (tier 3) ...
        let w = w.without("exporter");
        let p = w.plan();
        assert_eq!(
            evictions(&p),
            vec!["evictPod Pod/kube-system/dns"],
            "{reason}"
        );
        // ... then the critical DaemonSet pod (tier 4), still before the Machine is marked ...
        let w = w.without("dns");
        let p = w.plan();
        assert_eq!(
            lines(&p),
            vec!["evictPod Pod/kube-system/proxy"],
            "{reason}"
        );
        // ... and only then the Machine goes (mirror, tolerating and cilium pods stay).
        let p = w.without("proxy").plan();
        assert_eq!(
            lines(&p),
            vec![
                "markMachineForDeletion Machine/capi-ovh/m-1",
                "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
            ],
            "{reason}"
        );
    }
}

#[test]
fn an_empty_node_drains_its_daemonset_pods_before_its_machine_goes() {
    // Empty (only DaemonSet pods): the command starts with the taint; the claim's deletion, the
    // evictions, the Machine mark and the scale-down follow (pending).
    let ds = |w: World| {
        w.add(ds_pod("exporter", 1, None))
            .add(ds_pod("proxy", 1, Some("system-node-critical")))
    };
    let p = ds(idle(1)).plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    let pending: Vec<&str> = p.pending.iter().map(|a| a.name()).collect();
    assert_eq!(
        pending,
        vec![
            "deleteNodeClaim",
            "evictPod",
            "evictPod",
            "markMachineForDeletion",
            "scaleMachineDeployment"
        ]
    );
    // Validated: the claim is deleted; termination drains it, tier by tier, then the Machine.
    assert_eq!(
        lines(&ds(one_empty(1)).plan()),
        vec!["deleteNodeClaim NodeClaim/c-1"]
    );
    let w = deleted(ds(one_empty(1)), "node-1");
    assert_eq!(
        lines(&w.plan()),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "evictPod Pod/kube-system/exporter"
        ]
    );
    let w = excluded(w, "node-1");
    let w = w.without("exporter");
    assert_eq!(lines(&w.plan()), vec!["evictPod Pod/kube-system/proxy"]);
    assert_eq!(
        lines(&w.without("proxy").plan()),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // Only DaemonSet pods that tolerate the taint (cilium): the claim and the Machine go in the
    // pass that validates the command.
    assert_eq!(
        lines(&one_empty(1).plan()),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
}

#[test]
fn a_deleted_claim_drains_its_daemonset_pods_before_its_machine_is_marked() {
    // `kubectl delete nodeclaim` (forceful): same tiers, DaemonSet pods included.
    let w = deleted(
        idle(1).add(ds_pod("proxy", 1, Some("system-node-critical"))),
        "node-1",
    );
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1",
            "evictPod Pod/kube-system/proxy"
        ]
    );
    // Drained, but tainted only now: the Machine waits the minimum drain time (core
    // MinDrainTime), so a pod bound before the taint was seen is drained too.
    let p = w.clone().without("proxy").plan();
    assert_eq!(
        lines(&p),
        vec![
            "excludeFromLoadBalancers Node/node-1",
            "taintNode Node/node-1"
        ]
    );
    let p = tainted(w.without("proxy"), "node-1", "").plan();
    assert!(
        lines(&p).contains(&"markMachineForDeletion Machine/capi-ovh/m-1".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(!lines(&p).iter().any(|l| l.starts_with("evictPod")));
}

// ---------------------------------------------------------------------------------------------
// Rule 6: no voluntary drain without a home.

#[test]
fn a_drift_whose_replacement_vanished_is_aborted_with_an_event() {
    // node-1 drifted and tainted; its pod (3 cpu) fits on no existing node; no replacement.
    let w = tainted(
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .pod("big", Some(1), "3")
            .pod("other", Some(2), "3"),
        "node-1",
        "Drifted",
    );
    let p = w.plan();
    assert_eq!(lines(&p), vec!["abortDisruption Node/node-1"]);
    let steps = p.actions[0].steps();
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&steps.writes[0], Write::EditNode { remove_taint_keys, .. } if remove_taint_keys == &vec!["karpenter.sh/disrupted".to_string()])
    );
    assert!(
        matches!(&steps.writes[1], Write::Event { event_type, reason, .. } if event_type == "Warning" && reason == "DisruptionAborted")
    );
    // Expiry is forceful: it drains regardless, and its pod is provisioned for meanwhile.
    let p = deleted(
        tainted(
            World::new("WhenEmpty")
                .md(4, 2)
                .machine(4, 1, true, true)
                .machine(4, 2, true, true)
                .pod("big", Some(1), "3")
                .pod("other", Some(2), "3"),
            "node-1",
            "Expired",
        ),
        "node-1",
    )
    .plan();
    assert_eq!(
        lines(&p),
        vec![
            "createNodeClaim NodeClaim/default-",
            "excludeFromLoadBalancers Node/node-1",
            "evictPod Pod/default/big"
        ]
    );
}

/// A replacement claim (annotated `karpenter-capi/replaces`) for a drifted or underutilized
/// node whose pods need it: while it comes up, the drain waits; once it failed (being deleted,
/// or its launch or registration timed out this pass), the disruption is called off at once:
/// the taint comes off and a Warning Event says why.
#[test]
fn a_replacement_that_failed_aborts_the_disruption_with_an_event() {
    use karpenter_capi::controller::write::Write;
    let with_replacement = |reason: &str, f: &dyn Fn(&mut Value)| {
        let mut r = waiting_claim("default-r", 60)
            .annotation("karpenter-capi/replaces", "node-1")
            .build();
        f(&mut r);
        tainted(
            World::new("WhenEmptyOrUnderutilized")
                .md(4, 3)
                .machine(4, 1, true, true)
                .machine(4, 2, true, true)
                .pod("big", Some(1), "3")
                .pod("other", Some(2), "3"),
            "node-1",
            reason,
        )
        .with("NodeClaim", "c-1", |c| {
            c["metadata"]["annotations"]["karpenter-capi/replacements"] = json!("1")
        })
        .add(r)
    };
    for reason in ["Drifted", "Underutilized"] {
        // Coming up (a minute old): the drain waits for it.
        let p = with_replacement(reason, &|_| {}).plan();
        assert_eq!(lines(&p), Vec::<String>::new(), "{reason}");
        assert!(
            has_note(
                &p,
                "node node-1: waiting for its replacement default-r to initialize before draining"
            ),
            "{reason}: {:?}",
            p.notes
        );
        type Failure<'a> = (&'a str, &'a dyn Fn(&mut Value), Vec<&'a str>);
        let failed: [Failure; 3] = [
            (
                "being deleted",
                &|r| r["metadata"]["deletionTimestamp"] = json!(ago(5)),
                vec![
                    "abortDisruption Node/node-1",
                    "removeNodeClaimFinalizer NodeClaim/default-r",
                ],
            ),
            (
                "launch timed out",
                &|r| r["metadata"]["creationTimestamp"] = json!(ago(600)),
                vec![
                    "deleteNodeClaim NodeClaim/default-r",
                    "abortDisruption Node/node-1",
                ],
            ),
            (
                "registration timed out",
                &|r| {
                    r["metadata"]["creationTimestamp"] = json!(ago(1200));
                    r["status"] = json!({"providerID": "openstack:///9", "conditions": [{"type": "Launched", "status": "True"}]});
                },
                vec![
                    "deleteNodeClaim NodeClaim/default-r",
                    "abortDisruption Node/node-1",
                ],
            ),
        ];
        for (what, f, want) in failed {
            let p = with_replacement(reason, f).plan();
            assert_eq!(
                lines(&p),
                want,
                "{reason}, replacement {what}: {:?}",
                p.notes
            );
            let abort = p
                .actions
                .iter()
                .find(|a| a.name() == "abortDisruption")
                .unwrap();
            let steps = abort.steps();
            assert_eq!(
                steps.writes.len(),
                4,
                "{reason}, {what}: {:?}",
                steps.writes
            );
            assert!(
                matches!(&steps.writes[0], Write::EditNode { name, remove_taint_keys, add_taints, .. }
                    if name == "node-1" && remove_taint_keys == &vec!["karpenter.sh/disrupted".to_string()] && add_taints.is_empty()),
                "{reason}, {what}: {:?}",
                steps.writes[0]
            );
            match &steps.writes[1] {
                Write::Event {
                    event_type,
                    reason: r,
                    name,
                    message,
                    ..
                } => {
                    assert_eq!(
                        (event_type.as_str(), r.as_str(), name.as_str()),
                        ("Warning", "DisruptionAborted", "node-1")
                    );
                    assert_eq!(
                        message,
                        &format!(
                            "{reason} disruption called off: a replacement NodeClaim failed or vanished"
                        ),
                        "{what}"
                    );
                }
                other => panic!("{reason}, {what}: {other:?}"),
            }
            // The claim reads as no longer disrupted: its bookkeeping annotations and Karpenter's
            // DisruptionReason condition go.
            assert!(
                matches!(&steps.writes[2], Write::MergePatch { name, patch, .. } if name == "c-1"
                    && patch == &json!({"metadata": {"annotations": {"karpenter-capi/drain-started": null, "karpenter-capi/disruption-reason": null, "karpenter-capi/replacements": null}}})),
                "{:?}",
                steps.writes[2]
            );
            assert!(
                matches!(&steps.writes[3], Write::ClearConditions { name, types, .. } if name == "c-1" && types == &vec!["DisruptionReason".to_string()]),
                "{:?}",
                steps.writes[3]
            );
            // No pod is evicted, no Machine marked.
            assert!(evictions(&p).is_empty());
        }
    }
}

#[test]
fn a_drifted_node_whose_pods_fit_nowhere_is_not_drained() {
    // A 7-cpu pod: only the 8-cpu flavor holds it, and that flavor is the drifted one's own
    // MachineDeployment... which the pool no longer offers.
    let w = World::new("WhenEmpty")
        .md(8, 1)
        .machine(8, 1, true, true)
        .pod("huge", Some(1), "7")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("MachineDeployment", "md-8", |md| {
            md["metadata"]["labels"] = json!({})
        })
        .md(4, 0);
    let p = w.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("taintNode") || l.starts_with("evictPod")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(
            &p,
            "node node-1: Drifted, but pods default/huge fit nowhere else; not drained"
        ),
        "{:?}",
        p.notes
    );
}

#[test]
fn room_that_is_not_initialized_is_no_home() {
    // node-1 (drifted, 1 cpu pod) could move to node-2, but node-2's claim is not initialized.
    let w = World::new("WhenEmpty").md(4, 2).machine(4, 1, true, true).machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("NodeClaim", "c-2", |c| c["status"]["conditions"] = json!([{"type": "Launched", "status": "True"}, {"type": "Registered", "status": "True"}]));
    let p = w.plan();
    // A replacement first; no eviction.
    assert_eq!(
        lines(&p)
            .iter()
            .filter(|l| !l.starts_with("initializeNodeClaim"))
            .cloned()
            .collect::<Vec<_>>(),
        vec![
            "createNodeClaim NodeClaim/default-",
            "taintNode Node/node-1"
        ]
    );
}

/// Budgets count like Karpenter (core `disruption/helpers.go` `BuildDisruptionBudgetMapping`):
/// a node already disrupting (tainted `karpenter.sh/disrupted`) or being deleted (its claim, its
/// Node, or its Machine) uses up a `nodes: "1"` budget, so no further voluntary disruption
/// starts; with a budget of two, one more goes.
#[test]
fn a_disrupting_or_deleting_node_uses_up_a_budget_of_one() {
    let budget = |w: World, nodes: &str| {
        let nodes = nodes.to_string();
        w.with("NodePool", "default", move |np| {
            np["spec"]["disruption"]["budgets"] = json!([{"nodes": nodes}])
        })
    };
    // node-1 and node-2 empty (Empty candidates); node-3 is the one already in progress.
    let three = || {
        World::new("WhenEmpty")
            .md(4, 3)
            .machine(4, 1, true, true)
            .machine(4, 2, true, true)
            .machine(4, 3, true, true)
            .pod("web", Some(3), "1")
    };
    // The empty nodes tainted (node-3's own termination may taint node-3).
    let tainted_now = |p: &Plan| -> Vec<String> {
        lines(p)
            .into_iter()
            .filter(|l| l.starts_with("taintNode") && !l.ends_with("node-3"))
            .collect()
    };
    // Nothing in progress: the budget of one lets node-1 go, not node-2.
    let p = budget(three(), "1").plan();
    assert_eq!(tainted_now(&p), vec!["taintNode Node/node-1"]);
    let in_progress: [(&str, &dyn Fn(World) -> World); 4] = [
        ("tainted (drifting, pods left)", &|w| {
            tainted(w, "node-3", "Drifted")
        }),
        ("its claim deleting", &|w| {
            w.with("NodeClaim", "c-3", |c| {
                c["metadata"]["deletionTimestamp"] = json!(ago(10))
            })
        }),
        ("its Node deleting", &|w| {
            w.with("Node", "node-3", |n| {
                n["metadata"]["deletionTimestamp"] = json!(ago(10));
                n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
            })
        }),
        ("its Machine deleting", &|w| {
            w.with("Machine", "m-3", |m| {
                m["metadata"]["deletionTimestamp"] = json!(ago(10))
            })
        }),
    ];
    for (what, f) in in_progress {
        // A budget of one is used up by node-3: neither empty node is tainted.
        let p = budget(f(three()), "1").plan();
        assert_eq!(
            tainted_now(&p),
            Vec::<String>::new(),
            "node-3 {what}: {:?}",
            lines(&p)
        );
        assert!(
            !lines(&p).iter().any(
                |l| l.starts_with("markMachineForDeletion Machine/capi-ovh/m-1")
                    || l.starts_with("markMachineForDeletion Machine/capi-ovh/m-2")
            ),
            "node-3 {what}: {:?}",
            lines(&p)
        );
        // A budget of two: exactly one more.
        let p = budget(f(three()), "2").plan();
        assert_eq!(
            tainted_now(&p),
            vec!["taintNode Node/node-1"],
            "node-3 {what}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rule 7: consolidation and provisioning agree.

#[test]
fn a_node_a_pending_pod_fits_on_is_not_empty() {
    let p = idle(1).pod("pending", None, "1").plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
    // No new claim either: the pod goes to the node kept for it.
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    // A pending pod too big for the node leaves it Empty: it goes, and nothing is created.
    let p = idle(1).pod("huge", None, "64").plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    // Two empty nodes, one pending pod: one node is kept for it, the other goes.
    let p = idle(2)
        .machine(4, 2, true, true)
        .pod("pending", None, "1")
        .plan();
    let tainted: Vec<String> = lines(&p)
        .into_iter()
        .filter(|l| l.starts_with("taintNode") || l.starts_with("createNodeClaim"))
        .collect();
    assert_eq!(tainted.len(), 1, "{:?}", lines(&p));
    assert!(tainted[0].starts_with("taintNode"), "{tainted:?}");
}

#[test]
fn disrupting_a_node_pending_pods_need_provisions_for_them() {
    // node-1 (8 cpu) drifted with a small pod that fits on node-2; a pending 3-cpu pod fits only
    // on node-1: it gets a NodeClaim of its own in the same pass.
    let w = World::new("WhenEmpty")
        .md(8, 1)
        .md(4, 1)
        .machine(8, 1, true, true)
        .machine(4, 2, true, true)
        .pod("small", Some(1), "500m")
        .pod("busy", Some(2), "1")
        .pod("pending", None, "3")
        .with("NodeClaim", "c-1", stamp_stale);
    let p = w.plan();
    let l = lines(&p);
    assert_eq!(
        l,
        vec![
            "createNodeClaim NodeClaim/default-",
            "taintNode Node/node-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ],
        "{l:?}"
    );
    assert!(
        matches!(&p.actions[0], Action::CreateNodeClaim { pods, reason, .. } if pods == &vec!["default/pending".to_string()] && reason == "Provisioning")
    );
}

#[test]
fn pending_pods_take_their_room_before_consolidation() {
    // node-1 (4 cpu) holds web (1 cpu), which fits in node-2's 2.9 free cpu; node-2 is not to be
    // disrupted. Without pending pods node-1 is consolidated away; a pending 2.5-cpu pod takes
    // that room first (on either node), so node-1 stays.
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(4, 1)
        .md(8, 1)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "5")
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        });
    let p = w.plan();
    assert_eq!(lines(&p), vec!["taintNode Node/node-1"]);
    let p = w.pod("pending", None, "2500m").plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("taintNode")),
        "{:?}",
        lines(&p)
    );
}

#[test]
fn pending_pods_that_fit_nowhere_neither_block_nor_loop_consolidation() {
    // node-1's web (1 cpu) fits beside busy on node-2 (do-not-disrupt): node-1 is consolidated
    // away. A pending pod no flavor holds (64 cpu) takes no room anywhere, so the same decision
    // is made with it (core simulates pending pods with the candidates' but only the candidates'
    // pods must schedule), and the next pass finishes it instead of calling it off or
    // provisioning for it again.
    let base = World::new("WhenEmptyOrUnderutilized")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "1")
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        });
    let alone = base.clone().plan();
    let w = base.pod("huge", None, "64");
    let with = w.plan();
    assert_eq!(lines(&with), vec!["taintNode Node/node-1"]);
    assert_eq!(lines(&alone), lines(&with));
    assert!(
        has_note(
            &with,
            "pod default/huge fits no flavor: c-4: needs 64 cpu, c-4 has 3900m allocatable"
        ),
        "{:?}",
        with.notes
    );
    // Validated, the claim goes (and termination evicts web, which runs on node-2 again); huge
    // still pending.
    let validated = tainted(w, "node-1", "Underutilized");
    assert_eq!(
        lines(&validated.plan()),
        vec!["deleteNodeClaim NodeClaim/c-1"]
    );
    let next = validated.with("Pod", "web", |p| p["spec"]["nodeName"] = json!("node-2"));
    let p = next.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "deleteNodeClaim NodeClaim/c-1",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-4"
        ]
    );
    // And once node-1 is gone, nothing more: no claim for huge, no disruption.
    let mut done = next;
    done.objects_mut().retain(|o| {
        !(o["metadata"]["name"] == "node-1"
            || o["metadata"]["name"] == "m-1"
            || o["metadata"]["name"] == "c-1"
            || o["metadata"]["name"] == "cilium-1")
    });
    let done = done.with("MachineDeployment", "md-4", |md| {
        md["spec"]["replicas"] = json!(1)
    });
    let p = done.plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
}

// ---------------------------------------------------------------------------------------------
// Rule 8 and the whole sequence on the in-memory API, with failures injected.

fn fake_of(w: &World) -> FakeApi {
    let fake = FakeApi::new();
    // Passes on the in-memory API run at the real clock: a command started `x` before NOW in the
    // world started `x` before the real now there.
    let shift = Timestamp::now().as_second() - NOW.parse::<Timestamp>().unwrap().as_second();
    for o in w.objects() {
        let mut o = o.clone();
        if let Some(t) = o["metadata"]["annotations"]["karpenter-capi/drain-started"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
        {
            o["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(
                Timestamp::from_second(t.as_second() + shift)
                    .unwrap()
                    .to_string()
            );
        }
        fake.seed(o);
    }
    fake
}

async fn run_pass(fake: &FakeApi) -> Result<karpenter_capi::error::Outcome, karpenter_capi::Error> {
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(std::io::sink()));
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    once(
        &clients,
        Some(NS),
        None,
        &Config::default(),
        false,
        &printer,
    )
    .await
}

/// Polls `f` every 50 ms until it holds (at most `secs` seconds).
async fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..secs * 20 {
        if f() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    f()
}

#[tokio::test]
async fn a_watch_relisting_after_a_restart_holds_the_scale_down_until_it_is_done() {
    // The in-memory API expires the MachineSet watch (410, as after an API server restart) and
    // fails its re-list: kube-runtime's watcher starts over (`Init`) and the store keeps the old
    // objects until `InitDone`. Meanwhile the snapshot says so and no scale-down goes.
    let w = one_empty(1).add(machine_set(4, "md-4-a", 1, 600));
    let fake = fake_of(&w);
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let metrics = std::sync::Arc::new(karpenter_capi::kube::metrics::Metrics::new());
    let notify = std::sync::Arc::new(tokio::sync::Notify::new());
    let (stores, tasks) =
        karpenter_capi::kube::watch::start(&clients, Some(NS), None, notify, metrics)
            .await
            .unwrap();
    stores.wait_until_ready().await;
    // The real clock, as `fake_of` dates the command under way.
    let now = Timestamp::now();
    let scales = |stores: &karpenter_capi::kube::watch::Stores| {
        let snap = stores.snapshot().unwrap();
        let p = plan(&snap, now, &Config::default());
        (
            lines(&p)
                .iter()
                .any(|l| l.starts_with("scaleMachineDeployment")),
            p.notes,
            snap.unsynced,
        )
    };
    let (scaled, _, unsynced) = scales(&stores);
    assert!(scaled && unsynced.is_empty(), "{unsynced:?}");

    fake.fail("GET", "/machinesets", 500, 10_000);
    fake.expire_watches("cluster.x-k8s.io", "machinesets");
    assert!(
        eventually(20, || !stores.unsynced().is_empty()).await,
        "the watcher never re-listed"
    );
    let (scaled, notes, unsynced) = scales(&stores);
    assert_eq!(
        unsynced,
        vec!["management cluster machinesets.cluster.x-k8s.io".to_string()]
    );
    assert!(!scaled, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains(
            "replicas not lowered from 1: stale view: the watches of management cluster machinesets.cluster.x-k8s.io have not re-synced yet"
        )),
        "{notes:?}"
    );

    // The API answers again: the re-list completes and the scale-down goes.
    fake.clear_faults();
    assert!(
        eventually(40, || stores.unsynced().is_empty()).await,
        "the watcher never re-synced"
    );
    let (scaled, notes, _) = scales(&stores);
    assert!(scaled, "{notes:?}");
    for t in tasks {
        t.abort();
    }
}

/// `secs` pass for the controller's own clocks: every command's start (the drain-started record
/// on NodeClaims) moves back, as the passes run at the real clock.
fn time_passes(fake: &FakeApi, secs: i64) {
    for c in fake.all("karpenter.sh", "nodeclaims") {
        let name = c["metadata"]["name"].as_str().unwrap().to_string();
        let Some(t) = c["metadata"]["annotations"]["karpenter-capi/drain-started"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
        else {
            continue;
        };
        let earlier = Timestamp::from_second(t.as_second() - secs)
            .unwrap()
            .to_string();
        fake.mutate("karpenter.sh", "nodeclaims", "", &name, |c| {
            c["metadata"]["annotations"]["karpenter-capi/drain-started"] = json!(earlier)
        });
    }
}

/// What Cluster API does with replicas: deletes Machines beyond `spec.replicas`, the marked ones
/// first; returns the Machines it deleted that were not marked (wrong victims).
fn capi_reconcile(fake: &FakeApi) -> Vec<String> {
    let mut wrong = Vec::new();
    for md in fake.all("cluster.x-k8s.io", "machinedeployments") {
        let name = md["metadata"]["name"].as_str().unwrap().to_string();
        let want = md["spec"]["replicas"].as_i64().unwrap_or(0);
        let mut alive: Vec<Value> = fake
            .all("cluster.x-k8s.io", "machines")
            .into_iter()
            .filter(|m| {
                m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == name.as_str()
            })
            .filter(|m| m["metadata"]["deletionTimestamp"].is_null())
            .collect();
        alive.sort_by_key(|m| {
            m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"].is_null()
        });
        for m in alive
            .iter()
            .take((alive.len() as i64 - want).max(0) as usize)
        {
            let n = m["metadata"]["name"].as_str().unwrap();
            if m["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"].is_null() {
                wrong.push(n.to_string());
            }
            fake.remove("cluster.x-k8s.io", "machines", NS, n);
        }
    }
    wrong
}

/// Two empty nodes on two MachineDeployments and a pending pod: a failure on one node's
/// disruption leaves the other node's disruption and the provisioning untouched.
#[tokio::test]
async fn one_failed_write_stays_local_to_its_node_and_machine_deployment() {
    // The pending pod fits only a new 16-cpu node.
    let w = World::new("WhenEmpty")
        .md(4, 1)
        .md(8, 1)
        .md(16, 0)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .pod("pending", None, "12");
    // Both empty nodes' commands under way (validated).
    let w = tainted(tainted(w, "node-1", "Empty"), "node-2", "Empty");
    let fake = fake_of(&w);
    fake.fail("PATCH", "/machines/m-1", 500, 1);
    let r = run_pass(&fake).await;
    assert!(r.is_err(), "a failed action fails the pass (exit 2)");
    let writes = fake.writes();
    // Provisioning ran first, and node-2's whole sequence went through.
    assert!(
        writes[0].starts_with("POST /apis/karpenter.sh/v1/nodeclaims 201"),
        "{writes:#?}"
    );
    assert!(
        writes
            .iter()
            .any(|w| w
                == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/m-2 200"),
        "{writes:#?}"
    );
    assert!(
        writes
            .iter()
            .any(|w| w == "DELETE /apis/karpenter.sh/v1/nodeclaims/c-2 200")
    );
    assert!(writes.iter().any(|w| w == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-8/scale 200"));
    // node-1: the mark failed, so neither its claim's deletion nor md-4's scale-down ran.
    assert!(
        !writes
            .iter()
            .any(|w| w.contains("nodeclaims/c-1") && w.starts_with("DELETE")),
        "{writes:#?}"
    );
    assert!(
        !writes
            .iter()
            .any(|w| w.contains("machinedeployments/md-4/scale")),
        "{writes:#?}"
    );
    assert_eq!(capi_reconcile(&fake), Vec::<String>::new());
    // The next pass retries node-1.
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let writes = fake.writes();
    assert!(writes.iter().any(|w| w == "PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-4/scale 200"), "{writes:#?}");
}

/// Evictions and forced deletes carry the UID of the pod planned on (rule 5): a pod deleted and
/// re-created under the same name since the listing (a StatefulSet pod) is neither evicted nor
/// deleted by that plan; the API server refuses with 409 and the executor counts the planned pod
/// as gone. The next pass, which lists the new pod, evicts it. The in-memory API enforces the
/// precondition as the API server does.
#[tokio::test]
async fn a_pod_recreated_under_the_same_name_is_not_evicted_by_a_stale_plan() {
    use karpenter_capi::kube::apply::{ActionOutcome, Executor};
    // node-1 expired (forceful), its claim deleted: web goes at once.
    let w = deleted(
        tainted(idle(1).pod("web", Some(1), "1"), "node-1", "Expired"),
        "node-1",
    );
    let p = w.plan();
    assert_eq!(evictions(&p), vec!["evictPod Pod/default/web"]);
    let fake = fake_of(&w);
    fake.mutate("", "pods", "default", "web", |p| {
        p["metadata"]["uid"] = json!("uid-web-recreated")
    });
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    let results = Executor::new(clients.clone())
        .execute(&p, NOW.parse().unwrap())
        .await;
    let evicted = results.iter().find(|r| r.action == "evictPod").unwrap();
    assert!(
        matches!(evicted.outcome, ActionOutcome::Applied),
        "{:?}",
        evicted.outcome
    );
    let refused: Vec<(String, u16)> = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/pods/web/eviction"))
        .map(|r| {
            (
                r.body["deleteOptions"]["preconditions"]["uid"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                r.code,
            )
        })
        .collect();
    assert_eq!(refused, vec![("uid-web".to_string(), 409)]);
    let pod = fake
        .get("", "pods", "default", "web")
        .expect("the re-created pod stays");
    assert_eq!(pod["metadata"]["uid"], "uid-web-recreated");
    // A forced delete with the stale UID is refused the same way.
    let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(clients.workload.clone(), "default");
    let stale = kube::api::DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("uid-web".to_string()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = api.delete("web", &stale).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err:?}"
    );
    assert!(fake.get("", "pods", "default", "web").is_some());
    // The next pass plans on the pod as it is now and evicts it.
    fake.clear_log();
    let _ = run_pass(&fake).await;
    let evictions: Vec<(String, u16)> = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/pods/web/eviction"))
        .map(|r| {
            (
                r.body["deleteOptions"]["preconditions"]["uid"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                r.code,
            )
        })
        .collect();
    assert_eq!(evictions, vec![("uid-web-recreated".to_string(), 201)]);
    assert!(fake.get("", "pods", "default", "web").is_none());
}

/// One pass planned on the in-memory API's current state and applied by an executor that gives
/// up on a write after `deadline`.
async fn pass_with_deadline(
    fake: &FakeApi,
    deadline: std::time::Duration,
) -> Vec<karpenter_capi::kube::apply::ActionResult> {
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client.clone(),
    };
    let snap = karpenter_capi::kube::list::live_snapshot(&client, &client, Some(NS))
        .await
        .unwrap();
    let now = Timestamp::now();
    let p = plan(&snap, now, &Config::default());
    karpenter_capi::kube::apply::Executor::new(clients)
        .with_write_deadline(deadline)
        .execute(&p, now)
        .await
}

/// Rule 8 with the failures an eviction really meets: a validating webhook refusing it (403) and
/// an API server that never answers. Node A's drift stops at its eviction; node B's emptiness
/// (another MachineDeployment) and the provisioning for a pending pod go through in the same
/// pass; the next pass retries A's eviction.
#[tokio::test]
async fn a_refused_or_hung_eviction_on_one_node_leaves_the_others_alone() {
    use karpenter_capi::kube::apply::ActionOutcome;
    // node-1 (md-4) drifted, its claim deleted, its pod fits on node-3: draining; node-2
    // (md-8) empty, its command validated; a pending pod needs a new 16-cpu node.
    let w = World::new("WhenEmpty")
        .md(4, 2)
        .md(8, 1)
        .md(16, 0)
        .machine(4, 1, true, true)
        .machine(8, 2, true, true)
        .machine(4, 3, true, true)
        .pod("a", Some(1), "1")
        .pod("c", Some(3), "1")
        .pod("pending", None, "12")
        .with("NodeClaim", "c-1", stamp_stale);
    let w = tainted(
        deleted(tainted(w, "node-1", "Drifted"), "node-1"),
        "node-2",
        "Empty",
    );
    for (what, inject) in [
        ("refused by a webhook (403)", 403u16),
        ("never answered", 0),
    ] {
        let fake = fake_of(&w);
        if inject == 0 {
            fake.hang("POST", "/pods/a/eviction", 1);
        } else {
            fake.fail("POST", "/pods/a/eviction", inject, 1);
        }
        let results = pass_with_deadline(&fake, std::time::Duration::from_secs(1)).await;
        let outcome = |action: &str, target: &str| {
            results
                .iter()
                .find(|r| r.action == action && r.target == target)
                .map(|r| match r.outcome {
                    ActionOutcome::Applied => "applied",
                    ActionOutcome::Failed { .. } => "failed",
                    ActionOutcome::Skipped => "skipped",
                    ActionOutcome::BackingOff => "backing off",
                })
                .unwrap_or_else(|| panic!("{what}: no {action} {target} in {results:#?}"))
        };
        assert_eq!(outcome("evictPod", "Pod/default/a"), "failed", "{what}");
        for (action, target) in [
            ("markMachineForDeletion", "Machine/capi-ovh/m-2"),
            ("deleteNodeClaim", "NodeClaim/c-2"),
            ("scaleMachineDeployment", "MachineDeployment/capi-ovh/md-8"),
            ("scaleMachineDeployment", "MachineDeployment/capi-ovh/md-16"),
        ] {
            assert_eq!(
                outcome(action, target),
                "applied",
                "{what}: {action} {target}"
            );
        }
        let created = results
            .iter()
            .find(|r| r.action == "createNodeClaim")
            .unwrap_or_else(|| panic!("{what}: {results:#?}"));
        assert_eq!(created.outcome, ActionOutcome::Applied, "{what}");
        let writes = fake.writes();
        assert!(
            writes[0].starts_with("POST /apis/karpenter.sh/v1/nodeclaims 201"),
            "{what}: provisioning first: {writes:#?}"
        );
        let code = if inject == 0 { 0 } else { 403 };
        assert!(
            writes.contains(&format!(
                "POST /api/v1/namespaces/default/pods/a/eviction {code}"
            )),
            "{what}: {writes:#?}"
        );
        assert!(fake.get("", "pods", "default", "a").is_some(), "{what}");
        // c-2 is being deleted (its finalizer comes off once its Machine goes).
        let c2 = fake.get("karpenter.sh", "nodeclaims", "", "c-2").unwrap();
        assert!(c2["metadata"]["deletionTimestamp"].is_string(), "{what}");
        assert_eq!(capi_reconcile(&fake), Vec::<String>::new(), "{what}");
        // The next pass retries A: node-1 is still tainted, its pod is evicted now.
        fake.clear_log();
        pass_with_deadline(&fake, std::time::Duration::from_secs(1)).await;
        assert!(
            fake.writes()
                .contains(&"POST /api/v1/namespaces/default/pods/a/eviction 201".to_string()),
            "{what}: {:#?}",
            fake.writes()
        );
        assert!(fake.get("", "pods", "default", "a").is_none(), "{what}");
    }
}

/// The writes of node-1's disruption that succeeded, in the order sent, named.
fn disruption_steps(fake: &FakeApi) -> Vec<String> {
    let mut out = Vec::new();
    for r in fake.requests() {
        if !(200..300).contains(&r.code) {
            continue;
        }
        let b = &r.body;
        let step = match (r.method.as_str(), r.path.as_str()) {
            ("PATCH", "/api/v1/nodes/node-1") if b.pointer("/spec/taints").is_some() => {
                let tainted = b["spec"]["taints"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["key"] == "karpenter.sh/disrupted"));
                if tainted {
                    "taint node-1"
                } else {
                    "untaint node-1"
                }
                .to_string()
            }
            ("PATCH", "/api/v1/nodes/node-1")
                if b.pointer("/metadata/finalizers") == Some(&json!([])) =>
            {
                "node-1 finalizer off".to_string()
            }
            ("POST", p) if p.ends_with("/pods/web/eviction") => "evict web".to_string(),
            ("PATCH", p) if p.ends_with("/machines/m-1") => {
                match b.pointer("/metadata/annotations/cluster.x-k8s.io~1delete-machine") {
                    Some(Value::String(_)) => "mark m-1".to_string(),
                    Some(Value::Null) => "unmark m-1".to_string(),
                    _ => continue,
                }
            }
            ("DELETE", "/apis/karpenter.sh/v1/nodeclaims/c-1") => "delete c-1".to_string(),
            ("PATCH", p) if p.ends_with("/machinedeployments/md-4/scale") => {
                format!("scale md-4 to {}", b["spec"]["replicas"])
            }
            ("PATCH", "/apis/karpenter.sh/v1/nodeclaims/c-1")
                if b.pointer("/metadata/finalizers") == Some(&json!([])) =>
            {
                "c-1 finalizer off".to_string()
            }
            _ => continue,
        };
        out.push(step);
    }
    out
}

/// Each step of a disruption only in its place, whatever failed and was retried: the claim
/// deleted only while its node is tainted; web evicted only from a tainted node whose claim is
/// deleted (nothing is evicted before); the Machine marked only once web is gone; replicas
/// lowered only while the Machine is marked; the finalizers last; and every step done at last,
/// first done in the documented order.
fn assert_in_order(steps: &[String], what: &str) {
    let (mut tainted, mut deleted, mut evicted, mut marked, mut scaled) =
        (false, false, false, false, false);
    for s in steps {
        match s.as_str() {
            "taint node-1" => tainted = true,
            "untaint node-1" => tainted = false,
            "evict web" => {
                assert!(
                    tainted && deleted,
                    "{what}: web evicted from an untainted node or before its claim was deleted: {steps:?}"
                );
                evicted = true;
            }
            "mark m-1" => assert!(evicted, "{what}: m-1 marked before web left: {steps:?}"),
            "unmark m-1" => {}
            "delete c-1" => {
                assert!(
                    tainted,
                    "{what}: c-1 deleted before its node was tainted: {steps:?}"
                );
                deleted = true;
            }
            "scale md-4 to 1" => {
                assert!(
                    marked,
                    "{what}: replicas lowered with m-1 unmarked: {steps:?}"
                );
                scaled = true;
            }
            "c-1 finalizer off" | "node-1 finalizer off" => {
                assert!(
                    scaled,
                    "{what}: {s} before replicas were lowered: {steps:?}"
                )
            }
            other => panic!("{what}: unexpected step {other}: {steps:?}"),
        }
        match s.as_str() {
            "mark m-1" => marked = true,
            "unmark m-1" => marked = false,
            _ => {}
        }
    }
    let mut first: Vec<&str> = Vec::new();
    for s in steps {
        if !first.contains(&s.as_str()) && !s.starts_with("un") {
            first.push(s);
        }
    }
    assert_eq!(
        first,
        vec![
            "taint node-1",
            "delete c-1",
            "evict web",
            "mark m-1",
            "scale md-4 to 1",
            "c-1 finalizer off",
            "node-1 finalizer off"
        ],
        "{what}: {steps:?}"
    );
}

/// A disruption's writes, each failing once in turn: whatever the failure, only the planned
/// Machine is ever removed, no pod is evicted without a home, and a few more passes converge to
/// the same end state (nothing leaked: no claim, no Machine, no finalizer left behind).
#[tokio::test]
async fn a_failure_between_any_two_writes_of_a_disruption_harms_nothing() {
    // node-1 drifted; its 1-cpu pod fits on node-2: drained, then removed.
    let w = World::new("WhenEmpty")
        .md(4, 2)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .pod("web", Some(1), "1")
        .pod("busy", Some(2), "2")
        .with("NodeClaim", "c-1", stamp_stale)
        .with("Node", "node-1", |n| {
            n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"])
        });
    // The writes of an undisturbed run (half a minute between passes).
    let reference = fake_of(&w);
    let mut all = Vec::new();
    for _ in 0..8 {
        let _ = run_pass(&reference).await;
        capi_reconcile(&reference);
        time_passes(&reference, 30);
    }
    for r in reference.requests() {
        if r.method != "GET" && !r.path.contains("/events") {
            all.push((r.method.clone(), r.path.clone()));
        }
    }
    // The documented order (`controller::disruption`, `controller::termination`): taint, delete
    // the claim (termination drains it), evict, mark the exact Machine, lower replicas; the
    // claim's finalizer once the Machine is being deleted, the Node's once it is gone.
    assert_eq!(
        disruption_steps(&reference),
        vec![
            "taint node-1",
            "delete c-1",
            "evict web",
            "mark m-1",
            "scale md-4 to 1",
            "c-1 finalizer off",
            "node-1 finalizer off"
        ]
    );
    assert!(all.len() >= 5, "{all:?}");
    let end_machines = names(&reference, "cluster.x-k8s.io", "machines");
    assert_eq!(end_machines, vec!["m-2"]);
    for (k, (method, path)) in all.iter().enumerate() {
        let fake = fake_of(&w);
        fake.fail(method, path, 500, 1);
        for _ in 0..10 {
            let _ = run_pass(&fake).await;
            time_passes(&fake, 30);
            assert_eq!(
                capi_reconcile(&fake),
                Vec::<String>::new(),
                "failure at write {k} {method} {path}: a Machine not marked was deleted"
            );
            // busy never moves: node-2 is never drained.
            assert!(
                fake.get("", "pods", "default", "busy").is_some(),
                "failure at write {k}"
            );
            let md = fake
                .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
                .unwrap();
            assert!(
                md["spec"]["replicas"].as_i64().unwrap() >= 1,
                "failure at write {k}"
            );
        }
        assert_eq!(
            names(&fake, "cluster.x-k8s.io", "machines"),
            end_machines,
            "failure at write {k} {method} {path}"
        );
        assert_in_order(
            &disruption_steps(&fake),
            &format!("failure at write {k} {method} {path}"),
        );
        assert_eq!(
            names(&fake, "karpenter.sh", "nodeclaims"),
            vec!["c-2"],
            "failure at write {k} {method} {path}"
        );
        let node1 = fake.get("", "nodes", "", "node-1");
        assert!(
            node1.is_none()
                || node1.unwrap()["metadata"]["finalizers"]
                    .as_array()
                    .is_none_or(|f| f.is_empty()),
            "failure at write {k}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// What `kubectl get nodeclaims,nodepools` shows (issue 11 item 7): the status values a pass
// writes, asserted on the in-memory API after a real pass.

/// The status conditions of an object as `type=status/reason`, sorted.
fn conditions(obj: &Value) -> Vec<String> {
    let mut c: Vec<String> = obj["status"]["conditions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    format!(
                        "{}={}/{}",
                        c["type"].as_str().unwrap_or(""),
                        c["status"].as_str().unwrap_or(""),
                        c["reason"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    c.sort();
    c
}

#[tokio::test]
async fn a_pass_writes_consolidatable_drifted_and_the_nodepool_status() {
    // node-1 busy and quiet for an hour (consolidateAfter 30s): Consolidatable. node-2 drifted
    // but protected by do-not-disrupt: Drifted, not disrupted. c-3 saw a pod event 10 s ago: not
    // Consolidatable (a stale True is cleared). All three nodes are the pool's: 3 x (4 cpu, 8G,
    // 110 pods).
    let mut w = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .pod("a", Some(1), "1")
        .pod("b", Some(2), "1")
        .pod("c", Some(3), "1")
        .with("NodeClaim", "c-2", stamp_stale)
        .with("Node", "node-2", |n| {
            n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"})
        })
        .with("NodeClaim", "c-3", |c| {
            // The pass runs at the real clock.
            let recent = Timestamp::from_second(Timestamp::now().as_second() - 10).unwrap();
            c["status"]["lastPodEventTime"] = json!(recent.to_string());
            c["status"]["conditions"].as_array_mut().unwrap().push(
                json!({"type": "Consolidatable", "status": "True", "reason": "Consolidatable"}),
            );
        });
    for i in 1..=3 {
        w = w.with("Node", &format!("node-{i}"), |n| {
            n["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("default")
        });
    }
    let p = w.plan();
    assert_eq!(lines(&p), Vec::<String>::new(), "{:?}", p.notes);
    let fake = fake_of(&w);
    run_pass(&fake).await.unwrap();
    let claim = |n: &str| fake.get("karpenter.sh", "nodeclaims", "", n).unwrap();
    // Each Node is of its flavor's shape: core's consistency check finds it so.
    let base = [
        "ConsistentStateFound=True/ConsistentStateFound",
        "Initialized=True/",
        "Launched=True/",
        "Registered=True/",
    ];
    let with = |extra: &[&str]| {
        let mut v: Vec<String> = base.iter().chain(extra).map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(
        conditions(&claim("c-1")),
        with(&["Consolidatable=True/Consolidatable"])
    );
    assert_eq!(
        conditions(&claim("c-2")),
        with(&[
            "Consolidatable=True/Consolidatable",
            "Drifted=True/NodePoolDrifted"
        ])
    );
    assert_eq!(conditions(&claim("c-3")), with(&[]));
    let pool = fake
        .get("karpenter.sh", "nodepools", "", "default")
        .unwrap();
    assert_eq!(pool["status"]["nodes"], json!(3), "{pool:#}");
    assert_eq!(
        pool["status"]["resources"],
        json!({"cpu": "12", "memory": "24000000000", "pods": "330", "ephemeral-storage": "0", "nodes": "3"}),
        "{pool:#}"
    );
    assert_eq!(conditions(&pool), vec!["Ready=True/Ready"]);
    // Converged: the next pass writes no status again.
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let status_writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains("/status"))
        .collect();
    assert_eq!(status_writes, Vec::<String>::new());

    // The node class goes missing: the pool's Ready turns False with the reason and message.
    fake.remove(
        "karpenter.cluster.x-k8s.io",
        "clusterapinodeclasses",
        "",
        "default",
    );
    run_pass(&fake).await.unwrap();
    let pool = fake
        .get("karpenter.sh", "nodepools", "", "default")
        .unwrap();
    assert_eq!(conditions(&pool), vec!["Ready=False/NodeClassNotReady"]);
    let ready = &pool["status"]["conditions"][0];
    assert_eq!(ready["message"], "ClusterAPINodeClass default not found");
}

#[tokio::test]
async fn a_disruption_sets_disruption_reason_on_its_claim() {
    // node-1 empty (Empty), node-2 drifted with a pod that fits on node-3.
    let w = World::new("WhenEmpty")
        .md(4, 3)
        .machine(4, 1, true, true)
        .machine(4, 2, true, true)
        .machine(4, 3, true, true)
        .pod("web", Some(2), "1")
        .pod("c", Some(3), "1")
        .with("NodeClaim", "c-2", stamp_stale);
    let fake = fake_of(&w);
    run_pass(&fake).await.unwrap();
    // The status write each claim got when its node was tainted.
    let reasons = |claim: &str| -> Vec<String> {
        fake.requests()
            .iter()
            .filter(|r| {
                r.method == "PATCH" && r.path.ends_with(&format!("/nodeclaims/{claim}/status"))
            })
            .flat_map(|r| {
                r.body["status"]["conditions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|c| c["type"] == "DisruptionReason")
            .map(|c| {
                format!(
                    "{}/{}",
                    c["status"].as_str().unwrap(),
                    c["reason"].as_str().unwrap()
                )
            })
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect()
    };
    assert_eq!(reasons("c-1"), vec!["True/Empty"]);
    assert_eq!(reasons("c-2"), vec!["True/Drifted"]);
    assert_eq!(reasons("c-3"), Vec::<String>::new());
    // c-2 still exists (its drain is under way) and shows it.
    let c2 = fake.get("karpenter.sh", "nodeclaims", "", "c-2").unwrap();
    assert!(
        conditions(&c2).contains(&"DisruptionReason=True/Drifted".to_string()),
        "{:?}",
        conditions(&c2)
    );
}

fn names(fake: &FakeApi, group: &str, plural: &str) -> Vec<String> {
    let mut n: Vec<String> = fake
        .all(group, plural)
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

// ---------------------------------------------------------------------------------------------
// Property test over random cluster states.

mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct NodeSpec {
        md: usize,
        node: bool,
        claim: bool,
        pods: Vec<u32>,
        tainted: Option<&'static str>,
        claim_deleting: bool,
        marked: bool,
        drifted: bool,
        ready: bool,
        /// Its first pod carries `karpenter.sh/do-not-disrupt: "true"`.
        guarded: bool,
        /// A terminationGracePeriod of 10m on its claim, which (when deleting) was deleted this
        /// many seconds ago.
        deleted_ago: Option<i64>,
        /// Its claim (with a Node sharing its providerID) registered; else only launched.
        registered: bool,
    }

    fn node_spec() -> impl Strategy<Value = NodeSpec> {
        (
            0usize..3,
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec(
                prop_oneof![Just(250u32), Just(500), Just(1000), Just(1500)],
                0..6,
            ),
            prop_oneof![
                Just(None),
                Just(Some("Drifted")),
                Just(Some("Underutilized")),
                Just(Some("Expired"))
            ],
            proptest::bool::weighted(0.15),
            proptest::bool::weighted(0.15),
            proptest::bool::weighted(0.3),
            proptest::bool::weighted(0.9),
            proptest::bool::weighted(0.3),
            prop_oneof![
                Just(None),
                Just(Some(30i64)),
                Just(Some(590)),
                Just(Some(3600))
            ],
            proptest::bool::weighted(0.85),
        )
            .prop_map(
                |(
                    md,
                    node,
                    claim,
                    pods,
                    tainted,
                    claim_deleting,
                    marked,
                    drifted,
                    ready,
                    guarded,
                    deleted_ago,
                    registered,
                )| {
                    NodeSpec {
                        md,
                        node,
                        claim,
                        pods,
                        tainted,
                        claim_deleting,
                        marked,
                        drifted,
                        ready,
                        guarded,
                        deleted_ago,
                        registered,
                    }
                },
            )
    }

    const CPUS: [u32; 3] = [2, 4, 8];

    fn world(nodes: &[NodeSpec], replicas_extra: &[i64], pending: &[u32], policy: bool) -> World {
        let mut w = World::new(if policy {
            "WhenEmptyOrUnderutilized"
        } else {
            "WhenEmpty"
        });
        for (k, cpu) in CPUS.iter().enumerate() {
            let count = nodes.iter().filter(|n| n.md == k).count() as i64;
            w = w.md(*cpu, (count + replicas_extra[k]).max(0));
        }
        for (i, n) in nodes.iter().enumerate() {
            let cpu = CPUS[n.md];
            let i = i + 1;
            w = w.machine(cpu, i, n.node, n.claim);
            if n.node {
                let mut used = 0;
                for (j, c) in n.pods.iter().enumerate() {
                    if used + c + 100 <= cpu * 1000 {
                        used += c;
                        w = w.pod(&format!("p-{i}-{j}"), Some(i), &format!("{c}m"));
                        if j == 0 && n.guarded {
                            w = w.with("Pod", &format!("p-{i}-0"), |p| {
                                p["metadata"]["annotations"] =
                                    json!({"karpenter.sh/do-not-disrupt": "true"})
                            });
                        }
                    }
                }
                if !n.ready {
                    w = w.with("Node", &format!("node-{i}"), |x| {
                        x["status"]["conditions"][0]["status"] = json!("False")
                    });
                }
                if let (Some(reason), true) = (n.tainted, n.claim) {
                    w = tainted(w, &format!("node-{i}"), reason);
                }
            }
            if n.claim && n.claim_deleting {
                let deleted_ago = n.deleted_ago.unwrap_or(30);
                w = w.with("NodeClaim", &format!("c-{i}"), |c| {
                    c["metadata"]["deletionTimestamp"] = json!(ago(deleted_ago))
                });
            }
            if n.claim && n.deleted_ago.is_some() {
                w = w.with("NodeClaim", &format!("c-{i}"), |c| {
                    c["spec"]["terminationGracePeriod"] = json!("10m")
                });
            }
            if n.claim && n.drifted {
                w = w.with("NodeClaim", &format!("c-{i}"), stamp_stale);
            }
            if n.claim && n.node && !n.registered {
                w = w.with("NodeClaim", &format!("c-{i}"), |c| {
                    c["status"] = json!({"providerID": format!("openstack:///{i}"), "conditions": [
                        {"type": "Launched", "status": "True"}, {"type": "Registered", "status": "Unknown"}]})
                });
            }
            if n.marked {
                w = w.with("Machine", &format!("m-{i}"), |m| {
                    m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "x"})
                });
            }
        }
        for (j, c) in pending.iter().enumerate() {
            w = w.pod(&format!("pending-{j}"), None, &format!("{c}m"));
        }
        w
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn plans_never_harm(
            nodes in proptest::collection::vec(node_spec(), 1..40),
            extra in proptest::collection::vec(-2i64..4, 3),
            pending in proptest::collection::vec(prop_oneof![Just(250u32), Just(1000), Just(3000)], 0..30),
            policy in any::<bool>(),
        ) {
            let w = world(&nodes, &extra, &pending, policy);
            let p = w.plan();
            let by_name: BTreeMap<String, &NodeSpec> = nodes.iter().enumerate().map(|(i, n)| (format!("m-{}", i + 1), n)).collect();
            let deleted: Vec<String> = p.actions.iter().filter_map(|a| match a {
                Action::DeleteNodeClaim { node_claim, .. } => Some(node_claim.clone()),
                _ => None,
            }).collect();
            // No Machine without our decision is ever marked: a Machine with a Node is marked only
            // when its own claim is deleted (now or before); others only without Node and claim.
            let mut marked_per_md = [0i64; 3];
            let mut surplus_per_md = [0i64; 3];
            for a in &p.actions {
                if let Action::MarkMachineForDeletion { machine, node_claim, .. } = a {
                    let name = machine.trim_start_matches("capi-ovh/");
                    let n = by_name[name];
                    marked_per_md[n.md] += 1;
                    if n.node {
                        prop_assert!(n.claim, "{name}: a Machine with a Node and no claim was marked");
                        let c = format!("c-{}", name.trim_start_matches("m-"));
                        prop_assert!(n.claim_deleting || deleted.contains(&c), "{name}: marked while its claim {c} lives");
                        prop_assert_eq!(node_claim.as_deref(), Some(c.as_str()));
                    } else if n.claim {
                        // Without a Node, a Machine with a claim goes only with its claim
                        // (being deleted, or deleted by this pass), named as the reason.
                        let c = format!("c-{}", name.trim_start_matches("m-"));
                        prop_assert!(n.claim_deleting || deleted.contains(&c), "{name}: marked while its claim {c} lives");
                        prop_assert_eq!(node_claim.as_deref(), Some(c.as_str()), "{}", name);
                    } else {
                        // Surplus: no Node, no claim, and no claim waiting for it (rule 1).
                        prop_assert_eq!(node_claim.as_deref(), None, "{}", name);
                        surplus_per_md[n.md] += 1;
                    }
                }
            }
            // No claim waits for a surplus Machine: every claim this pass creates for a
            // MachineDeployment still finds a free Machine there, or none was marked as surplus.
            for (k, cpu) in CPUS.iter().enumerate() {
                if surplus_per_md[k] == 0 {
                    continue;
                }
                let md = format!("{NS}/md-{cpu}");
                let waiting = p.actions.iter().filter(|a| matches!(a, Action::CreateNodeClaim { machine_deployment, .. } if *machine_deployment == md)).count() as i64;
                let marked_now: std::collections::BTreeSet<String> = p.actions.iter().filter_map(|a| match a {
                    Action::MarkMachineForDeletion { machine, .. } => Some(machine.trim_start_matches("capi-ovh/").to_string()),
                    _ => None,
                }).collect();
                let free_left = nodes.iter().enumerate().filter(|(i, n)| n.md == k && !n.node && !n.claim && !marked_now.contains(&format!("m-{}", i + 1))).count() as i64;
                prop_assert!(free_left >= waiting, "md-{cpu}: {} surplus marked while {waiting} new claims wait and {free_left} free Machines are left", surplus_per_md[k]);
            }
            // Never an eviction of a pod whose do-not-disrupt is active, whatever the drain.
            for a in &p.actions {
                if let Action::EvictPod { pod, .. } = a {
                    let i: usize = pod.trim_start_matches("default/p-").split('-').next().and_then(|i| i.parse().ok()).unwrap_or(0);
                    let guarded = pod.ends_with("-0") && i > 0 && nodes[i - 1].guarded;
                    prop_assert!(!guarded, "{pod} evicted despite karpenter.sh/do-not-disrupt");
                }
            }
            // A deleting claim that never registered drains no Node (core lifecycle finalize
            // deletes only a registered claim's Nodes): no taint, eviction or pod deletion there.
            for a in &p.actions {
                let node = match a {
                    Action::TaintNode { node, .. } | Action::EvictPod { node, .. } | Action::DeletePod { node, .. } => node,
                    _ => continue,
                };
                let i: usize = node.trim_start_matches("node-").parse().unwrap_or(0);
                if let Some(n) = i.checked_sub(1).and_then(|k| nodes.get(k)) {
                    prop_assert!(!(n.claim && n.claim_deleting && !n.registered), "{node}: drained for a claim that never registered ({})", a.name());
                }
            }
            // Never a pod deleted before its claim's deadline minus its grace (30 s here): the
            // claim was deleted `deleted_ago` s ago with a 10m terminationGracePeriod.
            for a in &p.actions {
                if let Action::DeletePod { pod, grace_period_seconds, .. } = a {
                    let i: usize = pod.trim_start_matches("default/p-").split('-').next().and_then(|i| i.parse().ok()).unwrap_or(0);
                    let n = &nodes[i - 1];
                    let left = 600 - n.deleted_ago.unwrap_or(30);
                    prop_assert!(n.claim_deleting && n.deleted_ago.is_some(), "{pod} deleted without a deadline");
                    prop_assert!(left < 30, "{pod} deleted with {left}s left, more than its 30s grace");
                    prop_assert_eq!(*grace_period_seconds, left.max(1));
                }
            }
            // Never a scale-down while a Machine of that MachineDeployment carries someone
            // else's delete-machine mark this pass does not make its own decision (Cluster API
            // would delete it first).
            let ours: std::collections::BTreeSet<String> = p.actions.iter().filter_map(|a| match a {
                Action::MarkMachineForDeletion { machine, .. } => Some(machine.trim_start_matches("capi-ovh/").to_string()),
                _ => None,
            }).collect();
            for a in &p.actions {
                if let Action::ScaleMachineDeployment { machine_deployment, from, replicas, .. } = a {
                    let k = CPUS.iter().position(|c| machine_deployment.ends_with(&format!("md-{c}"))).unwrap();
                    let foreign = nodes.iter().enumerate().any(|(i, n)| n.md == k && n.marked && !ours.contains(&format!("m-{}", i + 1)));
                    prop_assert!(!(replicas < from && foreign), "{machine_deployment} lowered {from} -> {replicas} beside a foreign mark");
                }
            }
            // Replicas never rise for a need unclaimed Machines cover: where the free Machines
            // (no Node, no claim, no mark) of a MachineDeployment are at least the claims this
            // pass creates there, and replicas are not below the Machines already, they stay.
            for (k, cpu) in CPUS.iter().enumerate() {
                let md = format!("{NS}/md-{cpu}");
                let new = p.actions.iter().filter(|a| matches!(a, Action::CreateNodeClaim { machine_deployment, .. } if *machine_deployment == md)).count();
                let free = nodes.iter().filter(|n| n.md == k && !n.node && !n.claim && !n.marked).count();
                if extra[k] >= 0 && free >= new {
                    let rises = p.actions.iter().any(|a| matches!(a, Action::ScaleMachineDeployment { machine_deployment, from, replicas, .. } if *machine_deployment == md && replicas > from));
                    prop_assert!(!rises, "md-{cpu}: replicas rose with {free} free Machines for {new} new claims");
                }
            }
            // Replicas never drop by more than the Machines marked in the same pass.
            for a in &p.actions {
                if let Action::ScaleMachineDeployment { machine_deployment, from, replicas, .. } = a {
                    let k = CPUS.iter().position(|c| machine_deployment.ends_with(&format!("md-{c}"))).unwrap();
                    prop_assert!(from - replicas <= marked_per_md[k], "{machine_deployment}: {from} -> {replicas} with {} marked", marked_per_md[k]);
                }
            }
            // No pod is evicted by a voluntary disruption from a node whose pods do not fit
            // elsewhere: the cpu they need is free on other Ready, untainted nodes whose claims (if any)
            // are initialized.
            let voluntary: std::collections::BTreeSet<String> = p.actions.iter().filter_map(|a| match a {
                Action::EvictPod { node, reason, .. } if reason != "Expired" && reason != "Deleted" && reason != "NodeDeleted" => Some(node.clone()),
                _ => None,
            }).collect();
            if !voluntary.is_empty() {
                let s = snapshot_from_sources(&[Source { name: "w".into(), text: w.text() }]).unwrap();
                let tainted_now: std::collections::BTreeSet<String> = p.actions.iter().filter_map(|a| match a {
                    Action::TaintNode { node, .. } => Some(node.clone()), _ => None }).collect();
                // Pods no eviction moves (an active do-not-disrupt) need no room: core's simulation
                // leaves them out, and they stay until the claim's deadline.
                let need: i64 = s.pods.iter().filter(|x| !x.daemon && x.node_name.as_ref().is_some_and(|n| voluntary.contains(n)))
                    .filter(|x| !x.annotations.contains_key("karpenter.sh/do-not-disrupt"))
                    .map(|x| x.demand.requests.cpu_millis).sum();
                let free: i64 = s.nodes.iter().filter(|n| !voluntary.contains(&n.name) && n.ready == Some(true)
                    && !tainted_now.contains(&n.name) && !n.taints.iter().any(|t| t.key == "karpenter.sh/disrupted")
                    && s.nodeclaims.iter().filter(|c| c.node_name.as_ref() == Some(&n.name)).all(|c| !c.deleting && c.condition_true("Initialized")))
                    .map(|n| n.allocatable.cpu_millis - s.pods.iter().filter(|x| x.node_name.as_ref() == Some(&n.name)).map(|x| x.demand.requests.cpu_millis).sum::<i64>())
                    .sum();
                prop_assert!(need <= free, "voluntary drain of {voluntary:?} needs {need}m, {free}m free");
            }
        }
    }
}

#[test]
fn an_empty_node_removed_this_pass_is_no_home_for_a_consolidation() {
    // node-2 is empty and goes; node-1's pod fits only on node-2, so node-1 stays this pass
    // (found by plans_never_harm: both were drained and the pod had no home).
    let w = World::new("WhenEmptyOrUnderutilized")
        .md(2, 2)
        .machine(2, 1, true, true)
        .machine(2, 2, true, true)
        .pod("p", Some(1), "250m");
    let p = w.plan();
    // node-2, empty, is no home for node-1's pod in the consolidation search (emptiness takes
    // it): no decision at all, so no deferred one either.
    assert_eq!(lines(&p), vec!["taintNode Node/node-2"]);
    assert!(!has_note(
        &p,
        "consolidation of node-1 deferred: its pods' room is not ready yet"
    ));
    // Next pass, node-2's command under way: it goes, and node-1 still stays.
    let p = tainted(w, "node-2", "Empty").plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-2",
            "deleteNodeClaim NodeClaim/c-2",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-2",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 10 done-when: the safe plans through the real binary, as an operator replays a dump
// (`run --once --dry-run -o json -f STATE.yaml --now T`), the JSON asserted exactly.

/// Runs the binary on `w` as of `NOW`: the JSON plan.
fn cli_plan(w: &World, tag: &str) -> Value {
    let path = std::env::temp_dir().join(format!(
        "karpenter-capi-safety-{tag}-{}.yaml",
        std::process::id()
    ));
    std::fs::write(&path, w.text()).unwrap();
    let out = assert_cmd::Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .args([
            "run",
            "--once",
            "--dry-run",
            "-o",
            "json",
            "--now",
            NOW,
            "-f",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The actions of a JSON plan with the fields that say what is done to what.
fn decided(plan: &Value) -> Value {
    let keep = [
        "action",
        "target",
        "machine",
        "node",
        "nodeClaim",
        "nodePool",
        "reason",
        "from",
        "replicas",
    ];
    Value::Array(
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                Value::Object(
                    a.as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| keep.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            })
            .collect(),
    )
}

#[test]
fn cli_a_populated_machine_deployment_labelled_member_is_adopted_nothing_deleted() {
    // Three Machines with Nodes and no claims, pods on two; replicas as seen, and higher (a
    // Machine being created): adopted in place, no Machine marked, no scale, no taint.
    for replicas in [3, 5] {
        let w = World::new("WhenEmptyOrUnderutilized")
            .md(4, replicas)
            .machine(4, 1, true, false)
            .machine(4, 2, true, false)
            .machine(4, 3, true, false)
            .pod("web-1", Some(1), "500m")
            .pod("web-2", Some(2), "1");
        let plan = cli_plan(&w, &format!("adopt-{replicas}"));
        let adopt = |i: u32| {
            json!({"action": "adoptMachine", "target": format!("Machine/capi-ovh/m-{i}"),
                "machine": format!("capi-ovh/m-{i}"), "node": format!("node-{i}"),
                "nodeClaim": format!("node-{i}"), "nodePool": "default"})
        };
        assert_eq!(
            decided(&plan),
            json!([adopt(1), adopt(2), adopt(3)]),
            "replicas {replicas}"
        );
        assert!(
            plan["pending"].as_array().is_none_or(|a| a.is_empty()),
            "replicas {replicas}: {}",
            plan["pending"]
        );
    }
}

#[test]
fn cli_a_stale_view_or_a_rollout_lowers_no_replicas_and_says_why() {
    // The command under way (tainted a minute ago) carried out: mark and delete.
    let drain = |reason: &str| {
        json!([
            {"action": "markMachineForDeletion", "target": "Machine/capi-ovh/m-1", "machine": "capi-ovh/m-1", "nodeClaim": "c-1", "reason": reason},
            {"action": "deleteNodeClaim", "target": "NodeClaim/c-1", "nodeClaim": "c-1", "reason": reason},
        ])
    };
    let cases: Vec<(&str, World, &str)> = vec![
        (
            "generation",
            one_empty(1).with("MachineDeployment", "md-4", |md| {
                md["metadata"]["generation"] = json!(2);
            }),
            "MachineDeployment capi-ovh/md-4: replicas not lowered from 1: status.observedGeneration 1 is behind metadata.generation 2; the marked Machine(s) m-1 wait",
        ),
        (
            "machinesets",
            one_empty(1).add(machine_set(4, "md-4-a", 2, 600)),
            "stale view: 1 Machines seen, its MachineSets report 2",
        ),
        (
            "rollout",
            one_empty(2)
                .add(machine_set(4, "md-4-a", 1, 600))
                .add(machine_set(4, "md-4-b", 1, 60))
                .machine(4, 9, false, false)
                .with("Machine", "m-9", |m| {
                    m["metadata"]["labels"]["node.cluster.x-k8s.io/karpenter-member"] = json!("");
                }),
            "rolling out: MachineSets md-4-a, md-4-b have replicas",
        ),
    ];
    for (tag, w, note) in cases {
        let plan = cli_plan(&w, tag);
        assert_eq!(decided(&plan), drain("Empty"), "{tag}");
        let notes: Vec<&str> = plan["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(notes.iter().any(|n| n.contains(note)), "{tag}: {notes:?}");
    }
    // The same node with a consistent view: the scale goes, by exactly the Machine marked.
    let plan = cli_plan(&one_empty(1).add(machine_set(4, "md-4-a", 1, 600)), "fresh");
    let mut expected = drain("Empty");
    expected
        .as_array_mut()
        .unwrap()
        .push(json!({"action": "scaleMachineDeployment",
        "target": "MachineDeployment/capi-ovh/md-4", "from": 1, "replicas": 0}));
    assert_eq!(decided(&plan), expected);
    assert!(
        plan["notes"].as_array().is_none_or(|a| a.is_empty()),
        "{}",
        plan["notes"]
    );
}

/// Rule 2: the scale carries the `resourceVersion` read, so another writer's change in between
/// gives a 409; it is not retried blindly (the replicas computed are stale): the pass reports the
/// failure, unmarks the Machine, and the next pass re-plans from the MachineDeployment as it now
/// is, lowering it by exactly the Machine it marks again.
#[tokio::test]
async fn a_conflict_on_the_scale_is_reported_not_retried_and_the_next_pass_replans() {
    let w = one_empty(1).add(machine_set(4, "md-4-a", 1, 600));
    let fake = fake_of(&w);
    let md_path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machinedeployments/md-4";
    let m1 = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-ovh/machines/m-1";
    fake.fail("PATCH", &format!("{md_path}/scale"), 409, 1);
    let err = run_pass(&fake).await.unwrap_err().to_string();
    assert!(
        err.starts_with("scaleMachineDeployment MachineDeployment/capi-ovh/md-4 failed")
            && err.contains("(409)"),
        "{err}"
    );
    let scales: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains("/scale"))
        .collect();
    assert_eq!(
        scales,
        vec![format!("PATCH {md_path}/scale 409")],
        "one attempt, no blind retry"
    );
    let machine_writes: Vec<String> = fake
        .writes()
        .into_iter()
        .filter(|w| w.contains(m1) || w.contains("/scale"))
        .collect();
    assert_eq!(
        machine_writes,
        vec![
            format!("PATCH {m1} 200"),
            format!("PATCH {md_path}/scale 409"),
            format!("PATCH {m1} 200"),
        ],
        "marked, the scale refused, unmarked"
    );
    let m = fake.get("cluster.x-k8s.io", "machines", NS, "m-1").unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_none(),
        "{m}"
    );
    let md = fake
        .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
        .unwrap();
    assert_eq!(md["spec"]["replicas"], 1);

    // The writer that caused the conflict raised replicas to 2 (its Machine not created yet).
    fake.mutate("cluster.x-k8s.io", "machinedeployments", NS, "md-4", |md| {
        md["spec"]["replicas"] = json!(2)
    });
    fake.mutate("cluster.x-k8s.io", "machinesets", NS, "md-4-a", |ms| {
        ms["spec"]["replicas"] = json!(2)
    });
    let rv = fake
        .get("cluster.x-k8s.io", "machinedeployments", NS, "md-4")
        .unwrap()["metadata"]["resourceVersion"]
        .clone();
    fake.clear_log();
    run_pass(&fake).await.unwrap();
    let scales: Vec<(String, u16, Value)> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.path.ends_with("/scale"))
        .map(|r| (r.path.clone(), r.code, r.body.clone()))
        .collect();
    assert_eq!(
        scales,
        vec![(
            format!("{md_path}/scale"),
            200,
            json!({"spec": {"replicas": 1}, "metadata": {"resourceVersion": rv}})
        )],
        "re-planned from 2, lowered by the one Machine marked, with the new resourceVersion"
    );
    let m = fake.get("cluster.x-k8s.io", "machines", NS, "m-1").unwrap();
    assert!(
        m["metadata"]["annotations"]
            .get("cluster.x-k8s.io/delete-machine")
            .is_some(),
        "{m}"
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 11 item 9: every management list and watch is scoped to the one Cluster.

/// Labels a World's Machines and MachineDeployments with Cluster API's cluster-name label (its
/// webhooks set it from `spec.clusterName`).
fn cluster_labelled(mut w: World) -> World {
    for o in w.objects_mut() {
        if o["kind"] == "Machine" || o["kind"] == "MachineDeployment" {
            let c = o["spec"]["clusterName"].clone();
            o["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = c;
        }
    }
    w
}

/// Cluster B's member MachineDeployment in the same namespace, with a Machine that has no Node
/// and no claim (surplus to a controller that saw it as its own) and one with a Node.
fn cluster_b(w: World) -> World {
    let other = "other";
    let machine = |name: &str| {
        Machine::new(NS, name)
            .created(&ago(7200))
            .deployment("other-md-4")
            .label("cluster.x-k8s.io/cluster-name", other)
            .cluster(other)
    };
    w.add(Cluster::new(NS, other))
        .add(
            MachineDeployment::new(NS, "other-md-4")
                .member()
                .label("cluster.x-k8s.io/cluster-name", other)
                .capacity("4", "8G")
                .node_labels("kubernetes.io/arch=amd64,node.kubernetes.io/instance-type=c-4")
                .price("0.01")
                .replicas(2)
                .cluster(other)
                .selecting()
                .version("v1.36.1")
                .observed("3", 1),
        )
        .add(machine("other-m-1"))
        .add(
            machine("other-m-2")
                .provider_id("openstack:///other-2")
                .node("other-node-2"),
        )
}

async fn run_pass_for(
    fake: &FakeApi,
    cluster: Option<&str>,
) -> Result<karpenter_capi::error::Outcome, karpenter_capi::Error> {
    let printer = Printer::to_writer(OutputFormat::Json, false, Box::new(std::io::sink()));
    let client = fake.client();
    let clients = Clients {
        workload: client.clone(),
        management: client,
    };
    once(
        &clients,
        Some(NS),
        cluster,
        &Config::default(),
        false,
        &printer,
    )
    .await
}

/// The requests that named one of cluster B's objects (any verb).
fn touching_b(fake: &FakeApi) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.path.contains("/other-"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test]
async fn the_controller_of_one_cluster_never_touches_another_clusters_machines() {
    // Cluster A (capi-ovh): an empty node due for removal, and a Machine without Node.
    for a in [
        one_empty(1),
        World::new("WhenEmpty")
            .md(4, 2)
            .machine(4, 1, true, true)
            .pod("web", Some(1), "1")
            .machine(4, 2, false, false),
    ] {
        let w = cluster_b(cluster_labelled(a));
        let fake = fake_of(&w);
        run_pass_for(&fake, Some(NS)).await.unwrap();
        assert_eq!(touching_b(&fake), Vec::<String>::new());
        let b_md = fake
            .get("cluster.x-k8s.io", "machinedeployments", NS, "other-md-4")
            .unwrap();
        assert_eq!(b_md["spec"]["replicas"], 2);
        for m in ["other-m-1", "other-m-2"] {
            let m = fake.get("cluster.x-k8s.io", "machines", NS, m).unwrap();
            assert!(m["metadata"]["annotations"].is_null(), "{m}");
        }
        assert!(
            names(&fake, "karpenter.sh", "nodeclaims")
                .iter()
                .all(|c| !c.contains("other")),
        );
        // The Machine and MachineDeployment lists asked for cluster A's only.
        let lists: Vec<String> = fake
            .requests()
            .iter()
            .filter(|r| {
                r.method == "GET"
                    && (r.path.ends_with("/machines") || r.path.ends_with("/machinedeployments"))
            })
            .map(|r| r.query.clone())
            .collect();
        assert!(!lists.is_empty());
        assert!(
            lists
                .iter()
                .all(|q| q.contains("labelSelector=cluster.x-k8s.io%2Fcluster-name%3Dcapi-ovh")),
            "{lists:?}"
        );
        // A did its own work.
        assert!(
            fake.requests()
                .iter()
                .any(|r| r.method == "PATCH" && r.path.ends_with("/machinedeployments/md-4/scale")),
            "{:?}",
            fake.writes()
        );

        // The control: unscoped, the same pass takes B's Machine for surplus.
        let fake = fake_of(&w);
        run_pass_for(&fake, None).await.unwrap();
        assert_ne!(touching_b(&fake), Vec::<String>::new());
    }
}

#[test]
fn the_in_memory_api_filters_lists_by_label_selector() {
    let obj = json!({"metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "a", "tier": "x"}}});
    for (sel, want) in [
        ("cluster.x-k8s.io/cluster-name=a", true),
        ("cluster.x-k8s.io/cluster-name==a", true),
        ("cluster.x-k8s.io/cluster-name=b", false),
        ("cluster.x-k8s.io/cluster-name!=b", true),
        ("cluster.x-k8s.io/cluster-name in (b, a)", true),
        ("cluster.x-k8s.io/cluster-name in (b,c)", false),
        ("cluster.x-k8s.io/cluster-name notin (a)", false),
        ("cluster.x-k8s.io/cluster-name in (a,b),tier=x", true),
        ("cluster.x-k8s.io/cluster-name in (a,b),tier=y", false),
        ("tier", true),
        ("!tier", false),
        ("missing", false),
        ("!missing", true),
    ] {
        assert_eq!(common::selector_matches(sel, &obj), want, "{sel}");
    }
}

/// Rule 10 of the conformance round: Cluster API deletes every Machine carrying
/// `cluster.x-k8s.io/delete-machine` first (`machineset_deletion_order.go`), so no scale-down
/// goes while a mark this decision did not make is on a Machine of the MachineDeployment; our
/// own stale marks are taken off; our marks say they are ours.
#[test]
fn a_mark_that_is_not_this_decisions_holds_the_scale_down() {
    // Someone else marked m-2 (Cluster Autoscaler writes a timestamp).
    let foreign = one_empty(2)
        .machine(4, 2, true, false)
        .with(
            "Machine",
            "m-2",
            |m| {
                m["metadata"]["annotations"] =
                    json!({"cluster.x-k8s.io/delete-machine": "2026-11-30 09:00:00 +0000 UTC"})
            },
        );
    let p = foreign.plan();
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    assert!(
        has_note(
            &p,
            "Machine m-2 carries cluster.x-k8s.io/delete-machine (not ours): Cluster API would delete it first"
        ),
        "{:?}",
        p.notes
    );
    // A stale mark of ours (its claim c-2 lives on): taken off, and the scale-down waits a pass.
    let stale = one_empty(2).machine(4, 2, true, true).with("Machine", "m-2", |m| {
        m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "Empty", "karpenter-capi/marked-for": "c-2"})
    });
    let p = stale.plan();
    assert!(
        lines(&p).contains(&"unmarkMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    // Our own mark names the claim it is for.
    let p = one_empty(1).plan();
    let mark = p
        .actions
        .iter()
        .find(|a| a.name() == "markMachineForDeletion")
        .unwrap();
    use karpenter_capi::controller::write::Write;
    assert!(
        matches!(&mark.steps().writes[0], Write::MergePatch { patch, .. }
            if patch == &json!({"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": "Empty", "karpenter-capi/marked-for": "c-1"}}})),
        "{:?}",
        mark.steps().writes
    );
}

/// Unclaimed Machines are capacity (karpenter-provider-cluster-api `pkg/batcher/create.go`
/// countUnclaimedMachines): a Machine whose Node has not registered yet (it still carries
/// `karpenter.sh/unregistered`, e.g. made for a claim before a restart) is bound to a claim
/// waiting for its flavor rather than bought again, and is never adopted as initialized.
#[test]
fn an_unclaimed_machine_whose_node_has_not_registered_is_capacity() {
    let unregistered = |w: World| {
        w.with(
            "Node",
            "node-2",
            |n| {
                n["spec"]["taints"] =
                    json!([{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
            },
        )
    };
    // No claim waits for it: not adopted (it is no running node yet), not removed.
    let w = unregistered(idle(2).pod("busy", Some(1), "1").machine(4, 2, true, false));
    let p = w.plan();
    assert!(
        !lines(&p).iter().any(|l| l.starts_with("adoptMachine")
            || l.starts_with("scaleMachineDeployment")
            || l.starts_with("markMachine")),
        "{:?}",
        lines(&p)
    );
    // A pending pod of that flavor: a claim is created and the replicas do not rise (the
    // Machine covers it); next pass the claim is bound to it.
    let p = w.clone().pod("pending", None, "3").plan();
    assert_eq!(lines(&p), vec!["createNodeClaim NodeClaim/default-"]);
    let waiting = w.add(waiting_claim("default-w", 5));
    let p = waiting.plan();
    assert!(
        lines(&p).contains(&"claimMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&p)
    );
    assert!(
        !lines(&p)
            .iter()
            .any(|l| l.starts_with("scaleMachineDeployment")),
        "{:?}",
        lines(&p)
    );
    // Registered (the taint gone) without a claim: adopted, as before.
    let registered = idle(2).pod("busy", Some(1), "1").machine(4, 2, true, false);
    assert!(
        lines(&registered.plan()).contains(&"adoptMachine Machine/capi-ovh/m-2".to_string()),
        "{:?}",
        lines(&registered.plan())
    );
}

/// Core IsManaged (`utils/nodeclaim`, the cloud provider's supported node classes): another
/// Karpenter's NodePools and NodeClaims (a `nodeClassRef` that is not a `ClusterAPINodeClass`)
/// are never acted on — not provisioned for, expired, drifted, emptied or finalized — and their
/// Nodes, which carry a finalizer of the same name, are never released.
#[test]
fn another_karpenters_nodepools_and_claims_are_left_alone() {
    let aws = json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"});
    let w = idle(1)
        .add(
            NodePool::new("aws")
                .set("/spec/template/spec/nodeClassRef", aws.clone())
                .expire_after("1m")
                .disruption("WhenEmpty", "0s", "100%"),
        )
        .add(
            NodeClaim::new("aws-1", "aws")
                .created(&ago(7200))
                .finalizer("karpenter.sh/termination")
                .set("/spec/nodeClassRef", aws)
                .set("/spec/expireAfter", "1m")
                .initialized("aws:///i-1", "ip-1", &ago(7200)),
        )
        .add(
            Node::new("ip-1")
                .finalizer("karpenter.sh/termination")
                .deleting(&ago(5))
                .label("karpenter.sh/nodepool", "aws")
                .provider_id("aws:///i-1")
                .set(
                    "/status/allocatable",
                    json!({"cpu": "2", "memory": "4G", "pods": "110"}),
                )
                .ready(),
        );
    let p = w.plan();
    let touching: Vec<String> = lines(&p)
        .into_iter()
        .filter(|l| l.contains("aws") || l.contains("ip-1"))
        .collect();
    assert_eq!(touching, Vec::<String>::new());
    assert!(
        p.notes.iter().all(|n| !n.contains("aws-1")),
        "{:?}",
        p.notes
    );
    let s = snapshot_from_sources(&[Source {
        name: "w.yaml".into(),
        text: w.text(),
    }])
    .unwrap();
    assert_eq!(
        s.nodepools
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        vec!["default"]
    );
    assert_eq!(s.foreign_claims.len(), 1);
    assert!(
        s.warnings.iter().any(|w| w
            == "NodePool aws: its nodeClassRef is a EC2NodeClass.karpenter.k8s.aws, not a ClusterAPINodeClass: left to the Karpenter that owns it"),
        "{:?}",
        s.warnings
    );
}

/// Found by `plans_never_harm`: two claims being deleted whose Machines (no Node yet) carry
/// someone else's delete-machine mark. Both are this decision's to remove, so each is marked
/// again as ours (the mark then reads as this decision's) before the replicas drop by exactly
/// those two.
#[test]
fn foreign_marks_on_machines_we_remove_are_made_ours() {
    let mut w = World::new("WhenEmpty").md(2, 2);
    for i in 1..=2 {
        w = w
            .machine(2, i, false, true)
            .with("NodeClaim", &format!("c-{i}"), |c| {
                c["metadata"]["deletionTimestamp"] = json!(ago(30))
            })
            .with("Machine", &format!("m-{i}"), |m| {
                m["metadata"]["annotations"] = json!({"cluster.x-k8s.io/delete-machine": "x"})
            });
    }
    let p = w.plan();
    assert_eq!(
        lines(&p),
        vec![
            "markMachineForDeletion Machine/capi-ovh/m-1",
            "markMachineForDeletion Machine/capi-ovh/m-2",
            "scaleMachineDeployment MachineDeployment/capi-ovh/md-2"
        ]
    );
}
