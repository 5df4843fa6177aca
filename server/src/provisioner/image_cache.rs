//! The image cache (`--image-cache`): a DaemonSet in Berth's namespace that
//! pulls every pool's images onto the nodes ahead of the sessions. Each
//! repair pass keeps it; started without the flag, the worker removes the
//! one an earlier configuration left.

use super::apply;
use super::context::Reconciler;
use super::error::WorkerResult;
use super::manifests;
use super::report::PassReport;
use super::retry::describe;
use app::backend::sessions::due;
use k8s_openapi::api::apps::v1::DaemonSet;
use kube::api::{Api, DeleteParams};
use uuid::Uuid;

/// Applies the DaemonSet for the pools' images and the configured ones; a
/// refusal is reported and does not stop the pass.
pub(super) async fn keep(w: &Reconciler, report: &mut PassReport) -> WorkerResult<()> {
    let Some(cache) = &w.cluster.image_cache else { return Ok(()) };
    let mut images = due::pool_images(&w.db, w.cluster_id()).await?;
    images.extend(cache.images.iter().cloned());
    images.sort();
    images.dedup();
    let daemon_set = manifests::image_cache_daemon_set(&w.cluster.berth_namespace, cache, &images);
    match apply::ensure(w, &serde_json::to_value(daemon_set)?).await {
        Ok(wrote) => report.applied += usize::from(wrote),
        Err(err) => report.errors.push((Uuid::nil(), format!("image cache: {}", describe(&err)))),
    }
    Ok(())
}

/// With the image cache switched off (settings change only with a
/// restart, so the worker calls this once when it starts): deletes the
/// DaemonSet an earlier configuration left, if it is Berth's.
pub(super) async fn remove_disabled(w: &Reconciler) -> Result<bool, kube::Error> {
    if w.cluster.image_cache.is_some() {
        return Ok(false);
    }
    let daemon_sets: Api<DaemonSet> = Api::namespaced(w.client.clone(), &w.cluster.berth_namespace);
    let Some(found) = w.retrying(|| daemon_sets.get_opt(manifests::IMAGE_CACHE)).await? else {
        return Ok(false);
    };
    let ours = manifests::is_managed(&found.metadata);
    if ours {
        let params = DeleteParams::default();
        w.retrying(|| daemon_sets.delete(manifests::IMAGE_CACHE, &params)).await?;
    }
    Ok(ours)
}
