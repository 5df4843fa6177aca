//! The report's table: one SQL statement per report, grouped by pool,
//! cluster, tenant or user. Every figure is cut to the period `[$1, $2)`.

use crate::backend::clusters::pool_on_cluster as on_cluster;
use crate::backend::error::ServiceResult;
use crate::backend::reports::period::{epoch_hours, Settled};
use crate::model::{figure, ReportGroup, ReportRow};
use chrono::{DateTime, Datelike, DurationRound, Months, NaiveDate, TimeDelta, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

/// Booked and returned unit-hours and no-shows per `columns` of the bookings
/// with hours in `[lo, hi)`, cut to it (`lo`, `hi`: instants, `lo_h`,
/// `hi_h`: the same in hours since the Unix epoch; SQL parameters) and
/// kept to the rows `scope` admits. The report reads its unsettled edges
/// with it, the sweep a month it settles.
pub(super) fn booking_figures(
    columns: &[&str],
    (lo, hi): (&str, &str),
    (lo_h, hi_h): (&str, &str),
    scope: &str,
) -> String {
    let group_by = (1..=columns.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let booked = crate::model::BookingState::sql_list(&crate::model::BookingState::BOOKED);
    let columns = columns.join(", ");
    // Float arithmetic on the generated epoch-hour columns, not intervals:
    // it runs once per booking.
    format!(
        "SELECT {columns},
                coalesce(sum(b.quantity * (least(b.ends_epoch_h, {hi_h}) - greatest(b.starts_epoch_h, {lo_h})))
                    FILTER (WHERE b.ends_at > {lo} AND b.starts_at < {hi}
                                  AND b.state IN ({booked})), 0) AS unit_hours,
                coalesce(sum(b.quantity * (least(b.planned_ends_epoch_h, {hi_h}) - greatest(b.ends_epoch_h, {lo_h})))
                    FILTER (WHERE b.planned_ends_at > b.ends_at AND b.planned_ends_at > {lo} AND b.ends_at < {hi}), 0)
                    AS returned_unit_hours,
                count(*) FILTER (WHERE b.released_as = 'no_show' AND b.starts_at >= {lo} AND b.starts_at < {hi})
                    AS no_shows
         FROM booking b
         WHERE {lo} < {hi} AND ((b.ends_at > {lo} AND b.starts_at < {hi}) OR (b.planned_ends_at > {lo} AND b.ends_at < {hi}))
           AND {scope}
         GROUP BY {group_by}"
    )
}

/// The statement for one grouping; `{key}` is a column every source table
/// has (pool_id, tenant_id or user_id), chosen from the enum, never from
/// input. Rows are summed per key, pool and kind first, so `gpu_share` and
/// `unit_price` are applied once per group rather than once per booking.
/// $1, $2: the period; $3, $4: the whole UTC days inside it (empty if none),
/// as instants; $5, $6: the same as dates; $7, $8: the whole UTC months
/// inside those days; $9, $10: the period in hours since the Unix epoch;
/// $11, $12: the settled months inside it (`Settled`), $13, $14 the same in
/// epoch hours, $15, $16 as dates; $17: the one cluster whose pools count
/// (NULL: every pool).
/// Bookings come from `booking_month` for the settled months and from the
/// bookings themselves before and after them. Measured use comes from
/// `usage_month` for the whole months, `usage_day` for the other whole days
/// and `usage_hour` for the rest.
fn statement(group: ReportGroup) -> String {
    let (key, name, every_key) = match group {
        ReportGroup::Pool => (
            "pool_id",
            "(SELECT name FROM pool WHERE id = k.key)",
            "UNION SELECT id FROM pool WHERE $17::uuid IS NULL OR cluster_id = $17",
        ),
        // Read through each row's pool: a cluster's figures are its pools' now.
        ReportGroup::Cluster => (
            "pool_id",
            "(SELECT name FROM cluster WHERE id = k.key)",
            "UNION SELECT id FROM cluster WHERE $17::uuid IS NULL OR id = $17",
        ),
        ReportGroup::Tenant => ("tenant_id", "(SELECT slug FROM tenant WHERE id = k.key)", ""),
        ReportGroup::User => ("user_id", "(SELECT email FROM app_user WHERE id = k.key)", ""),
    };
    // The group's key of a source table's row (`alias`: "b." or ""), never from input.
    let key_of = |alias: &str| match group {
        ReportGroup::Cluster => format!("(SELECT cluster_id FROM pool WHERE id = {alias}{key})"),
        _ => format!("{alias}{key}"),
    };
    let key_column = format!("{} AS key", key_of("b."));
    let columns = [key_column.as_str(), "b.kind", "b.pool_id"];
    let (b_scope, scope) = (on_cluster("b.", "$17"), on_cluster("", "$17"));
    let before = booking_figures(&columns, ("$1", "$11"), ("$9", "$13"), &b_scope);
    let after = booking_figures(&columns, ("$12", "$2"), ("$14", "$10"), &b_scope);
    // The smaller tables of requests keep plain timestamps.
    let asked_hours = "date_part('epoch', least(b.ends_at, $2) - greatest(b.starts_at, $1)) / 3600";
    // Unit-hours of a table's rows overlapping the period, per key and kind, in GPU-hours.
    let b_key = key_of("b.");
    let asked = |table: &str, filter: &str| {
        format!(
            "SELECT key, sum(unit_hours * gpu_share(pool_id, kind)) AS gpu_hours FROM (
                 SELECT {b_key} AS key, b.pool_id, b.kind, sum(b.quantity * {asked_hours}) AS unit_hours
                 FROM {table} b WHERE {filter} {b_scope} AND b.ends_at > $1 AND b.starts_at < $2
                 GROUP BY 1, 2, 3) per_kind
             GROUP BY key"
        )
    };
    let refused = asked("booking_refusal", "");
    let (month_key, m_key, d_key, u_key) = (key_of(""), key_of("m."), key_of("d."), key_of("u."));
    let (m_scope, d_scope) = (on_cluster("m.", "$17"), on_cluster("d.", "$17"));
    let waitlisted = asked("waitlist_entry", "b.state <> 'admitted' AND");
    format!(
        "WITH per_kind AS (
            {before}
            UNION ALL
            {after}
            UNION ALL
            SELECT {month_key}, kind, pool_id, booked_unit_hours, returned_unit_hours, no_shows
            FROM booking_month WHERE month >= $15 AND month < $16 AND {scope}),
         booked AS (
            SELECT g.key, sum(g.unit_hours * gpu_share(g.pool_id, g.kind)) AS gpu_hours,
                   sum(g.unit_hours * unit_price(g.pool_id, g.kind)) AS cost,
                   sum(g.returned_unit_hours * gpu_share(g.pool_id, g.kind)) AS returned, sum(g.no_shows) AS no_shows,
                   bool_or(g.unit_hours > 0 AND EXISTS (SELECT 1 FROM pool_kind k WHERE k.pool_id = g.pool_id
                                                        AND k.kind = g.kind AND k.replicas_per_unit > 1)) AS shared
            FROM per_kind g
            GROUP BY g.key),
         measured AS (
            SELECT key, sum(busy) / 60 AS busy, sum(sampled) / 60 AS sampled, sum(active) / 60 AS active,
                   bool_or(simulated) AS simulated
            FROM (SELECT {m_key} AS key, m.busy_gpu_minutes AS busy, m.sampled_gpu_minutes AS sampled,
                         m.active_gpu_minutes AS active, m.simulated
                  FROM usage_month m WHERE m.month >= $7 AND m.month < $8 AND {m_scope}
                  UNION ALL
                  SELECT {d_key}, d.busy_gpu_minutes, d.sampled_gpu_minutes, d.active_gpu_minutes, d.simulated
                  FROM usage_day d WHERE ((d.day >= $5 AND d.day < $7) OR (d.day >= $8 AND d.day < $6)) AND {d_scope}
                  UNION ALL
                  SELECT {u_key}, u.busy_unit_minutes / k.slices_per_gpu, u.samples * b.quantity / k.slices_per_gpu::float8,
                         u.active_unit_minutes / k.slices_per_gpu, u.simulated
                  FROM usage_hour u JOIN booking b ON b.id = u.booking_id
                  JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
                  WHERE ((u.hour >= $1 AND u.hour < $3) OR (u.hour >= $4 AND u.hour < $2)) AND {b_scope}) used
            GROUP BY key),
         refused AS ({refused}),
         waitlisted AS ({waitlisted}),
         keys AS (
            SELECT key FROM booked WHERE gpu_hours > 0 OR returned > 0 OR no_shows > 0
            UNION SELECT key FROM measured UNION SELECT key FROM refused UNION SELECT key FROM waitlisted
            {every_key})
         SELECT k.key AS id, coalesce({name}, 'removed') AS name,
                coalesce(bk.gpu_hours, 0)::float8 AS booked_gpu_hours, coalesce(bk.cost, 0)::float8 AS showback_cost,
                coalesce(bk.returned, 0)::float8 AS returned_gpu_hours, coalesce(bk.no_shows, 0)::int8 AS no_shows,
                coalesce(m.busy, 0)::float8 AS busy_gpu_hours, coalesce(m.sampled, 0)::float8 AS occupied_gpu_hours,
                coalesce(m.active, 0)::float8 AS active_gpu_hours, coalesce(bk.shared, false) AS device_level_only,
                coalesce(m.simulated, false) AS simulated,
                coalesce(rf.gpu_hours, 0)::float8 AS refused_gpu_hours,
                coalesce(w.gpu_hours, 0)::float8 AS waitlisted_gpu_hours
         FROM keys k
         LEFT JOIN booked bk ON bk.key = k.key LEFT JOIN measured m ON m.key = k.key
         LEFT JOIN refused rf ON rf.key = k.key LEFT JOIN waitlisted w ON w.key = k.key
         ORDER BY 2"
    )
}

