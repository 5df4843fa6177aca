//! A team's shared model cache (issue 46), the cluster's side. One
//! PersistentVolume binds one claim, so a cache that several sessions of a
//! team mount at once is several volumes on the team's one backing export
//! (an NFS share, a CephFS subvolume): the cluster admin makes them, labels
//! them `berth.io/team-cache=<tenant>` and reserves them for no session
//! (docs/operations.md). A session of that tenant on a pool naming their
//! storage class reserves a free one for its `team-cache-<tenant>` claim,
//! as it reserves a kept home. The worker never makes, deletes or labels
//! such a volume: policy berth-session-homes holds it to moving a
//! volume's reservation between its own tenant's claims.

use super::context::Reconciler;
use super::manifests::window::{team_cache_claim, Volume, TEAM_CACHE_LABEL};
use super::manifests::{owned_by, Session};
use crate::provisioner::error::WorkerResult;
use app::backend::sessions::homes;
use app::model::Kept;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume};
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

/// What a team cache claim asks for: the volume is the team's, sized by
/// the cluster admin, and binds whatever its capacity; the session's quota
/// counts only this.
const TEAM_CACHE_CLAIM_GIB: i32 = 1;

/// Decides one of the session's tenant's volumes of `class` for its
/// model cache, reserved for its claim; `None` when every one is held
/// (the session then keeps a cache of its owner's own).
pub(super) async fn reserve(
    w: &Reconciler,
    session: &Session,
    class: &str,
    managed: &[Namespace],
) -> WorkerResult<Option<Volume>> {
    let err = crate::provisioner::error::WorkerError::from;
    let mut tx = w.db.begin().await?;
    homes::lock_team_caches(&mut tx, &session.tenant).await.map_err(err)?;
    let volumes: Api<PersistentVolume> = Api::all(w.client.clone());
    let selector = ListParams::default().labels(&format!("{TEAM_CACHE_LABEL}={}", session.tenant));
    let mut listed = w.retrying(|| volumes.list(&selector)).await?.items;
    listed.retain(|pv| pv.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()) == Some(class));
    listed.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let held = homes::team_volumes_held(&w.db, session.booking_id).await.map_err(err)?;
    let (namespace, claim) = (session.namespace(), team_cache_claim(&session.tenant));
    let reserved_for = |pv: &PersistentVolume| {
        let reference = pv.spec.as_ref().and_then(|s| s.claim_ref.clone()).unwrap_or_default();
        (reference.namespace.unwrap_or_default(), reference.name.unwrap_or_default())
    };
    // Reserved for this very session already (a pass that stopped before recording it).
    let ours = listed.iter().find(|pv| reserved_for(pv) == (namespace.clone(), claim.clone()));
    let free = || {
        listed.iter().find(|pv| {
            let name = pv.metadata.name.clone().unwrap_or_default();
            let (holder, _) = reserved_for(pv);
            let bound = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
            // A session's namespace, ending or not, holds it until its
            // claim is gone (then the volume is Released); one bound
            // outside Berth is not the team's to hand out.
            let session_holds =
                managed.iter().any(|ns| ns.metadata.name.as_deref() == Some(&holder) && owned_by(ns, None).is_some());
            !held.contains(&name) && !bound && !session_holds
        })
    };
    let Some(pv) = ours.or_else(free) else { return Ok(None) };
    let volume = pv.metadata.name.clone().unwrap_or_default();
    if ours.is_none() {
        // Without a uid the PersistentVolume controller binds it to the
        // claim of that namespace and name once it exists.
        let patch = json!({ "spec": { "claimRef": {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim,
            "uid": null, "resourceVersion": null,
        } } });
        let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
        w.retrying(|| volumes.patch(&volume, &params, &merge)).await?;
    }
    let team = Volume::Team { volume, class: class.to_string(), gib: TEAM_CACHE_CLAIM_GIB };
    let decided = homes::decide(&w.db, session.booking_id, Kept::Cache, team).await.map_err(err)?;
    tx.commit().await?;
    Ok(Some(decided))
}
