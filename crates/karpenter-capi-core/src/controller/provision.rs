//! Provisioning: batch the provisionable pods, place them with the `cost` strategy on existing
//! nodes, then in-flight NodeClaims, then new NodeClaims, and write each new NodeClaim as
//! Karpenter would (generateName, owner, labels, requirements, requests, hash annotations).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::Config;
use super::action::Action;
use super::fnv;
use crate::model::labels::{Labels, Operator, is_restricted_label};
use crate::model::nodepool::NodePool;
use crate::model::resources::Resources;
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::cost::{Foreseeing, foresight};
use crate::sched::strategy::{NewNode, Relaxing, Strategy};
use crate::vocab::keys;
use crate::vocab::keys::NODE_CLASS_LABEL;
use crate::vocab::keys::TEMPLATE_HASH_ANNOTATION;
use crate::vocab::keys::{MACHINE_DEPLOYMENT_ANNOTATION, NODEPOOL_HASH_ANNOTATION};

/// Whether the batch of provisionable pods is closed: the newest pod has been pending for the
/// idle window, or the oldest for the max window. Pods without a creation time count as old.
pub(crate) fn batch_ready(
    snapshot: &Snapshot,
    pods: &[usize],
    now: Timestamp,
    config: &Config,
) -> bool {
    // Milliseconds: the windows are a second or so.
    let ages: Vec<i64> = pods
        .iter()
        .map(|&p| {
            snapshot.pods[p]
                .created
                .map(|c| now.as_millisecond() - c.as_millisecond())
                .unwrap_or(i64::MAX)
        })
        .collect();
    let newest = ages.iter().copied().min().unwrap_or(i64::MAX);
    let oldest = ages.iter().copied().max().unwrap_or(i64::MAX);
    newest >= config.batch_idle.as_secs_i64().saturating_mul(1000)
        || oldest >= config.batch_max.as_secs_i64().saturating_mul(1000)
}

/// The provisioning actions for the snapshot's provisionable pods, plus notes on pods that
/// fit nowhere.
pub(crate) fn provision(
    snapshot: &Snapshot,
    now: Timestamp,
    config: &Config,
) -> (Vec<Action>, Vec<String>) {
    let pods: Vec<usize> = (0..snapshot.pods.len())
        .filter(|&i| snapshot.pods[i].is_provisionable())
        .collect();
    if pods.is_empty() {
        return (Vec::new(), Vec::new());
    }
    if !batch_ready(snapshot, &pods, now, config) {
        return (
            Vec::new(),
            vec![format!(
                "batching {} pending pod(s): waiting for the batch window to close",
                pods.len()
            )],
        );
    }
    // The recent arrivals (pod creation times) size the new nodes for a growing load.
    let forecast = foresight::observe(snapshot, &pods, now);
    let placement = Relaxing(Foreseeing(forecast)).plan(snapshot, &pods);
    let mut notes: Vec<String> = placement.sizing.iter().map(ToString::to_string).collect();
    let actions = placement
        .new_nodes
        .iter()
        .filter(|n| {
            // A claim whose truncated instance types miss its pool's minValues is not created;
            // its pods wait with the reason (core `Results.TruncateInstanceTypes`).
            let unmet = crate::sched::min_values::truncation_unmet(snapshot, n);
            if let Some(unfit) = &unmet {
                notes.extend(n.pods.iter().map(|&p| {
                    let why = crate::sched::Rejection {
                        subject: n.offering.node_pool.clone(),
                        unfit: unfit.clone(),
                    };
                    format!(
                        "pod {} fits no flavor: {why}",
                        snapshot.pods[p].demand.key()
                    )
                }));
            }
            unmet.is_none()
        })
        .filter_map(|n| {
            let pool = snapshot
                .nodepools
                .iter()
                .find(|p| p.name == n.offering.node_pool)?;
            Some(create_node_claim(snapshot, pool, n, "Provisioning"))
        })
        .collect();
    notes.extend(placement.unschedulable.iter().map(|(p, reasons)| {
        let why: Vec<String> = reasons.iter().map(|r| r.to_string()).collect();
        format!(
            "pod {} fits no flavor: {}",
            snapshot.pods[*p].demand.key(),
            why.join("; ")
        )
    }));
    (actions, notes)
}

