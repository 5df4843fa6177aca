//! The worker's loops. One active worker (a PostgreSQL advisory lock held on
//! its own connection) runs two: the start loop — stop, collect, start —
//! whenever bookings change (LISTEN/NOTIFY), at the next window boundary, on
//! a managed namespace's or workspace's watch event and every 30 s; and the
//! repair loop — drift repair of active sessions, the image cache, and the
//! 5-minute sweep — every 30 s and on watch events. Starting thus never waits behind a repair
//! of many sessions. Failed passes are retried with a growing pause; nothing
//! depends on a watch or a notification arriving, only on the passes being
//! repeatable.

use super::reconcile::{PassReport, Reconciler};
use super::sweep::SWEEP_EVERY;
use super::wake::{self, Wake};
use app::backend::sessions::status::{self, Pass};
use app::backend::sessions::{due, lease};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Longest sleep between passes.
pub const RESYNC: Duration = Duration::from_secs(30);
/// Sleep after the first failed pass; doubled for each further one, up to RESYNC.
const BACKOFF: Duration = Duration::from_secs(1);

/// How often a standby asks for the lead: the hand-over after the leader
/// stops (or dies: PostgreSQL drops its connection and the lock with it)
/// takes at most this long.
pub const STANDBY_POLL: Duration = Duration::from_secs(1);

