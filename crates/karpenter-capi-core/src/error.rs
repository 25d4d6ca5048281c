//! The crate's error type: every failure names what was read or tried (file, object, field,
//! cluster, verb), and maps to the exit-code contract (0 ok, 1 problems found, 2 error).

use std::fmt;

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which cluster an API call went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ClusterRole {
    /// Where pods, Nodes, NodePools and NodeClaims live.
    Workload,
    /// Where Cluster API runs: MachineDeployments and Machines.
    Management,
}

impl fmt::Display for ClusterRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClusterRole::Workload => "workload",
            ClusterRole::Management => "management",
        })
    }
}

/// Everything that can go wrong, as values with their context.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes object (from a file or a cluster) has a missing or invalid field.
    #[error("{origin}: {object}: {field}: {problem}")]
    Object {
        /// File and document (`scenario.yaml#3`) or cluster the object came from.
        origin: String,
        /// `Kind namespace/name`.
        object: String,
        /// The field path, e.g. `metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]`.
        field: String,
        /// What is wrong and, where useful, what was expected.
        problem: String,
    },
    /// A file or stream that cannot be read or parsed as a whole.
    #[error("{path}: {problem}")]
    Input {
        /// The path, or `<stdin>`.
        path: String,
        /// What went wrong.
        problem: String,
    },
    /// A flag or argument that cannot be used as given.
    #[error("{0}")]
    Usage(String),
    /// A Kubernetes API call that failed.
    #[error("{cluster} cluster: {action}: {message}{}", hint.as_deref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
    Cluster {
        /// Which cluster.
        cluster: ClusterRole,
        /// What was tried, e.g. `list machinedeployments.cluster.x-k8s.io in namespace capi-ovh`.
        action: String,
        /// The API's answer.
        message: String,
        /// What to do about it.
        hint: Option<String>,
    },
    /// Actions of a plan that the clusters refused (`run`); the next pass retries them.
    #[error("{0}")]
    Apply(String),
    /// A command that this build does not provide yet.
    #[error("`{0}` is not available in this build yet")]
    NotImplemented(&'static str),
    /// Writing output failed.
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Exit code for this error: always 2 (1 is reserved for "ran fine, found problems").
    pub fn exit_code(&self) -> u8 {
        2
    }

    /// A closed stdout (`| head`) is not an error worth reporting.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// Shorthand for [`Error::Usage`].
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }
}

/// What a successful command concluded, mapped to the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: the command ran and found problems (e.g. `doctor` errors).
    ProblemsFound,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::ProblemsFound => 1,
        }
    }
}
