//! Termination and the NodeClaim lifecycle in the reconcile core, against Karpenter core
//! v1.14.1: which Nodes a deleting claim drains, the liveness clocks, garbage collection, and
//! drift's replacements for pods no eviction moves. Each test drives several cluster states
//! through `plan` and asserts the actions exactly.

use crate::controller_disruption::{
    NOW, ago, app_pod, base, deletes, drifted_node, evicts, names, node, pdb, pod_with, run,
    sized_pod, tainted_nodes, under_way,
};
use karpenter_capi_testkit::Edit;

use karpenter_capi::controller::{Action, Config, plan};
use karpenter_capi::model::duration::GoDuration;
use karpenter_capi::model::load::{Source, snapshot_from_sources};

/// `text` with claim `default-<i>` deleted `deleted_ago` seconds before NOW, holding our
/// termination finalizer.
fn deleted(text: &str, i: usize, deleted_ago: i64) -> String {
    text.edit_n(
        &format!("  name: default-{i}\n"),
        &format!(
            "  name: default-{i}\n  deletionTimestamp: '{}'\n  finalizers: [karpenter.sh/termination]\n",
            ago(deleted_ago)
        ),
        1,
    )
}

/// `text` (one `node(..)`) with its claim launched but never registered: Registered and
/// Initialized still Unknown, no nodeName; its Node shares the claim's providerID.
fn never_registered(text: &str) -> String {
    text.edit(
        "{type: Registered, status: 'True'}",
        "{type: Registered, status: Unknown}",
    )
    .edit(
        "{type: Initialized, status: 'True'",
        "{type: Initialized, status: Unknown",
    )
    .edit_n("  nodeName: node-1\n", "", 1)
}

fn marked(p: &karpenter_capi::controller::Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::MarkMachineForDeletion { machine, .. } => Some(machine.as_str()),
            _ => None,
        })
        .collect()
}

/// Core `nodeclaim/lifecycle/controller.go` finalize deletes (so drains) a claim's Nodes only when
/// the claim is Registered; otherwise it goes straight to the instance. A Node that only shares
/// the providerID of a claim that never registered is neither tainted nor drained: the claim's
/// Machine is marked at once (Cluster API's own Machine deletion deals with that Node).
#[test]
fn a_claim_that_never_registered_drains_no_node() {
    let one = node(1, 600, &app_pod("web-1", 1, ""), "");
    // Registered (the control): tainted and drained first, the Machine waits.
    let p = run(&format!("{}{}", base(1, ""), deleted(&one, 1, 30)));
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Deleted")]);
    assert_eq!(evicts(&p), vec!["default/web-1"]);
    assert_eq!(marked(&p), Vec::<&str>::new());
    // Never registered, its Node joined without our taint: no taint, no eviction; the Machine
    // is marked now and the MachineDeployment scaled down by it.
    let unreg = deleted(&never_registered(&one), 1, 30);
    let p = run(&format!("{}{unreg}", base(1, "")));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    assert_eq!(
        names(&p)
            .into_iter()
            .filter(|n| *n != "createNodeClaim")
            .collect::<Vec<_>>(),
        vec!["markMachineForDeletion", "scaleMachineDeployment"]
    );
    // Its Node still carrying `karpenter.sh/unregistered`: the same.
    let tainted_unreg = unreg.edit(
        "spec: {providerID: 'openstack:///n1'}",
        "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/unregistered, effect: NoExecute}]}",
    );
    let p = run(&format!("{}{tainted_unreg}", base(1, "")));
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
    // With a terminationGracePeriod and a pod whose time ran out: the deadline is still
    // recorded (core writes it for every deleting claim), but no pod is deleted on that Node.
    let graced = unreg.edit(
        "requirements: []}",
        "requirements: [], terminationGracePeriod: 1m}",
    );
    let p = run(&format!("{}{graced}", base(1, "")));
    assert!(
        p.actions
            .iter()
            .any(|a| matches!(a, Action::SetTerminationTimestamp { node_claim, .. } if node_claim == "default-1")),
        "{:?}",
        names(&p)
    );
    assert!(
        !p.actions.iter().any(|a| matches!(
            a,
            Action::DeletePod { .. } | Action::EvictPod { .. } | Action::TaintNode { .. }
        )),
        "{:?}",
        names(&p)
    );
    assert_eq!(marked(&p), vec!["capi-ovh/m-1"]);
}

/// A claim with no Node yet, on the c3-4 MachineDeployment; `status` is its YAML status.
pub(crate) fn young_claim(name: &str, created_ago: i64, status: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {status}\n",
        ago(created_ago)
    )
}

