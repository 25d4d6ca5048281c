//! The simulated infrastructure's latencies: how long Cluster API, the infrastructure provider,
//! the kubelet and the upstream provider take for each step, with the seed field report's
//! measurements as defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Ms;
use crate::model::duration::GoDuration;

/// Boot latencies of one flavor, each measured from the Machine's creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Boot {
    /// The infrastructure server exists: the Machine gets its `spec.providerID`.
    pub(crate) provider_id: Ms,
    /// The kubelet registers the Node (with the bootstrap template's taints).
    pub(crate) node_join: Ms,
    /// The Node reports `Ready=True` (the bare image has installed containerd and the kubelet).
    pub(crate) node_ready: Ms,
}

/// Every latency the simulation uses, in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Latencies {
    /// A MachineSet creates a Machine this long after its replicas went up.
    pub(crate) machine_create: Ms,
    /// Boot latencies of every flavor without its own entry.
    pub(crate) boot: Boot,
    /// Boot latencies per instance type.
    pub(crate) flavors: BTreeMap<String, Boot>,
    /// CAPI removes `node.cluster.x-k8s.io/uninitialized` this long after the Node joined.
    pub(crate) capi_uninitialized: Ms,
    /// A bound pod is Running this long after binding (image pull, sandbox, CNI).
    pub(crate) pod_start: Ms,
    /// A Machine being deleted is gone (server deleted, Node removed) after this long.
    pub(crate) machine_delete: Ms,
    /// Upstream karpenter-capi: NodeClaim created → the provider scales its MachineDeployment
    /// (0 by default: it scales inside `Create`; a trace may model a slower provider).
    pub(crate) upstream_launch: Ms,
}

impl Default for Latencies {
    /// The seed report's first run (bare Ubuntu image, c3-4 on OVH), read off the NodeClaim's
    /// conditions: created at T+2 s, `Launched` at T+66 s, `Registered` at T+74 s,
    /// `Initialized` (Ready) at T+141 s, pods Running at T+153 s; about 3 minutes from removing
    /// the load to zero NodeClaims. The provider scales its MachineDeployment inside `Create`
    /// (karpenter-provider-cluster-api `pkg/batcher/create.go` execCreateBatch, and every
    /// release before it), so the minute to `Launched` is the server's: the Machine ~1 s after
    /// the scale, providerID +62 s (T+65), Node +71 s (T+74), Ready +138 s (T+141), pods +12 s
    /// after binding (T+153). The report's own benchmark agrees: Karpenter and Cluster
    /// Autoscaler had their pods Running at the same time. `machine_delete` is fitted so that
    /// upstream's 30 s consolidateAfter, 10 s disruption poll and 15 s validation plus the
    /// deletion end about 180 s after the load left.
    fn default() -> Latencies {
        Latencies {
            machine_create: 1_000,
            boot: Boot {
                provider_id: 62_000,
                node_join: 71_000,
                node_ready: 138_000,
            },
            flavors: BTreeMap::new(),
            capi_uninitialized: 1_000,
            pod_start: 12_000,
            machine_delete: 135_000,
            upstream_launch: 0,
        }
    }
}

impl Latencies {
    /// The boot latencies of an instance type.
    pub(crate) fn boot_of(&self, instance_type: &str) -> Boot {
        self.flavors
            .get(instance_type)
            .copied()
            .unwrap_or(self.boot)
    }
}

/// Latencies as written in a trace file (`latencies:`), every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawLatencies {
    machine_create: Option<String>,
    #[serde(rename = "providerID")]
    provider_id: Option<String>,
    node_join: Option<String>,
    node_ready: Option<String>,
    capi_uninitialized: Option<String>,
    pod_start: Option<String>,
    machine_delete: Option<String>,
    upstream_launch: Option<String>,
    #[serde(default)]
    flavors: BTreeMap<String, RawBoot>,
}

