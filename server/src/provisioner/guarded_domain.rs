//! A workspace is published only under the domain its cluster's policies
//! guard. `berth-workspace-hosts` and `-routes` keep every host under
//! BERTH_WORKSPACE_DOMAIN of the cluster's own `berth/berth-config` for
//! Berth's sessions; a host under any other domain (a Clusters-page
//! setting, a worker flag that differs) would be unguarded, and an Ingress
//! of anyone's for `<host>/.berth/open` would collect one-time codes. So
//! before it writes a session's host the worker reads that ConfigMap in
//! the cluster it drives and refuses, saying why on the worker and
//! Clusters pages, when the two differ or the ConfigMap is missing.

use super::context::Reconciler;
use super::error::{WorkerError, WorkerResult};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

/// The ConfigMap deploy/ installs in Berth's namespace of every cluster.
pub const CONFIG: &str = "berth-config";
/// Its key the hosts policies read.
pub const DOMAIN_KEY: &str = "BERTH_WORKSPACE_DOMAIN";

/// `Ok` when the cluster's policies guard the domain this worker
/// publishes under; skipped where nothing is published for real
/// (`verify_domain` off: the simulated cluster, which runs no policies).
pub(super) async fn check(w: &Reconciler) -> WorkerResult<()> {
    if !w.verify_domain {
        return Ok(());
    }
    let namespace = &w.cluster.berth_namespace;
    let maps: Api<ConfigMap> = Api::namespaced(w.client.clone(), namespace);
    let config = w.retrying(|| maps.get_opt(CONFIG)).await?;
    let guarded = config.and_then(|c| c.data).and_then(|mut d| d.remove(DOMAIN_KEY));
    let publishes = &w.cluster.domain;
    match guarded.as_deref().map(str::trim) {
        Some(guarded) if guarded.eq_ignore_ascii_case(publishes) => Ok(()),
        Some(guarded) => Err(WorkerError::UnguardedDomain(format!(
            "workspaces would be published under {publishes}, but this cluster's policies guard {guarded} \
             ({namespace}/{CONFIG}, {DOMAIN_KEY}); no workspace starts until the cluster's workspace domain \
             and its {CONFIG} agree"
        ))),
        None => Err(WorkerError::UnguardedDomain(format!(
            "this cluster has no {namespace}/{CONFIG} with {DOMAIN_KEY}, so its policies guard no workspace \
             host; no workspace starts until deploy/'s {CONFIG} is applied there"
        ))),
    }
}
