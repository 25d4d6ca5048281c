//! Termination against Karpenter core v1.14.1, continued: duplicates (a deleted Node two claims
//! match, a deleting claim two Nodes match), the claim's `Drained` condition while it drains,
//! and core's termination metrics (`karpenter_nodes_drained_total`,
//! `karpenter_pods_drained_total`, `karpenter_nodes_termination_duration_seconds`,
//! `karpenter_nodes_lifetime_duration_seconds`) as the core decides them. Each test drives
//! several cluster states through `plan` and asserts the actions exactly.

use crate::controller_disruption::{
    NOW, ago, app_pod, base, counted, evicts, names, node, run, tainted_nodes, under_way,
};
use karpenter_capi_testkit::Edit;

use karpenter_capi::controller::termination_metrics::{Observed, observations};
use karpenter_capi::controller::{Action, Config, Plan, plan};
use karpenter_capi::model::load::{Source, snapshot_from_sources};

/// `text` with claim `name` deleted `deleted_ago` seconds before NOW, holding our finalizer.
fn deleted_claim(text: &str, name: &str, deleted_ago: i64) -> String {
    text.edit_n(
        &format!("  name: {name}\n"),
        &format!(
            "  name: {name}\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
            ago(deleted_ago)
        ),
        1,
    )
}

/// `text` (one `node(1, ..)`) with a second NodeClaim, `default-1-dup`: a copy of node-1's
/// claim (same providerID, nodeName and Machine), as a restored backup leaves one.
fn with_duplicate_claim(text: &str) -> String {
    let start = text
        .find("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\n")
        .unwrap();
    let end = start + 4 + text[start + 4..].find("---\n").unwrap();
    let dup = text[start..end].replacen("  name: default-1\n", "  name: default-1-dup\n", 1);
    assert_ne!(dup, text[start..end]);
    format!("{text}{dup}")
}

/// `text` with node-1 deleted by a user 20 s ago (our finalizer holds it).
fn node_deleted(text: &str) -> String {
    text.edit(
        "metadata: {name: node-1, labels:",
        &format!(
            "metadata: {{name: node-1, deletionTimestamp: '{}', finalizers: [karpenter.sh/termination], labels:",
            ago(20)
        ),
    )
}

/// A second Node of node-1's providerID, `node-1b`, with `pods`.
fn second_node(pods: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-1b, creationTimestamp: '{}', labels: {{karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1b}}}}\nspec: {{providerID: 'openstack:///n1'}}\nstatus: {{capacity: {{cpu: '2', memory: 4G, pods: '110'}}, allocatable: {{cpu: '2', memory: 4G, pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}\n{pods}",
        ago(3600)
    )
}

/// A web pod on node-1b.
fn pod_on_1b(name: &str) -> String {
    app_pod(name, 1, "").edit("nodeName: node-1,", "nodeName: node-1b,")
}

/// A Machine of another Node, so the Machines count as observed (a Node's finalizer comes off
/// only when they were).
const OTHER_MACHINE: &str = "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata: {name: other, namespace: capi-ovh, labels: {cluster.x-k8s.io/deployment-name: capi-ovh-karpenter-c3-4}}\nspec: {clusterName: capi-ovh}\n";

fn deletions(p: &Plan) -> Vec<(&str, &str)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeleteNodeClaim {
                node_claim, reason, ..
            } => Some((node_claim.as_str(), reason.as_str())),
            _ => None,
        })
        .collect()
}

fn marked(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::MarkMachineForDeletion { machine, .. } => Some(machine.as_str()),
            _ => None,
        })
        .collect()
}

fn scaled(p: &Plan) -> Vec<(i64, i64)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::ScaleMachineDeployment { from, replicas, .. } => Some((*from, *replicas)),
            _ => None,
        })
        .collect()
}

/// The finalizers a plan removes: `NodeClaim/..` and `Node/..`.
fn released(p: &Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter(|a| {
            matches!(
                a,
                Action::RemoveNodeClaimFinalizer { .. } | Action::RemoveNodeFinalizer { .. }
            )
        })
        .map(|a| a.target())
        .collect()
}

