//! Every dump under tests/fixtures/doctor/ yields exactly the findings its header announces: each
//! `# expect: Cause severity Subject` line is one non-ok finding, in order, and nothing else is
//! a warning or an error. `# now:` sets the time the dump is judged at.

use karpenter_capi_testkit::Edit;
use std::path::{Path, PathBuf};

use karpenter_capi::controller::Config;
use karpenter_capi::diagnose::{self, AccessSource, Report, Severity};
use karpenter_capi::model::load::{Source, snapshot_from_sources};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

fn header(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("# {key}: ")))
        .map(str::to_string)
        .collect()
}

fn doctor(path: &Path) -> (Report, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let now = header(&text, "now")
        .first()
        .map(|t| t.parse().unwrap())
        .unwrap_or_else(|| "2026-11-30T10:30:00Z".parse().unwrap());
    let expected = header(&text, "expect");
    let snapshot = snapshot_from_sources(&[Source {
        name: path.display().to_string(),
        text,
    }])
    .unwrap();
    (
        diagnose::run(
            &snapshot,
            now,
            &Config::default(),
            AccessSource::RbacObjects,
        ),
        expected,
    )
}

fn problems(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
        .map(|f| format!("{} {} {}", f.cause, f.severity, f.subject))
        .collect()
}

#[test]
fn each_fixture_yields_exactly_its_cause_on_its_subject() {
    let mut failures = Vec::new();
    for path in fixtures() {
        let (report, expected) = doctor(&path);
        let got = problems(&report);
        if got != expected {
            failures.push(format!(
                "{}:\n  expected {expected:?}\n  got      {got:?}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_cause_of_the_issue_has_a_fixture() {
    let required = [
        "UnregisteredTaintMissing",
        "MemberLabelOnTemplate",
        "MissingCapacityAnnotations",
        "InvalidCapacityAnnotation",
        "MissingPrice",
        "ReplicasUnsetOnMember",
        "NodeClassNotReady",
        "NodePoolNotReady",
        "NoMemberMachineDeployments",
        "RequirementsUnsatisfiable",
        "LimitsExhausted",
        "MachineNotFound",
        "MachineFailed",
        "MachineWithoutProviderID",
        "NodeNotFound",
        "NodeWithoutProviderID",
        "MultipleNodesFound",
        "NodeNotReady",
        "StartupTaintsRemain",
        "RegistrationTimeout",
        "OverPrivilegedManagementAccess",
        "InsufficientManagementAccess",
        "ControllerImagePullFailed",
        "ControllerNotRunning",
        "NodeClaimMissingOfferingLabels",
        "ForeignHashVersion",
        "ForeignDeleteMachineMark",
        "MemberLabelWithValue",
        "UnscopedSetup",
        "NodePoolValidationFailed",
    ];
    let announced: Vec<String> = fixtures()
        .iter()
        .flat_map(|p| header(&std::fs::read_to_string(p).unwrap(), "expect"))
        .collect();
    for cause in required {
        assert!(
            announced
                .iter()
                .any(|e| e.starts_with(&format!("{cause} "))),
            "no fixture for {cause}"
        );
    }
    // The unregistered taint is caught both on the template and on a joined node.
    assert!(
        announced.contains(
            &"UnregisteredTaintMissing error KubeadmConfigTemplate/capi-ovh/capi-ovh-karpenter"
                .to_string()
        )
    );
    assert!(
        announced.contains(&"UnregisteredTaintMissing error NodeClaim/default-mrnnj".to_string())
    );
}

#[test]
fn healthy_dump_is_all_ok() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/healthy.yaml");
    let (report, _) = doctor(&path);
    let all: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{} {} {}", f.cause, f.severity, f.subject))
        .collect();
    assert_eq!(
        all,
        vec![
            "NodeClassReady ok ClusterAPINodeClass/default",
            "NodePoolOk ok NodePool/default",
            "MachineDeploymentOk ok MachineDeployment/capi-ovh/capi-ovh-karpenter-c3-8",
            "BootstrapTemplateOk ok KubeadmConfigTemplate/capi-ovh/capi-ovh-karpenter",
            "NodeClaimInitialized ok NodeClaim/default-mrnnj",
            "ManagementAccessOk ok User/karpenter-mgmt",
            "ControllerRunning ok Pod/karpenter/karpenter-6d9f8b7c5d-q7w2r",
        ]
    );
    assert!(!report.has_errors());
}

#[test]
fn ages_decide_between_in_progress_and_stuck() {
    // The same stuck Machine: a warning inside the launch window, an error past it; never
    // launched, it stays judged by the launch clock alone (as the controller judges it), even
    // past the registration window.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/doctor/machine-without-provider-id.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let snapshot = snapshot_from_sources(&[Source {
        name: "t".into(),
        text,
    }])
    .unwrap();
    let at = |now: &str| {
        let r = diagnose::run(
            &snapshot,
            now.parse().unwrap(),
            &Config::default(),
            AccessSource::RbacObjects,
        );
        let f = r
            .findings
            .into_iter()
            .find(|f| f.subject == "NodeClaim/default-mrnnj")
            .unwrap();
        (f.cause.to_string(), f.severity, f.message)
    };
    let (cause, severity, message) = at("2026-11-30T10:04:59Z");
    assert_eq!(
        (cause.as_str(), severity),
        ("MachineWithoutProviderID", Severity::Warning)
    );
    assert_eq!(
        message,
        "Machine capi-ovh/capi-ovh-karpenter-c3-8-7b9c4-x2k8p has no spec.providerID after 4m54s (InfrastructureReady False (InstanceNotReady: server is BUILD)); launch in progress: timed 4m59s since the Launched condition's last transition (2026-11-30T10:00:00Z), 1s left of the 5m launch timeout"
    );
    let (cause, severity, _) = at("2026-11-30T10:05:01Z");
    assert_eq!(
        (cause.as_str(), severity),
        ("MachineWithoutProviderID", Severity::Error)
    );
    let (cause, severity, message) = at("2026-11-30T10:15:01Z");
    assert_eq!(
        (cause.as_str(), severity),
        ("MachineWithoutProviderID", Severity::Error)
    );
    assert!(
        message.ends_with("; launch timed out: timed 15m1s since the Launched condition's last transition (2026-11-30T10:00:00Z), 10m1s past the 5m launch timeout: deleted or about to be"),
        "{message}"
    );
}

