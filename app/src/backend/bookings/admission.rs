//! The two primitives every capacity decision is made with.

use super::super::error::ServiceResult;
use crate::rules::capacity::Usage;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

/// Serialises capacity decisions for one pool+kind until the transaction ends.
/// Transaction-scoped on purpose: a session-level lock would stay with the
/// pooled connection after an error. Hash collisions only serialise more.
pub async fn lock_kind(conn: &mut PgConnection, pool_id: Uuid, kind: &str) -> ServiceResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2, 0))")
        .bind(pool_id)
        .bind(kind)
        .execute(conn)
        .await?;
    Ok(())
}

/// Capacity-holding bookings of one pool+kind that overlap `[from, to)`.
pub async fn live_usages(
    conn: &mut PgConnection,
    pool_id: Uuid,
    kind: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> ServiceResult<Vec<(Uuid, Usage)>> {
    let rows: Vec<(Uuid, DateTime<Utc>, DateTime<Utc>, i32)> = sqlx::query_as(
        "SELECT id, starts_at, ends_at, quantity FROM booking
         WHERE pool_id = $1 AND kind = $2 AND state IN ('pending', 'approved', 'active')
           AND ends_at > $3 AND starts_at < $4",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(from)
    .bind(to)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, start, end, quantity)| (id, Usage { start, end, quantity }))
        .collect())
}
