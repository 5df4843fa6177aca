//! A pool kind's free units over a range, as a step function.

use super::blackouts::windows;
use super::read::get;
use crate::backend::admission::locks::live_usages;
use crate::backend::error::ServiceResult;
use crate::model::{Principal, Window};
use crate::rules::capacity::{free_steps, Step, Usage};
use crate::rules::window::check_in_range;
use crate::rules::FieldError;
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// Free units of `kind` over `[from, to)`; by default the coming week from the current slot.
pub async fn availability(
    db: &PgPool,
    principal: &Principal,
    id: Uuid,
    kind: &str,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) -> ServiceResult<Vec<Step>> {
    let pool = get(db, principal, id).await?;
    let capacity = pool.capacity_of(kind)?;
    let mut conn = db.acquire().await?;
    let now = crate::backend::db_now(&mut *conn).await?;
    let from = from.unwrap_or(now);
    check_in_range("from", from)?;
    let to = to.unwrap_or(from + Duration::days(7));
    check_in_range("to", to)?;
    if to <= from {
        return Err(FieldError::new("to", "must be after from").into());
    }
    if to - from > Duration::days(92) {
        return Err(FieldError::new("to", "a range may span at most 92 days").into());
    }
    let window = Window { start: from, end: to };
    let mut usages: Vec<_> = live_usages(&mut conn, id, kind, from, to).await?.into_iter().map(|(_, u)| u).collect();
    // A maintenance window leaves nothing free, whatever was kept in it.
    for blackout in windows::overlapping(&mut conn, id, kind, window).await? {
        usages.push(Usage { start: blackout.start, end: blackout.end, quantity: capacity });
    }
    Ok(free_steps(&usages, capacity, window).into_iter().map(|s| Step { free: s.free.max(0), ..s }).collect())
}
