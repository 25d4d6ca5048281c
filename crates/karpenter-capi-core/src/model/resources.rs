//! Resource vectors as exact integers (millicores, bytes, counts) and the first resource that
//! does not fit, with its numbers.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use super::quantity::{self, QuantityError};

/// The well-known resource names.
pub(crate) const CPU: &str = "cpu";
/// Memory in bytes.
pub(crate) const MEMORY: &str = "memory";
/// Local ephemeral storage in bytes.
pub(crate) const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// Pod slots.
pub(crate) const PODS: &str = "pods";

/// A set of resource amounts. Extended resources (`nvidia.com/gpu`, hugepages) are counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    /// CPU in millicores.
    pub cpu_millis: i64,
    /// Memory in bytes.
    pub memory_bytes: i64,
    /// Ephemeral storage in bytes.
    #[serde(skip_serializing_if = "is_zero")]
    pub ephemeral_storage_bytes: i64,
    /// Pod slots.
    pub pods: i64,
    /// Extended resources by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extended: BTreeMap<String, i64>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// One resource that does not fit: how much is needed and how much is free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Shortfall {
    /// Resource name (`cpu`, `memory`, `pods`, `nvidia.com/gpu`, ...).
    pub(crate) resource: String,
    /// Amount needed, in the resource's integer unit.
    pub(crate) need: i64,
    /// Amount free.
    pub(crate) free: i64,
}

impl Shortfall {
    /// The amount in the resource's natural notation (`3100m`, `7.5Gi`, `110`).
    pub(crate) fn format_amount(resource: &str, amount: i64) -> String {
        match resource {
            CPU => quantity::format_millis(amount),
            MEMORY | EPHEMERAL_STORAGE => quantity::format_memory(amount),
            _ => amount.to_string(),
        }
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "needs {} {}, {} allocatable free",
            Shortfall::format_amount(&self.resource, self.need),
            self.resource,
            Shortfall::format_amount(&self.resource, self.free)
        )
    }
}

impl Resources {
    /// How many copies of these requests fit in `free`, resource by resource (unbounded when
    /// nothing is requested).
    pub(crate) fn copies_in(&self, free: &Resources) -> i64 {
        let per = |need: i64, have: i64| {
            if need <= 0 {
                i64::MAX
            } else {
                (have / need).max(0)
            }
        };
        let mut k = per(self.cpu_millis, free.cpu_millis)
            .min(per(self.memory_bytes, free.memory_bytes))
            .min(per(
                self.ephemeral_storage_bytes,
                free.ephemeral_storage_bytes,
            ))
            .min(per(self.pods, free.pods));
        for (name, v) in &self.extended {
            k = k.min(per(*v, free.extended.get(name).copied().unwrap_or(0)));
        }
        k
    }

