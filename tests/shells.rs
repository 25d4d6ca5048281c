//! The committed shell completion scripts, run by the shells themselves: bash completes
//! subcommands, flags and flag values through the script's completion function; zsh loads the
//! script under compinit and registers it for the executable.
#![cfg(unix)]

use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs bash's completion function of the committed script for a command line, as bash does on
/// TAB (`COMP_WORDS`, `COMP_CWORD`, then the function with command, current and previous word).
fn bash_complete(line: &str) -> Vec<String> {
    let script = format!(
        r#"source "{ROOT}/completions/kubectl-karpenter_capi.bash"
COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
spec=$(complete -p kubectl-karpenter_capi) || exit 3
fn=${{spec#*-F }}; fn=${{fn%% *}}
COMPREPLY=()
"$fn" kubectl-karpenter_capi "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &script, "bash", line])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash failed for {line:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_subcommands() {
    assert_eq!(bash_complete("kubectl-karpenter_capi si"), ["simulate"]);
    let top = bash_complete("kubectl-karpenter_capi ");
    for sub in [
        "init",
        "doctor",
        "explain",
        "simulate",
        "run",
        "completion",
        "version",
    ] {
        assert!(top.contains(&sub.to_string()), "{sub} missing from {top:?}");
    }
}

/// Regression: clap_complete's script completed nothing after a subcommand for a hyphenated
/// executable name (clap-rs/clap#6421).
#[test]
fn bash_completes_after_a_subcommand() {
    assert_eq!(
        bash_complete("kubectl-karpenter_capi simulate --strategy "),
        ["cost", "karpenter-capi", "least-waste"]
    );
    assert_eq!(
        bash_complete("kubectl-karpenter_capi simulate --cons"),
        ["--consolidate"]
    );
    assert_eq!(
        bash_complete("kubectl-karpenter_capi doctor -o "),
        ["table", "wide", "json", "yaml"]
    );
    assert_eq!(
        bash_complete("kubectl-karpenter_capi completion z"),
        ["zsh"]
    );
}

#[test]
fn zsh_loads_the_script_and_registers_it() {
    if Command::new("zsh").arg("--version").output().is_err() {
        eprintln!("zsh is not installed; skipping the zsh completion test");
        return;
    }
    let dump =
        std::env::temp_dir().join(format!("karpenter-capi-zcompdump-{}", std::process::id()));
    let script = format!(
        r#"autoload -U compinit && compinit -u -d "{dump}" && source "{ROOT}/completions/_kubectl-karpenter_capi" || exit 3
print -r -- "$_comps[kubectl-karpenter_capi]"
(( $+functions[_kubectl-karpenter_capi] )) && print defined"#,
        dump = dump.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &script])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&dump);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "_kubectl-karpenter_capi\ndefined\n"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn zsh_script_offers_the_value_enums_with_descriptions() {
    let script =
        std::fs::read_to_string(format!("{ROOT}/completions/_kubectl-karpenter_capi")).unwrap();
    let start = script
        .find("'--strategy=")
        .expect("--strategy in the zsh script");
    let spec: String = script[start..].chars().take(400).collect();
    for value in [
        "((cost\\:\"Ours",
        "karpenter-capi\\:\"The upstream",
        "least-waste\\:\"Cluster Autoscaler",
    ] {
        assert!(spec.contains(value), "{value} missing from {spec}");
    }
}
