//! kubectl's plugin completion: what `kubectl karpenter-capi <TAB>` offers (kubectl 1.26 and later).
//! Hand-written on purpose: clap_complete speaks its own dynamic protocol, not cobra's `__complete`
//! answer (candidates, descriptions, `:<directive>` bits) that kubectl expects of plugins.
//!
//! kubectl runs the executable `kubectl_complete-karpenter_capi` (a shim that runs
//! `kubectl-karpenter_capi __complete`, or the plugin itself linked under that name; see
//! [`is_request`]) with the words typed after the plugin's name, the word being completed last
//! (empty after a space), and expects cobra's
//! `__complete` answer on stdout: one candidate per line, optionally a TAB and a description, then
//! `:<directive>` with cobra's `ShellCompDirective` bits. Everything is read from the clap
//! definitions ([`crate::cli::command`]): subcommands, flags, and flag and argument values from
//! `ValueEnum`s. Names only a cluster knows (NodeClaims, NodePools, pending pods,
//! MachineDeployments, ...) come from [`dynamic`].
//!
//! [`plan`] is pure: words in, a [`Plan`] out. [`run`] adds the cluster lookups and the output.
//!
//! # Guarantees
//! Completion never fails loudly: nothing is written to stderr, and an unreachable or slow cluster
//! yields no names (within [`dynamic::TIMEOUT`]) rather than an error.

pub mod dynamic;

use std::collections::BTreeMap;
use std::ffi::OsString;

use clap::{Arg, Command, ValueHint};

/// cobra's `ShellCompDirective` bits, which kubectl and its shell scripts understand.
pub mod directive {
    /// Something went wrong; the shell offers nothing.
    pub const ERROR: u32 = 1;
    /// No space after the completed word.
    pub const NO_SPACE: u32 = 2;
    /// Do not fall back to file names when there are no candidates.
    pub const NO_FILE_COMP: u32 = 4;
    /// The candidates are file extensions to filter file names by.
    pub const FILTER_FILE_EXT: u32 = 8;
    /// Complete directory names only.
    pub const FILTER_DIRS: u32 = 16;
    /// Keep the candidates in the given order.
    pub const KEEP_ORDER: u32 = 32;
    /// Let the shell do its default (file) completion.
    pub const DEFAULT: u32 = 0;
}

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What is inserted.
    pub value: String,
    /// Shown beside it by shells that can (zsh, fish, PowerShell).
    pub description: Option<String>,
}

impl Candidate {
    /// A candidate with an optional description.
    pub fn new(value: impl Into<String>, description: Option<String>) -> Candidate {
        Candidate {
            value: value.into(),
            description,
        }
    }
}

/// The answer to one completion request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The candidates, already filtered by the typed prefix.
    pub candidates: Vec<Candidate>,
    /// cobra's directive bits (see [`directive`]).
    pub directive: u32,
}

impl Completion {
    /// Candidates and no file fallback: the usual answer.
    pub fn values(candidates: Vec<Candidate>) -> Completion {
        Completion {
            candidates,
            directive: directive::NO_FILE_COMP,
        }
    }

    /// Nothing to offer, and no file names either.
    pub fn nothing() -> Completion {
        Completion::values(Vec::new())
    }

    /// The protocol text: candidates one per line (`value\tdescription`), then `:<directive>`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for candidate in &self.candidates {
            out.push_str(&one_line(&candidate.value));
            if let Some(description) = candidate
                .description
                .as_deref()
                .map(one_line)
                .filter(|d| !d.is_empty())
            {
                out.push('\t');
                out.push_str(&description);
            }
            out.push('\n');
        }
        out.push_str(&format!(":{}\n", self.directive));
        out
    }
}

/// A value on one line without tabs, which would break the line-based protocol.
fn one_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .replace('\t', " ")
        .trim()
        .to_string()
}

