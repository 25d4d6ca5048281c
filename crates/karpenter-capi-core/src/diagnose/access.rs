//! Whether the identity the autoscaler uses on the management cluster can do what `run` needs
//! ([`crate::vocab::permissions::MANAGEMENT`]) and nothing dangerous beyond it (wildcards,
//! cluster-admin, secrets, writes `run` never makes). The rules come from the RBAC objects of a
//! dump (offline) or from a SelfSubjectRulesReview (live); the judgement is the same.
//!
//! Offline, the autoscaler's identities are the subjects bound to any right on
//! `machinedeployments` or `machinedeployments/scale`, except Kubernetes' own (`system:` users
//! and groups) and the Cluster API providers' controllers (service accounts in `*-system`
//! namespaces), which legitimately hold wide rights.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{AccessSource, Area, Cause, Finding, Severity};
use crate::model::object::RawObject;
use crate::model::snapshot::Snapshot;
use crate::vocab::permissions::{LEADER_ELECTION, MANAGEMENT, Permission, WORKLOAD};

const AREA: Area = Area::Access;
const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// Verbs that change something.
const WRITE_VERBS: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
/// Verbs that grant more rights than they name.
const ESCALATING_VERBS: &[&str] = &["escalate", "bind", "impersonate"];
/// What every authenticated identity may create (the `system:basic-user` role): never excess.
const SELF_REVIEWS: &[(&str, &str)] = &[
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
];

/// One RBAC rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// API groups (`""` core, `*` all).
    pub api_groups: Vec<String>,
    /// Resources (`*` all, `res/sub`, `*/sub`).
    pub resources: Vec<String>,
    /// Verbs (`*` all).
    pub verbs: Vec<String>,
    /// Restricted to these names (empty: all).
    pub resource_names: Vec<String>,
}

impl Rule {
    /// Reads a PolicyRule (RBAC object or SelfSubjectRulesReview `resourceRules` entry).
    pub(crate) fn from_value(v: &Value) -> Rule {
        let list = |k: &str| -> Vec<String> {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        Rule {
            api_groups: list("apiGroups"),
            resources: list("resources"),
            verbs: list("verbs"),
            resource_names: list("resourceNames"),
        }
    }

    /// Whether the rule grants `verb` on every object of `group`/`resource`.
    pub(crate) fn allows(&self, group: &str, resource: &str, verb: &str) -> bool {
        let resource_matches = |r: &String| {
            r == "*" || r == resource || {
                // `*/scale` and `machinedeployments/*`.
                let (base, sub) = resource.split_once('/').unwrap_or((resource, ""));
                !sub.is_empty() && (r == &format!("*/{sub}") || r == &format!("{base}/*"))
            }
        };
        self.resource_names.is_empty()
            && self.api_groups.iter().any(|g| g == "*" || g == group)
            && self.resources.iter().any(resource_matches)
            && self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn has_wildcard(&self) -> bool {
        [&self.api_groups, &self.resources, &self.verbs]
            .iter()
            .any(|l| l.iter().any(|x| x == "*"))
    }

    fn describe(&self) -> String {
        let groups: Vec<String> = self
            .api_groups
            .iter()
            .map(|g| {
                if g.is_empty() {
                    "core".to_string()
                } else {
                    g.clone()
                }
            })
            .collect();
        format!(
            "[{}] on {} ({})",
            self.verbs.join(","),
            self.resources.join(","),
            groups.join(",")
        )
    }
}

/// A rule as granted to an identity: in one namespace or cluster-wide, and through what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// The rule.
    pub rule: Rule,
    /// The namespace it applies in; None for cluster-wide.
    pub namespace: Option<String>,
    /// Where it comes from (`ClusterRoleBinding x -> ClusterRole y`, or `SelfSubjectRulesReview`).
    pub via: String,
}

/// An identity and everything it may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// `User/alice`, `ServiceAccount/ns/name`, `Group/name`, or a description for live reviews.
    pub subject: String,
    /// Its grants.
    pub grants: Vec<Grant>,
    /// Bound to a built-in role whose rules are not in the input (`cluster-admin`, `admin`, `edit`).
    pub builtin_roles: Vec<String>,
}

