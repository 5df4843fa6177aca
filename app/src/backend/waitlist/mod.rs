//! The waitlist. A request refused for capacity or quota may wait for exactly
//! its window: it is stored in the same admission transaction that refused it
//! (so no capacity can free unseen in between). When capacity frees, the
//! kind's waiting entries go through the one admission path again, under the
//! kind's lock and in the order they joined: the earliest that fits is
//! admitted first (FIFO among those that fit), each becoming a booking whose
//! first event says it came from the waitlist. An entry whose window starts
//! before it fits expires.

pub mod entries;

pub use entries::{for_admins, leave, list, mine, MAX_WAITING_PER_USER};

use crate::backend::admission::admit::{admit_locked, Admission, Outcome};
use crate::backend::admission::locks::begin_locked;
use crate::backend::admission::request::Request;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Mode, Principal, Role, TenantRef, WaitlistState, Window};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// A waiting entry as the request it stands for, with its requester as they are now.
#[derive(sqlx::FromRow)]
struct WaitingEntry {
    id: Uuid,
    user_id: Uuid,
    email: String,
    name: String,
    role: Role,
    tenant_id: Uuid,
    slug: String,
    quantity: i32,
    mode: Mode,
    image: Option<String>,
    note: String,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    /// Still a member of the tenant and not disabled.
    eligible: bool,
}

impl WaitingEntry {
    fn request(&self, pool_id: Uuid, kind: &str) -> Request {
        let tenant = TenantRef { id: self.tenant_id, slug: self.slug.clone() };
        Request {
            principal: Principal {
                user_id: self.user_id,
                email: self.email.clone(),
                name: self.name.clone(),
                role: self.role,
                tenants: vec![tenant.clone()],
            },
            tenant,
            pool_id,
            kind: kind.to_string(),
            quantity: self.quantity,
            mode: self.mode,
            image: self.image.clone(),
            note: self.note.clone(),
            window: Window { start: self.starts_at, end: self.ends_at },
            join_waitlist: false,
            entry: Some(self.id),
            // Admitted by Berth when room freed, not by a request.
            provenance: Default::default(),
        }
    }
}

/// Refusals that leave an entry waiting: the room may still come.
fn keeps_waiting(err: &ServiceError) -> bool {
    matches!(err, ServiceError::CapacityExceeded { .. } | ServiceError::QuotaExceeded(_))
        || matches!(err, ServiceError::Conflict { code: "blackout", .. })
}

/// Admits the kind's waiting entries that now fit, earliest first, and
/// expires or closes those that never can. Returns the bookings made.
pub async fn promote(db: &PgPool, pool_id: Uuid, kind: &str) -> ServiceResult<Vec<Uuid>> {
    let mut tx = begin_locked(db, pool_id, kind).await?;
    let entries: Vec<WaitingEntry> = sqlx::query_as(
        "SELECT e.id, e.user_id, u.email, u.name, u.role, e.tenant_id, t.slug, e.quantity, e.mode, e.image, e.note,
                e.starts_at, e.ends_at,
                u.disabled_at IS NULL
                  AND EXISTS (SELECT 1 FROM membership m WHERE m.user_id = e.user_id AND m.tenant_id = e.tenant_id)
                  AS eligible
         FROM waitlist_entry e JOIN app_user u ON u.id = e.user_id JOIN tenant t ON t.id = e.tenant_id
         WHERE e.pool_id = $1 AND e.kind = $2 AND e.state = 'waiting'
         ORDER BY e.seq
         FOR UPDATE OF e",
    )
    .bind(pool_id)
    .bind(kind)
    .fetch_all(&mut *tx)
    .await?;
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let mut changes = Changes::default();
    let mut candidates = Vec::new();
    for entry in &entries {
        if entry.eligible {
            candidates.push(entry);
        } else {
            changes.push(
                entry.id,
                WaitlistState::Closed,
                None,
                "you are no longer a member of this tenant, or your account is disabled",
            );
        }
    }
    let requests: Vec<Request> = candidates.iter().map(|e| e.request(pool_id, kind)).collect();
    let refs: Vec<&Request> = requests.iter().collect();
    let outcomes = admit_locked(&mut tx, &refs).await?;
    let mut admitted = Vec::new();
    for (entry, outcome) in candidates.iter().zip(outcomes) {
        match outcome {
            Outcome::Decided(Ok(Admission::Booked(booking))) => {
                admitted.push(booking.id);
                changes.push(entry.id, WaitlistState::Admitted, Some(booking.id), "admitted: capacity freed");
            }
            Outcome::Crowded(_) => {}
            Outcome::Decided(Ok(Admission::Waitlisted(_))) | Outcome::Waits(_) => {}
            Outcome::Decided(Err(err)) if keeps_waiting(&err) => {}
            Outcome::Decided(Err(ServiceError::Invalid(field))) if field.field == "start" => {
                changes.push(entry.id, WaitlistState::Expired, None, &format!("too late to admit: {}", field.reason));
            }
            Outcome::Decided(Err(err)) if err.status() < 500 => {
                changes.push(entry.id, WaitlistState::Closed, None, &err.public_message());
            }
            Outcome::Decided(Err(err)) => return Err(err),
        }
    }
    changes.write(&mut tx).await?;
    tx.commit().await?;
    Ok(admitted)
}

