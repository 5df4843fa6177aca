//! The report's charts: booked, busy and capacity GPU-hours per UTC hour of
//! the period, folded into trend buckets (hours, days or weeks in the
//! report's zone) and a weekday x hour occupancy heat map.

use crate::backend::clusters::pool_on_cluster as on_cluster;
use crate::backend::error::ServiceResult;
use crate::backend::reports::period::{epoch_hours, Settled};
use crate::model::{figure, HeatCell, TrendPoint};
use chrono::{DateTime, Datelike, Days, DurationRound, NaiveDate, TimeDelta, Timelike, Utc};
use chrono_tz::Tz;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Clone, Copy, Default)]
struct Hour {
    capacity: f64,
    booked: f64,
    busy: f64,
}

fn overlap_hours(a: (DateTime<Utc>, DateTime<Utc>), b: (DateTime<Utc>, DateTime<Utc>)) -> f64 {
    let seconds = (a.1.min(b.1) - a.0.max(b.0)).num_seconds();
    seconds.max(0) as f64 / 3600.0
}

async fn hours(
    db: &mut PgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    settled: &Settled,
    cluster: Option<Uuid>,
) -> ServiceResult<BTreeMap<DateTime<Utc>, Hour>> {
    let hour = TimeDelta::hours(1);
    let first = from.duration_trunc(hour).unwrap_or(from);
    let count = ((to - first).num_seconds() + 3599) / 3600;
    let start_of = |index: i64| first + TimeDelta::hours(index);
    // Each kind's merged blackouts, weighted by the kind's whole-GPU capacity.
    let closed: Vec<(f64, DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(&format!(
        "SELECT k.capacity::float8 / k.slices_per_gpu, lower(r), upper(r)
         FROM pool_kind k
         CROSS JOIN LATERAL unnest((SELECT range_agg(tstzrange(greatest(x.starts_at, $1), least(x.ends_at, $2)))
                                    FROM blackout x
                                    WHERE x.pool_id = k.pool_id AND (x.kind IS NULL OR x.kind = k.kind)
                                      AND x.ends_at > $1 AND x.starts_at < $2)) r
         WHERE {}",
        on_cluster("k.", "$3")
    ))
    .bind(from)
    .bind(to)
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?;
    // Each kind's whole GPUs, counted from when the kind was added.
    let kinds: Vec<(f64, DateTime<Utc>)> = sqlx::query_as(&format!(
        "SELECT capacity::float8 / slices_per_gpu, created_at FROM pool_kind WHERE created_at < $1 AND {}",
        on_cluster("", "$2")
    ))
    .bind(to)
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?;
    let mut series: Vec<Hour> = (0..count)
        .map(|index| {
            let slot = (start_of(index), start_of(index) + hour);
            let open: f64 = kinds.iter().map(|(gpus, since)| gpus * overlap_hours(slot, (from.max(*since), to))).sum();
            let blacked: f64 = closed.iter().map(|(w, s, e)| w * overlap_hours(slot, (*s, *e))).sum();
            Hour { capacity: (open - blacked).max(0.0), ..Hour::default() }
        })
        .collect();
    // Booked: the settled months from their roll-up, the hours around them
    // from the bookings. The roll-up sums every pool: one cluster's report
    // reads all of its period from its pools' bookings.
    let settled = if cluster.is_some() { Settled::none(to) } else { *settled };
    for (lo, hi) in [(from, settled.from), (settled.to, to)] {
        let offset = (lo.duration_trunc(hour).unwrap_or(lo) - first).num_hours();
        for (index, gpu_hours) in booked_per_hour(db, lo, hi, cluster).await?.into_iter().enumerate() {
            if let Some(slot) = usize::try_from(offset).ok().and_then(|o| series.get_mut(o + index)) {
                slot.booked += gpu_hours;
            }
        }
    }
    let rolled: Vec<(DateTime<Utc>, f64)> =
        sqlx::query_as("SELECT hour, gpu_hours FROM booking_hour WHERE hour >= $1 AND hour < $2")
            .bind(settled.from)
            .bind(settled.to)
            .fetch_all(&mut *db)
            .await?;
    for (at, gpu_hours) in rolled {
        if let Some(slot) = usize::try_from((at - first).num_hours()).ok().and_then(|i| series.get_mut(i)) {
            slot.booked += gpu_hours;
        }
    }
    let busy: Vec<(DateTime<Utc>, f64)> = sqlx::query_as(&format!(
        "SELECT hour, (sum(busy_gpu_minutes) / 60)::float8 FROM usage_pool_hour
         WHERE hour >= $1 AND hour < $2 AND {} GROUP BY hour",
        on_cluster("", "$3")
    ))
    .bind(first)
    .bind(to)
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?;
    for (at, gpu_hours) in busy {
        if let Some(slot) = usize::try_from((at - first).num_hours()).ok().and_then(|i| series.get_mut(i)) {
            slot.busy += gpu_hours;
        }
    }
    Ok(series.into_iter().enumerate().map(|(index, slot)| (start_of(index as i64), slot)).collect())
}

/// Booked whole-GPU hours in each UTC hour from `lo`'s to `hi`'s, counting
/// only `[lo, hi)` and the pools on `cluster` (every pool: `None`); empty
/// when `lo >= hi`.
pub(super) async fn booked_per_hour(
    db: &mut PgConnection,
    lo: DateTime<Utc>,
    hi: DateTime<Utc>,
    cluster: Option<Uuid>,
) -> ServiceResult<Vec<f64>> {
    if lo >= hi {
        return Ok(Vec::new());
    }
    let first = lo.duration_trunc(TimeDelta::hours(1)).unwrap_or(lo);
    let count = usize::try_from(((hi - first).num_seconds() + 3599) / 3600).unwrap_or(0);
    // From the bookings' starts (+GPUs) and ends (-GPUs), summed per hour in
    // SQL (at most one row per hour comes back): an hour holds what was
    // running at its start for the whole hour, plus each change in it for
    // the rest of the hour after it. One pass over the bookings feeds both
    // groupings; `gpu_share` is applied per kind, after.
    let changes: Vec<(i64, f64, f64)> = sqlx::query_as(&format!(
        "SELECT coalesce(starts_hour, ends_hour), sum(units * gpu_share(pool_id, kind)),
                sum(weighted * gpu_share(pool_id, kind))
         FROM (SELECT pool_id, kind, floor(s)::int8 AS starts_hour, floor(e)::int8 AS ends_hour,
                      CASE WHEN grouping(floor(s)::int8) = 0 THEN sum(quantity) ELSE -sum(quantity) END AS units,
                      CASE WHEN grouping(floor(s)::int8) = 0 THEN sum(quantity * (s - floor(s)))
                           ELSE -sum(quantity * (e - floor(e))) END AS weighted
               FROM (SELECT pool_id, kind, quantity, greatest(starts_epoch_h, $3) - $5 AS s,
                            least(ends_epoch_h, $4) - $5 AS e
                     FROM booking
                     WHERE ends_at > $1 AND starts_at < $2 AND state IN ({})
                       AND {}) b
               GROUP BY GROUPING SETS ((pool_id, kind, floor(s)::int8), (pool_id, kind, floor(e)::int8))) per_kind
         GROUP BY 1",
        crate::model::BookingState::sql_list(&crate::model::BookingState::BOOKED),
        on_cluster("", "$6")
    ))
    .bind(lo)
    .bind(hi)
    .bind(epoch_hours(lo))
    .bind(epoch_hours(hi))
    .bind(epoch_hours(first))
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?;
    let mut per_hour = vec![(0.0_f64, 0.0_f64); count + 1];
    for (hour, gpus, weighted) in changes {
        if let Some(slot) = usize::try_from(hour).ok().and_then(|h| per_hour.get_mut(h)) {
            *slot = (gpus, weighted);
        }
    }
    let mut running = 0.0;
    Ok(per_hour[..count]
        .iter()
        .map(|(gpus, weighted)| {
            let booked = running + gpus - weighted;
            running += gpus;
            booked
        })
        .collect())
}

/// Trend buckets: hours for up to two days, days up to two months, else weeks.
pub fn bucket_name(from: DateTime<Utc>, to: DateTime<Utc>) -> &'static str {
    match (to - from).num_hours() {
        h if h <= 48 => "hour",
        h if h <= 62 * 24 => "day",
        _ => "week",
    }
}

