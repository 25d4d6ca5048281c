//! An in-memory Kubernetes API server for the shell tests, served to `kube::Client` as a
//! `tower::Service` (kube-fake-client 0.3, tried first, has no `scale` subresource, no Eviction
//! API, no `generateName`, no watches and treats every custom resource as namespaced); it
//! covers exactly what the shell uses: discovery by group/version/plural (404 when a CRD is not
//! installed), list (with watch streams), get, create (generateName, uid, resourceVersion),
//! merge patch and server-side apply (with `metadata.resourceVersion` as a precondition),
//! update with resourceVersion, the `status` and `scale` subresources, evictions, ServiceAccount
//! TokenRequests, deletes with finalizers, a request log, and injected faults.

#![allow(dead_code)]

pub mod authz;
pub mod cli;
pub mod serve;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// A resource type the fake serves.
#[derive(Debug, Clone)]
pub struct TypeInfo {
    pub group: &'static str,
    pub versions: Vec<&'static str>,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub status: bool,
    pub scale: bool,
}

pub fn t(
    group: &'static str,
    versions: &[&'static str],
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    status: bool,
    scale: bool,
) -> TypeInfo {
    TypeInfo {
        group,
        versions: versions.to_vec(),
        plural,
        kind,
        namespaced,
        status,
        scale,
    }
}

/// The provider types `init` reads beside Cluster API's own: the kubeadm control plane and the
/// OpenStack machine templates.
pub fn provider_types() -> Vec<TypeInfo> {
    vec![
        t(
            "controlplane.cluster.x-k8s.io",
            &["v1beta2"],
            "kubeadmcontrolplanes",
            "KubeadmControlPlane",
            true,
            true,
            false,
        ),
        t(
            "infrastructure.cluster.x-k8s.io",
            &["v1beta1"],
            "openstackmachinetemplates",
            "OpenStackMachineTemplate",
            true,
            false,
            false,
        ),
    ]
}

/// Every type of a cluster with Karpenter's and Cluster API's CRDs installed.
pub fn all_types() -> Vec<TypeInfo> {
    vec![
        t(
            "",
            &["v1"],
            "serviceaccounts",
            "ServiceAccount",
            true,
            false,
            false,
        ),
        t("", &["v1"], "secrets", "Secret", true, false, false),
        t("", &["v1"], "pods", "Pod", true, true, false),
        t("", &["v1"], "nodes", "Node", false, true, false),
        t("", &["v1"], "events", "Event", true, false, false),
        t(
            "",
            &["v1"],
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            true,
            true,
            false,
        ),
        t(
            "",
            &["v1"],
            "persistentvolumes",
            "PersistentVolume",
            false,
            true,
            false,
        ),
        t(
            "storage.k8s.io",
            &["v1"],
            "storageclasses",
            "StorageClass",
            false,
            false,
            false,
        ),
        t(
            "node.k8s.io",
            &["v1"],
            "runtimeclasses",
            "RuntimeClass",
            false,
            false,
            false,
        ),
        t(
            "coordination.k8s.io",
            &["v1"],
            "leases",
            "Lease",
            true,
            false,
            false,
        ),
        t(
            "apps",
            &["v1"],
            "daemonsets",
            "DaemonSet",
            true,
            true,
            false,
        ),
        t(
            "policy",
            &["v1"],
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            true,
            true,
            false,
        ),
        t(
            "karpenter.sh",
            &["v1"],
            "nodepools",
            "NodePool",
            false,
            true,
            false,
        ),
        t(
            "karpenter.sh",
            &["v1"],
            "nodeclaims",
            "NodeClaim",
            false,
            true,
            false,
        ),
        t(
            "karpenter.cluster.x-k8s.io",
            &["v1alpha1"],
            "clusterapinodeclasses",
            "ClusterAPINodeClass",
            false,
            true,
            false,
        ),
        t(
            "cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
            "machinedeployments",
            "MachineDeployment",
            true,
            true,
            true,
        ),
        t(
            "cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
            "machines",
            "Machine",
            true,
            true,
            false,
        ),
        t(
            "cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
            "machinesets",
            "MachineSet",
            true,
            true,
            true,
        ),
        t(
            "cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
            "clusters",
            "Cluster",
            true,
            true,
            false,
        ),
        t(
            "bootstrap.cluster.x-k8s.io",
            &["v1beta2", "v1beta1"],
            "kubeadmconfigtemplates",
            "KubeadmConfigTemplate",
            true,
            false,
            false,
        ),
    ]
}

/// One request the fake answered.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub body: Value,
    pub code: u16,
    /// When it arrived (tokio's clock, so paused-time tests can measure spacing).
    pub at: tokio::time::Instant,
}