pub(crate) fn timed_out(p: &karpenter_capi::controller::Plan) -> Vec<(&str, &str, &str)> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeleteNodeClaim {
                node_claim,
                reason,
                message,
                ..
            } => Some((node_claim.as_str(), reason.as_str(), message.as_str())),
            _ => None,
        })
        .collect()
}

/// Core `nodeclaim/lifecycle/liveness.go` Reconcile: the launch timeout runs from the Launched
/// condition's last transition, the registration timeout from the Registered condition's, not
/// from the claim's creation; a claim not launched yet is judged by the launch clock alone. A
/// condition without a transition time counts from creation.
#[test]
fn liveness_clocks_run_from_the_condition_transitions() {
    let unknown = |t: &str, secs: i64| {
        format!(
            "{{type: {t}, status: Unknown, reason: AwaitingReconciliation, lastTransitionTime: '{}'}}",
            ago(secs)
        )
    };
    let launched = |secs: i64| {
        format!(
            "{{type: Launched, status: 'True', lastTransitionTime: '{}'}}",
            ago(secs)
        )
    };
    let claims = [
        // Created 20 min ago, its Launched condition (re)set 2 min ago: within the 5 min.
        young_claim(
            "launch-recent",
            1200,
            &format!("{{conditions: [{}]}}", unknown("Launched", 120)),
        ),
        // Launched set 6 min ago: past it.
        young_claim(
            "launch-old",
            1200,
            &format!("{{conditions: [{}]}}", unknown("Launched", 360)),
        ),
        // Not launched, its Registered clock 20 min old: only the launch clock counts.
        young_claim(
            "launch-only",
            1200,
            &format!(
                "{{conditions: [{}, {}]}}",
                unknown("Launched", 120),
                unknown("Registered", 1200)
            ),
        ),
        // Launched, created 30 min ago, Registered (re)set 10 min ago: within the 15 min.
        young_claim(
            "register-recent",
            1800,
            &format!(
                "{{providerID: 'openstack:///a', conditions: [{}, {}]}}",
                launched(700),
                unknown("Registered", 600)
            ),
        ),
        // Registered set 16 min ago: past it.
        young_claim(
            "register-old",
            1800,
            &format!(
                "{{providerID: 'openstack:///b', conditions: [{}, {}]}}",
                launched(1000),
                unknown("Registered", 960)
            ),
        ),
        // No transition time on Registered: counted from creation, 16 min ago.
        young_claim(
            "register-untimed",
            960,
            "{providerID: 'openstack:///c', conditions: [{type: Launched, status: 'True'}, {type: Registered, status: Unknown}]}",
        ),
    ]
    .concat();
    let p = run(&format!("{}{claims}", base(0, "")));
    assert_eq!(
        timed_out(&p),
        vec![
            (
                "launch-old",
                "LaunchTimeout",
                "not launched within 5m (waited 6m)"
            ),
            (
                "register-old",
                "RegistrationTimeout",
                "not registered within 15m (waited 16m)"
            ),
            (
                "register-untimed",
                "RegistrationTimeout",
                "not registered within 15m (waited 16m)"
            ),
        ]
    );
}

/// A claim `name` bound to Machine `machine`, registered or only launched, with providerID `pid`.
fn bound_claim(name: &str, machine: &str, pid: &str, registered: bool) -> String {
    let registered = if registered { "'True'" } else { "Unknown" };
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  creationTimestamp: '{}'\n  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: c3-4}}\n  annotations: {{cluster.x-k8s.io/machine: capi-ovh/{machine}, karpenter-capi/machine-deployment: capi-ovh/capi-ovh-karpenter-c3-4}}\nspec: {{nodeClassRef: {{group: karpenter.cluster.x-k8s.io, kind: ClusterAPINodeClass, name: default}}, requirements: []}}\nstatus: {{providerID: '{pid}', conditions: [{{type: Launched, status: 'True'}}, {{type: Registered, status: {registered}, lastTransitionTime: '{}'}}]}}\n",
        ago(600),
        ago(300)
    )
}

/// A Node with providerID `pid`, Ready or not.
fn bare_node(name: &str, pid: &str, ready: bool) -> String {
    let ready = if ready { "'True'" } else { "'False'" };
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nspec: {{providerID: '{pid}'}}\nstatus: {{capacity: {{cpu: '2', memory: 4G, pods: '110'}}, allocatable: {{cpu: '2', memory: 4G, pods: '110'}}, conditions: [{{type: Ready, status: {ready}}}]}}\n"
    )
}

