//! Admission of a batch of requests for one pool+kind in one transaction:
//! take the kind's lock, read the pool's terms and the live bookings that
//! overlap the batch, decide each request in arrival order with the pure
//! rules — capacity, then the tenant's quota — counting the ones admitted
//! before it, insert the admitted ones with
//! their audit events, commit. A refused request leaves nothing behind; a
//! database failure fails the whole batch and writes nothing.

use super::admission::begin_locked;
use super::quota;
use super::suggest::Crowded;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, BookingState, Mode, PoolRules, Principal, TenantQuota, TenantRef, WaitlistEntry, Window};
use crate::rules::capacity::{Ledger, Usage};
use crate::rules::quota::check as check_quota;
use crate::rules::window::validate_new;
use crate::rules::FieldError;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use uuid::Uuid;

/// A booking request that passed the database-free checks.
pub struct Request {
    pub principal: Principal,
    pub tenant: TenantRef,
    pub pool_id: Uuid,
    pub kind: String,
    pub quantity: i32,
    pub mode: Mode,
    pub image: Option<String>,
    pub note: String,
    pub window: Window,
    /// Refused for capacity or quota, join the waitlist instead.
    pub join_waitlist: bool,
    /// The waitlist entry this request promotes, if it is one.
    pub entry: Option<Uuid>,
}

#[derive(sqlx::FromRow)]
struct Terms {
    #[sqlx(flatten)]
    rules: PoolRules,
    requires_approval: bool,
    images: Vec<String>,
    capacity: Option<i32>,
    /// Tenants that may book the pool; empty means every tenant.
    tenants: Vec<Uuid>,
    now: DateTime<Utc>,
    time_zone: String,
    retired: bool,
    // Every tenant quota of this pool+kind, one array per column.
    quota_tenants: Vec<Uuid>,
    quota_units: Vec<Option<i32>>,
    quota_hours: Vec<Option<f64>>,
    // Blackouts of this kind (or the whole pool) within the batch's span.
    blackout_starts: Vec<DateTime<Utc>>,
    blackout_ends: Vec<DateTime<Utc>>,
    blackout_reasons: Vec<String>,
    // The capacity-holding bookings overlapping the batch's windows, read in
    // the same round trip (and after the lock, so no admission can slip in).
    starts: Vec<DateTime<Utc>>,
    ends: Vec<DateTime<Utc>>,
    quantities: Vec<i32>,
}

impl Terms {
    fn overlapping(&self) -> Vec<Usage> {
        (self.starts.iter().zip(&self.ends).zip(&self.quantities))
            .map(|((&start, &end), &quantity)| Usage { start, end, quantity })
            .collect()
    }

    /// The quotas of the batch's tenants.
    fn quotas_for(&self, requests: &[&Request]) -> HashMap<Uuid, TenantQuota> {
        (self.quota_tenants.iter().zip(&self.quota_units).zip(&self.quota_hours))
            .filter(|((tenant, _), _)| requests.iter().any(|r| r.tenant.id == **tenant))
            .map(|((&tenant, &max_units), &gpu_hours_per_week)| (tenant, TenantQuota { max_units, gpu_hours_per_week }))
            .collect()
    }

    /// The first blackout `window` overlaps, as its refusal.
    fn closed(&self, pool_id: Uuid, window: Window) -> Option<ServiceError> {
        (self.blackout_starts.iter().zip(&self.blackout_ends).zip(&self.blackout_reasons))
            .find(|((&start, &end), _)| start < window.end && window.start < end)
            .map(|((&start, &end), reason)| {
                crate::backend::blackouts::closed(&crate::model::Blackout {
                    id: Uuid::nil(),
                    pool_id,
                    kind: None,
                    start,
                    end,
                    reason: reason.clone(),
                })
            })
    }

    fn may_book(&self, tenant: Uuid) -> bool {
        self.tenants.is_empty() || self.tenants.contains(&tenant)
    }

    fn image(&self, asked: &Option<String>) -> Result<String, FieldError> {
        match asked {
            Some(image) if self.images.contains(image) || self.images.is_empty() => Ok(image.clone()),
            Some(_) => Err(FieldError::new("image", format!("must be one of: {}", self.images.join(", ")))),
            None => Ok(self.images.first().cloned().unwrap_or_default()),
        }
    }
}

