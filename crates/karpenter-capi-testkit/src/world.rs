//! A cluster state built object by object with typed methods: the world most controller tests
//! start from (a Ready node class, one NodePool, a DaemonSet on every node), member
//! MachineDeployments `md-<cpu>` with one flavor per vCPU count, Machines with or without their
//! Nodes and NodeClaims, and pods. Everything is dated relative to [`NOW`] in [`NAMESPACE`].
//! The world is plain JSON: core tests load its [`World::text`], shell and CLI tests seed an
//! in-memory API server with its [`World::objects`].

use jiff::Timestamp;
use serde_json::Value;

use crate::objects::{
    DaemonSet, Machine, MachineDeployment, MachineSet, Node, NodeClaim, NodeClass, NodePool,
    Object, Pod,
};

/// The time a world is observed at.
pub const NOW: &str = "2026-11-30T10:00:00Z";
/// The namespace (and cluster name) of a world's Cluster API objects.
pub const NAMESPACE: &str = "capi-ovh";

/// `secs` seconds before [`NOW`], as the API writes times.
pub fn ago(secs: i64) -> String {
    let now: Timestamp = NOW.parse().unwrap_or_else(|e| panic!("{NOW}: {e}"));
    Timestamp::from_second(now.as_second() - secs)
        .unwrap_or_else(|e| panic!("{secs}s before {NOW}: {e}"))
        .to_string()
}

/// A cluster state under construction (see the module's documentation).
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct World {
    objs: Vec<Value>,
}

impl World {
    /// No objects at all.
    pub fn empty() -> World {
        World::default()
    }

    /// The objects given, as they are.
    pub fn from_objects(objs: Vec<Value>) -> World {
        World { objs }
    }

    /// The objects of a multi-document YAML text (a fixture), to build on with typed edits;
    /// panics naming the document that does not parse.
    pub fn from_yaml(text: &str) -> World {
        let mut objs = Vec::new();
        for (i, doc) in text.split("\n---\n").enumerate() {
            let doc = doc.strip_prefix("---\n").unwrap_or(doc);
            let v: Value = serde_saphyr::from_str(doc)
                .unwrap_or_else(|e| panic!("YAML document {i}: {e}\n{doc}"));
            if !v.is_null() {
                objs.push(v);
            }
        }
        World { objs }
    }

    /// The standard world: node class `default` (Ready); NodePool `default` requiring amd64,
    /// never expiring, consolidating per `policy` after 30s within a 100% budget; the DaemonSet
    /// `kube-system/cilium` of 100m tolerating every taint.
    pub fn new(policy: &str) -> World {
        World::empty()
            .add(NodeClass::new("default").ready())
            .add(
                NodePool::new("default")
                    .requirement("kubernetes.io/arch", "In", &["amd64"])
                    .expire_after("Never")
                    .disruption(policy, "30s", "100%"),
            )
            .add(DaemonSet::new("kube-system", "cilium", "100m").tolerate_all())
    }

    /// A member MachineDeployment `md-<cpu>` of `cpu` vCPU and `2*cpu` G, 110 pods, flavor
    /// `c-<cpu>` at 0.025 per vCPU, at `replicas`, its view in sync (resourceVersion 7,
    /// generation 1).
    pub fn md(self, cpu: u32, replicas: i64) -> World {
        let name = format!("md-{cpu}");
        self.add(
            MachineDeployment::new(NAMESPACE, &name)
                .member()
                .capacity(&cpu.to_string(), &format!("{}G", cpu * 2))
                .max_pods("110")
                .node_labels(&format!(
                    "kubernetes.io/arch=amd64,node.kubernetes.io/instance-type=c-{cpu}"
                ))
                .price(&price_per_hour(25 * u64::from(cpu)))
                .replicas(replicas)
                .selecting()
                .version("v1.36.1")
                .observed("7", 1),
        )
    }

