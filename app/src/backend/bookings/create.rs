//! Admission: validate, then — holding the pool+kind lock — check the peak
//! usage over the window and insert the booking with its audit event, all in
//! one transaction. A refusal rolls back and leaves nothing behind.

use super::admission::{begin_locked, live_usages};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, BookingState, NewBooking, PoolRules, Principal, TenantRef, Window};
use crate::rules::capacity::{next_free, peak_usage, Usage};
use crate::rules::window::{check_not_empty, earliest_start, granularity, horizon_end, validate_new};
use crate::rules::FieldError;
use chrono::{DateTime, Utc};
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct Terms {
    granularity_minutes: i32,
    max_booking_minutes: i32,
    horizon_days: i32,
    min_notice_minutes: i32,
    requires_approval: bool,
    images: Vec<String>,
    capacity: Option<i32>,
    may_book: bool,
    now: DateTime<Utc>,
    // The capacity-holding bookings overlapping the requested window, read in
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

    fn rules(&self) -> PoolRules {
        PoolRules {
            granularity_minutes: self.granularity_minutes,
            max_booking_minutes: self.max_booking_minutes,
            horizon_days: self.horizon_days,
            min_notice_minutes: self.min_notice_minutes,
        }
    }
}

/// The tenant the booking is made for: the named one, or the principal's only one.
fn booking_tenant<'p>(principal: &'p Principal, asked: Option<&str>) -> ServiceResult<&'p TenantRef> {
    match (asked, principal.tenants.as_slice()) {
        (Some(slug), tenants) => tenants
            .iter()
            .find(|t| t.slug == slug)
            .ok_or_else(|| FieldError::new("tenant", format!("you are not a member of {slug}")).into()),
        (None, []) => Err(ServiceError::Forbidden("you belong to no tenant yet; ask your admin to add you to one")),
        (None, [only]) => Ok(only),
        (None, _) => Err(FieldError::new("tenant", "you belong to several tenants; say which one to book for").into()),
    }
}

fn chosen_image(terms: &Terms, asked: Option<String>) -> ServiceResult<String> {
    match asked {
        Some(image) if terms.images.contains(&image) || terms.images.is_empty() => Ok(image),
        Some(_) => Err(FieldError::new("image", format!("must be one of: {}", terms.images.join(", "))).into()),
        None => Ok(terms.images.first().cloned().unwrap_or_default()),
    }
}

pub async fn create(db: &sqlx::PgPool, principal: &Principal, new: NewBooking) -> ServiceResult<Booking> {
    if new.note.chars().count() > 1000 {
        return Err(FieldError::new("note", "must be at most 1000 characters").into());
    }
    let tenant = booking_tenant(principal, new.tenant.as_deref())?;
    let window = Window { start: new.start, end: new.end };
    check_not_empty(window)?;

    // Round trips matter here: the kind's lock is held from the first to the last.
    let mut tx = begin_locked(db, new.pool_id, &new.kind).await?;
    let terms: Option<Terms> = sqlx::query_as(
        "WITH overlapping AS (
             SELECT starts_at, ends_at, quantity FROM booking
             WHERE pool_id = $1 AND kind = $2 AND state IN ('pending', 'approved', 'active')
               AND tstzrange(starts_at, ends_at) && tstzrange($4, $5)
         )
         SELECT p.granularity_minutes, p.max_booking_minutes, p.horizon_days, p.min_notice_minutes,
                p.requires_approval, p.images, k.capacity, now() AS now,
                (NOT EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id)
                 OR EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id AND pt.tenant_id = $3)) AS may_book,
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
    .bind(new.pool_id)
    .bind(&new.kind)
    .bind(tenant.id)
    .bind(window.start)
    .bind(window.end)
    .fetch_optional(&mut *tx)
    .await?;
    let terms = match terms {
        Some(terms) if terms.may_book => terms,
        _ => return Err(FieldError::new("pool_id", "no pool with this id that your tenant may book").into()),
    };
    let capacity = terms
        .capacity
        .ok_or_else(|| FieldError::new("kind", format!("this pool has no kind {}", new.kind)))?;
    let rules = terms.rules();
    validate_new(&rules, capacity, terms.now, window, new.quantity)?;
    let image = chosen_image(&terms, new.image)?;

    let peak_used = peak_usage(&terms.overlapping(), window);
    if peak_used + new.quantity > capacity {
        let search_from = window.start.max(earliest_start(&rules, terms.now));
        let search_to = horizon_end(&rules, terms.now);
        let later: Vec<Usage> = live_usages(&mut tx, new.pool_id, &new.kind, search_from, search_to)
            .await?
            .into_iter()
            .map(|(_, u)| u)
            .collect();
        let duration = window.end - window.start;
        let next = next_free(&later, capacity, new.quantity, duration, search_from, search_to, granularity(&rules));
        return Err(ServiceError::CapacityExceeded { peak_used, capacity, next_free: next });
    }

    let state = if terms.requires_approval { BookingState::Pending } else { BookingState::Approved };
    let (id, created_at): (Uuid, DateTime<Utc>) = sqlx::query_as(
        "WITH b AS (
             INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at, state)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
             RETURNING id, created_at, state
         ), e AS (
             INSERT INTO booking_event (booking_id, actor_id, from_state, to_state, reason)
             SELECT id, $3, NULL, state, 'booked' FROM b
         )
         SELECT id, created_at FROM b",
    )
    .bind(new.pool_id)
    .bind(&new.kind)
    .bind(principal.user_id)
    .bind(tenant.id)
    .bind(new.quantity)
    .bind(new.mode.as_str())
    .bind(&image)
    .bind(&new.note)
    .bind(window.start)
    .bind(window.end)
    .bind(state.as_str())
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;

    Ok(Booking {
        id,
        pool_id: new.pool_id,
        kind: new.kind,
        quantity: new.quantity,
        mode: new.mode,
        state,
        start: window.start,
        end: window.end,
        mine: true,
        user_email: Some(principal.email.clone()),
        user_name: Some(principal.name.clone()),
        tenant: Some(tenant.slug.clone()),
        image: Some(image),
        note: Some(new.note),
        created_at,
    })
}
