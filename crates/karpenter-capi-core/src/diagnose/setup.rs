//! Setup and catalog checks: NodePools and their node classes, member MachineDeployments (labels,
//! capacity and price annotations, replicas) and the bootstrap templates that must register
//! nodes with Karpenter's unregistered taint.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Area, Cause, Finding, Severity, subject};
use crate::model::flavor::PriceSource;
use crate::model::labels::Labels;
use crate::model::object::RawObject;
use crate::model::pod::PodDemand;
use crate::model::resources::Resources;
use crate::model::snapshot::{MachineDeploymentRecord, PodRecord, Snapshot};
use crate::model::taints::{Effect, Taint};
use crate::sched::catalog;
use crate::sched::strategy::StrategyName;
use crate::sched::strategy::{Budget, by_name};
use crate::vocab::capacity as annotations;
use crate::vocab::keys::MEMBER_LABEL;
use crate::vocab::keys::UNREGISTERED_TAINT_KEY;

const AREA: Area = Area::Setup;

/// Runs the setup checks.
pub(crate) fn check(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    check_pools(snapshot, out);
    check_machine_deployments(snapshot, out);
}

fn check_pools(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    // An implied pool (no NodePool in the input) has nothing to check of its own.
    if snapshot.implicit_nodepool {
        return;
    }
    let (offerings, excluded) = catalog::offerings(snapshot, true);
    let budget = Budget::new(snapshot);
    let pending = snapshot
        .pods
        .iter()
        .filter(|p| p.is_provisionable())
        .count();
    let mut classes_seen = std::collections::BTreeSet::new();
    for pool in &snapshot.nodepools {
        let pool_subject = subject("NodePool", "", &pool.name);
        let mut blocked = false;
        if let Some(class_name) = &pool.node_class {
            let class_subject = subject("ClusterAPINodeClass", "", class_name);
            let class = snapshot.nodeclasses.iter().find(|c| &c.name == class_name);
            let finding = match class.map(|c| c.ready) {
                None => Some(Finding::new(
                    AREA,
                    Cause::NodeClassNotReady,
                    Severity::Error,
                    &class_subject,
                    format!("NodePool {} references ClusterAPINodeClass {class_name}, which does not exist", pool.name),
                    format!("create it (`kubectl karpenter-capi init` generates one) or fix spec.template.spec.nodeClassRef.name of NodePool {}", pool.name),
                )),
                Some(Some(false)) => Some(Finding::new(
                    AREA,
                    Cause::NodeClassNotReady,
                    Severity::Error,
                    &class_subject,
                    format!("status.conditions[Ready] is not True: NodePool {} will not provision", pool.name),
                    format!("the controller sets it: check it runs (`kubectl describe clusterapinodeclass {class_name}`)"),
                )),
                Some(None) => Some(Finding::new(
                    AREA,
                    Cause::NodeClassNotReady,
                    Severity::Warning,
                    &class_subject,
                    format!("reports no Ready condition yet: NodePool {} provisions only once it is True", pool.name),
                    "the controller sets it: check it runs and can patch clusterapinodeclasses/status".to_string(),
                )),
                Some(Some(true)) => Some(Finding::new(AREA, Cause::NodeClassReady, Severity::Ok, &class_subject, "Ready", "")),
            };
            if let Some(f) = finding {
                blocked |= f.severity == Severity::Error;
                if classes_seen.insert(class_name.clone()) {
                    out.push(f);
                }
            }
        }
        for (field, problem) in crate::controller::budget::settings_problems(pool) {
            out.push(Finding::new(
                AREA,
                Cause::InvalidDisruptionSettings,
                Severity::Error,
                &pool_subject,
                format!("{field}: {problem}; the controller skips disruption for this NodePool"),
                format!("fix {field} (`kubectl edit nodepool {}`)", pool.name),
            ));
        }
        for problem in crate::model::pool_validation::runtime_problems(pool) {
            blocked = true;
            out.push(Finding::new(
                AREA,
                Cause::NodePoolValidationFailed,
                Severity::Error,
                &pool_subject,
                format!("{problem}: Karpenter's runtime validation fails, so the NodePool is not Ready and provisions nothing"),
                format!("fix it (`kubectl edit nodepool {}`)", pool.name),
            ));
        }
        if pool.ready == Some(false) {
            blocked = true;
            out.push(Finding::new(
                AREA,
                Cause::NodePoolNotReady,
                Severity::Error,
                &pool_subject,
                "status.conditions[Ready] is not True: Karpenter creates no NodeClaims for it",
                format!("`kubectl describe nodepool {}` names the failing condition (usually NodeClassReady)", pool.name),
            ));
        }

        let members: Vec<&MachineDeploymentRecord> = snapshot.members_of(pool).collect();
        if members.is_empty() {
            let selector = pool
                .node_class
                .as_ref()
                .and_then(|n| snapshot.nodeclasses.iter().find(|c| &c.name == n))
                .and_then(|c| c.selector.as_ref());
            let on_template: Vec<String> = snapshot
                .machine_deployments
                .iter()
                .filter(|md| template_labels(&md.object).contains_key(MEMBER_LABEL))
                .map(MachineDeploymentRecord::key)
                .collect();
            let message = match selector {
                Some(sel) => format!(
                    "no MachineDeployment matches the node class's scalableResourceSelector {sel}"
                ),
                None if !on_template.is_empty() => format!(
                    "no MachineDeployment has {MEMBER_LABEL} on metadata.labels ({} have it on spec.template.metadata.labels only)",
                    on_template.join(", ")
                ),
                None => format!(
                    "no MachineDeployment has {MEMBER_LABEL} on metadata.labels ({} MachineDeployment(s) in the input)",
                    snapshot.machine_deployments.len()
                ),
            };
            out.push(Finding::new(
                AREA,
                Cause::NoMemberMachineDeployments,
                Severity::Error,
                &pool_subject,
                message,
                format!("kubectl label machinedeployment -n NAMESPACE NAME {MEMBER_LABEL}="),
            ));
            continue;
        }

        let pool_offerings: Vec<_> = offerings
            .iter()
            .filter(|o| o.node_pool == pool.name)
            .collect();
        let valid_members = members.iter().filter(|md| md.flavor.is_ok()).count();
        if pool_offerings.is_empty() {
            // A pool reported not Ready offers nothing (`sched::catalog`); NodePoolNotReady
            // says why.
            if valid_members > 0 && pool.ready != Some(false) {
                let reasons: Vec<String> = excluded
                    .iter()
                    .filter(|e| e.node_pool == pool.name)
                    .map(|e| {
                        format!(
                            "{}: {}",
                            e.instance_type,
                            e.unfit.describe(&e.instance_type)
                        )
                    })
                    .collect();
                out.push(Finding::new(
                    AREA,
                    Cause::RequirementsUnsatisfiable,
                    Severity::Error,
                    &pool_subject,
                    format!("no member flavor satisfies the NodePool's requirements: {}", reasons.join("; ")),
                    format!("relax spec.template.spec.requirements of NodePool {} or fix the members' capacity.cluster-autoscaler.kubernetes.io/labels", pool.name),
                ));
            }
            // Members without a valid flavor are reported on the MachineDeployments.
            continue;
        }
        let over: Vec<String> = pool_offerings
            .iter()
            .filter_map(|o| {
                budget.check(o).err().map(|u| {
                    format!(
                        "{}: {}",
                        o.flavor.instance_type,
                        u.describe(&o.flavor.instance_type)
                    )
                })
            })
            .collect();
        if over.len() == pool_offerings.len() {
            out.push(Finding::new(
                AREA,
                Cause::LimitsExhausted,
                if pending > 0 { Severity::Error } else { Severity::Warning },
                &pool_subject,
                format!("no flavor fits within the limits ({pending} pod(s) pending): {}", over.join("; ")),
                format!("raise spec.limits of NodePool {} (or the max-size annotation), or free capacity", pool.name),
            ));
            continue;
        }
        if !blocked {
            let names: Vec<&str> = pool_offerings
                .iter()
                .map(|o| o.flavor.instance_type.as_str())
                .collect();
            out.push(Finding::new(
                AREA,
                Cause::NodePoolOk,
                Severity::Ok,
                &pool_subject,
                format!("{} flavor(s) offered: {}", names.len(), names.join(", ")),
                "",
            ));
        }
    }
}

