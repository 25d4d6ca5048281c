//! `init` through the real binary: the seed's OVH setup pinned in snapshots and the `--output-dir`
//! layout (bad inputs are in `init_rejects`).

use crate::init_rejects::rejects;
use crate::support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub(crate) fn bin() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"));
    // No kubeconfig of the machine running the tests may leak in.
    cmd.env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("NO_COLOR");
    cmd
}

pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("init-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn ovh_setup_v1beta2() {
    let out = bin().args(support::ovh_args()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("ovh_v1beta2", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn ovh_setup_v1beta1() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--capi-version", "v1beta1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("ovh_v1beta1", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn ovh_setup_with_a_separate_management_cluster() {
    let dir = scratch("kubeconfig");
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("controller.kubeconfig");
    // A TokenRequest token (its `exp` is 2026-12-30T10:00:00Z): the Secret records the expiry.
    let claims = karpenter_capi::bundle::kubeconfig::base64(br#"{"exp":1798624800}"#);
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: [{{name: x, context: {{cluster: m, user: u}}}}]\nusers: [{{name: u, user: {{token: eyJhbGciOiJSUzI1NiJ9.{}.c2ln}}}}]\n",
            claims.trim_end_matches('=')
        ),
    )
    .unwrap();
    let out = bin()
        .args(support::ovh_args())
        .arg("--controller-kubeconfig")
        .arg(&kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let workload = &text[text.find("kind: Namespace").unwrap()..];
    assert!(
        workload.contains(
            "  annotations:\n    karpenter-capi.sh/token-expires: \"2026-12-30T10:00:00Z\"\n"
        ),
        "{workload}"
    );
    insta::assert_snapshot!("ovh_workload_separate_management", workload);
    // Written to files, the Secret holding the credential is its owner's only; the rest is not.
    let out_dir = dir.join("out");
    let out = bin()
        .args(support::ovh_args())
        .arg("--controller-kubeconfig")
        .arg(&kubeconfig)
        .arg("--output-dir")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str| {
            std::fs::metadata(out_dir.join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(
            mode("workload/07-secret-karpenter-capi-management-kubeconfig.yaml"),
            0o600,
            "credentials are the owner's only"
        );
        assert_ne!(mode("workload/08-deployment-karpenter-capi.yaml"), 0o600);
    }
}

#[test]
fn output_dir_layout() {
    let dir = scratch("layout");
    let out = bin()
        .args(support::ovh_args())
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = |sub: &str| {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        list("management"),
        [
            "01-serviceaccount-capi-ovh-karpenter-capi.yaml",
            "02-role-capi-ovh-karpenter-capi.yaml",
            "03-rolebinding-capi-ovh-karpenter-capi.yaml",
            "04-kubeadmconfigtemplate-capi-ovh-karpenter.yaml",
            "05-openstackmachinetemplate-capi-ovh-karpenter-c3-4.yaml",
            "06-machinedeployment-capi-ovh-karpenter-c3-4.yaml",
            "07-openstackmachinetemplate-capi-ovh-karpenter-c3-8.yaml",
            "08-machinedeployment-capi-ovh-karpenter-c3-8.yaml",
            "09-openstackmachinetemplate-capi-ovh-karpenter-c3-16.yaml",
            "10-machinedeployment-capi-ovh-karpenter-c3-16.yaml",
            "kustomization.yaml",
        ]
    );
    assert_eq!(
        list("workload"),
        [
            "01-namespace-karpenter-capi.yaml",
            "02-serviceaccount-karpenter-capi.yaml",
            "03-clusterrole-karpenter-capi.yaml",
            "04-clusterrolebinding-karpenter-capi.yaml",
            "05-role-karpenter-capi-leader-election.yaml",
            "06-rolebinding-karpenter-capi-leader-election.yaml",
            "07-deployment-karpenter-capi.yaml",
            "08-poddisruptionbudget-karpenter-capi.yaml",
            "09-service-karpenter-capi-metrics.yaml",
            "10-clusterapinodeclass-default.yaml",
            "11-nodepool-default.yaml",
            "kustomization.yaml",
            "monitoring",
        ]
    );
    assert_eq!(
        list("workload/monitoring"),
        [
            "01-servicemonitor-karpenter-capi-metrics.yaml",
            "kustomization.yaml"
        ]
    );
    assert_eq!(list("crds"), ["kustomization.yaml"]);
    let md = std::fs::read_to_string(
        dir.join("management/06-machinedeployment-capi-ovh-karpenter-c3-4.yaml"),
    )
    .unwrap();
    assert!(md.starts_with("# target: management cluster (where Cluster API runs), namespace capi-ovh\napiVersion: \"cluster.x-k8s.io/v1beta2\"\n"), "{md}");
    // Concatenating the files gives the stdout output (minus the separators).
    let stdout =
        String::from_utf8(bin().args(support::ovh_args()).output().unwrap().stdout).unwrap();
    assert!(stdout.contains(&format!("---\n{md}")));
    // A second run replaces the bundle in place and leaves no temporary directory behind.
    let again = bin()
        .args(support::ovh_args())
        .arg("--self-hosted")
        .arg("--output-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).starts_with(&format!(
            "wrote {}: 0 created, 0 replaced, 26 unchanged\n",
            dir.display()
        )),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let mut top: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        [".karpenter-capi-init", "crds", "management", "workload"]
    );
}

#[test]
fn json_and_yaml_output_is_one_list() {
    let out = bin()
        .args(support::ovh_args())
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 10 + 11, "both bundles");
    assert_eq!(items[0]["kind"], "ServiceAccount");
    assert_eq!(items[9]["kind"], "MachineDeployment");
    assert_eq!(items[17]["kind"], "PodDisruptionBudget");
    assert_eq!(items[18]["kind"], "Service");
    assert_eq!(items[20]["kind"], "NodePool");
    // The optional ServiceMonitor is written by --output-dir only, never printed.
    assert!(items.iter().all(|i| i["kind"] != "ServiceMonitor"));
    let out = bin()
        .args(support::ovh_args())
        .args(["-o", "yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let list: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"].as_array().unwrap().len(), 21);
}

/// The names of the files under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn files_around_output_dir_survive() {
    let dir = scratch("survive");
    std::fs::create_dir_all(dir.join("management")).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "resources: [management, workload]\n",
    )
    .unwrap();
    std::fs::write(dir.join("management/NOTES.md"), "my notes\n").unwrap();
    let init = |extra: &[&str]| {
        bin()
            .args(support::ovh_args())
            .arg("--output-dir")
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
    };
    // Files init did not write: refused without --force, nothing written.
    let out = init(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: --output-dir {}: holds files init did not write: kustomization.yaml, management/NOTES.md; pass --force to write the bundle beside them (they are left untouched, except one with the name of a generated file), or choose another directory\n",
            dir.display()
        )
    );
    assert_eq!(tree(&dir), ["kustomization.yaml", "management/NOTES.md"]);
    // With --force: written beside them, theirs untouched.
    let out = init(&["--force"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with(&format!(
            "wrote {}: 26 created, 0 replaced, 0 unchanged\n",
            dir.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "left untouched (not written by init): kustomization.yaml, management/NOTES.md"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("management/NOTES.md")).unwrap(),
        "my notes\n"
    );
    assert_eq!(tree(&dir).len(), 2 + 26 + 1, "theirs, ours and the record");
    // A run without the c3-16 flavor: its files are stale, listed, kept; --prune removes them.
    let two: Vec<String> = support::ovh_args()
        .into_iter()
        .filter(|a| !a.starts_with("c3-16"))
        .collect();
    let mut args = two.clone();
    args.pop(); // the --flavor of c3-16
    let out = bin()
        .args(&args)
        .arg("--output-dir")
        .arg(&dir)
        .arg("--force")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("stale (written by an earlier init, no longer generated; --prune removes them): management/09-openstackmachinetemplate-capi-ovh-karpenter-c3-16.yaml, management/10-machinedeployment-capi-ovh-karpenter-c3-16.yaml"), "{err}");
    assert!(
        dir.join("management/10-machinedeployment-capi-ovh-karpenter-c3-16.yaml")
            .exists()
    );
    let out = bin()
        .args(&args)
        .arg("--output-dir")
        .arg(&dir)
        .args(["--force", "--prune"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("removed stale management/10-machinedeployment-capi-ovh-karpenter-c3-16.yaml"),
        "{err}"
    );
    assert!(
        !dir.join("management/10-machinedeployment-capi-ovh-karpenter-c3-16.yaml")
            .exists()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap(),
        "resources: [management, workload]\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("management/NOTES.md")).unwrap(),
        "my notes\n"
    );
}

#[test]
fn templates_dir_overrides_built_in_templates() {
    let dir = scratch("templates");
    std::fs::create_dir_all(dir.join("workload")).unwrap();
    std::fs::write(
        dir.join("workload/nodeclass.yaml.j2"),
        "apiVersion: karpenter.cluster.x-k8s.io/v1alpha1\nkind: ClusterAPINodeClass\nmetadata:\n  name: {{ (cluster.name ~ \"-custom\") | q }}\nspec: {}\n",
    )
    .unwrap();
    let out = bin()
        .args(support::ovh_args())
        .arg("--templates")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kind: ClusterAPINodeClass\nmetadata:\n  name: \"capi-ovh-custom\"\n"),
        "{text}"
    );
    // The other templates are still the built-in ones.
    assert!(text.contains("kind: NodePool\n"));
    rejects(
        "notemplates",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--templates",
            "/nonexistent/templates",
        ],
        "--templates /nonexistent/templates: not a directory\n",
    );
    std::fs::write(dir.join("workload/nodepool.yaml.j2"), "{% if %}").unwrap();
    rejects(
        "badtemplate",
        &[
            "--flavor",
            "c3-4:cpu=2,memory=4G,price=0.05",
            "--templates",
            dir.to_str().unwrap(),
        ],
        "template workload/nodepool.yaml.j2: syntax error",
    );
}

