//! The primitives every capacity decision is made with: the per-pool+kind
//! lock, and the capacity-holding bookings that overlap a window.

use crate::backend::error::ServiceResult;
use crate::rules::capacity::Usage;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use uuid::Uuid;

/// The advisory-lock key of one pool+kind: the first 8 bytes of SHA-256 over
/// both, the same in every process and version. A collision only serialises
/// two kinds that need not be.
pub fn lock_key(pool_id: Uuid, kind: &str) -> i64 {
    let digest = Sha256::new().chain_update(pool_id.as_bytes()).chain_update(kind.as_bytes()).finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// Serialises capacity decisions for one pool+kind until the transaction
/// ends. Transaction-scoped on purpose: a session-level lock would stay with
/// the pooled connection after an error.
pub async fn lock_kind(conn: &mut PgConnection, pool_id: Uuid, kind: &str) -> ServiceResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(lock_key(pool_id, kind)).execute(conn).await?;
    Ok(())
}

/// Opens a transaction already holding the pool+kind lock, in one round trip.
pub async fn begin_locked(db: &PgPool, pool_id: Uuid, kind: &str) -> ServiceResult<Transaction<'static, Postgres>> {
    begin_locked_all(db, &[(pool_id, kind)]).await
}

/// Opens a transaction holding the locks of every pool+kind given, in one
/// round trip. They are taken in (pool, kind name) order, the order every
/// other path that holds several takes them in (pool updates, blackouts),
/// so no two transactions can wait for each other. The keys are integer
/// literals: nothing user-supplied reaches the SQL.
pub async fn begin_locked_all(db: &PgPool, kinds: &[(Uuid, &str)]) -> ServiceResult<Transaction<'static, Postgres>> {
    let mut ordered = kinds.to_vec();
    ordered.sort_unstable();
    ordered.dedup();
    let mut statement = String::from("BEGIN");
    for (pool_id, kind) in ordered {
        statement.push_str(&format!("; SELECT pg_advisory_xact_lock({})", lock_key(pool_id, kind)));
    }
    Ok(db.begin_with(statement).await?)
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
           AND tstzrange(starts_at, ends_at) && tstzrange($3, $4)",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(from)
    .bind(to)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|(id, start, end, quantity)| (id, Usage { start, end, quantity })).collect())
}

/// The most units the kind's bookings other than `booking` hold at once in
/// `window` (a booking growing or moving is not its own neighbour); the
/// caller holds the kind's lock.
pub async fn peak_of_others(
    conn: &mut PgConnection,
    (pool_id, kind): (Uuid, &str),
    booking: Uuid,
    window: crate::model::Window,
) -> ServiceResult<i32> {
    let others: Vec<Usage> = live_usages(conn, pool_id, kind, window.start, window.end)
        .await?
        .into_iter()
        .filter(|(other, _)| *other != booking)
        .map(|(_, u)| u)
        .collect();
    Ok(crate::rules::capacity::peak_usage(&others, window))
}
