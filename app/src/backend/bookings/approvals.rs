//! The admins' approval queue: pending bookings and extension requests,
//! oldest first, each with what else is booked of its kind then; and
//! deciding many at once, each through the same approve/reject path as one.

use crate::backend::admission::locks::live_usages;
use crate::backend::bookings;
use crate::backend::error::ServiceResult;
use crate::model::{Decision, PendingApproval, Principal, Window};
use crate::rules::capacity::{peak_usage, Usage};
use crate::rules::FieldError;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// What anyone but an admin is told here.
const ADMINS_ONLY: &str = "only admins decide on bookings";

/// How many bookings wait for a decision (0 for anyone but admins).
pub async fn count(db: &PgPool, principal: &Principal) -> ServiceResult<i64> {
    if !principal.is_admin() {
        return Ok(0);
    }
    Ok(sqlx::query_scalar("SELECT count(*) FROM booking WHERE state = 'pending' AND starts_at > now()")
        .fetch_one(db)
        .await?)
}

#[derive(sqlx::FromRow)]
struct PendingRow {
    id: Uuid,
    extends_id: Option<Uuid>,
    user_name: String,
    user_email: String,
    tenant: String,
    pool_id: Uuid,
    pool: String,
    kind: String,
    quantity: i32,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
    capacity: i32,
    note: String,
}

/// Most requests one page of the queue lists.
const QUEUE_LIMIT: i64 = 500;

/// Every pending booking and extension request, oldest request first.
pub async fn queue(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<PendingApproval>> {
    principal.require_admin(ADMINS_ONLY)?;
    let rows: Vec<PendingRow> = sqlx::query_as(
        "SELECT b.id, b.extends_id, u.name AS user_name, u.email AS user_email, t.slug AS tenant, b.pool_id,
                p.name AS pool, b.kind, b.quantity, b.starts_at, b.ends_at, b.created_at, k.capacity, b.note
         FROM booking b JOIN app_user u ON u.id = b.user_id JOIN tenant t ON t.id = b.tenant_id
              JOIN pool p ON p.id = b.pool_id JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         WHERE b.state = 'pending' AND b.starts_at > now()
         ORDER BY b.created_at, b.id LIMIT $1",
    )
    .bind(QUEUE_LIMIT)
    .fetch_all(db)
    .await?;
    let mut conn = db.acquire().await?;
    let mut queue = Vec::with_capacity(rows.len());
    for row in rows {
        let others: Vec<Usage> = live_usages(&mut conn, row.pool_id, &row.kind, row.starts_at, row.ends_at)
            .await?
            .into_iter()
            .filter(|(id, _)| *id != row.id)
            .map(|(_, usage)| usage)
            .collect();
        let window = Window { start: row.starts_at, end: row.ends_at };
        let peak_without = peak_usage(&others, window);
        queue.push(PendingApproval {
            id: row.id,
            extends: row.extends_id,
            user_name: row.user_name,
            user_email: row.user_email,
            tenant: row.tenant,
            pool: row.pool,
            kind: row.kind,
            quantity: row.quantity,
            start: row.starts_at,
            end: row.ends_at,
            requested_at: row.created_at,
            capacity: row.capacity,
            peak_without,
            peak_with: peak_without + row.quantity,
            note: row.note,
        });
    }
    Ok(queue)
}

/// Most bookings one decision may cover.
pub const MAX_BATCH: usize = 200;

/// Approves or rejects each of `shown` (a booking and the window the admin
/// was shown of it) with the same comment (required to reject: the
/// requester reads it). Each is decided on its own, so one that changed
/// meanwhile does not hold back the others; one moved since it was shown is
/// not approved.
pub async fn decide(
    db: &PgPool,
    principal: &Principal,
    shown: &[(Uuid, Window)],
    approve: bool,
    comment: &str,
) -> ServiceResult<Vec<Decision>> {
    principal.require_admin(ADMINS_ONLY)?;
    if shown.is_empty() || shown.len() > MAX_BATCH {
        return Err(FieldError::new("ids", format!("choose 1 to {MAX_BATCH} bookings")).into());
    }
    if !approve {
        super::lifecycle::rejection_comment(comment)?;
    }
    let mut decisions = Vec::with_capacity(shown.len());
    for &(id, window) in shown {
        let result = if approve {
            bookings::approve(db, principal, id, comment, Some(window)).await
        } else {
            bookings::reject(db, principal, id, comment).await
        };
        decisions.push(match result {
            Ok(_) => Decision { id, ok: true, message: if approve { "approved" } else { "rejected" }.into() },
            Err(err) if err.status() >= 500 => return Err(err),
            Err(err) => Decision { id, ok: false, message: err.public_message() },
        });
    }
    Ok(decisions)
}
