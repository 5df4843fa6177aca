//! The worker's moves of a booking, as the system: activate, complete, fail,
//! reject what opened unapproved; and the check a repair makes before it
//! writes.

use super::due::on_cluster;
use crate::backend::bookings::change::{change, settle, Change};
use crate::backend::error::ServiceResult;
use crate::rules::state_machine::Action;
use sqlx::PgPool;
use uuid::Uuid;

/// The worker moves a booking (activate, complete, fail) as the system: the
/// state machine decides, and the audit event has no actor.
pub async fn system_transition(
    db: &PgPool,
    id: Uuid,
    action: crate::rules::state_machine::Action,
    reason: &str,
) -> ServiceResult<crate::model::BookingState> {
    let mut tx = db.begin().await?;
    let changed = change(&mut tx, id, Change::new(action, None, reason)).await?;
    tx.commit().await?;
    let to = changed.to;
    changed.settle(db).await;
    Ok(to)
}

/// Why the worker rejects a pending booking whose window opened unapproved.
pub const NOT_APPROVED_IN_TIME: &str = "not approved before its window started";

/// Rejects every pending booking (or extension request) of `cluster`'s
/// pools whose window has opened, as the system, with its audit event;
/// returns how many. A pass that finds none costs one query.
pub async fn reject_unapproved(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<u64> {
    let expired: Vec<Uuid> = sqlx::query_scalar(&format!(
        "SELECT id FROM booking WHERE state = 'pending' AND starts_at <= now() AND {}",
        on_cluster()
    ))
    .bind(cluster)
    .fetch_all(db)
    .await?;
    if expired.is_empty() {
        return Ok(0);
    }
    let mut tx = db.begin().await?;
    // Still pending once locked (an admin may have decided meanwhile).
    let locked: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM booking WHERE id = ANY($1) AND state = 'pending' AND starts_at <= now()
         ORDER BY id FOR UPDATE SKIP LOCKED",
    )
    .bind(&expired)
    .fetch_all(&mut *tx)
    .await?;
    let mut changes = Vec::with_capacity(locked.len());
    for id in locked {
        changes.push(change(&mut tx, id, Change::new(Action::Reject, None, NOT_APPROVED_IN_TIME)).await?);
    }
    tx.commit().await?;
    let rejected = changes.len() as u64;
    settle(db, changes).await;
    Ok(rejected)
}

/// Whether the booking is still active inside its window, checked by a
/// repair right before it writes.
pub async fn still_active(db: &PgPool, booking_id: Uuid) -> ServiceResult<bool> {
    Ok(sqlx::query_scalar("SELECT state = 'active' AND now() < ends_at FROM booking WHERE id = $1")
        .bind(booking_id)
        .fetch_optional(db)
        .await?
        .unwrap_or(false))
}
