//! What the real-server policy tests share: dry-run writes as any account,
//! the objects they try, and a session set up as deploy/'s worker would.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{json, Value};
use server::provisioner::manifests::{self, Cluster, Session};
use server::provisioner::retry::retrying;
use server::provisioner::snapshot::resource;
use std::time::{Duration, Instant};

pub fn cluster() -> Cluster {
    Cluster { domain: "gpu.example.org".into(), ..Cluster::default() }
}

pub fn api(client: &kube::Client, object: &Value, namespace: &str) -> Api<DynamicObject> {
    let resource = resource(object["apiVersion"].as_str().unwrap(), object["kind"].as_str().unwrap());
    match namespace {
        "" => Api::all_with(client.clone(), &resource),
        namespace => Api::namespaced_with(client.clone(), namespace, &resource),
    }
}

/// What the API server says to a dry-run write: `Ok` or the refusal's message.
pub async fn create(client: &kube::Client, namespace: &str, object: Value) -> Result<(), String> {
    let object: DynamicObject = serde_json::from_value(object).unwrap();
    let params = PostParams { dry_run: true, ..PostParams::default() };
    let value = serde_json::to_value(&object).unwrap();
    outcome(api(client, &value, namespace).create(&params, &object).await)
}

pub fn outcome<T>(result: Result<T, kube::Error>) -> Result<(), String> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) => Err(status.message),
        Err(other) => panic!("no answer: {other}"),
    }
}

pub fn pod(name: &str, spec: Value) -> Value {
    json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": name }, "spec": spec })
}

pub fn container(resources: Value) -> Value {
    json!({ "name": "main", "image": "python:3.12", "resources": resources })
}

pub fn ingress(name: &str, host: Option<&str>, extra: Value) -> Value {
    let mut rule = json!({ "http": { "paths": [{ "path": "/", "pathType": "Prefix",
        "backend": { "service": { "name": "workspace", "port": { "number": 80 } } } }] } });
    if let Some(host) = host {
        rule["host"] = json!(host);
    }
    let mut object = json!({ "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": { "name": name },
        "spec": { "rules": [rule] } });
    merge(&mut object, extra);
    object
}

pub fn merge(into: &mut Value, extra: Value) {
    match (into, extra) {
        (Value::Object(into), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (into, extra) => *into = extra,
    }
}

pub fn route(host: Option<&str>, wildcard: &str) -> Value {
    let mut spec = json!({ "to": { "kind": "Service", "name": "workspace" }, "wildcardPolicy": wildcard });
    if let Some(host) = host {
        spec["host"] = json!(host);
    }
    json!({ "apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": { "name": "r" }, "spec": spec })
}

pub fn annotated(mut object: Value, key: &str, value: &str) -> Value {
    object["metadata"]["annotations"] = json!({ key: value });
    object
}

pub fn service(spec: Value) -> Value {
    let mut spec = spec;
    merge(&mut spec, json!({ "ports": [{ "port": 80 }] }));
    json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "s" }, "spec": spec })
}

/// The session's objects, applied as deploy/'s berth-worker account would.
pub async fn set_up(worker: &kube::Client, session: &Session, cluster: &Cluster) {
    for object in manifests::all(session, cluster, "t0ken") {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        let resource = resource(object["apiVersion"].as_str().unwrap(), object["kind"].as_str().unwrap());
        let api: Api<DynamicObject> = if namespace.is_empty() {
            Api::all_with(worker.clone(), &resource)
        } else {
            Api::namespaced_with(worker.clone(), &namespace, &resource)
        };
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        let (params, patch) = (PatchParams::apply(manifests::FIELD_MANAGER).force(), Patch::Apply(&object));
        // With the worker's retries: a quota just created is not counted yet.
        retrying(5, Duration::from_millis(200), || api.patch(&name, &params, &patch))
            .await
            .unwrap_or_else(|e| panic!("the worker applies {name}: {e}"));
    }
}

/// Waits for what the API server needs before it admits a pod, and the
/// policies to be in force: the controller manager's `default`
/// ServiceAccount and quota status ("status unknown for quota" otherwise),
/// and a refusal by a policy deploy/ has just applied.
pub async fn settled(admin: &kube::Client, ns: &str) {
    let accounts: Api<DynamicObject> = Api::namespaced_with(admin.clone(), ns, &resource("v1", "ServiceAccount"));
    let quotas: Api<DynamicObject> = Api::namespaced_with(admin.clone(), ns, &resource("v1", "ResourceQuota"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let account = accounts.get_opt("default").await.unwrap().is_some();
        let quota = quotas.get("berth-session").await.unwrap();
        let counted = !quota.data["status"]["used"].is_null();
        let enforced = create(admin, ns, ingress("probe", None, json!({}))).await.is_err();
        if account && counted && enforced {
            return;
        }
        assert!(Instant::now() < deadline, "{ns}: not settled (account {account}, quota {counted}, policy {enforced})");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Creates `objects` as `client` for real (not a dry run), tolerating ones already there.
pub async fn ensure(client: &kube::Client, objects: Vec<serde_json::Value>) {
    for object in objects {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        let typed: DynamicObject = serde_json::from_value(object.clone()).unwrap();
        match api(client, &object, &namespace).create(&PostParams::default(), &typed).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(other) => panic!("{other}"),
        }
    }
}

/// A policy deploy/ has just applied takes a moment to be enforced: waits
/// until `attempt` (one the policy refuses) is refused.
pub async fn in_force<F, Fut>(policy: &str, attempt: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while attempt().await.is_ok() {
        assert!(std::time::Instant::now() < deadline, "{policy} not in force within 30 s");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

pub fn refused_with(case: &str, outcome: Result<(), String>, said: &str) {
    match outcome {
        Ok(()) => panic!("should be refused: {case}"),
        Err(message) => assert!(message.contains(said), "{case}: expected `{said}` in {message}"),
    }
}
