//! The worker's loop: one active worker (a PostgreSQL advisory lock held on
//! its own connection), a pass whenever bookings change (LISTEN/NOTIFY), when
//! the next window opens or closes, and every 30 s regardless. Failed passes
//! are retried on the next wake-up; nothing depends on a watch or a
//! notification arriving, only on the pass being repeatable.

use super::reconcile::Reconciler;
use app::backend::provisioning;
use sqlx::postgres::PgListener;
use std::time::Duration;

/// Longest sleep between passes.
pub const RESYNC: Duration = Duration::from_secs(30);
/// Shortest sleep after a failed pass (an API server under load).
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
    loop {
        let pause = match worker.pass().await {
            Ok(report) => {
                if report.applied > 0 || !report.completed.is_empty() || !report.collected.is_empty() {
                    tracing::info!(?report, "worker pass");
                }
                until_next_boundary(&worker).await
            }
            Err(err) => {
                tracing::warn!(error = %err, "worker pass failed; retrying");
                BACKOFF
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            note = listener.recv() => { note?; }
            _ = shutdown.changed() => return Ok(()),
        }
    }
}

async fn until_next_boundary(worker: &Reconciler) -> Duration {
    match provisioning::next_boundary(&worker.db).await {
        Ok(Some(at)) => (at - chrono::Utc::now()).to_std().unwrap_or_default().min(RESYNC) + Duration::from_millis(50),
        _ => RESYNC,
    }
}