#[test]
fn unscoped_setup_is_judged_by_the_controller_flags_and_the_node_class() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/unscoped-setup.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let run = |text: &str| {
        let snapshot = snapshot_from_sources(&[Source {
            name: "t".into(),
            text: text.to_string(),
        }])
        .unwrap();
        diagnose::run(
            &snapshot,
            "2026-11-30T10:30:00Z".parse().unwrap(),
            &Config::default(),
            AccessSource::RbacObjects,
        )
        .findings
        .into_iter()
        .filter(|f| f.cause.to_string() == "UnscopedSetup")
        .collect::<Vec<_>>()
    };
    let found = run(&text);
    assert_eq!(found.len(), 2);
    assert_eq!(
        found[0].message,
        "container controller runs the controller without --cluster-name, and namespace capi-ovh holds the MachineDeployments of Clusters capi-ovh, capi-ovh-b: its lists and watches take all of them, so this cluster's pods would scale the other Clusters' member MachineDeployments"
    );
    assert_eq!(
        found[0].remedy,
        "add --cluster-name=<this Cluster: one of capi-ovh, capi-ovh-b> to the container's args: kubectl -n karpenter edit deployment karpenter-capi"
    );
    assert_eq!(
        found[1].message,
        "its member MachineDeployments belong to Clusters capi-ovh, capi-ovh-b: a NodeClaim for this cluster's pods may be launched in another Cluster"
    );
    assert!(
        found[1]
            .remedy
            .starts_with("scope the node class to one Cluster: kubectl patch clusterapinodeclass default --type merge -p '{\"spec\":{\"scalableResourceSelector\":{\"matchLabels\":{\"cluster.x-k8s.io/cluster-name\":\"<this Cluster>\"}}}}'"),
        "{}",
        found[1].remedy
    );

    // The controller scoped with --cluster-name (either form): nothing to report.
    for flag in ["--cluster-name=capi-ovh", "--cluster-name, capi-ovh"] {
        let scoped = text.edit(
            "--namespace=capi-ovh,",
            &format!("--namespace=capi-ovh, {flag},"),
        );
        assert!(run(&scoped).is_empty(), "{flag}");
    }
    // Watching another namespace: only the NodePool spans Clusters.
    let elsewhere = text.edit("--namespace=capi-ovh,", "--namespace=other,");
    let found = run(&elsewhere);
    assert_eq!(
        found.iter().map(|f| f.subject.as_str()).collect::<Vec<_>>(),
        ["NodePool/default"]
    );
    // The node class selects one Cluster's members: only the controller is unscoped.
    let selected = text.edit_n(
        "kind: ClusterAPINodeClass\nmetadata:\n  name: default\nspec: {}\n",
        "kind: ClusterAPINodeClass\nmetadata:\n  name: default\nspec:\n  scalableResourceSelector: {matchLabels: {cluster.x-k8s.io/cluster-name: capi-ovh}}\n",
        1,
    );
    // Each MachineDeployment carries its own Cluster's label (as Cluster API's webhook sets it).
    let mut parts: Vec<String> = selected.split("---\n").map(str::to_string).collect();
    for p in parts
        .iter_mut()
        .filter(|p| p.contains("kind: MachineDeployment\n"))
    {
        let cluster = if p.contains("clusterName: capi-ovh-b\n") {
            "capi-ovh-b"
        } else {
            "capi-ovh"
        };
        *p = p.edit(
            "    node.cluster.x-k8s.io/karpenter-member: \"\"\n",
            &format!(
                "    node.cluster.x-k8s.io/karpenter-member: \"\"\n    cluster.x-k8s.io/cluster-name: {cluster}\n"
            ),
        );
    }
    let found = run(&parts.join("---\n"));
    assert_eq!(
        found.iter().map(|f| f.subject.as_str()).collect::<Vec<_>>(),
        ["Deployment/karpenter/karpenter-capi"]
    );
    // One Cluster per namespace: nothing.
    let apart = text.edit_n(
        "  name: capi-ovh-b-karpenter-c3-8\n  namespace: capi-ovh\n",
        "  name: capi-ovh-b-karpenter-c3-8\n  namespace: capi-ovh-b\n",
        1,
    );
    assert!(run(&apart).is_empty());
}

