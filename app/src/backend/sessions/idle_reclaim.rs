//! Idle reclaim and no-shows, from measured GPU use (never browser activity).
//! The worker runs `pass` after each sampling round: a live booking whose
//! GPUs stayed below the pool's threshold for `idle_minutes` is marked idle
//! (its card warns the owner); still idle `grace_minutes` later it is ended
//! and its capacity returns. An interactive booking never opened and idle
//! for `idle_minutes` after its start is released as a no-show. A minute the
//! sampler could not read is not idle: with a gap nothing happens.

use crate::backend::audit::{self, Subject};
use crate::backend::bookings::change::{change, Change, End};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{IdlePolicy, Principal};
use crate::rules::state_machine::Action;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

pub async fn policy(db: &PgPool, pool_id: Uuid) -> ServiceResult<IdlePolicy> {
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pool WHERE id = $1)").bind(pool_id).fetch_one(db).await?;
    if !exists {
        return Err(ServiceError::NotFound("pool"));
    }
    let stored: Option<IdlePolicy> = sqlx::query_as(
        "SELECT enabled, threshold_pct, idle_minutes, grace_minutes FROM pool_idle_policy WHERE pool_id = $1",
    )
    .bind(pool_id)
    .fetch_optional(db)
    .await?;
    Ok(stored.unwrap_or_default())
}

/// Admins set a pool's policy; audited as `pool.idle_policy`.
pub async fn set_policy(
    db: &PgPool,
    principal: &Principal,
    pool_id: Uuid,
    new: IdlePolicy,
) -> ServiceResult<IdlePolicy> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins set a pool's idle reclaim"));
    }
    let name: String = sqlx::query_scalar("SELECT name FROM pool WHERE id = $1")
        .bind(pool_id)
        .fetch_optional(db)
        .await?
        .ok_or(ServiceError::NotFound("pool"))?;
    new.validate()?;
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO pool_idle_policy (pool_id, enabled, threshold_pct, idle_minutes, grace_minutes)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (pool_id) DO UPDATE SET enabled = $2, threshold_pct = $3, idle_minutes = $4,
                                             grace_minutes = $5, updated_at = now()",
    )
    .bind(pool_id)
    .bind(new.enabled)
    .bind(new.threshold_pct)
    .bind(new.idle_minutes)
    .bind(new.grace_minutes)
    .execute(&mut *tx)
    .await?;
    let subject = Subject { target: &name, pool: Some(pool_id), ..Subject::default() };
    audit::record(&mut tx, principal, "pool.idle_policy", subject, &new.describe()).await?;
    tx.commit().await?;
    Ok(new)
}

#[derive(sqlx::FromRow)]
struct Watched {
    id: Uuid,
    interactive: bool,
    opened: bool,
    idle_since: Option<DateTime<Utc>>,
    threshold_pct: i32,
    idle_minutes: i32,
    grace_minutes: i32,
    /// Minutes sampled in the last `idle_minutes`, and the busiest of them.
    sampled: i64,
    busiest: Option<f32>,
    /// The first minute of that window.
    window_start: DateTime<Utc>,
    now: DateTime<Utc>,
}

/// What one pass did, for the worker's log and the tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reclaimed {
    pub warned: usize,
    pub cleared: usize,
    pub ended: usize,
    pub no_shows: usize,
}

