//! The worker's report on each session (steps, workspace URL, failures in a
//! row), read by the booking page and written by the worker only when it
//! changed.

use crate::backend::error::ServiceResult;
use crate::model::SessionStatus;
use sqlx::types::Json;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// The stored report and the count of passes in a row that failed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stored {
    pub status: SessionStatus,
    pub failures: i32,
}

/// A `session_status` row: booking, namespace, URL, steps, failures.
type Row = (Uuid, String, Option<String>, Json<Vec<crate::model::SessionStep>>, i32);

pub async fn load(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, Stored>> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT booking_id, namespace, workspace_url, steps, failures FROM session_status WHERE booking_id = ANY($1)",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, namespace, workspace_url, steps, failures)| {
            (id, Stored { status: SessionStatus { namespace, workspace_url, steps: steps.0 }, failures })
        })
        .collect())
}

pub async fn save(db: &PgPool, id: Uuid, stored: &Stored) -> ServiceResult<()> {
    sqlx::query(
        "INSERT INTO session_status (booking_id, namespace, workspace_url, steps, failures)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (booking_id) DO UPDATE SET namespace = $2, workspace_url = $3, steps = $4, failures = $5,
                                                updated_at = now()",
    )
    .bind(id)
    .bind(&stored.status.namespace)
    .bind(&stored.status.workspace_url)
    .bind(Json(&stored.status.steps))
    .bind(stored.failures)
    .execute(db)
    .await?;
    Ok(())
}

/// Why each of these bookings failed: the reason of its last change to `failed`.
pub async fn failure_reasons(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, String>> {
    crate::backend::bookings::events::last_reasons(db, ids, crate::model::BookingState::Failed).await
}

/// How the note on a session's card that its access changed begins (a
/// `booking_event` active → active by the system).
pub const ACCESS_CHANGED: &str = "Access changed: ";

/// Records, for the card, that people dropped out of a session and what the
/// worker did about it.
pub async fn record_access_changed(db: &PgPool, id: Uuid, dropped: &[String], removed: usize) -> ServiceResult<()> {
    let what = match removed {
        0 => "nothing the session's users had started was running".to_string(),
        1 => "the 1 object the session's users had made (workloads, services, ingresses) was removed".to_string(),
        n => format!("the {n} objects the session's users had made (workloads, services, ingresses) were removed"),
    };
    let reason = format!(
        "{ACCESS_CHANGED}{} no longer {} this booking, so {what} and the workspace restarted with a new token. \
         Open it again from here; your files are kept.",
        dropped.join(", "),
        if dropped.len() == 1 { "holds" } else { "hold" },
    );
    let mut conn = db.acquire().await?;
    let active = crate::model::BookingState::Active;
    crate::backend::bookings::events::record(&mut conn, id, None, Some(active), active, &reason).await
}

/// The latest access note of each of these bookings.
pub async fn access_notes(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, String>> {
    let mut reasons =
        crate::backend::bookings::events::last_reasons(db, ids, crate::model::BookingState::Active).await?;
    reasons.retain(|_, reason| reason.starts_with(ACCESS_CHANGED));
    Ok(reasons)
}
