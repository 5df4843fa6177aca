//! Cancel, approve, reject, end early and extend. Each locks the booking row,
//! checks who may act, and has `change` write the new state and its audit
//! event in one transaction.

use crate::backend::admission::locks::{lock_kind, peak_of_others};
use crate::backend::bookings::change::{change, Change, End};
use crate::backend::bookings::query::fetch_row;
use crate::backend::bookings::row::{BookingRow, Need};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, PoolRules, Principal, Window};
use crate::rules::capacity::Usage;
use crate::rules::state_machine::{transition, Action};
use crate::rules::window::{check_in_range, validate_extension};
use chrono::{DateTime, Utc};
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

pub(super) async fn locked_row(
    tx: &mut Transaction<'_, Postgres>,
    principal: &Principal,
    id: Uuid,
    need: Need,
) -> ServiceResult<BookingRow> {
    let row = fetch_row(&mut **tx, id, true).await?.ok_or(ServiceError::NotFound("booking"))?;
    row.authorize(principal, need)?;
    Ok(row)
}

/// The principal's action on one booking they may act on, through the one
/// writer (`change`), and the freed capacity offered to the waitlist.
async fn change_as(
    db: &sqlx::PgPool,
    principal: &Principal,
    id: Uuid,
    need: Need,
    action: Action,
    reason: &str,
) -> ServiceResult<Booking> {
    let mut tx = db.begin().await?;
    let row = locked_row(&mut tx, principal, id, need).await?;
    let changed = change(&mut tx, id, Change::new(action, Some(principal.user_id), reason)).await?;
    tx.commit().await?;
    let booking = BookingRow { state: changed.to, ..row }.view_for(principal);
    changed.settle(db).await;
    Ok(booking)
}

/// Withdraws a booking that has not become active; its capacity is free at once.
pub async fn cancel(db: &sqlx::PgPool, principal: &Principal, id: Uuid, reason: &str) -> ServiceResult<Booking> {
    change_as(db, principal, id, Need::OwnerOrAdmin, Action::Cancel, reason).await
}

/// Approves a pending booking; for an extension request, grants the
/// extension. `shown`: the window the admin was shown (the approvals page
/// always sends it): when the booking has moved since, nothing is approved
/// and the answer says where it is now, so no one approves a window they
/// never saw.
pub async fn approve(
    db: &sqlx::PgPool,
    principal: &Principal,
    id: Uuid,
    comment: &str,
    shown: Option<Window>,
) -> ServiceResult<Booking> {
    let peek = fetch_row(db, id, false).await?.ok_or(ServiceError::NotFound("booking"))?;
    peek.authorize(principal, Need::Admin)?;
    match peek.extends_id {
        // An extension request never moves (`reschedule` refuses it).
        Some(extended) => {
            still_shown(&peek, shown)?;
            crate::backend::bookings::extension::grant(db, principal, peek, extended, comment).await
        }
        None => {
            let mut tx = db.begin().await?;
            let row = locked_row(&mut tx, principal, id, Need::Admin).await?;
            still_shown(&row, shown)?;
            let changed = change(&mut tx, id, Change::new(Action::Approve, Some(principal.user_id), comment)).await?;
            tx.commit().await?;
            let booking = BookingRow { state: changed.to, ..row }.view_for(principal);
            changed.settle(db).await;
            Ok(booking)
        }
    }
}

/// Refuses a decision on a booking whose window is no longer the one shown.
fn still_shown(row: &BookingRow, shown: Option<Window>) -> ServiceResult<()> {
    match shown {
        Some(shown) if shown.start != row.starts_at || shown.end != row.ends_at => Err(ServiceError::Conflict {
            code: "moved_since_shown",
            field: None,
            reason: format!(
                "it was moved after it was shown: it now asks for {} to {}; look at it again before deciding",
                row.starts_at.to_rfc3339(),
                row.ends_at.to_rfc3339()
            ),
        }),
        _ => Ok(()),
    }
}

/// Rejects a pending booking or extension request; the comment, which the
/// requester reads on the booking's card, is required.
pub async fn reject(db: &sqlx::PgPool, principal: &Principal, id: Uuid, comment: &str) -> ServiceResult<Booking> {
    // Who may reject is answered before what they sent.
    fetch_row(db, id, false).await?.ok_or(ServiceError::NotFound("booking"))?.authorize(principal, Need::Admin)?;
    rejection_comment(comment)?;
    change_as(db, principal, id, Need::Admin, Action::Reject, comment).await
}

/// A rejection's comment, which the requester reads: required, and at
/// most a note's length. Checked once for a batch (`approvals::decide`),
/// so the admin reads it once, beside the comment.
pub(crate) fn rejection_comment(comment: &str) -> Result<(), crate::rules::FieldError> {
    if comment.trim().is_empty() {
        return Err(crate::rules::FieldError::new("comment", "must say why: the requester reads it"));
    }
    if comment.chars().count() > crate::model::NOTE_LIMIT {
        let limit = crate::model::NOTE_LIMIT;
        return Err(crate::rules::FieldError::new("comment", format!("must be at most {limit} characters")));
    }
    Ok(())
}

