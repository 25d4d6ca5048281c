//! `init --from-cluster`: new nodes join exactly as the cluster's own workers do. The worker
//! MachineDeployment's KubeadmConfigTemplate and infrastructure machine template (any kind) are
//! cloned whole — node name, kubelet arguments, files, pre/post kubeadm commands, users and keys,
//! networks, security groups — and only two things change: the bootstrap gains the
//! `karpenter.sh/unregistered:NoExecute` taint (existing taints kept), and the machine template
//! gets the flavor. The objects come in as data (the shell fetched them); nothing here does I/O.

use serde_json::{Value, json};

use super::FlavorSpec;
use super::infra::{self, FlavorField};
use crate::error::Error;
use crate::model::taints::Taint;
use crate::vocab::keys::{CLUSTER_NAME_LABEL, MEMBER_LABEL, UNREGISTERED_TAINT};
use crate::vocab::kinds::KUBEADM_CONFIG_TEMPLATE;

/// A template read from the management cluster: its identity and `spec.template.spec`.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTemplate {
    /// `apiVersion`, as served when it was read.
    pub(crate) api_version: String,
    /// `kind`.
    pub(crate) kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.template.spec`, whole.
    pub spec: Value,
}

impl SourceTemplate {
    /// The template of an object as the API serves it; an error names what is missing.
    pub fn from_object(obj: &Value) -> Result<SourceTemplate, Error> {
        let field = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_string);
        let name = field("/metadata/name").unwrap_or_default();
        let (Some(api_version), Some(kind)) = (field("/apiVersion"), field("/kind")) else {
            return Err(Error::usage(format!(
                "template {name:?}: the object has no apiVersion or kind"
            )));
        };
        let Some(spec) = obj.pointer("/spec/template/spec").cloned() else {
            return Err(Error::usage(format!(
                "{kind} {name}: no spec.template.spec to clone"
            )));
        };
        Ok(SourceTemplate {
            api_version,
            kind,
            name,
            spec,
        })
    }

    /// The API group of its `apiVersion`.
    pub(crate) fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }
}

/// What `--from-cluster` clones: the worker's machine template, and its KubeadmConfigTemplate
/// when it bootstraps with kubeadm.
#[derive(Debug, Clone, PartialEq)]
pub struct CloneSource {
    /// The worker MachineDeployment the templates belong to.
    pub machine_deployment: String,
    /// The infrastructure machine template.
    pub infrastructure: SourceTemplate,
    /// The KubeadmConfigTemplate (None when the worker bootstraps otherwise: init then generates one).
    pub bootstrap: Option<SourceTemplate>,
    /// The worker MachineDeployment's own fields the members copy ([`machine_deployment_fields`]).
    pub machine_deployment_fields: MachineDeploymentFields,
}

/// The fields of the worker MachineDeployment that say how its Machines live and go, copied into
/// every member so Karpenter's nodes are placed, drained and deleted as the workers are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineDeploymentFields {
    /// Fields of `spec` (v1beta1's `minReadySeconds`).
    pub spec: serde_json::Map<String, Value>,
    /// Fields of `spec.template.spec`: the failure domain, the drain, volume-detach and deletion
    /// timeouts (v1beta1's `node*Timeout`, v1beta2's `deletion`), v1beta2's `minReadySeconds`,
    /// the readiness gates.
    pub template_spec: serde_json::Map<String, Value>,
}

/// `spec` fields copied from the worker MachineDeployment. Not copied: replicas, selector,
/// clusterName, the rollout and deletion-order strategy (members roll out OnDelete and our
/// controller picks the Machine to remove), paused, rolloutAfter, naming and remediation.
const COPIED_SPEC: &[&str] = &["minReadySeconds"];

/// `spec.template.spec` fields copied from the worker MachineDeployment. Not copied: the
/// bootstrap and infrastructure references, clusterName, version (init's own), providerID,
/// and Machine taints (a NodePool would not know them).
const COPIED_TEMPLATE_SPEC: &[&str] = &[
    "failureDomain",
    "nodeDrainTimeout",
    "nodeVolumeDetachTimeout",
    "nodeDeletionTimeout",
    "deletion",
    "minReadySeconds",
    "readinessGates",
];

/// The fields of a worker MachineDeployment (as served, at the Cluster API version init writes)
/// that the members copy.
pub fn machine_deployment_fields(md: &Value) -> MachineDeploymentFields {
    let pick = |from: Option<&Value>, names: &[&str]| -> serde_json::Map<String, Value> {
        names
            .iter()
            .filter_map(|n| {
                let v = from?.get(*n)?;
                (!v.is_null()).then(|| (n.to_string(), v.clone()))
            })
            .collect()
    };
    MachineDeploymentFields {
        spec: pick(md.get("spec"), COPIED_SPEC),
        template_spec: pick(md.pointer("/spec/template/spec"), COPIED_TEMPLATE_SPEC),
    }
}

/// A reference from a MachineDeployment to a template: v1beta2 names the group, v1beta1 the
/// apiVersion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRef {
    /// The API group.
    pub group: String,
    /// The apiVersion when the reference gives one (v1beta1).
    pub api_version: Option<String>,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
}

impl TemplateRef {
    /// The apiVersions to read it at, first to last: the reference's own, else `preferred`
    /// versions of its group (the first that serves the kind wins).
    pub fn api_versions(&self, preferred: &[&str]) -> Vec<String> {
        match &self.api_version {
            Some(v) => vec![v.clone()],
            None => {
                let mut out: Vec<String> = Vec::new();
                for v in preferred {
                    let candidate = format!("{}/{v}", self.group);
                    if !out.contains(&candidate) {
                        out.push(candidate);
                    }
                }
                out
            }
        }
    }
}

/// The reference at `pointer` of a MachineDeployment (`/spec/template/spec/infrastructureRef`
/// or `/spec/template/spec/bootstrap/configRef`).
pub fn template_ref(md: &Value, pointer: &str) -> Option<TemplateRef> {
    let r = md.pointer(pointer)?;
    let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    let api_version = text("apiVersion");
    let group = match (text("apiGroup"), &api_version) {
        (Some(g), _) => g,
        (None, Some(v)) => v.rsplit_once('/').map_or("", |(g, _)| g).to_string(),
        (None, None) => return None,
    };
    Some(TemplateRef {
        group,
        api_version,
        kind: text("kind")?,
        name: text("name")?,
    })
}

/// The MachineDeployment whose nodes are the cluster's workers: the first by name among those
/// of `cluster` that are not Karpenter members (members are ours, and cloning them would copy
/// a clone). None when there is none.
pub fn worker_machine_deployment<'a>(mds: &'a [Value], cluster: &str) -> Option<&'a Value> {
    let mut workers: Vec<&Value> = mds
        .iter()
        .filter(|md| {
            let labels = md.pointer("/metadata/labels");
            let ours = labels.and_then(|l| l.get(MEMBER_LABEL)).is_some();
            let of_cluster = labels
                .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                .and_then(Value::as_str)
                == Some(cluster)
                || md.pointer("/spec/clusterName").and_then(Value::as_str) == Some(cluster);
            !ours && of_cluster
        })
        .collect();
    workers.sort_by_key(|md| md.pointer("/metadata/name").and_then(Value::as_str));
    workers.first().copied()
}

/// Whether a reference names a KubeadmConfigTemplate (the only bootstrap whose taints init
/// knows how to set).
pub fn is_kubeadm(r: &TemplateRef) -> bool {
    r.kind == KUBEADM_CONFIG_TEMPLATE.kind
}

/// The cloned KubeadmConfigTemplate's `spec.template.spec`: the worker's, whole, with
/// `taints` (the unregistered taint first, then `extra`) added to
/// `joinConfiguration.nodeRegistration.taints` where the worker has no taint of that key.
/// A worker taint with the unregistered key gets the NoExecute effect Karpenter expects.
/// The kubelet's `max-pods` is set to the flavor's pod capacity (`max_pods`, what the member's
/// capacity annotation tells the scheduler), as init's own template sets it, replacing the
/// worker's: kubeletExtraArgs is a map in v1beta1 and a `{name, value}` list in v1beta2
/// (`api_version`, the template's, decides when the worker sets no argument).
pub(crate) fn bootstrap_spec(
    worker: &Value,
    extra: &[String],
    max_pods: i64,
    api_version: &str,
) -> Result<Value, Error> {
    let mut spec = worker.clone();
    let mut wanted = vec![taint_value(UNREGISTERED_TAINT)?];
    for t in extra {
        wanted.push(taint_value(t)?);
    }
    let Some(root) = spec.as_object_mut() else {
        return Err(Error::usage(
            "KubeadmConfigTemplate: spec.template.spec is not an object",
        ));
    };
    let registration = root
        .entry("joinConfiguration")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .and_then(|j| {
            j.entry("nodeRegistration")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        })
        .ok_or_else(|| {
            Error::usage(
                "KubeadmConfigTemplate: joinConfiguration.nodeRegistration is not an object",
            )
        })?;
    let taints = registration
        .entry("taints")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| {
            Error::usage(
                "KubeadmConfigTemplate: joinConfiguration.nodeRegistration.taints is not a list",
            )
        })?;
    for w in wanted {
        match taints.iter_mut().find(|t| t.get("key") == w.get("key")) {
            Some(existing) if w.get("key") == Some(&json!(taint_key(UNREGISTERED_TAINT))) => {
                existing["effect"] = w["effect"].clone();
            }
            Some(_) => {}
            None => taints.push(w),
        }
    }
    let list_form = api_version.ends_with("/v1beta2");
    let args = registration
        .entry("kubeletExtraArgs")
        .or_insert_with(|| if list_form { json!([]) } else { json!({}) });
    let pods = json!(max_pods.to_string());
    match args {
        Value::Object(map) => {
            map.insert("max-pods".to_string(), pods);
        }
        Value::Array(list) => {
            match list
                .iter_mut()
                .find(|a| a.get("name").and_then(Value::as_str) == Some("max-pods"))
            {
                Some(a) => a["value"] = pods,
                None => list.push(json!({"name": "max-pods", "value": pods})),
            }
        }
        _ => {
            return Err(Error::usage(
                "KubeadmConfigTemplate: joinConfiguration.nodeRegistration.kubeletExtraArgs is neither a map nor a list",
            ));
        }
    }
    Ok(spec)
}

/// The cloned machine template's `spec.template.spec` for one flavor: the worker's, whole, with
/// only the flavor's field set.
pub(crate) fn infrastructure_spec(
    worker: &Value,
    field: FlavorField,
    flavor: &FlavorSpec,
) -> Value {
    let mut spec = worker.clone();
    if let Value::Object(map) = &mut spec {
        match field {
            FlavorField::InstanceType(f) => {
                map.insert(f.to_string(), json!(flavor.instance_type));
            }
            FlavorField::CpuMemory => {
                map.insert("numCPUs".to_string(), json!(flavor.cpu_millis / 1000));
                map.insert("memoryMiB".to_string(), json!(mib(flavor.memory_bytes)));
            }
            FlavorField::None => {}
        }
    }
    spec
}

/// Where the flavor goes in a cloned template: the known provider's field, else (a kind init
/// has no table entry for) the first instance-type field any known provider uses that the
/// worker's spec has; `None` when the spec has none (a provider without machine sizes).
pub(crate) fn flavor_field(kind: &str, spec: &Value) -> FlavorField {
    if let Some(known) = infra::KINDS.iter().find(|k| k.kind == kind) {
        return known.flavor_field;
    }
    let has = |f: &str| spec.get(f).is_some();
    if has("numCPUs") && has("memoryMiB") {
        return FlavorField::CpuMemory;
    }
    infra::KINDS
        .iter()
        .filter_map(|k| k.instance_type_field())
        .chain(["machineType", "serverType", "size"])
        .find(|f| has(f))
        .map_or(FlavorField::None, FlavorField::InstanceType)
}

/// Bytes in MiB, rounded up.
pub(crate) fn mib(bytes: i64) -> i64 {
    bytes / (1 << 20) + i64::from(bytes % (1 << 20) != 0)
}

fn taint_key(text: &str) -> &str {
    text.split([':', '=']).next().unwrap_or(text)
}

/// A taint as kubeadm's `nodeRegistration.taints` entry.
pub(crate) fn taint_value(text: &str) -> Result<Value, Error> {
    let t = Taint::parse(text).map_err(Error::usage)?;
    let mut v = json!({"key": t.key, "effect": t.effect.to_string()});
    if !t.value.is_empty() {
        v["value"] = json!(t.value);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1BETA2: &str = "bootstrap.cluster.x-k8s.io/v1beta2";
    const V1BETA1: &str = "bootstrap.cluster.x-k8s.io/v1beta1";

    #[test]
    fn existing_taints_are_kept_and_ours_added_once() {
        let worker = json!({"joinConfiguration": {"nodeRegistration": {
            "name": "{{ local_hostname }}",
            "kubeletExtraArgs": [{"name": "max-pods", "value": "110"}],
            "taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}}});
        let spec = bootstrap_spec(&worker, &[], 110, V1BETA2).unwrap();
        assert_eq!(
            spec["joinConfiguration"]["nodeRegistration"]["taints"],
            json!([{"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
                   {"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
        );
        // Cloning a clone adds nothing; a wrong effect on our key is corrected.
        assert_eq!(bootstrap_spec(&spec, &[], 110, V1BETA2).unwrap(), spec);
        let wrong = json!({"joinConfiguration": {"nodeRegistration": {"taints": [
            {"key": "karpenter.sh/unregistered", "effect": "NoSchedule"}]}}});
        assert_eq!(
            bootstrap_spec(&wrong, &[], 110, V1BETA2).unwrap()["joinConfiguration"]["nodeRegistration"]
                ["taints"],
            json!([{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
        );
        // No joinConfiguration at all: one is made for the taint and max-pods.
        assert_eq!(
            bootstrap_spec(
                &json!({}),
                &["gpu=true:NoSchedule".to_string()],
                110,
                V1BETA2
            )
            .unwrap(),
            json!({"joinConfiguration": {"nodeRegistration": {
                "taints": [
                    {"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
                    {"key": "gpu", "value": "true", "effect": "NoSchedule"}],
                "kubeletExtraArgs": [{"name": "max-pods", "value": "110"}]}}})
        );
        assert_eq!(
            bootstrap_spec(&json!([]), &[], 110, V1BETA2)
                .unwrap_err()
                .to_string(),
            "KubeadmConfigTemplate: spec.template.spec is not an object"
        );
    }

    #[test]
    fn max_pods_is_the_flavors_in_either_form_of_kubelet_args() {
        let args =
            |spec: Value| spec["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"].clone();
        // v1beta2's list: the worker's value replaced in place, its other arguments kept.
        let worker = json!({"joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [
            {"name": "cloud-provider", "value": "external"}, {"name": "max-pods", "value": "110"}]}}});
        assert_eq!(
            args(bootstrap_spec(&worker, &[], 58, V1BETA2).unwrap()),
            json!([{"name": "cloud-provider", "value": "external"}, {"name": "max-pods", "value": "58"}])
        );
        // v1beta1's map; a worker without arguments gets its version's form.
        let worker = json!({"joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {
            "cloud-provider": "external"}}}});
        assert_eq!(
            args(bootstrap_spec(&worker, &[], 58, V1BETA1).unwrap()),
            json!({"cloud-provider": "external", "max-pods": "58"})
        );
        assert_eq!(
            args(bootstrap_spec(&json!({}), &[], 58, V1BETA1).unwrap()),
            json!({"max-pods": "58"})
        );
    }

    #[test]
    fn the_workers_placement_and_deletion_fields_are_copied_and_nothing_else() {
        let md = json!({"spec": {"replicas": 3, "minReadySeconds": 30, "paused": true,
            "strategy": {"type": "RollingUpdate"},
            "template": {"spec": {"clusterName": "c", "version": "v1.36.1", "providerID": "x",
                "failureDomain": "nova", "nodeDrainTimeout": "10m", "nodeVolumeDetachTimeout": "5m",
                "nodeDeletionTimeout": "20s", "readinessGates": [{"conditionType": "Ready"}],
                "bootstrap": {}, "infrastructureRef": {}}}}});
        let f = machine_deployment_fields(&md);
        assert_eq!(Value::Object(f.spec), json!({"minReadySeconds": 30}));
        assert_eq!(
            Value::Object(f.template_spec),
            json!({"failureDomain": "nova", "nodeDrainTimeout": "10m", "nodeVolumeDetachTimeout": "5m",
                "nodeDeletionTimeout": "20s", "readinessGates": [{"conditionType": "Ready"}]})
        );
        assert_eq!(
            machine_deployment_fields(&json!({})),
            MachineDeploymentFields::default()
        );
    }

    #[test]
    fn the_worker_is_the_first_non_member_of_the_cluster() {
        let md = |name: &str, cluster: &str, member: bool| {
            let mut labels = json!({"cluster.x-k8s.io/cluster-name": cluster});
            if member {
                labels[MEMBER_LABEL] = json!("");
            }
            json!({"metadata": {"name": name, "labels": labels}})
        };
        let mds = vec![
            md("capi-ovh-md-1", "capi-ovh", false),
            md("capi-ovh-karpenter-c3-4", "capi-ovh", true),
            md("aaa-other", "other", false),
            md("capi-ovh-md-0", "capi-ovh", false),
        ];
        let w = worker_machine_deployment(&mds, "capi-ovh").unwrap();
        assert_eq!(w["metadata"]["name"], "capi-ovh-md-0");
        assert!(worker_machine_deployment(&mds[1..2], "capi-ovh").is_none());
    }

    #[test]
    fn references_of_both_api_versions() {
        let v2 = json!({"spec": {"template": {"spec": {"infrastructureRef": {
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "w"}}}}});
        let r = template_ref(&v2, "/spec/template/spec/infrastructureRef").unwrap();
        assert_eq!(
            r.api_versions(&["v1beta2", "v1beta1", "v1beta2"]),
            vec![
                "infrastructure.cluster.x-k8s.io/v1beta2",
                "infrastructure.cluster.x-k8s.io/v1beta1"
            ]
        );
        let v1 = json!({"spec": {"template": {"spec": {"bootstrap": {"configRef": {
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "w"}}}}}});
        let r = template_ref(&v1, "/spec/template/spec/bootstrap/configRef").unwrap();
        assert_eq!(r.group, "bootstrap.cluster.x-k8s.io");
        assert!(is_kubeadm(&r));
        assert_eq!(
            r.api_versions(&["v1beta2"]),
            vec!["bootstrap.cluster.x-k8s.io/v1beta1"]
        );
    }

    #[test]
    fn unknown_kinds_get_the_flavor_in_the_field_they_have() {
        assert_eq!(
            flavor_field("OpenStackMachineTemplate", &json!({})),
            FlavorField::InstanceType("flavor")
        );
        assert_eq!(
            flavor_field("IonosCloudMachineTemplate", &json!({"serverType": "x"})),
            FlavorField::InstanceType("serverType")
        );
        assert_eq!(
            flavor_field(
                "ProxmoxMachineTemplate",
                &json!({"numCPUs": 2, "memoryMiB": 4096})
            ),
            FlavorField::CpuMemory
        );
        assert_eq!(
            flavor_field("ByoMachineTemplate", &json!({"installer": {}})),
            FlavorField::None
        );
    }
}