/// The roll-ups a period reads: its whole UTC days (`first_day` to
/// `end_day`, as instants `first` to `end`), and the whole UTC months among
/// them; empty ranges (equal ends) when there are none.
#[derive(Debug, PartialEq)]
struct Tiers {
    first: DateTime<Utc>,
    end: DateTime<Utc>,
    first_day: NaiveDate,
    end_day: NaiveDate,
    first_month: NaiveDate,
    end_month: NaiveDate,
}

fn tiers(from: DateTime<Utc>, to: DateTime<Utc>) -> Tiers {
    let day = TimeDelta::days(1);
    let floor = |at: DateTime<Utc>| at.duration_trunc(day).unwrap_or(at);
    let first = if floor(from) == from { from } else { floor(from) + day };
    let end = floor(to);
    if first >= end {
        let none = from.date_naive();
        return Tiers { first: from, end: from, first_day: none, end_day: none, first_month: none, end_month: none };
    }
    let (first_day, end_day) = (first.date_naive(), end.date_naive());
    let month_of = |date: NaiveDate| date.with_day(1).unwrap_or(date);
    let first_month = if first_day.day() == 1 { first_day } else { month_of(first_day) + Months::new(1) };
    let end_month = month_of(end_day);
    let (first_month, end_month) = if first_month < end_month { (first_month, end_month) } else { (end_day, end_day) };
    Tiers { first, end, first_day, end_day, first_month, end_month }
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
    occupied_gpu_hours: f64,
    active_gpu_hours: f64,
    device_level_only: bool,
    simulated: bool,
    refused_gpu_hours: f64,
    waitlisted_gpu_hours: f64,
}

