//! What the cluster holds of Berth's sessions, read once per pass with one
//! list request per kind across all namespaces (label
//! `app.kubernetes.io/managed-by=berth`), instead of a read per object per
//! session: a converged pass costs the same dozen requests whether 10 or
//! 1 000 sessions run.
//!
//! The label proves nothing by itself: anyone who may create objects
//! somewhere in the cluster may put it on them. So lists come in pages, and
//! only objects in the namespaces of the sessions being converged are kept
//! (inside those, only the worker may set Berth's labels: policy
//! berth-session-labels). Decoys elsewhere cost a page's worth of memory at
//! a time, never the whole list.

use super::retry::retrying;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// (apiVersion, kind) of every object the worker puts into a session namespace.
/// All but the Secret are listed (see `Snapshot::read`).
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

/// Objects per list request: bounds what one response holds in memory
/// (and 1 000 sessions still cost two requests a kind).
const PAGE: u32 = 500;

/// What the snapshot answers for a session's access Secret (see `read`).
static PRESENT: Value = Value::Null;

impl Snapshot {
    /// Lists every session kind the cluster serves, keeping what lies in
    /// `namespaces`. A kind the cluster does not know (Route on plain
    /// Kubernetes: 404) simply has no objects. Secrets are not listed: the
    /// worker may not list Secrets (it reads its own by name), and a
    /// session's access Secret, checked by name when the session starts, is
    /// then no one's to delete but a cluster admin's (guard rails).
    pub async fn read(
        client: &kube::Client,
        namespaces: &HashSet<String>,
        retries: u32,
        delay: std::time::Duration,
    ) -> Result<Self, kube::Error> {
        let mut snapshot = Snapshot::default();
        for (api_version, kind) in SESSION_KINDS.into_iter().filter(|(_, kind)| *kind != "Secret") {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(api_version, kind));
            let mut params = ListParams::default().labels(&super::manifests::managed_selector()).limit(PAGE);
            loop {
                let page = match retrying(retries, delay, || api.list(&params)).await {
                    Ok(page) => page,
                    Err(kube::Error::Api(status)) if status.code == 404 => break,
                    Err(err) => return Err(err),
                };
                for item in page.items {
                    let namespace = item.metadata.namespace.clone().unwrap_or_default();
                    if !namespaces.contains(&namespace) {
                        continue;
                    }
                    let key = (kind.to_string(), namespace, item.metadata.name.clone().unwrap_or_default());
                    let mut value = serde_json::to_value(item).unwrap_or_default();
                    // List items carry no type; the desired objects do.
                    value["apiVersion"] = Value::from(api_version);
                    value["kind"] = Value::from(kind);
                    snapshot.objects.insert(key, value);
                }
                match page.metadata.continue_.filter(|token| !token.is_empty()) {
                    Some(token) => params.continue_token = Some(token),
                    None => break,
                }
            }
        }
        Ok(snapshot)
    }

    /// How many objects the snapshot holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The live counterpart of a desired object, if the cluster holds it.
    /// A Secret is taken as present (see `read`).
    pub fn get(&self, desired: &Value) -> Option<&Value> {
        if desired["kind"] == "Secret" {
            return Some(&PRESENT);
        }
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let key = (text(&desired["kind"]), text(&desired["metadata"]["namespace"]), text(&desired["metadata"]["name"]));
        self.objects.get(&key)
    }
}
