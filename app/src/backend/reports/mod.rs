//! The utilisation report (managers and admins): the table by pool, tenant
//! or user, the trend and the heat map, over `[from, to)`.

mod charts;
pub mod dashboard;
pub mod demo;
pub mod device_charts;
mod figures;
pub mod period;
pub mod rollups;
pub mod storage;
pub mod tokenomics;

use crate::backend::error::ServiceResult;
use crate::backend::reports::tokenomics::require_reader;
use crate::model::{
    figure, PeriodKind, Principal, ReportGroup, ReportPage, ReportPageQuery, ReportQuery, UtilizationReport,
};
use crate::rules::local_time::local_midnight;
use crate::rules::FieldError;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sqlx::PgPool;

/// The report over `[from, to)`; with `cluster` (a name), of that cluster's
/// pools and kept homes alone.
pub async fn utilization(
    db: &PgPool,
    principal: &Principal,
    (group, cluster): (ReportGroup, Option<&str>),
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    tz: Tz,
    currency: &str,
) -> ServiceResult<UtilizationReport> {
    require_reader(principal)?;
    let (cluster_id, clusters) = crate::backend::clusters::pick(db, cluster).await?;
    let (from, to) = period::checked(from, to)?;
    // The table and the charts each read every booking of the period: with
    // a second connection free at once, they run side by side sharing one
    // snapshot, so the figures agree; otherwise one after the other on one
    // (waiting for a second connection could stall a busy pool).
    let mut table = snapshot(db.begin().await?, None).await?;
    let settled = rollups::settled(&mut table, from, to).await?;
    let second = match db.try_acquire() {
        Some(conn) => {
            let shared: String = sqlx::query_scalar("SELECT pg_export_snapshot()").fetch_one(&mut *table).await?;
            let mut charts = snapshot(sqlx::Transaction::begin(conn, None).await?, Some(&shared)).await?;
            // Side by side, the two statements already keep two cores busy;
            // parallel workers on top only queue for them (measured: a year's
            // pair takes about a quarter longer with them).
            for tx in [&mut table, &mut charts] {
                sqlx::query("SET LOCAL max_parallel_workers_per_gather = 0").execute(&mut **tx).await?;
            }
            Some(charts)
        }
        None => None,
    };
    let table_side = async {
        let capacity = figures::capacities(&mut table, from, to, cluster_id).await?;
        let lent = figures::lent(&mut table, from, to, cluster_id).await?;
        let rows = figures::rows(&mut table, group, from, to, &settled, (&capacity, &lent), cluster_id).await?;
        // One statement for the two small facts beside the table.
        let (gaps, threshold): (i64, Option<f32>) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM usage_gap WHERE minute >= $1 AND minute < $2),
                    (SELECT active_threshold FROM usage_policy)",
        )
        .bind(from)
        .bind(to)
        .fetch_one(&mut *table)
        .await?;
        let gaps = (gaps, threshold.map(|t| figure(f64::from(t) * 100.0)));
        let price = storage::price(&mut *table).await?;
        let held = storage::held(&mut table, from, to, (price, cluster_id)).await?;
        ServiceResult::Ok(((capacity, lent), rows, (gaps, held, price)))
    };
    let ((capacity, rows, ((gap_minutes, active_threshold_pct), storage, storage_price_per_gib_month)), charts) =
        match second {
            Some(mut charts_tx) => {
                let (table_side, charts) =
                    tokio::join!(table_side, charts::charts(&mut charts_tx, from, to, &settled, (&tz, cluster_id)));
                let answer = (table_side?, charts?);
                charts_tx.commit().await?;
                answer
            }
            None => {
                let table_side = table_side.await?;
                (table_side, charts::charts(&mut table, from, to, &settled, (&tz, cluster_id)).await?)
            }
        };
    table.commit().await?;
    let total = figures::total(&rows, &capacity.0, &capacity.1);
    Ok(UtilizationReport {
        from,
        to,
        group,
        time_zone: tz.name().to_string(),
        simulated: total.simulated,
        demo_history: demo::note(db).await?,
        rows,
        total,
        trend_bucket: charts.bucket.to_string(),
        trend: charts.trend,
        heatmap: charts.heatmap,
        gap_minutes,
        active_threshold_pct,
        currency: currency.to_string(),
        storage,
        storage_price_per_gib_month,
        cluster: cluster_id.and(cluster).map(str::to_string),
        clusters,
    })
}