/// Each pool's capacity GPU-hours in the period from when each kind was
/// added (a pool created mid-week has no capacity before), less the union
/// of its blackouts (one covering every kind, or the kind's own).
pub async fn capacities(
    db: &mut PgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    cluster: Option<Uuid>,
) -> ServiceResult<Vec<(Uuid, f64)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT k.pool_id, coalesce(sum(k.capacity::float8 / k.slices_per_gpu
                    * (extract(epoch FROM $2 - s.since) - coalesce(closed.seconds, 0)) / 3600)
                    FILTER (WHERE s.since < $2), 0)::float8
         FROM pool_kind k
         CROSS JOIN LATERAL (SELECT greatest($1, k.created_at) AS since) s
         LEFT JOIN LATERAL (
             SELECT sum(extract(epoch FROM upper(r) - lower(r))) AS seconds
             FROM unnest((SELECT range_agg(tstzrange(greatest(x.starts_at, s.since), least(x.ends_at, $2)))
                          FROM blackout x
                          WHERE x.pool_id = k.pool_id AND (x.kind IS NULL OR x.kind = k.kind)
                            AND x.ends_at > s.since AND x.starts_at < $2)) r
         ) closed ON true
         WHERE {}
         GROUP BY k.pool_id",
        on_cluster("k.", "$3")
    ))
    .bind(from)
    .bind(to)
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?)
}

