//! `doctor`: load a snapshot (live from both clusters, or `-f DUMP` with `--now`), run the
//! checks, print the findings grouped by area; exit 1 when any is an error.

use jiff::Timestamp;

use crate::cli::{DoctorArgs, GlobalArgs, OutputFormat, SourceArgs};
use crate::controller::Config;
use crate::diagnose::access::Identity;
use crate::diagnose::{self, AccessSource, Area, Report, Severity};
use crate::error::{ClusterRole, Outcome, Result};
use crate::kube::client::{ClusterTarget, connect};
use crate::model::snapshot::Snapshot;
use crate::render::tree::Tree;
use crate::render::{Printer, Style, paint, tree};

/// A snapshot and where it came from.
pub struct Loaded {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// The time to judge ages at.
    pub now: Timestamp,
    /// The management identity's reviewed rules (live only).
    pub identity: Option<Identity>,
    /// CRDs the clusters do not serve (live `doctor` only: other commands fail on them).
    pub missing_crds: Vec<diagnose::crds::MissingCrd>,
}

/// Loads the snapshot `doctor` and `explain` work on: the `-f` files, else both live clusters.
/// Offline, ages are judged at `--now`, else the wall clock.
pub fn load(global: &GlobalArgs, source: &SourceArgs, review_access: bool) -> Result<Loaded> {
    if !source.files.is_empty() {
        let snapshot = super::source::snapshot(source)?;
        let now = match source.now.or(snapshot.now) {
            Some(t) => t,
            None => {
                if !snapshot.nodeclaims.is_empty() {
                    tracing::warn!(
                        "judging NodeClaim ages at the current time; pass --now with the time the dump was taken"
                    );
                }
                Timestamp::now()
            }
        };
        return Ok(Loaded {
            snapshot,
            now,
            identity: None,
            missing_crds: Vec::new(),
        });
    }
    let workload = ClusterTarget::workload(global);
    let management = ClusterTarget::management(global);
    let namespace = global.namespace.clone();
    let now = source.now.unwrap_or_else(Timestamp::now);
    crate::kube::list::block_on(async move {
        let w = connect(&workload).await?;
        let m = if management.same_as(&workload) {
            w.clone()
        } else {
            connect(&management).await?
        };
        let fallback = format!("User/({})", management.describe());
        load_live(&w, &m, &fallback, namespace.as_deref(), now, review_access).await
    })?
}

/// The live half of [`load`], on clients already built (tests pass in-memory ones): lists both
/// clusters and, for `doctor` (`review_access`), reviews the management identity's rules in the
/// namespaces of the member MachineDeployments and returns a CRD that is not installed as
/// [`Loaded::missing_crds`] instead of failing (`explain` and `simulate` fail on it).
/// `fallback_subject` names that identity if the cluster cannot say.
pub async fn load_live(
    workload: &kube::Client,
    management: &kube::Client,
    fallback_subject: &str,
    namespace: Option<&str>,
    now: Timestamp,
    review_access: bool,
) -> Result<Loaded> {
    let (mut snapshot, missing_crds) = if review_access {
        crate::kube::list::live_snapshot_reporting_missing_crds(workload, management, namespace)
            .await?
    } else {
        (
            crate::kube::list::live_snapshot(workload, management, namespace).await?,
            Vec::new(),
        )
    };
    if review_access {
        let found = credential_secrets(workload, management, &snapshot).await;
        snapshot.objects.extend(found);
        snapshot.objects.extend(workload_rbac(workload).await);
    }
    let identity = if review_access {
        let namespaces = diagnose::access::capi_namespaces(&snapshot);
        Some(
            crate::kube::access::review_identity(
                management,
                ClusterRole::Management,
                &namespaces,
                fallback_subject,
            )
            .await?,
        )
    } else {
        None
    };
    Ok(Loaded {
        snapshot,
        now,
        identity,
        missing_crds,
    })
}

