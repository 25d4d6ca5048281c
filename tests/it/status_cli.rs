//! `status` as a user runs it, on a small OVH cluster dump (`tests/fixtures/status/cluster.yaml`):
//! the table, wide, name and JSON views pinned as snapshots; jsonpath, custom columns,
//! `--no-headers`, `-l` and `--currency`; `-w` stopping on Ctrl-C and on a closed pipe; and the
//! same view live, listed from the in-memory API server.

use std::io::Read;
use std::process::Stdio;

use assert_cmd::Command;

use crate::common::FakeApi;

const NOW: &str = "2026-11-30T10:30:00Z";

fn fixture() -> String {
    format!(
        "{}/tests/fixtures/status/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn status(args: &[&str]) -> (i32, String, String) {
    crate::common::cli::run("status", args)
}

fn dump(extra: &[&str]) -> String {
    let file = fixture();
    let mut args = vec!["-f", &file, "--now", NOW];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = status(&args);
    assert_eq!(code, 0, "{stderr}");
    stdout
}

#[test]
fn status_table_is_pinned() {
    insta::assert_snapshot!("status_table", dump(&["--currency", "EUR"]));
}

#[test]
fn status_wide_is_pinned() {
    insta::assert_snapshot!("status_wide", dump(&["-o", "wide"]));
}

#[test]
fn status_name_is_pinned() {
    insta::assert_snapshot!("status_name", dump(&["-o", "name"]));
}

#[test]
fn status_json_is_pinned() {
    insta::assert_snapshot!("status_json", dump(&["-o", "json", "--currency", "EUR"]));
}

#[test]
fn jsonpath_custom_columns_no_headers_and_selector() {
    assert_eq!(
        dump(&[
            "-o",
            "jsonpath={.cost.currentPerHour} {.cost.strategies[*].pricePerHour}"
        ]),
        "0.39 0.34 0.35 0.48"
    );
    assert_eq!(
        dump(&[
            "-o",
            "custom-columns=NODE:.name,FLAVOR:.instanceType,PRICE:.pricePerHour",
            "-l",
            "karpenter.sh/nodepool",
        ]),
        "NODE            FLAVOR   PRICE\n\
         general-q9m4t   c3-4     0.05\n\
         general-x7k2p   c3-8     0.1\n\
         large-h3v8n     c3-16    0.24\n"
    );
    assert_eq!(
        dump(&[
            "-o",
            "custom-columns=NODE:.name",
            "--no-headers",
            "-l",
            "node.kubernetes.io/instance-type notin (c3-4,c3-8)",
        ]),
        "large-h3v8n\ncapi-ovh-cp-abcde\n"
    );
    let table = dump(&["--no-headers", "-l", "karpenter.sh/nodepool=large"]);
    assert!(!table.contains("NODEPOOL"), "{table}");
    assert!(table.starts_with("general    0       0"), "{table}");
}

#[test]
fn bad_flags_are_usage_errors() {
    let file = fixture();
    let (code, _, stderr) = status(&["-f", &file, "-l", "a in b"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("invalid label selector term \"a in b\""),
        "{stderr}"
    );
    let (code, _, stderr) = status(&["-f", "-", "-w"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot re-read stdin"), "{stderr}");
    let (code, _, stderr) = status(&["-f", &file, "-o", "xml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("allowed formats are"), "{stderr}");
    let out = Command::cargo_bin("kubectl-karpenter_capi")
        .unwrap()
        .args(["doctor", "-f", &file, "-o", "name"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("`doctor` takes -o table, wide, json or yaml"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reads the child's stdout until what it printed so far satisfies `done`.
fn read_until(stdout: &mut impl Read, done: impl Fn(&str) -> bool) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !done(&String::from_utf8_lossy(&seen)) {
        let n = stdout.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "stdout closed early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// Replaces a file whole (a rename), so the watcher never reads it half-written.
fn replace(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A copy of the fixture in a directory of this test's own.
fn copy_of_fixture(test: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("status-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cluster.yaml");
    let text = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

#[test]
fn watch_redraws_on_change_and_stops_on_ctrl_c() {
    let (path, text) = copy_of_fixture("ctrl-c");
    let mut child =
        std::process::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"))
            .args([
                "status",
                "-w",
                "--interval",
                "1s",
                "-o",
                "name",
                "--now",
                NOW,
                "-f",
            ])
            .arg(&path)
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let first = read_until(&mut stdout, |s| s.ends_with("nodeclaim/general-b5r7w\n"));
    assert_eq!(first.matches("node/large-h3v8n").count(), 1, "{first}");
    // The launching claim goes away: a second view without it.
    let start = text
        .find("kind: NodeClaim\nmetadata:\n  name: general-b5r7w")
        .unwrap();
    let end = start + text[start..].find("\n---\n").unwrap() + 5;
    replace(
        &path,
        &format!(
            "{}{}",
            &text[..start - "apiVersion: karpenter.sh/v1\n".len()],
            &text[end..]
        ),
    );
    // Only what was printed after the first view.
    let second = read_until(&mut stdout, |s| s.ends_with("nodeclaim/general-q9m4t\n"));
    assert!(second.starts_with("nodepool/general\n"), "{second}");
    assert!(!second.contains("general-b5r7w"), "{second}");
    assert!(second.contains("node/large-h3v8n\n"), "{second}");
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "Ctrl-C ends -w cleanly");
}

#[test]
fn watch_ends_cleanly_when_the_reader_goes_away() {
    let (path, text) = copy_of_fixture("pipe");
    let mut child =
        std::process::Command::new(assert_cmd::cargo::cargo_bin!("kubectl-karpenter_capi"))
            .args([
                "status",
                "-w",
                "--interval",
                "1s",
                "-o",
                "name",
                "--now",
                NOW,
                "-f",
            ])
            .arg(&path)
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    read_until(&mut stdout, |s| s.ends_with("nodeclaim/general-b5r7w\n"));
    drop(stdout);
    // A change makes it write again, into the closed pipe.
    replace(&path, &text.replace("name: canary-0", "name: canary-1"));
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

#[tokio::test]
async fn live_status_is_the_dump_status() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let cluster = FakeApi::new();
    cluster.seed_yaml(&text);
    let now = NOW.parse().unwrap();
    let options = karpenter_capi::status::Options::default();
    let live = karpenter_capi::cmd::status::live_status(
        &cluster.client(),
        &cluster.client(),
        "User/test",
        None,
        now,
        &options,
    )
    .await
    .unwrap();
    let mut out = Vec::new();
    karpenter_capi::render::status::write(
        &mut out,
        &live,
        &karpenter_capi::render::status::View::default(),
    )
    .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), dump(&[]));
}
