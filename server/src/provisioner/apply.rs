//! Applying one object the way every step does: server-side apply under
//! the field manager `berth`, stamped with a digest of the object as built
//! (`berth.io/applied`), and only where the live object carries another
//! digest or none — so a converged cluster costs reads, never writes.

use super::context::Reconciler;
use super::manifests::{self, FIELD_MANAGER};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::Value;

/// `live` carries the digest of `object` as the worker last applied it
/// (the access Secret: merely exists — its token is made once, and
/// re-applying would change it). Only the worker writes Berth's objects in
/// a session (policy berth-session-objects), so the digest is what they hold.
pub(super) fn up_to_date(object: &Value, live: Option<&Value>) -> bool {
    match live {
        Some(_) if object["kind"] == "Secret" => true,
        Some(found) => found["metadata"]["annotations"][manifests::APPLIED_ANNOTATION] == manifests::digest(object),
        None => false,
    }
}

fn api_for(client: &kube::Client, object: &Value) -> Api<DynamicObject> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let resource = super::snapshot::resource(&text(&object["apiVersion"]), &text(&object["kind"]));
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// Reads the live `object` and applies it unless up to date (see
/// `unless_current`); returns whether it wrote.
pub(super) async fn ensure(w: &Reconciler, object: &Value) -> Result<bool, kube::Error> {
    let api = api_for(&w.client, object);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let current = w.retrying(|| api.get_opt(name)).await?;
    let current = current.and_then(|found| serde_json::to_value(found).ok());
    unless_current(w, object, current.as_ref()).await
}

/// Applies `object` (server-side apply, field manager `berth`, stamped
/// with its digest) unless `live` carries that digest; returns whether
/// it wrote.
pub(super) async fn unless_current(w: &Reconciler, object: &Value, live: Option<&Value>) -> Result<bool, kube::Error> {
    let api = api_for(&w.client, object);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let up_to_date = up_to_date(object, live);
    if !up_to_date {
        let mut stamped = object.clone();
        stamped["metadata"]["annotations"][manifests::APPLIED_ANNOTATION] = manifests::digest(object).into();
        let (params, patch) = (PatchParams::apply(FIELD_MANAGER).force(), Patch::Apply(&stamped));
        w.retrying(|| api.patch(name, &params, &patch)).await?;
    }
    Ok(!up_to_date)
}
