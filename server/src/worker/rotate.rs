//! The workspace's access token outlives no one's right to it: when someone
//! who could use the session drops out (a co-owner removed, an owner or
//! co-owner disabled or gone from the booking's tenant), the worker makes a
//! new token and restarts the workspace, so a token copied earlier opens
//! nothing. Whoever still holds the session gets the new one through "Open
//! workspace". New holders need no rotation.

use super::manifests::{self, Session, FIELD_MANAGER, HOLDERS_ANNOTATION};
use super::reconcile::Reconciler;
use super::snapshot::Snapshot;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};

/// Template annotation whose change restarts the workspace's pods; its own
/// field manager, so the worker's apply of the Deployment leaves it alone.
pub const ROTATED_ANNOTATION: &str = "berth.io/token-rotated-at";
const ROTATION_MANAGER: &str = "berth-rotation";

/// Who held the session when its Deployment was last applied and holds it no more.
pub fn dropped_out(live: &Value, session: &Session) -> Vec<String> {
    let listed = live["metadata"]["annotations"][HOLDERS_ANNOTATION].as_str().unwrap_or_default();
    let now = manifests::holders(session);
    listed.split(',').filter(|h| !h.is_empty() && !now.iter().any(|n| n == h)).map(str::to_string).collect()
}

impl Reconciler {
    /// Rotates the token and restarts the workspace if anyone dropped out
    /// since the last apply (the live Deployment as the repair pass's
    /// snapshot holds it); returns who did. Costs no request while no one
    /// does. The apply that follows records the new holders; if this fails
    /// half-way, the next pass rotates again.
    pub(super) async fn rotate_if_holders_left(
        &self,
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
        let secret = serde_json::to_value(manifests::access_secret(session, token)).unwrap_or_default();
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(self.client.clone(), &session.namespace());
        let (apply, secret) = (PatchParams::apply(FIELD_MANAGER).force(), Patch::Apply(&secret));
        self.retrying(|| secrets.patch(manifests::ACCESS_SECRET, &apply, &secret)).await?;
        let restart = json!({ "spec": { "template": { "metadata": { "annotations": {
            ROTATED_ANNOTATION: chrono::Utc::now().to_rfc3339(),
        } } } } });
        let params = PatchParams { field_manager: Some(ROTATION_MANAGER.into()), ..PatchParams::default() };
        let restart = Patch::Merge(&restart);
        let deployments: Api<Deployment> = Api::namespaced(self.client.clone(), &session.namespace());
        self.retrying(|| deployments.patch("workspace", &params, &restart)).await?;
        Ok(dropped)
    }
}