pub async fn pass(db: &PgPool) -> ServiceResult<Reclaimed> {
    // The window is the last `idle_minutes` whole minutes before the
    // sampler's latest round, so a round in progress never shortens it.
    let watched: Vec<Watched> = sqlx::query_as(
        "WITH clock AS (SELECT date_trunc('minute', now()) - interval '1 minute' AS last)
         SELECT b.id, b.mode = 'interactive' AS interactive,
                EXISTS (SELECT 1 FROM workspace_open w WHERE w.booking_id = b.id) AS opened,
                b.idle_since, p.threshold_pct, p.idle_minutes, p.grace_minutes,
                s.sampled, s.busiest, c.last - make_interval(mins => p.idle_minutes - 1) AS window_start, now() AS now
         FROM booking b
         JOIN pool_idle_policy p ON p.pool_id = b.pool_id AND p.enabled
         CROSS JOIN clock c
         CROSS JOIN LATERAL (
             SELECT count(*) AS sampled, max(m.busy) AS busiest FROM usage_minute m
             WHERE m.booking_id = b.id AND m.minute > c.last - make_interval(mins => p.idle_minutes)
               AND m.minute <= c.last
         ) s
         WHERE b.state = 'active' AND b.starts_at <= now() AND b.ends_at > now()",
    )
    .fetch_all(db)
    .await?;
    let mut done = Reclaimed::default();
    for w in watched {
        let fully_sampled = w.sampled >= i64::from(w.idle_minutes);
        let idle = fully_sampled && w.busiest.is_some_and(|b| f64::from(b) * 100.0 < f64::from(w.threshold_pct));
        let busy = w.busiest.is_some_and(|b| f64::from(b) * 100.0 >= f64::from(w.threshold_pct));
        match (idle, w.idle_since) {
            (true, _) if w.interactive && !w.opened => {
                let why = format!(
                    "no-show: the workspace was never opened and the GPUs stayed below {} % for {} min after the start",
                    w.threshold_pct, w.idle_minutes
                );
                if release(db, &w, "no_show", &why).await? {
                    done.no_shows += 1;
                }
            }
            (true, None) => {
                sqlx::query("UPDATE booking SET idle_since = $2 WHERE id = $1 AND state = 'active'")
                    .bind(w.id)
                    .bind(w.window_start)
                    .execute(db)
                    .await?;
                done.warned += 1;
            }
            (true, Some(since))
                if w.now - since >= chrono::Duration::minutes(i64::from(w.idle_minutes + w.grace_minutes)) =>
            {
                let why = format!(
                    "ended for idleness: the GPUs stayed below {} % for {} min",
                    w.threshold_pct,
                    w.idle_minutes + w.grace_minutes
                );
                if release(db, &w, "idle", &why).await? {
                    done.ended += 1;
                }
            }
            (false, Some(_)) if busy => {
                sqlx::query("UPDATE booking SET idle_since = NULL WHERE id = $1").bind(w.id).execute(db).await?;
                done.cleared += 1;
            }
            _ => {}
        }
    }
    Ok(done)
}

/// Ends the booking now, keeping its booked end; its capacity returns and
/// the waitlist is served. False when it was no longer live.
async fn release(db: &PgPool, w: &Watched, released_as: &str, why: &str) -> ServiceResult<bool> {
    let mut tx = db.begin().await?;
    let live: Option<bool> =
        sqlx::query_scalar("SELECT state = 'active' AND ends_at > now() FROM booking WHERE id = $1 FOR UPDATE")
            .bind(w.id)
            .fetch_optional(&mut *tx)
            .await?;
    if live != Some(true) {
        return Ok(false);
    }
    let reclaim = Change::new(Action::Complete, None, why).ending(End::Now, Some(released_as));
    let changed = change(&mut tx, w.id, reclaim).await?;
    sqlx::query("UPDATE booking SET idle_since = NULL WHERE id = $1").bind(w.id).execute(&mut *tx).await?;
    tx.commit().await?;
    changed.settle(db).await;
    Ok(true)
}

#[derive(sqlx::FromRow)]
struct Noted {
    id: Uuid,
    idle_since: Option<DateTime<Utc>>,
    released_as: Option<String>,
    threshold_pct: Option<i32>,
    idle_minutes: Option<i32>,
    grace_minutes: Option<i32>,
}

/// What the cards say: a live booking marked idle is warned when it will be
/// ended; one released for idleness or as a no-show says so.
pub async fn card_notes(db: &PgPool, ids: &[Uuid], tz: &chrono_tz::Tz) -> ServiceResult<HashMap<Uuid, String>> {
    let rows: Vec<Noted> = sqlx::query_as(
        "SELECT b.id, b.idle_since, b.released_as, p.threshold_pct, p.idle_minutes, p.grace_minutes
             FROM booking b LEFT JOIN pool_idle_policy p ON p.pool_id = b.pool_id
             WHERE b.id = ANY($1)
               AND ((b.idle_since IS NOT NULL AND b.state = 'active') OR b.released_as IN ('idle', 'no_show'))",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    let local = |at: DateTime<Utc>| at.with_timezone(tz).format("%H:%M").to_string();
    Ok(rows
        .into_iter()
        .filter_map(|Noted { id, idle_since, released_as, threshold_pct, idle_minutes, grace_minutes }| {
            let (threshold, idle, grace) = (threshold_pct, idle_minutes, grace_minutes);
            let note = match (released_as.as_deref(), idle_since) {
                (Some("idle"), _) => "Ended early: its GPUs stayed idle; the capacity went back to the pool.".to_string(),
                (Some("no_show"), _) => {
                    "Released as a no-show: the workspace was never opened and its GPUs stayed idle.".to_string()
                }
                (_, Some(since)) => {
                    let ends = since + chrono::Duration::minutes(i64::from(idle? + grace?));
                    format!(
                        "Idle: the GPUs have been below {} % since {}. Use them, or this booking ends at {} and its GPUs go back to the pool.",
                        threshold?,
                        local(since),
                        local(ends)
                    )
                }
                _ => return None,
            };
            Some((id, note))
        })
        .collect())
}