impl Req {
    /// `METHOD path` for order assertions.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The RBAC check this request needs, as (API group, resource[/subresource], verb), as the
    /// API server's request-info resolver derives it; `None` for discovery (non-resource URLs,
    /// which every authenticated identity may read).
    pub fn rbac(&self) -> Option<(String, String, String)> {
        let segments: Vec<&str> = self.path.trim_matches('/').split('/').collect();
        let (group, rest) = match segments.as_slice() {
            ["api", _version, rest @ ..] => ("", rest),
            ["apis", group, _version, rest @ ..] => (*group, rest),
            _ => return None,
        };
        let rest = match rest {
            ["namespaces", _ns, tail @ ..] if !tail.is_empty() => tail,
            other => other,
        };
        let (resource, name) = match rest {
            [] => return None,
            [plural] => (plural.to_string(), None),
            [plural, name] => (plural.to_string(), Some(*name)),
            [plural, name, sub, ..] => (format!("{plural}/{sub}"), Some(*name)),
        };
        let watch = self
            .query
            .split('&')
            .any(|kv| kv == "watch=true" || kv == "watch=1");
        let verb = match (self.method.as_str(), name) {
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
        Some((group.to_string(), resource, verb.to_string()))
    }
}

/// Another writer's change, made to a stored object just before a matching request is
/// answered (so the request sees the object as changed after its sender read it).
struct Race {
    method: String,
    path_contains: String,
    key: Key,
    change: Box<dyn FnOnce(&mut Value) + Send>,
}

#[derive(Debug, Clone)]
struct Fault {
    method: String,
    path_contains: String,
    code: u16,
    reason: String,
    message: String,
    remaining: usize,
}

type Key = (String, String, String, String); // group, plural, namespace, name

#[derive(Default)]
struct State {
    types: Vec<TypeInfo>,
    objects: BTreeMap<Key, Value>,
    rv: u64,
    uid: u64,
    log: Vec<Req>,
    faults: Vec<Fault>,
    races: Vec<Race>,
    /// The longest token a TokenRequest gets (the API server's
    /// `--service-account-max-token-expiration`); None: as asked.
    max_token_secs: Option<i64>,
}

/// The fake API server. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct FakeApi {
    state: Arc<Mutex<State>>,
    events: broadcast::Sender<(String, String, Value)>, // group, plural, watch event
    /// The identity of this clone's requests: when set, each is authorized against the stored
    /// RBAC objects ([`authz`]); unset, everything is allowed.
    user: Option<Arc<str>>,
}

type Body = BoxBody<Bytes, Infallible>;

impl FakeApi {
    /// A cluster serving every type of [`all_types`].
    pub fn new() -> FakeApi {
        FakeApi::with_types(all_types())
    }

    /// A cluster serving these types only.
    pub fn with_types(types: Vec<TypeInfo>) -> FakeApi {
        let (events, _) = broadcast::channel(4096);
        FakeApi {
            state: Arc::new(Mutex::new(State {
                types,
                rv: 100,
                ..State::default()
            })),
            events,
            user: None,
        }
    }

    /// Stops serving a resource (a CRD that is not installed).
    pub fn without(self, plural: &str) -> FakeApi {
        self.state
            .lock()
            .unwrap()
            .types
            .retain(|t| t.plural != plural);
        self
    }