fn check_machine_deployments(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let members = snapshot.all_members();
    let member_keys: std::collections::BTreeSet<String> = members.iter().map(|m| m.key()).collect();
    let unpriced = members.iter().any(|md| {
        md.flavor
            .as_ref()
            .is_ok_and(|f| f.price_source == PriceSource::DefaultModel)
    });
    let choices = if unpriced {
        Some(choices(snapshot))
    } else {
        None
    };
    let mut templates: BTreeMap<String, TemplateUse> = BTreeMap::new();

    for md in &snapshot.machine_deployments {
        let md_subject = subject("MachineDeployment", md.object.namespace(), md.object.name());
        let before = out.len();
        if template_labels(&md.object).contains_key(MEMBER_LABEL) {
            out.push(Finding::new(
                AREA,
                Cause::MemberLabelOnTemplate,
                Severity::Error,
                &md_subject,
                format!("{MEMBER_LABEL} is in spec.template.metadata.labels: every new Machine is born claimed, so NodeClaims never bind one"),
                format!("remove {MEMBER_LABEL} from spec.template.metadata.labels (keep it on metadata.labels only)"),
            ));
        }
        if !member_keys.contains(&md.key()) {
            continue;
        }
        let (ns, name) = (md.object.namespace(), md.object.name());
        match &md.flavor {
            Err(problem) => {
                let key = problem
                    .field
                    .trim_start_matches("metadata.annotations[")
                    .trim_end_matches(']');
                out.push(Finding::new(
                    AREA,
                    if problem.missing { Cause::MissingCapacityAnnotations } else { Cause::InvalidCapacityAnnotation },
                    Severity::Error,
                    &md_subject,
                    format!("{}: {} (the upstream provider panics on this; this MachineDeployment offers no flavor)", problem.field, problem.problem),
                    format!("kubectl annotate machinedeployment -n {ns} {name} --overwrite {key}=<value>"),
                ));
            }
            Ok(flavor) => {
                if flavor.price_source == PriceSource::DefaultModel {
                    let choice = choices.as_ref().map(Choices::sentence).unwrap_or_default();
                    out.push(Finding::new(
                        AREA,
                        Cause::MissingPrice,
                        Severity::Warning,
                        &md_subject,
                        format!(
                            "no {} annotation: cost assumes {}/h from its default model; {choice}",
                            annotations::PRICE,
                            flavor.price
                        ),
                        format!(
                            "kubectl annotate machinedeployment -n {ns} {name} {}=<price per hour>",
                            annotations::PRICE
                        ),
                    ));
                }
            }
        }
        if let Some(f) = replicas_finding(snapshot, md, &md_subject) {
            out.push(f);
        }
        if let Some(t) = bootstrap_template(md) {
            templates
                .entry(t.clone())
                .or_insert_with(|| TemplateUse {
                    key: t,
                    members: Vec::new(),
                })
                .members
                .push(md.key());
        }
        if out.len() == before {
            let message = match &md.flavor {
                Ok(f) => format!(
                    "flavor {}: {} cpu, {} memory, {} pods, {}/h",
                    f.instance_type,
                    crate::model::quantity::format_millis(f.capacity.cpu_millis),
                    crate::model::quantity::format_memory(f.capacity.memory_bytes),
                    f.capacity.pods,
                    f.price
                ),
                Err(_) => String::new(),
            };
            out.push(Finding::new(
                AREA,
                Cause::MachineDeploymentOk,
                Severity::Ok,
                &md_subject,
                message,
                "",
            ));
        }
    }
    for t in templates.values() {
        out.push(template_finding(snapshot, t));
    }
}

