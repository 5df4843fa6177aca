//! The report's table: one SQL statement per report, grouped by pool, tenant
//! or user. Every figure is cut to the period `[$1, $2)`.

use crate::backend::error::ServiceResult;
use crate::model::{ReportGroup, ReportRow};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The statement for one grouping; `{key}` is a column every source table
/// has (pool_id, tenant_id or user_id), chosen from the enum, never from input.
fn statement(group: ReportGroup) -> String {
    let (key, name, every_pool) = match group {
        ReportGroup::Pool => ("pool_id", "(SELECT name FROM pool WHERE id = k.key)", "UNION SELECT id FROM pool"),
        ReportGroup::Tenant => ("tenant_id", "(SELECT slug FROM tenant WHERE id = k.key)", ""),
        ReportGroup::User => ("user_id", "(SELECT email FROM app_user WHERE id = k.key)", ""),
    };
    // Hours of a row's window inside the period.
    let inside =
        |start: &str, end: &str| format!("extract(epoch FROM least({end}, $2) - greatest({start}, $1)) / 3600");
    let booked_hours = inside("b.starts_at", "b.ends_at");
    let returned_hours = inside("b.ends_at", "b.planned_ends_at");
    let asked_hours = inside("b.starts_at", "b.ends_at");
    format!(
        "WITH booked AS (
            SELECT b.{key} AS key,
                   sum(b.quantity * gpu_share(b.kind) * {booked_hours}) AS gpu_hours,
                   sum(p.price_per_unit_hour * b.quantity * {booked_hours}) AS cost
            FROM booking b JOIN pool p ON p.id = b.pool_id
            WHERE b.ends_at > $1 AND b.starts_at < $2 AND b.state IN ('approved', 'active', 'completed')
            GROUP BY 1),
         returned AS (
            SELECT b.{key} AS key, sum(b.quantity * gpu_share(b.kind) * {returned_hours}) AS gpu_hours
            FROM booking b
            WHERE b.planned_ends_at > b.ends_at AND b.planned_ends_at > $1 AND b.ends_at < $2
            GROUP BY 1),
         no_shows AS (
            SELECT b.{key} AS key, count(*) AS n FROM booking b
            WHERE b.released_as = 'no_show' AND b.starts_at >= $1 AND b.starts_at < $2
            GROUP BY 1),
         measured AS (
            SELECT b.{key} AS key,
                   sum(u.busy_unit_minutes * gpu_share(b.kind)) / 60 AS busy,
                   sum(u.samples * b.quantity * gpu_share(b.kind)) / 60 AS sampled,
                   bool_or(u.simulated) AS simulated
            FROM usage_hour u JOIN booking b ON b.id = u.booking_id
            WHERE u.hour >= $1 AND u.hour < $2
            GROUP BY 1),
         refused AS (
            SELECT b.{key} AS key, sum(b.quantity * gpu_share(b.kind) * {asked_hours}) AS gpu_hours
            FROM booking_refusal b WHERE b.ends_at > $1 AND b.starts_at < $2
            GROUP BY 1),
         waitlisted AS (
            SELECT b.{key} AS key, sum(b.quantity * gpu_share(b.kind) * {asked_hours}) AS gpu_hours
            FROM waitlist_entry b WHERE b.state <> 'admitted' AND b.ends_at > $1 AND b.starts_at < $2
            GROUP BY 1),
         keys AS (
            SELECT key FROM booked UNION SELECT key FROM returned UNION SELECT key FROM no_shows
            UNION SELECT key FROM measured UNION SELECT key FROM refused UNION SELECT key FROM waitlisted
            {every_pool})
         SELECT k.key AS id, coalesce({name}, 'removed') AS name,
                coalesce(bk.gpu_hours, 0) AS booked_gpu_hours, coalesce(bk.cost, 0) AS showback_cost,
                coalesce(r.gpu_hours, 0) AS returned_gpu_hours, coalesce(ns.n, 0) AS no_shows,
                coalesce(m.busy, 0) AS busy_gpu_hours, coalesce(m.sampled, 0) AS measured_gpu_hours,
                coalesce(m.simulated, false) AS simulated,
                coalesce(rf.gpu_hours, 0) AS refused_gpu_hours, coalesce(w.gpu_hours, 0) AS waitlisted_gpu_hours
         FROM keys k
         LEFT JOIN booked bk ON bk.key = k.key LEFT JOIN returned r ON r.key = k.key
         LEFT JOIN no_shows ns ON ns.key = k.key LEFT JOIN measured m ON m.key = k.key
         LEFT JOIN refused rf ON rf.key = k.key LEFT JOIN waitlisted w ON w.key = k.key
         ORDER BY 2"
    )
}

