//! What a blackout closes, as admission, extensions and pool changes read
//! it: the blackouts over a window, and the refusal that names one. Making
//! and removing blackouts is the parent module's.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Blackout, Window};
use sqlx::PgConnection;
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

/// The refusal of a request that overlaps a blackout.
pub fn closed(blackout: &Blackout) -> ServiceError {
    ServiceError::Conflict {
        code: "blackout",
        field: None,
        reason: format!(
            "the pool is closed for maintenance from {} to {}: {}",
            blackout.start.format("%a %d %b %H:%M UTC"),
            blackout.end.format("%a %d %b %H:%M UTC"),
            blackout.reason
        ),
    }
}
