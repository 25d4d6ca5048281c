//! A Kubernetes object as read from a file or a cluster, before it is turned into a domain type:
//! kind, apiVersion, identity, where it came from, and its JSON.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::error::Error;

/// One Kubernetes object.
#[derive(Debug, Clone)]
pub struct RawObject {
    /// `group/version` or `v1`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Metadata.
    pub meta: ObjectMeta,
    /// Where it came from: `file.yaml#2` or `workload cluster`.
    pub origin: String,
    /// The whole object.
    pub value: Value,
    /// Values clamped while reading it (times past year 9999's last representable instant).
    pub(crate) oddities: Vec<crate::model::odd::Oddity>,
}

impl RawObject {
    /// Reads identity and metadata from a JSON object. Times the API accepts but a timestamp
    /// cannot hold are clamped first (see [`crate::model::odd::clamp_times`]) and noted.
    pub fn from_value(mut value: Value, origin: &str) -> Result<RawObject, Error> {
        let clamped_times = crate::model::odd::clamp_times(&mut value);
        let described = match (
            value.get("kind").and_then(Value::as_str),
            value.pointer("/metadata/name").and_then(Value::as_str),
        ) {
            (Some(k), Some(n)) => format!("{k} {n}"),
            (Some(k), None) => k.to_string(),
            (None, Some(n)) => format!("object {n}"),
            (None, None) => "object".to_string(),
        };
        let field_err = |field: &str, problem: &str| Error::Object {
            origin: origin.to_string(),
            object: described.clone(),
            field: field.to_string(),
            problem: problem.to_string(),
        };
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                field_err(
                    "kind",
                    "missing: every document must be a Kubernetes object with apiVersion and kind",
                )
            })?
            .to_string();
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| field_err("apiVersion", &format!("missing on a {kind}")))?
            .to_string();
        let meta: ObjectMeta = match value.get("metadata") {
            // Read from the value in place, not from a copy of it.
            Some(m) => {
                <ObjectMeta as serde::Deserialize>::deserialize(m).map_err(|e| Error::Object {
                    origin: origin.to_string(),
                    object: kind.clone(),
                    field: "metadata".to_string(),
                    problem: e.to_string(),
                })?
            }
            None => ObjectMeta::default(),
        };
        let mut obj = RawObject {
            api_version,
            kind,
            meta,
            origin: origin.to_string(),
            value,
            oddities: Vec::new(),
        };
        let used = crate::model::odd::latest_time().to_string();
        obj.oddities = clamped_times
            .into_iter()
            .map(|(field, value)| obj.oddity(field, value, used.clone()))
            .collect();
        Ok(obj)
    }

    /// The API group (`""` for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .split_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }

    /// The version part of apiVersion.
    pub(crate) fn version(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(_, v)| v)
            .unwrap_or(&self.api_version)
    }

    /// Name, or empty.
    pub fn name(&self) -> &str {
        self.meta
            .name
            .as_deref()
            .or(self.meta.generate_name.as_deref())
            .unwrap_or("")
    }

    /// Namespace, or empty for cluster-scoped objects.
    pub(crate) fn namespace(&self) -> &str {
        self.meta.namespace.as_deref().unwrap_or("")
    }

    /// `Kind namespace/name` or `Kind name`, for messages.
    pub(crate) fn display(&self) -> String {
        if self.namespace().is_empty() {
            format!("{} {}", self.kind, self.name())
        } else {
            format!("{} {}/{}", self.kind, self.namespace(), self.name())
        }
    }

    /// An [`Error::Object`] about this object.
    pub(crate) fn error(&self, field: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::Object {
            origin: self.origin.clone(),
            object: self.display(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// `namespace/name`, or `name` for cluster-scoped objects.
    pub(crate) fn key(&self) -> String {
        if self.namespace().is_empty() {
            self.name().to_string()
        } else {
            format!("{}/{}", self.namespace(), self.name())
        }
    }

    /// A clamped value of this object, as data.
    pub(crate) fn oddity(
        &self,
        field: impl Into<String>,
        value: impl Into<String>,
        used: impl Into<String>,
    ) -> crate::model::odd::Oddity {
        crate::model::odd::Oddity {
            origin: self.origin.clone(),
            kind: self.kind.clone(),
            name: self.key(),
            field: field.into(),
            value: value.into(),
            treatment: crate::model::odd::Treatment::Clamped,
            used: used.into(),
        }
    }

    /// The string at a JSON pointer (`/spec/replicas`), if it is a string.
    pub(crate) fn str_at(&self, pointer: &str) -> Option<&str> {
        self.value.pointer(pointer).and_then(Value::as_str)
    }

    /// Deserializes a part of the object into a typed value, naming the field on error.
    pub(crate) fn typed<T: serde::de::DeserializeOwned>(
        &self,
        pointer: &str,
        field: &str,
    ) -> Result<Option<T>, Error> {
        match self.value.pointer(pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::deserialize(v)
                .map(Some)
                .map_err(|e| self.error(field, e.to_string())),
        }
    }
}

/// Labels of an ObjectMeta, empty when unset.
pub(crate) fn labels_of(meta: &ObjectMeta) -> crate::model::labels::Labels {
    meta.labels.clone().unwrap_or_default()
}

/// Annotation value, if set.
pub(crate) fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}
