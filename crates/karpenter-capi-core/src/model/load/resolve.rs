//! What the loader settles once every object is in, looking across kinds: the RuntimeClass
//! overhead of specs no admission sized, and DaemonSets sized by their newest pod.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::resources::Resources;
use super::super::snapshot::{PodRecord, Snapshot};

/// Adds `overhead.podFixed` of the RuntimeClass a spec names to the requests of every pod and
/// DaemonSet whose `spec.overhead` is unset, as the API server's RuntimeClass admission does
/// when a pod is created (a pod listed from a cluster already carries it; a written input or a
/// template does not). Karpenter reads the admitted `spec.overhead` (core `utils/resources`
/// `Ceiling`). A RuntimeClass whose overhead cannot be read is named in a warning and adds
/// nothing; a name no RuntimeClass has adds nothing either.
pub(super) fn runtime_class_overhead(snap: &mut Snapshot) {
    let mut classes: BTreeMap<String, Resources> = BTreeMap::new();
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
        match Resources::from_quantities(pairs) {
            Ok(r) => {
                classes.insert(obj.name().to_string(), r);
            }
            Err((name, e)) => warnings.push(format!(
                "RuntimeClass {}: overhead.podFixed[{name}]: {e}: its overhead is not counted",
                obj.name()
            )),
        }
    }
    snap.warnings.extend(warnings);
    if classes.is_empty() {
        return;
    }
    for pod in &mut snap.pods {
        let Some(overhead) = pod
            .demand
            .runtime_class
            .as_ref()
            .and_then(|c| classes.get(c))
        else {
            continue;
        };
        let demand = Arc::make_mut(&mut Arc::make_mut(pod).demand);
        demand.add_overhead(overhead);
        demand.runtime_class = None;
    }
    for ds in &mut snap.daemonsets {
        if let Some(overhead) = ds.pod.runtime_class.as_ref().and_then(|c| classes.get(c)) {
            ds.pod.add_overhead(overhead);
            ds.pod.runtime_class = None;
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
