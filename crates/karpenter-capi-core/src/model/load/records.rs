//! One object to one record: pods (with their containers), workloads expanded into the pods
//! their templates make, and nodes.

use super::*;

pub(super) fn template_spec(obj: &RawObject) -> Result<PodSpec, Error> {
    obj.typed::<PodSpec>("/spec/template/spec", "spec.template.spec")?
        .ok_or_else(|| {
            obj.error(
                "spec.template.spec",
                "missing: a workload needs a pod template",
            )
        })
}

pub(super) fn template_labels(obj: &RawObject) -> Labels {
    obj.value
        .pointer("/spec/template/metadata/labels")
        .and_then(|v| serde::Deserialize::deserialize(v).ok())
        .unwrap_or_default()
}

pub(super) fn expand_workload(
    obj: &RawObject,
    pods: &mut Vec<std::sync::Arc<PodRecord>>,
    expanded: &mut i64,
) -> Result<(), Error> {
    let (pointer, field) = if obj.kind == "Job" {
        ("/spec/parallelism", "spec.parallelism")
    } else {
        ("/spec/replicas", "spec.replicas")
    };
    let replicas = match obj.value.pointer(pointer) {
        None | Some(Value::Null) => 1,
        Some(v) => v
            .as_i64()
            .filter(|n| *n >= 0)
            .ok_or_else(|| obj.error(field, format!("expected a non-negative integer, got {v}")))?,
    };
    if replicas > MAX_EXPANDED_PODS.saturating_sub(*expanded) {
        return Err(obj.error(
            field,
            format!(
                "{replicas} would expand the input to more than {MAX_EXPANDED_PODS} pods in all \
                 ({} already); give the pods themselves (kubectl get pods -o yaml) or fewer replicas",
                *expanded
            ),
        ));
    }
    *expanded += replicas;
    let spec = template_spec(obj)?;
    let labels = template_labels(obj);
    for i in 0..replicas {
        let name = format!("{}-{i}", obj.name());
        let demand = PodDemand::from_spec(
            obj.namespace(),
            &name,
            labels.clone(),
            &spec,
            "spec.template.spec",
        )
        .map_err(|(f, e)| obj.error(f, e))?;
        let mut demand = demand;
        // A StatefulSet's pods use the claims `<template>-<pod>` of its volumeClaimTemplates.
        for tpl in obj
            .value
            .pointer("/spec/volumeClaimTemplates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = tpl.pointer("/metadata/name").and_then(Value::as_str) {
                demand.claims.push(crate::model::constraints::ClaimRef {
                    name: format!("{t}-{name}"),
                    storage_class: tpl
                        .pointer("/spec/storageClassName")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            }
        }
        pods.push(std::sync::Arc::new(PodRecord {
            limits: crate::model::pod::effective_limits(&spec),
            demand: demand.into(),
            node_name: None,
            marked_unschedulable: true,
            nominated: false,
            daemon: false,
            terminal: false,
            terminating: false,
            deleted_at: None,
            not_ready: false,
            grace_seconds: spec.termination_grace_period_seconds,
            mirror: false,
            uid: None,
            gated: false,
            owner: Some(format!("{}/{}", obj.kind, obj.name())),
            created: obj.meta.creation_timestamp.as_ref().map(|t| t.0),
            started: None,
            annotations: Default::default(),
            priority_class: spec.priority_class_name.clone(),
            priority: spec.priority,
            phase: None,
            containers: containers_of(&spec, None).into(),
        }));
    }
    Ok(())
}

/// A pod's record. The object is used up: its value is read by move (no string copied) and its
/// labels and annotations are taken, not cloned.
pub(super) fn pod_record(mut obj: RawObject) -> Result<PodRecord, Error> {
    let mut value = std::mem::take(&mut obj.value);
    let has_status = value.get("status").is_some();
    // The metadata was read already ([`RawObject::from_value`], the same type, so it reads
    // here too): not again.
    if let Value::Object(map) = &mut value {
        map.remove("metadata");
    }
    let pod: Pod = serde_json::from_value(value).map_err(|e| obj.error("spec", e.to_string()))?;
    let spec = pod.spec.unwrap_or_default();
    let labels = obj.meta.labels.take().unwrap_or_default();
    let demand = PodDemand::from_spec(obj.namespace(), obj.name(), labels, &spec, "spec")
        .map_err(|(f, e)| obj.error(f, e))?;
    let status = pod.status.unwrap_or_default();
    let containers = containers_of(&spec, status.container_statuses.as_deref());
    let conditions = status.conditions.unwrap_or_default();
    let scheduled = conditions.iter().find(|c| c.type_ == "PodScheduled");
    let marked_unschedulable = match scheduled {
        Some(c) => c.status == "False" && c.reason.as_deref() == Some("Unschedulable"),
        None => !has_status,
    };
    let controller = obj
        .meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .or_else(|| obj.meta.owner_references.iter().flatten().next());
    Ok(PodRecord {
        limits: crate::model::pod::effective_limits(&spec),
        demand: demand.into(),
        node_name: spec.node_name.filter(|n| !n.is_empty()),
        marked_unschedulable,
        nominated: status.nominated_node_name.is_some_and(|n| !n.is_empty()),
        daemon: controller.is_some_and(|r| r.kind == "DaemonSet" || r.kind == "Node"),
        terminal: matches!(status.phase.as_deref(), Some("Succeeded" | "Failed")),
        terminating: obj.meta.deletion_timestamp.is_some(),
        deleted_at: obj.meta.deletion_timestamp.as_ref().map(|t| t.0),
        not_ready: conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "False"),
        grace_seconds: spec.termination_grace_period_seconds,
        mirror: controller.is_some_and(|r| r.kind == "Node")
            || obj
                .meta
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")),
        uid: obj.meta.uid.take(),
        gated: spec.scheduling_gates.is_some_and(|g| !g.is_empty()),
        owner: controller.map(|r| format!("{}/{}", r.kind, r.name)),
        created: obj.meta.creation_timestamp.as_ref().map(|t| t.0),
        started: status.start_time.as_ref().map(|t| t.0),
        annotations: obj.meta.annotations.take().unwrap_or_default().into(),
        containers: containers.into(),
        phase: status.phase,
        priority: spec.priority,
        priority_class: spec.priority_class_name,
    })
}