    /// Serves only these versions of a resource.
    pub fn versions(self, plural: &str, versions: &[&'static str]) -> FakeApi {
        for t in self
            .state
            .lock()
            .unwrap()
            .types
            .iter_mut()
            .filter(|t| t.plural == plural)
        {
            t.versions = versions.to_vec();
        }
        self
    }

    /// Caps the lifetime of issued ServiceAccount tokens, as an API server's
    /// `--service-account-max-token-expiration` does.
    pub fn cap_tokens(&self, secs: i64) {
        self.state.lock().unwrap().max_token_secs = Some(secs);
    }

    /// A kube client talking to this fake.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }

    /// A kube client whose requests are made as `user` (`system:serviceaccount:NS:NAME` for a
    /// ServiceAccount) and answered 403 unless the stored RBAC objects allow them.
    pub fn client_as(&self, user: &str) -> kube::Client {
        let mut fake = self.clone();
        fake.user = Some(Arc::from(user));
        kube::Client::new(fake, "default")
    }

    /// Seeds objects (YAML, several documents).
    pub fn seed_yaml(&self, yaml: &str) {
        for doc in yaml.split("\n---\n") {
            if doc.trim().is_empty() {
                continue;
            }
            let v: Value = serde_saphyr::from_str(doc).unwrap();
            self.seed(v);
        }
    }

    /// Seeds every object of a test world.
    pub fn seed_world(&self, world: &karpenter_capi_testkit::World) {
        for o in world.objects() {
            self.seed(o.clone());
        }
    }

    /// Seeds one object as it is (uid and resourceVersion added when missing).
    pub fn seed(&self, obj: Value) {
        self.seed_as(obj, true);
    }

    /// Seeds one object that the watches do not show (a watch lagging behind a write another
    /// replica made): lists and gets see it, no watch event is sent.
    pub fn seed_unwatched(&self, obj: Value) {
        self.seed_as(obj, false);
    }

    fn seed_as(&self, mut obj: Value, watched: bool) {
        let mut st = self.state.lock().unwrap();
        let api_version = obj["apiVersion"].as_str().unwrap().to_string();
        let kind = obj["kind"].as_str().unwrap().to_string();
        let group = api_version
            .rsplit_once('/')
            .map(|(g, _)| g.to_string())
            .unwrap_or_default();
        let ty = st
            .types
            .iter()
            .find(|t| t.group == group && t.kind == kind)
            .cloned()
            .unwrap_or_else(|| panic!("type {kind} not served"));
        st.rv += 1;
        st.uid += 1;
        let rv = st.rv.to_string();
        let uid = format!("uid-{}", st.uid);
        let meta = obj["metadata"].as_object_mut().unwrap();
        meta.entry("resourceVersion").or_insert(json!(rv));
        meta.entry("uid").or_insert(json!(uid));
        meta.entry("creationTimestamp")
            .or_insert(json!("2026-11-30T10:00:00Z"));
        let ns = if ty.namespaced {
            obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        st.objects.insert(
            (group.clone(), ty.plural.to_string(), ns, name),
            obj.clone(),
        );
        drop(st);
        if watched {
            self.emit(&group, ty.plural, "ADDED", &obj);
        }
    }

    /// An object by group, plural, namespace ("" for cluster-scoped) and name.
    pub fn get(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.state
            .lock()
            .unwrap()
            .objects
            .get(&(group.into(), plural.into(), namespace.into(), name.into()))
            .cloned()
    }

    /// Removes an object behind the controller's back.
    pub fn remove(&self, group: &str, plural: &str, namespace: &str, name: &str) {
        let obj = self.state.lock().unwrap().objects.remove(&(
            group.into(),
            plural.into(),
            namespace.into(),
            name.into(),
        ));
        if let Some(obj) = obj {
            self.emit(group, plural, "DELETED", &obj);
        }
    }

    /// Every object of a type.
    pub fn all(&self, group: &str, plural: &str) -> Vec<Value> {
        self.state
            .lock()
            .unwrap()
            .objects
            .iter()
            .filter(|(k, _)| k.0 == group && k.1 == plural)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// The requests answered so far.
    pub fn requests(&self) -> Vec<Req> {
        self.state.lock().unwrap().log.clone()
    }

    /// The writes (non-GET requests) answered so far, as `METHOD path [code]`.
    pub fn writes(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter(|r| r.method != "GET")
            .map(|r| format!("{} {} {}", r.method, r.path, r.code))
            .collect()
    }

    /// Forgets the request log.
    pub fn clear_log(&self) {
        self.state.lock().unwrap().log.clear();
    }

    /// Answers the next `times` requests with `method` whose path contains `path_contains` with
    /// an error `code`.
    pub fn fail(&self, method: &str, path_contains: &str, code: u16, times: usize) {
        let (reason, message) = match code {
            403 => ("Forbidden", "forbidden: the identity may not do this".to_string()),
            409 => ("Conflict", "the object has been modified; please apply your changes to the latest version and try again".to_string()),
            429 => ("TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.".to_string()),
            _ => ("InternalError", "etcdserver: request timed out".to_string()),
        };
        self.state.lock().unwrap().faults.push(Fault {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            code,
            reason: reason.to_string(),
            message,
            remaining: times,
        });
    }

    /// Like [`FakeApi::fail`], with this reason and message.
    pub fn fail_with(
        &self,
        method: &str,
        path_contains: &str,
        code: u16,
        reason: &str,
        message: &str,
        times: usize,
    ) {
        self.state.lock().unwrap().faults.push(Fault {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            code,
            reason: reason.to_string(),
            message: message.to_string(),
            remaining: times,
        });
    }

    /// Never answers the next `times` requests with `method` whose path contains `path_contains`
    /// (a hung API server); they are logged with code 0.
    pub fn hang(&self, method: &str, path_contains: &str, times: usize) {
        self.state.lock().unwrap().faults.push(Fault {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            code: 0,
            reason: String::new(),
            message: String::new(),
            remaining: times,
        });
    }

    /// Ends every watch of `group`/`plural` with a `410 Expired` error event (an expired
    /// resourceVersion, as after an API server restart): the watchers must re-list.
    pub fn expire_watches(&self, group: &str, plural: &str) {
        let _ = self.events.send((
            group.to_string(),
            plural.to_string(),
            json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "Expired", "code": 410, "message": "too old resource version"}}),
        ));
    }

