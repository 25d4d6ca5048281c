//! Taints and tolerations with the Kubernetes matching rules, and the `key=value:Effect` notation.

use std::fmt;

use serde::Serialize;

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Effect {
    /// New pods that do not tolerate it are not scheduled.
    NoSchedule,
    /// A soft NoSchedule; ignored for fit.
    PreferNoSchedule,
    /// Like NoSchedule, and running pods that do not tolerate it are evicted.
    NoExecute,
}

impl Effect {
    /// Parses an effect name.
    pub(crate) fn parse(text: &str) -> Option<Effect> {
        Some(match text {
            "NoSchedule" => Effect::NoSchedule,
            "PreferNoSchedule" => Effect::PreferNoSchedule,
            "NoExecute" => Effect::NoExecute,
            _ => return None,
        })
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value (empty when none).
    pub value: String,
    /// Effect.
    pub effect: Effect,
}

impl Taint {
    /// A taint from its parts.
    pub(crate) fn new(key: &str, value: &str, effect: Effect) -> Taint {
        Taint {
            key: key.to_string(),
            value: value.to_string(),
            effect,
        }
    }

    /// Parses `key=value:Effect` or `key:Effect`.
    pub fn parse(text: &str) -> Result<Taint, String> {
        let t = text.trim();
        let (kv, effect) = t
            .rsplit_once(':')
            .ok_or_else(|| format!("taint {t:?} has no effect (expected key=value:NoSchedule|PreferNoSchedule|NoExecute)"))?;
        let effect = Effect::parse(effect).ok_or_else(|| {
            format!("taint {t:?} has unknown effect {effect:?} (valid: NoSchedule, PreferNoSchedule, NoExecute)")
        })?;
        let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
        if key.is_empty() {
            return Err(format!("taint {t:?} has an empty key"));
        }
        Ok(Taint::new(key, value, effect))
    }

    /// Parses a comma-separated list (Cluster Autoscaler's `taints` annotation).
    pub(crate) fn parse_list(text: &str) -> Result<Vec<Taint>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Taint::parse)
            .collect()
    }

    /// Reads a k8s-openapi taint.
    pub(crate) fn from_k8s(t: &k8s_openapi::api::core::v1::Taint) -> Result<Taint, String> {
        let effect = Effect::parse(&t.effect).ok_or_else(|| {
            format!(
                "unknown taint effect {:?} (valid: NoSchedule, PreferNoSchedule, NoExecute)",
                t.effect
            )
        })?;
        Ok(Taint::new(&t.key, t.value.as_deref().unwrap_or(""), effect))
    }

    /// Whether this taint keeps non-tolerating pods off a node (PreferNoSchedule does not).
    pub(crate) fn is_hard(&self) -> bool {
        self.effect != Effect::PreferNoSchedule
    }
}

impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A pod toleration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Toleration {
    /// Key; None with `Exists` tolerates every taint.
    pub(crate) key: Option<String>,
    /// `Exists` (any value) rather than `Equal`.
    pub(crate) exists: bool,
    /// Value for `Equal`.
    pub(crate) value: String,
    /// Effect; None matches every effect.
    pub(crate) effect: Option<Effect>,
}

impl Toleration {
    /// Reads a k8s-openapi toleration.
    pub(crate) fn from_k8s(
        t: &k8s_openapi::api::core::v1::Toleration,
    ) -> Result<Toleration, String> {
        let exists = match t.operator.as_deref() {
            None | Some("") | Some("Equal") => false,
            Some("Exists") => true,
            Some(other) => {
                return Err(format!(
                    "unknown toleration operator {other:?} (valid: Equal, Exists)"
                ));
            }
        };
        let effect = match t.effect.as_deref() {
            None | Some("") => None,
            Some(e) => {
                Some(Effect::parse(e).ok_or_else(|| format!("unknown toleration effect {e:?}"))?)
            }
        };
        Ok(Toleration {
            key: t.key.clone().filter(|k| !k.is_empty()),
            exists,
            value: t.value.clone().unwrap_or_default(),
            effect,
        })
    }

    /// Tolerates every taint (`operator: Exists` without a key).
    #[cfg(test)]
    pub(crate) fn everything() -> Toleration {
        Toleration {
            key: None,
            exists: true,
            value: String::new(),
            effect: None,
        }
    }

    /// Whether this toleration matches the taint.
    pub(crate) fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        match &self.key {
            None => self.exists,
            Some(k) if k != &taint.key => false,
            Some(_) => self.exists || self.value == taint.value,
        }
    }
}

/// Taints Karpenter treats as ephemeral: a node carrying one is not initialized yet.
pub(crate) fn is_ephemeral(key: &str) -> bool {
    matches!(
        key,
        "node.kubernetes.io/not-ready"
            | "node.kubernetes.io/unreachable"
            | "node.cloudprovider.kubernetes.io/uninitialized"
            | crate::vocab::keys::UNREGISTERED_TAINT_KEY
    ) || key.starts_with("readiness.k8s.io/")
}

/// Taints a node carries only while it joins: the ephemeral ones, plus the one Cluster API's
/// kubeadm bootstrap adds until its first label sync.
pub(crate) fn is_joining(key: &str) -> bool {
    is_ephemeral(key) || key == "node.cluster.x-k8s.io/uninitialized"
}

/// The first hard taint none of the tolerations match.
pub fn first_untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| t.is_hard())
        .find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

/// [`first_untolerated`], PreferNoSchedule taints included when `soft_too` (Karpenter's
/// planner treats them as hard until it relaxes them, core `scheduling/taints.go`
/// `ToleratesPod`).
pub(crate) fn first_untolerated_with<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    soft_too: bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| soft_too || t.is_hard())
        .find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tol(key: Option<&str>, exists: bool, value: &str, effect: Option<Effect>) -> Toleration {
        Toleration {
            key: key.map(str::to_string),
            exists,
            value: value.to_string(),
            effect,
        }
    }

    #[test]
    fn parses_and_prints_taints() {
        let t = Taint::parse("nvidia.com/gpu=true:NoSchedule").unwrap();
        assert_eq!(t, Taint::new("nvidia.com/gpu", "true", Effect::NoSchedule));
        assert_eq!(t.to_string(), "nvidia.com/gpu=true:NoSchedule");
        assert_eq!(
            Taint::parse("karpenter.sh/unregistered:NoExecute")
                .unwrap()
                .to_string(),
            "karpenter.sh/unregistered:NoExecute"
        );
        assert!(Taint::parse("a=b").is_err());
        assert!(
            Taint::parse("a=b:Sometimes")
                .unwrap_err()
                .contains("unknown effect")
        );
        assert_eq!(
            Taint::parse_list("a:NoSchedule, b=c:NoExecute")
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn toleration_matching() {
        let gpu = Taint::new("gpu", "true", Effect::NoSchedule);
        assert!(tol(Some("gpu"), false, "true", None).tolerates(&gpu));
        assert!(!tol(Some("gpu"), false, "false", None).tolerates(&gpu));
        assert!(tol(Some("gpu"), true, "", Some(Effect::NoSchedule)).tolerates(&gpu));
        assert!(!tol(Some("gpu"), true, "", Some(Effect::NoExecute)).tolerates(&gpu));
        assert!(Toleration::everything().tolerates(&gpu));
        assert!(!tol(None, false, "", None).tolerates(&gpu));
        let soft = Taint::new("x", "", Effect::PreferNoSchedule);
        assert_eq!(
            first_untolerated(&[soft.clone(), gpu.clone()], &[]),
            Some(&gpu)
        );
        assert_eq!(first_untolerated(&[soft], &[]), None);
    }
}
