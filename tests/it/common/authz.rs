//! RBAC for the fake API server: a client made with [`super::FakeApi::client_as`] is that
//! identity, and each of its resource requests is allowed only when a rule of a Role or
//! ClusterRole bound to it (by a RoleBinding in the request's namespace, or a
//! ClusterRoleBinding) covers the request's API group, resource, verb and name, as the API
//! server's RBAC authorizer decides; otherwise it is answered 403. Discovery (non-resource
//! URLs) is open to every identity, as the default `system:discovery` role makes it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::TypeInfo;

/// The RBAC types, for a fake that is given the rendered Roles and bindings.
pub fn rbac_types() -> Vec<TypeInfo> {
    let rbac = "rbac.authorization.k8s.io";
    vec![
        super::t(rbac, &["v1"], "roles", "Role", true, false, false),
        super::t(
            rbac,
            &["v1"],
            "rolebindings",
            "RoleBinding",
            true,
            false,
            false,
        ),
        super::t(
            rbac,
            &["v1"],
            "clusterroles",
            "ClusterRole",
            false,
            false,
            false,
        ),
        super::t(
            rbac,
            &["v1"],
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            false,
            false,
        ),
        super::t(
            "",
            &["v1"],
            "serviceaccounts",
            "ServiceAccount",
            true,
            false,
            false,
        ),
        super::t("", &["v1"], "namespaces", "Namespace", false, false, false),
    ]
}

/// What the authorizer looks at in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    pub group: String,
    /// `plural` or `plural/subresource`.
    pub resource: String,
    pub verb: String,
    /// Empty for cluster-scoped requests and lists across namespaces.
    pub namespace: String,
    pub name: Option<String>,
}

/// The request's attributes, as the API server's request-info resolver derives them; `None` for
/// non-resource URLs (discovery).
pub fn attributes(method: &str, path: &str, query: &str) -> Option<Attributes> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (ns.to_string(), tail),
        other => (String::new(), other),
    };
    let (resource, name) = match rest {
        [] => return None,
        [plural] => (plural.to_string(), None),
        [plural, name] => (plural.to_string(), Some(name.to_string())),
        [plural, name, sub, ..] => (format!("{plural}/{sub}"), Some(name.to_string())),
    };
    let watch = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    let verb = match (method, &name) {
        ("GET", _) if watch => "watch",
        ("GET", Some(_)) => "get",
        ("GET", None) => "list",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", Some(_)) => "delete",
        ("DELETE", None) => "deletecollection",
        _ => return None,
    };
    Some(Attributes {
        group: group.to_string(),
        resource,
        verb: verb.to_string(),
        namespace,
        name,
    })
}

type Key = (String, String, String, String);

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether a binding subject is this user (`system:serviceaccount:NS:NAME` for a
/// ServiceAccount), or a group every ServiceAccount user is in.
fn subject_is(subject: &Value, user: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or("");
    match subject["kind"].as_str() {
        Some("ServiceAccount") => {
            user == format!(
                "system:serviceaccount:{}:{name}",
                subject["namespace"].as_str().unwrap_or("")
            )
        }
        Some("User") => user == name,
        Some("Group") => match user.strip_prefix("system:serviceaccount:") {
            Some(rest) => {
                let ns = rest.split(':').next().unwrap_or("");
                name == "system:serviceaccounts"
                    || name == format!("system:serviceaccounts:{ns}")
                    || name == "system:authenticated"
            }
            None => name == "system:authenticated",
        },
        _ => false,
    }
}

/// Whether a policy rule covers the request (`*` wildcards, `*/subresource`, resourceNames).
fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    let groups = strings(&rule["apiGroups"]);
    let resources = strings(&rule["resources"]);
    let verbs = strings(&rule["verbs"]);
    let names = strings(&rule["resourceNames"]);
    let sub = a.resource.split_once('/').map(|(_, s)| s);
    groups.iter().any(|g| *g == "*" || *g == a.group)
        && resources
            .iter()
            .any(|r| *r == "*" || *r == a.resource || sub.is_some_and(|s| *r == format!("*/{s}")))
        && verbs.iter().any(|v| *v == "*" || *v == a.verb)
        && (names.is_empty() || a.name.as_deref().is_some_and(|n| names.contains(&n)))
}

/// Whether `user` may make the request, by the RBAC objects stored in the fake.
pub fn allowed(objects: &BTreeMap<Key, Value>, user: &str, a: &Attributes) -> bool {
    let rbac = "rbac.authorization.k8s.io";
    let role = |plural: &str, ns: &str, name: &str| {
        objects
            .get(&(
                rbac.to_string(),
                plural.to_string(),
                ns.to_string(),
                name.to_string(),
            ))
            .cloned()
    };
    let grants = |binding: &Value, binding_ns: &str| -> bool {
        if !strings_of_subjects(binding).any(|s| subject_is(s, user)) {
            return false;
        }
        let kind = binding["roleRef"]["kind"].as_str().unwrap_or("");
        let name = binding["roleRef"]["name"].as_str().unwrap_or("");
        let role = match kind {
            "ClusterRole" => role("clusterroles", "", name),
            "Role" => role("roles", binding_ns, name),
            _ => None,
        };
        role.is_some_and(|r| {
            r["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|rule| rule_allows(rule, a))
        })
    };
    objects.iter().any(|((group, plural, ns, _), binding)| {
        group == rbac
            && match plural.as_str() {
                "clusterrolebindings" => grants(binding, ""),
                // A RoleBinding grants only inside its own namespace.
                "rolebindings" => {
                    !a.namespace.is_empty() && *ns == a.namespace && grants(binding, ns)
                }
                _ => false,
            }
    })
}

/// The rules that apply to `user` in `namespace` (ClusterRoleBindings, and RoleBindings of that
/// namespace), as a SelfSubjectRulesReview lists them.
pub fn rules_for(objects: &BTreeMap<Key, Value>, user: &str, namespace: &str) -> Vec<Value> {
    let rbac = "rbac.authorization.k8s.io";
    let mut rules = Vec::new();
    for ((group, plural, ns, _), binding) in objects {
        let applies = group == rbac
            && match plural.as_str() {
                "clusterrolebindings" => true,
                "rolebindings" => ns == namespace,
                _ => false,
            };
        if !applies || !strings_of_subjects(binding).any(|s| subject_is(s, user)) {
            continue;
        }
        let name = binding["roleRef"]["name"].as_str().unwrap_or("");
        let role_key = match binding["roleRef"]["kind"].as_str() {
            Some("ClusterRole") => ("clusterroles", ""),
            Some("Role") => ("roles", ns.as_str()),
            _ => continue,
        };
        let key = (
            rbac.to_string(),
            role_key.0.to_string(),
            role_key.1.to_string(),
            name.to_string(),
        );
        if let Some(role) = objects.get(&key) {
            rules.extend(role["rules"].as_array().into_iter().flatten().cloned());
        }
    }
    rules
}

fn strings_of_subjects(binding: &Value) -> impl Iterator<Item = &Value> {
    binding["subjects"].as_array().into_iter().flatten()
}

/// The 403 message the API server gives.
pub fn forbidden_message(user: &str, a: &Attributes) -> String {
    let scope = if a.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", a.namespace)
    };
    format!(
        "{} \"{}\" is forbidden: User \"{user}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
        a.resource,
        a.name.as_deref().unwrap_or(""),
        a.verb,
        a.resource,
        a.group
    )
}
