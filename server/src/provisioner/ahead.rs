//! `--scale-ahead`: keeps room for the units of bookings about to start
//! (`manifests::ahead`) in Berth's namespace, and removes it once their
//! session runs, five minutes after their start, or when they are canceled.
//! Each pass lists what it keeps (one request per kind) and applies only
//! what is missing or changed against those lists, so a converged pass
//! costs the same two requests for 1 booking or 200.

use super::apply;
use super::context::Reconciler;
use super::manifests::{self, ahead, Session};
use super::snapshot::resource;
use app::backend::sessions::due;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams};
use std::collections::{HashMap, HashSet};

/// Converges the room held ahead; returns the objects written and deleted.
pub(super) async fn hold_room(w: &Reconciler) -> crate::provisioner::error::WorkerResult<(usize, Vec<String>)> {
    let Some(scale) = &w.cluster.scale_ahead else { return Ok((0, Vec::new())) };
    let wanted: Vec<Session> =
        due::ahead(&w.db, w.cluster_id(), scale.lead).await?.into_iter().map(Session::of).collect();
    let params = ListParams::default().labels(&manifests::managed_selector());
    // What holds a booking's room now, by (kind, name) (the image cache
    // is Berth's too, and carries no booking label).
    let mut held = HashMap::new();
    for (api_version, kind) in ahead::kinds(scale.mode) {
        let api: Api<DynamicObject> =
            Api::namespaced_with(w.client.clone(), &w.cluster.berth_namespace, &resource(api_version, kind));
        for found in w.retrying(|| api.list(&params)).await?.items {
            if found.metadata.labels.as_ref().is_some_and(|l| l.contains_key(manifests::BOOKING_LABEL)) {
                let name = found.metadata.name.clone().unwrap_or_default();
                held.insert((kind.to_string(), name), serde_json::to_value(found)?);
            }
        }
    }
    let mut written = 0;
    for session in &wanted {
        for object in ahead::objects(session, &w.cluster, scale) {
            let key = (object["kind"].as_str().unwrap_or_default().to_string(), ahead::name(session));
            written += usize::from(apply::unless_current(w, &object, held.get(&key)).await?);
        }
    }
    let keep: HashSet<String> = wanted.iter().map(ahead::name).collect();
    let mut removed = Vec::new();
    let delete = DeleteParams::default();
    for (api_version, kind) in ahead::kinds(scale.mode) {
        let api: Api<DynamicObject> =
            Api::namespaced_with(w.client.clone(), &w.cluster.berth_namespace, &resource(api_version, kind));
        for (_, name) in held.keys().filter(|(k, name)| k == kind && !keep.contains(name)) {
            match w.retrying(|| api.delete(name, &delete)).await {
                Ok(_) => removed.push(format!("{kind}/{name}")),
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
    Ok((written, removed))
}