    /// Machine `m-<i>` of `md-<cpu>` (provider ID `openstack:///<i>`, two hours old); with
    /// `node`, its Node `node-<i>` (Ready, the MachineDeployment's capacity) and the cilium pod
    /// on it (tolerating every taint: never evicted); with `claim`, its NodeClaim `c-<i>`
    /// (launched, and initialized an hour ago when the Node exists) and the member label.
    pub fn machine(mut self, cpu: u32, i: usize, node: bool, claim: bool) -> World {
        let pid = format!("openstack:///{i}");
        let md = format!("md-{cpu}");
        let node_name = format!("node-{i}");
        let age = 7200 - i64::try_from(i).unwrap_or(0);
        let mut m = Machine::new(NAMESPACE, &format!("m-{i}"))
            .deployment(&md)
            .created(&ago(age))
            .provider_id(&pid);
        if claim {
            m = m.member();
        }
        if node {
            m = m.node(&node_name);
            let memory = format!("{}G", cpu * 2);
            self = self
                .add(
                    Node::new(&node_name)
                        .label("kubernetes.io/arch", "amd64")
                        .provider_id(&pid)
                        .capacity(&cpu.to_string(), &memory, "110")
                        .ready(),
                )
                .add(
                    Pod::new("kube-system", &format!("cilium-{i}"))
                        .uid(&format!("uid-cilium-{i}"))
                        .daemon_set("cilium", "u")
                        .on(&node_name)
                        .tolerate_all()
                        .cpu("100m"),
                );
        }
        self = self.add(m);
        if claim {
            let c = NodeClaim::new(&format!("c-{i}"), "default")
                .created(&ago(3600))
                .finalizer("karpenter.sh/termination")
                .instance_type(&format!("c-{cpu}"))
                .machine(&format!("{NAMESPACE}/m-{i}"))
                .machine_deployment(&format!("{NAMESPACE}/{md}"));
            self = self.add(if node {
                c.initialized(&pid, &node_name, &ago(3600))
            } else {
                c.launched()
            });
        }
        self
    }

    /// A pod `default/<name>` (label `app: web`, ten minutes old) requesting `cpu`, on
    /// `node-<i>`, or pending (unschedulable) with `None`.
    pub fn pod(self, name: &str, node: Option<usize>, cpu: &str) -> World {
        let p = Pod::new("default", name)
            .uid(&format!("uid-{name}"))
            .label("app", "web")
            .created(&ago(600))
            .cpu(cpu);
        self.add(match node {
            Some(i) => p.on(&format!("node-{i}")),
            None => p.pending(),
        })
    }

    /// A MachineSet `name` of `md-<cpu>` with `replicas` in spec and status, `age` seconds old.
    pub fn machine_set(self, cpu: u32, name: &str, replicas: i64, age: i64) -> World {
        self.add(
            MachineSet::new(NAMESPACE, name, &format!("md-{cpu}"), replicas).created(&ago(age)),
        )
    }

