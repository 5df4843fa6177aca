//! What the simulated cluster answers with, and the kinds it deletes with
//! a namespace.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use kube::client::Body;
use serde_json::{json, Value};

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Answers are whole JSON documents, or a stream of watch events.
pub(super) type Answer = Response<UnsyncBoxBody<Bytes, BoxError>>;

/// OpenShift's Route, which the in-memory API server must be told about
/// (a real OpenShift serves it; plain Kubernetes answers 404).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct OpenShiftRoute {
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    #[serde(default)]
    spec: Value,
}

impl kube::Resource for OpenShiftRoute {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "Route".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "route.openshift.io".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "routes".into()
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &mut self.metadata
    }
}

/// Kinds the worker puts into a session namespace: deleted with it.
pub(super) const NAMESPACED: [(&str, &str); 13] = [
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
    ("/apis/route.openshift.io/v1", "routes"),
];

pub(super) fn respond(status: StatusCode, body: Value) -> Answer {
    let bytes = Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
    let mut response = Response::new(Full::new(bytes).map_err(|never| match never {}).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
    response
}

/// A list answered as an API server answers a client asking for metadata
/// only (`PartialObjectMetadataList`): the in-memory one sends whole objects.
pub(super) async fn metadata_list(answer: Response<Body>) -> Answer {
    let code = answer.status();
    let Ok(bytes) = answer.into_body().collect().await.map(|body| body.to_bytes()) else {
        return status(500, "InternalError", "the list could not be read");
    };
    let mut list: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if code.is_success() {
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let metadata: Vec<Value> = items
            .into_iter()
            .map(|item| json!({ "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": item["metadata"] }))
            .collect();
        list["items"] = Value::from(metadata);
        list["apiVersion"] = Value::from("meta.k8s.io/v1");
        list["kind"] = Value::from("PartialObjectMetadataList");
    }
    respond(code, list)
}

pub(super) fn status(code: u16, reason: &str, message: &str) -> Answer {
    let body = json!({ "kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code });
    respond(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body)
}

/// A list asked for in pages, served whole: like an API server's watch
/// cache, which may ignore `limit` (and then sends no `continue`). The
/// in-memory server would cut the list at `limit` and say nothing of
/// the rest.
pub(super) fn whole_list(request: Request<Body>) -> Request<Body> {
    let (mut parts, body) = request.into_parts();
    let query = parts.uri.query().unwrap_or_default().to_string();
    let kept = form_urlencoded::parse(query.as_bytes()).filter(|(key, _)| key != "limit" && key != "continue");
    let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(kept).finish();
    if let Ok(uri) = format!("{}?{query}", parts.uri.path()).parse() {
        parts.uri = uri;
    }
    Request::from_parts(parts, body)
}

/// `key=value[,key=value]` selectors, which is all the worker uses.
pub(super) fn matches(ns: &Value, selector: &str) -> bool {
    selector.split(',').all(|pair| match pair.split_once('=') {
        Some((k, v)) => ns["metadata"]["labels"][k].as_str() == Some(v),
        None => true,
    })
}

/// Deletes every object of the session kinds in `namespace`.
pub(super) async fn cascade(namespace: &str, inner: &kube::Client) {
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