/// The pool's terms and, in the same round trip, the live bookings that
/// overlap any of the batch's windows (each booking once).
async fn read_terms(
    tx: &mut sqlx::PgConnection,
    pool_id: Uuid,
    kind: &str,
    windows: &[Window],
) -> ServiceResult<Option<Terms>> {
    let starts: Vec<DateTime<Utc>> = windows.iter().map(|w| w.start).collect();
    let ends: Vec<DateTime<Utc>> = windows.iter().map(|w| w.end).collect();
    Ok(sqlx::query_as(
        "WITH overlapping AS (
             -- The batch's windows as one multirange: the GiST index answers
             -- \"overlaps any of them\" in one scan, each booking once.
             SELECT starts_at, ends_at, quantity FROM booking
             WHERE pool_id = $1 AND kind = $2 AND state IN ('pending', 'approved', 'active')
               AND tstzrange(starts_at, ends_at)
                   && (SELECT range_agg(tstzrange(s, e)) FROM unnest($3::timestamptz[], $4::timestamptz[]) AS w(s, e))
         )
         SELECT p.granularity_minutes, p.max_booking_minutes, p.horizon_days, p.min_notice_minutes,
                p.requires_approval, p.images, k.capacity, now() AS now, p.time_zone,
                p.retired_at IS NOT NULL AS retired,
                ARRAY(SELECT pt.tenant_id FROM pool_tenant pt WHERE pt.pool_id = p.id) AS tenants,
                ARRAY(SELECT q.tenant_id FROM tenant_quota q WHERE q.pool_id = p.id AND q.kind = $2
                      ORDER BY q.tenant_id) AS quota_tenants,
                ARRAY(SELECT q.max_units FROM tenant_quota q WHERE q.pool_id = p.id AND q.kind = $2
                      ORDER BY q.tenant_id) AS quota_units,
                ARRAY(SELECT q.gpu_hours_per_week FROM tenant_quota q WHERE q.pool_id = p.id AND q.kind = $2
                      ORDER BY q.tenant_id) AS quota_hours,
                ARRAY(SELECT bo.starts_at FROM blackout bo WHERE bo.pool_id = p.id AND (bo.kind IS NULL OR bo.kind = $2)
                        AND bo.ends_at > (SELECT min(s) FROM unnest($3::timestamptz[]) s)
                        AND bo.starts_at < (SELECT max(e) FROM unnest($4::timestamptz[]) e)
                      ORDER BY bo.starts_at, bo.id) AS blackout_starts,
                ARRAY(SELECT bo.ends_at FROM blackout bo WHERE bo.pool_id = p.id AND (bo.kind IS NULL OR bo.kind = $2)
                        AND bo.ends_at > (SELECT min(s) FROM unnest($3::timestamptz[]) s)
                        AND bo.starts_at < (SELECT max(e) FROM unnest($4::timestamptz[]) e)
                      ORDER BY bo.starts_at, bo.id) AS blackout_ends,
                ARRAY(SELECT bo.reason FROM blackout bo WHERE bo.pool_id = p.id AND (bo.kind IS NULL OR bo.kind = $2)
                        AND bo.ends_at > (SELECT min(s) FROM unnest($3::timestamptz[]) s)
                        AND bo.starts_at < (SELECT max(e) FROM unnest($4::timestamptz[]) e)
                      ORDER BY bo.starts_at, bo.id) AS blackout_reasons,
                o.starts, o.ends, o.quantities
         FROM pool p LEFT JOIN pool_kind k ON k.pool_id = p.id AND k.kind = $2
         -- One aggregate level, so the three arrays list the bookings in the same order.
         CROSS JOIN (
             SELECT coalesce(array_agg(starts_at), '{}') AS starts, coalesce(array_agg(ends_at), '{}') AS ends,
                    coalesce(array_agg(quantity), '{}') AS quantities
             FROM overlapping
         ) o
         WHERE p.id = $1",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(starts)
    .bind(ends)
    .fetch_optional(tx)
    .await?)
}

/// One admitted request, ready to insert.
struct Accepted {
    index: usize,
    id: Uuid,
    image: String,
}

