//! Cluster API, the infrastructure and the kubelets in the simulated cluster: MachineSets
//! reconciling replicas, Machines created and deleted, Nodes joining with their bootstrap taints.

use super::*;
use crate::vocab::keys::CAPI_UNINITIALIZED_TAINT_KEY;
use crate::vocab::keys::NOT_READY_TAINT_KEY;

impl SimCluster {
    /// Brings a MachineDeployment's Machines to its replicas, as its MachineSet does.
    pub(crate) fn reconcile_machine_set(&mut self, md_key: &str) {
        let Some(md) = self
            .snap
            .machine_deployments
            .iter()
            .find(|m| m.key() == md_key)
        else {
            return;
        };
        let replicas = current_replicas(md);
        let live: Vec<&MachineRecord> = self
            .snap
            .machines
            .iter()
            .filter(|m| !m.deleting && m.deployment_key().as_deref() == Some(md_key))
            .collect();
        let creating = self.creating(md_key);
        let have = live.len() as i64;
        if replicas > have + creating {
            for _ in 0..(replicas - have - creating) {
                self.push(
                    self.now + self.lat.machine_create,
                    Event::CreateMachine(md_key.to_string()),
                );
            }
            self.creating.insert(md_key.to_string(), replicas - have);
        } else if replicas < have {
            // CAPI's deletion order: marked, then without a Node, then the newest.
            let mut victims: Vec<(bool, bool, Option<Timestamp>, String)> = live
                .iter()
                .map(|m| {
                    (
                        !m.marked_for_deletion,
                        m.node_name.is_some(),
                        m.created,
                        m.key(),
                    )
                })
                .collect();
            victims.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
            let doomed: Vec<String> = victims
                .into_iter()
                .take((have - replicas) as usize)
                .map(|v| v.3)
                .collect();
            for m in doomed {
                self.delete_machine(&m);
            }
        }
    }

    pub(super) fn create_machine(&mut self, md_key: &str) {
        let left = self.creating(md_key) - 1;
        self.creating.insert(md_key.to_string(), left.max(0));
        let Some(md) = self
            .snap
            .machine_deployments
            .iter()
            .find(|m| m.key() == md_key)
        else {
            return;
        };
        let replicas = current_replicas(md);
        let live = self
            .snap
            .machines
            .iter()
            .filter(|m| !m.deleting && m.deployment_key().as_deref() == Some(md_key))
            .count() as i64;
        if live >= replicas {
            return;
        }
        let (ns, md_name) = (
            md.object.namespace().to_string(),
            md.object.name().to_string(),
        );
        let api_version = md.object.api_version.clone();
        self.names += 1;
        let name = format!("{md_name}-{}", suffix(self.names));
        let mut labels = Labels::new();
        labels.insert(
            crate::vocab::keys::DEPLOYMENT_NAME_LABEL.to_string(),
            md_name.clone(),
        );
        let flavor = self.flavor_of(md_key);
        let machine = MachineRecord {
            namespace: ns.clone(),
            name: name.clone(),
            api_version,
            labels,
            created: Some(self.ts(self.now)),
            deleting: false,
            deployment: Some(md_name),
            claimed: false,
            marked_for_deletion: false,
            marked_by_us: false,
            provider_id: None,
            node_name: None,
            phase: Some("Provisioning".to_string()),
            conditions: Vec::new(),
            failure: None,
            machine_set: None,
        };
        let mk = machine.key();
        self.snap.machines.push(machine);
        let boot = self.lat.boot_of(
            flavor
                .as_ref()
                .map(|f| f.instance_type.as_str())
                .unwrap_or_default(),
        );
        self.rec.machine(
            self.now,
            &mk,
            Some(flavor.as_ref().map(|f| f.price).unwrap_or(Price(0))),
        );
        self.machines.insert(
            mk.clone(),
            MachineInfo {
                md: md_key.to_string(),
                flavor,
            },
        );
        self.push(self.now + boot.provider_id, Event::ProviderId(mk.clone()));
        self.push(self.now + boot.node_join, Event::NodeJoin(mk.clone()));
        self.push(self.now + boot.node_ready, Event::NodeReady(mk));
        self.touch();
    }

