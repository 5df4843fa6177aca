//! The simulated cluster: an in-memory Kubernetes API the worker uses when
//! no real cluster can be reached (and the tests use always).
//! `kube-fake-client` serves namespaced objects (server-side apply,
//! selectors); this harness in front of it serves what that crate rejects —
//! Namespace objects themselves — and deletes a namespace's objects with it
//! (no cascade there). Optionally it plays the kubelet, reporting each
//! applied workspace ready. It counts writes and can fail chosen writes, the
//! way an API server under load (or a stopped worker) does.

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub struct SimulatedCluster {
    /// The kube-fake-client API server behind the harness.
    inner: kube::Client,
    /// Report every applied workspace Deployment as ready, as a kubelet would.
    kubelet: bool,
    namespaces: Mutex<BTreeMap<String, Value>>,
    /// Writes (anything but GET) that reached the API, failed or not.
    pub writes: AtomicUsize,
    /// Statuses to answer the next writes with, before doing them.
    pub fail_next: Mutex<VecDeque<u16>>,
    /// When set to n: the writes after the next n fail with 503, as if the
    /// worker had been stopped right after its n-th step.
    pub stop_after: Mutex<Option<usize>>,
}

/// Kinds the worker puts into a session namespace: deleted with it.
const NAMESPACED: [(&str, &str); 12] = [
    ("/api/v1", "resourcequotas"),
    ("/api/v1", "limitranges"),
    ("/api/v1", "configmaps"),
    ("/api/v1", "secrets"),
    ("/api/v1", "persistentvolumeclaims"),
    ("/api/v1", "services"),
    ("/apis/apps/v1", "deployments"),
    ("/apis/networking.k8s.io/v1", "networkpolicies"),
    ("/apis/networking.k8s.io/v1", "ingresses"),
    ("/apis/rbac.authorization.k8s.io/v1", "roles"),
    ("/apis/rbac.authorization.k8s.io/v1", "rolebindings"),
    ("/api/v1", "pods"),
];

fn respond(status: StatusCode, body: Value) -> Response<Body> {
    let mut response = Response::new(Body::from(serde_json::to_vec(&body).unwrap_or_default()));
    *response.status_mut() = status;
    response.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
    response
}