enum Verdict {
    Refused(ServiceError),
    /// Refused for capacity; the suggestion is worked out after the lock is released.
    Crowded {
        peak_used: i32,
    },
    Accepted(Accepted),
    /// Refused for capacity or quota and asked to wait: a new waitlist entry.
    Waitlisted(Uuid),
}

/// What a request became: a booking, or (asked for) a place on the waitlist.
// One of them lives from its batch to its waiting request: boxing the booking
// would cost an allocation per admission for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Admission {
    Booked(Booking),
    Waitlisted(WaitlistEntry),
}

/// Decides and records every request of the batch in one transaction; all
/// share one pool+kind. The outer error is a failure of the whole batch.
pub async fn admit_batch(db: &PgPool, requests: &[&Request]) -> ServiceResult<Vec<Outcome>> {
    let Some(first) = requests.first() else { return Ok(Vec::new()) };
    // Round trips matter here: the kind's lock is held from the first to the last.
    let decided = async {
        let mut tx = begin_locked(db, first.pool_id, &first.kind).await?;
        let outcomes = admit_locked(&mut tx, requests).await?;
        tx.commit().await?;
        Ok(outcomes)
    }
    .await;
    count(requests.len(), &decided);
    decided
}

/// Admission decisions by outcome, and batch sizes, for `/metrics`.
fn count(batch: usize, decided: &ServiceResult<Vec<Outcome>>) {
    metrics::histogram!("berth_admission_batch_size").record(batch as f64);
    let Ok(outcomes) = decided else {
        metrics::counter!("berth_admission_decisions_total", "outcome" => "error").increment(batch as u64);
        return;
    };
    for outcome in outcomes {
        let label = match outcome {
            Outcome::Decided(Ok(Admission::Booked(_))) => "booked",
            Outcome::Decided(Ok(Admission::Waitlisted(_))) => "waitlisted",
            Outcome::Crowded(_) => "refused_capacity",
            Outcome::Decided(Err(ServiceError::QuotaExceeded(_))) => "refused_quota",
            Outcome::Decided(Err(_)) => "refused_other",
        };
        metrics::counter!("berth_admission_decisions_total", "outcome" => label).increment(1);
    }
}

