//! A tenant's dashboard (its members; managers and admins may open any):
//! live sessions with the last hour of measured GPU use, the week's
//! GPU-hours against the tenant's weekly budget, and the next bookings.

use crate::backend::accounts::tenants::may_read;
use crate::backend::bookings::occupancy_id;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{
    BookingLine, BookingState, BudgetLine, Dashboard, IdlePolicy, LiveSession, Principal, UpcomingLine, Window,
    SPARK_MINUTES,
};
use crate::rules::local_time::local_window;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// The columns both lists select (`LINE_COLUMNS`).
#[derive(sqlx::FromRow)]
struct Line {
    id: Uuid,
    user_id: Uuid,
    pool: String,
    kind: String,
    quantity: i32,
    owner: String,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
}

const LINE_COLUMNS: &str =
    "b.id, b.user_id, p.name AS pool, b.kind, b.quantity, u.name AS owner, b.starts_at, b.ends_at";

impl Line {
    /// The line as `viewer` reads it: a teammate's booking carries a one-way
    /// id, since the booking's own names its workspace's host.
    fn shown(self, tz: &str, viewer: &Principal) -> BookingLine {
        let own = viewer.is_admin() || viewer.user_id == self.user_id;
        BookingLine {
            when: local_window(Window { start: self.starts_at, end: self.ends_at }, tz),
            booking_id: if own { self.id } else { occupancy_id(self.id) },
            pool: self.pool,
            kind: self.kind,
            quantity: self.quantity,
            owner: self.owner,
        }
    }
}

#[derive(sqlx::FromRow)]
struct Live {
    #[sqlx(flatten)]
    line: Line,
    #[sqlx(flatten)]
    policy: IdlePolicy,
}

#[derive(sqlx::FromRow)]
struct Minute {
    booking_id: Uuid,
    /// Minutes before the latest whole minute (0 = the latest).
    age: i32,
    busy: f32,
    memory_used_mib: f32,
    simulated: bool,
}

/// The viewer's tenant to show: the asked one if they may read it, else their first.
fn chosen(principal: &Principal, asked: Option<&str>, all: &[(String, String)]) -> ServiceResult<String> {
    match asked.filter(|s| !s.is_empty()) {
        Some(slug) if may_read(principal, slug) => Ok(slug.to_string()),
        Some(_) => Err(ServiceError::NotFound("tenant")),
        None => principal
            .tenants
            .first()
            .map(|t| t.slug.clone())
            .or_else(|| all.iter().find(|(slug, _)| may_read(principal, slug)).map(|(slug, _)| slug.clone()))
            .ok_or(ServiceError::Forbidden("you belong to no tenant yet; ask your admin to add you to one")),
    }
}

pub async fn load(
    db: &PgPool,
    principal: &Principal,
    (tenant, range, cluster): (Option<&str>, crate::model::ChartRange, Option<&str>),
    tz: &str,
) -> ServiceResult<Dashboard> {
    let all: Vec<(String, String)> =
        sqlx::query_as("SELECT slug, name FROM tenant ORDER BY slug").fetch_all(db).await?;
    let slug = chosen(principal, tenant, &all)?;
    let Some((_, tenant_name)) = all.iter().find(|(s, _)| *s == slug) else {
        return Err(ServiceError::NotFound("tenant"));
    };
    let tenant_id: Uuid = sqlx::query_scalar("SELECT id FROM tenant WHERE slug = $1").bind(&slug).fetch_one(db).await?;
    let axis = super::device_charts::axis(range, crate::backend::db_now(db).await?, tz);
    // Only the pools of one cluster, when asked.
    let (on, clusters) = crate::backend::clusters::pick(db, cluster).await?;
    let (sessions, simulated) = live_sessions(db, principal, (tenant_id, on), tz).await?;
    // By the bookings' own ids: a teammate's session is shown under its
    // occupancy id, which no measured minute is stored under (its charts
    // said "No GPU use measured" while its booking page showed the use).
    let ids: Vec<Uuid> = sessions.iter().map(|(id, _)| *id).collect();
    let mut charts = super::device_charts::charts(db, &ids, &axis).await?;
    let live = sessions
        .into_iter()
        .map(|(id, mut session)| {
            session.devices = charts.remove(&id).unwrap_or_default();
            session
        })
        .collect();
    Ok(Dashboard {
        others: all.iter().map(|(s, _)| s.clone()).filter(|s| *s != slug && may_read(principal, s)).collect(),
        tenant: slug.clone(),
        tenant_name: tenant_name.clone(),
        live,
        budget: budget(db, (tenant_id, on)).await?,
        upcoming: upcoming(db, principal, (tenant_id, on), tz).await?,
        simulated,
        demo_history: super::demo::note(db).await?,
        zone: crate::rules::local_time::zone(tz).name().to_string(),
        axis,
        cluster: on.and(cluster).map(str::to_string),
        clusters,
    })
}

