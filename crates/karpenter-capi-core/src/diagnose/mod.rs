//! `doctor`'s checks and `explain`'s reasons: snapshot + now + config -> [`Finding`]s. Pure: the
//! clock, the controller settings and (live) the reviewed access rules are arguments.
//!
//! One module per area: [`setup`] (NodePools, node classes, member MachineDeployments and their
//! bootstrap templates), [`shapes`] (objects older versions left), [`scope`] (one Cluster per
//! controller), [`nodeclaims`] (the chain from NodeClaim to Machine to Node),
//! [`access`] (the management identity's RBAC), [`credentials`] (its token's lifetime),
//! [`controller`] (the controller's own pods) and [`watches`] (the watch health the controller
//! publishes on its Lease).
//!
//! # Guarantees
//! Every finding names a cause code, a severity, a `Kind/namespace/name` subject (`Kind/name`
//! for cluster-scoped objects), a one-line message with the evidence and a remedy. Findings come
//! out grouped by area, in a stable order (input order within an area).

mod absent;
pub mod access;
pub mod controller;
pub mod crds;
pub mod credentials;
pub mod explain;
pub(crate) mod nodeclaims;
pub(crate) mod scope;
pub(crate) mod setup;
pub(crate) mod shapes;
pub mod watches;

use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use crate::controller::Config;
use crate::model::duration::GoDuration;
use crate::model::snapshot::Snapshot;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The check passed.
    Ok,
    /// Something in progress, or a risk that is not blocking yet.
    Warning,
    /// Blocking: nodes will not be provisioned or adopted as they should.
    Error,
}

impl Severity {
    /// `ok`, `warning`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The areas findings are grouped by, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Area {
    /// NodePools, node classes, member MachineDeployments, bootstrap templates.
    Setup,
    /// NodeClaims and their Machines and Nodes.
    NodeClaims,
    /// The management cluster identity's permissions.
    Access,
    /// The controller's pods.
    Controller,
}

impl Area {
    /// Every area, in display order.
    pub const ALL: [Area; 4] = [
        Area::Setup,
        Area::NodeClaims,
        Area::Access,
        Area::Controller,
    ];

    /// The heading printed above the area's findings.
    pub fn title(self) -> &'static str {
        match self {
            Area::Setup => "Setup and catalog",
            Area::NodeClaims => "NodeClaims",
            Area::Access => "Access",
            Area::Controller => "Controller",
        }
    }
}

