//! Collecting session namespaces: which bookings' namespaces stay (`keep`),
//! deleting the rest (`namespaces`), and deleting one namespace so its
//! pods may checkpoint first (`delete_namespace`). The start pass and the
//! sweep collect alike, from the same keep-set, so neither collects a
//! session the other keeps.

use super::context::Reconciler;
use super::error::WorkerResult;
use super::manifests::owned_by;
use super::retry::gone;
use app::backend::sessions::{continuation, due};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams};
use std::collections::HashSet;
use uuid::Uuid;

/// The bookings whose namespaces stay: open windows, and closed ones the
/// pass is about to complete (it deletes their namespaces itself).
fn live_bookings(due: &due::Due) -> HashSet<Uuid> {
    let running = due.running.iter().map(|(id, _)| *id);
    running.chain(due.ended.iter().copied()).collect()
}

/// The bookings whose namespaces no pass or sweep may collect: the live
/// ones, and those whose session a booking that has not ended took over
/// (their namespace names them until that booking's session converges).
pub(super) async fn keep(w: &Reconciler, due: &due::Due) -> WorkerResult<HashSet<Uuid>> {
    let mut keep = live_bookings(due);
    keep.extend(continuation::continued(&w.db).await?);
    Ok(keep)
}

/// Deletes the managed namespaces whose booking is not in `keep`; ones
/// already terminating are left to finish. Returns the deleted names.
pub(super) async fn namespaces(
    w: &Reconciler,
    managed: &[Namespace],
    keep: &HashSet<Uuid>,
) -> WorkerResult<Vec<String>> {
    let mut collected = Vec::new();
    for ns in managed {
        let Some(id) = owned_by(ns, None) else { continue };
        if !keep.contains(&id) && ns.metadata.deletion_timestamp.is_none() {
            delete_namespace(w, ns).await?;
            collected.push(ns.metadata.name.clone().unwrap_or_default());
        }
    }
    Ok(collected)
}

/// Deletes one session namespace, its pods first with their grace period.
pub(super) async fn delete_namespace(w: &Reconciler, ns: &Namespace) -> WorkerResult<()> {
    if ns.metadata.deletion_timestamp.is_some() {
        return Ok(()); // already on its way out; asking again would be a write per pass
    }
    let namespaces: Api<Namespace> = Api::all(w.client.clone());
    let name = ns.metadata.name.clone().unwrap_or_default();
    // The window is over: its pods get SIGTERM and their own grace
    // period (at most 30 s: policy berth-session-devices; the workspace
    // asks for all of it) to checkpoint into the home, which stays
    // mounted until they exit (the claim's protection finalizer) and
    // outlives the namespace. `/etc/berth/ending-soon` warned them.
    let pods: Api<Pod> = Api::namespaced(w.client.clone(), &name);
    let (graceful, every) = (DeleteParams::default(), ListParams::default());
    gone(w.retrying(|| pods.delete_collection(&graceful, &every)).await)?;
    let params = DeleteParams::default();
    Ok(gone(w.retrying(|| namespaces.delete(&name, &params)).await)?)
}