fn collected(p: &karpenter_capi::controller::Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeleteNodeClaim {
                node_claim, reason, ..
            } if reason == "GarbageCollected" => Some(node_claim.as_str()),
            _ => None,
        })
        .collect()
}

/// Core `nodeclaim/garbagecollection/controller.go` Reconcile: only Registered claims whose
/// instance (here: Machine) is gone are collected, several in one pass, unless their Node is
/// Ready; a registered claim whose Node is gone too is collected (core reads a missing Node as not
/// Ready), one that never registered is left to the registration timeout, and one whose Machine
/// still exists is kept whatever its Node.
#[test]
fn garbage_collection_takes_registered_claims_whose_machine_is_gone() {
    // node-1 and its Machine are live, so the Machines were observed.
    let live = node(1, 600, "", "");
    let claims = [
        // Machine gone, Node NotReady: collected (two of them, in one pass).
        bound_claim("gone-notready-a", "vanished-a", "openstack:///ga", true),
        bare_node("node-ga", "openstack:///ga", false),
        bound_claim("gone-notready-b", "vanished-b", "openstack:///gb", true),
        bare_node("node-gb", "openstack:///gb", false),
        // Machine gone, Node Ready: kept (the kubelet still runs).
        bound_claim("gone-ready", "vanished-c", "openstack:///gc", true),
        bare_node("node-gc", "openstack:///gc", true),
        // Machine gone, no Node, registered: collected.
        bound_claim("gone-nodeless", "vanished-d", "openstack:///gd", true),
        // Machine gone, no Node, never registered: kept.
        bound_claim("gone-unregistered", "vanished-e", "openstack:///ge", false),
        // Machine still there, no Node: kept.
        bound_claim("machine-here", "m-1", "openstack:///n1", true),
    ]
    .concat();
    let p = run(&format!("{}{live}{claims}", base(1, "")));
    assert_eq!(
        collected(&p),
        vec!["gone-notready-a", "gone-notready-b", "gone-nodeless"]
    );
}

/// A c3-4 node `i` (2 cpu) holding `pods`, its claim with a terminationGracePeriod of 1h.
fn graced(text: &str) -> String {
    text.edit(
        "requirements: []}",
        "requirements: [], terminationGracePeriod: 1h}",
    )
}

/// A drifted node-1 (from [`drifted_node`]) whose Drifted command started `started_ago` seconds
/// before NOW with no replacement: its Node tainted, its claim recording the command.
fn drifting(text: &str, started_ago: i64) -> String {
    text.edit(
        "spec: {providerID: 'openstack:///n1'}",
        "spec: {providerID: 'openstack:///n1', taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]}",
    )
    .edit(
        "annotations: {karpenter.sh/nodepool-hash:",
        &format!(
            "annotations: {{karpenter-capi/drain-started: '{}', karpenter-capi/disruption-reason: Drifted, karpenter-capi/replacements: '0', karpenter.sh/nodepool-hash:",
            ago(started_ago)
        ),
    )
}

fn replacement_pods(p: &karpenter_capi::controller::Plan) -> Vec<Vec<&str>> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateNodeClaim { pods, .. } => Some(pods.iter().map(String::as_str).collect()),
            _ => None,
        })
        .collect()
}