/// The containers of a pod spec with their reported state, matched by name.
fn containers_of(
    spec: &PodSpec,
    statuses: Option<&[k8s_openapi::api::core::v1::ContainerStatus]>,
) -> Vec<ContainerRecord> {
    spec.containers
        .iter()
        .map(|c| {
            let status = statuses.into_iter().flatten().find(|s| s.name == c.name);
            ContainerRecord {
                name: c.name.clone(),
                image: c.image.clone().unwrap_or_default(),
                args: c
                    .command
                    .iter()
                    .flatten()
                    .chain(c.args.iter().flatten())
                    .cloned()
                    .collect(),
                ready: status.is_some_and(|s| s.ready),
                restart_count: status.map_or(0, |s| s.restart_count),
                waiting: status
                    .and_then(|s| s.state.as_ref())
                    .and_then(|st| st.waiting.as_ref())
                    .map(|w| {
                        (
                            w.reason.clone().unwrap_or_default(),
                            w.message.clone().unwrap_or_default(),
                        )
                    }),
                last_terminated: status
                    .and_then(|s| s.last_state.as_ref())
                    .and_then(|st| st.terminated.as_ref())
                    .map(|t| (t.reason.clone().unwrap_or_default(), t.exit_code)),
            }
        })
        .collect()
}

pub(super) fn node_record(obj: &RawObject) -> Result<NodeRecord, Error> {
    let node: Node = serde::Deserialize::deserialize(&obj.value)
        .map_err(|e| obj.error("spec", e.to_string()))?;
    let spec = node.spec.unwrap_or_default();
    let status = node.status.unwrap_or_default();
    let resources = |list: Option<
        BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >,
                     field: &str| {
        let list = list.unwrap_or_default();
        Resources::from_quantities(list.iter().map(|(k, v)| (k.as_str(), v.0.as_str())))
            .map_err(|(name, e)| obj.error(format!("{field}[{name}]"), e.to_string()))
    };
    let capacity = resources(status.capacity, "status.capacity")?;
    let allocatable = match status.allocatable {
        Some(a) => resources(Some(a), "status.allocatable")?,
        None => capacity.clone(),
    };
    let taints = spec
        .taints
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| Taint::from_k8s(t).map_err(|e| obj.error(format!("spec.taints[{i}]"), e)))
        .collect::<Result<Vec<_>, _>>()?;
    let ready = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status == "True");
    let mut labels = labels_of(&obj.meta);
    labels
        .entry(crate::vocab::keys::HOSTNAME.to_string())
        .or_insert_with(|| obj.name().to_string());
    Ok(NodeRecord {
        finalizers: obj.meta.finalizers.clone().unwrap_or_default(),
        name: obj.name().to_string(),
        labels,
        annotations: obj.meta.annotations.clone().unwrap_or_default().into(),
        taints,
        allocatable,
        capacity,
        provider_id: spec.provider_id.filter(|p| !p.is_empty()),
        ready,
        unschedulable: spec.unschedulable.unwrap_or(false),
        created: obj.meta.creation_timestamp.as_ref().map(|t| t.0),
        deleting: obj.meta.deletion_timestamp.is_some(),
        deleted_at: obj.meta.deletion_timestamp.as_ref().map(|t| t.0),
    })
}
