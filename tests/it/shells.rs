//! The committed shell completion scripts, run by the shells themselves: bash completes
//! subcommands, flags and flag values through the script's completion function; zsh loads the
//! script under compinit, registers it, and completes a line typed into an interactive zsh.
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
        bash_complete("kubectl-karpenter_capi status -o "),
        [
            "table",
            "wide",
            "json",
            "yaml",
            "name",
            "jsonpath=",
            "custom-columns="
        ]
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

/// Types `line` and a TAB into an interactive zsh (driven through zsh's own pseudo-terminal
/// module) with the committed script loaded, and returns the candidates zsh's completion system
/// added, each once, in order. `None` when zsh is not installed.
fn zsh_complete(line: &str) -> Option<Vec<String>> {
    if Command::new("zsh").arg("--version").output().is_err() {
        eprintln!("zsh is not installed; skipping the zsh completion test");
        return None;
    }
    let dump = std::env::temp_dir().join(format!(
        "karpenter-capi-zpty-{}-{}",
        std::process::id(),
        line.len()
    ));
    let driver = format!(
        r#"zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PROMPT=''; autoload -U compinit; compinit -u -d '{dump}'"
zpty -w z "source '{ROOT}/completions/_kubectl-karpenter_capi'"
# Report every candidate the completion functions add, then add it as usual. (HIT: is spelled
# in pieces so that the terminal's echo of this line does not look like a report.)
zpty -w z 'compadd () {{ local -a hits; builtin compadd -O hits "$@"; print -rl -- "H""IT:"${{^hits}}; builtin compadd "$@" }}'
zpty -n -w z "$1"$'\t'
out="" quiet=0
for i in {{1..100}}; do
  sleep 0.1
  if zpty -r -t z chunk; then out+=$chunk; quiet=0; else (( quiet++ )); fi
  [[ $out == *HIT:* && $quiet -ge 5 ]] && break
done
zpty -d z
print -r -- "$out""#,
        dump = dump.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &driver, "zsh", line])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&dump);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A report can follow the echo of the typed line on the same terminal line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut hits: Vec<String> = Vec::new();
    for piece in stdout.split("HIT:").skip(1) {
        let hit = piece.split(['\r', '\n']).next().unwrap_or_default();
        if !hits.iter().any(|h| h == hit) {
            hits.push(hit.to_string());
        }
    }
    Some(hits)
}

#[test]
fn zsh_completes_subcommands_and_values() {
    let Some(hits) = zsh_complete("kubectl-karpenter_capi si") else {
        return;
    };
    assert_eq!(hits, ["simulate"]);
    let hits = zsh_complete("kubectl-karpenter_capi simulate --strategy ").unwrap();
    assert_eq!(hits, ["cost", "karpenter-capi", "least-waste"]);
    let hits = zsh_complete("kubectl-karpenter_capi status --output ").unwrap();
    assert_eq!(
        hits,
        [
            "table",
            "wide",
            "json",
            "yaml",
            "name",
            "jsonpath=",
            "custom-columns="
        ]
    );
}
