//! The worker's loop: one active worker (a PostgreSQL advisory lock held on
//! its own connection), a pass whenever bookings change (LISTEN/NOTIFY), a
//! managed namespace changes (watch), the next window opens or closes, and
//! every 30 s regardless; a sweep every 5 minutes. Failed passes are retried
//! with a growing pause; nothing depends on a watch or a notification
//! arriving, only on the pass being repeatable.

use super::reconcile::{PassReport, Reconciler};
use super::sweep::SWEEP_EVERY;
use app::backend::provisioning;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Longest sleep between passes.
pub const RESYNC: Duration = Duration::from_secs(30);
/// Sleep after the first failed pass; doubled for each further one, up to RESYNC.
const BACKOFF: Duration = Duration::from_secs(1);

pub async fn run(worker: Reconciler, shutdown: tokio::sync::watch::Receiver<bool>) -> anyhow::Result<()> {
    let mut shutdown = shutdown;
    // Become the active worker; standbys retry every few seconds. The lock's
    // connection is detached from the pool, so it (and the lock) ends with
    // this worker instead of going back to the pool still holding it.
    let mut lock_conn = worker.db.acquire().await?.detach();
    while !provisioning::try_lead(&mut lock_conn).await? {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            _ = shutdown.changed() => return Ok(()),
        }
    }
    tracing::info!("this worker is the active one");
    let mut listener = PgListener::connect_with(&worker.db).await?;
    listener.listen("berth_bookings").await?;
    let watched = Arc::new(Notify::new());
    let watch = tokio::spawn(super::watch::namespaces(worker.client.clone(), watched.clone()));
    let _stop_watch = AbortOnDrop(watch);
    let mut last_sweep: Option<Instant> = None;
    let mut failed_passes = 0u32;
    loop {
        if last_sweep.is_none_or(|at| at.elapsed() >= SWEEP_EVERY) {
            match worker.sweep().await {
                Ok(report) => {
                    tracing::info!(?report, "worker sweep");
                    last_sweep = Some(Instant::now());
                }
                Err(err) => tracing::warn!(error = %err, "worker sweep failed; trying again after the next pass"),
            }
        }
        let outcome = worker.pass().await;
        failed_passes = match &outcome {
            Ok(report) if report.errors.is_empty() => 0,
            _ => failed_passes + 1,
        };
        match &outcome {
            Ok(report) => log(report),
            Err(err) => tracing::warn!(error = %err, "worker pass failed; retrying"),
        }
        let pause = match failed_passes {
            0 => until_next_boundary(&worker).await,
            n => (BACKOFF * 2u32.saturating_pow(n - 1)).min(RESYNC),
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            note = listener.recv() => { note?; }
            _ = watched.notified() => {}
            _ = shutdown.changed() => return Ok(()),
        }
    }
}

fn log(report: &PassReport) {
    if report.applied > 0 || !report.completed.is_empty() || !report.collected.is_empty() || !report.failed.is_empty() {
        tracing::info!(?report, "worker pass");
    }
    for (booking, error) in &report.errors {
        tracing::warn!(%booking, %error, "session not converged; retrying");
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn until_next_boundary(worker: &Reconciler) -> Duration {
    match provisioning::next_boundary(&worker.db).await {
        Ok(Some(at)) => (at - chrono::Utc::now()).to_std().unwrap_or_default().min(RESYNC) + Duration::from_millis(50),
        _ => RESYNC,
    }
}