/// A member's `spec.replicas`: omitted, CAPI's webhook defaults it to 1 (or the min size), so
/// a node nobody asked for appears; set, it should match the Machines NodeClaims asked for.
fn replicas_finding(
    snapshot: &Snapshot,
    md: &MachineDeploymentRecord,
    md_subject: &str,
) -> Option<Finding> {
    let (ns, name) = (md.object.namespace(), md.object.name());
    let remedy = format!(
        "set spec.replicas: 0 on MachineDeployment {ns}/{name} (the autoscaler raises it per NodeClaim)"
    );
    let Some(replicas) = md
        .object
        .value
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
    else {
        return Some(Finding::new(
            AREA,
            Cause::ReplicasUnsetOnMember,
            Severity::Error,
            md_subject,
            "spec.replicas is not set: Cluster API's webhook defaults it to 1 (or the min-size annotation), starting a node no pod asked for",
            remedy,
        ));
    };
    if replicas == 0 {
        return None;
    }
    let machines: Vec<_> = snapshot
        .machines
        .iter()
        .filter(|m| m.namespace == ns && m.deployment.as_deref() == Some(name) && m.is_live())
        .collect();
    let claimed = machines.iter().filter(|m| m.claimed).count();
    let asked = snapshot
        .nodeclaims
        .iter()
        .filter(|c| {
            c.machine_deployment.as_deref() == Some(&md.key())
                || c.machine
                    .as_ref()
                    .is_some_and(|m| machines.iter().any(|x| &x.key() == m))
        })
        .count();
    let min = md
        .flavor
        .as_ref()
        .ok()
        .and_then(|f| f.min_size)
        .unwrap_or(0);
    let wanted = i64::try_from(claimed.max(asked))
        .unwrap_or(i64::MAX)
        .max(min);
    (replicas > wanted).then(|| {
        Finding::new(
            AREA,
            Cause::ReplicasUnsetOnMember,
            Severity::Warning,
            md_subject,
            format!(
                "spec.replicas is {replicas} but NodeClaims account for {wanted} ({claimed} claimed Machine(s), {asked} NodeClaim(s)): the rest are nodes nobody asked for"
            ),
            remedy,
        )
    })
}

