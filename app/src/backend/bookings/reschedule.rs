//! Moving or resizing a booking that has not begun (the calendar's drag):
//! the new window answers to what a new booking does — the pool's grid,
//! notice, horizon and longest booking, its maintenance windows, the kind's
//! capacity and the tenant's quota, both without the booking itself —
//! under the kind's lock, then one write and its audit event. A refusal
//! for capacity names the next free window of the new length, as a new
//! booking's does. A session already under way keeps its start: extending
//! or ending it early are its ways to change.

use crate::backend::admission::locks::{lock_kind, peak_of_others};
use crate::backend::admission::suggest::{Crowded, Wanted};
use crate::backend::bookings::lifecycle::{kind_terms, locked_row, KindTerms};
use crate::backend::bookings::query::fetch_row;
use crate::backend::bookings::row::{BookingRow, Need};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::waitlist::{after_freeing, Freed};
use crate::model::{Booking, BookingState, Principal, Window};
use crate::rules::capacity::Usage;
use crate::rules::window::{check_in_range, check_not_empty, validate_new};
use sqlx::PgPool;
use uuid::Uuid;

pub async fn reschedule(db: &PgPool, principal: &Principal, id: Uuid, window: Window) -> ServiceResult<Booking> {
    check_in_range("start", window.start)?;
    check_in_range("end", window.end)?;
    check_not_empty(window)?;
    let mut tx = db.begin().await?;
    // Pool and kind never change: read before the kind's lock, the row
    // locked (and re-read) after it, in the order admission takes them.
    let peek = fetch_row(&mut *tx, id, false).await?.ok_or(ServiceError::NotFound("booking"))?;
    peek.authorize(principal, Need::OwnerOrAdmin)?;
    lock_kind(&mut tx, peek.pool_id, &peek.kind).await?;
    let row = locked_row(&mut tx, principal, id, Need::OwnerOrAdmin).await?;
    movable(&row)?;
    crate::backend::bookings::extension::refuse_if_open(&mut tx, row.id).await?;
    let terms = kind_terms(&mut tx, &row).await?;
    terms.still_open()?;
    let KindTerms { rules, requires_approval, capacity, now, time_zone, .. } = terms;
    if row.starts_at <= now {
        return Err(conflict("a session under way keeps its start: extend it or end it early instead"));
    }
    if requires_approval && row.state() == BookingState::Approved && !principal.is_admin() {
        return Err(conflict(
            "this pool approves each window: cancel this booking and ask for the new one, or ask an admin to move it",
        ));
    }
    validate_new(&rules, capacity, now, window, row.quantity)?;
    let closed =
        crate::backend::pools::blackouts::windows::overlapping(&mut tx, row.pool_id, &row.kind, window).await?;
    if let Some(blackout) = closed.first() {
        return Err(crate::backend::pools::blackouts::windows::closed(blackout, &time_zone));
    }
    let peak_used = peak_of_others(&mut tx, (row.pool_id, &row.kind), row.id, window).await?;
    if peak_used + row.quantity > capacity {
        tx.rollback().await?;
        let wanted =
            Wanted { pool_id: row.pool_id, kind: &row.kind, quantity: row.quantity, window, except: Some(row.id) };
        return Err(Crowded { peak_used, capacity, rules, now }.refusal(db, wanted).await);
    }
    let units = Usage { start: window.start, end: window.end, quantity: row.quantity };
    crate::backend::admission::quota::check_added(
        &mut tx,
        row.tenant_id,
        (row.pool_id, &row.kind),
        units,
        Some(row.id),
    )
    .await?;
    sqlx::query("UPDATE booking SET starts_at = $2, ends_at = $3, updated_at = now() WHERE id = $1")
        .bind(row.id)
        .bind(window.start)
        .bind(window.end)
        .execute(&mut *tx)
        .await?;
    let why = format!("moved to {} – {}", window.start.to_rfc3339(), window.end.to_rfc3339());
    let state = row.state();
    crate::backend::bookings::events::record(&mut tx, row.id, Some(principal.user_id), Some(state), state, &why)
        .await?;
    tx.commit().await?;
    // The old window may have freed room someone waits for.
    after_freeing(db, Freed::Kind(row.pool_id, &row.kind)).await;
    Ok(BookingRow { starts_at: window.start, ends_at: window.end, ..row }.view_for(principal))
}

/// Only a booking that holds its window and is not an extension request moves.
fn movable(row: &BookingRow) -> ServiceResult<()> {
    let state = row.state();
    if !matches!(state, BookingState::Pending | BookingState::Approved) {
        return Err(conflict(&format!("a {} booking cannot be moved", state.as_str())));
    }
    if row.extends_id.is_some() {
        return Err(conflict("this is an extension request: withdraw it and ask for the longer one"));
    }
    Ok(())
}

fn conflict(reason: &str) -> ServiceError {
    ServiceError::Conflict { code: "not_movable", field: None, reason: reason.to_string() }
}