/// A `createNodeClaim` action for a planned node.
pub(crate) fn create_node_claim(
    snapshot: &Snapshot,
    pool: &NodePool,
    node: &NewNode,
    reason: &str,
) -> Action {
    let flavor = &node.offering.flavor;
    let pods: Vec<String> = node
        .pods
        .iter()
        .map(|&p| snapshot.pods[p].demand.key())
        .collect();
    Action::CreateNodeClaim {
        target: format!("NodeClaim/{}-", pool.name),
        node_pool: pool.name.clone(),
        machine_deployment: flavor.machine_deployment.clone(),
        instance_type: flavor.instance_type.clone(),
        pods,
        price_per_hour: flavor.price,
        reason: reason.to_string(),
        manifest: {
            let types = crate::sched::min_values::claim_instance_types(snapshot, node);
            let mut m = node_claim_manifest_listing(pool, node, types);
            // The MachineDeployment's template as it is now: a later change to it is drift.
            if let Some(md) = snapshot
                .machine_deployments
                .iter()
                .find(|m| m.key() == flavor.machine_deployment)
            {
                m["metadata"]["annotations"][TEMPLATE_HASH_ANNOTATION] = json!(template_hash(md));
            }
            m
        },
    }
}

/// A claim requirement with its key's `minValues` from the pool (core keeps them on the
/// NodeClaim, `NewNodeSelectorRequirementsWithMinValues`), unless it is an `In` listing fewer
/// values than that (a value the plan narrowed it to), which the CRD refuses.
fn with_min_values(mut requirement: Value, pool: &NodePool) -> Value {
    let key = requirement["key"].as_str().unwrap_or_default();
    if let Some(&min) = pool.min_values.get(key) {
        let listed = requirement["values"].as_array().map_or(0, Vec::len);
        if requirement["operator"] != "In" || listed >= min {
            requirement["minValues"] = json!(min);
        }
    }
    requirement
}

/// A stable hash (FNV-1a) of a MachineDeployment's `spec.template`.
pub(crate) fn template_hash(md: &crate::model::snapshot::MachineDeploymentRecord) -> String {
    let template = md
        .object
        .value
        .pointer("/spec/template")
        .map(|t| t.to_string())
        .unwrap_or_default();
    fnv::hex(&template)
}

fn resource_list(r: &Resources) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("cpu".into(), json!(format!("{}m", r.cpu_millis)));
    m.insert("memory".into(), json!(r.memory_bytes.to_string()));
    if r.ephemeral_storage_bytes > 0 {
        m.insert(
            "ephemeral-storage".into(),
            json!(r.ephemeral_storage_bytes.to_string()),
        );
    }
    m.insert("pods".into(), json!(r.pods.to_string()));
    for (k, v) in &r.extended {
        m.insert(k.clone(), json!(v.to_string()));
    }
    Value::Object(m)
}

/// The labels of a NodeClaim: every label the planner counted on for its offering (the
/// flavor's — the MachineDeployment's propagated template labels and its
/// `capacity.cluster-autoscaler.kubernetes.io/labels`, as upstream's
/// `nodeLabelsFromMachineDeployment` in the provider's `cloudprovider.go` — then the NodePool's
/// template labels and single-valued requirements, which win as in core's
/// `nodeclaimtemplate.go`/`PopulateNodeClaimDetails`), the pool and node-class labels, and the
/// capacity type the provider's single offering has (`on-demand`) when nothing set one; minus
/// Karpenter's restricted labels (`karpenter.sh` domain other than its well-known keys,
/// `kubernetes.io/hostname`). Registration copies them to the Node.
pub(crate) fn claim_labels(pool: &NodePool, offering: &crate::sched::catalog::Offering) -> Labels {
    let mut labels: Labels = offering.flavor.labels.clone();
    labels.extend(pool.node_labels());
    for (k, v) in &offering.labels {
        labels.entry(k.clone()).or_insert_with(|| v.clone());
    }
    labels.insert(keys::NODEPOOL.into(), pool.name.clone());
    labels.insert(
        keys::INSTANCE_TYPE.into(),
        offering.flavor.instance_type.clone(),
    );
    labels
        .entry(keys::CAPACITY_TYPE.into())
        .or_insert_with(|| "on-demand".to_string());
    if let Some(class) = &pool.node_class {
        labels.insert(NODE_CLASS_LABEL.into(), class.clone());
    }
    labels.retain(|k, _| !is_restricted_label(k));
    labels
}

/// The NodeClaim Karpenter would create for a planned node (`generateName`, labels, hashes,
/// requirements, requests) with our `karpenter.sh/termination` finalizer.
pub(super) fn node_claim_manifest(pool: &NodePool, node: &NewNode) -> Value {
    node_claim_manifest_listing(pool, node, None)
}

