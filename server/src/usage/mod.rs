//! Measured GPU use: every minute the active worker asks Prometheus a fixed
//! number of queries (one per DCGM metric, for all of Berth's namespaces at
//! once), aggregates the answers per booking (`aggregate`) and stores one row
//! per booking and minute plus the hourly roll-up that reports read. When
//! Prometheus cannot be read the minute is recorded as a gap: nothing is
//! ever filled in.

pub mod aggregate;
pub mod prometheus;
pub mod simulated;

pub use aggregate::{ActiveThreshold, DcgmSelector};
use aggregate::{LiveBooking, Metric, MinuteUsage};
use chrono::{DateTime, Duration, DurationRound, Utc};
use prometheus::Prometheus;
use sqlx::PgPool;
use std::collections::HashMap;

/// Minutes are kept this long (sparklines, idle detection); hours forever.
pub const MINUTE_RETENTION_DAYS: i32 = 14;

pub struct Sampler {
    pub prometheus: Prometheus,
    /// Matchers that pick the DCGM exporter's own series.
    pub selector: DcgmSelector,
    /// When a device's minute counts as active.
    pub threshold: ActiveThreshold,
    /// The metrics come from the simulated cluster's DCGM endpoint.
    pub simulated: bool,
}

/// Where the worker reads GPU use (`--prometheus-url`, `--dcgm-selector`).
#[derive(Clone)]
pub struct UsageSource {
    pub prometheus: Prometheus,
    pub selector: DcgmSelector,
    pub threshold: ActiveThreshold,
}

/// What one round did, for logs, metrics and the benchmark.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    pub minute: DateTime<Utc>,
    pub live: usize,
    pub queries: usize,
    pub rows: usize,
    /// Prometheus could not be read; the minute is a gap.
    pub gap: bool,
}

/// The start of the minute `at` falls in.
pub fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(Duration::minutes(1)).unwrap_or(at)
}

impl Sampler {
    /// Measures `minute` (the DCGM averages over it, read at its end).
    pub async fn round(&self, db: &PgPool, minute: DateTime<Utc>) -> sqlx::Result<Round> {
        let minute = minute_of(minute);
        let live = live_bookings(db, minute).await?;
        let mut round = Round { minute, live: live.len(), ..Round::default() };
        if live.is_empty() {
            return Ok(round);
        }
        let mut results = HashMap::new();
        for metric in Metric::ALL {
            round.queries += 1;
            match self.prometheus.vector(&metric.query(&self.selector), minute + Duration::minutes(1)).await {
                Ok(series) => {
                    results.insert(metric, series);
                }
                Err(err) => {
                    tracing::warn!(error = %err, %minute, "cannot read GPU use from Prometheus; the minute is a gap");
                    record_gap(db, minute, "Prometheus could not be read").await?;
                    round.gap = true;
                    return Ok(round);
                }
            }
        }
        let rows = aggregate::per_booking(&results, &live, self.threshold);
        round.rows = rows.len();
        store(db, minute, &rows, self.simulated).await?;
        record_threshold(db, self.threshold).await?;
        Ok(round)
    }
}

/// Bookings live during `minute`, with the namespace their session has.
async fn live_bookings(db: &PgPool, minute: DateTime<Utc>) -> sqlx::Result<Vec<LiveBooking>> {
    let rows: Vec<(uuid::Uuid, String, i32, uuid::Uuid)> = sqlx::query_as(&format!(
        "SELECT b.id, t.slug, b.quantity, {} FROM booking b JOIN tenant t ON t.id = b.tenant_id
         WHERE b.state = 'active' AND b.starts_at <= $1 AND b.ends_at > $1",
        app::backend::sessions::continuation::SESSION_ID
    ))
    .bind(minute)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, tenant, units, session)| LiveBooking {
            id,
            namespace: crate::provisioner::manifests::namespace_name(&tenant, session),
            units,
        })
        .collect())
}

/// Writes the threshold the minutes were judged by, for reports to name
/// (one row; rewritten only when it changed).
async fn record_threshold(db: &PgPool, threshold: ActiveThreshold) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO usage_policy (active_threshold) VALUES ($1)
         ON CONFLICT (only_row) DO UPDATE SET active_threshold = excluded.active_threshold, updated_at = now()
         WHERE usage_policy.active_threshold <> excluded.active_threshold",
    )
    .bind(threshold.fraction() as f32)
    .execute(db)
    .await?;
    Ok(())
}

