//! What the loader settles once every object is in, looking across kinds: the RuntimeClass
//! overhead and scheduling of specs no admission saw, and DaemonSets sized by their newest pod.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::labels::{Operator, Requirement};
use super::super::pod::PodDemand;
use super::super::resources::Resources;
use super::super::snapshot::{PodRecord, Snapshot};
use super::super::taints::Toleration;

/// What a RuntimeClass adds to a spec that names it: `overhead.podFixed` and
/// `scheduling.nodeSelector` / `scheduling.tolerations`.
#[derive(Default)]
struct Class {
    overhead: Resources,
    node_selector: BTreeMap<String, String>,
    tolerations: Vec<Toleration>,
}

/// Reads a RuntimeClass's `scheduling`; an unreadable part is named in a warning and left out.
fn scheduling(
    obj: &super::super::object::RawObject,
    class: &mut Class,
    warnings: &mut Vec<String>,
) {
    let Some(sched) = obj.value.get("scheduling") else {
        return;
    };
    if let Some(sel) = sched
        .get("nodeSelector")
        .and_then(serde_json::Value::as_object)
    {
        for (k, v) in sel {
            match v.as_str() {
                Some(v) => {
                    class.node_selector.insert(k.clone(), v.to_string());
                }
                None => warnings.push(format!(
                    "RuntimeClass {}: scheduling.nodeSelector[{k}]: not a string: left out",
                    obj.name()
                )),
            }
        }
    }
    for (i, t) in sched
        .get("tolerations")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let read = serde_json::from_value::<k8s_openapi::api::core::v1::Toleration>(t.clone())
            .map_err(|e| e.to_string())
            .and_then(|t| Toleration::from_k8s(&t));
        match read {
            Ok(t) => class.tolerations.push(t),
            Err(e) => warnings.push(format!(
                "RuntimeClass {}: scheduling.tolerations[{i}]: {e}: left out",
                obj.name()
            )),
        }
    }
}

/// Applies a RuntimeClass to a spec no admission saw, as the RuntimeClass admission plugin
/// does at creation: the fixed overhead added, the class's nodeSelector merged in (a key the
/// spec already selects keeps the spec's value: admission would refuse a conflicting pod, and
/// an equal one adds nothing) and its tolerations appended unless already there.
fn apply_class(demand: &mut PodDemand, class: &Class) {
    demand.add_overhead(&class.overhead);
    for (k, v) in &class.node_selector {
        if !demand.node_selector.iter().any(|r| &r.key == k) {
            demand
                .node_selector
                .push(Requirement::new(k, Operator::In, &[v.as_str()]));
        }
    }
    for t in &class.tolerations {
        if !demand.tolerations.contains(t) {
            demand.tolerations.push(t.clone());
        }
    }
    demand.runtime_class = None;
}

/// Applies the RuntimeClass a spec names ([`apply_class`]: fixed overhead, nodeSelector,
/// tolerations) to every pod and DaemonSet whose `spec.overhead` is unset, as the API server's
/// RuntimeClass admission does when a pod is created (a pod listed from a cluster already
/// carries it all; a written input or a template does not). Karpenter reads the admitted spec
/// (core `utils/resources` `Ceiling` for the overhead). A RuntimeClass whose overhead cannot be
/// read is named in a warning and adds no overhead; a name no RuntimeClass has adds nothing.
pub(super) fn runtime_class_overhead(snap: &mut Snapshot) {
    let mut classes: BTreeMap<String, Class> = BTreeMap::new();
    let mut warnings = Vec::new();
    for obj in &snap.objects {
        if obj.group() != "node.k8s.io" || obj.kind != "RuntimeClass" {
            continue;
        }
        let fixed = obj
            .value
            .pointer("/overhead/podFixed")
            .and_then(serde_json::Value::as_object);
        let pairs = fixed
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)));
        let mut class = Class::default();
        match Resources::from_quantities(pairs) {
            Ok(r) => class.overhead = r,
            Err((name, e)) => warnings.push(format!(
                "RuntimeClass {}: overhead.podFixed[{name}]: {e}: its overhead is not counted",
                obj.name()
            )),
        }
        scheduling(obj, &mut class, &mut warnings);
        classes.insert(obj.name().to_string(), class);
    }
    snap.warnings.extend(warnings);
    if classes.is_empty() {
        return;
    }
    for pod in &mut snap.pods {
        let Some(class) = pod
            .demand
            .runtime_class
            .as_ref()
            .and_then(|c| classes.get(c))
        else {
            continue;
        };
        apply_class(Arc::make_mut(&mut Arc::make_mut(pod).demand), class);
    }
    for ds in &mut snap.daemonsets {
        if let Some(class) = ds.pod.runtime_class.as_ref().and_then(|c| classes.get(c)) {
            apply_class(&mut ds.pod, class);
        }
    }
}

/// Sizes each DaemonSet by its newest pod when one is in the input (a pod it controls, by
/// creation time), not by its template: a pod may differ from the template (a mutating
/// webhook, a LimitRange, a VPA). The template's required node affinity stays, since the
/// DaemonSet controller rewrites the pod's to pin it to its node. Mirrors core's
/// `Cluster.UpdateDaemonSet`/`GetDaemonSetPod` as `Provisioner.getDaemonSetPods` uses them
/// (v1.5 and v1.14 alike).
pub(super) fn daemonset_pods(snap: &mut Snapshot) {
    if snap.daemonsets.is_empty() {
        return;
    }
    // One pass over the pods: the newest pod of each DaemonSet, by namespace and name.
    let mut newest: BTreeMap<(&str, &str), &PodRecord> = BTreeMap::new();
    for p in &snap.pods {
        let Some(name) = p
            .owner
            .as_deref()
            .and_then(|o| o.strip_prefix("DaemonSet/"))
        else {
            continue;
        };
        let slot = newest
            .entry((p.demand.namespace.as_str(), name))
            .or_insert(p);
        if p.created > slot.created {
            *slot = p;
        }
    }
    if newest.is_empty() {
        return;
    }
    for ds in &mut snap.daemonsets {
        let Some(key) = ds.name.split_once('/') else {
            continue;
        };
        let Some(pod) = newest.get(&key) else {
            continue;
        };
        let mut demand = (*pod.demand).clone();
        demand.node_affinity = std::mem::take(&mut ds.pod.node_affinity);
        demand.preferred_node_affinity.clear();
        ds.pod = demand;
    }
}

/// A NodeClaim without the `cluster.x-k8s.io/machine` annotation whose `status.providerID` is
/// the `spec.providerID` of exactly one Machine is that Machine's (claims an earlier provider
/// release made carry no annotation): the provider's `Delete` looks a claim's Machine up by
/// providerID first (`cloudprovider.go` `findMachineForNodeClaim`). Without it such a claim's
/// Machine would count twice in its replicas and never be marked when the claim goes. An
/// ambiguous providerID (two Machines) binds nothing.
pub(super) fn machines_by_provider_id(snap: &mut Snapshot) {
    let mut by_pid: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for m in &snap.machines {
        if let Some(pid) = m.provider_id.as_deref().filter(|p| !p.is_empty()) {
            by_pid.entry(pid).or_default().push(m.key());
        }
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    for (i, c) in snap.nodeclaims.iter().enumerate() {
        if c.machine.is_some() {
            continue;
        }
        if let Some([key]) = c
            .provider_id
            .as_deref()
            .and_then(|p| by_pid.get(p))
            .map(Vec::as_slice)
        {
            found.push((i, key.clone()));
        }
    }
    for (i, key) in found {
        snap.nodeclaims[i].machine = Some(key);
    }
}
