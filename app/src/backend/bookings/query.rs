use crate::backend::bookings::row::{BookingRow, BOOKING_COLUMNS, BOOKING_FROM};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::pools::{tenant_ids, VISIBLE_POOL};
use crate::model::{Booking, BookingFilter, Principal};
use crate::rules::window::check_in_range;
use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

/// Upper bound on one listing; a calendar asks for a week at a time.
const LIST_LIMIT: i64 = 5000;

/// `$3` (a user, still of the booking's tenant) shares the booking `b` with its owner.
const CO_OWNED: &str = "EXISTS (SELECT 1 FROM booking_co_owner c JOIN membership m ON m.user_id = c.user_id
                                AND m.tenant_id = b.tenant_id WHERE c.booking_id = b.id AND c.user_id = $3)";

/// The principal's own bookings, while they are in the booking's tenant: one
/// who has left it holds them no longer (as a co-owner who left, `CO_OWNED`).
const OWNED: &str = "(b.user_id = $3 AND b.tenant_id = ANY($2))";

/// Bookings in pools the principal may book (others' as occupancy only) plus
/// the principal's own and co-owned ones; admins see all.
pub async fn list(db: &PgPool, principal: &Principal, filter: &BookingFilter) -> ServiceResult<Vec<Booking>> {
    if let Some(from) = filter.from {
        check_in_range("from", from)?;
    }
    if let Some(to) = filter.to {
        check_in_range("to", to)?;
    }
    let sql = format!(
        "SELECT {BOOKING_COLUMNS} FROM {BOOKING_FROM}
         WHERE ({OWNED} OR {VISIBLE_POOL} OR {CO_OWNED})
           AND ($4::uuid IS NULL OR b.pool_id = $4)
           AND ($5::timestamptz IS NULL OR b.ends_at > $5)
           AND ($6::timestamptz IS NULL OR b.starts_at < $6)
           AND ($5::timestamptz IS NOT NULL OR $6::timestamptz IS NOT NULL OR b.ends_at > now())
           AND (NOT $7 OR {OWNED} OR {CO_OWNED})
         ORDER BY b.starts_at, b.id
         LIMIT {LIST_LIMIT}"
    );
    let rows: Vec<BookingRow> = sqlx::query_as(&sql)
        .bind(principal.is_admin())
        .bind(tenant_ids(principal))
        .bind(principal.user_id)
        .bind(filter.pool_id)
        .bind(filter.from)
        .bind(filter.to)
        .bind(filter.mine)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|r| r.view_for(principal)).collect())
}

pub(super) async fn fetch_row<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    for_update: bool,
) -> ServiceResult<Option<BookingRow>> {
    let lock = if for_update { "FOR UPDATE OF b" } else { "" };
    let sql = format!("SELECT {BOOKING_COLUMNS} FROM {BOOKING_FROM} WHERE b.id = $1 {lock}");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(db).await?)
}

/// One booking: in full for its owner, co-owners and admins, as occupancy
/// for the rest of its tenant, and "not found" for everyone else.
pub async fn get(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Booking> {
    match fetch_row(db, id, false).await? {
        // The caller named the id, so their view keeps it; lists carry occupancy ids.
        Some(row) if row.visible_to(principal) => Ok(Booking { id, ..row.view_for(principal) }),
        _ => Err(ServiceError::NotFound("booking")),
    }
}

/// The extension requests of booking `id`, oldest first, as `principal` may see them.
pub async fn extension_requests(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Vec<Booking>> {
    let sql =
        format!("SELECT {BOOKING_COLUMNS} FROM {BOOKING_FROM} WHERE b.extends_id = $1 ORDER BY b.created_at, b.id");
    let rows: Vec<BookingRow> = sqlx::query_as(&sql).bind(id).fetch_all(db).await?;
    Ok(rows.into_iter().filter(|r| r.visible_to(principal)).map(|r| r.view_for(principal)).collect())
}

/// Capacity-holding bookings overlapping `[from, to)` as occupancy only, for
/// views that show no one's personal data.
pub async fn occupancy(db: &PgPool, from: DateTime<Utc>, to: DateTime<Utc>) -> ServiceResult<Vec<Booking>> {
    let sql = format!(
        "SELECT {BOOKING_COLUMNS} FROM {BOOKING_FROM}
         WHERE b.state IN ('pending', 'approved', 'active') AND b.ends_at > $1 AND b.starts_at < $2
         ORDER BY b.starts_at, b.id
         LIMIT {LIST_LIMIT}"
    );
    let rows: Vec<BookingRow> = sqlx::query_as(&sql).bind(from).bind(to).fetch_all(db).await?;
    Ok(rows.into_iter().map(BookingRow::occupancy).collect())
}