async fn record_gap(db: &PgPool, minute: DateTime<Utc>, reason: &str) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO usage_gap (minute, reason) VALUES ($1, $2) ON CONFLICT (minute) DO NOTHING")
        .bind(minute)
        .bind(reason)
        .execute(db)
        .await?;
    Ok(())
}

/// The minutes and their hours in one statement: a minute measured twice (a
/// worker hand-over) is stored once and counted once in its hour.
async fn store(db: &PgPool, minute: DateTime<Utc>, rows: &[MinuteUsage], simulated: bool) -> sqlx::Result<()> {
    let ids: Vec<uuid::Uuid> = rows.iter().map(|r| r.booking_id).collect();
    let busy: Vec<f64> = rows.iter().map(|r| r.busy).collect();
    let memory: Vec<f64> = rows.iter().map(|r| r.memory_used_mib).collect();
    let power: Vec<Option<f64>> = rows.iter().map(|r| r.power_w).collect();
    let devices: Vec<i32> = rows.iter().map(|r| r.devices).collect();
    let active: Vec<i32> = rows.iter().map(|r| r.active_devices).collect();
    sqlx::query(
        "WITH measured AS (
             SELECT * FROM unnest($2::uuid[], $3::float8[], $4::float8[], $5::float8[], $6::int4[], $8::int4[])
                 AS m(booking_id, busy, memory, power, devices, active)),
         inserted AS (
             INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, power_w, devices, active_devices,
                                       simulated)
             SELECT booking_id, $1, busy, memory, power, devices, active, $7 FROM measured
             ON CONFLICT (booking_id, minute) DO NOTHING
             RETURNING booking_id, busy, memory_used_mib, power_w, active_devices::float8 / devices AS active),
         weighted AS (
             SELECT b.pool_id, b.tenant_id, b.user_id, i.busy * b.quantity / k.slices_per_gpu AS busy,
                    i.active * b.quantity / k.slices_per_gpu AS active, b.quantity / k.slices_per_gpu::float8 AS sampled
             FROM inserted i JOIN booking b ON b.id = i.booking_id
             JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind),
         pool_hours AS (
             INSERT INTO usage_pool_hour AS p (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, active_gpu_minutes,
                                               simulated)
             SELECT pool_id, date_trunc('hour', $1, 'UTC'), sum(busy), sum(sampled), sum(active), $7
             FROM weighted GROUP BY pool_id
             ON CONFLICT (pool_id, hour) DO UPDATE SET
                 busy_gpu_minutes = p.busy_gpu_minutes + excluded.busy_gpu_minutes,
                 sampled_gpu_minutes = p.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
                 active_gpu_minutes = p.active_gpu_minutes + excluded.active_gpu_minutes,
                 simulated = p.simulated OR excluded.simulated),
         days AS (
             INSERT INTO usage_day AS d (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes,
                                         active_gpu_minutes, simulated)
             SELECT ($1 AT TIME ZONE 'UTC')::date, pool_id, tenant_id, user_id, sum(busy), sum(sampled), sum(active), $7
             FROM weighted GROUP BY pool_id, tenant_id, user_id
             ON CONFLICT (day, pool_id, tenant_id, user_id) DO UPDATE SET
                 busy_gpu_minutes = d.busy_gpu_minutes + excluded.busy_gpu_minutes,
                 sampled_gpu_minutes = d.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
                 active_gpu_minutes = d.active_gpu_minutes + excluded.active_gpu_minutes,
                 simulated = d.simulated OR excluded.simulated),
         months AS (
             INSERT INTO usage_month AS m (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes,
                                           active_gpu_minutes, simulated)
             SELECT date_trunc('month', $1 AT TIME ZONE 'UTC')::date, pool_id, tenant_id, user_id, sum(busy), sum(sampled),
                    sum(active), $7
             FROM weighted GROUP BY pool_id, tenant_id, user_id
             ON CONFLICT (month, pool_id, tenant_id, user_id) DO UPDATE SET
                 busy_gpu_minutes = m.busy_gpu_minutes + excluded.busy_gpu_minutes,
                 sampled_gpu_minutes = m.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
                 active_gpu_minutes = m.active_gpu_minutes + excluded.active_gpu_minutes,
                 simulated = m.simulated OR excluded.simulated)
         INSERT INTO usage_hour AS h (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                                      active_unit_minutes, memory_max_mib, energy_wh, simulated)
         SELECT i.booking_id, date_trunc('hour', $1, 'UTC'), b.pool_id, b.tenant_id, b.user_id, 1,
                i.busy * b.quantity, i.active * b.quantity, i.memory_used_mib, coalesce(i.power_w, 0) / 60, $7
         FROM inserted i JOIN booking b ON b.id = i.booking_id
         ON CONFLICT (booking_id, hour) DO UPDATE SET
             samples = h.samples + 1,
             busy_unit_minutes = h.busy_unit_minutes + excluded.busy_unit_minutes,
             active_unit_minutes = h.active_unit_minutes + excluded.active_unit_minutes,
             memory_max_mib = greatest(h.memory_max_mib, excluded.memory_max_mib),
             energy_wh = h.energy_wh + excluded.energy_wh",
    )
    .bind(minute)
    .bind(&ids)
    .bind(&busy)
    .bind(&memory)
    .bind(&power)
    .bind(&devices)
    .bind(simulated)
    .bind(&active)
    .execute(db)
    .await?;
    store_devices(db, minute, rows).await?;
    // Retention once an hour is enough: a few extra hours of minutes harm nothing.
    if minute == minute.duration_trunc(Duration::hours(1)).unwrap_or(minute) {
        for table in ["usage_minute", "usage_device_minute"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE minute < $1 - make_interval(days => $2)"))
                .bind(minute)
                .bind(MINUTE_RETENTION_DAYS)
                .execute(db)
                .await?;
        }
    }
    Ok(())
}

