//! The krew plugin manifest template (`plugins/karpenter-capi.yaml`): krew's v1alpha2 `Plugin`
//! format with every field krew requires, one platform per released archive, and placeholders
//! that the release pipeline can fill in to get a valid manifest.

use std::collections::BTreeSet;

use serde::Deserialize;

const TEMPLATE: &str = include_str!("../../plugins/karpenter-capi.yaml");

/// The fields of krew's Plugin manifest; unknown fields are errors, so a typo is caught.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Plugin {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Spec {
    version: String,
    homepage: String,
    short_description: String,
    description: String,
    caveats: String,
    platforms: Vec<Platform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    selector: Selector,
    uri: String,
    sha256: String,
    bin: String,
    files: Vec<FileOperation>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Selector {
    match_labels: Labels,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labels {
    os: String,
    arch: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    from: String,
    to: String,
}

fn parse(text: &str) -> Plugin {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("plugins/karpenter-capi.yaml: {e}"))
}

/// The template as the release pipeline fills it in.
fn filled() -> String {
    let mut text = TEMPLATE
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"))
        .replace("@REPOSITORY@", "example/kubectl-karpenter-capi");
    for (index, platform) in ["LINUX_AMD64", "LINUX_ARM64", "DARWIN_AMD64", "DARWIN_ARM64"]
        .iter()
        .enumerate()
    {
        text = text.replace(
            &format!("@SHA256_{platform}@"),
            &format!("{index}").repeat(64),
        );
    }
    text
}