async fn live_sessions(
    db: &PgPool,
    principal: &Principal,
    (tenant_id, cluster): (Uuid, Option<Uuid>),
    tz: &str,
) -> ServiceResult<(Vec<(Uuid, LiveSession)>, bool)> {
    let live: Vec<Live> = sqlx::query_as(&format!(
        "SELECT {LINE_COLUMNS}, coalesce(i.enabled, false) AS enabled, coalesce(i.threshold_pct, 5) AS threshold_pct,
                coalesce(i.idle_minutes, 30) AS idle_minutes, coalesce(i.grace_minutes, 30) AS grace_minutes
         FROM booking b JOIN pool p ON p.id = b.pool_id JOIN app_user u ON u.id = b.user_id
         LEFT JOIN pool_idle_policy i ON i.pool_id = b.pool_id
         WHERE b.tenant_id = $1 AND b.state IN ('approved', 'active') AND b.starts_at <= now() AND b.ends_at > now()
           AND b.extends_id IS NULL AND ($2::uuid IS NULL OR p.cluster_id = $2)
         ORDER BY b.starts_at, b.id"
    ))
    .bind(tenant_id)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    let ids: Vec<Uuid> = live.iter().map(|b| b.line.id).collect();
    let longest = live.iter().map(|b| b.policy.idle_minutes).max().unwrap_or(0).max(SPARK_MINUTES as i32);
    let minutes: Vec<Minute> = sqlx::query_as(
        "SELECT booking_id, (extract(epoch FROM date_trunc('minute', now()) - interval '1 minute' - minute) / 60)::int AS age,
                busy, memory_used_mib, simulated
         FROM usage_minute
         WHERE booking_id = ANY($1) AND minute > date_trunc('minute', now()) - interval '1 minute' - make_interval(mins => $2)",
    )
    .bind(&ids)
    .bind(longest)
    .fetch_all(db)
    .await?;
    let mut by_booking: HashMap<Uuid, Vec<&Minute>> = HashMap::new();
    for m in &minutes {
        by_booking.entry(m.booking_id).or_default().push(m);
    }
    let mut simulated = false;
    let sessions = live
        .into_iter()
        .map(|b| {
            let mine = by_booking.remove(&b.line.id).unwrap_or_default();
            let at = |age: usize| mine.iter().find(|m| m.age == age as i32);
            // Oldest first, the latest whole minute last.
            let series = |value: fn(&Minute) -> f32| {
                (0..SPARK_MINUTES).rev().map(|age| at(age).map(|m| value(m))).collect::<Vec<_>>()
            };
            let threshold = f64::from(b.policy.threshold_pct) / 100.0;
            // The run of measured idle minutes up to now; a gap ends it.
            let idle_run = (0..longest.max(0) as usize)
                .take_while(|age| at(*age).is_some_and(|m| f64::from(m.busy) < threshold))
                .count();
            let session_simulated = mine.iter().any(|m| m.simulated);
            simulated |= session_simulated;
            let id = b.line.id;
            let session = LiveSession {
                booking: b.line.shown(tz, principal),
                busy: series(|m| m.busy),
                memory_mib: series(|m| m.memory_used_mib),
                idle: (idle_run >= b.policy.idle_minutes as usize)
                    .then(|| format!("Idle for {idle_run} min (below {} %)", b.policy.threshold_pct)),
                simulated: session_simulated,
                devices: Vec::new(),
            };
            (id, session)
        })
        .collect();
    Ok((sessions, simulated))
}