#[derive(sqlx::FromRow)]
struct Summed {
    id: Uuid,
    name: String,
    booked_gpu_hours: f64,
    showback_cost: f64,
    returned_gpu_hours: f64,
    no_shows: i64,
    busy_gpu_hours: f64,
    measured_gpu_hours: f64,
    simulated: bool,
    refused_gpu_hours: f64,
    waitlisted_gpu_hours: f64,
}

/// Each pool's capacity GPU-hours in the period, less the union of its
/// blackouts (one covering every kind, or the kind's own).
pub async fn capacities(db: &PgPool, from: DateTime<Utc>, to: DateTime<Utc>) -> ServiceResult<Vec<(Uuid, f64)>> {
    Ok(sqlx::query_as(
        "SELECT k.pool_id, sum(k.capacity * gpu_share(k.kind)
                    * (extract(epoch FROM $2 - $1) - coalesce(closed.seconds, 0)) / 3600)::float8
         FROM pool_kind k
         LEFT JOIN LATERAL (
             SELECT sum(extract(epoch FROM upper(r) - lower(r))) AS seconds
             FROM unnest((SELECT range_agg(tstzrange(greatest(x.starts_at, $1), least(x.ends_at, $2)))
                          FROM blackout x
                          WHERE x.pool_id = k.pool_id AND (x.kind IS NULL OR x.kind = k.kind)
                            AND x.ends_at > $1 AND x.starts_at < $2)) r
         ) closed ON true
         GROUP BY k.pool_id",
    )
    .bind(from)
    .bind(to)
    .fetch_all(db)
    .await?)
}

fn pct(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| part / whole * 100.0)
}

/// Fills in the shares once the sums are known.
pub fn finish(mut row: ReportRow) -> ReportRow {
    row.booking_utilization_pct = row.capacity_gpu_hours.and_then(|c| pct(row.booked_gpu_hours, c));
    row.busy_utilization_pct = pct(row.busy_gpu_hours, row.measured_gpu_hours);
    row.idle_booked_gpu_hours = (row.measured_gpu_hours - row.busy_gpu_hours).max(0.0);
    row
}

pub async fn rows(
    db: &PgPool,
    group: ReportGroup,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    capacity: &[(Uuid, f64)],
) -> ServiceResult<Vec<ReportRow>> {
    let summed: Vec<Summed> = sqlx::query_as(&statement(group)).bind(from).bind(to).fetch_all(db).await?;
    Ok(summed
        .into_iter()
        .map(|s| {
            let capacity_gpu_hours = (group == ReportGroup::Pool)
                .then(|| capacity.iter().find(|(pool, _)| *pool == s.id).map_or(0.0, |(_, c)| *c));
            finish(ReportRow {
                id: Some(s.id),
                name: s.name,
                capacity_gpu_hours,
                booked_gpu_hours: s.booked_gpu_hours,
                measured_gpu_hours: s.measured_gpu_hours,
                busy_gpu_hours: s.busy_gpu_hours,
                no_shows: s.no_shows,
                returned_gpu_hours: s.returned_gpu_hours,
                refused_gpu_hours: s.refused_gpu_hours,
                waitlisted_gpu_hours: s.waitlisted_gpu_hours,
                showback_cost: s.showback_cost,
                simulated: s.simulated,
                ..ReportRow::default()
            })
        })
        .collect())
}

/// The totals row: the sum of the rows, against every pool's capacity.
pub fn total(rows: &[ReportRow], capacity: &[(Uuid, f64)]) -> ReportRow {
    let sum = |f: fn(&ReportRow) -> f64| rows.iter().map(f).sum::<f64>();
    finish(ReportRow {
        id: None,
        name: "All".into(),
        capacity_gpu_hours: Some(capacity.iter().map(|(_, c)| c).sum()),
        booked_gpu_hours: sum(|r| r.booked_gpu_hours),
        measured_gpu_hours: sum(|r| r.measured_gpu_hours),
        busy_gpu_hours: sum(|r| r.busy_gpu_hours),
        no_shows: rows.iter().map(|r| r.no_shows).sum(),
        returned_gpu_hours: sum(|r| r.returned_gpu_hours),
        refused_gpu_hours: sum(|r| r.refused_gpu_hours),
        waitlisted_gpu_hours: sum(|r| r.waitlisted_gpu_hours),
        showback_cost: sum(|r| r.showback_cost),
        simulated: rows.iter().any(|r| r.simulated),
        ..ReportRow::default()
    })
}