#[test]
fn the_template_is_a_krew_v1alpha2_plugin() {
    let plugin = parse(TEMPLATE);
    assert_eq!(
        plugin.api_version,
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(plugin.kind, "Plugin");
    // krew requires the manifest's file name to be the plugin's name.
    assert_eq!(plugin.metadata.name, "karpenter-capi");
    assert!(!plugin.spec.short_description.is_empty() && plugin.spec.short_description.len() <= 50);
    assert!(!plugin.spec.description.trim().is_empty());
    assert!(
        plugin
            .spec
            .caveats
            .contains("kubectl_complete-karpenter_capi")
    );
}

#[test]
fn one_platform_per_released_archive() {
    let plugin = parse(TEMPLATE);
    let platforms: BTreeSet<(String, String)> = plugin
        .spec
        .platforms
        .iter()
        .map(|p| {
            (
                p.selector.match_labels.os.clone(),
                p.selector.match_labels.arch.clone(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("darwin", "amd64"),
        ("darwin", "arm64"),
        ("linux", "amd64"),
        ("linux", "arm64"),
    ]
    .iter()
    .map(|(o, a)| (o.to_string(), a.to_string()))
    .collect();
    assert_eq!(platforms, expected);
    assert_eq!(plugin.spec.platforms.len(), 4, "a platform is listed twice");
    for p in &plugin.spec.platforms {
        let (os, arch) = (&p.selector.match_labels.os, &p.selector.match_labels.arch);
        // krew links `kubectl-<name with - as _>` to `bin`, so this is what kubectl runs.
        assert_eq!(p.bin, "kubectl-karpenter_capi");
        assert_eq!(
            p.sha256,
            format!("@SHA256_{}_{}@", os.to_uppercase(), arch.to_uppercase())
        );
        let triple = match (os.as_str(), arch.as_str()) {
            ("linux", "amd64") => "x86_64-unknown-linux-musl",
            ("linux", "arm64") => "aarch64-unknown-linux-musl",
            ("darwin", "amd64") => "x86_64-apple-darwin",
            _ => "aarch64-apple-darwin",
        };
        assert_eq!(
            p.uri,
            format!(
                "https://github.com/@REPOSITORY@/releases/download/v@VERSION@/kubectl-karpenter_capi-v@VERSION@-{triple}.tar.gz"
            )
        );
        assert!(p.files.iter().any(|f| f.from == "*" && f.to == "."));
    }
}

/// Whether a line holds an `@NAME@` placeholder (`"$@"` in the caveats' shell line is not one).
fn has_placeholder(line: &str) -> bool {
    line.split('@')
        .skip(1)
        .step_by(2)
        .zip(line.split('@').skip(2))
        .any(|(name, _)| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

#[test]
fn placeholders_are_told_from_shell_text() {
    assert!(has_placeholder("uri: x/@VERSION@/y"));
    assert!(has_placeholder("sha256: \"@SHA256_LINUX_AMD64@\""));
    assert!(!has_placeholder(
        "exec kubectl karpenter-capi __complete \"$@\""
    ));
    assert!(!has_placeholder("uri: x/0.1.0/y"));
}

#[test]
fn filled_in_it_is_a_complete_manifest() {
    let text = filled();
    let leftover: Vec<&str> = text.lines().filter(|l| has_placeholder(l)).collect();
    assert!(
        leftover.is_empty(),
        "placeholders left after filling in: {leftover:?}"
    );
    let plugin = parse(&text);
    assert_eq!(
        plugin.spec.version,
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    let semver: Vec<&str> = plugin.spec.version[1..].split('.').collect();
    assert!(
        semver.len() == 3 && semver.iter().all(|n| n.parse::<u64>().is_ok()),
        "{}",
        plugin.spec.version
    );
    assert!(plugin.spec.homepage.starts_with("https://github.com/"));
    for p in &plugin.spec.platforms {
        assert!(
            p.uri.starts_with("https://") && p.uri.ends_with(".tar.gz"),
            "{}",
            p.uri
        );
        assert!(
            p.sha256.len() == 64 && p.sha256.chars().all(|c| c.is_ascii_hexdigit()),
            "{}",
            p.sha256
        );
    }
}

/// The image `init` names by default, the Dockerfile that builds it, the UID it runs as and the
/// Deployment's securityContext all agree.
#[test]
fn the_default_image_the_dockerfile_and_the_deployment_agree() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
    let image = karpenter_capi::bundle::DEFAULT_IMAGE;
    assert_eq!(
        image,
        format!(
            "ghcr.io/karpenter-capi/kubectl-karpenter-capi:v{}",
            env!("CARGO_PKG_VERSION")
        )
    );
    let repository = image.split(':').next().unwrap();
    let dockerfile = read("Dockerfile");
    assert!(
        dockerfile.contains(repository),
        "Dockerfile names {repository}"
    );
    // Multi-stage: the static gnu build, then that one file on an empty base as a numeric user.
    assert!(dockerfile.contains("target-feature=+crt-static"));
    // For the builder's own architecture (x86_64 or aarch64, as `uname -m` names them).
    assert!(dockerfile.contains("target=\"$(uname -m)-unknown-linux-gnu\""));
    assert!(dockerfile.contains("\nFROM scratch\n"));
    assert!(dockerfile.contains("\nUSER 65532:65532\n"));
    // The release stage the workflow builds for both platforms, from the binaries it released.
    assert!(dockerfile.contains("\nFROM scratch AS release\nARG TARGETARCH\n"));
    assert!(dockerfile.contains(
        "COPY --from=binaries ${TARGETARCH}/kubectl-karpenter_capi /kubectl-karpenter_capi\n"
    ));
    assert_eq!(dockerfile.matches("\nUSER 65532:65532\n").count(), 2);
    // The workflow pushes the image under the name `init` names, tagged with the release.
    let workflow = read(".github/workflows/release.yml");
    assert!(
        workflow.contains(&format!("  IMAGE: {repository}\n")),
        "release.yml pushes {repository}"
    );
    assert!(workflow.contains("--tag \"$IMAGE:$GITHUB_REF_NAME\""));
    assert!(workflow.contains("--target release"));
    assert!(workflow.contains("--platform linux/amd64,linux/arm64"));
    let deployment = read("crates/karpenter-capi-core/templates/workload/deployment.yaml.j2");
    assert!(deployment.contains("        runAsUser: 65532\n        runAsGroup: 65532\n"));
    assert!(read("README.md").contains(repository));
    // The static build test runs as the UID the Deployment names (read from the template).
    let script = read("scripts/static-build.sh");
    assert!(script.contains("runAsUser") && script.contains("crt-static"));
}

/// The release workflow builds one archive per krew platform, with the triple the manifest names.
#[test]
fn the_release_workflow_builds_every_archive_the_manifest_names() {
    let root = env!("CARGO_MANIFEST_DIR");
    let workflow =
        std::fs::read_to_string(format!("{root}/.github/workflows/release.yml")).unwrap();
    let plugin = parse(TEMPLATE);
    for p in &plugin.spec.platforms {
        let triple = p
            .uri
            .rsplit_once("-v@VERSION@-")
            .and_then(|(_, t)| t.strip_suffix(".tar.gz"))
            .unwrap();
        assert!(
            workflow.contains(&format!("          - target: {triple}\n")),
            "release.yml builds no {triple}"
        );
    }
    // Linux: static musl, built natively on each architecture; darwin on a macOS runner.
    for (target, runner) in [
        ("x86_64-unknown-linux-musl", "ubuntu-24.04"),
        ("aarch64-unknown-linux-musl", "ubuntu-24.04-arm"),
        ("x86_64-apple-darwin", "macos-14"),
        ("aarch64-apple-darwin", "macos-14"),
    ] {
        assert!(
            workflow.contains(&format!(
                "          - target: {target}\n            runner: {runner}\n"
            )),
            "{target} on {runner}"
        );
    }
    assert!(workflow.contains("sha256sum -- *.tar.gz > checksums.txt"));
    assert!(workflow.contains("scripts/krew-manifest.sh"));
}

/// `scripts/krew-manifest.sh` fills the template from real archives: their sha256 lands on the
/// right platform, and a missing archive fails instead of printing a half-filled manifest.
#[cfg(unix)]
#[test]
fn the_krew_manifest_script_fills_in_each_archive_checksum() {
    // sha256 of "archive 0" .. "archive 3", the fake archives' contents (computed beforehand).
    const SHA256: [&str; 4] = [
        "75e2472f583c10784fce71e4b23be21739ac05c1b51b52a5d5b3ce519871a725",
        "d9baf236e10ad5bd745fb8001fe97479eb06de761f4a692da31410c2365fe910",
        "f12584295f96d08290f2fda7368dd6a67b958b5893918604d3327744f37286f3",
        "780a315ab1a8b28868019df4b8f93814cf5c42c2f59a950e02605a2f7c70a60c",
    ];
    let root = env!("CARGO_MANIFEST_DIR");
    let dist = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("krew-dist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dist);
    std::fs::create_dir_all(&dist).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let targets = [
        ("linux", "amd64", "x86_64-unknown-linux-musl"),
        ("linux", "arm64", "aarch64-unknown-linux-musl"),
        ("darwin", "amd64", "x86_64-apple-darwin"),
        ("darwin", "arm64", "aarch64-apple-darwin"),
    ];
    let run = || {
        std::process::Command::new(format!("{root}/scripts/krew-manifest.sh"))
            .args([version, "example/kubectl-karpenter-capi"])
            .arg(&dist)
            .output()
            .unwrap()
    };
    // Three of four archives: refused, naming the missing one.
    for (i, (_, _, triple)) in targets.iter().enumerate().take(3) {
        std::fs::write(
            dist.join(format!("kubectl-karpenter_capi-v{version}-{triple}.tar.gz")),
            format!("archive {i}"),
        )
        .unwrap();
    }
    let out = run();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "krew-manifest: {}/kubectl-karpenter_capi-v{version}-aarch64-apple-darwin.tar.gz is missing (the DARWIN_ARM64 archive)\n",
            dist.display()
        )
    );
    std::fs::write(
        dist.join(format!(
            "kubectl-karpenter_capi-v{version}-aarch64-apple-darwin.tar.gz"
        )),
        "archive 3",
    )
    .unwrap();
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plugin = parse(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(plugin.spec.version, format!("v{version}"));
    assert_eq!(
        plugin.spec.homepage,
        "https://github.com/example/kubectl-karpenter-capi"
    );
    for (i, (os, arch, triple)) in targets.iter().enumerate() {
        let p = plugin
            .spec
            .platforms
            .iter()
            .find(|p| &p.selector.match_labels.os == os && &p.selector.match_labels.arch == arch)
            .unwrap();
        assert_eq!(p.sha256, SHA256[i], "{triple}");
        assert_eq!(
            p.uri,
            format!(
                "https://github.com/example/kubectl-karpenter-capi/releases/download/v{version}/kubectl-karpenter_capi-v{version}-{triple}.tar.gz"
            )
        );
    }
    let _ = std::fs::remove_dir_all(&dist);
}
