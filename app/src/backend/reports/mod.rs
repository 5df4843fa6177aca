//! The utilisation report (managers and admins): the table by pool, tenant
//! or user, the trend and the heat map, over `[from, to)`.

mod figures;
pub mod period;
mod series;

use super::error::ServiceResult;
use super::tokenomics::require_reader;
use crate::model::{Principal, ReportGroup, ReportQuery, UtilizationReport};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sqlx::PgPool;

pub async fn utilization(
    db: &PgPool,
    principal: &Principal,
    group: ReportGroup,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    tz: Tz,
) -> ServiceResult<UtilizationReport> {
    require_reader(principal)?;
    let (from, to) = period::checked(from, to)?;
    let capacity = figures::capacities(db, from, to).await?;
    let rows = figures::rows(db, group, from, to, &capacity).await?;
    let total = figures::total(&rows, &capacity);
    let charts = series::charts(db, from, to, &tz).await?;
    let gap_minutes: i64 = sqlx::query_scalar("SELECT count(*) FROM usage_gap WHERE minute >= $1 AND minute < $2")
        .bind(from)
        .bind(to)
        .fetch_one(db)
        .await?;
    Ok(UtilizationReport {
        from,
        to,
        group,
        time_zone: tz.name().to_string(),
        simulated: total.simulated,
        rows,
        total,
        trend_bucket: charts.bucket.to_string(),
        trend: charts.trend,
        heatmap: charts.heatmap,
        gap_minutes,
    })
}

/// The REST query: who may read is answered before what they asked.
pub async fn for_query(db: &PgPool, principal: &Principal, query: &ReportQuery) -> ServiceResult<UtilizationReport> {
    require_reader(principal)?;
    let tz = period::zone(query.tz.as_deref())?;
    let from = period::instant("from", &query.from, &tz)?;
    let to = period::instant("to", &query.to, &tz)?;
    utilization(db, principal, query.group, from, to, tz).await
}
