//! The device charts of live sessions: each GPU's or MIG instance's engine
//! busy and memory used over a range, 60 points a chart (one statement for
//! every session shown), on a time axis with ticks in the reader's zone.

use crate::backend::error::ServiceResult;
use crate::model::{ChartAxis, ChartPoint, ChartRange, DeviceChart};
use crate::rules::local_time::zone;
use chrono::{DateTime, Duration, DurationRound, Timelike, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// The axis of `range` ending at the minute `now` falls in.
pub fn axis(range: ChartRange, now: DateTime<Utc>, tz: &str) -> ChartAxis {
    let to = now.duration_trunc(Duration::minutes(1)).unwrap_or(now);
    let from = to - range.length();
    let tz = zone(tz);
    let (step, format) = match range {
        ChartRange::Hour => (Duration::minutes(15), "%H:%M"),
        ChartRange::SixHours => (Duration::hours(1), "%H:%M"),
        ChartRange::Day => (Duration::hours(4), "%H:%M"),
        ChartRange::Week => (Duration::days(1), "%a %d"),
    };
    // The first tick on a local round time (midnight for days): a zone an
    // odd half hour from UTC still ticks on its own hours.
    let local = from.with_timezone(&tz);
    let since_midnight = Duration::seconds(i64::from(local.num_seconds_from_midnight()));
    let midnight = from - since_midnight;
    let mut at = midnight;
    while at < from {
        at += step;
    }
    let mut ticks = Vec::new();
    while at <= to {
        ticks.push((at, at.with_timezone(&tz).format(format).to_string()));
        at += step;
    }
    ChartAxis { range, from, to, ticks, zone: tz.name().to_string() }
}

#[derive(sqlx::FromRow)]
struct Bucket {
    booking_id: Uuid,
    device: String,
    at: DateTime<Utc>,
    busy: f64,
    memory_mib: f64,
}

/// Each booking's devices over the axis, by booking; a device with nothing
/// measured in the range has no chart.
pub async fn charts(
    db: &PgPool,
    bookings: &[Uuid],
    axis: &ChartAxis,
) -> ServiceResult<HashMap<Uuid, Vec<DeviceChart>>> {
    if bookings.is_empty() {
        return Ok(HashMap::new());
    }
    let bucket_minutes = axis.range.bucket().num_minutes() as i32;
    let rows: Vec<Bucket> = sqlx::query_as(
        "SELECT booking_id, device, date_bin(make_interval(mins => $4), minute, $2) AS at,
                avg(busy)::float8 AS busy, max(memory_used_mib)::float8 AS memory_mib
         FROM usage_device_minute
         WHERE booking_id = ANY($1) AND minute >= $2 AND minute < $3
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .bind(bookings)
    .bind(axis.from)
    .bind(axis.to)
    .bind(bucket_minutes)
    .fetch_all(db)
    .await?;
    let mut by_booking: HashMap<Uuid, Vec<DeviceChart>> = HashMap::new();
    for row in rows {
        let charts = by_booking.entry(row.booking_id).or_default();
        if charts.last().is_none_or(|c| c.device != row.device) {
            charts.push(DeviceChart { device: row.device.clone(), points: Vec::new() });
        }
        if let Some(chart) = charts.last_mut() {
            chart.points.push(ChartPoint {
                at: row.at,
                busy_pct: (row.busy * 100.0) as f32,
                memory_gib: (row.memory_mib / 1024.0) as f32,
            });
        }
    }
    Ok(by_booking)
}

/// One booking's charts for its page: only its holders and admins read
/// them (teammates see the tenant's dashboard); nothing before it begins.
pub async fn for_booking(
    db: &PgPool,
    principal: &crate::model::Principal,
    id: Uuid,
    range: ChartRange,
    tz: &str,
) -> ServiceResult<Option<crate::model::SessionCharts>> {
    let booking = crate::backend::bookings::get(db, principal, id).await?;
    let now = crate::backend::db_now(db).await?;
    if !(booking.mine || principal.is_admin()) || booking.start > now {
        return Ok(None);
    }
    let axis = axis(range, now, tz);
    let devices = charts(db, &[id], &axis).await?.remove(&id).unwrap_or_default();
    let simulated: bool =
        sqlx::query_scalar("SELECT coalesce(bool_or(simulated), false) FROM usage_hour WHERE booking_id = $1")
            .bind(id)
            .fetch_one(db)
            .await?;
    Ok(Some(crate::model::SessionCharts { axis, devices, simulated }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn ticks_fall_on_the_readers_round_times() {
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 14, 7, 30).unwrap();
        let hour = axis(ChartRange::Hour, now, "Europe/Berlin");
        assert_eq!(hour.to, Utc.with_ymd_and_hms(2026, 11, 27, 14, 7, 0).unwrap());
        let labels: Vec<&str> = hour.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["14:15", "14:30", "14:45", "15:00"], "Berlin is UTC+1 in November");
        // Kolkata is UTC+5:30: its hours are on the half hour in UTC.
        let six = axis(ChartRange::SixHours, now, "Asia/Kolkata");
        assert!(six.ticks.iter().all(|(at, label)| at.minute() == 30 && label.ends_with(":00")), "{:?}", six.ticks);
        let week = axis(ChartRange::Week, now, "America/New_York");
        assert_eq!(week.ticks.len(), 7);
        assert_eq!(week.ticks[0].1, "Sat 21");
        assert_eq!(ChartRange::Week.bucket(), Duration::minutes(168));
        assert_eq!(ChartRange::parse("nonsense"), ChartRange::Hour);
    }
}