/// Decides and records the requests inside `tx`, which holds their kind's
/// lock: the one admission path, for new requests and waitlist promotions.
pub async fn admit_locked(tx: &mut PgConnection, requests: &[&Request]) -> ServiceResult<Vec<Outcome>> {
    let Some(first) = requests.first() else { return Ok(Vec::new()) };
    let (pool_id, kind) = (first.pool_id, first.kind.as_str());
    let windows: Vec<Window> = requests.iter().map(|r| r.window).collect();
    let Some(terms) = read_terms(tx, pool_id, kind, &windows).await? else {
        return Ok(requests.iter().map(|_| Outcome::Decided(Err(no_such_pool()))).collect());
    };
    let Some(capacity) = terms.capacity else {
        return Ok(requests
            .iter()
            .map(|_| Outcome::Decided(Err(FieldError::new("kind", format!("this pool has no kind {kind}")).into())))
            .collect());
    };
    if terms.retired {
        let retired = || FieldError::new("pool_id", "this pool is retired and takes no new bookings");
        return Ok(requests.iter().map(|_| Outcome::Decided(Err(retired().into()))).collect());
    }
    let rules = terms.rules;
    let state = if terms.requires_approval { BookingState::Pending } else { BookingState::Approved };
    let mut ledger = Ledger::new(capacity, terms.overlapping());
    // Tenant quotas: only read (one more round trip) when a tenant of the batch has one.
    let quotas = terms.quotas_for(requests);
    let tz = quota::zone(&terms.time_zone);
    let mut held = HashMap::new();
    if !quotas.is_empty() {
        let limited: Vec<Uuid> = quotas.keys().copied().collect();
        let windows: Vec<Window> =
            requests.iter().filter(|r| quotas.contains_key(&r.tenant.id)).map(|r| r.window).collect();
        if let Some(span) = quota::weeks_span(&windows, &tz) {
            held = quota::tenant_usages(tx, pool_id, kind, &limited, span).await?;
        }
    }
    let mut verdicts: Vec<Verdict> = Vec::with_capacity(requests.len());

    // In arrival order, each counting the ones accepted before it: for
    // waitlist entries (read in their list's order) that is FIFO among those that fit.
    for (index, request) in requests.iter().enumerate() {
        let window = request.window;
        let checked = if terms.may_book(request.tenant.id) {
            validate_new(&rules, capacity, terms.now, window, request.quantity)
                .and_then(|()| terms.image(&request.image))
        } else {
            Err(no_such_pool_field())
        };
        let image = match checked {
            Ok(image) => image,
            Err(err) => {
                verdicts.push(Verdict::Refused(err.into()));
                continue;
            }
        };
        if let Some(closed) = terms.closed(pool_id, window) {
            verdicts.push(Verdict::Refused(closed));
            continue;
        }
        let wait = || Verdict::Waitlisted(Uuid::new_v4());
        if let Err(peak_used) = ledger.check(usage_of(request)) {
            verdicts.push(if request.join_waitlist { wait() } else { Verdict::Crowded { peak_used } });
            continue;
        }
        if let Some(limit) = quotas.get(&request.tenant.id) {
            let tenant_held = held.entry(request.tenant.id).or_default();
            if let Err(refusal) = check_quota(limit, tenant_held, usage_of(request), &tz) {
                verdicts.push(if request.join_waitlist {
                    wait()
                } else {
                    Verdict::Refused(ServiceError::QuotaExceeded(refusal))
                });
                continue;
            }
            tenant_held.push(usage_of(request));
        }
        ledger.take(usage_of(request));
        verdicts.push(Verdict::Accepted(Accepted { index, id: Uuid::new_v4(), image }));
    }

    let accepted: Vec<&Accepted> = verdicts
        .iter()
        .filter_map(|v| match v {
            Verdict::Accepted(a) => Some(a),
            _ => None,
        })
        .collect();
    if !accepted.is_empty() {
        insert(tx, requests, &accepted, pool_id, kind, state).await?;
    }
    let waiting: Vec<(Uuid, &Request)> = (verdicts.iter().zip(requests))
        .filter_map(|(v, r)| match v {
            Verdict::Waitlisted(id) => Some((*id, *r)),
            _ => None,
        })
        .collect();
    let mut entries =
        if waiting.is_empty() { HashMap::new() } else { crate::backend::waitlist::join(tx, &waiting).await? };
    record_refusals(tx, requests, &verdicts).await?;

    Ok(requests
        .iter()
        .zip(verdicts)
        .map(|(request, verdict)| match verdict {
            Verdict::Refused(err) => Outcome::Decided(Err(err)),
            Verdict::Crowded { peak_used } => Outcome::Crowded(Crowded { peak_used, capacity, rules, now: terms.now }),
            Verdict::Accepted(a) => {
                Outcome::Decided(Ok(Admission::Booked(view(request, a, pool_id, state, terms.now))))
            }
            Verdict::Waitlisted(id) => Outcome::Decided(match entries.remove(&id) {
                Some(joined) => joined.map(Admission::Waitlisted),
                None => Err(ServiceError::Internal("waitlist entry not read back")),
            }),
        })
        .collect())
}

/// What the batch decided for one request.
#[allow(clippy::large_enum_variant)] // see `Admission`
pub enum Outcome {
    Decided(ServiceResult<Admission>),
    /// Refused for capacity; `Crowded::refusal` adds the `next_free` hint,
    /// outside the kind's queue so the next batch need not wait for it.
    Crowded(Crowded),
}