/// Why a finding was made: the codes `doctor -o json` prints as `cause`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Cause {
    // Setup and catalog.
    /// A CRD the controller lists is not installed (no version of its API is served).
    CrdMissing,
    /// Nodes do not register with `karpenter.sh/unregistered:NoExecute` (template or node).
    UnregisteredTaintMissing,
    /// The membership label is in `spec.template.metadata.labels`.
    MemberLabelOnTemplate,
    /// A required capacity annotation is missing.
    MissingCapacityAnnotations,
    /// A capacity annotation cannot be parsed.
    InvalidCapacityAnnotation,
    /// No price annotation.
    MissingPrice,
    /// A member MachineDeployment does not start (or stay) at the replicas its NodeClaims ask for.
    ReplicasUnsetOnMember,
    /// The NodePool's node class is missing or not Ready.
    NodeClassNotReady,
    /// The NodePool is not Ready.
    NodePoolNotReady,
    /// The NodePool selects no MachineDeployment (or, on an empty cluster, there is none).
    NoMemberMachineDeployments,
    /// There is no NodePool: nothing tells the controller what it may provision.
    NodePoolMissing,
    /// No member flavor satisfies the NodePool's requirements.
    RequirementsUnsatisfiable,
    /// The NodePool's limits leave room for no flavor.
    LimitsExhausted,
    /// A disruption duration, budget or schedule cannot be parsed: disruption is skipped.
    InvalidDisruptionSettings,
    /// The NodePool fails Karpenter's runtime validation (a label, taint or requirement the
    /// schema lets through): it is not Ready and provisions nothing.
    NodePoolValidationFailed,
    /// The membership label has a value: upstream lists only the empty value as a member.
    MemberLabelWithValue,
    /// A member's flavor has no instance-type label: named after its MachineDeployment.
    InstanceTypeLabelMissing,
    /// A management list or watch is not scoped to the one Cluster.
    UnscopedSetup,
    /// A value the API accepted but the controller cannot hold exactly: clamped, or its object
    /// left out of every pass.
    UnrepresentableValue,
    /// A member MachineDeployment passed every check.
    MachineDeploymentOk,
    /// A NodePool passed every check.
    NodePoolOk,
    /// A node class is Ready.
    NodeClassReady,
    /// A bootstrap template registers nodes with the unregistered taint.
    BootstrapTemplateOk,
    // NodeClaims.
    /// No Machine for the claim.
    MachineNotFound,
    /// The Machine reports an infrastructure or bootstrap failure.
    MachineFailed,
    /// The Machine has no providerID yet.
    MachineWithoutProviderID,
    /// No Node with the providerID.
    NodeNotFound,
    /// The Machine's node joined with an empty providerID.
    NodeWithoutProviderID,
    /// Several Nodes with the providerID.
    MultipleNodesFound,
    /// The Node is not Ready.
    NodeNotReady,
    /// Startup or ephemeral taints are still on the Node.
    StartupTaintsRemain,
    /// Everything on the chain is in place; the controller has not updated the claim yet.
    AwaitingController,
    /// Not registered within the registration timeout: deleted or about to be.
    RegistrationTimeout,
    /// The claim is registered and initialized.
    NodeClaimInitialized,
    /// The claim lacks labels its offering has (made by an older version).
    NodeClaimMissingOfferingLabels,
    /// The claim's hash is stamped with another hash version (Karpenter's `v3`, ...).
    ForeignHashVersion,
    /// An initialized claim's Node has less than 90% of a resource the claim requested and its
    /// flavor promised (core's consistency check, `ConsistentStateFound=False`).
    InconsistentNodeShape,
    /// A member Machine carries `cluster.x-k8s.io/delete-machine` this controller did not set:
    /// Cluster API deletes it first on any scale-down, so no scale-down of its MachineDeployment
    /// goes while it is there.
    ForeignDeleteMachineMark,
    // Access.
    /// The management identity can do more than `run` needs.
    OverPrivilegedManagementAccess,
    /// The management identity lacks something `run` needs.
    InsufficientManagementAccess,
    /// The management identity has exactly what `run` needs.
    ManagementAccessOk,
    /// The controller's workload identity can do more than `run` needs.
    OverPrivilegedWorkloadAccess,
    /// The controller's workload identity holds nothing beyond what `run` needs.
    WorkloadAccessOk,
    /// The controller's management token has expired.
    ManagementTokenExpired,
    /// The controller's management token expires within 7 days.
    ManagementTokenExpiring,
    /// The controller's management token is valid for more than 7 days.
    ManagementTokenOk,
    /// A token that never expires (a legacy ServiceAccount token Secret, or one without `exp`).
    LongLivedToken,
    // Controller.
    /// The controller's image cannot be pulled.
    ControllerImagePullFailed,
    /// The controller's pod is crash-looping, failed or cannot be scheduled.
    ControllerNotRunning,
    /// The controller's pod runs and is ready.
    ControllerRunning,
    /// A watch of the running controller has been failing for longer than its bound (published
    /// on its leader-election Lease): its view of that resource goes stale.
    WatchFailing,
    /// No controller pod or Deployment at all.
    ControllerMissing,
}

impl Cause {
    /// The code as printed.
    pub fn as_str(self) -> String {
        format!("{self:?}")
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One conclusion of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The area it is grouped under (not part of the JSON: the cause implies it).
    #[serde(skip)]
    pub area: Area,
    /// The cause code.
    pub cause: Cause,
    /// How bad.
    pub severity: Severity,
    /// `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects.
    pub subject: String,
    /// One line with the evidence.
    pub message: String,
    /// The exact field or command that fixes it (empty for `ok`).
    pub remedy: String,
}

impl Finding {
    /// A finding in an area.
    pub(crate) fn new(
        area: Area,
        cause: Cause,
        severity: Severity,
        subject: impl Into<String>,
        message: impl Into<String>,
        remedy: impl Into<String>,
    ) -> Finding {
        Finding {
            area,
            cause,
            severity,
            subject: subject.into(),
            message: message.into(),
            remedy: remedy.into(),
        }
    }
}

/// What `doctor -o json|yaml` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Every finding, grouped by area.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether any finding is an error (exit code 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// Count of findings per severity: (errors, warnings, ok).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.findings.iter().filter(|f| f.severity == s).count();
        (n(Severity::Error), n(Severity::Warning), n(Severity::Ok))
    }
}

/// Where the management identity's permissions come from.
#[derive(Debug, Clone, Copy)]
pub enum AccessSource<'a> {
    /// The Role/ClusterRole/(Cluster)RoleBinding objects in the snapshot (offline).
    RbacObjects,
    /// Rules reviewed on the live management cluster (SelfSubjectRulesReview).
    Reviewed(&'a access::Identity),
}

