//! The one writer of a booking's state. Every change — a user's cancel or
//! early end, an admin's approval or rejection, the worker's activate,
//! complete and fail, a request that expired unapproved, idle reclaim, a
//! blackout, a disabled user, a canceled series — goes through `change`:
//! the state machine decides, the row and its window are written, the audit
//! event is recorded (its trigger queues the notifications), and a booking
//! that stops holding capacity takes its open extension request with it.
//! What the change freed is offered to the waitlist once the caller's
//! transaction has committed (`Changed::settle`): before, the waitlist
//! could not see the room.

use crate::backend::bookings::events;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::waitlist::{after_freeing, Freed};
use crate::model::BookingState;
use crate::rules::state_machine::{transition, Action};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use std::collections::BTreeSet;
use uuid::Uuid;

/// Where the changed booking's window ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum End {
    Keep,
    /// The database's "now" (the transaction's start).
    Now,
    At(DateTime<Utc>),
}

/// One change of a booking's state, as its caller asks for it.
#[derive(Clone, Copy, Debug)]
pub struct Change<'a> {
    pub action: Action,
    /// Who changes it; `None` is the system (the worker, expiry, reclaim).
    pub actor: Option<Uuid>,
    /// Why, as the audit trail and the owner's notification say it.
    pub reason: &'a str,
    pub end: End,
    /// A window cut short keeps its booked end and says why it was let go
    /// (`ended_early`, `idle`, `no_show`), for the reports' returned hours.
    pub released_as: Option<&'a str>,
}

impl<'a> Change<'a> {
    /// `action` by `actor`, for `reason`, keeping the window.
    pub fn new(action: Action, actor: Option<Uuid>, reason: &'a str) -> Self {
        Change { action, actor, reason, end: End::Keep, released_as: None }
    }

    /// The same, with the window ending at `end`.
    pub fn ending(self, end: End, released_as: Option<&'a str>) -> Self {
        Change { end, released_as, ..self }
    }
}

/// What a change did. Once the caller's transaction has committed,
/// `settle` offers what it freed to the waitlist.
#[must_use = "after commit, `settle` offers the freed capacity to the waitlist"]
#[derive(Debug)]
pub struct Changed {
    pub from: BookingState,
    pub to: BookingState,
    pub ends_at: DateTime<Utc>,
    /// The pool and kind whose capacity the change gave back, if any.
    freed: Option<(Uuid, String)>,
}

/// The booking as `change` locks it, with the database's "now".
#[derive(sqlx::FromRow)]
struct Locked {
    state: BookingState,
    pool_id: Uuid,
    kind: String,
    ends_at: DateTime<Utc>,
    now: DateTime<Utc>,
}

/// Why an open extension request is withdrawn with its booking.
pub const EXTENDED_NO_LONGER_RUNS: &str = "the booking it extends no longer runs";

/// Changes booking `id` inside the caller's transaction: locks the row,
/// asks the state machine, writes the state and the window, records the
/// audit event, and withdraws the booking's open extension request when it
/// stops holding capacity.
pub async fn change(conn: &mut PgConnection, id: Uuid, change: Change<'_>) -> ServiceResult<Changed> {
    let row: Option<Locked> =
        sqlx::query_as("SELECT state, pool_id, kind, ends_at, now() AS now FROM booking WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    let Locked { state: from, pool_id, kind, ends_at, now } = row.ok_or(ServiceError::NotFound("booking"))?;
    let to = transition(from, change.action)?;
    let new_end = match change.end {
        End::Keep => None,
        End::Now => Some(now),
        End::At(at) => Some(at),
    };
    write(conn, id, to, new_end, change.released_as).await?;
    events::record(conn, id, change.actor, Some(from), to, change.reason).await?;
    if !to.holds_capacity() {
        let open: Vec<Uuid> =
            sqlx::query_scalar("SELECT id FROM booking WHERE extends_id = $1 AND state = 'pending' FOR UPDATE")
                .bind(id)
                .fetch_all(&mut *conn)
                .await?;
        let withdrawn = transition(BookingState::Pending, Action::Cancel)?;
        for request in open {
            write(conn, request, withdrawn, None, None).await?;
            events::record(
                conn,
                request,
                change.actor,
                Some(BookingState::Pending),
                withdrawn,
                EXTENDED_NO_LONGER_RUNS,
            )
            .await?;
        }
    }
    // What was held from now to the booked end is free: nothing, for a
    // window that ended by itself.
    let freed = (from.holds_capacity() && !to.holds_capacity() && ends_at > now).then_some((pool_id, kind));
    Ok(Changed { from, to, ends_at: new_end.unwrap_or(ends_at), freed })
}

/// Closes booking `id` for good (a blackout over it, its user disabled):
/// one that has not started is canceled, a running one ends now. `None`
/// when there is no such booking.
pub async fn close(
    conn: &mut PgConnection,
    id: Uuid,
    actor: Option<Uuid>,
    reason: &str,
) -> ServiceResult<Option<Changed>> {
    let row: Option<(String, DateTime<Utc>, DateTime<Utc>)> =
        sqlx::query_as("SELECT state, starts_at, now() FROM booking WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((state, starts_at, now)) = row else { return Ok(None) };
    let running = state != BookingState::Pending.as_str() && starts_at < now;
    let closed = match running {
        true => Change::new(Action::Complete, actor, reason).ending(End::Now, None),
        false => Change::new(Action::Cancel, actor, reason),
    };
    change(conn, id, closed).await.map(Some)
}

/// The statement that writes `booking.state` (and nothing else does).
async fn write(
    conn: &mut PgConnection,
    id: Uuid,
    to: BookingState,
    new_end: Option<DateTime<Utc>>,
    released_as: Option<&str>,
) -> ServiceResult<()> {
    sqlx::query(
        "UPDATE booking SET state = $2, ends_at = coalesce($3, ends_at), updated_at = now(),
                planned_ends_at = CASE WHEN $4::text IS NOT NULL AND $3 < ends_at
                                       THEN coalesce(planned_ends_at, ends_at) ELSE planned_ends_at END,
                released_as = CASE WHEN $4::text IS NOT NULL AND $3 < ends_at THEN $4 ELSE released_as END
         WHERE id = $1",
    )
    .bind(id)
    .bind(to.as_str())
    .bind(new_end)
    .bind(released_as)
    .execute(conn)
    .await?;
    Ok(())
}

impl Changed {
    /// Whether the change gave capacity back.
    pub fn freed(&self) -> bool {
        self.freed.is_some()
    }

    /// After commit: the waitlist of the freed kind is served.
    pub async fn settle(self, db: &PgPool) {
        settle(db, [self]).await
    }
}

/// After commit: the waitlist of every kind the changes freed is served, once each.
pub async fn settle(db: &PgPool, changes: impl IntoIterator<Item = Changed>) {
    let freed: BTreeSet<(Uuid, String)> = changes.into_iter().filter_map(|c| c.freed).collect();
    for (pool, kind) in &freed {
        after_freeing(db, Freed::Kind(*pool, kind)).await;
    }
}
