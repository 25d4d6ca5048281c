//! The plugin as kubectl sees it: the built binaries on a PATH of their own next to the real
//! `kubectl`, which finds the plugin (`kubectl plugin list`, `kubectl karpenter-capi --help`) and
//! asks `kubectl_complete-karpenter_capi` for completions (`kubectl __complete karpenter-capi ...`,
//! what kubectl's shell scripts run on TAB). Object names come from a fake API server.
//!
//! Needs `kubectl` 1.26 or later on PATH; set KARPENTER_CAPI_SKIP_KUBECTL_TESTS=1 to skip.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PLUGIN: &str = "kubectl-karpenter_capi";
const COMPLETER: &str = "kubectl_complete-karpenter_capi";

/// A directory that is the whole PATH: kubectl and our two executables, nothing else, so other
/// plugins installed on this machine cannot make kubectl print warnings.
struct PluginPath {
    dir: PathBuf,
}

impl PluginPath {
    fn new(name: &str) -> Option<PluginPath> {
        let Some(kubectl) = find_on_path("kubectl") else {
            assert!(
                std::env::var_os("KARPENTER_CAPI_SKIP_KUBECTL_TESTS").is_some(),
                "these tests run the real kubectl, which is not on PATH; install kubectl 1.26+ \
                 or set KARPENTER_CAPI_SKIP_KUBECTL_TESTS=1"
            );
            return None;
        };
        let dir =
            std::env::temp_dir().join(format!("karpenter-capi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::os::unix::fs::symlink(kubectl, dir.join("bin/kubectl")).unwrap();
        for exe in [PLUGIN, COMPLETER] {
            std::os::unix::fs::symlink(
                assert_cmd::cargo::cargo_bin(exe),
                dir.join("bin").join(exe),
            )
            .unwrap();
        }
        Some(PluginPath { dir })
    }

    /// A command on this PATH only, with an empty home and the given kubeconfig.
    fn command(&self, program: &str, kubeconfig: &Path) -> Command {
        let mut cmd = Command::new(self.dir.join("bin").join(program));
        cmd.env_clear()
            .env("PATH", self.dir.join("bin"))
            .env("HOME", self.dir.join("home"))
            .env("KUBECONFIG", kubeconfig)
            .current_dir(&self.dir);
        cmd
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        self.command("kubectl", &self.dir.join("no-kubeconfig"))
            .args(args)
            .output()
            .unwrap()
    }

    /// What kubectl's shell completion gets for `kubectl karpenter-capi <words>`.
    fn complete(&self, kubeconfig: &Path, words: &[&str]) -> String {
        let out = self
            .command("kubectl", kubeconfig)
            .arg("__complete")
            .arg("karpenter-capi")
            .args(words)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl __complete failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for PluginPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn kubectl_runs_the_plugin_help() {
    let Some(path) = PluginPath::new("help") else {
        return;
    };
    let out = path.kubectl(&["karpenter-capi", "--help"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("Usage: kubectl karpenter-capi [OPTIONS] <COMMAND>"),
        "{stdout}"
    );
    assert!(stdout.contains("Troubleshooting Commands:"), "{stdout}");
}

#[test]
fn kubectl_plugin_list_finds_it_without_warnings() {
    let Some(path) = PluginPath::new("list") else {
        return;
    };
    let out = path.kubectl(&["plugin", "list"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let expected = path.dir.join("bin").join(PLUGIN);
    assert!(
        stdout.lines().any(|l| Path::new(l.trim()) == expected),
        "{PLUGIN} not listed:\n{stdout}"
    );
    let all = format!("{stdout}{stderr}").to_lowercase();
    assert!(
        !all.contains("warning"),
        "kubectl warned:\n{stdout}{stderr}"
    );
    // The completion helper is not a plugin (kubectl_complete-, not kubectl-).
    assert!(!stdout.contains(COMPLETER), "{stdout}");
}

#[test]
fn kubectl_completes_subcommands_with_descriptions() {
    let Some(path) = PluginPath::new("subcommands") else {
        return;
    };
    let none = path.dir.join("no-kubeconfig");
    assert_eq!(
        path.complete(&none, &[""]),
        "init\tGenerate the manifests a Cluster API cluster needs for Karpenter-style autoscaling\n\
         doctor\tCheck a setup and every stuck NodeClaim; name the cause and the fix\n\
         explain\tExplain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck\n\
         simulate\tShow which flavors each strategy would provision for the pending pods, and the cost\n\
         status\tShow the nodes per NodePool, the claims in flight, why pods are pending and the cost\n\
         run\tRun the controller loop in the foreground (one-shot with --once)\n\
         uninstall\tRemove the controller, its NodePools, NodeClaims and CRDs from the workload cluster\n\
         completion\tPrint a shell completion script\n\
         version\tPrint the version and the git commit it was built from\n\
         help\tPrint this message or the help of the given subcommand(s)\n\
         :4\n"
    );
    assert_eq!(
        path.complete(&none, &["ex"]),
        "explain\tExplain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck\n:4\n"
    );
}

#[test]
fn kubectl_completes_flags_and_their_values() {
    let Some(path) = PluginPath::new("flags") else {
        return;
    };
    let none = path.dir.join("no-kubeconfig");
    assert_eq!(
        path.complete(&none, &["simulate", "--st"]),
        "--strategy\tRun only this strategy (default: all three, compared)\n:4\n"
    );
    assert_eq!(
        path.complete(&none, &["simulate", "--strategy", ""]),
        "cost\tOurs: the cheapest set of nodes per hour for all placeable pods\n\
         karpenter-capi\tThe upstream Karpenter Cluster API provider: price 0 everywhere, first name wins\n\
         least-waste\tCluster Autoscaler's default least-waste expander\n:4\n"
    );
    assert_eq!(
        path.complete(&none, &["doctor", "-o", "y"]),
        "yaml\tYAML for scripts\n:4\n"
    );
    assert_eq!(
        path.complete(&none, &["--output=j"]),
        "json\tJSON for scripts\njsonpath=\tA JSONPath template over the JSON (status)\n:4\n"
    );
    assert_eq!(path.complete(&none, &["completion", "z"]), "zsh\n:4\n");
    // -f: manifests by extension, as kubectl's own -f.
    assert_eq!(
        path.complete(&none, &["doctor", "-f", ""]),
        "yaml\nyml\njson\n:8\n"
    );
}

#[test]
fn the_helper_speaks_the_protocol_when_run_as_kubectl_runs_it() {
    let Some(path) = PluginPath::new("direct") else {
        return;
    };
    let none = path.dir.join("no-kubeconfig");
    // kubectl passes the words after the plugin name, the one being completed last.
    let out = path
        .command(COMPLETER, &none)
        .args(["explain", "--context", "x", "n"])
        .output()
        .unwrap();
    assert_eq!(
        text(&out),
        (
            "nodeclaim\tA NodeClaim: its timeline, Machine, Node and blocking cause\n:4\n".into(),
            String::new()
        )
    );
    // The wrapper-script form, `kubectl karpenter-capi __complete "$@"`, answers the same.
    let out = path
        .command(PLUGIN, &none)
        .args(["__complete", "explain", "--context", "x", "n"])
        .output()
        .unwrap();
    assert_eq!(
        text(&out),
        (
            "nodeclaim\tA NodeClaim: its timeline, Machine, Node and blocking cause\n:4\n".into(),
            String::new()
        )
    );
}

#[test]
fn the_plugin_linked_as_the_helper_completes_too() {
    // What a krew user can do instead of installing the helper: link the plugin under its name.
    let Some(path) = PluginPath::new("linked") else {
        return;
    };
    let helper = path.dir.join("bin").join(COMPLETER);
    std::fs::remove_file(&helper).unwrap();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin(PLUGIN), &helper).unwrap();
    let none = path.dir.join("no-kubeconfig");
    assert_eq!(
        path.complete(&none, &["version", "-o", "ya"]),
        "yaml\tYAML for scripts\n:4\n"
    );
}

#[test]
fn the_helper_without_the_plugin_offers_nothing_quietly() {
    let Some(path) = PluginPath::new("alone") else {
        return;
    };
    // A copy, so the plugin is neither next to it nor on PATH.
    let alone = path.dir.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(
        assert_cmd::cargo::cargo_bin(COMPLETER),
        alone.join(COMPLETER),
    )
    .unwrap();
    let out = Command::new(alone.join(COMPLETER))
        .env_clear()
        .env("PATH", &alone)
        .args(["simulate", ""])
        .output()
        .unwrap();
    assert_eq!(text(&out), (":4\n".to_string(), String::new()));
}

/// A fake API server: answers list requests from a table of path prefixes, records the paths.
struct FakeApi {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeApi {
    /// `routes`: (path without query, JSON body); anything else is a 404. With `hang`, it accepts
    /// connections and never answers.
    fn start(routes: Vec<(&'static str, String)>, hang: bool) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                if hang {
                    held.push(stream);
                    continue;
                }
                let routes = routes.clone();
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &routes, &seen));
            }
        });
        FakeApi { port, requests }
    }

    fn kubeconfig(&self, path: &PluginPath) -> PathBuf {
        path.write(
            "kubeconfig",
            &format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
                 clusters:\n- name: fake\n  cluster: {{server: \"http://127.0.0.1:{}\"}}\n\
                 users:\n- name: fake\n  user: {{token: fake}}\n\
                 contexts:\n- name: fake\n  context: {{cluster: fake, user: fake}}\n",
                self.port
            ),
        )
    }
}

fn serve(stream: TcpStream, routes: &[(&str, String)], seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok_and(|n| n > 0) && header != "\r\n" {
            header.clear();
        }
        let target = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        seen.lock().unwrap().push(target.clone());
        let path = target.split('?').next().unwrap_or_default();
        let (status, body) = match routes.iter().find(|(route, _)| *route == path) {
            Some((_, body)) => ("200 OK", body.clone()),
            None => (
                "404 Not Found",
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}"
                    .to_string(),
            ),
        };
        let mut stream = reader.get_ref();
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    }
}

/// A metadata-only list, as the API server answers `list_metadata`, of (namespace, name).
fn list(objects: &[(&str, &str)]) -> String {
    let items: Vec<String> = objects
        .iter()
        .map(|(ns, name)| {
            let ns = if ns.is_empty() { String::new() } else { format!(",\"namespace\":\"{ns}\"") };
            format!("{{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"PartialObjectMetadata\",\"metadata\":{{\"name\":\"{name}\"{ns}}}}}")
        })
        .collect();
    format!(
        "{{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"PartialObjectMetadataList\",\"metadata\":{{\"resourceVersion\":\"1\"}},\"items\":[{}]}}",
        items.join(",")
    )
}

#[test]
fn kubectl_completes_object_names_from_the_cluster() {
    let Some(path) = PluginPath::new("objects") else {
        return;
    };
    let infrastructure = "infrastructure.cluster.x-k8s.io";
    let api = FakeApi::start(
        vec![
            (
                "/apis/karpenter.sh/v1/nodeclaims",
                list(&[("", "default-x2b9k"), ("", "default-mrnnj"), ("", "gpu-7q2lm")]),
            ),
            ("/api/v1/pods", list(&[("default", "big-0"), ("team-a", "web-5d9f")])),
            ("/api/v1/namespaces/team-a/pods", list(&[("team-a", "web-5d9f")])),
            ("/api/v1/namespaces", list(&[("", "capi-ovh"), ("", "default")])),
            ("/apis/cluster.x-k8s.io/v1beta2/clusters", list(&[("capi-ovh", "prod")])),
            (
                "/apis",
                format!(
                    "{{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{{\"name\":\"{infrastructure}\",\
                     \"versions\":[{{\"groupVersion\":\"{infrastructure}/v1beta1\",\"version\":\"v1beta1\"}}],\
                     \"preferredVersion\":{{\"groupVersion\":\"{infrastructure}/v1beta1\",\"version\":\"v1beta1\"}}}}]}}"
                ),
            ),
            (
                "/apis/infrastructure.cluster.x-k8s.io/v1beta1",
                format!(
                    "{{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"{infrastructure}/v1beta1\",\
                     \"resources\":[{}]}}",
                    [
                        ("openstackmachinetemplates", "OpenStackMachineTemplate"),
                        ("openstackclusters", "OpenStackCluster"),
                        ("dockermachinetemplates", "DockerMachineTemplate"),
                    ]
                    .map(|(plural, kind)| format!(
                        "{{\"name\":\"{plural}\",\"singularName\":\"\",\"namespaced\":true,\"kind\":\"{kind}\",\
                         \"verbs\":[\"get\",\"list\"]}}"
                    ))
                    .join(",")
                ),
            ),
        ],
        false,
    );
    let kubeconfig = api.kubeconfig(&path);
    assert_eq!(
        path.complete(&kubeconfig, &["explain", "nodeclaim", "def"]),
        "default-mrnnj\ndefault-x2b9k\n:4\n"
    );
    assert_eq!(
        path.complete(&kubeconfig, &["explain", "pod", ""]),
        "default/big-0\nteam-a/web-5d9f\n:4\n"
    );
    assert_eq!(
        path.complete(&kubeconfig, &["explain", "-n", "team-a", "pod", ""]),
        "web-5d9f\n:4\n"
    );
    // Cluster API objects and kinds: the management cluster, here the same (self-hosted).
    assert_eq!(
        path.complete(&kubeconfig, &["init", "-n", ""]),
        "capi-ovh\ndefault\n:4\n"
    );
    assert_eq!(
        path.complete(&kubeconfig, &["init", "--cluster-name", "p"]),
        "prod\tnamespace capi-ovh\n:4\n"
    );
    assert_eq!(
        path.complete(&kubeconfig, &["init", "--infrastructure-kind", ""]),
        "DockerMachineTemplate\nOpenStackMachineTemplate\n:4\n"
    );
    let requests = api.requests.lock().unwrap().clone();
    assert!(
        requests.iter().any(|r| r.starts_with("/api/v1/pods?")
            && r.contains("fieldSelector=status.phase%3DPending")),
        "pending pods are asked for with a field selector: {requests:?}"
    );
}

#[test]
fn kubectl_completes_contexts_from_the_kubeconfig() {
    let Some(path) = PluginPath::new("contexts") else {
        return;
    };
    let api = FakeApi::start(Vec::new(), false);
    let kubeconfig = api.kubeconfig(&path);
    assert_eq!(
        path.complete(&kubeconfig, &["--context", ""]),
        "fake\tcluster fake\n:4\n"
    );
}

#[test]
fn an_unreachable_cluster_gives_no_names_quickly_and_silently() {
    let Some(path) = PluginPath::new("unreachable") else {
        return;
    };
    let api = FakeApi::start(Vec::new(), true);
    let kubeconfig = api.kubeconfig(&path);
    let start = Instant::now();
    let out = path
        .command(COMPLETER, &kubeconfig)
        .args(["explain", "nodeclaim", ""])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    assert_eq!(text(&out), (":4\n".to_string(), String::new()));
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert!(
        elapsed >= Duration::from_secs(2),
        "the server never answers, so the 2 s timeout must have fired: {elapsed:?}"
    );

    // No cluster at all: no kubeconfig file.
    let out = path
        .command(COMPLETER, &path.dir.join("missing"))
        .args(["explain", "pod", ""])
        .output()
        .unwrap();
    assert_eq!(text(&out), (":4\n".to_string(), String::new()));
}