/// A bootstrap template and the members that use it.
struct TemplateUse {
    /// `Kind/namespace/name`.
    key: String,
    /// Member MachineDeployments (`namespace/name`).
    members: Vec<String>,
}

/// `Kind/namespace/name` of a MachineDeployment's bootstrap config template (v1beta1 or v1beta2 ref).
fn bootstrap_template(md: &MachineDeploymentRecord) -> Option<String> {
    let r = md
        .object
        .value
        .pointer("/spec/template/spec/bootstrap/configRef")?;
    let kind = r.get("kind").and_then(Value::as_str)?;
    let name = r.get("name").and_then(Value::as_str)?;
    let ns = r
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(md.object.namespace());
    Some(subject(kind, ns, name))
}

fn template_finding(snapshot: &Snapshot, t: &TemplateUse) -> Finding {
    let used_by = format!("used by {}", t.members.join(", "));
    let remedy = format!(
        "add {{key: {UNREGISTERED_TAINT_KEY}, effect: NoExecute}} to spec.template.spec.joinConfiguration.nodeRegistration.taints of {}",
        t.key
    );
    let warn = |message: String| {
        Finding::new(
            AREA,
            Cause::UnregisteredTaintMissing,
            Severity::Warning,
            &t.key,
            message,
            remedy.clone(),
        )
    };
    let mut parts = t.key.splitn(3, '/');
    let (kind, ns, name) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    if kind != "KubeadmConfigTemplate" {
        return warn(format!(
            "{kind} is not a KubeadmConfigTemplate ({used_by}): check by hand that nodes register with {UNREGISTERED_TAINT_KEY}:NoExecute"
        ));
    }
    let Some(obj) = snapshot
        .objects_of("KubeadmConfigTemplate")
        .find(|o| o.namespace() == ns && o.name() == name)
    else {
        return warn(format!(
            "not in the input ({used_by}): cannot check that nodes register with {UNREGISTERED_TAINT_KEY}:NoExecute"
        ));
    };
    let found = registration_taints(obj);
    match found.iter().find(|(t, _)| t.key == UNREGISTERED_TAINT_KEY) {
        Some((taint, field)) if taint.effect == Effect::NoExecute => Finding::new(
            AREA,
            Cause::BootstrapTemplateOk,
            Severity::Ok,
            &t.key,
            format!("nodes register with {taint} ({field}; {used_by})"),
            "",
        ),
        Some((taint, field)) => Finding::new(
            AREA,
            Cause::UnregisteredTaintMissing,
            Severity::Error,
            &t.key,
            format!("{field} has {taint}, but Karpenter expects effect NoExecute ({used_by})"),
            remedy,
        ),
        None => Finding::new(
            AREA,
            Cause::UnregisteredTaintMissing,
            Severity::Error,
            &t.key,
            format!(
                "nodes join without {UNREGISTERED_TAINT_KEY}:NoExecute (joinConfiguration.nodeRegistration.taints: [{}]; {used_by}): Karpenter v1.0-v1.2 never adopts them and their NodeClaims time out; later versions adopt them after pods may already have landed",
                found
                    .iter()
                    .map(|(t, _)| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            remedy,
        ),
    }
}

/// The taints a KubeadmConfigTemplate registers nodes with, each with the field it came from:
/// `nodeRegistration.taints` and the kubelet's `register-with-taints` (v1beta2 list or v1beta1 map).
fn registration_taints(obj: &RawObject) -> Vec<(Taint, &'static str)> {
    let mut out = Vec::new();
    let reg = obj
        .value
        .pointer("/spec/template/spec/joinConfiguration/nodeRegistration");
    for t in reg
        .and_then(|r| r.get("taints"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = t.get("key").and_then(Value::as_str).unwrap_or("");
        let value = t.get("value").and_then(Value::as_str).unwrap_or("");
        if let Some(effect) = t
            .get("effect")
            .and_then(Value::as_str)
            .and_then(Effect::parse)
        {
            out.push((Taint::new(key, value, effect), "nodeRegistration.taints"));
        }
    }
    let extra = reg.and_then(|r| r.get("kubeletExtraArgs"));
    let flag = match extra {
        Some(Value::Array(list)) => list
            .iter()
            .find(|a| a.get("name").and_then(Value::as_str) == Some("register-with-taints"))
            .and_then(|a| a.get("value").and_then(Value::as_str)),
        Some(Value::Object(map)) => map.get("register-with-taints").and_then(Value::as_str),
        _ => None,
    };
    if let Some(list) = flag {
        for t in Taint::parse_list(list).unwrap_or_default() {
            out.push((t, "kubeletExtraArgs register-with-taints"));
        }
    }
    out
}

fn template_labels(obj: &RawObject) -> Labels {
    obj.value
        .pointer("/spec/template/metadata/labels")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// What the upstream provider and `cost` would launch, for the pending pods or, without any,
/// for a pod every flavor can hold.
struct Choices {
    /// For what: `the 2 pending pod(s)` or `a small pod`.
    what: String,
    /// Upstream's instance types.
    upstream: String,
    /// Cost's instance types.
    cost: String,
}

impl Choices {
    fn sentence(&self) -> String {
        format!(
            "for {} upstream (no prices, first name wins) would choose {} and cost would choose {}",
            self.what, self.upstream, self.cost
        )
    }
}

fn choices(snapshot: &Snapshot) -> Choices {
    let pending: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| snapshot.pods[i].is_provisionable())
        .collect();
    let (probe, pending, what) = if pending.is_empty() {
        let mut probe = snapshot.clone();
        probe.pods.push(std::sync::Arc::new(probe_pod()));
        let index = probe.pods.len() - 1;
        (probe, vec![index], "a small pod".to_string())
    } else {
        let n = pending.len();
        (snapshot.clone(), pending, format!("the {n} pending pod(s)"))
    };
    let pick = |name: StrategyName| {
        let placement = by_name(name).plan(&probe, &pending);
        let counts = placement.node_counts();
        if counts.is_empty() {
            "nothing".to_string()
        } else {
            counts
                .iter()
                .map(|(t, n)| {
                    if *n == 1 {
                        t.clone()
                    } else {
                        format!("{n}x {t}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" + ")
        }
    };
    Choices {
        what,
        upstream: pick(StrategyName::KarpenterCapi),
        cost: pick(StrategyName::Cost),
    }
}

/// A pod with the smallest requests and no constraints: fits every flavor.
fn probe_pod() -> PodRecord {
    PodRecord {
        limits: Default::default(),
        demand: std::sync::Arc::new(PodDemand {
            namespace: "default".to_string(),
            name: "probe".to_string(),
            labels: Labels::new(),
            requests: Resources {
                cpu_millis: 1,
                memory_bytes: 1,
                pods: 1,
                ..Default::default()
            },
            node_selector: Vec::new(),
            node_affinity: Vec::new(),
            tolerations: Vec::new(),
            anti_affinity: Vec::new(),
            affinity: Vec::new(),
            host_ports: Vec::new(),
            ..Default::default()
        }),
        node_name: None,
        marked_unschedulable: true,
        nominated: false,
        daemon: false,
        terminating: false,
        deleted_at: None,
        not_ready: false,
        grace_seconds: None,
        mirror: false,
        uid: None,
        terminal: false,
        gated: false,
        owner: None,
        created: None,
        started: None,
        annotations: Default::default(),
        priority_class: None,
        priority: None,
        phase: None,
        containers: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(join: &str) -> RawObject {
        let yaml = format!(
            "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfigTemplate\nmetadata: {{name: t, namespace: ns}}\nspec:\n  template:\n    spec:\n      joinConfiguration:\n        nodeRegistration: {join}\n"
        );
        RawObject::from_value(serde_saphyr::from_str(&yaml).unwrap(), "test").unwrap()
    }

    fn taints(join: &str) -> Vec<String> {
        registration_taints(&template(join))
            .iter()
            .map(|(t, f)| format!("{t} ({f})"))
            .collect()
    }

    #[test]
    fn registration_taints_come_from_the_list_and_the_kubelet_flag() {
        assert_eq!(
            taints("{taints: [{key: karpenter.sh/unregistered, effect: NoExecute}]}"),
            vec!["karpenter.sh/unregistered:NoExecute (nodeRegistration.taints)"]
        );
        // v1beta1: kubeletExtraArgs is a map; v1beta2: a list of {name, value}.
        assert_eq!(
            taints(
                "{kubeletExtraArgs: {register-with-taints: 'karpenter.sh/unregistered:NoExecute,a=b:NoSchedule'}}"
            ),
            vec![
                "karpenter.sh/unregistered:NoExecute (kubeletExtraArgs register-with-taints)",
                "a=b:NoSchedule (kubeletExtraArgs register-with-taints)"
            ]
        );
        assert_eq!(
            taints(
                "{kubeletExtraArgs: [{name: register-with-taints, value: 'karpenter.sh/unregistered:NoSchedule'}]}"
            ),
            vec!["karpenter.sh/unregistered:NoSchedule (kubeletExtraArgs register-with-taints)"]
        );
        assert!(taints("{taints: []}").is_empty());
    }

    #[test]
    fn wrong_effect_is_an_error_naming_the_field() {
        let mut snapshot = Snapshot::default();
        snapshot.objects.push(template(
            "{taints: [{key: karpenter.sh/unregistered, effect: NoSchedule}]}",
        ));
        let f = template_finding(
            &snapshot,
            &TemplateUse {
                key: "KubeadmConfigTemplate/ns/t".to_string(),
                members: vec!["ns/md".to_string()],
            },
        );
        assert_eq!(
            (f.cause, f.severity),
            (Cause::UnregisteredTaintMissing, Severity::Error)
        );
        assert_eq!(
            f.message,
            "nodeRegistration.taints has karpenter.sh/unregistered:NoSchedule, but Karpenter expects effect NoExecute (used by ns/md)"
        );
    }
}
