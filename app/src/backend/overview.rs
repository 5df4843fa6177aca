//! The home page's data: every pool with what is free now, and the coming
//! week's bookings as anonymous occupancy (no one is signed in to this page
//! yet, so nothing personal is shown).

use super::error::ServiceResult;
use crate::model::Window;
use crate::model::{Booking, Principal, Role};
use crate::pages::{KindSummary, Overview, PoolSummary};
use crate::rules::capacity::{peak_usage, Usage};
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// A reader that sees every pool and no one's personal details: an admin's
/// reach, and then every booking reduced to occupancy below.
fn occupancy_reader() -> Principal {
    Principal { user_id: Uuid::nil(), email: String::new(), name: String::new(), role: Role::Admin, tenants: vec![] }
}

fn anonymous(b: Booking) -> Booking {
    Booking { user_email: None, user_name: None, tenant: None, image: None, note: None, mine: false, ..b }
}

pub async fn load(db: &PgPool) -> ServiceResult<Overview> {
    let reader = occupancy_reader();
    let now: DateTime<Utc> = sqlx::query_scalar("SELECT now()").fetch_one(db).await?;
    let pools = super::pools::list(db, &reader).await?;
    let filter =
        crate::model::BookingFilter { from: Some(now), to: Some(now + Duration::days(7)), ..Default::default() };
    let bookings: Vec<Booking> = super::bookings::list(db, &reader, &filter)
        .await?
        .into_iter()
        .filter(|b| b.state.holds_capacity())
        .map(anonymous)
        .collect();
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
