//! Settled months: the worker's sweep rolls each past UTC month's bookings
//! up once (`booking_month` for the table, `booking_hour` for the charts),
//! so a year's report reads a few thousand rows instead of every booking.
//! A trigger on `booking` forgets a month when a change reaches it (see the
//! migration `20261123070000_booking_rollups.sql`).

use crate::backend::error::ServiceResult;
use crate::backend::reports::charts::booked_per_hour;
use crate::backend::reports::figures::booking_figures;
use crate::backend::reports::period::{epoch_hours, Settled};
use chrono::{DateTime, Datelike, Months, NaiveDate, TimeZone, Utc};
use sqlx::{PgConnection, PgPool};

/// A month is settled once it ended this long ago: the trigger watches
/// bookings that started more than a day ago, and a second day leaves room
/// for a transaction that was already under way.
const SETTLE_AFTER_DAYS: i32 = 2;

/// Months one sweep settles at most (the first sweep of a database with
/// years of bookings spreads the work over several sweeps).
const MONTHS_PER_SWEEP: i64 = 24;

fn month_start(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

fn midnight(date: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0).unwrap_or_default())
}

/// The whole UTC months inside `[from, to)`, as first days `[first, end)`.
fn whole_months(from: DateTime<Utc>, to: DateTime<Utc>) -> (NaiveDate, NaiveDate) {
    let floor = month_start(from.date_naive());
    let first = if midnight(floor) == from { floor } else { floor + Months::new(1) };
    (first, month_start(to.date_naive()))
}

/// The longest run of consecutive months in `months` (sorted, ascending).
fn longest_run(months: &[NaiveDate]) -> Option<(NaiveDate, NaiveDate)> {
    let mut best: Option<(NaiveDate, NaiveDate)> = None;
    let mut run: Option<(NaiveDate, NaiveDate)> = None;
    for &month in months {
        let next = month + Months::new(1);
        run = match run {
            Some((start, end)) if end == month => Some((start, next)),
            _ => Some((month, next)),
        };
        let longer = |(s, e): (NaiveDate, NaiveDate), (bs, be): (NaiveDate, NaiveDate)| e - s > be - bs;
        if best.is_none_or(|b| run.is_some_and(|r| longer(r, b))) {
            best = run;
        }
    }
    best
}

/// The settled months inside `[from, to)` that a report reads from the
/// roll-ups: the longest unbroken run (a month forgotten in the middle of
/// a year is settled again by the next sweep; until then the months on one
/// side of it are read from the bookings).
pub async fn settled(db: &mut PgConnection, from: DateTime<Utc>, to: DateTime<Utc>) -> ServiceResult<Settled> {
    let (first, end) = whole_months(from, to);
    if first >= end {
        return Ok(Settled::none(to));
    }
    let months: Vec<NaiveDate> =
        sqlx::query_scalar("SELECT month FROM booking_month_settled WHERE month >= $1 AND month < $2 ORDER BY month")
            .bind(first)
            .bind(end)
            .fetch_all(&mut *db)
            .await?;
    Ok(longest_run(&months).map_or(Settled::none(to), |(a, b)| Settled { from: midnight(a), to: midnight(b) }))
}

/// Settles the months that ended long enough ago and are not settled,
/// oldest first; answers how many it settled.
pub async fn settle_due(db: &PgPool) -> ServiceResult<u64> {
    let due: Vec<NaiveDate> = sqlx::query_scalar(
        "SELECT m::date FROM generate_series(
             date_trunc('month', (SELECT min(starts_at) FROM booking) AT TIME ZONE 'UTC'),
             date_trunc('month', (now() - make_interval(days => $1)) AT TIME ZONE 'UTC') - interval '1 month',
             interval '1 month') m
         WHERE NOT EXISTS (SELECT 1 FROM booking_month_settled s WHERE s.month = m::date)
         ORDER BY 1 LIMIT $2",
    )
    .bind(SETTLE_AFTER_DAYS)
    .bind(MONTHS_PER_SWEEP)
    .fetch_all(db)
    .await?;
    for &month in &due {
        settle(db, month).await?;
    }
    Ok(due.len() as u64)
}

/// Rolls one month up and marks it settled, in one transaction under the
/// lock the trigger takes.
pub async fn settle(db: &PgPool, month: NaiveDate) -> ServiceResult<()> {
    let (lo, hi) = (midnight(month), midnight(month + Months::new(1)));
    let mut tx = db.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('berth.booking_rollups'))").execute(&mut *tx).await?;
    sqlx::query("DELETE FROM booking_month WHERE month = $1").bind(month).execute(&mut *tx).await?;
    let figures =
        booking_figures(&["b.pool_id", "b.kind", "b.tenant_id", "b.user_id"], ("$1", "$2"), ("$3", "$4"), "true");
    sqlx::query(&format!(
        "INSERT INTO booking_month (month, pool_id, kind, tenant_id, user_id, booked_unit_hours,
                                    returned_unit_hours, no_shows)
         SELECT $5, pool_id, kind, tenant_id, user_id, unit_hours, returned_unit_hours, no_shows FROM ({figures}) f
         WHERE unit_hours <> 0 OR returned_unit_hours <> 0 OR no_shows <> 0"
    ))
    .bind(lo)
    .bind(hi)
    .bind(epoch_hours(lo))
    .bind(epoch_hours(hi))
    .bind(month)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM booking_hour WHERE hour >= $1 AND hour < $2").bind(lo).bind(hi).execute(&mut *tx).await?;
    let booked = booked_per_hour(&mut tx, lo, hi, None).await?;
    let hours: Vec<DateTime<Utc>> = (0..booked.len()).map(|i| lo + chrono::TimeDelta::hours(i as i64)).collect();
    sqlx::query(
        "INSERT INTO booking_hour (hour, gpu_hours)
         SELECT hour, gpu_hours FROM unnest($1::timestamptz[], $2::float8[]) AS h (hour, gpu_hours)
         WHERE gpu_hours <> 0",
    )
    .bind(&hours)
    .bind(&booked)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO booking_month_settled (month) VALUES ($1)
         ON CONFLICT (month) DO UPDATE SET settled_at = now()",
    )
    .bind(month)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::backend::reports::rollups::*;
    use chrono::TimeZone;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn whole_months_start_after_a_partial_one() {
        let at = |y, m, d, h| Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap();
        assert_eq!(whole_months(at(2025, 11, 23, 6), at(2026, 11, 23, 0)), (date(2025, 12, 1), date(2026, 11, 1)));
        assert_eq!(whole_months(at(2026, 10, 1, 0), at(2026, 11, 1, 0)), (date(2026, 10, 1), date(2026, 11, 1)));
        let (first, end) = whole_months(at(2026, 10, 2, 0), at(2026, 10, 30, 0));
        assert!(first >= end);
    }

    #[test]
    fn the_longest_unbroken_run_wins() {
        let months = [date(2026, 1, 1), date(2026, 2, 1), date(2026, 4, 1), date(2026, 5, 1), date(2026, 6, 1)];
        assert_eq!(longest_run(&months), Some((date(2026, 4, 1), date(2026, 7, 1))));
        assert_eq!(longest_run(&months[..1]), Some((date(2026, 1, 1), date(2026, 2, 1))));
        assert_eq!(longest_run(&[]), None);
    }
}