/// Core `disruption/drift.go` with `helpers.go` SimulateScheduling and `pdb.go`
/// IsCurrentlyReschedulable: a drifted claim with a terminationGracePeriod is taken despite pods
/// no eviction moves, but no replacement is made for them (they stay until the deadline deletes
/// them); replacements are made for the pods that can move; the command is not called off for
/// want of room for the held pods; and the drain evicts the others without waiting for room for
/// the held ones.
#[test]
fn eventual_drift_makes_no_replacement_for_pods_no_eviction_moves() {
    let held_pdb = pdb("web", "{app: web}", 0, ", maxUnavailable: 0");
    let web = app_pod("web-1", 1, "");
    // Without the budget (the control): the pod needs a replacement.
    let p = run(&format!("{}{}", base(1, ""), graced(&drifted_node(&web))));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    // Under a budget that blocks whatever it allows: tainted, nothing provisioned for it.
    let p = run(&format!(
        "{}{}{held_pdb}",
        base(1, ""),
        graced(&drifted_node(&web))
    ));
    assert_eq!(names(&p), vec!["taintNode"]);
    assert_eq!(tainted_nodes(&p), vec![("node-1", "Drifted")]);
    // Two budgets on the pod: the same.
    let two = format!(
        "{}{}",
        pdb("web", "{app: web}", 1, ""),
        pdb("all", "{}", 1, "")
    );
    let p = run(&format!(
        "{}{}{two}",
        base(1, ""),
        graced(&drifted_node(&web))
    ));
    assert_eq!(names(&p), vec!["taintNode"]);
    // With an active do-not-disrupt instead: the same.
    let guarded = app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'true'");
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        graced(&drifted_node(&guarded))
    ));
    assert_eq!(names(&p), vec!["taintNode"]);
    // A held pod beside one that can move: the replacement is for the movable one alone.
    let mixed = format!(
        "{guarded}{}",
        sized_pod("web-2", 1, "", "500m").edit("app: web", "app: api")
    );
    let p = run(&format!("{}{}", base(1, ""), graced(&drifted_node(&mixed))));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    assert_eq!(replacement_pods(&p), vec![vec!["default/web-2"]]);
    // A budget that allows nothing now but does not block whatever it allows: the pod is
    // provisioned for, as core does (it will be evictable once the budget allows).
    let tight = pdb("web", "{app: web}", 0, ", minAvailable: 1");
    let p = run(&format!(
        "{}{}{tight}",
        base(1, ""),
        graced(&drifted_node(&web))
    ));
    assert_eq!(names(&p), vec!["createNodeClaim", "taintNode"]);
    // The command under way, with no replacement: validated, its claim deleted (not called off
    // for want of room for the held pod).
    let going = drifting(&graced(&drifted_node(&guarded)), 60);
    let p = run(&format!("{}{going}", base(1, "")));
    assert!(
        p.actions.iter().any(|a| matches!(a, Action::DeleteNodeClaim { node_claim, reason, .. } if node_claim == "default-1" && reason == "Drifted")),
        "{:?} {:?}",
        names(&p),
        p.notes
    );
    assert!(!names(&p).contains(&"abortDisruption"), "{:?}", p.notes);
}

/// The drain of a drifted claim with a held pod evicts the pods that can move as soon as they
/// have room, without waiting for room for the held one (which its deadline deletes).
#[test]
fn a_voluntary_drain_needs_no_room_for_pods_no_eviction_moves() {
    let guarded = app_pod("web-1", 1, "karpenter.sh/do-not-disrupt: 'true'");
    let mixed = format!(
        "{guarded}{}",
        sized_pod("web-2", 1, "", "500m").edit("app: web", "app: api")
    );
    let draining = deleted(&drifting(&graced(&drifted_node(&mixed)), 120), 1, 60);
    // node-2 has 700m free: room for web-2 (500m), not for both.
    let other = node(2, 600, &sized_pod("busy", 2, "", "1200m"), "");
    let p = run(&format!("{}{draining}{other}", base(2, "")));
    assert_eq!(evicts(&p), vec!["default/web-2"]);
    // No room for web-2 either: the drain waits.
    let full = node(2, 600, &sized_pod("busy", 2, "", "1600m"), "");
    let p = run(&format!("{}{draining}{full}", base(2, "")));
    assert_eq!(evicts(&p), Vec::<&str>::new());
    assert!(
        p.notes
            .iter()
            .any(|n| n == "node node-1: its drain waits for room for its pods"),
        "{:?}",
        p.notes
    );
}

/// Core lifecycle finalize for a claim that never launched (no providerID, no Machine): its
/// finalizer goes at once, and Nodes without a providerID are not touched (L-TERM-009/010).
#[test]
fn a_claim_never_launched_is_finalized_without_touching_nodes() {
    let claim = deleted(
        &young_claim(
            "default-9",
            600,
            "{conditions: [{type: Launched, status: Unknown}]}",
        ),
        9,
        10,
    )
    .edit_n(
        "  finalizers: [karpenter.sh/termination]\n",
        "  finalizers: [karpenter.sh/termination, example.com/keep]\n",
        1,
    );
    let loose = (1..=3)
        .map(|k| format!("---\napiVersion: v1\nkind: Node\nmetadata: {{name: loose-{k}}}\nspec: {{}}\nstatus: {{conditions: [{{type: Ready, status: 'True'}}]}}\n"))
        .collect::<String>();
    let p = run(&format!("{}{claim}{loose}", base(0, "")));
    assert_eq!(names(&p), vec!["removeNodeClaimFinalizer"]);
    assert!(matches!(
        &p.actions[0],
        Action::RemoveNodeClaimFinalizer { node_claim, remaining, .. }
            if node_claim == "default-9" && remaining == &vec!["example.com/keep".to_string()]
    ));
}