/// Leads (or waits to) until `shutdown`. Losing the database — a restart, a
/// failover — ends the lead, since the advisory lock went with the
/// connection; the worker then waits to lead again like any standby.
pub async fn run(
    worker: Reconciler,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> crate::provisioner::error::WorkerResult<()> {
    let mut shutdown = shutdown;
    let name = Arc::new(status::process_name());
    if let Err(err) = status::register(&worker.db, &name, worker.simulated).await {
        tracing::warn!(error = %err.public_message(), "cannot record this worker process");
    }
    let worker = Arc::new(worker);
    loop {
        match lead(&worker, &name, shutdown.clone()).await {
            Ok(()) => return Ok(()),
            Err(err) => {
                tracing::warn!(error = %err, "the worker lost its database connection; it will ask for the lead again")
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(STANDBY_POLL) => {}
            _ = shutdown.changed() => return Ok(()),
        }
    }
}

async fn lead(
    worker: &Arc<Reconciler>,
    name: &Arc<String>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> crate::provisioner::error::WorkerResult<()> {
    // Become the active worker; standbys retry every STANDBY_POLL. The lock's
    // connection is detached from the pool, so it (and the lock) ends with
    // this worker instead of going back to the pool still holding it.
    let mut lock_conn = worker.db.acquire().await?.detach();
    while !lease::try_lead(&mut lock_conn, worker.cluster_id()).await? {
        tokio::select! {
            _ = tokio::time::sleep(STANDBY_POLL) => {}
            _ = shutdown.changed() => return Ok(()),
        }
    }
    tracing::info!("this worker is the active one");
    crate::metrics::leader(worker.cluster_name(), true);
    let outcome = work(worker, name, &mut lock_conn, shutdown).await;
    crate::metrics::leader(worker.cluster_name(), false);
    // Closing the connection releases the lock now, so a standby takes over
    // at its next poll rather than when PostgreSQL notices a dead socket.
    if let Err(err) = sqlx::Connection::close(lock_conn).await {
        tracing::debug!(error = %err, "closing the lock connection");
    }
    outcome
}

async fn work(
    worker: &Arc<Reconciler>,
    name: &Arc<String>,
    lock_conn: &mut sqlx::PgConnection,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> crate::provisioner::error::WorkerResult<()> {
    if let Some(cluster) = worker.cluster_id() {
        if let Err(err) = app::backend::sessions::cluster_status::took_lead(&worker.db, cluster, name).await {
            tracing::warn!(error = %err.public_message(), "cannot record that this worker leads its cluster");
        }
    }
    // The process's own row: it leads (some cluster) from now on.
    if let Err(err) = status::took_lead(&worker.db, name).await {
        tracing::warn!(error = %err.public_message(), "cannot record that this worker leads");
    }
    tracing::info!(cluster = worker.cluster_name(), "leading the cluster");
    let mut listener = PgListener::connect_with(&worker.db).await?;
    listener.listen("berth_bookings").await?;
    let (wake_start, wake_repair) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let namespaces = Api::<Namespace>::all(worker.client.clone());
    let watch = super::watch::managed(namespaces, vec![wake_start.clone(), wake_repair.clone()]);
    let _watch = AbortOnDrop(tokio::spawn(watch));
    // A workspace turning ready is what a starting session waits for.
    let workspaces = super::watch::managed(Api::<Deployment>::all(worker.client.clone()), vec![wake_start.clone()]);
    let _workspaces = AbortOnDrop(tokio::spawn(workspaces));
    let _repair = AbortOnDrop(tokio::spawn(repair_loop(worker.clone(), wake_repair, name.clone())));
    let _usage = worker.usage.clone().map(|source| {
        let crate::usage::UsageSource { prometheus, selector, threshold } = source;
        let sampler = crate::usage::Sampler { prometheus, selector, threshold, simulated: worker.simulated };
        AbortOnDrop(tokio::spawn(crate::usage::run(sampler, worker.db.clone())))
    });
    let _notify = worker
        .notifier
        .clone()
        .map(|notifier| AbortOnDrop(tokio::spawn(crate::notify::run(notifier, worker.db.clone()))));
    let mut failed_passes = 0u32;
    loop {
        // Still holding the lock? Its connection is the proof.
        sqlx::query("SELECT 1").execute(&mut *lock_conn).await?;
        let started = Instant::now();
        let outcome = worker.start_pass().await;
        failed_passes = next_failures(failed_passes, &outcome);
        let pause = match failed_passes {
            0 => until_next_boundary(worker).await,
            n => backoff(n),
        };
        report(worker, name, Pass::Start, started, &outcome, pause).await;
        // Sleep until the next boundary, a notification that needs a pass
        // now, or a watch event. A future window only pulls the wake-up in.
        let mut wake_at = tokio::time::Instant::now() + pause;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(wake_at) => break,
                note = listener.recv() => match wake::wake_for(note?.payload(), chrono::Utc::now()) {
                    Wake::Now => break,
                    Wake::By(at) => wake_at = wake_at.min(instant_of(at)),
                    Wake::Never => {}
                },
                _ = wake_start.notified() => break,
                _ = shutdown.changed() => return Ok(()),
            }
        }
    }
}

/// The monotonic instant of a wall-clock time (just after it, so the pass
/// finds the window open).
fn instant_of(at: chrono::DateTime<chrono::Utc>) -> tokio::time::Instant {
    let wait = (at - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::Instant::now() + wait + Duration::from_millis(50)
}

/// Drift repair every RESYNC (sooner on watch events), and the sweep.
async fn repair_loop(worker: Arc<Reconciler>, wake: Arc<Notify>, name: Arc<String>) {
    match worker.remove_disabled_image_cache().await {
        Ok(true) => tracing::info!("the image cache is switched off: its DaemonSet was deleted"),
        Ok(false) => {}
        Err(err) => tracing::warn!(error = %err, "cannot check for an image cache left from an earlier configuration"),
    }
    let mut last_sweep: Option<Instant> = None;
    let mut failed_passes = 0u32;
    let mut last_stuck: Option<Vec<String>> = None;
    loop {
        match worker.report_stuck().await {
            Ok(stuck) if last_stuck.as_ref() != Some(&stuck) => {
                for name in stuck.iter().filter(|name| !last_stuck.iter().flatten().any(|seen| seen == *name)) {
                    tracing::warn!(namespace = %name, "namespace stuck terminating: check its pods and finalizers");
                }
                match status::record_stuck(&worker.db, &name, &stuck).await {
                    Ok(()) => last_stuck = Some(stuck),
                    Err(err) => tracing::warn!(error = %err.public_message(), "cannot record stuck namespaces"),
                }
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "cannot check for namespaces stuck terminating"),
        }
        if last_sweep.is_none_or(|at| at.elapsed() >= SWEEP_EVERY) {
            match worker.sweep().await {
                Ok(report) => {
                    tracing::info!(?report, "worker sweep");
                    last_sweep = Some(Instant::now());
                    if let Err(err) = status::record_sweep(&worker.db, &name, &report.collected, &report.stuck).await {
                        tracing::warn!(error = %err.public_message(), "cannot record the sweep");
                    }
                }
                Err(err) => tracing::warn!(error = %err, "worker sweep failed; trying again after the next pass"),
            }
        }
        let started = Instant::now();
        let outcome = worker.repair_pass().await;
        failed_passes = next_failures(failed_passes, &outcome);
        let pause = if failed_passes == 0 { RESYNC } else { backoff(failed_passes) };
        report(&worker, &name, Pass::Repair, started, &outcome, pause).await;
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = wake.notified() => {}
        }
    }
}

/// Logs a pass and counts failed passes in a row (a pass that left a
/// session unconverged counts as failed: it wants an early retry).
fn next_failures(failed: u32, outcome: &crate::provisioner::error::WorkerResult<PassReport>) -> u32 {
    match outcome {
        Ok(report) => {
            let changed = report.applied > 0
                || !report.completed.is_empty()
                || !report.collected.is_empty()
                || !report.failed.is_empty();
            if changed {
                tracing::info!(?report, "worker pass");
            }
            for (booking, error) in &report.errors {
                tracing::warn!(%booking, %error, "session not converged; retrying");
            }
            if report.errors.is_empty() {
                0
            } else {
                failed + 1
            }
        }
        Err(err) => {
            tracing::warn!(error = %err, "worker pass failed; retrying");
            failed + 1
        }
    }
}

/// Writes the pass to the worker page's table; a failure to write is logged
/// and never stops the worker.
async fn report(
    worker: &Reconciler,
    name: &str,
    pass: Pass,
    started: Instant,
    outcome: &crate::provisioner::error::WorkerResult<PassReport>,
    pause: Duration,
) {
    let error = match outcome {
        Ok(report) => report.errors.first().map(|(booking, error)| format!("booking {booking}: {error}")),
        Err(err) => Some(err.to_string()),
    };
    let label = match pass {
        Pass::Start => "start",
        Pass::Repair => "repair",
    };
    crate::metrics::worker_pass(label, started.elapsed(), error.is_some());
    if let Err(err) = outcome {
        crate::metrics::worker_pass_error(label, err.metric_label());
    }
    if let Some(cluster) = worker.cluster_id() {
        use app::backend::sessions::cluster_status::{self, Outcome};
        // Only the API server failing the pass makes the cluster "unreachable";
        // a session not converged yet is that session's to say.
        let text = outcome.as_ref().err().map(ToString::to_string);
        let said = match (outcome, text.as_deref()) {
            (Err(crate::provisioner::error::WorkerError::Kube(_)), Some(text)) => Outcome::ClusterFailed(text),
            (Err(_), Some(text)) => Outcome::Failed(text),
            _ => Outcome::Done,
        };
        let reached = !matches!(said, Outcome::ClusterFailed(_));
        crate::metrics::cluster_pass(worker.cluster_name(), label, started.elapsed(), reached);
        if let Err(err) = cluster_status::record_pass(&worker.db, cluster, started.elapsed(), said).await {
            tracing::warn!(error = %err.public_message(), "cannot record the cluster's pass");
        }
    }
    if let Err(err) = status::record_pass(&worker.db, name, pass, started.elapsed(), error.as_deref(), pause).await {
        tracing::warn!(error = %err.public_message(), "cannot record the pass");
    }
}

fn backoff(failed_passes: u32) -> Duration {
    (BACKOFF * 2u32.saturating_pow(failed_passes.saturating_sub(1))).min(RESYNC)
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn until_next_boundary(worker: &Reconciler) -> Duration {
    match due::next_boundary(&worker.db, worker.cluster_id()).await {
        Ok(Some(at)) => (at - chrono::Utc::now()).to_std().unwrap_or_default().min(RESYNC) + Duration::from_millis(50),
        _ => RESYNC,
    }
}
