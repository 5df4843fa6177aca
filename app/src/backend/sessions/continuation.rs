//! Back-to-back bookings continue one session (issue 46): a booking's
//! *successor* is the same person's next approved booking on the same pool,
//! kind, mode and image that starts no later than its end plus the pool's
//! granularity. When the window ends with a successor waiting, the worker
//! keeps the session (`continue_into`) instead of deleting it, and the
//! successor's session converges in the same namespace. A shared booking
//! is nobody's successor: the session it would take over may work in its
//! owner's kept home, where co-owners must not write (docs/security.md).

use crate::backend::error::ServiceResult;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// The booking that follows booking `b` (an SQL alias) at once, as a
/// lateral subquery `nx`: the same person's next approved booking on the
/// same pool, kind and mode that starts no later than `b`'s end plus the
/// pool's granularity, with the same image (its successor) or, with
/// `same_image` false, another (which cannot take the session over).
pub fn following(same_image: bool) -> String {
    let image = if same_image { "=" } else { "<>" };
    format!(
        "LEFT JOIN LATERAL (
            SELECT nx.id, nx.starts_at, nx.ends_at, nx.image FROM booking nx JOIN pool nxp ON nxp.id = nx.pool_id
            WHERE nx.user_id = b.user_id AND nx.pool_id = b.pool_id AND nx.kind = b.kind AND nx.mode = b.mode
              AND nx.image {image} b.image AND nx.id <> b.id AND nx.extends_id IS NULL AND nx.state = 'approved'
              AND NOT EXISTS (SELECT 1 FROM booking_co_owner co WHERE co.booking_id = nx.id)
              AND nx.starts_at >= b.ends_at
              AND nx.starts_at <= b.ends_at + make_interval(mins => nxp.granularity_minutes)
            ORDER BY nx.starts_at, nx.id LIMIT 1
        ) nx ON true"
    )
}

/// Whether booking `b` (with its pool `p`) is the successor of a session
/// running now: an SQL condition.
pub const TAKES_OVER: &str = "EXISTS (
    SELECT 1 FROM booking r
    WHERE r.user_id = b.user_id AND r.pool_id = b.pool_id AND r.kind = b.kind AND r.mode = b.mode
      AND r.image = b.image AND r.id <> b.id AND r.state = 'active'
      AND b.starts_at >= r.ends_at AND b.starts_at <= r.ends_at + make_interval(mins => p.granularity_minutes)
      AND NOT EXISTS (SELECT 1 FROM booking_co_owner co WHERE co.booking_id = b.id))";

/// The SQL expression of the session id of booking `b` (the chain's first booking).
pub const SESSION_ID: &str =
    "coalesce((SELECT c.session_id FROM session_continuation c WHERE c.booking_id = b.id), b.id)";

/// The successor of each of `ids` that has one: its id and window.
pub async fn successors(
    db: &PgPool,
    ids: &[Uuid],
) -> ServiceResult<HashMap<Uuid, (Uuid, DateTime<Utc>, DateTime<Utc>)>> {
    let query = format!(
        "SELECT b.id, nx.id, nx.starts_at, nx.ends_at FROM booking b {}
         WHERE b.id = ANY($1) AND nx.id IS NOT NULL AND b.state IN ('approved', 'active')",
        following(true)
    );
    let rows: Vec<(Uuid, Uuid, DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(&query).bind(ids).fetch_all(db).await?;
    Ok(rows.into_iter().map(|(id, next, start, end)| (id, (next, start, end))).collect())
}

/// Bookings among `ids` whose owner's next booking follows on at once on
/// the same pool, kind and mode but cannot take the session over, and why:
/// it asks for another workspace image (the workspace would restart).
pub async fn cannot_continue(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, String>> {
    let query = format!(
        "SELECT b.id, nx.image FROM booking b {}
         WHERE b.id = ANY($1) AND nx.id IS NOT NULL AND b.state IN ('approved', 'active')",
        following(false)
    );
    let rows: Vec<(Uuid, String)> = sqlx::query_as(&query).bind(ids).fetch_all(db).await?;
    Ok(rows
        .into_iter()
        .map(|(id, image)| {
            let why = format!(
                "Your next booking right after this one starts a session of its own: it asks for another \
                 workspace image ({image}), so this workspace ends with this window."
            );
            (id, why)
        })
        .collect())
}

/// Moves the session of `from`, whose window has ended, to its successor
/// `to`: same session id, same home. Returns false when `to` already
/// has a session of its own (a second call changes nothing).
pub async fn continue_into(db: &PgPool, from: Uuid, to: Uuid) -> ServiceResult<bool> {
    let mut tx = db.begin().await?;
    let inserted = sqlx::query(&format!(
        "INSERT INTO session_continuation (booking_id, session_id, follows)
         SELECT $2, {SESSION_ID}, b.id FROM booking b WHERE b.id = $1
         ON CONFLICT (booking_id) DO NOTHING"
    ))
    .bind(from)
    .bind(to)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if inserted {
        sqlx::query(
            "INSERT INTO session_home (booking_id, purpose, volume, size_gib, kept, team_class)
             SELECT $2, purpose, volume, size_gib, kept, team_class FROM session_home WHERE booking_id = $1
             ON CONFLICT (booking_id, purpose) DO NOTHING",
        )
        .bind(from)
        .bind(to)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(inserted)
}

/// Bookings whose window has ended but whose session continues into a
/// successor that has not ended (its namespace still names them until the
/// successor's session takes it over).
pub async fn continued(db: &PgPool) -> ServiceResult<Vec<Uuid>> {
    Ok(sqlx::query_scalar(
        "SELECT c.follows FROM session_continuation c JOIN booking n ON n.id = c.booking_id
         WHERE n.state IN ('approved', 'active') AND n.ends_at > now()",
    )
    .fetch_all(db)
    .await?)
}
