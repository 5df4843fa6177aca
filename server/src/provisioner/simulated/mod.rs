//! The simulated cluster: an in-memory Kubernetes API the worker uses when
//! no real cluster can be reached (and the tests use always).
//! `kube-fake-client` serves namespaced objects (server-side apply,
//! selectors); this harness in front of it serves what that crate rejects —
//! Namespace objects themselves — and deletes a namespace's objects with it
//! (no cascade there). Optionally it plays the kubelet, reporting each
//! applied workspace ready. It counts requests and writes, can fail chosen
//! writes the way an API server under load (or a stopped worker) does, can
//! keep deleted namespaces terminating, and streams namespace watch events.

mod answers;
mod listen;
pub mod storage;

use answers::{cascade, matches, metadata_list, respond, status, whole_list, Answer, BoxError, OpenShiftRoute};
use bytes::Bytes;
use futures::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use kube::client::Body;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

pub struct SimulatedCluster {
    /// The kube-fake-client API server behind the harness.
    inner: kube::Client,
    /// Report every applied workspace Deployment as ready, as a kubelet would.
    kubelet: bool,
    /// Provision and bind volume claims, as a provisioner and the
    /// PersistentVolume controller would (`storage`; `make run`).
    pub storage: AtomicBool,
    namespaces: Mutex<BTreeMap<String, Value>>,
    /// Requests of any kind that reached the API.
    pub requests: AtomicUsize,
    /// Writes (anything but GET) that reached the API, failed or not.
    pub writes: AtomicUsize,
    /// Every write whose path contains the text is refused with the status,
    /// as an admission webhook or missing permission would.
    pub refuse: Mutex<Option<(String, u16)>>,
    /// Deleted namespaces stay `Terminating` until `remove_namespace`.
    pub slow_termination: AtomicBool,
    /// Namespace watch events (`ADDED`, `MODIFIED`, `DELETED`).
    events: broadcast::Sender<Value>,
    /// When set, every successful write's time and path (for benchmarks).
    pub write_log: Mutex<Option<Vec<(std::time::Instant, String)>>>,
    /// Statuses to answer the next writes with, before doing them.
    pub fail_next: Mutex<VecDeque<u16>>,
    /// When set to n: the writes after the next n fail with 503, as if the
    /// worker had been stopped right after its n-th step.
    pub stop_after: Mutex<Option<usize>>,
    /// Every request fails with 503, as an API server that is down (or
    /// behind a load balancer with no backend) answers.
    pub down: AtomicBool,
}

impl SimulatedCluster {
    /// A fresh, empty in-memory cluster.
    pub async fn start(kubelet: bool) -> Arc<Self> {
        let inner = kube_fake_client::ClientBuilder::new()
            .with_status_subresource::<k8s_openapi::api::apps::v1::Deployment>()
            .with_resource::<OpenShiftRoute>()
            .build()
            .await
            .expect("the in-memory API server starts");
        Arc::new(SimulatedCluster {
            inner,
            kubelet,
            storage: AtomicBool::default(),
            namespaces: Mutex::default(),
            requests: AtomicUsize::default(),
            writes: AtomicUsize::default(),
            refuse: Mutex::default(),
            slow_termination: AtomicBool::default(),
            events: broadcast::channel(1024).0,
            write_log: Mutex::default(),
            fail_next: Mutex::default(),
            stop_after: Mutex::default(),
            down: AtomicBool::default(),
        })
    }

