//! The completion planner's answers for typed command lines.

use super::*;

fn plan_of(line: &str) -> Plan {
    // A trailing space means "completing a new, empty word", as kubectl passes ''.
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if line.ends_with(' ') || line.is_empty() {
        words.push(String::new());
    }
    plan(&crate::cli::command(), &words)
}

fn values(line: &str) -> (Vec<String>, u32) {
    match plan_of(line) {
        Plan::Done(c) => (
            c.candidates.into_iter().map(|c| c.value).collect(),
            c.directive,
        ),
        other => panic!("expected a finished completion for {line:?}, got {other:?}"),
    }
}

fn objects(line: &str) -> (ObjectKind, String, Vec<String>) {
    match plan_of(line) {
        Plan::Objects {
            kind,
            prefix,
            global_flags,
        } => (kind, prefix, global_flags),
        other => panic!("expected an object lookup for {line:?}, got {other:?}"),
    }
}

#[test]
fn subcommands_at_the_top() {
    let (names, directive) = values("");
    assert_eq!(
        names,
        [
            "init",
            "doctor",
            "explain",
            "simulate",
            "status",
            "run",
            "uninstall",
            "completion",
            "version",
            "help"
        ]
    );
    assert_eq!(directive, directive::NO_FILE_COMP);
    assert_eq!(values("s").0, ["simulate", "status"]);
}

#[test]
fn subcommands_after_global_flags() {
    assert_eq!(values("--context prod -o json ex").0, ["explain"]);
    assert_eq!(values("-ojson --kubeconfig=k.yaml v").0, ["version"]);
}

#[test]
fn flags_of_the_subcommand_including_globals() {
    let (flags, directive) = values("simulate --s");
    assert_eq!(flags, ["--strategy", "--selector"]);
    assert_eq!(directive, directive::NO_FILE_COMP);
    assert_eq!(values("simulate --o").0, ["--output"]);
    assert_eq!(
        values("run -")
            .0
            .iter()
            .filter(|f| f.starts_with("--once"))
            .count(),
        1
    );
}

#[test]
fn flags_given_once_are_not_offered_again_but_repeatable_ones_are() {
    let (flags, _) = values("simulate --consolidate -f a.yaml -");
    assert!(!flags.contains(&"--consolidate".to_string()), "{flags:?}");
    assert!(flags.contains(&"--filename".to_string()), "{flags:?}");
    assert!(flags.contains(&"-f".to_string()), "{flags:?}");
}

#[test]
fn short_flags_only_for_a_single_dash() {
    assert!(values("doctor --").0.iter().all(|f| f.starts_with("--")));
    assert!(values("doctor -").0.contains(&"-n".to_string()));
}

#[test]
fn value_enums_complete_flag_values() {
    assert_eq!(
        values("simulate --strategy ").0,
        ["cost", "karpenter-capi", "least-waste"]
    );
    assert_eq!(values("simulate --strategy=le").0, ["least-waste"]);
    assert_eq!(
        values("-o ").0,
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
    assert_eq!(values("status --no-h").0, ["--no-headers"]);
    // -o offers exactly what each command takes.
    assert_eq!(values("doctor -o j").0, ["json"]);
    assert_eq!(values("status -o j").0, ["json", "jsonpath="]);
    assert_eq!(values("doctor -o ").0, ["table", "wide", "json", "yaml"]);
    assert_eq!(
        values("simulate --output ").0,
        ["table", "wide", "json", "yaml"]
    );
    assert_eq!(
        values("status -o ").0,
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
    assert!(values("uninstall -o ").0.is_empty());
    assert_eq!(values("run --log-format ").0, ["text", "json"]);
    assert_eq!(values("init --capi-version ").0, ["v1beta2", "v1beta1"]);
    assert_eq!(
        values("completion ").0,
        ["bash", "elvish", "fish", "powershell", "zsh"]
    );
    assert_eq!(values("explain ").0, ["pod", "nodeclaim"]);
}

#[test]
fn no_match_among_possible_values_offers_nothing_not_files() {
    assert_eq!(
        values("simulate --strategy zzz"),
        (vec![], directive::NO_FILE_COMP)
    );
}

#[test]
fn files_and_directories() {
    assert_eq!(
        values("simulate -f "),
        (
            vec!["yaml".into(), "yml".into(), "json".into()],
            directive::FILTER_FILE_EXT
        )
    );
    assert_eq!(values("--kubeconfig ").1, directive::DEFAULT);
    assert_eq!(
        values("run --metrics-bind-address ").1,
        directive::NO_FILE_COMP
    );
}

#[test]
fn object_names_where_a_cluster_knows_them() {
    assert_eq!(objects("explain nodeclaim de").0, ObjectKind::NodeClaim);
    assert_eq!(objects("explain nodeclaim de").1, "de");
    assert_eq!(objects("explain pod ").0, ObjectKind::PendingPod);
    assert_eq!(objects("--context ").0, ObjectKind::Context);
    assert_eq!(
        objects("doctor --management-context ").0,
        ObjectKind::ManagementContext
    );
    assert_eq!(objects("init -n ").0, ObjectKind::Namespace);
    assert_eq!(objects("init --cluster-name ").0, ObjectKind::Cluster);
    assert_eq!(
        objects("init --infrastructure-kind Open").0,
        ObjectKind::InfrastructureKind
    );
}

#[test]
fn the_typed_global_flags_travel_to_the_lookup() {
    let (_, _, flags) = objects("--kubeconfig k.yaml explain --context=prod -n ns nodeclaim ");
    assert_eq!(
        flags,
        ["--kubeconfig=k.yaml", "--context=prod", "--namespace=ns"]
    );
}

#[test]
fn nothing_after_the_last_positional() {
    assert_eq!(
        values("completion bash "),
        (vec![], directive::NO_FILE_COMP)
    );
}

#[test]
fn help_completes_subcommand_names() {
    assert_eq!(values("help si").0, ["simulate"]);
}

#[test]
fn completion_requests_are_told_from_commands() {
    let args = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
    assert!(is_request(&args(&[
        "/usr/bin/kubectl-karpenter_capi",
        "__complete",
        "sim"
    ])));
    assert!(is_request(&args(&[
        "/home/me/.krew/bin/kubectl_complete-karpenter_capi",
        "sim"
    ])));
    assert!(!is_request(&args(&[
        "kubectl-karpenter_capi",
        "simulate",
        "__complete"
    ])));
    assert!(!is_request(&args(&["kubectl-karpenter_capi"])));
}

#[test]
fn render_is_the_cobra_protocol() {
    let completion = Completion {
        candidates: vec![
            Candidate::new("json", Some("JSON for\tscripts\nmore".to_string())),
            Candidate::new("wide", None),
        ],
        directive: directive::NO_FILE_COMP,
    };
    assert_eq!(completion.render(), "json\tJSON for scripts\nwide\n:4\n");
}