/// Kinds of objects whose names only a cluster knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// Contexts of a kubeconfig file (read locally, no cluster needed).
    Context,
    /// Contexts of the management kubeconfig file.
    ManagementContext,
    /// Namespaces of the management cluster (where the Cluster API objects live).
    Namespace,
    /// Cluster API Clusters (management cluster).
    Cluster,
    /// Kinds of infrastructure machine templates the management cluster serves.
    InfrastructureKind,
    /// Karpenter NodeClaims (workload cluster).
    NodeClaim,
    /// Karpenter NodePools (workload cluster).
    NodePool,
    /// Pods in phase Pending (workload cluster).
    PendingPod,
    /// Cluster API MachineDeployments (management cluster).
    MachineDeployment,
}

/// What to answer, decided from the words alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The answer is known without a cluster.
    Done(Completion),
    /// Names of objects, looked up in a cluster and filtered by `prefix`.
    Objects {
        /// What to list.
        kind: ObjectKind,
        /// The typed part of the word.
        prefix: String,
        /// The global flags typed on the line (`--kubeconfig`, `--context`, `-n`, ...), as
        /// `flag=value` words to parse with [`crate::cli::GlobalArgs`].
        global_flags: Vec<String>,
    },
}

/// Whether a command line (program name first) asks for completion rather than a command: its
/// first argument is `__complete`, or the program was started as `kubectl_complete-...`.
pub fn is_request(args: &[OsString]) -> bool {
    let program = args
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .map(|name| name.to_string_lossy().starts_with("kubectl_complete-"))
        .unwrap_or(false);
    program || args.get(1).is_some_and(|a| a == "__complete")
}

/// Completes one kubectl request: `args` are what kubectl passes (the words after the plugin
/// name, the last one being completed). A leading `__complete` is accepted too, so the main
/// binary's hidden `__complete` mode and the usual `kubectl_complete-*` wrapper script work.
/// Returns the protocol text for stdout.
pub fn run(args: &[OsString]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let words = match words.split_first() {
        Some((first, rest)) if first == "__complete" => rest.to_vec(),
        _ => words,
    };
    let completion = match plan(&crate::cli::command(), &words) {
        Plan::Done(completion) => completion,
        Plan::Objects {
            kind,
            prefix,
            global_flags,
        } => {
            let names = dynamic::names(kind, &global_flags);
            Completion::values(
                names
                    .into_iter()
                    .filter(|c| c.value.starts_with(&prefix))
                    .collect(),
            )
        }
    };
    completion.render()
}

/// What was typed before the word being completed, as far as completion cares.
struct Walk<'a> {
    /// The (sub)command the words lead to.
    cmd: &'a Command,
    /// Values given to flags and positionals of every level, by argument id.
    seen: BTreeMap<String, Vec<String>>,
    /// Positional words at the innermost level.
    positionals: Vec<String>,
    /// A flag still waiting for its value (the word being completed).
    pending: Option<&'a Arg>,
    /// `--` was typed: everything after it is positional.
    after_double_dash: bool,
    /// Global flags as typed, `--long=value`, for cluster lookups.
    global_flags: Vec<String>,
}

/// Decides the completion of the last of `words` against `root` (clap definitions).
pub fn plan(root: &Command, words: &[String]) -> Plan {
    let mut root = root.clone();
    // Building propagates global flags to subcommands and adds `help`.
    root.build();
    let (current, typed) = match words.split_last() {
        Some((last, before)) => (last.as_str(), before),
        None => ("", &[][..]),
    };
    let walk = walk(&root, typed);
    if let Some(arg) = walk.pending {
        return complete_value(&walk, arg, current);
    }
    if !walk.after_double_dash
        && current.starts_with("--")
        && let Some((name, value)) = current.split_once('=')
    {
        return match find_long(walk.cmd, &name[2..]) {
            Some(arg) if arg.get_action().takes_values() => complete_value(&walk, arg, value),
            _ => Plan::Done(Completion::nothing()),
        };
    }
    if !walk.after_double_dash && current.starts_with('-') {
        return Plan::Done(complete_flags(&walk, current));
    }
    if walk.positionals.is_empty() && walk.cmd.has_subcommands() {
        let candidates = walk
            .cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name().starts_with(current))
            .map(|s| Candidate::new(s.get_name(), s.get_about().map(|a| a.to_string())))
            .collect();
        return Plan::Done(Completion::values(candidates));
    }
    match positional_at(walk.cmd, walk.positionals.len()) {
        Some(arg) => complete_value(&walk, arg, current),
        None => Plan::Done(Completion::nothing()),
    }
}