/// New requests refused for capacity or quota are unmet demand in the
/// reports; promotions from the waitlist are counted there already.
async fn record_refusals(tx: &mut PgConnection, requests: &[&Request], verdicts: &[Verdict]) -> ServiceResult<()> {
    let refused: Vec<(&Request, &str)> = requests
        .iter()
        .zip(verdicts)
        .filter(|(r, _)| r.entry.is_none())
        .filter_map(|(r, v)| match v {
            Verdict::Crowded { .. } => Some((*r, "capacity")),
            Verdict::Refused(ServiceError::QuotaExceeded(_)) => Some((*r, "quota")),
            _ => None,
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    let column = |f: fn(&Request) -> Uuid| refused.iter().map(|(r, _)| f(r)).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO booking_refusal (pool_id, kind, tenant_id, user_id, quantity, starts_at, ends_at, reason)
         SELECT $1, $2, * FROM unnest($3::uuid[], $4::uuid[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::text[])",
    )
    .bind(refused[0].0.pool_id)
    .bind(&refused[0].0.kind)
    .bind(column(|r| r.tenant.id))
    .bind(column(|r| r.principal.user_id))
    .bind(refused.iter().map(|(r, _)| r.quantity).collect::<Vec<_>>())
    .bind(refused.iter().map(|(r, _)| r.window.start).collect::<Vec<_>>())
    .bind(refused.iter().map(|(r, _)| r.window.end).collect::<Vec<_>>())
    .bind(refused.iter().map(|(_, why)| *why).collect::<Vec<_>>())
    .execute(tx)
    .await?;
    Ok(())
}

fn no_such_pool_field() -> FieldError {
    FieldError::new("pool_id", "no pool with this id that your tenant may book")
}

fn no_such_pool() -> ServiceError {
    no_such_pool_field().into()
}

fn usage_of(request: &Request) -> Usage {
    Usage { start: request.window.start, end: request.window.end, quantity: request.quantity }
}

/// How a booking made from a waitlist entry says so in its audit trail.
pub const WAITLIST_REASON: &str = "admitted from the waitlist";

/// Inserts the accepted bookings and their audit events in one statement.
async fn insert(
    tx: &mut PgConnection,
    requests: &[&Request],
    accepted: &[&Accepted],
    pool_id: Uuid,
    kind: &str,
    state: BookingState,
) -> ServiceResult<()> {
    // One array per column, for unnest.
    let (mut ids, mut users, mut tenants, mut quantities) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut modes, mut images, mut notes, mut starts, mut ends) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut reasons = Vec::new();
    for a in accepted {
        let r = requests[a.index];
        reasons.push(match r.entry {
            Some(entry) => format!("{WAITLIST_REASON} (entry {entry})"),
            None => "booked".to_string(),
        });
        ids.push(a.id);
        users.push(r.principal.user_id);
        tenants.push(r.tenant.id);
        quantities.push(r.quantity);
        modes.push(r.mode.as_str());
        images.push(a.image.as_str());
        notes.push(r.note.as_str());
        starts.push(r.window.start);
        ends.push(r.window.end);
    }
    sqlx::query(
        "WITH b AS (
             INSERT INTO booking (id, pool_id, kind, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at, state)
             SELECT r.id, $1, $2, r.user_id, r.tenant_id, r.quantity, r.mode, r.image, r.note, r.starts_at, r.ends_at, $3
             FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::int[], $8::text[], $9::text[], $10::text[],
                         $11::timestamptz[], $12::timestamptz[])
                  AS r(id, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at)
             RETURNING id, user_id, state
         )
         INSERT INTO booking_event (booking_id, actor_id, from_state, to_state, reason)
         SELECT b.id, b.user_id, NULL, b.state, r.reason
         FROM b JOIN unnest($4::uuid[], $13::text[]) AS r(id, reason) ON r.id = b.id",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(state.as_str())
    .bind(&ids)
    .bind(&users)
    .bind(&tenants)
    .bind(&quantities)
    .bind(&modes)
    .bind(&images)
    .bind(&notes)
    .bind(&starts)
    .bind(&ends)
    .bind(&reasons)
    .execute(tx)
    .await?;
    Ok(())
}

fn view(request: &Request, admitted: Accepted, pool_id: Uuid, state: BookingState, now: DateTime<Utc>) -> Booking {
    Booking {
        id: admitted.id,
        pool_id,
        kind: request.kind.clone(),
        quantity: request.quantity,
        mode: request.mode,
        state,
        start: request.window.start,
        end: request.window.end,
        mine: true,
        user_email: Some(request.principal.email.clone()),
        user_name: Some(request.principal.name.clone()),
        tenant: Some(request.tenant.slug.clone()),
        image: Some(admitted.image),
        note: Some(request.note.clone()),
        created_at: now,
        extends: None,
        co_owners: Vec::new(),
        co_owned: false,
        series: None,
    }
}