impl Identity {
    fn allows_in(&self, namespace: &str, p: &Permission, verb: &str) -> bool {
        self.builtin_roles.iter().any(|r| r == "cluster-admin")
            || self.grants.iter().any(|g| {
                g.namespace.as_deref().is_none_or(|n| n == namespace)
                    && g.rule.allows(p.group, p.resource, verb)
            })
    }
}

/// Runs the access checks.
pub(crate) fn check(snapshot: &Snapshot, source: AccessSource<'_>, out: &mut Vec<Finding>) {
    let namespaces = capi_namespaces(snapshot);
    let judged: Vec<String> = match source {
        AccessSource::Reviewed(identity) => {
            out.extend(judge(identity, &namespaces));
            vec![identity.subject.clone()]
        }
        AccessSource::RbacObjects => identities_from_rbac(snapshot)
            .into_iter()
            .map(|identity| {
                out.extend(judge(&identity, &namespaces));
                identity.subject
            })
            .collect(),
    };
    // The workload identity, unless it was just judged as the management identity (self-hosted,
    // from a dump's RBAC objects).
    for identity in workload_identities_from_rbac(snapshot) {
        if !judged.contains(&identity.subject) {
            out.push(judge_workload(&identity));
        }
    }
}

/// The namespaces `run` works in: those of the member MachineDeployments (else of every one).
pub fn capi_namespaces(snapshot: &Snapshot) -> Vec<String> {
    let members = snapshot.all_members();
    let mut out: Vec<String> = if members.is_empty() {
        snapshot
            .machine_deployments
            .iter()
            .map(|m| m.object.namespace().to_string())
            .collect()
    } else {
        members
            .iter()
            .map(|m| m.object.namespace().to_string())
            .collect()
    };
    out.sort();
    out.dedup();
    out
}

/// Judges one identity: what it lacks in each namespace, and what it has beyond `run`'s needs.
pub(crate) fn judge(identity: &Identity, namespaces: &[String]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for ns in namespaces {
        for p in MANAGEMENT {
            let verbs: Vec<&str> = p
                .verbs
                .iter()
                .copied()
                .filter(|v| !identity.allows_in(ns, p, v))
                .collect();
            if !verbs.is_empty() {
                let group = if p.group.is_empty() { "core" } else { p.group };
                missing.push(format!(
                    "[{}] on {} ({group}) in {ns}",
                    verbs.join(","),
                    p.resource
                ));
            }
        }
    }
    if !missing.is_empty() {
        out.push(Finding::new(
            AREA,
            Cause::InsufficientManagementAccess,
            Severity::Error,
            &identity.subject,
            format!("cannot do what the autoscaler needs: lacks {}", missing.join("; ")),
            "bind a Role with the management rules `kubectl karpenter-capi init` generates (see `kubectl auth can-i --list -n NAMESPACE`)",
        ));
    }
    let excess = excess(identity, MANAGEMENT_ALLOWED);
    if !excess.is_empty() {
        out.push(Finding::new(
            AREA,
            Cause::OverPrivilegedManagementAccess,
            Severity::Warning,
            &identity.subject,
            format!("can do more than the autoscaler needs: {}", excess.join("; ")),
            "replace its bindings with a Role limited to the cluster's namespace and the rules `kubectl karpenter-capi init` generates, and remove the rules named here",
        ));
    }
    if out.is_empty() {
        out.push(Finding::new(
            AREA,
            Cause::ManagementAccessOk,
            Severity::Ok,
            &identity.subject,
            format!(
                "has what the autoscaler needs in {} and nothing dangerous beyond it",
                namespaces.join(", ")
            ),
            "",
        ));
    }
    out
}

/// What the management identity may hold: `run`'s management rules and, because self-hosted the
/// controller's one ServiceAccount holds the management Role besides the workload ClusterRole and
/// the leader-election Role, those too (a dump or a rules review cannot tell the two set-ups apart).
const MANAGEMENT_ALLOWED: &[&[Permission]] = &[MANAGEMENT, WORKLOAD, LEADER_ELECTION];
/// What the workload identity may hold: the workload ClusterRole and the leader-election Role.
const WORKLOAD_ALLOWED: &[&[Permission]] = &[WORKLOAD, LEADER_ELECTION];

/// Whether `verb` on `group`/`resource` is in one of the generated least-privilege lists, or is
/// one of the self-reviews every authenticated identity may create.
fn is_needed(allowed: &[&[Permission]], group: &str, resource: &str, verb: &str) -> bool {
    SELF_REVIEWS.contains(&(group, resource))
        || allowed
            .iter()
            .any(|list| crate::vocab::permissions::allows(list, group, resource, verb))
}