/// State changes of several entries, written in one statement.
#[derive(Default)]
struct Changes {
    ids: Vec<Uuid>,
    states: Vec<&'static str>,
    bookings: Vec<Option<Uuid>>,
    reasons: Vec<String>,
}

impl Changes {
    fn push(&mut self, id: Uuid, state: WaitlistState, booking: Option<Uuid>, reason: &str) {
        self.ids.push(id);
        self.states.push(state.as_str());
        self.bookings.push(booking);
        self.reasons.push(reason.to_string());
    }

    async fn write(self, conn: &mut PgConnection) -> ServiceResult<()> {
        if self.ids.is_empty() {
            return Ok(());
        }
        // One resolution time for the whole batch (the subquery runs once):
        // per-row clock_timestamp() would order entries admitted together by
        // the join's row order, not by their turn.
        sqlx::query(
            "UPDATE waitlist_entry e SET state = c.state, booking_id = c.booking_id, reason = c.reason,
                    resolved_at = (SELECT clock_timestamp())
             FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[]) AS c(id, state, booking_id, reason)
             WHERE e.id = c.id",
        )
        .bind(&self.ids)
        .bind(&self.states)
        .bind(&self.bookings)
        .bind(&self.reasons)
        .execute(conn)
        .await?;
        Ok(())
    }
}

/// Where room may have freed.
pub enum Freed<'a> {
    /// A booking of this kind ended, was canceled or rejected.
    Kind(Uuid, &'a str),
    /// The pool changed (capacity raised, a blackout removed).
    Pool(Uuid),
    /// The tenant's quotas changed.
    Tenant(Uuid),
}

/// Promotes in every pool+kind of `freed` that has waiting entries. The
/// change that freed room has committed and stands: a failure here is
/// logged, and the worker's next pass promotes instead.
pub async fn after_freeing(db: &PgPool, freed: Freed<'_>) {
    let (pool, kind, tenant) = match freed {
        Freed::Kind(pool, kind) => (Some(pool), Some(kind), None),
        Freed::Pool(pool) => (Some(pool), None, None),
        Freed::Tenant(tenant) => (None, None, Some(tenant)),
    };
    let kinds: Result<Vec<(Uuid, String)>, sqlx::Error> = sqlx::query_as(
        "SELECT DISTINCT pool_id, kind FROM waitlist_entry
         WHERE state = 'waiting' AND ($1::uuid IS NULL OR pool_id = $1) AND ($2::text IS NULL OR kind = $2)
           AND ($3::uuid IS NULL OR tenant_id = $3)
           -- A member cluster's worker may not book (`member_role`): the
           -- site's worker promotes at its next pass.
           AND NOT EXISTS (SELECT 1 FROM member_role m WHERE m.role = current_user)
         ORDER BY pool_id, kind",
    )
    .bind(pool)
    .bind(kind)
    .bind(tenant)
    .fetch_all(db)
    .await;
    let kinds = match kinds {
        Ok(kinds) => kinds,
        Err(err) => return tracing::warn!(error = %err, "reading the waitlist failed"),
    };
    for (pool_id, kind) in kinds {
        if let Err(err) = promote(db, pool_id, &kind).await {
            tracing::warn!(error = %err.public_message(), %pool_id, kind, "waitlist promotion failed");
        }
    }
}

/// The worker's sweep: records entries whose window started as expired, then
/// promotes in every kind with waiting entries (room freed by the worker
/// itself, or a promotion that failed). Returns (expired, admitted).
pub async fn sweep(db: &PgPool) -> ServiceResult<(u64, usize)> {
    let expired = sqlx::query(
        "UPDATE waitlist_entry SET state = 'expired', resolved_at = clock_timestamp(),
                reason = 'its window started before there was room'
         WHERE state = 'waiting' AND starts_at <= now()",
    )
    .execute(db)
    .await?
    .rows_affected();
    let kinds: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT DISTINCT pool_id, kind FROM waitlist_entry WHERE state = 'waiting' ORDER BY pool_id, kind",
    )
    .fetch_all(db)
    .await?;
    let mut admitted = 0;
    for (pool_id, kind) in kinds {
        admitted += promote(db, pool_id, &kind).await?.len();
    }
    Ok((expired, admitted))
}