/// The `Drained` condition updates of a plan's status: `(claim, status, reason, message)`.
fn drained_updates(p: &Plan) -> Vec<(String, String, String, String)> {
    p.status
        .iter()
        .filter_map(|a| match a {
            Action::SetNodeClaimConditions {
                node_claim, set, ..
            } => Some(
                set.iter()
                    .filter(|c| c.type_ == "Drained")
                    .map(|c| {
                        (
                            node_claim.clone(),
                            c.status.clone(),
                            c.reason.clone(),
                            c.message.clone(),
                        )
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

fn drained(
    claim: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> (String, String, String, String) {
    (
        claim.to_string(),
        status.to_string(),
        reason.to_string(),
        message.to_string(),
    )
}

/// T-TERM-003. Core's Node termination treats a Node that two claims match as having no single
/// claim (`utils/node` NodeClaimForNode, duplicate error): the Node still terminates. Here both
/// claims of a deleted Node are deleted, each once; the shared Node is tainted, labelled and
/// drained once, writes no `Drained` condition (no single source of truth), and its Machine is
/// marked once (replicas drop by one); both claims then lose their finalizer, and the Node's
/// comes off: nothing stranded.
#[test]
fn a_deleted_node_two_claims_match_terminates_once_and_strands_neither() {
    let one = node(1, 600, &app_pod("web-1", 1, ""), "");
    // The user deletes the Node: each of its claims is deleted, once.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        node_deleted(&with_duplicate_claim(&one))
    ));
    assert_eq!(
        deletions(&p),
        vec![
            ("default-1", "NodeDeleted"),
            ("default-1-dup", "NodeDeleted")
        ]
    );
    assert_eq!(evicts(&p), Vec::<&str>::new());
    // A claim already deleting (the other not yet): only the other is deleted.
    let half = deleted_claim(&with_duplicate_claim(&one), "default-1", 10);
    let p = run(&format!("{}{}", base(1, ""), node_deleted(&half)));
    assert_eq!(deletions(&p), vec![("default-1-dup", "NodeDeleted")]);
    // Both deleting: one drain of the shared Node, no Drained condition.
    let both = deleted_claim(
        &deleted_claim(&with_duplicate_claim(&one), "default-1", 10),
        "default-1-dup",
        10,
    );
    let p = run(&format!("{}{}", base(1, ""), node_deleted(&both)));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Deleted")]);
    assert_eq!(evicts(&p), vec!["default/web-1"]);
    assert_eq!(
        names(&p)
            .into_iter()
            .filter(|n| *n == "excludeFromLoadBalancers")
            .count(),
        1
    );
    assert_eq!(marked(&p), Vec::<&str>::new());
    assert_eq!(drained_updates(&p), vec![]);
    // Drained and tainted long enough: the Machine marked once, replicas 1 -> 0.
    let empty = node(1, 600, "", "");
    let done = deleted_claim(
        &deleted_claim(
            &with_duplicate_claim(&under_way(&empty, 1, "Deleted", 60)),
            "default-1",
            60,
        ),
        "default-1-dup",
        60,
    );
    let p = run(&format!("{}{}", base(1, ""), node_deleted(&done)));
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    assert_eq!(scaled(&p), vec![(1, 0)]);
    assert_eq!(drained_updates(&p), vec![]);
    // Cluster API deletes the Machine: both claims let go.
    let machine_deleting = done.edit(
        "metadata: {name: m-1, namespace: capi-ovh, ",
        &format!(
            "metadata: {{name: m-1, namespace: capi-ovh, deletionTimestamp: '{}', ",
            ago(5)
        ),
    );
    let p = run(&format!(
        "{}{}",
        base(0, ""),
        node_deleted(&machine_deleting)
    ));
    assert_eq!(
        released(&p),
        vec!["NodeClaim/default-1", "NodeClaim/default-1-dup"]
    );
    // The claims and the Machine gone: the Node's finalizer comes off.
    let gone = node_deleted(&empty);
    let node_only = &gone[gone.find("---\napiVersion: v1\nkind: Node\n").unwrap()..];
    let p = run(&format!("{}{node_only}{OTHER_MACHINE}", base(0, "")));
    assert_eq!(released(&p), vec!["Node/node-1"]);
}

/// L-TERM-007. Core's NodeClaim finalization deletes every Node of the claim's providerID and
/// waits until all are gone before the instance goes. Here a deleting claim with two Nodes of
/// its providerID taints and drains both; its Machine is marked only once both are drained;
/// when the claim and the Machine are gone, neither Node keeps our finalizer.
#[test]
fn a_deleting_claim_drains_every_node_of_its_provider_id() {
    let two = |pods1: &str, pods1b: &str, tainted_ago: Option<i64>| {
        let one = node(1, 600, pods1, "");
        let one = match tainted_ago {
            Some(s) => under_way(&one, 1, "Deleted", s),
            None => one,
        };
        let b = second_node(pods1b);
        let b = match tainted_ago {
            Some(_) => b.edit(
                "spec: {providerID: 'openstack:///n1'}",
                "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
            ),
            None => b,
        };
        format!("{}{}{b}", base(1, ""), deleted_claim(&one, "default-1", 30))
    };
    // Both Nodes tainted, labelled and drained; nothing marked.
    let p = run(&two(&app_pod("web-1", 1, ""), &pod_on_1b("web-2"), None));
    assert_eq!(
        tainted_nodes(&p),
        vec![("node-1", "Deleted"), ("node-1b", "Deleted")]
    );
    assert_eq!(evicts(&p), vec!["default/web-1", "default/web-2"]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // node-1 drained, node-1b still holding web-2: the Machine waits.
    let p = run(&two("", &pod_on_1b("web-2"), Some(60)));
    assert_eq!(evicts(&p), vec!["default/web-2"]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // The other way round: the same.
    let p = run(&two(&app_pod("web-1", 1, ""), "", Some(60)));
    assert_eq!(evicts(&p), vec!["default/web-1"]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // Both drained: marked once.
    let p = run(&two("", "", Some(60)));
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    assert_eq!(scaled(&p), vec![(1, 0)]);
    // Claim and Machine gone: both Nodes' finalizers come off.
    let with_finalizer = |t: &str, name: &str| {
        t.edit(
            &format!("metadata: {{name: {name}, "),
            &format!("metadata: {{name: {name}, finalizers: [karpenter.sh/termination], "),
        )
    };
    let n1 = node(1, 600, "", "");
    let n1 = &n1[n1.find("---\napiVersion: v1\nkind: Node\n").unwrap()..];
    let p = run(&format!(
        "{}{}{}{OTHER_MACHINE}",
        base(0, ""),
        with_finalizer(n1, "node-1"),
        with_finalizer(&second_node(""), "node-1b")
    ));
    assert_eq!(released(&p), vec!["Node/node-1", "Node/node-1b"]);
}

/// `text` (one `node(1, ..)`) with claim default-1 carrying `conditions` besides its own.
fn with_claim_conditions(text: &str, conditions: &str) -> String {
    text.edit(
        "  - {type: Registered, status: 'True'}\n",
        &format!("  - {{type: Registered, status: 'True'}}\n{conditions}"),
    )
}

/// T-TERM-017. Core's `node/termination` awaitDrain: when the drain starts, a claim without a
/// `Drained` condition gets it Unknown (reason and message `Draining`); it stays so while pods
/// remain and for the minimum drain time after the taint; then it turns True (reason
/// `Drained`) as the Machine goes, and is not written again.
#[test]
fn a_draining_claim_reads_drained_unknown_until_its_pods_are_gone() {
    let pods = format!("{}{}", app_pod("web-1", 1, ""), app_pod("web-2", 1, ""));
    // The drain starts: Unknown/Draining, pods evicted, no mark.
    let start = deleted_claim(&node(1, 600, &pods, ""), "default-1", 30);
    let p = run(&format!("{}{start}", base(1, "")));
    assert_eq!(evicts(&p), vec!["default/web-1", "default/web-2"]);
    assert_eq!(
        drained_updates(&p),
        vec![drained("default-1", "Unknown", "Draining", "Draining")]
    );
    assert_eq!(marked(&p), Vec::<&str>::new());
    // Pods still there, condition already Unknown: not written again.
    let unknown = "  - {type: Drained, status: Unknown, reason: Draining, message: Draining}\n";
    let going = deleted_claim(
        &with_claim_conditions(
            &under_way(&node(1, 600, &pods, ""), 1, "Deleted", 20),
            unknown,
        ),
        "default-1",
        20,
    );
    let p = run(&format!("{}{going}", base(1, "")));
    assert_eq!(drained_updates(&p), vec![]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // Drained, but tainted only 2 s ago (the minimum is 5 s): still Unknown.
    let empty = |tainted_ago: i64, conditions: &str| {
        deleted_claim(
            &with_claim_conditions(
                &under_way(&node(1, 600, "", ""), 1, "Deleted", tainted_ago),
                conditions,
            ),
            "default-1",
            tainted_ago,
        )
    };
    let p = run(&format!("{}{}", base(1, ""), empty(2, unknown)));
    assert_eq!(drained_updates(&p), vec![]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // Long enough: True, and the Machine goes.
    let p = run(&format!("{}{}", base(1, ""), empty(30, unknown)));
    assert_eq!(
        drained_updates(&p),
        vec![drained("default-1", "True", "Drained", "")]
    );
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    // Already True: nothing more to write.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        empty(30, "  - {type: Drained, status: 'True', reason: Drained}\n")
    ));
    assert_eq!(drained_updates(&p), vec![]);
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    // A claim that never registered drains no Node: no condition.
    let unregistered = deleted_claim(
        &node(1, 600, &pods, "")
            .edit(
                "{type: Registered, status: 'True'}",
                "{type: Registered, status: Unknown}",
            )
            .edit_n("  nodeName: node-1\n", "", 1),
        "default-1",
        30,
    );
    let p = run(&format!("{}{unregistered}", base(1, "")));
    assert_eq!(drained_updates(&p), vec![]);
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
}

/// Core's counters of a plan whose every action applied, as `name{k=v,...} n`, keeping those
/// of `names`.
fn counted_of(text: &str, names: &[&str]) -> Vec<String> {
    counted(text)
        .into_iter()
        .filter(|l| names.iter().any(|n| l.starts_with(&format!("{n}{{"))))
        .collect()
}

/// T-TERM-030. Core counts `karpenter_nodes_drained_total{nodepool}` when the claim's
/// `Drained` condition turns True (once: a claim already Drained counts nothing; a Node two
/// claims match writes no condition and counts nothing); `nodes_terminated_total` stays with
/// the Node's finalizer.
#[test]
fn nodes_drained_counts_the_drained_condition_turning_true() {
    let unknown = "  - {type: Drained, status: Unknown, reason: Draining, message: Draining}\n";
    let empty = |conditions: &str| {
        deleted_claim(
            &with_claim_conditions(
                &under_way(&node(1, 600, "", ""), 1, "Deleted", 30),
                conditions,
            ),
            "default-1",
            30,
        )
    };
    assert_eq!(
        counted_of(
            &format!("{}{}", base(1, ""), empty(unknown)),
            &["nodes_drained"]
        ),
        vec!["nodes_drained{nodepool=default} 1"]
    );
    assert_eq!(
        counted_of(
            &format!(
                "{}{}",
                base(1, ""),
                empty("  - {type: Drained, status: 'True', reason: Drained}\n")
            ),
            &["nodes_drained"]
        ),
        Vec::<String>::new()
    );
    // Draining (Unknown written): nothing yet.
    let draining = deleted_claim(&node(1, 600, &app_pod("web-1", 1, ""), ""), "default-1", 30);
    assert_eq!(
        counted_of(&format!("{}{draining}", base(1, "")), &["nodes_drained"]),
        Vec::<String>::new()
    );
    // Duplicate claims: no condition, no count.
    let dup = deleted_claim(
        &deleted_claim(
            &with_duplicate_claim(&under_way(&node(1, 600, "", ""), 1, "Deleted", 30)),
            "default-1",
            30,
        ),
        "default-1-dup",
        30,
    );
    assert_eq!(
        counted_of(&format!("{}{dup}", base(1, "")), &["nodes_drained"]),
        Vec::<String>::new()
    );
}

/// T-TERMINATOR-008/009. Each eviction counts `karpenter_pods_drained_total{reason}` (core
/// terminator evictionReason): the claim's DisruptionReason when True (a drift's drain:
/// `Drifted`; a voluntary command's taint written this pass counts too), `Forceful Termination`
/// without one (a user's deletion, an expiry), and an empty reason when the Node has no single
/// claim. A user's deletion writes no DisruptionReason on the claim, as core's.
#[test]
fn pods_drained_counts_each_eviction_by_the_claims_disruption_reason() {
    let pods = format!("{}{}", app_pod("web-1", 1, ""), app_pod("web-2", 1, ""));
    let user = deleted_claim(&node(1, 600, &pods, ""), "default-1", 30);
    let text = format!("{}{user}", base(1, ""));
    assert_eq!(
        counted_of(&text, &["pods_drained"]),
        vec![
            "pods_drained{reason=Forceful Termination} 1",
            "pods_drained{reason=Forceful Termination} 1"
        ]
    );
    let p = run(&text);
    let taint = p.actions.iter().find(|a| a.name() == "taintNode").unwrap();
    assert!(
        !format!("{:?}", taint.steps().writes).contains("DisruptionReason"),
        "{:?}",
        taint.steps().writes
    );
    // An expired claim drains the same way.
    let expired = user.edit(
        "annotations: {cluster.x-k8s.io/machine",
        "annotations: {karpenter-capi/disruption-reason: Expired, cluster.x-k8s.io/machine",
    );
    assert_eq!(
        counted_of(&format!("{}{expired}", base(1, "")), &["pods_drained"]).len(),
        2
    );
    assert!(
        counted_of(&format!("{}{expired}", base(1, "")), &["pods_drained"])
            .iter()
            .all(|l| l == "pods_drained{reason=Forceful Termination} 1")
    );
    // A drift's drain (its claim deleted by the command, the condition on it): Drifted. The
    // drain waits for room: give the pods a second node.
    let drifted = deleted_claim(
        &with_claim_conditions(
            &under_way(
                &node(1, 600, &app_pod("web-1", 1, ""), ""),
                1,
                "Drifted",
                60,
            ),
            "  - {type: DisruptionReason, status: 'True', reason: Drifted}\n",
        ),
        "default-1",
        30,
    );
    let text = format!("{}{drifted}{}", base(2, ""), node(2, 600, "", ""));
    assert_eq!(evicts(&run(&text)), vec!["default/web-1"]);
    assert_eq!(
        counted_of(&text, &["pods_drained"]),
        vec!["pods_drained{reason=Drifted} 1"]
    );
    // The drift's taint lost (someone removed it): written again with the condition this pass,
    // and the evictions of the same pass count under it.
    let untainted = deleted_claim(
        &node(1, 600, &app_pod("web-1", 1, ""), "").edit(
            "annotations: {cluster.x-k8s.io/machine",
            &format!(
                "annotations: {{karpenter-capi/drain-started: '{}', karpenter-capi/disruption-reason: Drifted, cluster.x-k8s.io/machine",
                ago(60)
            ),
        ),
        "default-1",
        30,
    );
    let text = format!("{}{untainted}{}", base(2, ""), node(2, 600, "", ""));
    assert_eq!(tainted_nodes(&run(&text)), vec![("node-1", "Drifted")]);
    assert_eq!(
        counted_of(&text, &["pods_drained"]),
        vec!["pods_drained{reason=Drifted} 1"]
    );
    // Two claims of one Node: no single claim, an empty reason.
    let dup = deleted_claim(
        &deleted_claim(
            &with_duplicate_claim(&node(1, 600, &app_pod("web-1", 1, ""), "")),
            "default-1",
            30,
        ),
        "default-1-dup",
        30,
    );
    assert_eq!(
        counted_of(&format!("{}{dup}", base(1, "")), &["pods_drained"]),
        vec!["pods_drained{reason=} 1"]
    );
}

/// T-TERM-029/031. When a Node's finalizer comes off, core observes its termination duration
/// (from its deletion) and its lifetime (from its creation), once, by its NodePool; a Node not
/// being deleted has no termination duration to observe.
#[test]
fn a_released_node_observes_its_termination_duration_and_lifetime() {
    let orphan = |deleted_ago: Option<i64>| {
        let deletion = deleted_ago
            .map(|s| format!("deletionTimestamp: '{}', ", ago(s)))
            .unwrap_or_default();
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: gone, creationTimestamp: '{}', {deletion}finalizers: [karpenter.sh/termination], labels: {{karpenter.sh/nodepool: default, topology.kubernetes.io/zone: gra1}}}}\nspec: {{providerID: 'openstack:///gone'}}\n",
            ago(7200)
        )
    };
    let observe = |text: &str| {
        let s = snapshot_from_sources(&[Source {
            name: "t.yaml".into(),
            text: text.to_string(),
        }])
        .unwrap();
        let now = NOW.parse().unwrap();
        let p = plan(&s, now, &Config::default());
        observations(p.actions.iter().chain(p.status.iter()), &s, now)
            .into_iter()
            .map(|o| {
                let labels: Vec<String> =
                    o.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (o.metric, labels.join(","), o.seconds)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        observe(&format!(
            "{}{}{OTHER_MACHINE}",
            base(0, ""),
            orphan(Some(90))
        )),
        vec![
            (
                Observed::NodesTerminationDuration,
                "nodepool=default".to_string(),
                90.0
            ),
            (
                Observed::NodesLifetimeDuration,
                "nodepool=default".to_string(),
                7200.0
            ),
        ]
    );
    assert_eq!(
        observe(&format!("{}{}{OTHER_MACHINE}", base(0, ""), orphan(None))),
        vec![(
            Observed::NodesLifetimeDuration,
            "nodepool=default".to_string(),
            7200.0
        )]
    );
    // Still held by its claim: no finalizer removed, nothing observed.
    let held = node_deleted(&deleted_claim(&node(1, 600, "", ""), "default-1", 30));
    assert_eq!(observe(&format!("{}{held}", base(1, ""))), vec![]);
    // And counted as core counts it, once.
    assert_eq!(
        counted(&format!(
            "{}{}{OTHER_MACHINE}",
            base(0, ""),
            orphan(Some(90))
        )),
        vec!["nodes_terminated{nodepool=default,zone=gra1} 1"]
    );
}