/// Makes `tx` a read-only snapshot (`shared`, or its own) without JIT,
/// whose compile time costs more than these aggregates save, planning each
/// statement for its own period (which index pays depends on it).
async fn snapshot(
    mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
    shared: Option<&str>,
) -> ServiceResult<sqlx::Transaction<'static, sqlx::Postgres>> {
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    if let Some(id) = shared {
        // The id comes from pg_export_snapshot(), never from a client; quoted all the same.
        sqlx::query(&format!("SET TRANSACTION SNAPSHOT '{}'", id.replace('\'', "''"))).execute(&mut *tx).await?;
    }
    sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
    sqlx::query("SET LOCAL plan_cache_mode = force_custom_plan").execute(&mut *tx).await?;
    Ok(tx)
}

/// The REST query: who may read is answered before what they asked.
/// `currency`: the site's, which prices are in.
pub async fn for_query(
    db: &PgPool,
    principal: &Principal,
    query: &ReportQuery,
    currency: &str,
) -> ServiceResult<UtilizationReport> {
    require_reader(principal)?;
    let tz = crate::rules::local_time::checked_zone("tz", query.tz.as_deref())?;
    let from = period::instant("from", &query.from, &tz)?;
    let to = period::instant("to", &query.to, &tz)?;
    utilization(db, principal, (query.group, query.cluster.as_deref()), from, to, tz, currency).await
}

/// The page's query: a period kind anchored on a date (today in the zone by
/// default), the grouping, and the zone.
pub async fn page(
    db: &PgPool,
    principal: &Principal,
    query: &ReportPageQuery,
    currency: &str,
) -> ServiceResult<ReportPage> {
    require_reader(principal)?;
    let tz = crate::rules::local_time::checked_zone("tz", Some(&query.tz))?;
    let group = match query.group.trim() {
        "" => ReportGroup::Pool,
        text => {
            ReportGroup::parse(text).ok_or_else(|| FieldError::new("group", "must be pool, cluster, tenant or user"))?
        }
    };
    let kind = match query.period.trim() {
        "" => PeriodKind::Week,
        text => {
            PeriodKind::parse(text).ok_or_else(|| FieldError::new("period", "must be day, week, month or custom"))?
        }
    };
    let day = |field: &str, text: &str| -> Result<Option<NaiveDate>, FieldError> {
        match text.trim() {
            "" => Ok(None),
            text => text.parse().map(Some).map_err(|_| FieldError::new(field, "must be a date like 2026-11-23")),
        }
    };
    let date = day("date", &query.date)?.unwrap_or_else(|| Utc::now().with_timezone(&tz).date_naive());
    let until = if kind == PeriodKind::Custom { Some(day("until", &query.until)?.unwrap_or(date)) } else { None };
    let (first, after) = period::dates(kind, date, until)?;
    let (from, to) = (local_midnight(tz, first), local_midnight(tz, after));
    let cluster = Some(query.cluster.trim()).filter(|name| !name.is_empty());
    let report = utilization(db, principal, (group, cluster), from, to, tz, currency).await?;
    let last = after.pred_opt().unwrap_or(after);
    let span = if last == first {
        format!("{} ({})", first.format("%a %d %b %Y"), tz.name())
    } else {
        format!("{} – {} ({})", first.format("%a %d %b %Y"), last.format("%a %d %b %Y"), tz.name())
    };
    Ok(ReportPage {
        report,
        span,
        period: kind,
        date,
        until,
        previous: period::step(kind, date, until, false),
        next: period::step(kind, date, until, true),
    })
}