    pub(super) fn node_join(&mut self, mk: &str) {
        let Some(info) = self.machines.get(mk).cloned() else {
            return;
        };
        let Some(m) = self
            .snap
            .machines
            .iter_mut()
            .find(|x| x.key() == mk && !x.deleting)
        else {
            return;
        };
        let Some(flavor) = info.flavor else {
            self.warnings.insert(format!(
                "Machine {mk}: its MachineDeployment offers no valid flavor, so no Node joins"
            ));
            return;
        };
        let name = m.name.clone();
        let provider_id = format!("sim:///{name}");
        m.provider_id = Some(provider_id.clone());
        m.node_name = Some(name.clone());
        m.phase = Some("Running".to_string());
        let mut labels = flavor.labels.clone();
        labels.insert(keys::HOSTNAME.to_string(), name.clone());
        labels
            .entry(keys::OS.to_string())
            .or_insert_with(|| "linux".to_string());
        let mut taints = self.bootstrap.get(&info.md).cloned().unwrap_or_default();
        taints.push(Taint::new(NOT_READY_TAINT_KEY, "", Effect::NoSchedule));
        taints.push(Taint::new(
            CAPI_UNINITIALIZED_TAINT_KEY,
            "",
            Effect::NoSchedule,
        ));
        let node = NodeRecord {
            name: name.clone(),
            finalizers: Vec::new(),
            labels,
            annotations: Default::default(),
            taints,
            allocatable: flavor.capacity.clone(),
            capacity: flavor.capacity.clone(),
            provider_id: Some(provider_id),
            ready: Some(false),
            unschedulable: false,
            created: Some(self.ts(self.now)),
            deleting: false,
            deleted_at: None,
        };
        // The DaemonSet controller places its pods on every node they select.
        let daemons: Vec<PodRecord> = self
            .snap
            .daemonsets
            .iter()
            .filter(|d| d.pod.node_requirement_unmet(&node.labels).is_none())
            .map(|d| {
                let mut demand = d.pod.clone();
                demand.name = format!(
                    "{}-{}",
                    d.name.rsplit('/').next().unwrap_or("ds"),
                    suffix(self.names + 7)
                );
                PodRecord {
                    // The simulator's pods set no limits.
                    limits: Default::default(),
                    demand: demand.into(),
                    node_name: Some(name.clone()),
                    marked_unschedulable: false,
                    nominated: false,
                    daemon: true,
                    terminal: false,
                    terminating: false,
                    deleted_at: None,
                    not_ready: false,
                    grace_seconds: None,
                    mirror: false,
                    uid: None,
                    gated: false,
                    owner: Some(format!("DaemonSet/{}", d.name)),
                    created: Some(self.ts(self.now)),
                    annotations: Default::default(),
                    priority_class: None,
                    priority: None,
                    phase: Some("Running".to_string()),
                    containers: Default::default(),
                    started: Some(self.ts(self.now)),
                }
            })
            .collect();
        self.snap
            .pods
            .extend(daemons.into_iter().map(std::sync::Arc::new));
        self.snap.nodes.push(node);
        if !self.mode.karpenter {
            self.rec.registered(self.now);
        }
        self.push(
            self.now + self.lat.capi_uninitialized,
            Event::CapiInit(name),
        );
        self.touch();
    }