/// What an identity may do beyond `run`'s needs: bindings to built-in roles, wildcards, secrets,
/// escalation, and every other verb on a resource that the generated lists (`allowed`) do not
/// name, reads included (`get machinedeployments`, `list configmaps`).
fn excess(identity: &Identity, allowed: &[&[Permission]]) -> Vec<String> {
    let mut out: Vec<String> = identity
        .builtin_roles
        .iter()
        .map(|r| format!("bound to ClusterRole {r}"))
        .collect();
    for g in &identity.grants {
        let r = &g.rule;
        let via = format!(" via {}", g.via);
        if r.has_wildcard() {
            out.push(format!("wildcard {}{via}", r.describe()));
        } else if r.api_groups.iter().any(String::is_empty)
            && r.resources.iter().any(|x| x == "secrets")
        {
            out.push(format!("secrets access {}{via}", r.describe()));
        } else if r
            .verbs
            .iter()
            .any(|v| ESCALATING_VERBS.contains(&v.as_str()))
        {
            out.push(format!("escalation {}{via}", r.describe()));
        } else {
            let mut extra: Vec<String> = Vec::new();
            for grp in &r.api_groups {
                for res in &r.resources {
                    for v in &r.verbs {
                        if !is_needed(allowed, grp, res, v) {
                            let kind = if WRITE_VERBS.contains(&v.as_str()) {
                                ""
                            } else {
                                " (read)"
                            };
                            let group = if grp.is_empty() { "core" } else { grp };
                            extra.push(format!("{v} {res}.{group}{kind}"));
                        }
                    }
                }
            }
            extra.dedup();
            if !extra.is_empty() {
                out.push(format!(
                    "rights the autoscaler never uses ({}){via}",
                    extra.join(", ")
                ));
            }
        }
    }
    out.dedup();
    out
}

/// Judges the workload identity (the controller's ServiceAccount on the workload cluster, see
/// [`workload_identities_from_rbac`]): anything beyond the workload and leader-election lists
/// (and the management list when it also holds rights on MachineDeployments: self-hosted).
pub(crate) fn judge_workload(identity: &Identity) -> Finding {
    // Self-hosted, the one ServiceAccount also holds the management Role.
    let self_hosted = identity
        .grants
        .iter()
        .any(|g| touches_machine_deployments(&g.rule));
    let allowed = if self_hosted {
        MANAGEMENT_ALLOWED
    } else {
        WORKLOAD_ALLOWED
    };
    let excess = excess(identity, allowed);
    if excess.is_empty() {
        Finding::new(
            AREA,
            Cause::WorkloadAccessOk,
            Severity::Ok,
            &identity.subject,
            "holds nothing beyond what the autoscaler needs on the workload cluster".to_string(),
            "",
        )
    } else {
        Finding::new(
            AREA,
            Cause::OverPrivilegedWorkloadAccess,
            Severity::Warning,
            &identity.subject,
            format!(
                "can do more than the autoscaler needs on the workload cluster: {}",
                excess.join("; ")
            ),
            "bind it only to the ClusterRole and leader-election Role `kubectl karpenter-capi init` generates, and remove the rules named here",
        )
    }
}

/// The autoscaler identities bound by the RBAC objects in the snapshot (see the module docs).
pub(crate) fn identities_from_rbac(snapshot: &Snapshot) -> Vec<Identity> {
    bound_identities(snapshot)
        .into_iter()
        .filter(|id| !is_platform_identity(&id.subject))
        // Bound to cluster-admin alone says nothing about being the autoscaler (every admin is).
        .filter(|id| {
            id.grants
                .iter()
                .any(|g| touches_machine_deployments(&g.rule))
        })
        .collect()
}