/// The Secrets the credential checks judge ([`diagnose::credentials`]), read for `doctor` only
/// (the controller never reads Secrets): the controller's management kubeconfig Secret in each
/// namespace a controller pod runs in (and the default one) on the workload cluster, and the
/// legacy ServiceAccount token Secrets in the Cluster API namespaces on the management cluster.
/// What cannot be read is left unchecked, with a warning unless it simply does not exist.
pub async fn credential_secrets(
    workload: &kube::Client,
    management: &kube::Client,
    snapshot: &Snapshot,
) -> Vec<crate::model::object::RawObject> {
    use k8s_openapi::api::core::v1::Secret;
    use kube::api::{Api, ListParams};

    use crate::setup::render::names;
    let mut controller_namespaces: Vec<String> = snapshot
        .pods
        .iter()
        .filter(|p| diagnose::controller::is_controller_pod(p))
        .map(|p| p.demand.namespace.clone())
        .collect();
    controller_namespaces.push(names::WORKLOAD_IDENTITY.to_string());
    controller_namespaces.sort();
    controller_namespaces.dedup();
    let mut values = Vec::new();
    let skipped = |what: &str, e: kube::Error| {
        if crate::kube::errors::status_code(&e) != Some(404) {
            tracing::warn!("doctor: cannot read {what} ({e}); its token lifetime is not checked");
        }
    };
    for ns in &controller_namespaces {
        let api: Api<Secret> = Api::namespaced(workload.clone(), ns);
        match api.get(names::MANAGEMENT_KUBECONFIG_SECRET).await {
            Ok(s) => values.push((s, "workload cluster")),
            Err(e) => skipped(
                &format!(
                    "secrets/{} in namespace {ns} on the workload cluster",
                    names::MANAGEMENT_KUBECONFIG_SECRET
                ),
                e,
            ),
        }
    }
    let legacy = ListParams::default().fields(&format!(
        "type={}",
        diagnose::credentials::LEGACY_TOKEN_TYPE
    ));
    for ns in diagnose::access::capi_namespaces(snapshot) {
        let api: Api<Secret> = Api::namespaced(management.clone(), &ns);
        match api.list(&legacy).await {
            Ok(list) => values.extend(list.items.into_iter().map(|s| (s, "management cluster"))),
            Err(e) => skipped(
                &format!("secrets in namespace {ns} on the management cluster"),
                e,
            ),
        }
    }
    values
        .into_iter()
        .filter_map(|(s, origin)| {
            let mut v = serde_json::to_value(&s).ok()?;
            v["apiVersion"] = serde_json::json!("v1");
            v["kind"] = serde_json::json!("Secret");
            crate::model::object::RawObject::from_value(v, origin).ok()
        })
        .collect()
}

/// The RBAC objects that bind the controller's workload identity on the workload cluster, read
/// for `doctor` only so that identity is judged live as in a dump
/// ([`diagnose::access::workload_identities_from_rbac`]): the bindings whose subject is `init`'s
/// ServiceAccount (`karpenter-capi`) or whose role is `init`'s ClusterRole or leader-election Role,
/// and the roles they name. What cannot be read is left unchecked, with a warning.
pub async fn workload_rbac(workload: &kube::Client) -> Vec<crate::model::object::RawObject> {
    use k8s_openapi::api::rbac::v1::{
        ClusterRole as K8sClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
    };
    use kube::api::{Api, ListParams};

    use crate::setup::render::names;
    let skipped = |what: &str, e: kube::Error| {
        tracing::warn!(
            "doctor: cannot read {what} on the workload cluster ({e}); the controller's workload identity is not checked"
        );
    };
    let ours = |role: &RoleRef, subjects: &Option<Vec<Subject>>| {
        (role.kind == "ClusterRole" && role.name == names::WORKLOAD_IDENTITY)
            || (role.kind == "Role" && role.name == names::LEADER_ELECTION)
            || subjects
                .iter()
                .flatten()
                .any(|s| s.kind == "ServiceAccount" && s.name == names::WORKLOAD_IDENTITY)
    };
    let params = ListParams::default();
    let cluster_bindings = match Api::<ClusterRoleBinding>::all(workload.clone())
        .list(&params)
        .await
    {
        Ok(l) => l.items,
        Err(e) => {
            skipped("clusterrolebindings", e);
            return Vec::new();
        }
    };
    let bindings = match Api::<RoleBinding>::all(workload.clone())
        .list(&params)
        .await
    {
        Ok(l) => l.items,
        Err(e) => {
            skipped("rolebindings", e);
            return Vec::new();
        }
    };
    let mut values: Vec<(serde_json::Value, &str)> = Vec::new();
    // (kind, namespace, name) of the roles the kept bindings name, each read once.
    let mut roles: Vec<(String, String, String)> = Vec::new();
    for b in cluster_bindings
        .into_iter()
        .filter(|b| ours(&b.role_ref, &b.subjects))
    {
        roles.push((
            b.role_ref.kind.clone(),
            String::new(),
            b.role_ref.name.clone(),
        ));
        if let Ok(v) = serde_json::to_value(&b) {
            values.push((v, "ClusterRoleBinding"));
        }
    }
    for b in bindings
        .into_iter()
        .filter(|b| ours(&b.role_ref, &b.subjects))
    {
        let ns = if b.role_ref.kind == "Role" {
            b.metadata.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        };
        roles.push((b.role_ref.kind.clone(), ns, b.role_ref.name.clone()));
        if let Ok(v) = serde_json::to_value(&b) {
            values.push((v, "RoleBinding"));
        }
    }
    roles.sort();
    roles.dedup();
    for (kind, ns, name) in roles {
        let found = if kind == "Role" {
            Api::<Role>::namespaced(workload.clone(), &ns)
                .get_opt(&name)
                .await
                .map(|r| r.and_then(|r| serde_json::to_value(r).ok()))
        } else {
            Api::<K8sClusterRole>::all(workload.clone())
                .get_opt(&name)
                .await
                .map(|r| r.and_then(|r| serde_json::to_value(r).ok()))
        };
        match found {
            Ok(Some(v)) => values.push((
                v,
                if kind == "Role" {
                    "Role"
                } else {
                    "ClusterRole"
                },
            )),
            Ok(None) => {}
            Err(e) => skipped(&format!("{kind} {name}"), e),
        }
    }
    values
        .into_iter()
        .filter_map(|(mut v, kind)| {
            v["apiVersion"] = serde_json::json!("rbac.authorization.k8s.io/v1");
            v["kind"] = serde_json::json!(kind);
            crate::model::object::RawObject::from_value(v, "workload cluster").ok()
        })
        .collect()
}