/// Core `liveness.go` LaunchTimeout is configurable (`--launch-timeout` here): 45 s deletes a
/// claim 60 s into its launch, and keeps one 30 s in (L-LIVE-006).
#[test]
fn a_custom_launch_timeout_is_honoured() {
    let claims = [
        young_claim(
            "launch-60",
            60,
            &format!(
                "{{conditions: [{{type: Launched, status: Unknown, lastTransitionTime: '{}'}}]}}",
                ago(60)
            ),
        ),
        young_claim(
            "launch-30",
            30,
            &format!(
                "{{conditions: [{{type: Launched, status: Unknown, lastTransitionTime: '{}'}}]}}",
                ago(30)
            ),
        ),
    ]
    .concat();
    let s = snapshot_from_sources(&[Source {
        name: "t.yaml".into(),
        text: format!("{}{claims}", base(0, "")),
    }])
    .unwrap();
    let config = Config {
        launch_timeout: GoDuration(45),
        ..Config::default()
    };
    let p = plan(&s, NOW.parse().unwrap(), &config);
    assert_eq!(
        timed_out(&p),
        vec![(
            "launch-60",
            "LaunchTimeout",
            "not launched within 45s (waited 1m)"
        )]
    );
    // The default 5 m keeps both.
    let p = plan(&s, NOW.parse().unwrap(), &Config::default());
    assert_eq!(timed_out(&p), Vec::<(&str, &str, &str)>::new());
}

/// node-1's claim deleted 30 s ago with a terminationGracePeriod of 1h, its node tainted by
/// termination since then, holding `pods`.
fn terminating(pods: &str, claim_annotations: &str) -> String {
    let text = under_way(&node(1, 600, pods, ""), 1, "Expired", 30).edit(
        "karpenter-capi/disruption-reason: Expired, ",
        claim_annotations,
    );
    graced(&deleted(&text, 1, 30))
}

/// Core `nodeclaim/lifecycle` ensureTerminationGracePeriodTerminationTimeAnnotation: a deadline
/// already recorded on the claim is kept (not rewritten) and is the one pods are deleted by
/// (L-TERM-013).
#[test]
fn a_recorded_termination_deadline_is_kept_and_used() {
    let web = pod_with("web-1", "", "", "");
    let soon = NOW
        .parse::<jiff::Timestamp>()
        .unwrap()
        .checked_add(jiff::SignedDuration::from_secs(10))
        .unwrap();
    let recorded = terminating(
        &web,
        &format!("karpenter.sh/nodeclaim-termination-timestamp: '{soon}', "),
    );
    let p = run(&format!("{}{recorded}", base(1, "")));
    assert!(
        !names(&p).contains(&"setTerminationTimestamp"),
        "{:?}",
        names(&p)
    );
    assert_eq!(deletes(&p), vec![("default/web-1", 10)]);
    // Not recorded yet: written as deletion + 1h, and 59 min left leave the pod to eviction.
    let p = run(&format!("{}{}", base(1, ""), terminating(&web, "")));
    assert!(p.actions.iter().any(|a| matches!(a,
        Action::SetTerminationTimestamp { node_claim, time, .. }
            if node_claim == "default-1" && *time == NOW.parse::<jiff::Timestamp>().unwrap().checked_add(jiff::SignedDuration::from_secs(3570)).unwrap().to_string())));
    assert_eq!(deletes(&p), Vec::<(&str, i64)>::new());
    assert_eq!(evicts(&p), vec!["default/web-1"]);
}

/// Core termination `suite_test.go`: terminal pods never hold a drain; a pod tolerating
/// `karpenter.sh/disrupted:NoSchedule` (operator Equal as well as Exists) is neither evicted nor
/// waited for; tolerating only `node.kubernetes.io/unschedulable` exempts nothing (T-TERM-008,
/// T-TERM-010, T-TERM-012).
#[test]
fn which_pods_a_drain_evicts_and_waits_for() {
    let marked_now = |pods: &str| {
        let p = run(&format!("{}{}", base(1, ""), terminating(pods, "")));
        (
            evicts(&p).into_iter().map(String::from).collect::<Vec<_>>(),
            marked(&p).len(),
        )
    };
    let succeeded = pod_with("done-1", "", "", "").edit("phase: Running", "phase: Succeeded");
    let failed = pod_with("failed-1", "", "", "").edit("phase: Running", "phase: Failed");
    assert_eq!(marked_now(&format!("{succeeded}{failed}")), (vec![], 1));
    let equal = pod_with(
        "tolerant-1",
        "",
        "tolerations: [{key: karpenter.sh/disrupted, operator: Equal, value: '', effect: NoSchedule}], ",
        "",
    );
    assert_eq!(marked_now(&equal), (vec![], 1));
    let unschedulable = pod_with(
        "cordon-1",
        "",
        "tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}], ",
        "",
    );
    assert_eq!(
        marked_now(&format!("{equal}{unschedulable}")),
        (vec!["default/cordon-1".to_string()], 0)
    );
}