/// The controller's identities on the workload cluster bound by the RBAC objects in the snapshot
/// (a dump's, or those `doctor` reads live): the ServiceAccounts named like `init`'s
/// (`karpenter-capi`) and whatever is bound to its ClusterRole or leader-election Role.
pub(crate) fn workload_identities_from_rbac(snapshot: &Snapshot) -> Vec<Identity> {
    use crate::vocab::names;
    let by_role = |via: &str| {
        via.ends_with(&format!("ClusterRole {}", names::WORKLOAD_IDENTITY))
            || via.ends_with(&format!("Role {}", names::LEADER_ELECTION))
    };
    bound_identities(snapshot)
        .into_iter()
        .filter(|id| !is_platform_identity(&id.subject))
        .filter(|id| {
            let named = id.subject.starts_with("ServiceAccount/")
                && id
                    .subject
                    .ends_with(&format!("/{}", names::WORKLOAD_IDENTITY));
            named || id.grants.iter().any(|g| by_role(&g.via))
        })
        .collect()
}

/// Every subject bound by the RBAC objects in the snapshot, with its grants.
fn bound_identities(snapshot: &Snapshot) -> Vec<Identity> {
    let roles: BTreeMap<(String, String, String), Vec<Rule>> = snapshot
        .objects
        .iter()
        .filter(|o| {
            o.group() == "rbac.authorization.k8s.io"
                && (o.kind == "Role" || o.kind == "ClusterRole")
        })
        .map(|o| {
            let rules = o
                .value
                .get("rules")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Rule::from_value).collect())
                .unwrap_or_default();
            (
                (
                    o.kind.clone(),
                    o.namespace().to_string(),
                    o.name().to_string(),
                ),
                rules,
            )
        })
        .collect();
    let mut identities: BTreeMap<String, Identity> = BTreeMap::new();
    let bindings = snapshot.objects.iter().filter(|o| {
        o.group() == "rbac.authorization.k8s.io"
            && (o.kind == "RoleBinding" || o.kind == "ClusterRoleBinding")
    });
    for b in bindings {
        let Some(role_ref) = b.value.get("roleRef") else {
            continue;
        };
        let role_kind = role_ref.get("kind").and_then(Value::as_str).unwrap_or("");
        let role_name = role_ref.get("name").and_then(Value::as_str).unwrap_or("");
        // A RoleBinding scopes even a ClusterRole to its namespace.
        let scope = (b.kind == "RoleBinding").then(|| b.namespace().to_string());
        let role_ns = if role_kind == "Role" {
            b.namespace()
        } else {
            ""
        };
        let rules = roles.get(&(
            role_kind.to_string(),
            role_ns.to_string(),
            role_name.to_string(),
        ));
        let builtin = role_kind == "ClusterRole"
            && rules.is_none()
            && matches!(role_name, "cluster-admin" | "admin" | "edit");
        let via = format!("{} {} -> {role_kind} {role_name}", b.kind, b.name());
        for s in subjects(b) {
            let entry = identities.entry(s.clone()).or_insert_with(|| Identity {
                subject: s.clone(),
                grants: Vec::new(),
                builtin_roles: Vec::new(),
            });
            if builtin {
                entry.builtin_roles.push(role_name.to_string());
            }
            for rule in rules.into_iter().flatten() {
                entry.grants.push(Grant {
                    rule: rule.clone(),
                    namespace: scope.clone(),
                    via: via.clone(),
                });
            }
        }
    }
    identities.into_values().collect()
}

fn touches_machine_deployments(rule: &Rule) -> bool {
    rule.resource_names.is_empty()
        && rule.api_groups.iter().any(|g| g == CAPI_GROUP || g == "*")
        && rule
            .resources
            .iter()
            .any(|r| r == "*" || r.starts_with("machinedeployments"))
}

/// Kubernetes' own users and groups, and Cluster API providers' controllers.
fn is_platform_identity(subject: &str) -> bool {
    let mut parts = subject.splitn(3, '/');
    let (kind, a, b) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next(),
    );
    match kind {
        "ServiceAccount" => a.ends_with("-system"),
        _ => a.starts_with("system:") || b.is_some_and(|n| n.starts_with("system:")),
    }
}

/// `ServiceAccount/ns/name`, `User/name`, `Group/name` for each subject of a binding.
fn subjects(binding: &RawObject) -> Vec<String> {
    binding
        .value
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let kind = s.get("kind").and_then(Value::as_str)?;
            let name = s.get("name").and_then(Value::as_str)?;
            Some(match kind {
                "ServiceAccount" => {
                    let ns = s
                        .get("namespace")
                        .and_then(Value::as_str)
                        .unwrap_or(binding.namespace());
                    format!("ServiceAccount/{ns}/{name}")
                }
                other => format!("{other}/{name}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
