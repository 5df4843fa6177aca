//! The worker's own reports (one row per process, written after every pass)
//! and the status page that reads them with the sessions' states.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Principal, WorkerFailure, WorkerProcess, WorkerStatus};
use sqlx::PgPool;
use std::time::Duration;

/// A process that has not reported for this long no longer counts as leading.
pub const LEADER_SILENCE: &str = "2 minutes";

/// This process as the worker page names it: `host:pid`.
pub fn process_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", std::process::id())
}

/// A worker process starts (and waits for the lead).
pub async fn register(db: &PgPool, name: &str, simulated: bool) -> ServiceResult<()> {
    sqlx::query(
        "INSERT INTO worker_process (name, simulated) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET simulated = $2, started_at = now(), heartbeat_at = now(), leading_since = NULL",
    )
    .bind(name)
    .bind(simulated)
    .execute(db)
    .await?;
    Ok(())
}

/// The process took the lead: it alone counts as leading from now on.
pub async fn took_lead(db: &PgPool, name: &str) -> ServiceResult<()> {
    sqlx::query(
        "UPDATE worker_process SET leading_since = CASE WHEN name = $1 THEN now() END,
                                  heartbeat_at = CASE WHEN name = $1 THEN now() ELSE heartbeat_at END",
    )
    .bind(name)
    .execute(db)
    .await?;
    Ok(())
}

/// Which loop a pass belongs to.
#[derive(Clone, Copy)]
pub enum Pass {
    Start,
    Repair,
}

/// Records a finished pass: when, how long, its error and the next wake-up.
pub async fn record_pass(
    db: &PgPool,
    name: &str,
    pass: Pass,
    took: Duration,
    error: Option<&str>,
    next_wake: Duration,
) -> ServiceResult<()> {
    let sql = match pass {
        Pass::Start => {
            "UPDATE worker_process SET heartbeat_at = now(), start_pass_at = now(), start_pass_ms = $2,
                 start_pass_error = $3, next_wake_at = now() + make_interval(secs => $4) WHERE name = $1"
        }
        Pass::Repair => {
            "UPDATE worker_process SET heartbeat_at = now(), repair_pass_at = now(), repair_pass_ms = $2,
                 repair_pass_error = $3 WHERE name = $1"
        }
    };
    sqlx::query(sql)
        .bind(name)
        .bind(i32::try_from(took.as_millis()).unwrap_or(i32::MAX))
        .bind(error)
        .bind(next_wake.as_secs_f64())
        .execute(db)
        .await?;
    Ok(())
}

pub async fn record_sweep(db: &PgPool, name: &str, collected: &[String], stuck: &[String]) -> ServiceResult<()> {
    sqlx::query(
        "UPDATE worker_process SET heartbeat_at = now(), sweep_at = now(), sweep_collected = $2, sweep_stuck = $3
         WHERE name = $1",
    )
    .bind(name)
    .bind(collected)
    .bind(stuck)
    .execute(db)
    .await?;
    Ok(())
}

/// The namespaces stuck terminating now (between sweeps; see `record_sweep`).
pub async fn record_stuck(db: &PgPool, name: &str, stuck: &[String]) -> ServiceResult<()> {
    sqlx::query("UPDATE worker_process SET sweep_stuck = $2 WHERE name = $1")
        .bind(name)
        .bind(stuck)
        .execute(db)
        .await?;
    Ok(())
}

/// What the worker page shows (admins only).
pub async fn status(db: &PgPool, principal: &Principal) -> ServiceResult<WorkerStatus> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins watch the worker"));
    }
    let now = crate::backend::db_now(db).await?;
    let processes: Vec<WorkerProcess> = sqlx::query_as(
        "SELECT name, simulated, started_at, heartbeat_at, leading_since, start_pass_at, start_pass_ms,
                start_pass_error, repair_pass_at, repair_pass_ms, repair_pass_error, next_wake_at, sweep_at,
                sweep_collected, sweep_stuck
         FROM worker_process WHERE heartbeat_at > now() - interval '1 day'
         ORDER BY leading_since IS NULL, heartbeat_at DESC LIMIT 20",
    )
    .fetch_all(db)
    .await?;
    let leader: Option<String> = sqlx::query_scalar(&format!(
        "SELECT name FROM worker_process WHERE leading_since IS NOT NULL
           AND heartbeat_at > now() - interval '{LEADER_SILENCE}' ORDER BY leading_since DESC LIMIT 1"
    ))
    .fetch_optional(db)
    .await?;
    // The state of each session's first reported step that is not done;
    // with every step done the session is "live" (not over: it is open).
    let sessions: Vec<(String, i64)> = sqlx::query_as(
        "SELECT coalesce((SELECT s->>'state' FROM jsonb_array_elements(st.steps) s
                          WHERE s->>'state' <> 'done' LIMIT 1), 'live') AS state, count(*)
         FROM session_status st JOIN booking b ON b.id = st.booking_id
         WHERE b.state IN ('approved', 'active')
         GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(db)
    .await?;
    let failures: Vec<(uuid::Uuid, chrono::DateTime<chrono::Utc>, String)> = sqlx::query_as(
        "SELECT DISTINCT ON (e.booking_id) e.booking_id, e.at, e.reason FROM booking_event e
         WHERE e.to_state = 'failed' AND e.at > now() - interval '7 days'
         ORDER BY e.booking_id, e.at DESC",
    )
    .fetch_all(db)
    .await?;
    let mut recent_failures: Vec<WorkerFailure> =
        failures.into_iter().map(|(booking_id, at, reason)| WorkerFailure { booking_id, at, reason }).collect();
    recent_failures.sort_by_key(|f| std::cmp::Reverse(f.at));
    recent_failures.truncate(20);
    let clusters: Vec<crate::model::ClusterHealth> = sqlx::query_as(
        "SELECT c.name, s.worker, s.pass_at, s.pass_ms, s.last_success_at, s.error, s.unreachable_since
         FROM cluster c LEFT JOIN cluster_status s ON s.cluster_id = c.id ORDER BY c.name",
    )
    .fetch_all(db)
    .await?;
    Ok(WorkerStatus { now, leader, processes, sessions, recent_failures, clusters })
}
