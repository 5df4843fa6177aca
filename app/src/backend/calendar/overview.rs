//! The home page's data: the pools the principal may book with what is free
//! now, and the coming week's bookings in them as anonymous occupancy.

use crate::backend::error::ServiceResult;
use crate::model::{Booking, Principal, Window};
use crate::model::{KindSummary, Overview, PoolSummary};
use crate::rules::capacity::{peak_usage, Usage};
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;

pub async fn load(db: &PgPool, principal: &Principal) -> ServiceResult<Overview> {
    let now: DateTime<Utc> = crate::backend::db_now(db).await?;
    let pools = crate::backend::pools::list(db, principal).await?;
    let mut bookings: Vec<Booking> = crate::backend::bookings::occupancy(db, now, now + Duration::days(7)).await?;
    bookings.retain(|b| pools.iter().any(|p| p.id == b.pool_id));
    let instant = Window { start: now, end: now + Duration::seconds(1) };
    let summaries = pools
        .into_iter()
        .map(|pool| {
            let kinds = pool
                .kinds
                .iter()
                .map(|k| {
                    let usages: Vec<Usage> = bookings
                        .iter()
                        .filter(|b| b.pool_id == pool.id && b.kind == k.kind)
                        .map(|b| Usage { start: b.start, end: b.end, quantity: b.quantity })
                        .collect();
                    KindSummary {
                        kind: k.kind.clone(),
                        capacity: k.capacity,
                        free_now: k.capacity - peak_usage(&usages, instant),
                    }
                })
                .collect();
            PoolSummary { pool, kinds }
        })
        .collect();
    Ok(Overview { now, pools: summaries, bookings })
}