fn bucket_start(at: DateTime<Utc>, bucket: &str, tz: &Tz) -> DateTime<Utc> {
    let local = at.with_timezone(tz);
    let day = |date: NaiveDate| crate::rules::local_time::local_midnight(*tz, date);
    match bucket {
        "hour" => at,
        "day" => day(local.date_naive()),
        _ => day(local.date_naive() - Days::new(u64::from(local.weekday().num_days_from_monday()))),
    }
}

pub struct Charts {
    pub bucket: &'static str,
    pub trend: Vec<TrendPoint>,
    pub heatmap: Vec<HeatCell>,
}

pub async fn charts(
    db: &mut PgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    settled: &Settled,
    (tz, cluster): (&Tz, Option<Uuid>),
) -> ServiceResult<Charts> {
    let series = hours(db, from, to, settled, cluster).await?;
    let bucket = bucket_name(from, to);
    let mut trend: BTreeMap<DateTime<Utc>, TrendPoint> = BTreeMap::new();
    let mut heat = [[(0.0_f64, 0.0_f64); 24]; 7];
    for (at, slot) in &series {
        let start = bucket_start(*at, bucket, tz).max(from);
        let point = trend.entry(start).or_insert_with(|| TrendPoint {
            start,
            label: start.with_timezone(tz).format(if bucket == "hour" { "%a %H:%M" } else { "%a %d %b" }).to_string(),
            capacity_gpu_hours: 0.0,
            booked_gpu_hours: 0.0,
            busy_gpu_hours: 0.0,
        });
        point.capacity_gpu_hours += slot.capacity;
        point.booked_gpu_hours += slot.booked;
        point.busy_gpu_hours += slot.busy;
        let local = at.with_timezone(tz);
        let cell = &mut heat[local.weekday().num_days_from_monday() as usize][local.hour() as usize];
        cell.0 += slot.booked;
        cell.1 += slot.capacity;
    }
    let heatmap = (0..7u8)
        .flat_map(|weekday| (0..24u8).map(move |hour| (weekday, hour)))
        .map(|(weekday, hour)| {
            let (booked, capacity) = heat[weekday as usize][hour as usize];
            HeatCell { weekday, hour, occupancy_pct: (capacity > 0.0).then(|| figure(booked / capacity * 100.0)) }
        })
        .collect();
    let trend = trend
        .into_values()
        .map(|p| TrendPoint {
            capacity_gpu_hours: figure(p.capacity_gpu_hours),
            booked_gpu_hours: figure(p.booked_gpu_hours),
            busy_gpu_hours: figure(p.busy_gpu_hours),
            ..p
        })
        .collect();
    Ok(Charts { bucket, trend, heatmap })
}
