//! Extension requests in pools that require approval. A request is a pending
//! booking right after the one it extends (`extends_id`): it holds the extra
//! time's capacity through every capacity reader, unchanged, until an admin
//! decides. Approving merges it into the booking it extends; rejecting
//! (with the comment the owner reads on the card) or withdrawing frees it;
//! so does the extended booking ending or being canceled.

use crate::backend::bookings::events;
use crate::backend::bookings::query::fetch_row;
use crate::backend::bookings::row::BookingRow;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, BookingState, Principal};
use crate::rules::state_machine::{transition, Action};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use std::collections::HashMap;
use uuid::Uuid;

/// Records the request for `[row.ends_at, new_end)`; the caller holds the
/// kind's lock and has checked that the extra time fits.
pub(super) async fn request(
    mut tx: Transaction<'_, Postgres>,
    principal: &Principal,
    row: &BookingRow,
    new_end: DateTime<Utc>,
) -> ServiceResult<Booking> {
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at,
                              state, extends_id)
         SELECT pool_id, kind, user_id, tenant_id, quantity, mode, image, note, ends_at, $2, 'pending', id
         FROM booking WHERE id = $1
         RETURNING id",
    )
    .bind(row.id)
    .bind(new_end)
    .fetch_one(&mut *tx)
    .await?;
    // Whoever shares the booking shares the request: they see it waiting.
    sqlx::query(
        "INSERT INTO booking_co_owner (booking_id, user_id, added_by, added_at)
         SELECT $2, user_id, added_by, added_at FROM booking_co_owner WHERE booking_id = $1",
    )
    .bind(row.id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    let why = format!("extension of {} to {} requested", row.id, new_end.to_rfc3339());
    events::record(&mut tx, id, Some(principal.user_id), None, BookingState::Pending, &why).await?;
    // The extended booking's own trail keeps who asked (the request row goes once granted).
    let (state, asked) = (row.state(), format!("extension to {} requested", new_end.to_rfc3339()));
    events::record(&mut tx, row.id, Some(principal.user_id), Some(state), state, &asked).await?;
    let hold = fetch_row(&mut *tx, id, false).await?.ok_or(ServiceError::Internal("extension request vanished"))?;
    tx.commit().await?;
    Ok(hold.view_for(principal))
}

/// An admin approves request `hold` (already authorized): under the kind's
/// lock, the booking it extends takes its end and the request row goes.
pub(super) async fn grant(
    db: &PgPool,
    principal: &Principal,
    hold: BookingRow,
    extended: Uuid,
    comment: &str,
) -> ServiceResult<Booking> {
    let mut tx = db.begin().await?;
    crate::backend::admission::locks::lock_kind(&mut tx, hold.pool_id, &hold.kind).await?;
    let hold = fetch_row(&mut *tx, hold.id, true).await?.ok_or(ServiceError::NotFound("booking"))?;
    transition(hold.state(), Action::Approve)?;
    let original = fetch_row(&mut *tx, extended, true).await?.ok_or(ServiceError::NotFound("booking"))?;
    let now = crate::backend::db_now(&mut *tx).await?;
    if !original.state().holds_capacity() || original.ends_at != hold.starts_at || original.ends_at <= now {
        return Err(ServiceError::Conflict {
            code: "extension_void",
            field: None,
            reason: "the booking this request extends has ended or changed; reject the request".into(),
        });
    }
    // Capacity: the request's units over [old end, new end) become the
    // booking's own in the same transaction, so the peak never moves.
    sqlx::query("DELETE FROM booking_event WHERE booking_id = $1").bind(hold.id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM booking WHERE id = $1").bind(hold.id).execute(&mut *tx).await?;
    sqlx::query("UPDATE booking SET ends_at = $2, updated_at = now() WHERE id = $1")
        .bind(original.id)
        .bind(hold.ends_at)
        .execute(&mut *tx)
        .await?;
    let state = original.state();
    let mut why = format!("extension to {} approved", hold.ends_at.to_rfc3339());
    if !comment.trim().is_empty() {
        why = format!("{why}: {}", comment.trim());
    }
    events::record(&mut tx, original.id, Some(principal.user_id), Some(state), state, &why).await?;
    tx.commit().await?;
    Ok(BookingRow { ends_at: hold.ends_at, ..original }.view_for(principal))
}

/// Refuses to change a booking's end while a request to extend it is open
/// (the request holds the time right after it).
pub(super) async fn refuse_if_open(conn: &mut PgConnection, booking: Uuid) -> ServiceResult<()> {
    let open: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM booking WHERE extends_id = $1 AND state = 'pending')")
            .bind(booking)
            .fetch_one(conn)
            .await?;
    if open {
        return Err(ServiceError::Conflict {
            code: "extension_pending",
            field: Some("end".into()),
            reason: "an extension of this booking already awaits an admin's decision".into(),
        });
    }
    Ok(())
}

/// The last word on each request: why it was rejected (the admin's comment).
pub async fn decisions(db: &PgPool, requests: &[Uuid]) -> ServiceResult<HashMap<Uuid, String>> {
    events::last_reasons(db, requests, BookingState::Rejected).await
}