/// Runs every check. Findings are grouped by [`Area`] in display order.
pub fn run(
    snapshot: &Snapshot,
    now: Timestamp,
    config: &Config,
    access_source: AccessSource<'_>,
) -> Report {
    let mut findings = Vec::new();
    let live = matches!(access_source, AccessSource::Reviewed(_));
    setup::check(snapshot, &mut findings);
    shapes::check(snapshot, &mut findings);
    scope::check(snapshot, &mut findings);
    oddities(snapshot, &mut findings);
    foreign_marks(snapshot, &mut findings);
    nodeclaims::check(snapshot, now, config, &mut findings);
    access::check(snapshot, access_source, &mut findings);
    credentials::check(snapshot, now, &mut findings);
    controller::check(snapshot, &mut findings);
    watches::check(snapshot, now, &mut findings);
    absent::check(snapshot, live, &mut findings);
    // Stable: areas in display order, input order within each.
    findings.sort_by_key(|f| f.area);
    Report { findings }
}

/// One warning per value clamped or object skipped while reading the snapshot
/// ([`crate::model::odd`]): the controller goes on, but not with what the object says.
fn oddities(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    use crate::model::odd::Treatment;
    for o in &snapshot.oddities {
        let (message, remedy) = match o.treatment {
            Treatment::Clamped => (
                format!(
                    "{} {:?} cannot be held exactly; the controller uses {}",
                    o.field, o.value, o.used
                ),
                format!("set {} to a value in range", o.field),
            ),
            Treatment::Skipped => (
                format!("left out of every pass: {}: {}", o.field, o.value),
                "fix or delete the object; until then the controller ignores it".to_string(),
            ),
        };
        out.push(Finding::new(
            Area::Setup,
            Cause::UnrepresentableValue,
            Severity::Warning,
            o.subject(),
            message,
            remedy,
        ));
    }
}

/// One warning per live Machine of a member MachineDeployment that carries someone else's
/// `cluster.x-k8s.io/delete-machine` (Cluster API's `machineset_deletion_order.go` deletes marked
/// Machines first): the controller holds its scale-downs there until the mark goes.
fn foreign_marks(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let members: std::collections::BTreeSet<String> = snapshot
        .all_members()
        .into_iter()
        .map(|md| md.key())
        .collect();
    for m in snapshot.machines.iter().filter(|m| {
        m.marked_for_deletion
            && !m.marked_by_us
            && !m.deleting
            && m.deployment_key().is_some_and(|k| members.contains(&k))
    }) {
        out.push(Finding::new(
            Area::Setup,
            Cause::ForeignDeleteMachineMark,
            Severity::Warning,
            subject("Machine", &m.namespace, &m.name),
            format!(
                "carries {} set by another writer: Cluster API deletes it first on the next scale-down of MachineDeployment {}, so the controller lowers no replicas there while it stays",
                crate::vocab::keys::DELETE_MACHINE_ANNOTATION,
                m.deployment_key().unwrap_or_default()
            ),
            format!(
                "if no one is removing this Machine on purpose: kubectl annotate machine -n {} {} {}-",
                m.namespace,
                m.name,
                crate::vocab::keys::DELETE_MACHINE_ANNOTATION
            ),
        ));
    }
}

/// `Kind/namespace/name`, or `Kind/name` when the namespace is empty.
pub(crate) fn subject(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

/// Seconds from `since` to `now` (0 when `since` is in the future or unknown).
pub(crate) fn age_secs(since: Option<Timestamp>, now: Timestamp) -> i64 {
    since
        .map(|t| now.as_second() - t.as_second())
        .unwrap_or(0)
        .max(0)
}

/// A number of seconds as a Go duration (`7m30s`).
pub(crate) fn format_secs(secs: i64) -> String {
    GoDuration(u64::try_from(secs.max(0)).unwrap_or(0)).to_string()
}

/// The names closest to `wanted` by edit distance (at most three; distance at most 2 or a quarter of
/// the longer name, plus names containing it), for "did you mean" suggestions.
pub fn suggest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|n| (edit_distance(wanted, n), n))
        .filter(|(d, n)| {
            *d <= (wanted.len().max(n.len()) / 4).max(2) || n.contains(wanted) || wanted.contains(n)
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("default-mrnnj", "default-mrnnk"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(
            suggest(
                "default-mrnj",
                ["default-mrnnj", "other-x", "default-abcde"]
            ),
            vec!["default-mrnnj"]
        );
        assert!(suggest("zzz", ["default-mrnnj"]).is_empty());
    }

    #[test]
    fn subjects_and_ages() {
        assert_eq!(subject("NodeClaim", "", "a"), "NodeClaim/a");
        assert_eq!(subject("Machine", "ns", "m"), "Machine/ns/m");
        assert_eq!(format_secs(450), "7m30s");
        let now: Timestamp = "2026-11-30T10:10:00Z".parse().unwrap();
        assert_eq!(
            age_secs(Some("2026-11-30T10:00:00Z".parse().unwrap()), now),
            600
        );
        assert_eq!(age_secs(None, now), 0);
    }
}