    /// A `kube::Client` to this cluster (each call is a new client, as a
    /// restarted process would make).
    pub fn client(self: &Arc<Self>) -> kube::Client {
        let cluster = self.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            let cluster = cluster.clone();
            async move { Ok::<_, std::convert::Infallible>(cluster.answer(request).await) }
        });
        kube::Client::new(tower::Layer::layer(&crate::kube_metrics::CountRequests, service), "default")
    }

    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Backdates a terminating namespace's deletion, as if it had hung that long.
    pub fn terminating_since(&self, name: &str, seconds_ago: i64) {
        let at = k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(seconds_ago);
        if let Some(ns) = self.namespaces.lock().unwrap().get_mut(name) {
            ns["metadata"]["deletionTimestamp"] =
                json!(at.round(k8s_openapi::jiff::Unit::Second).unwrap_or(at).to_string());
        }
    }

    /// A namespace goes at once with its objects (also behind the worker's
    /// back: `kubectl delete` by someone, or a terminating one's finalizers
    /// done). Returns it as it was, if it existed.
    pub async fn remove_namespace(&self, name: &str) -> Option<Value> {
        let removed = self.namespaces.lock().unwrap().remove(name)?;
        cascade(name, &self.inner).await;
        if self.storage.load(Ordering::SeqCst) {
            storage::release_volumes(&self.inner, name).await;
        }
        let _ = self.events.send(json!({ "type": "DELETED", "object": removed.clone() }));
        Some(removed)
    }

    pub fn namespace_names(&self) -> Vec<String> {
        self.namespaces.lock().unwrap().keys().cloned().collect()
    }

    /// A namespace someone else made, as it would exist in a real cluster.
    pub fn add_foreign_namespace(&self, name: &str) {
        let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name, "labels": { "team": "other" } } });
        self.namespaces.lock().unwrap().insert(name.into(), ns);
    }

    /// One API request, as `client()` and `serve_http` pass it in.
    pub(super) async fn answer(&self, request: Request<Body>) -> Answer {
        let (path, write) = (request.uri().path().to_string(), request.method() != Method::GET);
        let answer = self.serve(request).await;
        if write && answer.status().is_success() {
            if let Some(log) = self.write_log.lock().unwrap().as_mut() {
                log.push((std::time::Instant::now(), path));
            }
        }
        answer
    }

    async fn serve(&self, request: Request<Body>) -> Answer {
        let inner = &self.inner;
        let path = request.uri().path().to_string();
        let method = request.method().clone();
        self.requests.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return status(503, "ServiceUnavailable", "the API server is down");
        }
        if method != Method::GET {
            self.writes.fetch_add(1, Ordering::SeqCst);
            if let Some(code) = self.fail_next.lock().unwrap().pop_front() {
                return status(code, "Injected", "injected by the test harness");
            }
            if let Some((_, code)) =
                self.refuse.lock().unwrap().as_ref().filter(|(part, _)| path.contains(part.as_str()))
            {
                return status(*code, "Refused", "refused by the test harness");
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
            return self.namespace_request(request, &rest).await;
        }
        if self.storage.load(Ordering::SeqCst) && method == Method::GET && path == "/api/v1/persistentvolumes" {
            let query = request.uri().query().unwrap_or_default();
            let selector = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "labelSelector");
            if let Some((_, selector)) = selector {
                storage::team_volumes(inner, &selector).await;
            }
        }
        let request = match method == Method::GET && request.uri().query().is_some_and(|q| q.contains("limit=")) {
            true => whole_list(request),
            false => request,
        };
        let metadata_only = request
            .headers()
            .get(http::header::ACCEPT)
            .is_some_and(|accept| accept.to_str().unwrap_or_default().contains("as=PartialObjectMetadataList"));
        let answer = match inner.send(request).await {
            Ok(answer) if metadata_only => metadata_list(answer).await,
            Ok(answer) => answer.map(|body| body.map_err(|e| Box::new(e) as BoxError).boxed_unsync()),
            Err(err) => status(500, "InternalError", &err.to_string()),
        };
        if self.storage.load(Ordering::SeqCst) && method != Method::GET && answer.status().is_success() {
            self.storage_written(&path).await;
        }
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

    /// What the provisioner and the PersistentVolume controller do after a
    /// write to a claim (bind) or a volume (delete one let go).
    async fn storage_written(&self, path: &str) {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match segments.as_slice() {
            ["api", "v1", "namespaces", namespace, "persistentvolumeclaims", ..] => {
                storage::bind_claims(&self.inner, namespace).await
            }
            ["api", "v1", "persistentvolumes", name] => storage::volume_changed(&self.inner, name).await,
            _ => {}
        }
    }

    async fn namespace_request(&self, request: Request<Body>, name: &str) -> Answer {
        let method = request.method().clone();
        let query = request.uri().query().unwrap_or_default().to_string();
        let body: Bytes =
            http_body_util::BodyExt::collect(request.into_body()).await.map(|b| b.to_bytes()).unwrap_or_default();
        let param = |name: &str| {
            url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
        };
        let selector = param("labelSelector");
        match (method, name.is_empty()) {
            (Method::GET, true) if param("watch").is_some_and(|w| w == "true" || w == "1") => self.watch(selector),
            (Method::GET, true) => {
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
                let kind = if namespaces.contains_key(&name) { "MODIFIED" } else { "ADDED" };
                namespaces.insert(name, stored.clone());
                let _ = self.events.send(json!({ "type": kind, "object": stored }));
                respond(StatusCode::OK, stored)
            }
            (Method::DELETE, false) if self.slow_termination.load(Ordering::SeqCst) => {
                let mut namespaces = self.namespaces.lock().unwrap();
                let Some(ns) = namespaces.get_mut(name) else { return status(404, "NotFound", "not found") };
                if ns["metadata"]["deletionTimestamp"].is_null() {
                    let now = k8s_openapi::jiff::Timestamp::now().round(k8s_openapi::jiff::Unit::Second);
                    ns["metadata"]["deletionTimestamp"] = json!(now.map(|t| t.to_string()).unwrap_or_default());
                    ns["status"] = json!({ "phase": "Terminating" });
                }
                let _ = self.events.send(json!({ "type": "MODIFIED", "object": ns.clone() }));
                respond(StatusCode::OK, ns.clone())
            }
            (Method::DELETE, false) => match self.remove_namespace(name).await {
                Some(removed) => respond(StatusCode::OK, removed),
                None => status(404, "NotFound", "not found"),
            },
            _ => status(405, "MethodNotAllowed", "not supported by the harness"),
        }
    }

    /// A watch: the matching namespaces as `ADDED`, then every change, one
    /// JSON event per line, until the client goes away.
    fn watch(&self, selector: Option<String>) -> Answer {
        let selected = move |event: &Value| selector.as_deref().is_none_or(|s| matches(&event["object"], s));
        let initial: Vec<Value> = self
            .namespaces
            .lock()
            .unwrap()
            .values()
            .map(|ns| json!({ "type": "ADDED", "object": ns }))
            .filter(&selected)
            .collect();
        let live = futures::stream::unfold(self.events.subscribe(), |mut events| async move {
            loop {
                match events.recv().await {
                    Ok(event) => return Some((event, events)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        let lines =
            futures::stream::iter(initial).chain(live.filter(move |e| std::future::ready(selected(e)))).map(|event| {
                let mut line = serde_json::to_vec(&event).unwrap_or_default();
                line.push(b'\n');
                Ok::<_, BoxError>(Frame::data(Bytes::from(line)))
            });
        let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(lines)));
        response.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
        response
    }
}