/// Ends a running booking now: its window is cut at the database's "now" and
/// the capacity after that is free again.
pub async fn end_early(db: &sqlx::PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Booking> {
    let mut tx = db.begin().await?;
    let row = locked_row(&mut tx, principal, id, Need::OwnerOrAdmin).await?;
    transition(row.state(), Action::Complete)?;
    let now = crate::backend::db_now(&mut *tx).await?;
    if now <= row.starts_at {
        return Err(ServiceError::Conflict {
            code: "not_started",
            field: None,
            reason: "the window has not started yet; cancel the booking instead".into(),
        });
    }
    if now >= row.ends_at {
        return Err(ServiceError::Conflict {
            code: "already_ended",
            field: None,
            reason: "the window has already ended".into(),
        });
    }
    let early = Change::new(Action::Complete, Some(principal.user_id), "ended early");
    let changed = change(&mut tx, id, early.ending(End::At(now), Some("ended_early"))).await?;
    tx.commit().await?;
    let booking = BookingRow { state: changed.to, ends_at: changed.ends_at, ..row }.view_for(principal);
    changed.settle(db).await;
    Ok(booking)
}

/// What changing a booking's window answers to: its pool's rules and
/// approval, its kind's capacity, the database's now and the pool's zone,
/// and whether the pool still takes windows of the booking's tenant.
#[derive(sqlx::FromRow)]
pub(super) struct KindTerms {
    #[sqlx(flatten)]
    pub rules: PoolRules,
    pub requires_approval: bool,
    pub capacity: i32,
    pub now: DateTime<Utc>,
    pub time_zone: String,
    retired: bool,
    may_book: bool,
}

impl KindTerms {
    /// A new window (a move, a longer one) answers to what a new booking
    /// does first: a retired pool takes none, and a pool takes only the
    /// tenants it lists (admission's own refusals).
    pub(super) fn still_open(&self) -> ServiceResult<()> {
        if self.retired {
            return Err(crate::backend::admission::admit::retired_pool().into());
        }
        if !self.may_book {
            return Err(crate::backend::admission::admit::no_such_pool_field().into());
        }
        Ok(())
    }
}

pub(super) async fn kind_terms(tx: &mut Transaction<'_, Postgres>, row: &BookingRow) -> ServiceResult<KindTerms> {
    Ok(sqlx::query_as(
        "SELECT p.granularity_minutes, p.max_booking_minutes, p.horizon_days, p.min_notice_minutes,
                p.requires_approval, k.capacity, now() AS now, p.time_zone, p.retired_at IS NOT NULL AS retired,
                (NOT EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id)
                 OR EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id AND pt.tenant_id = $3)) AS may_book
         FROM pool p JOIN pool_kind k ON k.pool_id = p.id AND k.kind = $2 WHERE p.id = $1",
    )
    .bind(row.pool_id)
    .bind(&row.kind)
    .bind(row.tenant_id)
    .fetch_one(&mut **tx)
    .await?)
}

/// Moves the end later if the extra time fits under the same capacity rule;
/// in a pool that requires approval (unless an admin asks), records a request
/// holding the extra time instead, and returns that request.
pub async fn extend(
    db: &sqlx::PgPool,
    principal: &Principal,
    id: Uuid,
    new_end: DateTime<Utc>,
) -> ServiceResult<Booking> {
    check_in_range("end", new_end)?;
    let mut tx = db.begin().await?;
    // Pool and kind never change, so reading them before taking the kind lock is
    // safe; the row itself is locked (and re-read) after it, in the same order
    // admission takes its locks.
    let peek = fetch_row(&mut *tx, id, false).await?.ok_or(ServiceError::NotFound("booking"))?;
    peek.authorize(principal, Need::OwnerOrAdmin)?;
    lock_kind(&mut tx, peek.pool_id, &peek.kind).await?;
    let row = locked_row(&mut tx, principal, id, Need::OwnerOrAdmin).await?;
    let state = row.state();
    if !state.holds_capacity() {
        return Err(ServiceError::Conflict {
            code: "not_extendable",
            field: None,
            reason: format!("a {} booking cannot be extended", state.as_str()),
        });
    }
    if row.extends_id.is_some() {
        return Err(ServiceError::Conflict {
            code: "not_extendable",
            field: None,
            reason: "this is an extension request: withdraw it and ask for the longer one".into(),
        });
    }
    crate::backend::bookings::extension::refuse_if_open(&mut tx, row.id).await?;
    let terms = kind_terms(&mut tx, &row).await?;
    terms.still_open()?;
    let KindTerms { rules, requires_approval, capacity, now, time_zone, .. } = terms;
    let current = Window { start: row.starts_at, end: row.ends_at };
    validate_extension(&rules, now, current, new_end)?;
    let added = Window { start: current.end, end: new_end };
    if let Some(blackout) =
        crate::backend::pools::blackouts::windows::overlapping(&mut tx, row.pool_id, &row.kind, added).await?.first()
    {
        return Err(crate::backend::pools::blackouts::windows::closed(blackout, &time_zone));
    }
    let peak_used = peak_of_others(&mut tx, (row.pool_id, &row.kind), row.id, added).await?;
    if peak_used + row.quantity > capacity {
        return Err(ServiceError::CapacityExceeded { peak_used, capacity, next_free: None });
    }
    let added_units = Usage { start: added.start, end: added.end, quantity: row.quantity };
    crate::backend::admission::quota::check_added(&mut tx, row.tenant_id, (row.pool_id, &row.kind), added_units, None)
        .await?;
    if requires_approval && !principal.is_admin() {
        return crate::backend::bookings::extension::request(tx, principal, &row, new_end).await;
    }
    sqlx::query("UPDATE booking SET ends_at = $2, updated_at = now() WHERE id = $1")
        .bind(row.id)
        .bind(new_end)
        .execute(&mut *tx)
        .await?;
    let why = format!("extended to {}", new_end.to_rfc3339());
    crate::backend::bookings::events::record(&mut tx, row.id, Some(principal.user_id), Some(state), state, &why)
        .await?;
    tx.commit().await?;
    Ok(BookingRow { ends_at: new_end, ..row }.view_for(principal))
}
