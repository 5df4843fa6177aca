//! The sweep the active worker runs every few minutes besides its passes:
//! managed namespaces with no live booking are deleted (the start pass does
//! the same; the sweep is the backstop should start passes keep failing
//! before they get there), namespaces stuck terminating are reported (also
//! at every resync, `report_stuck`), the cluster's priority and runtime
//! classes are read for the pool form (`read_classes`), and the database is
//! kept tidy (these two by the worker with the site's duties only); homes
//! past their retention go (`homes`).

use super::context::Reconciler;
use super::manifests::owned_by;
use super::{collect, homes};
use app::backend::sessions::maintenance::{self, Swept};
use k8s_openapi::api::core::v1::Namespace;
use uuid::Uuid;

/// How often the sweep runs.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

#[derive(Debug, Default, PartialEq)]
pub struct SweepReport {
    pub collected: Vec<String>,
    /// Managed namespaces terminating for longer than `Policy::stuck_after`
    /// (a finalizer that never finishes): an admin must look.
    pub stuck: Vec<String>,
    pub swept: Swept,
    /// Homes past their retention handed back to the provisioner to delete.
    pub homes_let_go: Vec<String>,
}

/// Managed namespaces terminating for longer than `Policy::stuck_after`,
/// with their booking: a pod that will not go (a finalizer, a node that
/// stopped answering) may still hold a GPU Berth counts as free again.
pub(super) fn stuck(w: &Reconciler, managed: &[Namespace]) -> Vec<(String, Uuid)> {
    let now = k8s_openapi::jiff::Timestamp::now().as_second();
    let stuck_after = i64::try_from(w.policy.stuck_after.as_secs()).unwrap_or(i64::MAX);
    managed
        .iter()
        .filter(|ns| ns.metadata.deletion_timestamp.as_ref().is_some_and(|at| now - at.0.as_second() > stuck_after))
        .filter_map(|ns| Some((ns.metadata.name.clone()?, owned_by(ns, None)?)))
        .collect()
}

/// Tells admins of stuck namespaces as soon as the repair loop sees them
/// (every resync): the `berth_session_namespaces_stuck` gauge, a
/// `session.stuck` notification per booking (once), and the worker page.
/// Returns the names.
pub(super) async fn report_stuck(w: &Reconciler) -> crate::provisioner::error::WorkerResult<Vec<String>> {
    let managed = w.managed_namespaces().await?;
    let stuck = stuck(w, &managed);
    metrics::gauge!("berth_session_namespaces_stuck").set(stuck.len() as f64);
    for (name, booking) in &stuck {
        crate::notify::outbox::stuck(&w.db, *booking, name).await?;
    }
    Ok(stuck.into_iter().map(|(name, _)| name).collect())
}

/// One sweep, its steps in order: collect, report the stuck, tidy the
/// database, let homes go, read the classes. Reads its own facts: it runs
/// on its own timer, between passes.
pub(super) async fn run(w: &Reconciler) -> crate::provisioner::error::WorkerResult<SweepReport> {
    let due = app::backend::sessions::due::due(&w.db, w.cluster_id()).await?;
    let managed = w.managed_namespaces().await?;
    let collected = collect::namespaces(w, &managed, &collect::keep(w, &due).await?).await?;
    let stuck = stuck(w, &managed).into_iter().map(|(name, _)| name).collect();
    let swept = match w.site_duties {
        true => maintenance::sweep(&w.db, w.policy.audit_retention_days).await?,
        false => Swept::default(),
    };
    let homes_let_go = match homes::let_go(w).await {
        Ok(gone) => gone,
        Err(err) => {
            tracing::warn!(error = %err, "cannot let homes past their retention go; the next sweep retries");
            Vec::new()
        }
    };
    if w.site_duties {
        if let Err(err) = read_classes(w).await {
            // The pool form then checks against what was read last, if anything.
            tracing::warn!(error = %err, "cannot read the cluster's priority and runtime classes");
        }
    }
    Ok(SweepReport { collected, stuck, swept, homes_let_go })
}

/// Records the names of the cluster's PriorityClasses and RuntimeClasses
/// (two list requests, names only), which a pool may name.
pub(super) async fn read_classes(w: &Reconciler) -> crate::provisioner::error::WorkerResult<()> {
    use k8s_openapi::api::node::v1::RuntimeClass;
    use k8s_openapi::api::scheduling::v1::PriorityClass;
    use kube::api::{Api, ListParams};
    let priority: Api<PriorityClass> = Api::all(w.client.clone());
    let runtime: Api<RuntimeClass> = Api::all(w.client.clone());
    let all = ListParams::default();
    let priority = w.retrying(|| priority.list_metadata(&all)).await?.items;
    let runtime = w.retrying(|| runtime.list_metadata(&all)).await?.items;
    let priority: Vec<String> = priority.into_iter().filter_map(|item| item.metadata.name).collect();
    let runtime: Vec<String> = runtime.into_iter().filter_map(|item| item.metadata.name).collect();
    app::backend::pools::classes::record(&w.db, &priority, &runtime)
        .await
        .map_err(crate::provisioner::error::WorkerError::from)?;
    Ok(())
}
