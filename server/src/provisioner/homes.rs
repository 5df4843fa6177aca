//! Homes and model caches that outlive the window (issue 46), the
//! cluster's side. A person's first session provisions its `home-<id>` and
//! `cache-<id>` claims as any claim; once bound, the worker keeps each
//! volume (reclaim policy `Retain`) and labels it as that person's. A later
//! session of theirs reserves the volume for its own claim (`claimRef`)
//! before creating the claim with `volumeName`, and the PersistentVolume
//! controller binds the two. A volume past its retention goes back to
//! `Delete`, so the provisioner deletes it. Policy
//! berth-session-homes (deploy/policies/) holds the worker to exactly this.

use super::context::Reconciler;
use super::error::HomeBusy;
use super::manifests::window::{claim, HOME_OWNER_LABEL};
use super::manifests::{Session, Volume};
use super::retry::describe;
use super::snapshot::Snapshot;
use super::{apply, team_cache};
use app::backend::sessions::homes;
use app::model::Kept;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use std::collections::HashMap;

fn volumes(w: &Reconciler) -> Api<PersistentVolume> {
    Api::all(w.client.clone())
}

/// The storage class homes and caches are kept in ('' for the cluster's default).
pub(super) fn home_class(w: &Reconciler) -> String {
    w.cluster.storage_class.clone().unwrap_or_default()
}

/// Which volumes a session's home and model cache claims bind, decided
/// once (`decided`, by purpose): an active session without a decision
/// predates kept volumes (its own claims stay); a starting one gets the
/// owner's kept volumes, reserved for its claims, unless another
/// session of theirs holds them (then new volumes, or a wait while that
/// session is ending). A tenant whose cache is per session keeps none;
/// on a pool with a team cache, the model cache is one of the team's
/// volumes (`team_cache`).
pub(super) async fn volumes_for(
    w: &Reconciler,
    session: &Session,
    starting: bool,
    mut decided: HashMap<Kept, Volume>,
    managed: &[Namespace],
) -> crate::provisioner::error::WorkerResult<Result<(Volume, Volume), HomeBusy>> {
    let mut chosen = Vec::new();
    for purpose in Kept::ALL {
        let volume = match decided.remove(&purpose) {
            Some(volume) => volume,
            None if !starting => Volume::PerSession { gib: per_session_gib(w, session, purpose) },
            None => match choose(w, session, purpose, managed).await? {
                Ok(volume) => volume,
                Err(busy) => return Ok(Err(busy)),
            },
        };
        chosen.push(volume);
    }
    let cache = chosen.pop().unwrap_or(Volume::PerSession { gib: w.cluster.model_cache_gib });
    let home = chosen.pop().unwrap_or(Volume::PerSession { gib: per_session_gib(w, session, Kept::Home) });
    Ok(Ok((home, cache)))
}

/// The size of the per-session volume a session started before volumes
/// were kept got: its claim cannot change.
fn per_session_gib(w: &Reconciler, session: &Session, purpose: Kept) -> i32 {
    match purpose {
        Kept::Home => session.quantity * session.kind.storage_gib_per_unit,
        Kept::Cache => w.cluster.model_cache_gib,
    }
}

/// Decides a starting session's volume of `purpose` and records it.
async fn choose(
    w: &Reconciler,
    session: &Session,
    purpose: Kept,
    managed: &[Namespace],
) -> crate::provisioner::error::WorkerResult<Result<Volume, HomeBusy>> {
    let err = crate::provisioner::error::WorkerError::from;
    let mut choice = session.window.volume(purpose).clone();
    let team_class = session.placement.team_cache_class.as_deref().filter(|_| purpose == Kept::Cache);
    if let (Volume::New { .. }, Some(class)) = (&choice, team_class) {
        if let Some(team) = team_cache::reserve(w, session, class, managed).await? {
            return Ok(Ok(team));
        }
        // Every volume of the team's is held: the person's own, as without one.
    }
    // A shared session's holders all work in it (`pods/exec`, Jupyter):
    // no one's kept home or cache is mounted where another could plant
    // a file their later sessions run. The team works in a folder of
    // the session's own, gone with it (co_owners::add refuses to share
    // a session already working in a kept one).
    if let (Volume::New { gib }, false) = (&choice, session.co_owners.is_empty()) {
        choice = Volume::PerSession { gib: *gib };
    }
    if let Volume::New { .. } = choice {
        let owner = session.window.owner_id;
        if let Some((volume, gib)) =
            homes::of(&w.db, (w.cluster_id(), owner, &session.tenant), &home_class(w), purpose).await.map_err(err)?
        {
            match reserve(w, session, purpose, &volume, managed).await? {
                Reserved::Yes => choice = Volume::Kept { volume, gib },
                Reserved::Busy => {}
                Reserved::Ending(namespace) => {
                    return Ok(Err(HomeBusy(format!(
                        "your {} is still held by your session in {namespace}, which is ending",
                        purpose.label().to_lowercase()
                    ))))
                }
                Reserved::Gone => homes::forget(&w.db, &volume).await.map_err(err)?,
            }
        }
    }
    Ok(Ok(homes::decide(&w.db, session.booking_id, purpose, choice).await.map_err(err)?))
}