fn excluded(p: &karpenter_capi::controller::Plan) -> Vec<&str> {
    p.actions
        .iter()
        .filter_map(|a| match a {
            Action::ExcludeFromLoadBalancers { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect()
}

/// T-TERM-007. Core's terminator (`terminator.go` Taint, on every pass of a terminating Node)
/// labels the Node `node.kubernetes.io/exclude-from-external-load-balancers: karpenter` before
/// it drains, so cloud load balancers stop sending it traffic while its pods go. Upstream's case
/// holds the drain with a fully blocking PDB and finds the label after one pass.
#[test]
fn a_terminating_node_leaves_external_load_balancers_before_its_drain() {
    use karpenter_capi::controller::write::Write;
    let web = app_pod("web-1", 1, "");
    let blocking = pdb("web", "{app: web}", 0, "");
    let one = node(1, 600, &web, "");
    // A user deleted the claim: labelled first, then tainted and drained (the Eviction API, not
    // the plan, refuses web-1 while its PDB allows nothing, as upstream's eviction queue).
    let p = run(&format!(
        "{}{}{blocking}",
        base(1, ""),
        deleted(&one, 1, 30)
    ));
    let order: Vec<&str> = names(&p)
        .into_iter()
        .filter(|n| *n != "createNodeClaim")
        .collect();
    assert_eq!(
        order,
        vec!["excludeFromLoadBalancers", "taintNode", "evictPod"]
    );
    assert_eq!(excluded(&p), vec!["node-1"]);
    let label = p
        .actions
        .iter()
        .find(|a| a.name() == "excludeFromLoadBalancers")
        .unwrap();
    match &label.steps().writes[..] {
        [
            Write::EditNode {
                name,
                add_labels,
                add_taints,
                remove_taint_keys,
                ..
            },
        ] => {
            assert_eq!(name, "node-1");
            assert_eq!(
                add_labels.iter().collect::<Vec<_>>(),
                vec![(
                    &"node.kubernetes.io/exclude-from-external-load-balancers".to_string(),
                    &"karpenter".to_string()
                )]
            );
            assert!(add_taints.is_empty() && remove_taint_keys.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // A voluntary command already tainted it (drift, its claim now deleted): labelled all the
    // same, at the claim's deletion (its drain then waits for room for web-1).
    let drifting = deleted(&under_way(&one, 1, "Drifted", 120), 1, 30);
    let p = run(&format!("{}{drifting}", base(1, "")));
    assert_eq!(excluded(&p), vec!["node-1"]);
    assert_eq!(tainted_nodes(&p), Vec::<(&str, &str)>::new());
    // The command's start (claim not deleted yet) does not label: upstream labels only in
    // termination, and a command called off must leave the node as it was.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        under_way(&one, 1, "Drifted", 120)
    ));
    assert_eq!(excluded(&p), Vec::<&str>::new());
    // Already carrying the key (whatever its value): nothing to write.
    for value in ["karpenter", "'true'"] {
        let labelled = deleted(&one, 1, 30).replacen(
            "labels: {karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1}",
            &format!(
                "labels: {{karpenter.sh/nodepool: default, kubernetes.io/hostname: node-1, node.kubernetes.io/exclude-from-external-load-balancers: {value}}}"
            ),
            1,
        );
        let p = run(&format!("{}{labelled}{blocking}", base(1, "")));
        assert_eq!(excluded(&p), Vec::<&str>::new(), "{value}");
        assert_eq!(tainted_nodes(&p), vec![("node-1", "Deleted")], "{value}");
    }
    // A claim that never registered: its Node was never ours to drain, nor to relabel.
    let p = run(&format!(
        "{}{}",
        base(1, ""),
        deleted(&never_registered(&one), 1, 30)
    ));
    assert_eq!(excluded(&p), Vec::<&str>::new());
}
