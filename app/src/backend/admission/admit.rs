//! The decision on a batch of requests, inside a transaction that holds the
//! locks of the pools+kinds they ask for (`queue::admit_batch` takes them and
//! commits): read every kind's terms and the live bookings that overlap its
//! requests (one round trip), decide each request in arrival order with the
//! pure rules — capacity, then the tenant's quota — counting the ones its
//! kind admitted before it, insert the admitted ones with their audit events
//! (one statement). A refused request leaves nothing behind but its line in
//! the unmet demand; one that asked to wait is handed back for the queue to
//! put on the waitlist; a database failure fails the whole batch and writes
//! nothing.

use crate::backend::admission::accepted::{insert, view, Accepted};
use crate::backend::admission::quota;
use crate::backend::admission::request::Request;
use crate::backend::admission::suggest::Crowded;
use crate::backend::admission::terms::{read_terms, Terms};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, BookingState, TenantQuota, WaitlistEntry, Window};
use crate::rules::capacity::{Ledger, Usage};
use crate::rules::quota::check as check_quota;
use crate::rules::window::validate_new;
use crate::rules::FieldError;
use chrono::Utc;
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

enum Verdict {
    Refused(ServiceError),
    /// Refused for capacity; the suggestion is worked out after the lock is released.
    Crowded {
        peak_used: i32,
    },
    Accepted(Accepted),
    /// Refused for capacity or quota and asked to wait: the id of its
    /// waitlist entry-to-be.
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

/// One pool+kind of a batch as its requests are decided: the kind's terms,
/// and what the requests admitted before hold.
struct Open<'t> {
    terms: &'t Terms,
    capacity: i32,
    state: BookingState,
    ledger: Ledger,
    quotas: HashMap<Uuid, TenantQuota>,
    /// Per tenant with a quota: what it holds in the weeks the batch touches.
    held: HashMap<Uuid, Vec<Usage>>,
    tz: chrono_tz::Tz,
}

/// Why every request for this pool+kind is refused, if one is.
fn shut(terms: Option<&Terms>, kind: &str) -> Option<ServiceError> {
    let Some(terms) = terms else { return Some(no_such_pool()) };
    if terms.capacity.is_none() {
        return Some(FieldError::new("kind", format!("this pool has no kind {kind}")).into());
    }
    terms.retired.then(|| retired_pool().into())
}

/// A retired pool's answer to a new window: a booking, a move, an extension.
pub(crate) fn retired_pool() -> FieldError {
    FieldError::new("pool_id", "this pool is retired and takes no new bookings")
}

/// The pool+kind's ledger, with its tenants' quota usage read (one more
/// round trip) only when a tenant asking has a quota there.
async fn open<'t>(tx: &mut PgConnection, terms: &'t Terms, asking: &[&Request]) -> ServiceResult<Open<'t>> {
    let capacity = terms.capacity.unwrap_or(0);
    let quotas = terms.quotas_for(asking.iter().copied());
    let tz = crate::rules::local_time::zone(&terms.time_zone);
    let mut held = HashMap::new();
    if !quotas.is_empty() {
        let limited: Vec<Uuid> = quotas.keys().copied().collect();
        let windows: Vec<Window> =
            asking.iter().filter(|r| quotas.contains_key(&r.tenant.id)).map(|r| r.window).collect();
        if let Some(span) = quota::weeks_span(&windows, &tz) {
            held = quota::tenant_usages(tx, terms.pool_id, &terms.kind, &limited, (span, None)).await?;
        }
    }
    Ok(Open {
        terms,
        capacity,
        state: if terms.requires_approval { BookingState::Pending } else { BookingState::Approved },
        ledger: Ledger::new(capacity, terms.overlapping()),
        quotas,
        held,
        tz,
    })
}

impl Open<'_> {
    /// Decides one request against the kind, counting the ones accepted before it.
    fn decide(&mut self, index: usize, request: &Request) -> Verdict {
        let terms = self.terms;
        let checked = if terms.may_book(request.tenant.id) {
            validate_new(&terms.rules, self.capacity, terms.now, request.window, request.quantity)
                .and_then(|()| terms.image(&request.image))
        } else {
            Err(no_such_pool_field())
        };
        let image = match checked {
            Ok(image) => image,
            Err(err) => return Verdict::Refused(err.into()),
        };
        if let Some(closed) = terms.closed(request.window) {
            return Verdict::Refused(closed);
        }
        let wait = || Verdict::Waitlisted(Uuid::new_v4());
        if let Err(peak_used) = self.ledger.check(usage_of(request)) {
            return if request.join_waitlist { wait() } else { Verdict::Crowded { peak_used } };
        }
        if let Some(limit) = self.quotas.get(&request.tenant.id) {
            let tenant_held = self.held.entry(request.tenant.id).or_default();
            if let Err(refusal) =
                check_quota(limit, self.terms.slices_per_gpu.unwrap_or(1), tenant_held, usage_of(request), &self.tz)
            {
                return if request.join_waitlist {
                    wait()
                } else {
                    Verdict::Refused(ServiceError::QuotaExceeded(refusal))
                };
            }
            tenant_held.push(usage_of(request));
        }
        self.ledger.take(usage_of(request));
        Verdict::Accepted(Accepted { index, id: Uuid::new_v4(), image, state: self.state })
    }
}

