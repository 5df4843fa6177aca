//! What the cluster holds of Berth's sessions, read once per pass with one
//! list request per kind across all namespaces (label
//! `app.kubernetes.io/managed-by=berth`), instead of a read per object per
//! session: a converged pass costs the same dozen requests whether 10 or
//! 1 000 sessions run.
//!
//! Only the worker may set that label anywhere in the cluster, and only the
//! worker may change an object carrying it in a session (policies
//! berth-session-labels and berth-session-objects): what the lists return
//! is what the worker made. They are read as metadata — the digest each
//! object was applied with tells whether it is as built — except the
//! workspace Deployments, whose status tells readiness (and the claims: see
//! `homes`). Lists come in
//! pages, and only objects in the namespaces of the sessions being
//! converged are kept.

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

/// Berth's Kueue kinds (`--kueue`), listed besides `SESSION_KINDS`.
pub const KUEUE_KINDS: [&str; 3] = ["ResourceFlavor", "ClusterQueue", "LocalQueue"];

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

/// One page of a list, as JSON (`whole` objects, or their metadata), and
/// the token of the next; `None` when the cluster does not serve the kind
/// (Route on plain Kubernetes: 404).
async fn page(
    api: &Api<DynamicObject>,
    params: &ListParams,
    whole: bool,
    retries: u32,
    delay: std::time::Duration,
) -> Result<Option<(Vec<Value>, Option<String>)>, kube::Error> {
    let listed = match whole {
        true => retrying(retries, delay, || api.list(params)).await.map(|list| {
            let items = list.items.into_iter().map(|item| serde_json::to_value(item).unwrap_or_default());
            (items.collect(), list.metadata.continue_)
        }),
        false => retrying(retries, delay, || api.list_metadata(params)).await.map(|list| {
            let items = list.items.into_iter().map(|item| serde_json::json!({ "metadata": item.metadata }));
            (items.collect(), list.metadata.continue_)
        }),
    };
    match listed {
        Ok((items, next)) => Ok(Some((items, next.filter(|token| !token.is_empty())))),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(err) => Err(err),
    }
}

/// What the snapshot answers for a session's access Secret (see `read`).
static PRESENT: Value = Value::Null;

impl Snapshot {
    /// Lists every session kind the cluster serves, keeping what lies in
    /// `namespaces`. A kind the cluster does not know simply has no objects. Secrets are not listed: the
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
            snapshot.list(client, (api_version, kind), Some(namespaces), retries, delay).await?;
        }
        Ok(snapshot)
    }

    /// Adds Berth's Kueue objects (`--kueue`): the sessions' LocalQueues and
    /// ClusterQueues, the pools' ResourceFlavors, and the sessions' readers
    /// of their ClusterQueues (ClusterRole and binding), five more requests.
    pub async fn read_kueue(
        &mut self,
        client: &kube::Client,
        retries: u32,
        delay: std::time::Duration,
    ) -> Result<(), kube::Error> {
        for kind in KUEUE_KINDS {
            self.list(client, (super::manifests::kueue::KUEUE_API, kind), None, retries, delay).await?;
        }
        // Each session's reader of its ClusterQueue (cluster-scoped too).
        for kind in ["ClusterRole", "ClusterRoleBinding"] {
            self.list(client, ("rbac.authorization.k8s.io/v1", kind), None, retries, delay).await?;
        }
        Ok(())
    }

    /// Lists one kind with Berth's label, keeping what lies in `namespaces`
    /// (everything when `None`: cluster-scoped kinds).
    async fn list(
        &mut self,
        client: &kube::Client,
        (api_version, kind): (&str, &str),
        namespaces: Option<&HashSet<String>>,
        retries: u32,
        delay: std::time::Duration,
    ) -> Result<(), kube::Error> {
        let snapshot = self;
        {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(api_version, kind));
            let mut params = ListParams::default().labels(&super::manifests::managed_selector()).limit(PAGE);
            loop {
                // Whole objects where the status matters: workspaces' readiness,
                // the backfill queues' usage (lent units), the volume a new
                // home claim was bound to (kept as its owner's home).
                let whole = matches!(kind, "Deployment" | "ClusterQueue" | "PersistentVolumeClaim");
                let Some((items, next)) = page(&api, &params, whole, retries, delay).await? else {
                    break;
                };
                for mut item in items {
                    let meta = &mut item["metadata"];
                    let namespace = meta["namespace"].as_str().unwrap_or_default().to_string();
                    if namespaces.is_some_and(|keep| !keep.contains(&namespace)) {
                        continue;
                    }
                    let key = (kind.to_string(), namespace, meta["name"].as_str().unwrap_or_default().to_string());
                    // Who wrote which field is the largest part of an
                    // object's metadata, and nothing the worker compares.
                    if let Some(meta) = meta.as_object_mut() {
                        meta.remove("managedFields");
                    }
                    // List items carry no type; the desired objects do.
                    item["apiVersion"] = Value::from(api_version);
                    item["kind"] = Value::from(kind);
                    snapshot.objects.insert(key, item);
                }
                match next {
                    Some(token) => params.continue_token = Some(token),
                    None => break,
                }
            }
        }
        Ok(())
    }

    /// How many objects the snapshot holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Every live object of `kind`.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |((k, _, _), _)| k == kind).map(|(_, value)| value)
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
