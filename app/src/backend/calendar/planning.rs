//! Looking ahead in one pool+kind: the later ends a booking can be extended
//! to, and the earliest windows that fit a request ("find a slot"). Both read
//! without the admission lock; admission re-checks when the user acts.

use crate::backend::admission::locks::live_usages;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, Pool, Window};
use crate::rules::capacity::{align_down, free_steps, next_free, Usage};
use crate::rules::window::{earliest_start, granularity, horizon_end};
use crate::rules::FieldError;
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;

/// Slot counts offered as extensions before the latest end that fits.
const EXTENSION_STEPS: [i64; 8] = [1, 2, 4, 8, 16, 32, 96, 192];

/// The latest end the booking can reach (capacity, the pool's longest
/// booking, the horizon), and a few round steps up to it.
pub async fn extension_ends(
    db: &PgPool,
    pool: &Pool,
    booking: &Booking,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<DateTime<Utc>>> {
    let Some(kind) = pool.kinds.iter().find(|k| k.kind == booking.kind) else { return Ok(Vec::new()) };
    let step = granularity(&pool.rules);
    let limit = (booking.start + Duration::minutes(i64::from(pool.rules.max_booking_minutes)))
        .min(horizon_end(&pool.rules, now));
    let limit = align_down(limit, step);
    if limit <= booking.end || !booking.state.holds_capacity() || booking.end <= now {
        return Ok(Vec::new());
    }
    let mut conn = db.acquire().await?;
    let usages: Vec<Usage> =
        live_usages(&mut conn, pool.id, &booking.kind, booking.end, limit).await?.into_iter().map(|(_, u)| u).collect();
    let reach = free_steps(&usages, kind.capacity, Window { start: booking.end, end: limit })
        .into_iter()
        .find(|s| s.free < booking.quantity)
        .map(|s| align_down(s.start, step))
        .unwrap_or(limit);
    let mut ends: Vec<DateTime<Utc>> =
        EXTENSION_STEPS.iter().map(|n| booking.end + step * (*n as i32)).filter(|end| *end <= reach).collect();
    if reach > booking.end && !ends.contains(&reach) {
        ends.push(reach);
    }
    Ok(ends)
}

/// How many windows "find a slot" offers: every start on the pool's
/// granularity that fits, up to this many (a 5-hour span at 15 minutes
/// holds 13 two-hour windows).
pub const FOUND_WINDOWS: usize = 24;

/// What "find a slot" looks for.
pub struct SlotRequest<'a> {
    pub kind: &'a str,
    pub quantity: i32,
    pub duration: Duration,
    pub earliest: DateTime<Utc>,
    pub latest_end: DateTime<Utc>,
}

/// The windows of `duration` for `quantity` units between `earliest` and
/// `latest_end`, within the pool's rules, one per start on the pool's
/// granularity (overlapping: for 13:00–18:00 and 2 h, 16:00–18:00 too, not
/// only 13–15 and 15–17), earliest first.
pub async fn find_windows(
    db: &PgPool,
    pool: &Pool,
    ask: &SlotRequest<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<Window>> {
    let SlotRequest { kind, quantity, duration, earliest, latest_end } = *ask;
    let capacity = pool.capacity_of(kind)?;
    if quantity < 1 || quantity > capacity {
        return Err(FieldError::new("quantity", format!("must be between 1 and {capacity}")).into());
    }
    let step = granularity(&pool.rules);
    let longest = Duration::minutes(i64::from(pool.rules.max_booking_minutes));
    if duration < step || duration > longest || duration.num_minutes() % step.num_minutes() != 0 {
        let reason =
            format!("must be a multiple of {} minutes, at most {} minutes", step.num_minutes(), longest.num_minutes());
        return Err(FieldError::new("duration_minutes", reason).into());
    }
    let from = earliest.max(earliest_start(&pool.rules, now));
    let to = latest_end.min(horizon_end(&pool.rules, now));
    if to <= from {
        return Err(ServiceError::Invalid(FieldError::new(
            "latest",
            "must be after the earliest start and within the pool's horizon",
        )));
    }
    let mut conn = db.acquire().await?;
    let usages: Vec<Usage> =
        live_usages(&mut conn, pool.id, kind, from, to).await?.into_iter().map(|(_, u)| u).collect();
    let mut found = Vec::new();
    let mut cursor = from;
    while found.len() < FOUND_WINDOWS {
        let Some(window) = next_free(&usages, capacity, quantity, duration, cursor, to, step) else { break };
        cursor = window.start + step;
        found.push(window);
    }
    Ok(found)
}