/// One flavor's boot latencies as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawBoot {
    #[serde(rename = "providerID")]
    provider_id: Option<String>,
    node_join: Option<String>,
    node_ready: Option<String>,
}

/// Parses a Go duration (`30s`, `1m30s`) into milliseconds; the error names the field.
pub(crate) fn duration_ms(text: &str, field: &str) -> Result<Ms, String> {
    let d: GoDuration = text.parse().map_err(|e| format!("{field}: {e}"))?;
    Ok(d.as_secs_i64().saturating_mul(1000))
}

impl RawLatencies {
    /// Applies the fields that are set over the defaults.
    pub(crate) fn resolve(&self) -> Result<Latencies, String> {
        let mut l = Latencies::default();
        let set = |slot: &mut Ms, v: &Option<String>, field: &str| -> Result<(), String> {
            if let Some(text) = v {
                *slot = duration_ms(text, &format!("latencies.{field}"))?;
            }
            Ok(())
        };
        set(&mut l.machine_create, &self.machine_create, "machineCreate")?;
        set(&mut l.boot.provider_id, &self.provider_id, "providerID")?;
        set(&mut l.boot.node_join, &self.node_join, "nodeJoin")?;
        set(&mut l.boot.node_ready, &self.node_ready, "nodeReady")?;
        set(
            &mut l.capi_uninitialized,
            &self.capi_uninitialized,
            "capiUninitialized",
        )?;
        set(&mut l.pod_start, &self.pod_start, "podStart")?;
        set(&mut l.machine_delete, &self.machine_delete, "machineDelete")?;
        set(
            &mut l.upstream_launch,
            &self.upstream_launch,
            "upstreamLaunch",
        )?;
        for (flavor, raw) in &self.flavors {
            let mut b = l.boot;
            let at = |f: &str| format!("flavors.{flavor}.{f}");
            set(&mut b.provider_id, &raw.provider_id, &at("providerID"))?;
            set(&mut b.node_join, &raw.node_join, &at("nodeJoin"))?;
            set(&mut b.node_ready, &raw.node_ready, &at("nodeReady"))?;
            if !(b.provider_id <= b.node_join && b.node_join <= b.node_ready) {
                return Err(format!(
                    "latencies.flavors.{flavor}: expected providerID <= nodeJoin <= nodeReady"
                ));
            }
            l.flavors.insert(flavor.clone(), b);
        }
        if !(l.boot.provider_id <= l.boot.node_join && l.boot.node_join <= l.boot.node_ready) {
            return Err("latencies: expected providerID <= nodeJoin <= nodeReady".to_string());
        }
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_over_the_seed_defaults() {
        let raw: RawLatencies = serde_saphyr::from_str(
            "nodeReady: 2m\npodStart: 5s\nflavors:\n  c3-16: {nodeReady: 3m}\n",
        )
        .unwrap();
        let l = raw.resolve().unwrap();
        assert_eq!(l.boot.node_ready, 120_000);
        assert_eq!(l.pod_start, 5_000);
        assert_eq!(l.boot_of("c3-16").node_ready, 180_000);
        assert_eq!(l.boot_of("c3-16").node_join, 71_000);
        assert_eq!(l.boot_of("c3-4").node_ready, 120_000);
        assert_eq!(l.upstream_launch, 0);
    }

    #[test]
    fn bad_values_name_the_field() {
        let raw: RawLatencies =
            serde_saphyr::from_str("flavors:\n  c3-8: {nodeJoin: soon}\n").unwrap();
        let err = raw.resolve().unwrap_err();
        assert!(
            err.starts_with("latencies.flavors.c3-8.nodeJoin: invalid duration"),
            "{err}"
        );
        let raw: RawLatencies = serde_saphyr::from_str("nodeJoin: 3m\n").unwrap();
        assert_eq!(
            raw.resolve().unwrap_err(),
            "latencies: expected providerID <= nodeJoin <= nodeReady"
        );
    }
}
