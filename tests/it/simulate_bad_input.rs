//! Bad input to `simulate`: clear errors naming file, object and field, exit code 2; pods that
//! fit nowhere are listed with per-flavor reasons and exit 0.

use assert_cmd::Command;
use karpenter_capi_testkit::Edit;

const MD: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: small
  namespace: capi
  labels: {node.cluster.x-k8s.io/karpenter-member: ''}
  annotations:
    capacity.cluster-autoscaler.kubernetes.io/cpu: 'CPU'
    capacity.cluster-autoscaler.kubernetes.io/memory: 4Gi
    capacity.cluster-autoscaler.kubernetes.io/price: '0.05'
spec: {clusterName: c, replicas: 0, template: {spec: {clusterName: c}}}
";

fn run(yaml: &str, args: &[&str]) -> (i32, String, String) {
    let dir = tempdir();
    let path = dir.join("input.yaml");
    std::fs::write(&path, yaml).unwrap();
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .arg("simulate")
        .arg("-f")
        .arg(&path)
        .args(args)
        .args(["--color", "never"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr)
        .unwrap()
        .replace(&path.display().to_string(), "input.yaml");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        stderr,
    )
}

fn tempdir() -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("kkc-sim-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[test]
fn malformed_yaml_points_at_file_line_and_column() {
    // The second document starts on line 13; the bad value is on line 14, counted from the start
    // of the file, not of the document.
    let (code, _, err) = run(
        &format!(
            "{}---\nkind: Pod\nmetadata: {{name: [oops\n",
            MD.edit("CPU", "2")
        ),
        &[],
    );
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error: input.yaml:14:18: not valid YAML (document 2): unclosed bracket '['"
        ),
        "{err}"
    );
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n";

/// Runs `simulate -o json` over `files` (written into a fresh directory) plus `args`.
fn run_files(files: &[(&str, &str)], args: &[&str]) -> (i32, String, String, std::path::PathBuf) {
    let dir = tempdir();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .current_dir(&dir)
        .arg("simulate")
        .args(args)
        .args(["--strategy", "cost", "-o", "json"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        dir,
    )
}

fn pods_placed(stdout: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v["strategies"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["pods"].as_array().unwrap().len())
        .sum()
}

#[test]
fn the_same_object_given_twice_is_used_once_with_a_note() {
    let md = MD.edit("CPU", "2");
    let (code, out, err, _) = run_files(
        &[("md.yaml", &md), ("pod.yaml", POD)],
        &["-f", "md.yaml", "-f", "pod.yaml", "-f", "pod.yaml"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(pods_placed(&out), 1, "one pod, not two");
    assert!(
        err.starts_with("note: Pod default/p is given twice (pod.yaml#1, pod.yaml#1); used once\n"),
        "{err}"
    );
    // A directory and a file in it overlap the same way.
    let (code, out, err, _) = run_files(
        &[("dir/md.yaml", &md), ("dir/pod.yaml", POD)],
        &["-f", "dir", "-f", "dir/pod.yaml"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(pods_placed(&out), 1);
    assert!(
        err.starts_with(
            "note: Pod default/p is given twice (dir/pod.yaml#1, dir/pod.yaml#1); used once\n"
        ),
        "{err}"
    );
}

#[test]
fn stdin_and_the_same_file_are_used_once_with_a_note() {
    let dir = tempdir();
    std::fs::write(dir.join("md.yaml"), MD.edit("CPU", "2")).unwrap();
    std::fs::write(dir.join("pod.yaml"), POD).unwrap();
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .current_dir(&dir)
        .args(["simulate", "-f", "md.yaml", "-f", "-", "-f", "pod.yaml"])
        .args(["--strategy", "cost", "-o", "json"])
        .write_stdin(POD)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(pods_placed(&stdout), 1, "one pod, not two");
    assert!(
        err.starts_with("note: Pod default/p is given twice (<stdin>#1, pod.yaml#1); used once\n"),
        "{err}"
    );
    assert_eq!(err.matches("given twice").count(), 1, "{err}");
}

#[test]
fn a_machine_deployment_dumped_in_two_versions_is_one_flavor() {
    let md = MD.edit("CPU", "2");
    let old = md.edit("cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1");
    let (code, out, err, _) = run_files(
        &[
            ("v1beta1.yaml", &old),
            ("v1beta2.yaml", &md),
            ("pod.yaml", POD),
        ],
        &["-f", "v1beta1.yaml", "-f", "v1beta2.yaml", "-f", "pod.yaml"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["strategies"][0]["nodes"].as_array().unwrap().len(), 1);
    assert!(
        err.contains("note: MachineDeployment capi/small is given as cluster.x-k8s.io/v1beta1 (v1beta1.yaml#1) and as cluster.x-k8s.io/v1beta2 (v1beta2.yaml#1): one object served in two versions; used once, as cluster.x-k8s.io/v1beta2"),
        "{err}"
    );
}

#[test]
fn two_different_objects_with_one_name_are_an_error_naming_both_files() {
    let md = MD.edit("CPU", "2");
    let other = MD.edit("CPU", "4");
    let (code, _, err, _) = run_files(
        &[("a.yaml", &md), ("b.yaml", &other)],
        &["-f", "a.yaml", "-f", "b.yaml"],
    );
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: b.yaml#1: MachineDeployment capi/small: metadata.name: a.yaml#1 has the same API group, kind, namespace and name but different contents (metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]); give each object once (remove one of the two)\n"
    );
}

#[test]
fn directories_are_read_recursively_only_with_r() {
    let md = MD.edit("CPU", "2");
    let files = [("dump/md.yaml", md.as_str()), ("dump/pods/pod.yaml", POD)];
    let (code, out, err, _) = run_files(&files, &["-f", "dump"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        pods_placed(&out),
        0,
        "without -R the subdirectory is not read"
    );
    let (code, out, err, _) = run_files(&files, &["-R", "-f", "dump"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(pods_placed(&out), 1);
    let (code, _, err, _) = run_files(&[("only/sub/pod.yaml", POD)], &["-f", "only"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: only: directory has no .yaml, .yml or .json files (pass -R to read its subdirectories)\n"
    );
}

#[test]
fn invalid_quantity_in_a_capacity_annotation() {
    let (code, _, err) = run(MD.edit("CPU", "4x").as_str(), &[]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "error: input.yaml#1: MachineDeployment capi/small: metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]: \
         invalid quantity \"4x\": unknown suffix (expected e.g. 500m, 4, 8Gi, 8G)"
    );
}

#[test]
fn member_without_cpu_annotation() {
    let yaml = MD.edit(
        "    capacity.cluster-autoscaler.kubernetes.io/cpu: 'CPU'\n",
        "",
    );
    let (code, _, err) = run(&yaml, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("MachineDeployment capi/small: metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]: missing"),
        "{err}"
    );
}

#[test]
fn invalid_quantity_in_a_pod() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, resources: {requests: {memory: 1Qi}}}]\n";
    let (code, _, err) = run(&format!("{}---\n{pod}", MD.edit("CPU", "2")), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("input.yaml#2: Pod default/p: spec.containers[0].resources.requests[memory]: invalid quantity \"1Qi\""), "{err}");
}

#[test]
fn no_flavors_at_all() {
    let (code, _, err) = run(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c}]}\n",
        &[],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("no flavors: 0 MachineDeployment(s) read, none is a member"),
        "{err}"
    );
}

#[test]
fn unknown_kind_without_api_version() {
    let (code, _, err) = run("kind: Widget\nmetadata: {name: w}\n", &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("input.yaml#1: Widget w: apiVersion: missing on a Widget"),
        "{err}"
    );
}

#[test]
fn missing_file() {
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .args(["simulate", "-f", "/nonexistent/x.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().trim(),
        "error: /nonexistent/x.yaml: no such file or directory"
    );
}

#[test]
fn pods_that_fit_nowhere_are_listed_with_reasons() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: huge, namespace: default}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: '3', memory: 1Gi}}}]\n";
    let (code, out, _) = run(
        &format!("{}---\n{pod}", MD.edit("CPU", "2")),
        &["--strategy", "cost"],
    );
    assert_eq!(code, 0);
    assert!(out.contains("Unschedulable with cost:\n  default/huge\n    - small: needs 3 cpu, small has 2 allocatable\n"), "{out}");
}