fn status(code: u16, reason: &str, message: &str) -> Response<Body> {
    let body = json!({ "kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code });
    respond(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body)
}

impl SimulatedCluster {
    /// A fresh, empty in-memory cluster.
    pub async fn start(kubelet: bool) -> Arc<Self> {
        let inner = kube_fake_client::ClientBuilder::new()
            .with_status_subresource::<k8s_openapi::api::apps::v1::Deployment>()
            .build()
            .await
            .expect("the in-memory API server starts");
        Arc::new(SimulatedCluster {
            inner,
            kubelet,
            namespaces: Mutex::default(),
            writes: AtomicUsize::default(),
            fail_next: Mutex::default(),
            stop_after: Mutex::default(),
        })
    }

    /// A `kube::Client` to this cluster (each call is a new client, as a
    /// restarted process would make).
    pub fn client(self: &Arc<Self>) -> kube::Client {
        let cluster = self.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            let cluster = cluster.clone();
            async move {
                let inner = cluster.inner.clone();
                Ok::<_, std::convert::Infallible>(cluster.handle(request, inner).await)
            }
        });
        kube::Client::new(service, "default")
    }

    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    pub fn namespace_names(&self) -> Vec<String> {
        self.namespaces.lock().unwrap().keys().cloned().collect()
    }

    /// A namespace someone else made, as it would exist in a real cluster.
    pub fn add_foreign_namespace(&self, name: &str) {
        let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name, "labels": { "team": "other" } } });
        self.namespaces.lock().unwrap().insert(name.into(), ns);
    }

    async fn handle(&self, request: Request<Body>, inner: kube::Client) -> Response<Body> {
        let path = request.uri().path().to_string();
        let method = request.method().clone();
        if method != Method::GET {
            self.writes.fetch_add(1, Ordering::SeqCst);
            if let Some(code) = self.fail_next.lock().unwrap().pop_front() {
                return status(code, "Injected", "injected by the test harness");
            }
            let mut stop_after = self.stop_after.lock().unwrap();
            match stop_after.as_mut() {
                Some(0) => return status(503, "ServiceUnavailable", "the worker was stopped here"),
                Some(left) => *left -= 1,
                None => {}
            }
        }
        let rest = path.strip_prefix("/api/v1/namespaces").map(|r| r.trim_start_matches('/').to_string());
        if let Some(rest) = rest.filter(|r| !r.contains('/')) {
            return self.namespace_request(request, &rest, inner).await;
        }
        let answer = inner.send(request).await.unwrap_or_else(|e| status(500, "InternalError", &e.to_string()));
        let workspace_applied = method == Method::PATCH && path.contains("/deployments/") && !path.ends_with("/status");
        if self.kubelet && workspace_applied && answer.status().is_success() {
            let ready = json!({ "status": { "replicas": 1, "readyReplicas": 1, "availableReplicas": 1 } });
            let patch = Request::patch(format!("{path}/status"))
                .header("content-type", "application/merge-patch+json")
                .body(serde_json::to_vec(&ready).unwrap_or_default())
                .unwrap_or_default();
            let _ = inner.request::<Value>(patch).await;
        }
        answer
    }

    async fn namespace_request(&self, request: Request<Body>, name: &str, inner: kube::Client) -> Response<Body> {
        let method = request.method().clone();
        let query = request.uri().query().unwrap_or_default().to_string();
        let body: Bytes =
            http_body_util::BodyExt::collect(request.into_body()).await.map(|b| b.to_bytes()).unwrap_or_default();
        match (method, name.is_empty()) {
            (Method::GET, true) => {
                let selector = url::form_urlencoded::parse(query.as_bytes())
                    .find(|(k, _)| k == "labelSelector")
                    .map(|(_, v)| v.into_owned());
                let items: Vec<Value> = self
                    .namespaces
                    .lock()
                    .unwrap()
                    .values()
                    .filter(|ns| selector.as_deref().is_none_or(|s| matches(ns, s)))
                    .cloned()
                    .collect();
                respond(
                    StatusCode::OK,
                    json!({ "apiVersion": "v1", "kind": "NamespaceList", "metadata": {}, "items": items }),
                )
            }
            (Method::GET, false) => match self.namespaces.lock().unwrap().get(name) {
                Some(ns) => respond(StatusCode::OK, ns.clone()),
                None => status(404, "NotFound", &format!("namespaces \"{name}\" not found")),
            },
            (method @ (Method::POST | Method::PATCH), _) => {
                let object: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let name = match name {
                    "" => object["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                    name => name.to_string(),
                };
                let mut namespaces = self.namespaces.lock().unwrap();
                if method == Method::POST && namespaces.contains_key(&name) {
                    return status(409, "AlreadyExists", &format!("namespaces \"{name}\" already exists"));
                }
                // Create, or (server-side apply) merge labels and annotations.
                let fresh = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
                let mut stored = namespaces.get(&name).cloned().unwrap_or(fresh);
                for field in ["labels", "annotations"] {
                    for (key, value) in object["metadata"][field].as_object().cloned().unwrap_or_default() {
                        stored["metadata"][field][key] = value;
                    }
                }
                namespaces.insert(name, stored.clone());
                respond(StatusCode::OK, stored)
            }
            (Method::DELETE, false) => {
                let removed = self.namespaces.lock().unwrap().remove(name);
                let Some(removed) = removed else { return status(404, "NotFound", "not found") };
                cascade(name, &inner).await;
                respond(StatusCode::OK, removed)
            }
            _ => status(405, "MethodNotAllowed", "not supported by the harness"),
        }
    }
}

/// `key=value[,key=value]` selectors, which is all the worker uses.
fn matches(ns: &Value, selector: &str) -> bool {
    selector.split(',').all(|pair| match pair.split_once('=') {
        Some((k, v)) => ns["metadata"]["labels"][k].as_str() == Some(v),
        None => true,
    })
}

/// Deletes every object of the session kinds in `namespace`.
async fn cascade(namespace: &str, inner: &kube::Client) {
    for (prefix, plural) in NAMESPACED {
        let list = format!("{prefix}/namespaces/{namespace}/{plural}");
        let Ok(request) = Request::get(&list).body(Vec::new()) else { continue };
        let Ok(items) = inner.request::<Value>(request).await else { continue };
        for item in items["items"].as_array().cloned().unwrap_or_default() {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            if let Ok(delete) = Request::delete(format!("{list}/{name}")).body(Vec::new()) {
                let _ = inner.request::<Value>(delete).await;
            }
        }
    }
}