/// Follows the typed words through subcommands, flags and their values.
fn walk<'a>(root: &'a Command, typed: &[String]) -> Walk<'a> {
    let mut walk = Walk {
        cmd: root,
        seen: BTreeMap::new(),
        positionals: Vec::new(),
        pending: None,
        after_double_dash: false,
        global_flags: Vec::new(),
    };
    for word in typed {
        if let Some(arg) = walk.pending.take() {
            walk.record(arg, word);
            continue;
        }
        if !walk.after_double_dash && word == "--" {
            walk.after_double_dash = true;
            continue;
        }
        if !walk.after_double_dash && word.starts_with("--") {
            let (name, value) = match word.split_once('=') {
                Some((name, value)) => (&name[2..], Some(value)),
                None => (&word[2..], None),
            };
            if let Some(arg) = find_long(walk.cmd, name) {
                match value {
                    None if arg.get_action().takes_values() => walk.pending = Some(arg),
                    value => walk.record(arg, value.unwrap_or_default()),
                }
            }
            continue;
        }
        if !walk.after_double_dash && word.starts_with('-') && word.len() > 1 {
            walk.short_cluster(&word[1..]);
            continue;
        }
        if walk.positionals.is_empty()
            && !walk.after_double_dash
            && let Some(sub) = walk.cmd.find_subcommand(word)
        {
            walk.cmd = sub;
            continue;
        }
        if let Some(arg) = positional_at(walk.cmd, walk.positionals.len()) {
            walk.record(arg, word);
        }
        walk.positionals.push(word.clone());
    }
    walk
}

impl<'a> Walk<'a> {
    fn record(&mut self, arg: &Arg, value: &str) {
        self.seen
            .entry(arg.get_id().to_string())
            .or_default()
            .push(value.to_string());
        if arg.is_global_set()
            && arg.get_action().takes_values()
            && let Some(long) = arg.get_long()
        {
            self.global_flags.push(format!("--{long}={value}"));
        }
    }

    /// `-o`, `-ojson`, `-o=json`, `-yv4`: flags without values, then at most one with its value.
    fn short_cluster(&mut self, cluster: &str) {
        let cmd = self.cmd;
        for (index, letter) in cluster.char_indices() {
            let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(letter)) else {
                return;
            };
            if !arg.get_action().takes_values() {
                self.record(arg, "");
                continue;
            }
            let rest = &cluster[index + letter.len_utf8()..];
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            if rest.is_empty() {
                self.pending = Some(arg);
            } else {
                self.record(arg, rest);
            }
            return;
        }
    }
}

fn find_long<'a>(cmd: &'a Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name)
            || a.get_all_aliases()
                .is_some_and(|aliases| aliases.contains(&name))
    })
}

/// The positional argument that the `index`-th positional word fills (a repeatable last one
/// takes all the rest).
fn positional_at(cmd: &Command, index: usize) -> Option<&Arg> {
    let positionals: Vec<&Arg> = cmd.get_positionals().collect();
    positionals.get(index).copied().or_else(|| {
        positionals
            .last()
            .copied()
            .filter(|last| last.get_num_args().is_some_and(|n| n.max_values() > 1))
    })
}

/// Flags of the current command matching the typed prefix, long and short, each once unless it
/// can be repeated.
fn complete_flags(walk: &Walk<'_>, current: &str) -> Completion {
    let mut candidates = Vec::new();
    for arg in walk
        .cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
    {
        let repeatable = matches!(
            arg.get_action(),
            clap::ArgAction::Append | clap::ArgAction::Count
        );
        if walk.seen.contains_key(arg.get_id().as_str()) && !repeatable {
            continue;
        }
        let help = arg.get_help().map(|h| h.to_string());
        if let Some(long) = arg.get_long() {
            let flag = format!("--{long}");
            if flag.starts_with(current) {
                candidates.push(Candidate::new(flag, help.clone()));
            }
        }
        if let Some(short) = arg.get_short() {
            let flag = format!("-{short}");
            if !current.starts_with("--") && flag.starts_with(current) {
                candidates.push(Candidate::new(flag, help.clone()));
            }
        }
    }
    Completion::values(candidates)
}

