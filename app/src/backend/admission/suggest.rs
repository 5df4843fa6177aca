//! The `next_free` hint of a capacity refusal: the earliest window of the
//! same length that fits, read after the kind's lock is released.

use crate::backend::admission::locks::live_usages;
use crate::backend::admission::request::Request;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{PoolRules, Window};
use crate::rules::capacity::{next_free, Usage};
use crate::rules::window::{earliest_start, granularity, horizon_end};
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

pub struct Crowded {
    pub peak_used: i32,
    pub capacity: i32,
    pub rules: PoolRules,
    pub now: DateTime<Utc>,
}

/// What a refused window asked for: its pool, kind, units and window, and
/// the booking it would replace (a move), whose own units do not count.
pub struct Wanted<'a> {
    pub pool_id: Uuid,
    pub kind: &'a str,
    pub quantity: i32,
    pub window: Window,
    pub except: Option<Uuid>,
}

impl<'a> From<&'a Request> for Wanted<'a> {
    fn from(request: &'a Request) -> Self {
        Wanted {
            pool_id: request.pool_id,
            kind: &request.kind,
            quantity: request.quantity,
            window: request.window,
            except: None,
        }
    }
}

impl Crowded {
    /// The capacity refusal, with the earliest window that fits if there is one.
    pub async fn refusal(self, db: &PgPool, wanted: Wanted<'_>) -> ServiceError {
        match suggest(db, &wanted, &self.rules, self.capacity, self.now).await {
            Ok(next_free) => {
                ServiceError::CapacityExceeded { peak_used: self.peak_used, capacity: self.capacity, next_free }
            }
            Err(err) => err,
        }
    }
}

/// The earliest window like the refused one that fits now, searched forward
/// from its start in growing reads, so that a nearby answer reads little. A
/// hint, read without the lock: it can be taken by someone else before use.
async fn suggest(
    db: &PgPool,
    request: &Wanted<'_>,
    rules: &PoolRules,
    capacity: i32,
    now: DateTime<Utc>,
) -> ServiceResult<Option<Window>> {
    let from = request.window.start.max(earliest_start(rules, now));
    let horizon = horizon_end(rules, now);
    let duration = request.window.end - request.window.start;
    let mut reach = duration * 2 + Duration::hours(2);
    let mut conn = db.acquire().await?;
    // Each read covers only the stretch the previous ones did not; a booking
    // that straddles the seam arrives twice and is kept once.
    let mut known: HashMap<Uuid, Usage> = HashMap::new();
    let mut read_to = from;
    loop {
        // Windows that end by `to` depend only on bookings overlapping [from, to).
        let to = (from + reach).min(horizon);
        if to <= from {
            return Ok(None);
        }
        known.extend(live_usages(&mut conn, request.pool_id, request.kind, read_to, to).await?);
        read_to = to;
        if let Some(moved) = request.except {
            known.remove(&moved);
        }
        let usages: Vec<Usage> = known.values().copied().collect();
        let found = next_free(&usages, capacity, request.quantity, duration, from, to, granularity(rules));
        if found.is_some() || to >= horizon {
            return Ok(found);
        }
        reach = reach * 4;
    }
}
