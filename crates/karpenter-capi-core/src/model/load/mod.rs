//! Turning YAML/JSON text into [`RawObject`]s and objects into a [`Snapshot`]: kinds are
//! classified, workloads expanded into pods, and unknown kinds counted. Pure: text in, data out.
//! The text side is in `parse`, the per-object records (pods, workloads, nodes) in `records`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use serde_json::Value;

use super::flavor::{Flavor, is_member};
use super::labels::Labels;
use super::nodepool::{NodeClass, NodePool};
use super::object::{RawObject, labels_of};
use super::odd::{self, Oddity, Treatment};
use super::pod::PodDemand;
use super::resources::Resources;
use super::snapshot::{
    ContainerRecord, DaemonSetRecord, MachineDeploymentRecord, NodeRecord, PodRecord, Snapshot,
};
use super::taints::Taint;
use crate::error::Error;

mod parse;
pub(crate) use parse::{list_items, split_documents};
mod records;
mod resolve;
mod stream;

pub use parse::parse_source;
use records::{expand_workload, node_record, pod_record, template_labels, template_spec};

/// One input text and the name to report it by (a path or `<stdin>`).
#[derive(Debug, Clone)]
pub struct Source {
    /// Path or `<stdin>`.
    pub name: String,
    /// The text.
    pub text: String,
}

/// The most pods workload templates (`replicas`, `parallelism`) are expanded to, in all: far
/// beyond any real cluster's pending pods, and small enough that a typo (`replicas: 1000000000`)
/// is an error naming the field instead of an out-of-memory abort.
pub(crate) const MAX_EXPANDED_PODS: i64 = 100_000;

/// Builds a snapshot from objects. Invalid pods and NodePools are errors (a real API server
/// would have rejected them); problems with MachineDeployment annotations are recorded on the
/// MachineDeployment for the caller to report. Values the API accepts but the core cannot hold
/// exactly are clamped and listed in [`Snapshot::oddities`] (and as warnings).
pub fn build_snapshot(objects: Vec<RawObject>) -> Result<Snapshot, Error> {
    build(objects, false)
}

/// [`build_snapshot`] for objects an API server has already accepted (a live listing): an
/// object that cannot be read is left out of the snapshot, with an [`Oddity`] naming it and the
/// field, instead of failing the whole pass.
pub fn build_snapshot_tolerant(objects: Vec<RawObject>) -> Result<Snapshot, Error> {
    build(objects, true)
}

/// Owners whose pods (or, for Deployments, ReplicaSets) are in the input, so their templates are
/// not expanded too; and the pods expanded so far.
#[derive(Default)]
pub(super) struct Expansion {
    owners_with_pods: BTreeSet<String>,
    deployments_with_replicasets: BTreeSet<String>,
    expanded: i64,
}

/// Which owners an owner key is noted among ([`owner_keys`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum OwnerOf {
    /// An owner of a pod in the input.
    Pod,
    /// A Deployment owning a ReplicaSet in the input.
    ReplicaSet,
}

/// The owners (`Kind/namespace/name`) an object of `kind` in `namespace` notes: a pod's owners,
/// and a ReplicaSet's Deployment.
pub(super) fn owner_keys(
    kind: &str,
    namespace: &str,
    owners: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference],
) -> Vec<(OwnerOf, String)> {
    owners
        .iter()
        .filter_map(|r| {
            let of = match kind {
                "Pod" => OwnerOf::Pod,
                "ReplicaSet" if r.kind == "Deployment" => OwnerOf::ReplicaSet,
                _ => return None,
            };
            Some((of, format!("{}/{}/{}", r.kind, namespace, r.name)))
        })
        .collect()
}

impl Expansion {
    fn note(&mut self, of: OwnerOf, key: String) {
        match of {
            OwnerOf::Pod => self.owners_with_pods.insert(key),
            OwnerOf::ReplicaSet => self.deployments_with_replicasets.insert(key),
        };
    }
}