    /// Before answering the next request with `method` whose path contains `path_contains`,
    /// changes the stored object `group`/`plural`/`namespace`/`name` as another writer would
    /// (resourceVersion bumped, a MODIFIED watch event): the race between a read and a write.
    #[allow(clippy::too_many_arguments)]
    pub fn race(
        &self,
        method: &str,
        path_contains: &str,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
        change: impl FnOnce(&mut Value) + Send + 'static,
    ) {
        self.state.lock().unwrap().races.push(Race {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            key: (group.into(), plural.into(), namespace.into(), name.into()),
            change: Box::new(change),
        });
    }

    /// Drops every injected fault not used up yet.
    pub fn clear_faults(&self) {
        self.state.lock().unwrap().faults.clear();
    }

    /// Like [`FakeApi::mutate`], but the watches do not show the change (a lagging watch).
    pub fn mutate_unwatched(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) {
        let mut st = self.state.lock().unwrap();
        st.rv += 1;
        let rv = st.rv.to_string();
        let key = (group.into(), plural.into(), namespace.into(), name.into());
        let obj = st.objects.get_mut(&key).unwrap();
        f(obj);
        obj["metadata"]["resourceVersion"] = json!(rv);
    }

    /// Changes an object behind the controller's back (another writer), bumping its resourceVersion.
    pub fn mutate(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) {
        let mut st = self.state.lock().unwrap();
        st.rv += 1;
        let rv = st.rv.to_string();
        let key = (
            group.to_string(),
            plural.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        let obj = st.objects.get_mut(&key).unwrap();
        f(obj);
        obj["metadata"]["resourceVersion"] = json!(rv);
        let obj = obj.clone();
        drop(st);
        let _ = self.events.send((
            group.to_string(),
            plural.to_string(),
            json!({"type": "MODIFIED", "object": obj}),
        ));
    }

    fn handle(
        &self,
        method: &str,
        path: &str,
        query: &str,
        content_type: &str,
        body: Value,
    ) -> Option<Response<Body>> {
        let mut st = self.state.lock().unwrap();
        // Reviews of one's own identity and rules are open to every identity (the default
        // `system:basic-user` role); unauthenticated clients are the cluster admin.
        if method == "POST" && path.ends_with("/selfsubjectreviews") {
            let mut answer = body.clone();
            answer["status"] = json!({"userInfo": {"username": self.user.as_deref().unwrap_or("kubernetes-admin")}});
            return Some(ok(201, answer));
        }
        if method == "POST" && path.ends_with("/selfsubjectrulesreviews") {
            let namespace = body["spec"]["namespace"].as_str().unwrap_or("").to_string();
            let rules = match &self.user {
                Some(user) => authz::rules_for(&st.objects, user, &namespace),
                None => vec![json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
            };
            let mut answer = body.clone();
            answer["status"] =
                json!({"resourceRules": rules, "nonResourceRules": [], "incomplete": false});
            return Some(ok(201, answer));
        }
        // Authorization before anything else, as the API server does it.
        if let Some(user) = &self.user
            && let Some(a) = authz::attributes(method, path, query)
            && !authz::allowed(&st.objects, user, &a)
        {
            st.log.push(Req {
                method: method.into(),
                path: path.into(),
                query: query.into(),
                content_type: content_type.into(),
                body,
                code: 403,
                at: tokio::time::Instant::now(),
            });
            return Some(status(
                403,
                "Forbidden",
                &authz::forbidden_message(user, &a),
            ));
        }
        // Another writer got there first.
        if let Some(i) = st
            .races
            .iter()
            .position(|r| r.method == method && path.contains(&r.path_contains))
        {
            let race = st.races.remove(i);
            st.rv += 1;
            let rv = st.rv.to_string();
            if let Some(obj) = st.objects.get_mut(&race.key) {
                (race.change)(obj);
                obj["metadata"]["resourceVersion"] = json!(rv);
                let obj = obj.clone();
                self.emit(&race.key.0, &race.key.1, "MODIFIED", &obj);
            }
        }
        // Faults first: they stand for the API server refusing the request.
        if let Some(f) = st
            .faults
            .iter_mut()
            .find(|f| f.remaining > 0 && f.method == method && path.contains(&f.path_contains))
        {
            f.remaining -= 1;
            let (code, reason, message) = (f.code, f.reason.clone(), f.message.clone());
            st.log.push(Req {
                method: method.into(),
                path: path.into(),
                query: query.into(),
                content_type: content_type.into(),
                body,
                code,
                at: tokio::time::Instant::now(),
            });
            if code == 0 {
                return None;
            }
            return Some(status(code, &reason, &message));
        }
        let (resp, code) = self.route(&mut st, method, path, query, content_type, &body);
        st.log.push(Req {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            content_type: content_type.into(),
            body,
            code,
            at: tokio::time::Instant::now(),
        });
        Some(resp)
    }

    fn route(
        &self,
        st: &mut State,
        method: &str,
        path: &str,
        query: &str,
        _ct: &str,
        body: &Value,
    ) -> (Response<Body>, u16) {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, rest) = match parts.as_slice() {
            ["api", rest @ ..] => ("", rest),
            ["apis", g, rest @ ..] => (*g, rest),
            _ => return not_served(),
        };
        let [version, rest @ ..] = rest else {
            return not_served();
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (ns.to_string(), rest),
            _ => (String::new(), rest),
        };
        let [plural, rest @ ..] = rest else {
            return not_served();
        };
        let Some(ty) = st
            .types
            .iter()
            .find(|t| t.group == group && t.plural == *plural && t.versions.contains(version))
            .cloned()
        else {
            return not_served();
        };
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let name = rest.first().map(|s| s.to_string());
        let sub = rest.get(1).copied();
        let ns = if ty.namespaced {
            namespace.clone()
        } else {
            String::new()
        };
        let key = |n: &str| {
            (
                group.to_string(),
                ty.plural.to_string(),
                ns.clone(),
                n.to_string(),
            )
        };
        let with_version = |mut v: Value| {
            v["apiVersion"] = json!(api_version);
            v
        };
        let not_found = |n: &str| {
            let what = if group.is_empty() {
                ty.plural.to_string()
            } else {
                format!("{}.{}", ty.plural, group)
            };
            (
                status(404, "NotFound", &format!("{what} \"{n}\" not found")),
                404,
            )
        };
        match (method, name.as_deref(), sub) {
            ("GET", None, _) => {
                let selector = label_selector(query);
                let items: Vec<Value> = st
                    .objects
                    .iter()
                    .filter(|(k, v)| {
                        k.0 == group
                            && k.1 == ty.plural
                            && (ns.is_empty() || k.2 == ns)
                            && selector
                                .as_deref()
                                .is_none_or(|sel| selector_matches(sel, v))
                    })
                    .map(|(_, v)| with_version(v.clone()))
                    .collect();
                if query.contains("watch=true") || query.contains("watch=1") {
                    return (
                        self.watch(group, ty.plural, &ns, &api_version, selector),
                        200,
                    );
                }
                let list = json!({"apiVersion": api_version, "kind": format!("{}List", ty.kind), "metadata": {"resourceVersion": st.rv.to_string()}, "items": items});
                (ok(200, list), 200)
            }
            ("GET", Some(n), None) => match st.objects.get(&key(n)) {
                Some(v) => (ok(200, with_version(v.clone())), 200),
                None => not_found(n),
            },
            ("GET", Some(n), Some("status")) => match st.objects.get(&key(n)) {
                Some(v) => (ok(200, with_version(v.clone())), 200),
                None => not_found(n),
            },
            ("GET", Some(n), Some("scale")) if ty.scale => match st.objects.get(&key(n)) {
                Some(v) => (ok(200, scale_of(v)), 200),
                None => not_found(n),
            },
            ("POST", None, _) => {
                let mut obj = body.clone();
                let generate = obj
                    .pointer("/metadata/generateName")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let n = match obj.pointer("/metadata/name").and_then(Value::as_str) {
                    Some(n) if !n.is_empty() => n.to_string(),
                    _ => match generate {
                        Some(prefix) => {
                            st.uid += 1;
                            format!("{prefix}{}", suffix(st.uid))
                        }
                        None => {
                            return (
                                status(422, "Invalid", "name or generateName is required"),
                                422,
                            );
                        }
                    },
                };
                if st.objects.contains_key(&key(&n)) {
                    return (
                        status(
                            409,
                            "AlreadyExists",
                            &format!("{}.{} \"{n}\" already exists", ty.plural, group),
                        ),
                        409,
                    );
                }
                st.rv += 1;
                st.uid += 1;
                obj["apiVersion"] = json!(api_version);
                obj["kind"] = json!(ty.kind);
                obj["metadata"]["name"] = json!(n);
                if ty.namespaced {
                    obj["metadata"]["namespace"] = json!(ns);
                }
                obj["metadata"]["uid"] = json!(format!("uid-{}", st.uid));
                obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
                obj["metadata"]["generation"] = json!(1);
                obj["metadata"]["creationTimestamp"] = json!(now_stamp());
                if ty.status
                    && let Some(m) = obj.as_object_mut()
                {
                    m.remove("status");
                }
                st.objects.insert(key(&n), obj.clone());
                self.emit(group, ty.plural, "ADDED", &obj);
                (ok(201, obj), 201)
            }
            // TokenRequest: a JWT-shaped token (unsigned) whose `exp` is what the answer says.
            ("POST", Some(n), Some("token")) if ty.plural == "serviceaccounts" => {
                if !st.objects.contains_key(&key(n)) {
                    return not_found(n);
                }
                let asked = body
                    .pointer("/spec/expirationSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(3600);
                let secs = st.max_token_secs.map_or(asked, |cap| asked.min(cap));
                let now = jiff::Timestamp::now().as_second();
                let exp = now + secs;
                st.uid += 1;
                let claims = json!({
                    "aud": ["https://kubernetes.default.svc"],
                    "exp": exp,
                    "iat": now,
                    "iss": "https://kubernetes.default.svc",
                    "sub": format!("system:serviceaccount:{ns}:{n}"),
                    "jti": format!("jti-{}", st.uid),
                });
                let url = |b: &[u8]| {
                    karpenter_capi::bundle::kubeconfig::base64(b)
                        .trim_end_matches('=')
                        .replace('+', "-")
                        .replace('/', "_")
                };
                let token = format!(
                    "{}.{}.c2lnbmF0dXJl",
                    url(br#"{"alg":"RS256","kid":"fake"}"#),
                    url(claims.to_string().as_bytes())
                );
                let expires = jiff::Timestamp::from_second(exp).unwrap().to_string();
                (
                    ok(
                        201,
                        json!({
                            "apiVersion": "authentication.k8s.io/v1",
                            "kind": "TokenRequest",
                            "metadata": {"name": n, "namespace": ns},
                            "spec": {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": secs},
                            "status": {"token": token, "expirationTimestamp": expires},
                        }),
                    ),
                    201,
                )
            }
            ("POST", Some(n), Some("eviction")) if ty.plural == "pods" => {
                if let Some(refused) = stale_uid(
                    st.objects.get(&key(n)),
                    body.pointer("/deleteOptions/preconditions/uid"),
                ) {
                    return refused;
                }
                match st.objects.remove(&key(n)) {
                    Some(obj) => {
                        self.emit(group, ty.plural, "DELETED", &obj);
                        (
                            ok(
                                201,
                                json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}),
                            ),
                            201,
                        )
                    }
                    None => not_found(n),
                }
            }
            ("PATCH", Some(n), sub) | ("PUT", Some(n), sub) => {
                let apply = _ct.contains("apply-patch");
                let existing = st.objects.get(&key(n)).cloned();
                let Some(mut obj) = existing.or_else(|| apply.then(|| json!({"apiVersion": api_version, "kind": ty.kind, "metadata": {"name": n}}))) else {
                    return not_found(n);
                };
                let created = !st.objects.contains_key(&key(n));
                // resourceVersion in the body is a precondition (update, or a patch that names it).
                if let Some(rv) = body
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    && !created
                    && obj
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        != Some(rv)
                {
                    let msg = format!(
                        "Operation cannot be fulfilled on {}.{} \"{n}\": the object has been modified; please apply your changes to the latest version and try again",
                        ty.plural, group
                    );
                    return (status(409, "Conflict", &msg), 409);
                }
                let before = obj.clone();
                match sub {
                    Some("scale") if ty.scale => {
                        if let Some(r) = body.pointer("/spec/replicas") {
                            obj["spec"]["replicas"] = r.clone();
                        }
                    }
                    Some("status") => {
                        let mut patch = body.get("status").cloned().unwrap_or(Value::Null);
                        if method == "PUT" {
                            obj["status"] = patch;
                        } else {
                            let mut s = obj.get("status").cloned().unwrap_or(json!({}));
                            merge(&mut s, std::mem::take(&mut patch));
                            obj["status"] = s;
                        }
                    }
                    None => {
                        let mut b = body.clone();
                        if let Some(m) = b.as_object_mut() {
                            if ty.status {
                                m.remove("status");
                            }
                            if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut)
                            {
                                for k in
                                    ["resourceVersion", "uid", "creationTimestamp", "generation"]
                                {
                                    meta.remove(k);
                                }
                            }
                        }
                        if method == "PUT" {
                            let meta = obj["metadata"].clone();
                            let status = obj.get("status").cloned();
                            obj = b;
                            let mut m = meta;
                            let sent = obj.get("metadata").cloned().unwrap_or(json!({}));
                            merge(&mut m, sent.clone());
                            // A replace sets the labels and annotations it sends, as the API
                            // server does: a key it leaves out is gone.
                            if let Some(m) = m.as_object_mut() {
                                for key in ["labels", "annotations"] {
                                    match sent.get(key) {
                                        Some(v) => m.insert(key.to_string(), v.clone()),
                                        None => m.remove(key),
                                    };
                                }
                            }
                            obj["metadata"] = m;
                            if let (true, Some(s)) = (ty.status, status) {
                                obj["status"] = s;
                            }
                        } else {
                            merge(&mut obj, b);
                        }
                    }
                    _ => return not_served(),
                }
                if obj == before && !created {
                    let out = if sub == Some("scale") {
                        scale_of(&obj)
                    } else {
                        with_version(obj)
                    };
                    return (ok(200, out), 200);
                }
                st.rv += 1;
                obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
                if created {
                    st.uid += 1;
                    obj["metadata"]["uid"] = json!(format!("uid-{}", st.uid));
                    if ty.namespaced {
                        obj["metadata"]["namespace"] = json!(ns);
                    }
                }
                if before.get("spec") != obj.get("spec") {
                    let g = obj
                        .pointer("/metadata/generation")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    obj["metadata"]["generation"] = json!(g + 1);
                }
                // The last finalizer of an object being deleted came off: it goes.
                let finalized = obj.pointer("/metadata/deletionTimestamp").is_some()
                    && obj
                        .pointer("/metadata/finalizers")
                        .and_then(Value::as_array)
                        .is_none_or(|f| f.is_empty());
                if finalized {
                    st.objects.remove(&key(n));
                    self.emit(group, ty.plural, "DELETED", &obj);
                    return (ok(200, with_version(obj)), 200);
                }
                st.objects.insert(key(n), obj.clone());
                self.emit(
                    group,
                    ty.plural,
                    if created { "ADDED" } else { "MODIFIED" },
                    &obj,
                );
                let out = if sub == Some("scale") {
                    scale_of(&obj)
                } else {
                    with_version(obj)
                };
                (
                    ok(if created { 201 } else { 200 }, out),
                    if created { 201 } else { 200 },
                )
            }
            ("DELETE", Some(n), None) => {
                let Some(mut obj) = st.objects.get(&key(n)).cloned() else {
                    return not_found(n);
                };
                if let Some(refused) = stale_uid(Some(&obj), body.pointer("/preconditions/uid")) {
                    return refused;
                }
                let has_finalizers = obj
                    .pointer("/metadata/finalizers")
                    .and_then(Value::as_array)
                    .is_some_and(|f| !f.is_empty());
                if has_finalizers {
                    st.rv += 1;
                    obj["metadata"]["deletionTimestamp"] = json!("2026-11-30T10:30:00Z");
                    obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
                    st.objects.insert(key(n), obj.clone());
                    self.emit(group, ty.plural, "MODIFIED", &obj);
                } else {
                    st.objects.remove(&key(n));
                    self.emit(group, ty.plural, "DELETED", &obj);
                }
                (ok(200, with_version(obj)), 200)
            }
            _ => (
                status(405, "MethodNotAllowed", "not supported by the fake"),
                405,
            ),
        }
    }

    fn emit(&self, group: &str, plural: &str, kind: &str, obj: &Value) {
        let _ = self.events.send((
            group.to_string(),
            plural.to_string(),
            json!({"type": kind, "object": obj}),
        ));
    }

    fn watch(
        &self,
        group: &str,
        plural: &str,
        ns: &str,
        api_version: &str,
        selector: Option<String>,
    ) -> Response<Body> {
        let rx = self.events.subscribe();
        let (group, plural, ns, api_version) = (
            group.to_string(),
            plural.to_string(),
            ns.to_string(),
            api_version.to_string(),
        );
        let stream = futures::stream::unfold(rx, move |mut rx| {
            let (group, plural, ns, api_version, selector) = (
                group.clone(),
                plural.clone(),
                ns.clone(),
                api_version.clone(),
                selector.clone(),
            );
            async move {
                loop {
                    match rx.recv().await {
                        Ok((g, p, ev)) if g == group && p == plural && ev["type"] == "ERROR" => {
                            let line = format!("{ev}\n");
                            return Some((
                                Ok::<_, Infallible>(hyper::body::Frame::data(Bytes::from(line))),
                                rx,
                            ));
                        }
                        Ok((g, p, mut ev)) if g == group && p == plural => {
                            let obj_ns = ev
                                .pointer("/object/metadata/namespace")
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            if !ns.is_empty() && obj_ns != ns {
                                continue;
                            }
                            if selector
                                .as_deref()
                                .is_some_and(|sel| !selector_matches(sel, &ev["object"]))
                            {
                                continue;
                            }
                            ev["object"]["apiVersion"] = json!(api_version);
                            let line = format!("{ev}\n");
                            return Some((
                                Ok::<_, Infallible>(hyper::body::Frame::data(Bytes::from(line))),
                                rx,
                            ));
                        }
                        Ok(_) => continue,
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            }
        });
        Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(StreamBody::new(stream).boxed())
            .unwrap()
    }
}

impl Default for FakeApi {
    fn default() -> Self {
        FakeApi::new()
    }
}

/// The current time as the API server stamps it (whole seconds).
/// The API server's answer to a delete or an eviction whose UID precondition names another
/// object than the one stored under that name (it was deleted and re-created): 409 Conflict,
/// nothing deleted. `None` when there is no precondition, no object, or the UIDs match.
fn stale_uid(obj: Option<&Value>, precondition: Option<&Value>) -> Option<(Response<Body>, u16)> {
    let want = precondition?.as_str()?;
    let have = obj?
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    (want != have).then(|| {
        (
            status(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled: Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
                ),
            ),
            409,
        )
    })
}

/// The `labelSelector` of a request's query, decoded.
fn label_selector(query: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let v = kv.strip_prefix("labelSelector=")?;
        let v = v.replace('+', " ");
        Some(
            percent_encoding::percent_decode_str(&v)
                .decode_utf8_lossy()
                .into_owned(),
        )
    })
}