/// A figure per pool: its capacity, or what it lent (GPU-hours).
pub type PoolFigure = (Uuid, f64);

/// Each pool's GPU-hours lent to its backfill and used there, in the hours
/// that start within the period (the worker records them per hour).
pub async fn lent(
    db: &mut PgConnection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    cluster: Option<Uuid>,
) -> ServiceResult<Vec<(Uuid, f64)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT l.pool_id, sum(l.unit_seconds / 3600 * gpu_share(l.pool_id, l.kind))::float8
         FROM lent_hour l WHERE l.hour >= $1 AND l.hour < $2 AND {} GROUP BY l.pool_id",
        on_cluster("l.", "$3")
    ))
    .bind(from)
    .bind(to)
    .bind(cluster)
    .fetch_all(&mut *db)
    .await?)
}

fn pct(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| part / whole * 100.0)
}

/// Fills in the shares once the sums are known ("active % of booked" is of
/// the booked hours, occupied or not), then rounds every figure as it is
/// shown and served, never below zero.
pub fn finish(mut row: ReportRow) -> ReportRow {
    row.booking_utilization_pct = row.capacity_gpu_hours.and_then(|c| pct(row.booked_gpu_hours, c)).map(figure);
    row.busy_utilization_pct = pct(row.busy_gpu_hours, row.booked_gpu_hours).map(figure);
    row.active_utilization_pct = pct(row.active_gpu_hours, row.booked_gpu_hours).map(figure);
    row.idle_booked_gpu_hours = figure(row.booked_gpu_hours - row.active_gpu_hours);
    row.capacity_gpu_hours = row.capacity_gpu_hours.map(figure);
    row.lent_gpu_hours = row.lent_gpu_hours.map(figure);
    for value in [
        &mut row.booked_gpu_hours,
        &mut row.occupied_gpu_hours,
        &mut row.active_gpu_hours,
        &mut row.busy_gpu_hours,
        &mut row.returned_gpu_hours,
        &mut row.refused_gpu_hours,
        &mut row.waitlisted_gpu_hours,
        &mut row.showback_cost,
    ] {
        *value = figure(*value);
    }
    row
}