/// The old shapes come with the exact fix: the command (or the reason none is needed) for each.
#[test]
fn old_shapes_name_their_fix() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/old-shapes.yaml");
    let (report, _) = doctor(&path);
    let remedy = |cause: &str, subject: &str| -> String {
        report
            .findings
            .iter()
            .find(|f| f.cause.to_string() == cause && f.subject == subject)
            .map(|f| f.remedy.clone())
            .unwrap_or_else(|| panic!("no {cause} on {subject}"))
    };
    assert_eq!(
        remedy(
            "InstanceTypeLabelMissing",
            "MachineDeployment/capi-ovh/capi-ovh-karpenter-c3-8"
        ),
        "kubectl annotate machinedeployment -n capi-ovh capi-ovh-karpenter-c3-8 --overwrite capacity.cluster-autoscaler.kubernetes.io/labels=node.kubernetes.io/instance-type=<the cloud's instance type>,example.com/disk=ssd"
    );
    assert_eq!(
        remedy(
            "MemberLabelWithValue",
            "MachineDeployment/capi-ovh/capi-ovh-karpenter-gpu"
        ),
        "kubectl label machinedeployment -n capi-ovh capi-ovh-karpenter-gpu --overwrite node.cluster.x-k8s.io/karpenter-member="
    );
    assert_eq!(
        remedy("ForeignHashVersion", "NodeClaim/default-old01"),
        "nothing to do while `run` runs: it re-stamps the claim with our hash and karpenter-capi-v1; if Karpenter itself also manages NodePool default, run only one of the two"
    );
    assert_eq!(
        remedy("NodeClaimMissingOfferingLabels", "NodeClaim/default-old01"),
        "kubectl label nodeclaim default-old01 --overwrite example.com/disk=ssd (and the same on its Node); claims created by this version carry them"
    );
}