/// Decides and records the requests inside `tx`, which holds the locks of
/// every pool+kind they ask for: the one admission path, for new requests,
/// series and waitlist promotions.
pub async fn admit_locked(tx: &mut PgConnection, requests: &[&Request]) -> ServiceResult<Vec<Outcome>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let (read, verdicts) = verdicts(tx, requests).await?;
    let terms_of = |request: &Request| read.iter().find(|t| t.pool_id == request.pool_id && t.kind == request.kind);
    let accepted: Vec<&Accepted> = verdicts
        .iter()
        .filter_map(|v| match v {
            Verdict::Accepted(a) => Some(a),
            _ => None,
        })
        .collect();
    if !accepted.is_empty() {
        insert(tx, requests, &accepted).await?;
    }
    record_refusals(tx, requests, &verdicts).await?;

    Ok(requests
        .iter()
        .zip(verdicts)
        .map(|(request, verdict)| match verdict {
            Verdict::Refused(err) => Outcome::Decided(Err(err)),
            Verdict::Crowded { peak_used } => {
                let Some(terms) = terms_of(request) else {
                    return Outcome::Decided(Err(ServiceError::Internal("admission terms not read")));
                };
                let (capacity, rules, now) = (terms.capacity.unwrap_or(0), terms.rules, terms.now);
                Outcome::Crowded(Crowded { peak_used, capacity, rules, now })
            }
            Verdict::Accepted(a) => {
                let terms = terms_of(request);
                let mut booking = view(request, a, terms.map_or_else(Utc::now, |t| t.now));
                booking.warning = terms.and_then(Terms::warning);
                Outcome::Decided(Ok(Admission::Booked(booking)))
            }
            Verdict::Waitlisted(id) => Outcome::Waits(id),
        })
        .collect())
}

/// What `admit_locked` would decide for each request, without its lock
/// and writing nothing: `Ok` where it would book, else why not. For
/// previews: run in a read-only transaction, a preview never makes a
/// booking wait, and its answer is only as good as the moment it was read.
pub async fn judge(tx: &mut PgConnection, requests: &[&Request]) -> ServiceResult<Vec<Result<(), String>>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let (read, verdicts) = verdicts(tx, requests).await?;
    let terms_of = |request: &Request| read.iter().find(|t| t.pool_id == request.pool_id && t.kind == request.kind);
    Ok(requests
        .iter()
        .zip(verdicts)
        .map(|(request, verdict)| match verdict {
            Verdict::Accepted(_) => Ok(()),
            Verdict::Refused(err) => Err(err.public_message()),
            Verdict::Waitlisted(_) => Err("it would only join the waitlist".into()),
            Verdict::Crowded { peak_used } => Err(ServiceError::CapacityExceeded {
                peak_used,
                capacity: terms_of(request).and_then(|t| t.capacity).unwrap_or(0),
                next_free: None,
            }
            .public_message()),
        })
        .collect())
}

/// Every kind's terms, and each request's verdict in arrival order.
async fn verdicts(tx: &mut PgConnection, requests: &[&Request]) -> ServiceResult<(Vec<Terms>, Vec<Verdict>)> {
    let read = read_terms(tx, requests).await?;
    let terms_of = |request: &Request| read.iter().find(|t| t.pool_id == request.pool_id && t.kind == request.kind);
    let mut open_kinds: Vec<Open> = Vec::new();
    for terms in &read {
        if shut(Some(terms), &terms.kind).is_none() {
            let asking: Vec<&Request> =
                requests.iter().copied().filter(|r| r.pool_id == terms.pool_id && r.kind == terms.kind).collect();
            open_kinds.push(open(tx, terms, &asking).await?);
        }
    }

    // In arrival order, each counting the ones accepted before it in its
    // kind: for waitlist entries (read in their list's order) that is FIFO
    // among those that fit.
    let verdicts: Vec<Verdict> = requests
        .iter()
        .enumerate()
        .map(|(index, request)| {
            let kind =
                open_kinds.iter_mut().find(|k| k.terms.pool_id == request.pool_id && k.terms.kind == request.kind);
            match kind {
                Some(kind) => kind.decide(index, request),
                None => Verdict::Refused(
                    shut(terms_of(request), &request.kind)
                        .unwrap_or(ServiceError::Internal("admission terms not read")),
                ),
            }
        })
        .collect();
    Ok((read, verdicts))
}

/// What the batch decided for one request.
#[allow(clippy::large_enum_variant)] // see `Admission`
pub enum Outcome {
    Decided(ServiceResult<Admission>),
    /// Refused for capacity; `Crowded::refusal` adds the `next_free` hint,
    /// outside the kind's queue so the next batch need not wait for it.
    Crowded(Crowded),
    /// Refused for capacity or quota, and asked to wait: the caller puts it
    /// on the waitlist under this id, in the same transaction (the queue
    /// does, `queue::admit_batch`); the decision writes no waitlist.
    Waits(Uuid),
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
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::int[], $6::timestamptz[],
                              $7::timestamptz[], $8::text[])",
    )
    .bind(column(|r| r.pool_id))
    .bind(refused.iter().map(|(r, _)| r.kind.as_str()).collect::<Vec<_>>())
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

/// A pool the tenant may not book (or none): a booking, a move, an extension.
pub(crate) fn no_such_pool_field() -> FieldError {
    FieldError::new("pool_id", "no pool with this id that your tenant may book")
}

fn no_such_pool() -> ServiceError {
    no_such_pool_field().into()
}

fn usage_of(request: &Request) -> Usage {
    Usage { start: request.window.start, end: request.window.end, quantity: request.quantity }
}