#[test]
fn separate_management_without_a_kubeconfig_mounts_the_secret_and_says_how_to_create_it() {
    let out = bin()
        .args(support::ovh_args())
        .args(["--management-kubeconfig", "/nonexistent/mgmt.kubeconfig"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "        - --management-kubeconfig=/etc/karpenter-capi/management/kubeconfig\n"
        )
    );
    assert!(text.contains("          secretName: \"karpenter-capi-management-kubeconfig\"\n"));
    // The admin kubeconfig given to reach the management cluster is never copied into the bundle.
    assert!(!text.contains("kind: Secret\ntype: Opaque"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "note: the controller reads the management cluster's kubeconfig from Secret karpenter-capi/karpenter-capi-management-kubeconfig; after applying the management bundle, create it with:\n  kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret --management-kubeconfig MGMT.kubeconfig | kubectl apply -f -\n"
    );
}

/// Runs `args` under a real terminal (util-linux `script` allocates the pseudo-terminal, so no
/// pty crate is needed), answering each prompt that contains `expect` with `answer`; returns
/// everything the terminal showed.
pub(crate) fn in_terminal(args: &[String], dialogue: &[(&str, &str)]) -> String {
    use std::io::{Read, Write};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let bin = assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi");
    let quoted: Vec<String> = std::iter::once(bin.display().to_string())
        .chain(args.iter().cloned())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the prompt test needs util-linux `script` on PATH to get a real terminal");
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut stdin = child.stdin.take().unwrap();
    let mut from = 0;
    for (expect, answer) in dialogue {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !seen[from..].contains(expect) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!("no prompt {expect:?}; the terminal showed:\n{seen}"),
            }
        }
        from = seen.len();
        stdin.write_all(format!("{answer}\r").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("init did not finish; the terminal showed:\n{seen}");
            }
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{seen}");
    seen
}