/// Reserves `volume` for the session's claim of `purpose` unless a live claim holds it.
async fn reserve(
    w: &Reconciler,
    session: &Session,
    purpose: Kept,
    volume: &str,
    managed: &[Namespace],
) -> crate::provisioner::error::WorkerResult<Reserved> {
    let volumes = volumes(w);
    let Some(pv) = w.retrying(|| volumes.get_opt(volume)).await? else { return Ok(Reserved::Gone) };
    let namespace = session.namespace();
    let claim = claim(session, purpose).0;
    let spec = pv.spec.unwrap_or_default();
    let reference = spec.claim_ref.unwrap_or_default();
    let held_by = reference.namespace.clone().unwrap_or_default();
    if held_by == namespace && reference.name.as_deref() == Some(claim.as_str()) {
        return Ok(Reserved::Yes);
    }
    // A live session of the owner holds it, or one that is ending. A
    // holder whose namespace is gone holds nothing, whatever the
    // volume's status says yet.
    let bound = pv.status.and_then(|s| s.phase).as_deref() == Some("Bound");
    let holder = managed.iter().find(|ns| !held_by.is_empty() && ns.metadata.name.as_deref() == Some(&held_by));
    match holder {
        Some(ns) if ns.metadata.deletion_timestamp.is_some() => return Ok(Reserved::Ending(held_by)),
        Some(_) if bound => return Ok(Reserved::Busy),
        _ => {}
    }
    // Released (its last claim is gone) or never bound: the new claim's
    // alone. Without a uid the PersistentVolume controller binds it to
    // the claim of that namespace and name once it exists.
    let patch = json!({ "spec": { "claimRef": {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim,
        "uid": null, "resourceVersion": null,
    } } });
    let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
    w.retrying(|| volumes.patch(volume, &params, &merge)).await?;
    Ok(Reserved::Yes)
}

/// Keeps the volumes new home and cache claims were bound to as their
/// owners' (one per person, purpose and storage class: a second
/// session's new volume goes with it). Reads the claims from the pass's
/// snapshot.
pub(super) async fn keep_new(
    w: &Reconciler,
    sessions: &[Session],
    snapshot: &Snapshot,
) -> crate::provisioner::error::WorkerResult<usize> {
    let new: Vec<(&Session, Kept)> = sessions
        .iter()
        .flat_map(|s| Kept::ALL.map(|purpose| (s, purpose)))
        .filter(|(s, purpose)| matches!(s.window.volume(*purpose), Volume::New { .. }))
        .collect();
    if new.is_empty() {
        return Ok(0);
    }
    let err = crate::provisioner::error::WorkerError::from;
    let (class, volumes) = (home_class(w), volumes(w));
    let mut recorded = homes::volumes(&w.db, w.cluster_id(), &class).await.map_err(err)?;
    let mut kept = 0;
    for (session, purpose) in new {
        let (name, gib) = claim(session, purpose);
        let probe = json!({ "kind": "PersistentVolumeClaim",
            "metadata": { "namespace": session.namespace(), "name": name } });
        let Some(bound) = snapshot.get(&probe) else { continue };
        let Some(volume) = bound["spec"]["volumeName"].as_str().filter(|_| bound["status"]["phase"] == "Bound") else {
            continue;
        };
        let owner = (session.window.owner_id, session.tenant.clone(), purpose);
        if recorded.contains_key(&owner) {
            continue;
        }
        let patch = json!({
            "metadata": { "labels": { HOME_OWNER_LABEL: owner.0.to_string() } },
            "spec": { "persistentVolumeReclaimPolicy": "Retain" },
        });
        let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
        w.retrying(|| volumes.patch(volume, &params, &merge)).await?;
        homes::record(&w.db, (w.cluster_id(), &owner), &class, volume, gib as i32).await.map_err(err)?;
        recorded.insert(owner, volume.to_string());
        kept += 1;
    }
    Ok(kept)
}