    /// Reads a Kubernetes resource list (`{cpu: "4", memory: 8Gi}`); returns the offending
    /// resource name with the error. An amount beyond `i64` (`9Ei`) is the largest value
    /// ([`crate::model::odd`] reports it); sums and differences saturate, so it stays that.
    pub(crate) fn from_quantities<'a>(
        list: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Resources, (String, QuantityError)> {
        let mut out = Resources::default();
        for (name, value) in list {
            let wrap = |e| (name.to_string(), e);
            match name {
                CPU => out.cpu_millis = quantity::read_millis(value).map_err(wrap)?.0,
                MEMORY => out.memory_bytes = quantity::read_units(value).map_err(wrap)?.0,
                EPHEMERAL_STORAGE => {
                    out.ephemeral_storage_bytes = quantity::read_units(value).map_err(wrap)?.0
                }
                PODS => out.pods = quantity::read_units(value).map_err(wrap)?.0,
                other => {
                    let amount = quantity::read_units(value).map_err(wrap)?.0;
                    if amount != 0 {
                        out.extended.insert(other.to_string(), amount);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Element-wise sum, saturating (a saturated `9Ei` request stays the largest value).
    pub fn add(&mut self, other: &Resources) {
        self.cpu_millis = self.cpu_millis.saturating_add(other.cpu_millis);
        self.memory_bytes = self.memory_bytes.saturating_add(other.memory_bytes);
        self.ephemeral_storage_bytes = self
            .ephemeral_storage_bytes
            .saturating_add(other.ephemeral_storage_bytes);
        self.pods = self.pods.saturating_add(other.pods);
        for (k, v) in &other.extended {
            let e = self.extended.entry(k.clone()).or_insert(0);
            *e = e.saturating_add(*v);
        }
    }

    /// Element-wise difference (may go negative: an over-committed node), saturating.
    pub(crate) fn sub(&mut self, other: &Resources) {
        self.cpu_millis = self.cpu_millis.saturating_sub(other.cpu_millis);
        self.memory_bytes = self.memory_bytes.saturating_sub(other.memory_bytes);
        self.ephemeral_storage_bytes = self
            .ephemeral_storage_bytes
            .saturating_sub(other.ephemeral_storage_bytes);
        self.pods = self.pods.saturating_sub(other.pods);
        for (k, v) in &other.extended {
            let e = self.extended.entry(k.clone()).or_insert(0);
            *e = e.saturating_sub(*v);
        }
    }

    /// Element-wise max (a pod's effective request over init containers).
    pub(crate) fn max(&mut self, other: &Resources) {
        self.cpu_millis = self.cpu_millis.max(other.cpu_millis);
        self.memory_bytes = self.memory_bytes.max(other.memory_bytes);
        self.ephemeral_storage_bytes = self
            .ephemeral_storage_bytes
            .max(other.ephemeral_storage_bytes);
        self.pods = self.pods.max(other.pods);
        for (k, v) in &other.extended {
            let e = self.extended.entry(k.clone()).or_insert(0);
            *e = (*e).max(*v);
        }
    }

    /// `self`, each zero value taken from `other` instead (a Node's capacity completed by its
    /// claim's before the Node reports it all: core's `StateNode.Capacity`).
    pub(crate) fn or_else_from(&self, other: &Resources) -> Resources {
        let pick = |a: i64, b: i64| if a == 0 { b } else { a };
        let mut extended = self.extended.clone();
        for (k, v) in &other.extended {
            let e = extended.entry(k.clone()).or_insert(0);
            if *e == 0 {
                *e = *v;
            }
        }
        Resources {
            cpu_millis: pick(self.cpu_millis, other.cpu_millis),
            memory_bytes: pick(self.memory_bytes, other.memory_bytes),
            ephemeral_storage_bytes: pick(
                self.ephemeral_storage_bytes,
                other.ephemeral_storage_bytes,
            ),
            pods: pick(self.pods, other.pods),
            extended,
        }
    }

    /// `self + other`.
    pub(crate) fn plus(&self, other: &Resources) -> Resources {
        let mut r = self.clone();
        r.add(other);
        r
    }

    /// `self - other`.
    pub(crate) fn minus(&self, other: &Resources) -> Resources {
        let mut r = self.clone();
        r.sub(other);
        r
    }

    /// The first resource of `self` (a demand) that exceeds `free`, in the order cpu, memory,
    /// ephemeral-storage, pods, then extended resources by name.
    pub(crate) fn shortfall(&self, free: &Resources) -> Option<Shortfall> {
        let scalar = [
            (CPU, self.cpu_millis, free.cpu_millis),
            (MEMORY, self.memory_bytes, free.memory_bytes),
            (
                EPHEMERAL_STORAGE,
                self.ephemeral_storage_bytes,
                free.ephemeral_storage_bytes,
            ),
            (PODS, self.pods, free.pods),
        ];
        for (name, need, have) in scalar {
            if need > 0 && need > have {
                return Some(Shortfall {
                    resource: name.to_string(),
                    need,
                    free: have,
                });
            }
        }
        for (name, need) in &self.extended {
            let have = free.extended.get(name).copied().unwrap_or(0);
            if *need > 0 && *need > have {
                return Some(Shortfall {
                    resource: name.clone(),
                    need: *need,
                    free: have,
                });
            }
        }
        None
    }

    /// True when `self` (a demand) fits in `free`.
    /// Allocation-free (the hot path of every search); [`Resources::shortfall`] says why not.
    pub fn fits_in(&self, free: &Resources) -> bool {
        let ok = |need: i64, have: i64| need <= 0 || need <= have;
        ok(self.cpu_millis, free.cpu_millis)
            && ok(self.memory_bytes, free.memory_bytes)
            && ok(self.ephemeral_storage_bytes, free.ephemeral_storage_bytes)
            && ok(self.pods, free.pods)
            && self
                .extended
                .iter()
                .all(|(name, &need)| ok(need, free.extended.get(name).copied().unwrap_or(0)))
    }

    /// The amount of one named resource, in its integer unit.
    pub(crate) fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.cpu_millis,
            MEMORY => self.memory_bytes,
            EPHEMERAL_STORAGE => self.ephemeral_storage_bytes,
            PODS => self.pods,
            other => self.extended.get(other).copied().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_reports_the_bad_entry() {
        let r = Resources::from_quantities([
            ("cpu", "3"),
            ("memory", "256Mi"),
            ("nvidia.com/gpu", "1"),
        ])
        .unwrap();
        assert_eq!(r.cpu_millis, 3000);
        assert_eq!(r.memory_bytes, 268_435_456);
        assert_eq!(r.extended.get("nvidia.com/gpu"), Some(&1));
        let (name, err) =
            Resources::from_quantities([("memory", "1Gi"), ("cpu", "4x")]).unwrap_err();
        assert_eq!(name, "cpu");
        assert_eq!(err.text, "4x");
    }

    #[test]
    fn shortfall_names_first_resource_with_numbers() {
        let need = Resources {
            cpu_millis: 3100,
            memory_bytes: 1,
            pods: 1,
            ..Default::default()
        };
        let free = Resources {
            cpu_millis: 1900,
            memory_bytes: 10,
            pods: 109,
            ..Default::default()
        };
        let s = need.shortfall(&free).unwrap();
        assert_eq!((s.resource.as_str(), s.need, s.free), ("cpu", 3100, 1900));
        assert_eq!(s.to_string(), "needs 3100m cpu, 1900m allocatable free");
        let gpu = Resources {
            extended: [("nvidia.com/gpu".to_string(), 1)].into(),
            ..Default::default()
        };
        assert_eq!(gpu.shortfall(&free).unwrap().resource, "nvidia.com/gpu");
        assert!(Resources::default().fits_in(&free));
    }

    #[test]
    fn memory_in_reasons_is_printed_as_everywhere_else() {
        // The form of `simulate`'s MEMORY column, `explain`'s requests and `doctor`'s flavors.
        let need = Resources {
            memory_bytes: 8_000_000_000,
            ..Default::default()
        };
        let free = Resources {
            memory_bytes: 256 << 20,
            cpu_millis: 1000,
            pods: 10,
            ..Default::default()
        };
        let s = need.shortfall(&free).unwrap();
        assert_eq!(s.to_string(), "needs 7.5Gi memory, 256Mi allocatable free");
        assert_eq!(
            Shortfall::format_amount(EPHEMERAL_STORAGE, 20 << 30),
            quantity::format_memory(20 << 30)
        );
        assert_eq!(
            Shortfall::format_amount(EPHEMERAL_STORAGE, 20 << 30),
            "20.0Gi"
        );
    }
}