/// Values for a flag or positional: its possible values, object names from a cluster, or what
/// the shell should do with files.
fn complete_value(walk: &Walk<'_>, arg: &Arg, current: &str) -> Plan {
    let possible = arg.get_possible_values();
    if !possible.is_empty() {
        // A closed set: offer what matches, and never fall back to file names; for -o only the
        // formats this command takes.
        let output = arg.get_id().as_str() == "output";
        let matching = possible
            .into_iter()
            .filter(|v| !v.is_hide_set() && v.get_name().starts_with(current))
            .filter(|v| !output || crate::cli::output_accepts(walk.cmd.get_name(), v.get_name()))
            .map(|v| Candidate::new(v.get_name(), v.get_help().map(|h| h.to_string())))
            .collect();
        return Plan::Done(Completion::values(matching));
    }
    if let Some(kind) = object_kind(walk, arg) {
        return Plan::Objects {
            kind,
            prefix: current.to_string(),
            global_flags: walk.global_flags.clone(),
        };
    }
    if arg.get_long() == Some("filename") {
        // As kubectl's own -f: manifests by extension (directories are offered too).
        let extensions = ["yaml", "yml", "json"]
            .map(|e| Candidate::new(e, None))
            .to_vec();
        return Plan::Done(Completion {
            candidates: extensions,
            directive: directive::FILTER_FILE_EXT,
        });
    }
    let directive = match arg.get_value_hint() {
        ValueHint::DirPath => directive::FILTER_DIRS,
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => directive::DEFAULT,
        _ => directive::NO_FILE_COMP,
    };
    Plan::Done(Completion {
        candidates: Vec::new(),
        directive,
    })
}

/// Which objects' names complete an argument. Flags name their objects by id (`--context`,
/// `-n`, `--cluster-name`, `--infrastructure-kind`) or by value name (`NODEPOOL`, `NODECLAIM`,
/// `MACHINEDEPLOYMENT`, `POD`), so a new flag gets names by following the convention; `explain`'s
/// name depends on the kind typed before it.
fn object_kind(walk: &Walk<'_>, arg: &Arg) -> Option<ObjectKind> {
    let by_id = match arg.get_id().as_str() {
        "context" => Some(ObjectKind::Context),
        "management_context" => Some(ObjectKind::ManagementContext),
        "namespace" => Some(ObjectKind::Namespace),
        "cluster_name" => Some(ObjectKind::Cluster),
        "infrastructure_kind" => Some(ObjectKind::InfrastructureKind),
        _ => None,
    };
    let value_names: Vec<String> = arg
        .get_value_names()
        .unwrap_or_default()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let by_value_name = match value_names.first().map(String::as_str) {
        Some("NODEPOOL") => Some(ObjectKind::NodePool),
        Some("NODECLAIM") => Some(ObjectKind::NodeClaim),
        Some("MACHINEDEPLOYMENT") => Some(ObjectKind::MachineDeployment),
        Some("POD") => Some(ObjectKind::PendingPod),
        _ => None,
    };
    let by_explain_kind = if walk.cmd.get_name() == "explain" && arg.get_id().as_str() == "name" {
        match walk
            .seen
            .get("kind")
            .and_then(|v| v.last())
            .map(String::as_str)
        {
            Some("pod") => Some(ObjectKind::PendingPod),
            Some("nodeclaim" | "nodeclaims") => Some(ObjectKind::NodeClaim),
            _ => None,
        }
    } else {
        None
    };
    by_id.or(by_value_name).or(by_explain_kind)
}

#[cfg(test)]
mod tests;
