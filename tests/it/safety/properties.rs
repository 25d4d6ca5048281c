//! Property test over random cluster states: no plan ever harms (issue 10 done-when).

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