    /// Adds an object (a builder of [`crate::objects`] or any JSON value).
    // A builder step that takes one object, not `World + World`: `std::ops::Add` would not fit.
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, obj: impl Into<Value>) -> World {
        self.objs.push(obj.into());
        self
    }

    /// Changes the `kind` named `name` in place; panics when there is none.
    pub fn with(mut self, kind: &str, name: &str, f: impl FnOnce(&mut Value)) -> World {
        f(self.find_mut(kind, name));
        self
    }

    /// The `kind` named `name`; panics when there is none.
    #[track_caller]
    pub fn find_mut(&mut self, kind: &str, name: &str) -> &mut Value {
        self.objs
            .iter_mut()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    /// Keeps only the objects `keep` holds for.
    pub fn retain(mut self, keep: impl FnMut(&Value) -> bool) -> World {
        self.objs.retain(keep);
        self
    }

    /// Every object named `name`, of any kind, removed.
    pub fn without(self, name: &str) -> World {
        self.retain(|o| o["metadata"]["name"] != name)
    }

    /// The world split by cluster: the Cluster API objects (`cluster.x-k8s.io` group), which
    /// live in the management cluster, and the rest, in the workload cluster.
    pub fn split_management(&self) -> (World, World) {
        let (management, workload): (Vec<Value>, Vec<Value>) =
            self.objs.iter().cloned().partition(|o| {
                o["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("cluster.x-k8s.io/"))
            });
        (
            World::from_objects(management),
            World::from_objects(workload),
        )
    }

    /// The objects, in the order added.
    pub fn objects(&self) -> &[Value] {
        &self.objs
    }

    /// The objects, to change in place.
    pub fn objects_mut(&mut self) -> &mut Vec<Value> {
        &mut self.objs
    }

    /// The world as one multi-document YAML text (each document in JSON, which YAML reads).
    pub fn text(&self) -> String {
        self.objs
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n---\n")
    }
}

/// A price of `milli` thousandths per hour as an exact decimal, without trailing zeros
/// (`75` -> `0.075`, `100` -> `0.1`, `1000` -> `1`): computed in integers, never through a
/// float (0.025 * 3 would print as 0.07500000000000001, more decimals than a price may have).
pub fn price_per_hour(milli: u64) -> String {
    let int = milli / 1000;
    let frac = format!("{:03}", milli % 1000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::objects::Pdb;

    #[test]
    fn a_machine_with_node_and_claim_is_four_objects_that_refer_to_each_other() {
        let w = World::new("WhenEmpty").md(4, 1).machine(4, 7, true, true);
        let kinds: Vec<&str> = w
            .objects()
            .iter()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        assert_eq!(
            kinds,
            [
                "ClusterAPINodeClass",
                "NodePool",
                "DaemonSet",
                "MachineDeployment",
                "Node",
                "Pod",
                "Machine",
                "NodeClaim"
            ]
        );
        let md = &w.objects()[3];
        assert_eq!(
            md["metadata"]["annotations"]["capacity.cluster-autoscaler.kubernetes.io/price"],
            "0.1"
        );
        assert_eq!(
            md["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"],
            "md-4"
        );
        assert_eq!(md["status"]["observedGeneration"], 1);
        let claim = &w.objects()[7];
        assert_eq!(
            claim["metadata"]["annotations"]["cluster.x-k8s.io/machine"],
            "capi-ovh/m-7"
        );
        assert_eq!(claim["status"]["nodeName"], "node-7");
        assert_eq!(
            claim["status"]["conditions"][2]["lastTransitionTime"],
            "2026-11-30T09:00:00Z"
        );
        assert_eq!(
            w.objects()[6]["metadata"]["creationTimestamp"],
            "2026-11-30T08:00:07Z"
        );
        let (capi, rest) = w.split_management();
        assert_eq!((capi.objects().len(), rest.objects().len()), (2, 6));
    }

    #[test]
    fn set_reaches_into_lists_and_edits_fail_on_what_is_absent() {
        let p = Pod::new("default", "p")
            .cpu("1")
            .memory("1Gi")
            .finalizer("a")
            .finalizer("b");
        let v = p.build();
        assert_eq!(
            v["spec"]["containers"][0]["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
        assert_eq!(v["metadata"]["finalizers"], json!(["a", "b"]));
        let out_of_range =
            std::panic::catch_unwind(|| Pod::new("d", "p").set("/spec/containers/1/name", "x"));
        assert!(out_of_range.is_err());
        let pdb = Pdb::new("default", "web", "app", "web")
            .max_unavailable(0)
            .build();
        assert_eq!(pdb["spec"]["maxUnavailable"], 0);
        let missing = std::panic::catch_unwind(|| World::empty().with("Node", "n", |_| {}));
        assert!(missing.is_err());
    }

    #[test]
    fn a_yaml_fixture_becomes_objects_to_edit() {
        let w = World::from_yaml("# a comment\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n")
            .with("Node", "b", |n| n["spec"]["unschedulable"] = json!(true))
            .without("a");
        assert_eq!(w.objects().len(), 1);
        assert_eq!(
            w.text(),
            r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"spec":{"unschedulable":true}}"#
        );
    }

    #[test]
    fn md_prices_are_exact_decimals() {
        assert_eq!(price_per_hour(75), "0.075");
        assert_eq!(price_per_hour(100), "0.1");
        assert_eq!(price_per_hour(150), "0.15");
        assert_eq!(price_per_hour(800), "0.8");
        assert_eq!(price_per_hour(1000), "1");
        assert_eq!(price_per_hour(1025), "1.025");
        let md = World::empty().md(3, 1);
        let price = md.objects()[0]
            .pointer("/metadata/annotations")
            .unwrap()
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.contains("price"))
            .map(|(_, v)| v.clone())
            .unwrap();
        assert_eq!(price, "0.075");
    }
}