/// Grows kept volumes their tenant now sizes larger, where the storage
/// class allows expansion (`allowVolumeExpansion`): once the claim is
/// bound at the size the volume was kept with, the session's size is
/// recorded larger and its quota raised at once; a later pass asks for
/// the claim at that size (the cluster's resizer does the rest). Not in
/// the same pass: the quota admits the claim only once the controller
/// manager has counted the raised quota, a moment later.
/// Returns how many grew.
pub(super) async fn grow_kept(
    w: &Reconciler,
    sessions: &[Session],
    snapshot: &Snapshot,
) -> crate::provisioner::error::WorkerResult<usize> {
    let kept: Vec<(&Session, Kept, &str, i32)> = sessions
        .iter()
        .flat_map(|s| Kept::ALL.map(|purpose| (s, purpose)))
        .filter_map(|(s, purpose)| match s.window.volume(purpose) {
            Volume::Kept { volume, gib } => Some((s, purpose, volume.as_str(), *gib)),
            _ => None,
        })
        .collect();
    if kept.is_empty() {
        return Ok(0);
    }
    let err = crate::provisioner::error::WorkerError::from;
    let ids: Vec<_> = kept.iter().map(|(s, ..)| s.booking_id).collect();
    let sizes = homes::tenant_sizes(&w.db, &ids).await.map_err(err)?;
    let mut expandable = None;
    let mut grown = 0;
    for (session, purpose, volume, gib) in kept {
        let Some(&(home_gib, cache_gib)) = sizes.get(&session.booking_id) else { continue };
        let target = if purpose == Kept::Home { home_gib } else { cache_gib };
        if target <= gib {
            continue;
        }
        // Only a claim bound at the size it was made with: a resize under way stays as it is.
        let (name, _) = claim(session, purpose);
        let probe = json!({ "kind": "PersistentVolumeClaim",
            "metadata": { "namespace": session.namespace(), "name": name } });
        let Some(bound) = snapshot.get(&probe).filter(|c| c["status"]["phase"] == "Bound") else { continue };
        if bound["spec"]["resources"]["requests"]["storage"] != json!(format!("{gib}Gi")) {
            continue;
        }
        if expandable.is_none() {
            expandable = Some(class_expands(w).await?);
        }
        if expandable != Some(true) {
            return Ok(grown);
        }
        homes::grow(&w.db, session.booking_id, purpose, volume, target).await.map_err(err)?;
        let (mut larger, grown_to) = (session.clone(), Volume::Kept { volume: volume.to_string(), gib: target });
        match purpose {
            Kept::Home => larger.window.home = grown_to,
            Kept::Cache => larger.window.cache = grown_to,
        }
        let quota = serde_json::to_value(super::manifests::resource_quota(&larger, &w.cluster))?;
        apply::ensure(w, &quota).await?;
        grown += 1;
    }
    Ok(grown)
}

/// Whether the storage class homes are kept in allows expansion.
async fn class_expands(w: &Reconciler) -> crate::provisioner::error::WorkerResult<bool> {
    let classes: Api<StorageClass> = Api::all(w.client.clone());
    let name = match &w.cluster.storage_class {
        Some(name) => name.clone(),
        None => {
            // The cluster's default: the class annotated as such.
            let every = kube::api::ListParams::default();
            let all = w.retrying(|| classes.list(&every)).await?;
            let default = all.items.into_iter().find(|c| {
                c.metadata.annotations.as_ref().and_then(|a| a.get("storageclass.kubernetes.io/is-default-class"))
                    == Some(&"true".to_string())
            });
            return Ok(default.and_then(|c| c.allow_volume_expansion) == Some(true));
        }
    };
    let class = w.retrying(|| classes.get_opt(&name)).await?;
    Ok(class.and_then(|c| c.allow_volume_expansion) == Some(true))
}

/// Lets the cluster delete homes past their retention (or asked to go)
/// that no session holds: reclaim policy back to `Delete`, which has the
/// provisioner delete the volume. Returns the volumes let go.
pub(super) async fn let_go(w: &Reconciler) -> crate::provisioner::error::WorkerResult<Vec<String>> {
    let err = crate::provisioner::error::WorkerError::from;
    let (mut gone, volumes) = (Vec::new(), volumes(w));
    for volume in homes::due_to_go(&w.db, w.cluster_id(), &home_class(w)).await.map_err(err)? {
        let found = w.retrying(|| volumes.get_opt(&volume)).await?;
        if let Some(pv) = found {
            if pv.status.and_then(|s| s.phase).as_deref() == Some("Bound") {
                continue; // a session holds it; it goes once that has ended
            }
            let patch = json!({ "spec": { "persistentVolumeReclaimPolicy": "Delete" } });
            let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
            if let Err(e) = w.retrying(|| volumes.patch(&volume, &params, &merge)).await {
                tracing::warn!(%volume, error = %describe(&e), "cannot let a home go; the next sweep retries");
                continue;
            }
        }
        homes::forget(&w.db, &volume).await.map_err(err)?;
        gone.push(volume);
    }
    Ok(gone)
}

enum Reserved {
    Yes,
    /// Another live session of the owner holds it.
    Busy,
    /// The session in that namespace holds it and is ending.
    Ending(String),
    /// The volume no longer exists.
    Gone,
}
