//! Do no harm (issue 10): for each safety rule, cluster states that broke it give the safe plan
//! (dry-run JSON asserted), the in-memory API shows the writes in order with failures injected
//! between any two writes of a disruption, and a property test over random cluster states.
//!
//! The tests are grouped by theme in the modules below; the helpers they share are here.

mod adoption;
mod cli;
mod clusters;
mod deletions;
mod drain;
mod failures;
mod homes;
mod properties;
mod replicas;
mod status;

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

/// `node` tainted `karpenter.sh/disrupted` a minute ago, its claim recording `reason` (none: a deletion).
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

/// `w` after a first termination pass of `node`: labelled out of external load balancers (core
/// `terminator.go` Taint), as every later pass finds it.
fn excluded(w: World, node: &str) -> World {
    w.with("Node", node, |n| {
        n["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] =
            json!("karpenter")
    })
}

/// The claim of `node` deleted a minute ago (our finalizer holds it): termination drains it.
fn deleted(w: World, node: &str) -> World {
    let claim = node.replace("node-", "c-");
    w.with("NodeClaim", &claim, |c| {
        c["metadata"]["deletionTimestamp"] = json!(ago(60))
    })
}

fn evictions(p: &Plan) -> Vec<String> {
    lines(p)
        .into_iter()
        .filter(|l| l.starts_with("evictPod"))
        .collect()
}

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

/// Marks a claim drifted as this controller sees it: a NodePool hash that does not match,
/// stamped with our own hash version (a foreign version is re-stamped, not drifted).
fn stamp_stale(c: &mut Value) {
    c["metadata"]["annotations"]["karpenter.sh/nodepool-hash"] = json!("stale");
    c["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"] =
        json!(karpenter_capi::controller::drift::HASH_VERSION);
}

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

fn names(fake: &FakeApi, group: &str, plural: &str) -> Vec<String> {
    let mut n: Vec<String> = fake
        .all(group, plural)
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}