/// Per pool and kind the tenant booked this week or has a budget for: this
/// ISO week's (in the pool's zone) booked, waiting-for-approval and
/// measured-busy GPU-hours (whole-GPU equivalents, as the weekly quota
/// counts them; the quota counts booked and waiting together), and that
/// quota if any.
async fn budget(db: &PgPool, (tenant_id, cluster): (Uuid, Option<Uuid>)) -> ServiceResult<Vec<BudgetLine>> {
    let booked = BookingState::sql_list(&BookingState::BOOKED);
    // GPU-hours of the tenant's bookings of one pool and kind in the week, in `states`.
    let hours = |states: &str| {
        format!(
            "coalesce((SELECT sum(b.quantity::float8 / pk.slices_per_gpu
                                  * extract(epoch FROM least(b.ends_at, w.ends) - greatest(b.starts_at, w.starts)) / 3600)
                       FROM booking b
                       WHERE b.tenant_id = $1 AND b.pool_id = k.pool_id AND b.kind = k.kind AND b.state IN ({states})
                         AND b.ends_at > w.starts AND b.starts_at < w.ends), 0)::float8"
        )
    };
    let rows: Vec<(String, String, f64, f64, f64, Option<f64>)> = sqlx::query_as(&format!(
        "WITH week AS (
             SELECT id AS pool_id, name,
                    date_trunc('week', now() AT TIME ZONE time_zone) AT TIME ZONE time_zone AS starts,
                    (date_trunc('week', now() AT TIME ZONE time_zone) + interval '7 days') AT TIME ZONE time_zone AS ends
             FROM pool WHERE $2::uuid IS NULL OR cluster_id = $2),
         keys AS (
             SELECT pool_id, kind FROM tenant_quota WHERE tenant_id = $1 AND gpu_hours_per_week IS NOT NULL
             UNION
             SELECT b.pool_id, b.kind FROM booking b JOIN week w ON w.pool_id = b.pool_id
             WHERE b.tenant_id = $1 AND b.state IN ('pending', {booked})
               AND b.ends_at > w.starts AND b.starts_at < w.ends)
         SELECT w.name, k.kind, {}, {},
                coalesce((SELECT sum(u.busy_unit_minutes) / 60 / pk.slices_per_gpu FROM usage_hour u JOIN booking b ON b.id = u.booking_id
                          WHERE u.tenant_id = $1 AND u.pool_id = k.pool_id AND b.kind = k.kind
                            AND u.hour >= w.starts AND u.hour < w.ends), 0)::float8,
                (SELECT q.gpu_hours_per_week FROM tenant_quota q
                 WHERE q.tenant_id = $1 AND q.pool_id = k.pool_id AND q.kind = k.kind)
         FROM keys k JOIN week w ON w.pool_id = k.pool_id
         JOIN pool_kind pk ON pk.pool_id = k.pool_id AND pk.kind = k.kind
         ORDER BY w.name, k.kind",
        hours(&booked),
        hours("'pending'"),
    ))
    .bind(tenant_id)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(pool, kind, booked_hours, waiting_hours, busy_hours, budget_hours)| BudgetLine {
            pool,
            kind,
            booked_hours: crate::model::figure(booked_hours),
            waiting_hours: crate::model::figure(waiting_hours),
            busy_hours: crate::model::figure(busy_hours),
            budget_hours,
        })
        .collect())
}

async fn upcoming(
    db: &PgPool,
    principal: &Principal,
    (tenant_id, cluster): (Uuid, Option<Uuid>),
    tz: &str,
) -> ServiceResult<Vec<UpcomingLine>> {
    #[derive(sqlx::FromRow)]
    struct Next {
        #[sqlx(flatten)]
        line: Line,
        state: String,
    }
    let rows: Vec<Next> = sqlx::query_as(&format!(
        "SELECT {LINE_COLUMNS}, b.state
         FROM booking b JOIN pool p ON p.id = b.pool_id JOIN app_user u ON u.id = b.user_id
         WHERE b.tenant_id = $1 AND b.state IN ('pending', 'approved') AND b.starts_at > now() AND b.extends_id IS NULL
           AND ($2::uuid IS NULL OR p.cluster_id = $2)
         ORDER BY b.starts_at, b.id LIMIT 10"
    ))
    .bind(tenant_id)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|n| UpcomingLine { booking: n.line.shown(tz, principal), state: n.state }).collect())
}
