//! Unscoped setups: a management namespace holding the MachineDeployments of more than one
//! Cluster, while the controller lists and watches them without `--cluster-name`, or a NodePool
//! whose members belong to several Clusters. Either way one cluster's pods would scale another
//! cluster's MachineDeployments.

use std::collections::{BTreeMap, BTreeSet};

use super::controller::is_controller_pod;
use super::{Area, Cause, Finding, Severity, subject};
use crate::model::object::RawObject;
use crate::model::snapshot::{PodRecord, Snapshot};
use crate::vocab::keys::CLUSTER_NAME_LABEL;

/// The Cluster a MachineDeployment belongs to: `spec.clusterName`, else its
/// `cluster.x-k8s.io/cluster-name` label.
fn cluster_of(object: &RawObject) -> Option<String> {
    object
        .str_at("/spec/clusterName")
        .or_else(|| {
            object
                .meta
                .labels
                .as_ref()
                .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                .map(String::as_str)
        })
        .filter(|c| !c.is_empty())
        .map(str::to_string)
}

/// The value of a flag in `--flag=value` or `--flag value` form (also `-n` for the namespace).
fn flag<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    for (i, a) in args.iter().enumerate() {
        for n in names {
            if let Some(v) = a.strip_prefix(&format!("{n}=")) {
                return Some(v);
            }
            if a == n {
                return args.get(i + 1).map(String::as_str);
            }
        }
    }
    None
}

/// Whether a container runs our controller (`run`), as the Deployment `init` renders does.
fn runs_ours(pod: &PodRecord, args: &[String]) -> bool {
    pod.demand
        .labels
        .get("app.kubernetes.io/name")
        .map(String::as_str)
        == Some("karpenter-capi")
        && args.iter().any(|a| a == "run")
}

/// `Deployment/namespace/name` for a pod of a Deployment (through its ReplicaSet), else the pod.
fn workload_subject(pod: &PodRecord) -> String {
    let ns = &pod.demand.namespace;
    match pod.owner.as_deref().and_then(|o| o.split_once('/')) {
        Some(("Deployment", name)) => subject("Deployment", ns, name),
        Some(("ReplicaSet", rs)) => match rs.rsplit_once('-') {
            Some((name, _)) => subject("Deployment", ns, name),
            None => subject("ReplicaSet", ns, rs),
        },
        _ => subject("Pod", ns, &pod.demand.name),
    }
}

/// Runs the scope checks (Setup area).
pub(crate) fn check(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let mut per_namespace: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for md in &snapshot.machine_deployments {
        if let Some(c) = cluster_of(&md.object) {
            per_namespace
                .entry(md.object.namespace())
                .or_default()
                .insert(c);
        }
    }
    per_namespace.retain(|_, clusters| clusters.len() > 1);
    if per_namespace.is_empty() {
        return;
    }
    let mut seen = BTreeSet::new();
    let mut scoped = false;
    for pod in snapshot.pods.iter().filter(|p| is_controller_pod(p)) {
        for c in pod.containers.iter() {
            if !runs_ours(pod, &c.args) {
                continue;
            }
            if flag(&c.args, &["--cluster-name"]).is_some_and(|v| !v.is_empty()) {
                scoped = true;
                continue;
            }
            let watched = flag(&c.args, &["--namespace", "-n"]);
            let Some((ns, clusters)) = per_namespace
                .iter()
                .find(|(ns, _)| watched.is_none_or(|w| w == **ns))
            else {
                continue;
            };
            let workload = workload_subject(pod);
            if !seen.insert(workload.clone()) {
                continue;
            }
            let names: Vec<&str> = clusters.iter().map(String::as_str).collect();
            let (kind_name, kns) = match workload.split('/').collect::<Vec<_>>()[..] {
                [kind, kns, name] => (format!("{} {name}", kind.to_lowercase()), kns.to_string()),
                _ => (
                    format!("pod {}", pod.demand.name),
                    pod.demand.namespace.clone(),
                ),
            };
            out.push(Finding::new(
                Area::Setup,
                Cause::UnscopedSetup,
                Severity::Error,
                workload,
                format!(
                    "container {} runs the controller without --cluster-name, and namespace {ns} holds the MachineDeployments of Clusters {}: its lists and watches take all of them, so this cluster's pods would scale the other Clusters' member MachineDeployments",
                    c.name,
                    names.join(", ")
                ),
                format!(
                    "add --cluster-name=<this Cluster: one of {}> to the container's args: kubectl -n {kns} edit {kind_name}",
                    names.join(", ")
                ),
            ));
        }
    }
    // Without a controller known to be scoped, a NodePool whose members span Clusters launches
    // into whichever the planner picks (the upstream provider has no --cluster-name at all: its
    // node class's selector is the only scope).
    if scoped {
        return;
    }
    for pool in &snapshot.nodepools {
        let clusters: BTreeSet<String> = snapshot
            .members_of(pool)
            .filter(|md| per_namespace.contains_key(md.object.namespace()))
            .filter_map(|md| cluster_of(&md.object))
            .collect();
        if clusters.len() < 2 {
            continue;
        }
        let names: Vec<&str> = clusters.iter().map(String::as_str).collect();
        let class = pool.node_class.as_deref().unwrap_or("<node class>");
        out.push(Finding::new(
            Area::Setup,
            Cause::UnscopedSetup,
            Severity::Error,
            subject("NodePool", "", &pool.name),
            format!(
                "its member MachineDeployments belong to Clusters {}: a NodeClaim for this cluster's pods may be launched in another Cluster",
                names.join(", ")
            ),
            format!(
                "scope the node class to one Cluster: kubectl patch clusterapinodeclass {class} --type merge -p '{{\"spec\":{{\"scalableResourceSelector\":{{\"matchLabels\":{{\"{CLUSTER_NAME_LABEL}\":\"<this Cluster>\"}}}}}}}}' (and run the controller with --cluster-name)"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::flag;

    #[test]
    fn flags_in_both_forms() {
        let args: Vec<String> = ["run", "--namespace=capi", "--cluster-name", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(flag(&args, &["--cluster-name"]), Some("a"));
        assert_eq!(flag(&args, &["--namespace", "-n"]), Some("capi"));
        assert_eq!(flag(&args, &["--leader-elect"]), None);
    }
}
