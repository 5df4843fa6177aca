//! What pools lent (`--kueue`, kinds with `lend_idle`): the worker reads how
//! many booked units each pool's backfill queue uses on every repair pass
//! and credits them for the time since its last reading, per hour, into
//! `lent_hour`; reports show them as GPU-hours.

use crate::backend::error::ServiceResult;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The longest stretch one reading is credited for: a few repair passes
/// (every 30 s). A worker that was away does not credit what it did not see.
pub const LONGEST_CREDIT: TimeDelta = TimeDelta::minutes(2);

/// `[from, to)` cut at hour boundaries: (hour, seconds in it).
fn per_hour(from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<(DateTime<Utc>, f64)> {
    let mut pieces = Vec::new();
    let mut at = from;
    while at < to {
        let hour = at.duration_trunc(TimeDelta::hours(1)).unwrap_or(at);
        let end = (hour + TimeDelta::hours(1)).min(to);
        pieces.push((hour, (end - at).num_milliseconds() as f64 / 1000.0));
        at = end;
    }
    pieces
}

/// Records a reading at the database's now: `units` of `kind` used by the
/// backfill of `pool` (0 when none), crediting the previous reading's units
/// for the time since it, at most `LONGEST_CREDIT`.
pub async fn record(db: &PgPool, readings: &[(Uuid, String, f64)]) -> ServiceResult<()> {
    if readings.is_empty() {
        return Ok(());
    }
    let mut tx = db.begin().await?;
    let now = crate::backend::db_now(&mut *tx).await?;
    for (pool, kind, units) in readings {
        let previous: Option<(DateTime<Utc>, f64)> =
            sqlx::query_as("SELECT at, units FROM lent_sample WHERE pool_id = $1 AND kind = $2 FOR UPDATE")
                .bind(pool)
                .bind(kind)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some((at, lent)) = previous.filter(|(at, lent)| *lent > 0.0 && *at < now) {
            for (hour, seconds) in per_hour(at.max(now - LONGEST_CREDIT), now) {
                sqlx::query(
                    "INSERT INTO lent_hour AS h (pool_id, kind, hour, unit_seconds) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (pool_id, kind, hour) DO UPDATE SET unit_seconds = h.unit_seconds + excluded.unit_seconds",
                )
                .bind(pool)
                .bind(kind)
                .bind(hour)
                .bind(lent * seconds)
                .execute(&mut *tx)
                .await?;
            }
        }
        // A pool's sample row stays while it is read; a reading of 0 after 0 writes nothing new.
        if previous.is_some_and(|(_, lent)| lent == 0.0) && *units == 0.0 {
            continue;
        }
        sqlx::query(
            "INSERT INTO lent_sample (pool_id, kind, at, units) VALUES ($1, $2, $3, $4)
             ON CONFLICT (pool_id, kind) DO UPDATE SET at = excluded.at, units = excluded.units",
        )
        .bind(pool)
        .bind(kind)
        .bind(now)
        .bind(units)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretch_is_cut_at_hour_boundaries() {
        let at =
            |h: u32, m: u32| DateTime::parse_from_rfc3339(&format!("2026-11-26T{h:02}:{m:02}:00Z")).unwrap().to_utc();
        assert_eq!(per_hour(at(9, 59), at(10, 1)), vec![(at(9, 0), 60.0), (at(10, 0), 60.0)]);
        assert_eq!(per_hour(at(10, 0), at(10, 0)), vec![]);
    }
}