/// A snapshot built one object at a time, so a caller holding its objects in another form (the
/// reflector stores' compacted objects) never needs every object as JSON at once. Workload
/// templates look across objects: every object's owners are noted ([`Builder::note_owners`])
/// before the first is added. [`build_snapshot`] is a builder fed a `Vec`.
pub struct Builder {
    snap: Snapshot,
    expansion: Expansion,
    oddities: Vec<Oddity>,
    tolerant: bool,
}

impl Builder {
    /// An empty builder; `tolerant` as in [`build_snapshot_tolerant`].
    pub fn new(tolerant: bool) -> Builder {
        Builder {
            snap: Snapshot::default(),
            expansion: Expansion::default(),
            oddities: Vec::new(),
            tolerant,
        }
    }

    /// Notes the owners of an object of `kind` in `namespace` that will be added.
    pub fn note_owners(
        &mut self,
        kind: &str,
        namespace: &str,
        owners: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference],
    ) {
        for (of, key) in owner_keys(kind, namespace, owners) {
            self.expansion.note(of, key);
        }
    }

    /// Adds one object.
    pub fn add(&mut self, mut obj: RawObject) -> Result<(), Error> {
        let mut odd = std::mem::take(&mut obj.oddities);
        odd.extend(
            odd::clamped_quantities(&obj.kind, &obj.value)
                .into_iter()
                .map(|(field, text, used)| obj.oddity(field, text, used.to_string())),
        );
        let (origin, kind, name) = (obj.origin.clone(), obj.kind.clone(), obj.key());
        match convert(obj).and_then(|r| commit(&mut self.snap, r, &mut self.expansion)) {
            Ok(()) => self.oddities.extend(odd),
            Err(e) if self.tolerant => {
                let (field, value) = match e {
                    Error::Object { field, problem, .. } => (field, problem),
                    other => (String::new(), other.to_string()),
                };
                self.oddities.push(Oddity {
                    origin,
                    kind,
                    name,
                    field,
                    value,
                    treatment: Treatment::Skipped,
                    used: String::new(),
                });
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// The snapshot of the objects added: what looks across kinds (volume topology of pods,
    /// the implicit NodePool, NodePool order) is done here, once every object is in.
    pub fn finish(self) -> Snapshot {
        let Builder {
            mut snap, oddities, ..
        } = self;
        snap.warnings.extend(oddities.iter().map(Oddity::to_string));
        snap.oddities = oddities;
        if snap.nodepools.is_empty() {
            snap.nodepools.push(NodePool::implicit());
            snap.implicit_nodepool = true;
        }
        super::volume::resolve(&mut snap);
        resolve::runtime_class_overhead(&mut snap);
        resolve::daemonset_pods(&mut snap);
        resolve::machines_by_provider_id(&mut snap);
        // Karpenter's order: weight descending, then name.
        snap.nodepools
            .sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
        snap
    }
}

/// Whether objects of this kind are workloads whose pod templates the loader expands, the only
/// objects for which [`Builder::note_owners`] matters.
pub fn expands_templates(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") | ("batch", "Job")
    )
}

fn build(objects: Vec<RawObject>, tolerant: bool) -> Result<Snapshot, Error> {
    let mut builder = Builder::new(tolerant);
    for o in &objects {
        if let Some(owners) = &o.meta.owner_references {
            builder.note_owners(&o.kind, o.namespace(), owners);
        }
    }
    for obj in objects {
        builder.add(obj)?;
    }
    Ok(builder.finish())
}

/// The node class group and kind of a `nodeClassRef` that is not ours (a `ClusterAPINodeClass`
/// of `karpenter.cluster.x-k8s.io`), as `Kind.group`; None when it is ours or names none (the CRD
/// requires one: only hand-written objects lack it). Mirrors core `cloudprovider`
/// GetSupportedNodeClasses with `utils/nodeclaim` IsManaged.
fn foreign_node_class(node_class_ref: Option<&serde_json::Value>) -> Option<String> {
    let r = node_class_ref?;
    let field = |k: &str| r.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
    let (group, kind) = (field("group"), field("kind"));
    let ours = (group.is_empty() || group == "karpenter.cluster.x-k8s.io")
        && (kind.is_empty() || kind == "ClusterAPINodeClass");
    (!ours).then(|| format!("{kind}.{group}"))
}

/// One object read into what the snapshot keeps of it: all that can be done without looking
/// at other objects (workload templates, which need every object's owners, are expanded when
/// the record is committed, [`commit`]).
pub(super) enum Record {
    Pod(PodRecord),
    Node(NodeRecord),
    DaemonSet(DaemonSetRecord),
    Workload(RawObject),
    /// A NodePool, and the foreign node class it names if any.
    NodePool(NodePool, Option<String>),
    NodeClass(NodeClass),
    /// A NodeClaim, and whether its node class is another Karpenter's.
    NodeClaim(super::nodeclaim::NodeClaimRecord, bool),
    Machine(super::machine::MachineRecord),
    VolumeClaim(super::volume::ClaimRecord),
    Volume(super::volume::TopologyRecord),
    StorageClass(super::volume::TopologyRecord),
    MachineDeployment(MachineDeploymentRecord),
    Other(RawObject),
}

/// Reads one object into its [`Record`]; pure, so objects convert independently (on every
/// core, as they are parsed).
pub(super) fn convert(obj: RawObject) -> Result<Record, Error> {
    Ok(match (obj.group(), obj.kind.as_str()) {
        ("", "Pod") => Record::Pod(pod_record(obj)?),
        ("", "Node") => Record::Node(node_record(&obj)?),
        ("apps", "DaemonSet") => {
            let spec = template_spec(&obj)?;
            let pod = PodDemand::from_spec(
                obj.namespace(),
                obj.name(),
                template_labels(&obj),
                &spec,
                "spec.template.spec",
            )
            .map_err(|(f, e)| obj.error(f, e))?;
            // The DaemonSet controller places its pods by required constraints only.
            let mut pod = pod;
            pod.preferred_node_affinity.clear();
            Record::DaemonSet(DaemonSetRecord {
                name: format!("{}/{}", obj.namespace(), obj.name()),
                pod,
            })
        }
        (group, kind) if expands_templates(group, kind) => Record::Workload(obj),
        ("karpenter.sh", "NodePool") => {
            let pool = NodePool::from_object(&obj)?;
            let foreign = foreign_node_class(pool.node_class_ref.as_ref());
            Record::NodePool(pool, foreign)
        }
        ("karpenter.cluster.x-k8s.io", "ClusterAPINodeClass") => {
            Record::NodeClass(NodeClass::from_object(&obj)?)
        }
        ("karpenter.sh", "NodeClaim") => Record::NodeClaim(
            super::nodeclaim::NodeClaimRecord::from_object(&obj),
            foreign_node_class(obj.value.pointer("/spec/nodeClassRef")).is_some(),
        ),
        ("cluster.x-k8s.io", "Machine") => {
            Record::Machine(super::machine::MachineRecord::from_object(&obj))
        }
        ("", "PersistentVolumeClaim") => Record::VolumeClaim(super::volume::claim_record(&obj)?),
        ("", "PersistentVolume") => Record::Volume(super::volume::volume_record(&obj)?),
        ("storage.k8s.io", "StorageClass") => {
            Record::StorageClass(super::volume::storage_class_record(&obj)?)
        }
        ("cluster.x-k8s.io", "MachineDeployment") => {
            let member = is_member(&obj);
            let flavor = Flavor::from_machine_deployment(&obj);
            Record::MachineDeployment(MachineDeploymentRecord {
                object: obj,
                member,
                flavor,
            })
        }
        _ => Record::Other(obj),
    })
}

/// Places one record into the snapshot, in input order: workloads are expanded here, once the
/// owners of every object are noted.
pub(super) fn commit(
    snap: &mut Snapshot,
    record: Record,
    expansion: &mut Expansion,
) -> Result<(), Error> {
    match record {
        Record::Pod(p) => snap.pods.push(std::sync::Arc::new(p)),
        Record::Node(n) => snap.nodes.push(n),
        Record::DaemonSet(d) => snap.daemonsets.push(d),
        Record::Workload(obj) => {
            let key = format!("{}/{}/{}", obj.kind, obj.namespace(), obj.name());
            let covered = expansion.owners_with_pods.contains(&key)
                || (obj.kind == "Deployment"
                    && expansion.deployments_with_replicasets.contains(&key));
            if !covered {
                expand_workload(&obj, &mut snap.pods, &mut expansion.expanded)?;
            }
        }
        Record::NodePool(pool, None) => snap.nodepools.push(pool),
        // Another Karpenter's pool (core IsManaged: its node class is not ours).
        Record::NodePool(pool, Some(gk)) => snap.warnings.push(format!(
            "NodePool {}: its nodeClassRef is a {gk}, not a ClusterAPINodeClass: left to the Karpenter that owns it",
            pool.name
        )),
        Record::NodeClass(c) => snap.nodeclasses.push(c),
        Record::NodeClaim(claim, true) => snap.foreign_claims.push(claim),
        Record::NodeClaim(claim, false) => snap.nodeclaims.push(claim),
        Record::Machine(m) => {
            snap.machines_observed = true;
            snap.machines.push(m)
        }
        Record::VolumeClaim(c) => snap.volume_claims.push(c),
        Record::Volume(v) => snap.volumes.push(v),
        Record::StorageClass(c) => snap.storage_classes.push(c),
        Record::MachineDeployment(md) => snap.machine_deployments.push(md),
        Record::Other(obj) => {
            if !is_known_auxiliary(&obj) {
                *snap.skipped.entry(obj.kind.clone()).or_insert(0) += 1;
            }
            snap.objects.push(obj);
        }
    }
    Ok(())
}

/// Kinds the core keeps for later checks (not "skipped").
fn is_known_auxiliary(obj: &RawObject) -> bool {
    matches!(
        (obj.group(), obj.kind.as_str()),
        ("cluster.x-k8s.io", "MachineSet" | "Cluster")
            | (
                "bootstrap.cluster.x-k8s.io",
                "KubeadmConfigTemplate" | "KubeadmConfig"
            )
            | ("policy", "PodDisruptionBudget")
            | ("rbac.authorization.k8s.io", _)
            | ("", "Event" | "ServiceAccount" | "Secret")
            | ("coordination.k8s.io", "Lease")
            | ("node.k8s.io", "RuntimeClass")
    ) || obj.kind.ends_with("MachineTemplate")
}

/// Parses and builds in one step, from several sources, each object once (see
/// [`load_sources`] for the notes about repeated objects).
pub fn snapshot_from_sources(sources: &[Source]) -> Result<Snapshot, Error> {
    load_sources(sources).map(|(snapshot, _)| snapshot)
}

/// Parses several sources, uses each object once ([`super::dedup`]) and builds the snapshot;
/// returns it with one note per repeated object, for the caller to show.
///
/// Each object becomes its record as it is read ([`stream`]), so a dump is never held whole
/// as parsed values; only inputs that may give an object twice are read again whole, to
/// compare the copies.
pub fn load_sources(sources: &[Source]) -> Result<(Snapshot, Vec<String>), Error> {
    load_judging(sources, false).map(|(snapshot, notes, _)| (snapshot, notes))
}

/// A snapshot, the notes on objects given twice, and the unknown fields of the input.
pub type Judged = (
    Snapshot,
    Vec<String>,
    Vec<crate::model::fields::UnknownField>,
);

/// [`load_sources`], and every field no schema of its object's kind has, in input order, as
/// [`crate::model::fields::unknown_fields`] finds them. The loader judges each object as it
/// reads it, so only the documents holding such an object are read again for the lines: one
/// parse of a clean dump, not two.
pub fn load_sources_judged(sources: &[Source]) -> Result<Judged, Error> {
    load_judging(sources, true)
}

fn load_judging(sources: &[Source], judge: bool) -> Result<Judged, Error> {
    use crate::model::fields::{unknown_fields, unknown_fields_where};
    let mut loaded = Vec::new();
    for s in sources {
        loaded.extend(parse::parse_source_with(s, |o| stream::load(o, judge))?);
    }
    if !stream::repeats(&loaded) {
        let flagged = stream::unknown_in(&loaded);
        let snapshot = stream::build(loaded)?;
        let unknown = sources
            .iter()
            .flat_map(|s| unknown_fields_where(s, |n| flagged.contains(&parse::origin(s, n))))
            .collect();
        return Ok((snapshot, Vec::new(), unknown));
    }
    drop(loaded);
    let mut objects = Vec::new();
    for s in sources {
        objects.extend(parse_source(s)?);
    }
    let unique = super::dedup::unique(objects)?;
    let snapshot = build_snapshot(unique.objects)?;
    // Objects given twice are merged from a second, whole reading: every document is judged.
    let unknown = if judge {
        sources.iter().flat_map(unknown_fields).collect()
    } else {
        Vec::new()
    };
    Ok((snapshot, unique.notes, unknown))
}

#[cfg(test)]
mod tests {
    use super::parse::split_documents;
    use super::*;

    fn src(text: &str) -> Source {
        Source {
            name: "t.yaml".to_string(),
            text: text.to_string(),
        }
    }

    #[test]
    fn the_loader_judges_as_it_reads_and_finds_what_a_whole_reading_finds() {
        use crate::model::fields::unknown_fields;
        let mut text = "apiVersion: v1\nitems:\n".to_string();
        for i in 0..50 {
            let typo = if i % 9 == 4 { "    nodeNme: x\n" } else { "" };
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{i}, namespace: d}}\n  spec:\n    containers: [{{name: c}}]\n{typo}  status: {{newField: 1}}\n"
            ));
        }
        text.push_str("kind: List\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nspec: {taint: []}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: clean}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"c\", \"lables\": {}}}\n");
        let sources = [
            src(&text),
            src("apiVersion: v1\nkind: Node\nmetadata: {name: m}\n"),
        ];
        let (snapshot, _, unknown) = load_sources_judged(&sources).unwrap();
        assert_eq!(snapshot.pods.len(), 50);
        let whole: Vec<_> = sources.iter().flat_map(unknown_fields).collect();
        assert_eq!(unknown, whole);
        let paths: Vec<(&str, usize)> = unknown.iter().map(|u| (u.path.as_str(), u.line)).collect();
        assert_eq!(paths.len(), 8);
        assert_eq!(paths[0], ("spec.nodeNme", 32));
        assert_eq!(&paths[6..], [("spec.taint", 314), ("metadata.lables", 320)]);
        // Without judging, nothing is read again and nothing is found.
        let (again, _) = load_sources(&sources).unwrap();
        assert_eq!(format!("{again:?}"), format!("{snapshot:?}"));
        let clean = [src("apiVersion: v1\nkind: Node\nmetadata: {name: m}\n")];
        assert!(load_sources_judged(&clean).unwrap().2.is_empty());
    }

    #[test]
    fn splits_documents_with_lines() {
        let docs = split_documents("a: 1\n---\nb: 2\n--- \nc: 3\n");
        assert_eq!(docs.iter().map(|d| d.0).collect::<Vec<_>>(), vec![1, 3, 5]);
    }

    #[test]
    fn malformed_yaml_names_file_and_document() {
        let err =
            parse_source(&src("kind: Pod\napiVersion: v1\n---\nkind: [unclosed\n")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("t.yaml:4:7: not valid YAML (document 2): "),
            "{msg}"
        );
    }

    #[test]
    fn lists_are_flattened_and_unknown_kinds_counted() {
        let objs = parse_source(&src(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
        ))
        .unwrap();
        assert_eq!(objs.len(), 2);
        let snap = build_snapshot(objs).unwrap();
        assert_eq!(snap.skipped.get("ConfigMap"), Some(&2));
        assert!(snap.implicit_nodepool);
    }

    #[test]
    fn deployment_expands_unless_its_pods_are_present() {
        let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n";
        let snap = snapshot_from_sources(&[src(deploy)]).unwrap();
        assert_eq!(
            snap.pods
                .iter()
                .map(|p| p.demand.name.as_str())
                .collect::<Vec<_>>(),
            vec!["web-0", "web-1", "web-2"]
        );
        assert!(snap.pods.iter().all(|p| p.is_provisionable()));
        let with_rs = format!(
            "{deploy}---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web-abc, namespace: default, ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: u}}]}}\nspec:\n  replicas: 1\n  template:\n    spec: {{containers: [{{name: c}}]}}\n"
        );
        let snap = snapshot_from_sources(&[src(&with_rs)]).unwrap();
        assert_eq!(
            snap.pods.len(),
            1,
            "the ReplicaSet stands for the Deployment"
        );
    }

    #[test]
    fn pod_status_decides_provisionable() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c}]}\nstatus:\n  phase: Pending\n  conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]\n";
        let snap = snapshot_from_sources(&[src(pod)]).unwrap();
        assert!(snap.pods[0].is_provisionable());
        let fresh = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c}]}\nstatus: {phase: Pending}\n";
        let snap = snapshot_from_sources(&[src(fresh)]).unwrap();
        assert!(snap.pods[0].is_pending() && !snap.pods[0].is_provisionable());
    }

    #[test]
    fn invalid_pod_quantity_names_object_and_field() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, resources: {requests: {cpu: 4x}}}]}\n";
        let err = snapshot_from_sources(&[src(pod)]).unwrap_err().to_string();
        assert!(err.starts_with("t.yaml#1: Pod default/p: spec.containers[0].resources.requests[cpu]: invalid quantity \"4x\""), "{err}");
    }

    #[test]
    fn empty_and_nul_inputs_are_errors() {
        for (text, want) in [
            ("", "t.yaml: is empty: expected Kubernetes objects"),
            ("\n# only a comment\n---\n", "t.yaml: is empty"),
            ("\0\0\0\0", "t.yaml: holds only NUL bytes"),
            ("kind: Pod\0", "t.yaml: contains NUL bytes"),
        ] {
            let err = parse_source(&src(text)).unwrap_err().to_string();
            assert!(err.starts_with(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn workload_expansion_is_bounded_and_names_the_field() {
        let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 1000000000\n  template:\n    spec: {containers: [{name: c}]}\n";
        let err = snapshot_from_sources(&[src(deploy)])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.yaml#1: Deployment default/web: spec.replicas: 1000000000 would expand the input to more than 100000 pods"),
            "{err}"
        );
        // The bound is over all workloads together.
        let half = |name: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  parallelism: 60000\n  template:\n    spec: {{containers: [{{name: c}}]}}\n"
            )
        };
        let two = format!("{}---\n{}", half("a"), half("b"));
        let err = snapshot_from_sources(&[src(&two)]).unwrap_err().to_string();
        assert!(
            err.starts_with("t.yaml#2: Job default/b: spec.parallelism: 60000 would expand the input to more than 100000 pods in all (60000 already)"),
            "{err}"
        );
    }

    /// A `kubectl get pods -A -o yaml` of this many pods is one document of about 40 nodes per
    /// pod, beyond the YAML parser's default budget of 250,000 nodes.
    #[test]
    fn a_large_list_document_loads_in_yaml_and_json() {
        let pods = 6_000;
        let mut yaml = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..pods {
            yaml.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p-{i}\n    namespace: ns-{}\n    labels: {{app: a{}, tier: web, track: stable}}\n    ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs-{}, uid: u{i}, controller: true}}]\n  spec:\n    nodeName: node-{}\n    containers:\n    - name: c\n      image: registry.k8s.io/pause:3.10\n      ports: [{{containerPort: 8080, protocol: TCP}}]\n      resources: {{requests: {{cpu: 100m, memory: 128Mi}}, limits: {{cpu: 200m, memory: 256Mi}}}}\n  status:\n    phase: Running\n    conditions: [{{type: PodScheduled, status: 'True'}}, {{type: Ready, status: 'True'}}]\n",
                i % 7,
                i % 13,
                i % 50,
                i % 100
            ));
        }
        assert!(
            serde_saphyr::from_str::<Value>(&yaml).is_err(),
            "the parser's default budget refuses this document"
        );
        let objects = parse_source(&src(&yaml)).unwrap();
        assert_eq!(objects.len(), pods);
        let json = serde_json::json!({"apiVersion": "v1", "kind": "List",
            "items": objects.iter().map(|o| o.value.clone()).collect::<Vec<_>>()});
        let from_json = parse_source(&src(&json.to_string())).unwrap();
        assert_eq!(from_json.len(), pods);
        let snap = build_snapshot(from_json).unwrap();
        assert_eq!(snap.pods.len(), pods);
        assert_eq!(snap.pods[pods - 1].demand.requests.cpu_millis, 100);
    }

    #[test]
    fn alias_bombs_are_still_refused() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let err = parse_source(&src(&bomb)).unwrap_err().to_string();
        assert!(
            err.starts_with("t.yaml:") && err.contains(": not valid YAML (document 1): "),
            "{err}"
        );
    }

    #[test]
    fn odd_values_are_clamped_and_listed_and_unreadable_live_objects_skipped() {
        let text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: odd}\nspec:\n  limits: {cpu: '-1', memory: 1e50}\n  template: {spec: {requirements: []}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge, namespace: default, creationTimestamp: '9999-12-31T23:59:59Z'}\nspec: {containers: [{name: c, resources: {requests: {memory: 9Ei}}}]}\n";
        let snap = snapshot_from_sources(&[src(text)]).unwrap();
        assert_eq!(snap.nodepools[0].limit("cpu"), Some(0));
        assert_eq!(snap.nodepools[0].limit("memory"), Some(i64::MAX));
        assert_eq!(snap.pods[0].demand.requests.memory_bytes, i64::MAX);
        assert_eq!(snap.pods[0].created, Some(jiff::Timestamp::MAX));
        let listed: Vec<String> = snap.oddities.iter().map(ToString::to_string).collect();
        assert_eq!(
            listed,
            vec![
                "t.yaml#1: NodePool odd: spec.limits.cpu \"-1\" cannot be held exactly; using 0",
                "t.yaml#1: NodePool odd: spec.limits.memory \"1e+50\" cannot be held exactly; using 9223372036854775807",
                "t.yaml#2: Pod default/huge: metadata.creationTimestamp \"9999-12-31T23:59:59Z\" cannot be held exactly; using 9999-12-30T22:00:00.999999999Z",
                "t.yaml#2: Pod default/huge: spec.containers[0].resources.requests[memory] \"9Ei\" cannot be held exactly; using 9223372036854775807",
            ]
        );
        assert!(listed.iter().all(|l| snap.warnings.contains(l)));
        // Strict (files): an object that cannot be read is an error; tolerant (live): skipped.
        let bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad, namespace: default}\nspec: {containers: [{name: c, resources: {requests: {cpu: 4x}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: good, namespace: default}\nspec: {containers: [{name: c}]}\n";
        let objects = parse_source(&src(bad)).unwrap();
        assert!(build_snapshot(objects.clone()).is_err());
        let snap = build_snapshot_tolerant(objects).unwrap();
        assert_eq!(snap.pods.len(), 1);
        assert_eq!(snap.pods[0].demand.name, "good");
        assert_eq!(
            snap.oddities[0].to_string(),
            "t.yaml#1: Pod default/bad: skipped, spec.containers[0].resources.requests[cpu]: invalid quantity \"4x\": unknown suffix (expected e.g. 500m, 4, 8Gi, 8G)"
        );
    }
}