/// Whether an object's labels satisfy a label selector as the API server reads it: terms
/// separated by commas (outside parentheses), each `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
/// `k notin (a,b)`, `k` or `!k`.
pub fn selector_matches(selector: &str, obj: &Value) -> bool {
    let labels = obj.pointer("/metadata/labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .all(|t| {
            let set = |rest: &str| -> Vec<String> {
                rest.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .collect()
            };
            if let Some((k, rest)) = t.split_once(" notin ") {
                !label(k.trim()).is_some_and(|v| set(rest).iter().any(|s| s == v))
            } else if let Some((k, rest)) = t.split_once(" in ") {
                label(k.trim()).is_some_and(|v| set(rest).iter().any(|s| s == v))
            } else if let Some((k, v)) = t.split_once("!=") {
                label(k.trim()) != Some(v.trim())
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                label(k.trim()) == Some(v.trim())
            } else if let Some(k) = t.strip_prefix('!') {
                label(k.trim()).is_none()
            } else {
                label(t).is_some()
            }
        })
}

pub fn now_stamp() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string()
}

fn suffix(n: u64) -> String {
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = n as usize + 1000;
    (0..5)
        .map(|_| {
            let c = alphabet[n % alphabet.len()] as char;
            n /= alphabet.len();
            c
        })
        .collect()
}

