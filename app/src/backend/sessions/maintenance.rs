//! Housekeeping the active worker does every few minutes: expired API tokens
//! and logins go, audit events older than the retention period go,
//! idempotency keys older than a day go, and past months' bookings are
//! rolled up for the reports.

use crate::backend::error::ServiceResult;
use sqlx::PgPool;

/// Expired or revoked tokens stay listed on the tokens page this long, so
/// their owners see what happened, then they are deleted.
pub const TOKEN_GRACE_DAYS: i32 = 7;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub tokens: u64,
    pub sessions: u64,
    pub events: u64,
    /// Months rolled up for the reports (`reports::rollups`).
    pub settled_months: u64,
    /// Idempotency keys past their day (`admission::idempotency`).
    pub idempotency_keys: u64,
}

pub async fn sweep(db: &PgPool, audit_retention_days: i32) -> ServiceResult<Swept> {
    let tokens = sqlx::query(
        "DELETE FROM api_token WHERE least(expires_at, coalesce(revoked_at, 'infinity')) < now() - make_interval(days => $1)",
    )
    .bind(TOKEN_GRACE_DAYS)
    .execute(db)
    .await?
    .rows_affected();
    let sessions = sqlx::query("DELETE FROM web_session WHERE expiry_date < now()").execute(db).await?.rows_affected();
    let events = sqlx::query("DELETE FROM booking_event WHERE at < now() - make_interval(days => $1)")
        .bind(audit_retention_days)
        .execute(db)
        .await?
        .rows_affected();
    let settled_months = crate::backend::reports::rollups::settle_due(db).await?;
    let idempotency_keys =
        sqlx::query("DELETE FROM idempotency_key WHERE created_at < now() - make_interval(hours => $1)")
            .bind(crate::backend::admission::idempotency::KEEP_HOURS)
            .execute(db)
            .await?
            .rows_affected();
    Ok(Swept { tokens, sessions, events, settled_months, idempotency_keys })
}
