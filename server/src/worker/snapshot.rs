//! What the cluster holds of Berth's sessions, read once per pass with one
//! list request per kind across all namespaces (label
//! `app.kubernetes.io/managed-by=berth`), instead of a read per object per
//! session: a converged pass costs the same dozen requests whether 10 or
//! 1 000 sessions run.

use super::retry::retrying;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;
use std::collections::HashMap;

/// (apiVersion, kind) of every object the worker puts into a session namespace.
pub const SESSION_KINDS: [(&str, &str); 12] = [
    ("v1", "ResourceQuota"),
    ("v1", "LimitRange"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1", "Ingress"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("route.openshift.io/v1", "Route"),
];

pub fn resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

/// Live objects by (kind, namespace, name), as JSON.
#[derive(Default)]
pub struct Snapshot {
    objects: HashMap<(String, String, String), Value>,
}

impl Snapshot {
    /// Lists every session kind the cluster serves. A kind the cluster does
    /// not know (Route on plain Kubernetes: 404) simply has no objects.
    pub async fn read(client: &kube::Client, retries: u32, delay: std::time::Duration) -> Result<Self, kube::Error> {
        let params = ListParams::default().labels(&super::manifests::managed_selector());
        let mut snapshot = Snapshot::default();
        for (api_version, kind) in SESSION_KINDS {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(api_version, kind));
            // Secrets only need to exist (the token is made once): their
            // metadata is enough, and the tokens stay out of this process.
            let listed = if kind == "Secret" {
                retrying(retries, delay, || api.list_metadata(&params)).await.map(|list| {
                    list.items.into_iter().map(|item| (item.metadata.clone(), serde_json::to_value(item))).collect()
                })
            } else {
                retrying(retries, delay, || api.list(&params)).await.map(|list| {
                    list.items.into_iter().map(|item| (item.metadata.clone(), serde_json::to_value(item))).collect()
                })
            };
            let items: Vec<(_, Result<Value, _>)> = match listed {
                Ok(items) => items,
                Err(kube::Error::Api(status)) if status.code == 404 => continue,
                Err(err) => return Err(err),
            };
            for (metadata, item) in items {
                let key = (kind.to_string(), metadata.namespace.unwrap_or_default(), metadata.name.unwrap_or_default());
                let mut value = item.unwrap_or_default();
                // List items carry no type; the desired objects do.
                value["apiVersion"] = Value::from(api_version);
                value["kind"] = Value::from(kind);
                snapshot.objects.insert(key, value);
            }
        }
        Ok(snapshot)
    }

    /// The live counterpart of a desired object, if the cluster holds it.
    pub fn get(&self, desired: &Value) -> Option<&Value> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let key = (text(&desired["kind"]), text(&desired["metadata"]["namespace"]), text(&desired["metadata"]["name"]));
        self.objects.get(&key)
    }
}