    /// Starts deleting a Machine: CAPI cordons and drains its Node, then deletes the server.
    pub(crate) fn delete_machine(&mut self, mk: &str) {
        let Some(m) = self.snap.machines.iter_mut().find(|x| x.key() == mk) else {
            return;
        };
        if m.deleting {
            return;
        }
        m.deleting = true;
        m.phase = Some("Deleting".to_string());
        let node = m.node_name.clone();
        if let Some(node) = node {
            if let Some(n) = self.snap.nodes.iter_mut().find(|n| n.name == node) {
                n.unschedulable = true;
            }
            self.drain(&node);
        }
        self.push(
            self.now + self.lat.machine_delete,
            Event::MachineGone(mk.to_string()),
        );
        self.touch();
    }

    /// Evicts every non-DaemonSet pod of a node.
    pub(crate) fn drain(&mut self, node: &str) {
        let pods: Vec<String> = self
            .snap
            .pods
            .iter()
            .filter(|p| !p.daemon && p.node_name.as_deref() == Some(node))
            .map(|p| p.demand.key())
            .collect();
        for p in pods {
            self.evict_pod(&p);
        }
    }

    pub(super) fn machine_gone(&mut self, mk: &str) {
        let Some(i) = self.snap.machines.iter().position(|x| x.key() == mk) else {
            return;
        };
        let m = self.snap.machines.remove(i);
        self.machines.remove(mk);
        self.rec.machine(self.now, mk, None);
        if let Some(node) = &m.node_name {
            self.drain(node);
            let holds = self
                .snap
                .nodes
                .iter()
                .any(|n| &n.name == node && !n.finalizers.is_empty());
            if holds && !self.mode.claim_finalizer {
                self.deleting_nodes.insert(node.clone());
                if let Some(n) = self.snap.nodes.iter_mut().find(|n| &n.name == node) {
                    // CAPI deleted the Node (its finalizer holds it); its kubelet is gone.
                    n.ready = Some(false);
                    n.deleting = true;
                }
            } else {
                self.remove_node(node);
            }
        }
        if self.mode.claim_finalizer {
            // Karpenter's termination finalizer lets the claim go once the instance is gone.
            self.snap.nodeclaims.retain(|c| {
                !(c.deleting
                    && (c.machine.as_deref() == Some(mk)
                        || (c.provider_id.is_some() && c.provider_id == m.provider_id)))
            });
        }
        if let Some(md) = m.deployment_key() {
            self.reconcile_machine_set(&md);
        }
        self.touch();
    }

    /// Removes a Node object and its DaemonSet pods.
    pub(crate) fn remove_node(&mut self, node: &str) {
        self.snap.nodes.retain(|n| n.name != node);
        self.snap
            .pods
            .retain(|p| !(p.daemon && p.node_name.as_deref() == Some(node)));
        self.deleting_nodes.remove(node);
        self.last_pod_event.remove(node);
        self.touch();
    }
}

/// The taints a MachineDeployment's Nodes register with: its KubeadmConfigTemplate's
/// `joinConfiguration.nodeRegistration.taints` when the scenario has it, else Karpenter's
/// `karpenter.sh/unregistered:NoExecute` (what `init` generates and the seed report needed).
pub(super) fn bootstrap_taints(
    snap: &Snapshot,
    md: &crate::model::snapshot::MachineDeploymentRecord,
) -> Vec<Taint> {
    let name = md
        .object
        .value
        .pointer("/spec/template/spec/bootstrap/configRef/name")
        .and_then(|v| v.as_str());
    let template = name.and_then(|n| {
        snap.objects_of("KubeadmConfigTemplate")
            .find(|o| o.name() == n && o.namespace() == md.object.namespace())
    });
    match template {
        Some(t) => t
            .typed::<Vec<k8s_openapi::api::core::v1::Taint>>(
                "/spec/template/spec/joinConfiguration/nodeRegistration/taints",
                "spec.template.spec.joinConfiguration.nodeRegistration.taints",
            )
            .ok()
            .flatten()
            .unwrap_or_default()
            .iter()
            .filter_map(|t| Taint::from_k8s(t).ok())
            .collect(),
        None => vec![Taint::new(UNREGISTERED_TAINT_KEY, "", Effect::NoExecute)],
    }
}