#[test]
fn a_bad_answer_is_asked_again_and_earlier_answers_are_kept() {
    // The OVH flags without --kubernetes-version and --image, and without --yes: init asks.
    let mut args: Vec<String> = Vec::new();
    let base = support::ovh_args();
    let mut i = 0;
    while i < base.len() {
        match base[i].as_str() {
            "--kubernetes-version" | "--image" => i += 2,
            "--yes" => i += 1,
            _ => {
                args.push(base[i].clone());
                i += 1;
            }
        }
    }
    args.extend(["-o".to_string(), "json".to_string()]);
    let shown = in_terminal(
        &args,
        &[
            ("(--management-kubeconfig)", "n"),
            ("(--kubernetes-version)", "1.36"),
            ("is not a version like v1.36.1", "v1.36.1"),
            ("(--image)", "not an image"),
            (
                "is not a container image reference",
                "ghcr.io/me/karpenter-capi:v1",
            ),
        ],
    );
    // Asked twice each, once per bad answer, and the first answer survived the second question.
    assert!(shown.matches("(--image)").count() >= 2, "{shown}");
    assert!(
        shown.contains("\"image\": \"ghcr.io/me/karpenter-capi:v1\""),
        "{shown}"
    );
    assert!(shown.contains("\"version\": \"v1.36.1\""), "{shown}");
}

#[test]
fn the_controller_memory_is_sized_from_the_expected_cluster() {
    let memory = |extra: &[&str]| {
        let out = bin()
            .args(support::ovh_args())
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let deployment = &text[text.find("kind: Deployment").unwrap()..];
        let resources = &deployment[deployment.find("        resources:\n").unwrap()..];
        resources.lines().take(6).collect::<Vec<_>>().join("\n")
    };
    let sized = |request: &str, limit: &str| {
        format!(
            "        resources:\n          requests:\n            cpu: 100m\n            memory: {request}\n          limits:\n            memory: {limit}"
        )
    };
    // The default (5,000 pods on 500 nodes) keeps the previous values.
    assert_eq!(memory(&[]), sized("128Mi", "512Mi"));
    assert_eq!(
        memory(&["--expected-pods", "20000"]),
        sized("384Mi", "768Mi")
    );
    assert_eq!(
        memory(&["--expected-pods", "50000", "--expected-nodes", "5000"]),
        sized("832Mi", "1664Mi")
    );
    let out = bin()
        .args(support::ovh_args())
        .args(["--expected-pods", "-3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