pub async fn rows(
    db: &mut PgConnection,
    group: ReportGroup,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    settled: &Settled,
    (capacity, lent): (&[PoolFigure], &[PoolFigure]),
    cluster: Option<Uuid>,
) -> ServiceResult<Vec<ReportRow>> {
    let t = tiers(from, to);
    let (settled_first, settled_end) = settled.months();
    let summed: Vec<Summed> = sqlx::query_as(&statement(group))
        .bind(from)
        .bind(to)
        .bind(t.first)
        .bind(t.end)
        .bind(t.first_day)
        .bind(t.end_day)
        .bind(t.first_month)
        .bind(t.end_month)
        .bind(epoch_hours(from))
        .bind(epoch_hours(to))
        .bind(settled.from)
        .bind(settled.to)
        .bind(epoch_hours(settled.from))
        .bind(epoch_hours(settled.to))
        .bind(settled_first)
        .bind(settled_end)
        .bind(cluster)
        .fetch_all(&mut *db)
        .await?;
    // A cluster's capacity is its pools' (those on it now).
    let cluster_of: std::collections::HashMap<Uuid, Uuid> = match group {
        ReportGroup::Cluster => {
            sqlx::query_as("SELECT id, cluster_id FROM pool").fetch_all(&mut *db).await?.into_iter().collect()
        }
        _ => Default::default(),
    };
    Ok(summed
        .into_iter()
        .map(|s| {
            let of_group = |figures: &[(Uuid, f64)]| match group {
                ReportGroup::Pool => Some(figures.iter().find(|(pool, _)| *pool == s.id).map_or(0.0, |(_, c)| *c)),
                ReportGroup::Cluster => {
                    Some(figures.iter().filter(|(pool, _)| cluster_of.get(pool) == Some(&s.id)).map(|(_, c)| *c).sum())
                }
                ReportGroup::Tenant | ReportGroup::User => None,
            };
            let (capacity_gpu_hours, lent_gpu_hours) = (of_group(capacity), of_group(lent));
            finish(ReportRow {
                id: Some(s.id),
                name: s.name,
                capacity_gpu_hours,
                lent_gpu_hours,
                booked_gpu_hours: s.booked_gpu_hours,
                occupied_gpu_hours: s.occupied_gpu_hours,
                active_gpu_hours: s.active_gpu_hours,
                device_level_only: s.device_level_only,
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

/// The totals row: the sum of the rows as they are shown, against every
/// pool's capacity and with every pool's lent hours. Each figure is the sum
/// of its members' (each rounded once, in `finish`), idle hours too: taking
/// them as "measured − busy" of the rounded sums rounded a second time and
/// could read 0.99 beside members that add up to 1.
pub fn total(rows: &[ReportRow], capacity: &[(Uuid, f64)], lent: &[(Uuid, f64)]) -> ReportRow {
    let sum = |f: fn(&ReportRow) -> f64| rows.iter().map(f).sum::<f64>();
    let idle = figure(sum(|r| r.idle_booked_gpu_hours));
    let row = finish(ReportRow {
        id: None,
        name: "All".into(),
        capacity_gpu_hours: Some(capacity.iter().map(|(_, c)| c).sum()),
        lent_gpu_hours: Some(lent.iter().map(|(_, l)| l).sum()),
        booked_gpu_hours: sum(|r| r.booked_gpu_hours),
        occupied_gpu_hours: sum(|r| r.occupied_gpu_hours),
        active_gpu_hours: sum(|r| r.active_gpu_hours),
        device_level_only: rows.iter().any(|r| r.device_level_only),
        busy_gpu_hours: sum(|r| r.busy_gpu_hours),
        no_shows: rows.iter().map(|r| r.no_shows).sum(),
        returned_gpu_hours: sum(|r| r.returned_gpu_hours),
        refused_gpu_hours: sum(|r| r.refused_gpu_hours),
        waitlisted_gpu_hours: sum(|r| r.waitlisted_gpu_hours),
        showback_cost: sum(|r| r.showback_cost),
        simulated: rows.iter().any(|r| r.simulated),
        ..ReportRow::default()
    });
    ReportRow { idle_booked_gpu_hours: idle, ..row }
}

#[cfg(test)]
mod tests;