/// [`node_claim_manifest`], its instance-type requirement listing `instance_types` when given
/// (a pool with `minValues`: the flavors that hold the node's pods,
/// [`crate::sched::min_values::claim_instance_types`]), and each requirement carrying its
/// key's `minValues` where its values allow (the CRD wants an `In` to list at least that many).
fn node_claim_manifest_listing(
    pool: &NodePool,
    node: &NewNode,
    instance_types: Option<Vec<String>>,
) -> Value {
    let o = &node.offering;
    let f = &o.flavor;
    let labels = claim_labels(pool, o);
    let mut annotations = serde_json::Map::new();
    for (k, v) in &pool.annotations {
        annotations.insert(k.clone(), json!(v));
    }
    annotations.insert(
        NODEPOOL_HASH_ANNOTATION.into(),
        json!(super::drift::nodepool_hash(pool)),
    );
    annotations.insert(
        keys::HASH_VERSION_ANNOTATION.into(),
        json!(super::drift::HASH_VERSION),
    );
    annotations.insert(
        MACHINE_DEPLOYMENT_ANNOTATION.into(),
        json!(f.machine_deployment),
    );
    let mut requirements: Vec<Value> = pool
        .requirements
        .iter()
        .filter(|r| r.key != keys::INSTANCE_TYPE)
        .map(|r| {
            // A multi-valued requirement the flavor leaves open is narrowed to the value the
            // plan chose (`sched::catalog`), which the claim's label carries.
            let values = match o.labels.get(&r.key) {
                Some(v)
                    if r.operator == Operator::In
                        && !f.labels.contains_key(&r.key)
                        && r.values.contains(v) =>
                {
                    vec![v.clone()]
                }
                _ => r.values.clone(),
            };
            with_min_values(
                json!({"key": r.key, "operator": r.operator.to_string(), "values": values}),
                pool,
            )
        })
        .collect();
    let types = instance_types.unwrap_or_else(|| vec![f.instance_type.clone()]);
    requirements.push(with_min_values(
        json!({"key": keys::INSTANCE_TYPE, "operator": "In", "values": types}),
        pool,
    ));
    requirements.push(json!({"key": keys::NODEPOOL, "operator": "In", "values": [pool.name]}));
    // Template labels, the node class and the capacity type are requirements too (core's
    // NodeClaimTemplate adds its labels as requirements; the offering adds the capacity type).
    for (k, v) in &labels {
        let constrained = pool.requirements.iter().any(|r| &r.key == k)
            || k == keys::INSTANCE_TYPE
            || k == keys::NODEPOOL;
        if !constrained
            && (pool.labels.contains_key(k) || k == NODE_CLASS_LABEL || k == keys::CAPACITY_TYPE)
        {
            requirements.push(json!({"key": k, "operator": "In", "values": [v]}));
        }
    }
    let mut spec = json!({
        "nodeClassRef": pool.node_class_ref.clone().unwrap_or_else(|| json!({
            "group": "karpenter.cluster.x-k8s.io", "kind": "ClusterAPINodeClass", "name": pool.node_class.clone().unwrap_or_else(|| "default".into())
        })),
        "requirements": requirements,
        "resources": {"requests": resource_list(&node.requested.plus(&o.overhead))},
    });
    let taints: Vec<Value> = pool.taints.iter().map(taint_json).collect();
    if !taints.is_empty() {
        spec["taints"] = json!(taints);
    }
    let startup: Vec<Value> = pool.startup_taints.iter().map(taint_json).collect();
    if !startup.is_empty() {
        spec["startupTaints"] = json!(startup);
    }
    if let Some(e) = &pool.expire_after {
        spec["expireAfter"] = json!(e);
    }
    if let Some(t) = &pool.termination_grace_period {
        spec["terminationGracePeriod"] = json!(t);
    }
    let mut metadata = json!({
        "generateName": format!("{}-", pool.name),
        "labels": labels,
        "annotations": annotations,
        // Held until its Machine is being deleted (see `termination`).
        "finalizers": [keys::TERMINATION_FINALIZER],
    });
    if let Some(uid) = &pool.uid {
        metadata["ownerReferences"] = json!([{
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": pool.name, "uid": uid, "blockOwnerDeletion": true
        }]);
    }
    // What Karpenter knows at launch (status is dropped on create; the executor writes it
    // right after): Unknown conditions and the flavor's capacity. Allocatable is the flavor's
    // capacity too, as upstream's provider and Cluster Autoscaler assume.
    let status = json!({
        "conditions": serde_json::to_value(super::action::initial_conditions()).unwrap_or_default(),
        "capacity": resource_list(&f.capacity),
        "allocatable": resource_list(&f.capacity),
    });
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": metadata, "spec": spec, "status": status})
}

fn taint_json(t: &crate::model::taints::Taint) -> Value {
    let mut v = json!({"key": t.key, "effect": t.effect.to_string()});
    if !t.value.is_empty() {
        v["value"] = json!(t.value);
    }
    v
}