/// Each device's minute, for the charts; a minute measured twice is kept once.
async fn store_devices(db: &PgPool, minute: DateTime<Utc>, rows: &[MinuteUsage]) -> sqlx::Result<()> {
    let devices = rows.iter().flat_map(|r| r.per_device.iter().map(move |d| (r.booking_id, d)));
    let (mut ids, mut names, mut busy, mut memory) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (booking, device) in devices {
        ids.push(booking);
        names.push(device.device.clone());
        busy.push(device.busy);
        memory.push(device.memory_used_mib);
    }
    sqlx::query(
        "INSERT INTO usage_device_minute (booking_id, device, minute, busy, memory_used_mib)
         SELECT b, d, $1, busy, memory FROM unnest($2::uuid[], $3::text[], $4::float8[], $5::float8[]) AS m(b, d, busy, memory)
         ON CONFLICT DO NOTHING",
    )
    .bind(minute)
    .bind(&ids)
    .bind(&names)
    .bind(&busy)
    .bind(&memory)
    .execute(db)
    .await?;
    Ok(())
}

/// Notes that the owner opened the workspace now.
pub async fn record_workspace_open(db: &PgPool, booking: uuid::Uuid) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO workspace_open (booking_id) VALUES ($1) ON CONFLICT (booking_id) DO UPDATE SET last_at = now()",
    )
    .bind(booking)
    .execute(db)
    .await?;
    Ok(())
}

/// Samples each minute just after it ends (a few seconds later, so the last
/// scrape of it has landed) until the task is dropped.
pub async fn run(sampler: Sampler, db: PgPool) {
    loop {
        let now = Utc::now();
        let next = minute_of(now) + Duration::minutes(1) + Duration::seconds(5);
        tokio::time::sleep((next - now).to_std().unwrap_or_default()).await;
        let started = std::time::Instant::now();
        match sampler.round(&db, minute_of(next) - Duration::minutes(1)).await {
            Ok(round) => {
                crate::metrics::usage_round(started.elapsed(), round.queries, round.gap);
                tracing::debug!(?round, "usage sampled");
            }
            Err(err) => tracing::warn!(error = %err, "usage sampling failed; trying again next minute"),
        }
        // Idle reclaim reads the minutes just written; a gap leaves every booking as it was.
        match app::backend::sessions::idle_reclaim::pass(&db).await {
            Ok(done) if done != Default::default() => tracing::info!(?done, "idle reclaim"),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "idle reclaim failed; trying again next minute"),
        }
    }
}