/// Runs `doctor`.
pub fn run(global: &GlobalArgs, args: DoctorArgs, printer: &Printer) -> Result<Outcome> {
    let loaded = load(global, &args.source, true)?;
    let config = Config {
        launch_timeout: args.launch_timeout,
        registration_timeout: args.registration_timeout,
        ..Config::default()
    };
    let access = match &loaded.identity {
        Some(identity) => AccessSource::Reviewed(identity),
        None => AccessSource::RbacObjects,
    };
    let report = with_missing_crds(
        &loaded.missing_crds,
        diagnose::run(&loaded.snapshot, loaded.now, &config, access),
    );
    match printer.format {
        OutputFormat::Json | OutputFormat::Yaml => printer.structured(&report)?,
        OutputFormat::Table | OutputFormat::Wide => printer.write(&render_report(
            &report,
            printer.color,
            printer.format == OutputFormat::Wide,
        ))?,
    }
    Ok(if report.has_errors() {
        Outcome::ProblemsFound
    } else {
        Outcome::Success
    })
}

/// The report with one error per missing CRD first in its area (a missing CRD explains the
/// findings about the objects it would hold).
pub fn with_missing_crds(missing: &[diagnose::crds::MissingCrd], report: Report) -> Report {
    let mut findings = Vec::new();
    diagnose::crds::check(missing, &mut findings);
    findings.extend(report.findings);
    // Stable: areas in display order, the missing CRDs first within theirs.
    findings.sort_by_key(|f| f.area);
    Report { findings }
}

/// The findings as one tree per area, problems first, then a summary line. Without `wide`, OK
/// findings are folded into a count per area (areas with only OK findings into one line), so
/// the problems of a large cluster are not lost among hundreds of healthy objects.
pub fn render_report(report: &Report, color: bool, wide: bool) -> String {
    if report.findings.is_empty() {
        return "Nothing to check: the input has no NodePools, MachineDeployments, NodeClaims, autoscaler RBAC or controller pods.\n"
            .to_string();
    }
    let rank = |s: Severity| match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Ok => 2,
    };
    let mut out = String::new();
    let mut all_ok = Vec::new();
    for area in Area::ALL {
        let mut findings: Vec<_> = report.findings.iter().filter(|f| f.area == area).collect();
        if findings.is_empty() {
            continue;
        }
        // Stable: within a severity, the order the checks produced.
        findings.sort_by_key(|f| rank(f.severity));
        let ok = findings
            .iter()
            .filter(|f| f.severity == Severity::Ok)
            .count();
        if !wide && ok == findings.len() {
            all_ok.push(format!("{} ({ok})", area.title()));
            continue;
        }
        let mut t = Tree::styled(area.title(), Style::Bold);
        for f in findings {
            if !wide && f.severity == Severity::Ok {
                continue;
            }
            let mut node = Tree::new("")
                .span(
                    format!("{:<7}", f.severity.as_str()),
                    Some(severity_style(f.severity)),
                )
                .span(format!(" {}  ", f.subject), None)
                .span(f.cause.to_string(), Some(Style::Dim));
            if !f.message.is_empty() {
                node.push(Tree::new(f.message.clone()));
            }
            if !f.remedy.is_empty() {
                node.push(Tree::new("fix: ").span(f.remedy.clone(), Some(Style::Bold)));
            }
            t.push(node);
        }
        if !wide && ok > 0 {
            t.push(Tree::new("").span(format!("{ok} ok"), Some(Style::Good)));
        }
        out.push_str(&tree::render(&t, color));
        out.push('\n');
    }
    if !all_ok.is_empty() {
        out.push_str(&format!(
            "{} {} (-o wide lists each check)\n\n",
            paint(color, "All ok:", Style::Good),
            all_ok.join(", ")
        ));
    }
    let (errors, warnings, ok) = report.counts();
    out.push_str(&format!(
        "{}, {}, {}\n",
        paint(
            color && errors > 0,
            &format!("{errors} error(s)"),
            Style::Bad
        ),
        paint(
            color && warnings > 0,
            &format!("{warnings} warning(s)"),
            Style::Warn
        ),
        paint(color, &format!("{ok} ok"), Style::Good)
    ));
    out
}

/// Polarity colors: green ok, yellow warning, red error.
pub fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Ok => Style::Good,
        Severity::Warning => Style::Warn,
        Severity::Error => Style::Bad,
    }
}
