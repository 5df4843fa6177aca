//! Berth's Kueue queues (`--kueue`) outlive no session: every pass lists
//! Berth's ClusterQueues (one request) and drains and deletes those whose
//! booking no longer runs — ended, canceled, failed — with their readers,
//! before their namespace goes. `stopPolicy: HoldAndDrain` first evicts what
//! Kueue admitted, so its `kueue.x-k8s.io/resource-in-use` finalizer lets
//! the LocalQueue and the ClusterQueue go.

use super::context::Reconciler;
use super::manifests::{self, kueue};
use super::retry::gone;
use super::snapshot::resource;
use app::backend::sessions::due;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use std::collections::HashSet;
use uuid::Uuid;

/// The bookings whose queues stay: the running ones, those another
/// booking took over (in `keep`) and, of the windows that have closed, those
/// whose session continues (`continuing`): a session another booking
/// continues runs on.
pub(super) fn running<'a>(
    due: &due::Due,
    keep: &HashSet<Uuid>,
    continuing: impl IntoIterator<Item = &'a Uuid>,
) -> HashSet<Uuid> {
    let mut running: HashSet<Uuid> = due.running.iter().map(|(id, _)| *id).collect();
    running.extend(keep.iter().copied().filter(|id| !due.ended.contains(id)));
    running.extend(continuing);
    running
}

/// Drains and deletes Berth's ClusterQueues (and their LocalQueues)
/// whose booking is not in `running`. Returns the queues deleted.
pub(super) async fn collect(w: &Reconciler, running: &HashSet<Uuid>) -> Result<Vec<String>, kube::Error> {
    if !w.cluster.kueue {
        return Ok(Vec::new());
    }
    let queues: Api<DynamicObject> = Api::all_with(w.client.clone(), &resource(kueue::KUEUE_API, "ClusterQueue"));
    let params = ListParams::default().labels(&manifests::managed_selector());
    let listed = w.retrying(|| queues.list(&params)).await?;
    let mut deleted = Vec::new();
    for queue in listed.items {
        let booking = queue.metadata.labels.as_ref().and_then(|l| l.get(manifests::BOOKING_LABEL));
        let Some(booking) = booking.and_then(|b| b.parse::<Uuid>().ok()) else { continue };
        if running.contains(&booking) || queue.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = queue.metadata.name.clone().unwrap_or_default();
        let drain = Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "HoldAndDrain" } }));
        let (patch, delete) = (PatchParams::default(), DeleteParams::default());
        // A queue that lent stops lending first: Kueue lends what a
        // terminating queue holds until it is gone.
        let stop = match unlent(&queue) {
            Some(groups) => {
                Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "HoldAndDrain", "resourceGroups": groups } }))
            }
            None => drain.clone(),
        };
        gone(w.retrying(|| queues.patch(&name, &patch, &stop)).await)?;
        // The session's LocalQueue lives in the namespace named as the queue.
        let local: Api<DynamicObject> =
            Api::namespaced_with(w.client.clone(), &name, &resource(kueue::KUEUE_API, "LocalQueue"));
        gone(w.retrying(|| local.delete(kueue::LOCAL_QUEUE, &delete)).await)?;
        // The reader of the queue goes before it: a pass that stops
        // after the queue's deletion would not find the reader again.
        let reader = format!("{}{name}", kueue::QUEUE_READER_PREFIX);
        let bindings: Api<ClusterRoleBinding> = Api::all(w.client.clone());
        gone(w.retrying(|| bindings.delete(&reader, &delete)).await)?;
        let roles: Api<ClusterRole> = Api::all(w.client.clone());
        gone(w.retrying(|| roles.delete(&reader, &delete)).await)?;
        gone(w.retrying(|| queues.delete(&name, &delete)).await)?;
        // What it lent may be in use by the pool's backfill, which Kueue
        // leaves running when the lender goes: drain the backfill too, so
        // its Jobs start again only on what other sessions still lend
        // (`backfill::keep` lets it admit again once it is empty).
        if unlent(&queue).is_some() {
            let cohort = queue.data["spec"]["cohortName"].as_str().unwrap_or_default();
            let backfill = cohort.replacen("berth-pool-", "berth-backfill-", 1);
            gone(w.retrying(|| queues.patch(&backfill, &patch, &drain)).await)?;
        }
        deleted.push(name);
    }
    Ok(deleted)
}

/// A session's resource groups lending nothing (`lendingLimit: 0`), if it
/// lent anything.
fn unlent(queue: &DynamicObject) -> Option<serde_json::Value> {
    let mut groups = queue.data["spec"]["resourceGroups"].clone();
    let mut lent = false;
    for group in groups.as_array_mut().into_iter().flatten() {
        for flavor in group["flavors"].as_array_mut().into_iter().flatten() {
            for resource in flavor["resources"].as_array_mut().into_iter().flatten() {
                if !resource["lendingLimit"].is_null() && resource["lendingLimit"] != "0" {
                    resource["lendingLimit"] = "0".into();
                    lent = true;
                }
            }
        }
    }
    lent.then_some(groups)
}