fn scale_of(obj: &Value) -> Value {
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"], "resourceVersion": obj["metadata"]["resourceVersion"]},
        "spec": {"replicas": obj.pointer("/spec/replicas").cloned().unwrap_or(json!(0))},
        "status": {"replicas": obj.pointer("/status/replicas").cloned().unwrap_or(json!(0))},
    })
}

/// RFC 7386 JSON merge patch.
pub fn merge(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = json!({});
            }
            let t = target.as_object_mut().unwrap();
            for (k, v) in p {
                if v.is_null() {
                    t.remove(&k);
                } else {
                    merge(t.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        other => *target = other,
    }
}

fn ok(code: u16, v: Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())).boxed())
        .unwrap()
}

fn status(code: u16, reason: &str, message: &str) -> Response<Body> {
    ok(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}),
    )
}

fn not_served() -> (Response<Body>, u16) {
    (
        status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ),
        404,
    )
}

impl tower::Service<Request<kube::client::Body>> for FakeApi {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let method = req.method().to_string();
            let path = req.uri().path().to_string();
            let query = req.uri().query().unwrap_or("").to_string();
            let ct = req
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let bytes = req
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let body: Value = if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).unwrap_or(Value::Null)
            };
            match this.handle(&method, &path, &query, &ct, body) {
                Some(response) => Ok(response),
                None => std::future::pending().await,
            }
        })
    }
}
