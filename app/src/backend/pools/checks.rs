//! What a pool's write must check against the database: a selector nested
//! with another pool's, a backfill namespace taken, a capacity below what
//! is booked, a time zone that is none.

use crate::backend::admission::locks::live_usages;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{KindSpec, Scheduling, Window};
use crate::rules::capacity::{free_steps, Step};
use crate::rules::{pool_spec, FieldError};
use chrono::Duration;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

pub(super) fn validate_time_zone(zone: &str) -> ServiceResult<()> {
    zone.parse::<chrono_tz::Tz>()
        .map(|_| ())
        .map_err(|_| FieldError::new("time_zone", "must be an IANA time zone such as Europe/Berlin or UTC").into())
}

/// Refuses a selector nested with another live pool's (see
/// `pool_spec::validate_separate`). Serialized by a transaction-scoped lock
/// so two admins saving at once cannot both pass.
pub(super) async fn check_separate(
    tx: &mut PgConnection,
    pool_id: Option<Uuid>,
    node_selector: &BTreeMap<String, String>,
) -> ServiceResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('berth.pool.node_selector'))").execute(&mut *tx).await?;
    let others: Vec<(String, sqlx::types::Json<BTreeMap<String, String>>)> = sqlx::query_as(
        "SELECT name, node_selector FROM pool WHERE retired_at IS NULL AND id IS DISTINCT FROM $1 ORDER BY name",
    )
    .bind(pool_id)
    .fetch_all(&mut *tx)
    .await?;
    let others: Vec<_> = others.into_iter().map(|(name, selector)| (name, selector.0)).collect();
    Ok(pool_spec::validate_separate(node_selector, &others)?)
}

/// Refuses a backfill namespace another pool has: each pool's backfill
/// LocalQueue there is called `backfill` (a unique index backs this).
pub(super) async fn check_backfill_namespace(
    tx: &mut PgConnection,
    pool_id: Option<Uuid>,
    scheduling: &Scheduling,
) -> ServiceResult<()> {
    let Some(namespace) = &scheduling.backfill_namespace else { return Ok(()) };
    let other: Option<String> =
        sqlx::query_scalar("SELECT name FROM pool WHERE backfill_namespace = $1 AND id IS DISTINCT FROM $2")
            .bind(namespace)
            .bind(pool_id)
            .fetch_optional(&mut *tx)
            .await?;
    match other {
        Some(pool) => {
            Err(FieldError::new("backfill_namespace", format!("is pool {pool}'s backfill namespace already")).into())
        }
        None => Ok(()),
    }
}

/// Refuses to set `capacity` below the peak of live bookings from now on,
/// naming the bookings that overlap the overbooked instants.
pub(super) async fn check_capacity_change(
    conn: &mut PgConnection,
    pool_id: Uuid,
    spec: &KindSpec,
) -> ServiceResult<()> {
    let now = crate::backend::db_now(&mut *conn).await?;
    // No live booking ends later than the longest horizon from now.
    let last_possible_end = now + Duration::days(i64::from(pool_spec::MAX_HORIZON_DAYS) + 1);
    let live = live_usages(conn, pool_id, &spec.kind, now, last_possible_end).await?;
    let Some(last_end) = live.iter().map(|(_, u)| u.end).max() else {
        return Ok(());
    };
    let usages: Vec<_> = live.iter().map(|(_, u)| *u).collect();
    let window = Window { start: now, end: last_end };
    let over: Vec<Step> = free_steps(&usages, spec.capacity, window).into_iter().filter(|s| s.free < 0).collect();
    if over.is_empty() {
        return Ok(());
    }
    let booked = over.iter().map(|s| spec.capacity - s.free).max().unwrap_or(0);
    let bookings = live
        .iter()
        .filter(|(_, u)| over.iter().any(|s| u.start < s.end && s.start < u.end))
        .map(|(id, _)| *id)
        .collect();
    Err(ServiceError::CapacityBelowBooked { kind: spec.kind.clone(), capacity: spec.capacity, booked, bookings })
}
