//! What a blackout closes, as admission, extensions and pool changes read
//! it: the blackouts over a window, and the refusal that names one. Making
//! and removing blackouts is the parent module's.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Blackout, Window};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

pub(super) const COLUMNS: &str = "id, pool_id, kind, starts_at AS start, ends_at AS \"end\", reason";

/// Blackouts of `pool_id` that apply to `kind` and overlap `window`.
pub async fn overlapping(
    conn: &mut PgConnection,
    pool_id: Uuid,
    kind: &str,
    window: Window,
) -> ServiceResult<Vec<Blackout>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM blackout
         WHERE pool_id = $1 AND (kind IS NULL OR kind = $2) AND starts_at < $4 AND ends_at > $3
         ORDER BY starts_at"
    ))
    .bind(pool_id)
    .bind(kind)
    .bind(window.start)
    .bind(window.end)
    .fetch_all(conn)
    .await?)
}

/// For each of `ids` that maintenance overlaps, what its card says: "Maintenance
/// on this pool Fri 27 Nov 10:00–12:00 (rack move) overlaps this booking. …",
/// in `tz` (the reader's zone).
pub async fn notes(db: &sqlx::PgPool, ids: &[Uuid], tz: &str) -> ServiceResult<HashMap<Uuid, String>> {
    let rows: Vec<(Uuid, DateTime<Utc>, DateTime<Utc>, String)> = sqlx::query_as(
        "SELECT b.id, bl.starts_at, bl.ends_at, bl.reason FROM booking b
         JOIN blackout bl ON bl.pool_id = b.pool_id AND (bl.kind IS NULL OR bl.kind = b.kind)
                         AND bl.starts_at < b.ends_at AND bl.ends_at > b.starts_at
         WHERE b.id = ANY($1) ORDER BY b.id, bl.starts_at",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    let mut notes = HashMap::new();
    for (id, start, end, reason) in rows {
        // The first maintenance of a booking; a second is rare and on the pool's page.
        notes.entry(id).or_insert_with(|| kept_inside(Window { start, end }, &reason, tz));
    }
    Ok(notes)
}

/// What the owner of a booking kept inside maintenance is told, on its card
/// and (by `booking.maintenance`) in a mail.
pub fn kept_inside(maintenance: Window, reason: &str, tz: &str) -> String {
    format!(
        "Maintenance on this pool {} ({reason}) overlaps this booking. It is kept, but the pool may be \
         unavailable then: save your work before it starts, or move the booking.",
        crate::rules::local_time::local_window(maintenance, tz)
    )
}

/// The refusal of a request that overlaps a blackout, its window in the
/// pool's zone `tz` (named).
pub fn closed(blackout: &Blackout, tz: &str) -> ServiceError {
    let when = crate::rules::local_time::local_window(Window { start: blackout.start, end: blackout.end }, tz);
    let zone = crate::rules::local_time::zone(tz);
    ServiceError::Conflict {
        code: "blackout",
        field: None,
        reason: format!("the pool is closed for maintenance {when} ({}): {}", zone.name(), blackout.reason),
    }
}
