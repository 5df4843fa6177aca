//! The workspace's access token outlives no one's right to it: when someone
//! who could use the session drops out (a co-owner removed, an owner or
//! co-owner disabled or gone from the booking's tenant), the worker makes a
//! new token and restarts the workspace, so a token copied earlier opens
//! nothing. Whoever still holds the session gets the new one through "Open
//! workspace". New holders need no rotation.
//!
//! A new token alone would leave what the one who left had started: a
//! second Jupyter mounting the access Secret reads the new token as soon as
//! it is written, and an Ingress of theirs keeps publishing it. So before
//! the token changes, everything the session's users made that runs or
//! publishes (workloads, Services, Ingresses, Routes; none carries Berth's
//! label, which only the worker may set) is deleted, and the card says why.

use super::context::Reconciler;
use super::manifests::{self, Session, FIELD_MANAGER, HOLDERS_ANNOTATION};
use super::snapshot::{resource, Snapshot};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{json, Value};

/// Template annotation whose change restarts the workspace's pods; its own
/// field manager, so the worker's apply of the Deployment leaves it alone.
pub const ROTATED_ANNOTATION: &str = "berth.io/token-rotated-at";
const ROTATION_MANAGER: &str = "berth-rotation";

/// What a session's users may make that runs or publishes (berth-session-user),
/// as `(apiVersion, kind)`; removed when someone drops out.
const USERS_RUNNING_OBJECTS: [(&str, &str); 10] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "ReplicaSet"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("v1", "Pod"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("route.openshift.io/v1", "Route"),
];

/// Who held the session when its Deployment was last applied and holds it no more.
pub fn dropped_out(live: &Value, session: &Session) -> Vec<String> {
    let listed = live["metadata"]["annotations"][HOLDERS_ANNOTATION].as_str().unwrap_or_default();
    let now = manifests::holders(session);
    listed.split(',').filter(|h| !h.is_empty() && !now.iter().any(|n| n == h)).map(str::to_string).collect()
}

/// Rotates the token and restarts the workspace if anyone dropped out
/// since the last apply (the live Deployment as the repair pass's
/// snapshot holds it); returns who did. Costs no request while no one
/// does. The apply that follows records the new holders; if this fails
/// half-way, the next pass rotates again.
pub(super) async fn if_holders_left(
    w: &Reconciler,
    session: &Session,
    snapshot: &Snapshot,
    token: &str,
) -> Result<Vec<String>, kube::Error> {
    let workspace =
        json!({ "kind": "Deployment", "metadata": { "namespace": session.namespace(), "name": "workspace" } });
    let dropped = snapshot.get(&workspace).map(|live| dropped_out(live, session)).unwrap_or_default();
    if dropped.is_empty() {
        return Ok(dropped);
    }
    let removed = remove_users_objects(w, &session.namespace()).await?;
    let secret = serde_json::to_value(manifests::access_secret(session, token)).unwrap_or_default();
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(w.client.clone(), &session.namespace());
    let (apply, secret) = (PatchParams::apply(FIELD_MANAGER).force(), Patch::Apply(&secret));
    w.retrying(|| secrets.patch(manifests::ACCESS_SECRET, &apply, &secret)).await?;
    let restart = json!({ "spec": { "template": { "metadata": { "annotations": {
        ROTATED_ANNOTATION: chrono::Utc::now().to_rfc3339(),
    } } } } });
    let params = PatchParams { field_manager: Some(ROTATION_MANAGER.into()), ..PatchParams::default() };
    let restart = Patch::Merge(&restart);
    let deployments: Api<Deployment> = Api::namespaced(w.client.clone(), &session.namespace());
    w.retrying(|| deployments.patch("workspace", &params, &restart)).await?;
    if let Err(err) =
        app::backend::sessions::session_status::record_access_changed(&w.db, session.booking_id, &dropped, removed)
            .await
    {
        tracing::warn!(booking = %session.booking_id, error = %err.public_message(), "cannot note the access change");
    }
    Ok(dropped)
}

/// Deletes every object of `USERS_RUNNING_OBJECTS` in `namespace` that
/// is not Berth's; returns how many there were. A kind the cluster does
/// not serve (Routes off OpenShift) is skipped.
async fn remove_users_objects(w: &Reconciler, namespace: &str) -> Result<usize, kube::Error> {
    let not_berths = ListParams::default().labels(&format!("{}!={}", manifests::MANAGED_BY.0, manifests::MANAGED_BY.1));
    // At once, as at a window's end: a pod given grace could still read
    // the new token from a mounted Secret while it stops.
    let background = DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::background() };
    let mut removed = 0;
    for (api_version, kind) in USERS_RUNNING_OBJECTS {
        let api: Api<DynamicObject> = Api::namespaced_with(w.client.clone(), namespace, &resource(api_version, kind));
        match w.retrying(|| api.delete_collection(&background, &not_berths)).await {
            Ok(either) => removed += either.left().map(|list| list.items.len()).unwrap_or(0),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => return Err(err),
        }
    }
    Ok(removed)
}