fn timeline(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .args(["simulate", "--timeline", "--color", "never"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn timeline_replays_the_first_run_by_default_and_draws_the_chart() {
    let dir = tempdir();
    let chart = dir.join("timeline.svg");
    let (code, out, err) = timeline(&["--chart", chart.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("trace seed-first-run: replayed 40m;"),
        "{out}"
    );
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row in {out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // STRATEGY CLAIM SCALE LAUNCHED REGISTERED INITIALIZED RUNNING TO ZERO: both scale at
    // once (the provider scales inside Create); the server's minute is the report's T+66s.
    assert_eq!(
        row("cost")[1..8],
        ["1s", "1s", "64s", "75s", "141s", "152s", "180s"]
    );
    assert_eq!(
        row("karpenter-capi")[1..8],
        ["1s", "1s", "64s", "73s", "140s", "152s", "180s"]
    );
    assert_eq!(
        row("report")[2..9],
        ["2s", "-", "66s", "74s", "141s", "153s", "~180s"]
    );
    assert!(!out.contains("cost requests the scale-up"), "{out}");
    assert!(err.contains("chart written to"), "{err}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

#[test]
fn timeline_json_has_every_strategy_and_bad_traces_exit_2() {
    let (code, out, err) = timeline(&["--trace", "seed-benchmark", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cost", "karpenter-capi", "least-waste"]);
    assert_eq!(v["strategies"][2]["maxNodes"], 3);
    assert_eq!(v["strategies"][0]["timeToRunning"]["pods"], 8);

    let dir = tempdir();
    let path = dir.join("day.trace.yaml");
    std::fs::write(&path, "workloads:\n- {name: web, cpu: 1}\n").unwrap();
    let (code, out, err) = timeline(&["--trace", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("day.trace.yaml") && err.contains("workloads[0].template"),
        "{err}"
    );
    let (code, _, err) = timeline(&["--trace", "no-such-trace"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no-such-trace") && err.contains("seed-first-run"),
        "{err}"
    );
}
