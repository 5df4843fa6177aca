//! Tenant quotas at admission: what a tenant's bookings of one pool+kind
//! hold, read under the kind's lock, checked with `rules::quota`.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{TenantQuota, Window};
use crate::rules::capacity::Usage;
use crate::rules::local_time::zone;
use crate::rules::quota::{check, iso_weeks};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

/// The span of whole weeks that a weekly quota over `windows` reads.
pub fn weeks_span(windows: &[Window], tz: &Tz) -> Option<Window> {
    let start = windows.iter().map(|w| w.start).min()?;
    let end = windows.iter().map(|w| w.end).max()?;
    let weeks = iso_weeks(Window { start, end }, tz);
    Some(Window { start: weeks.first()?.start, end: weeks.last()?.end })
}

/// Per tenant: their bookings of the pool+kind that hold or held capacity
/// (completed ones count toward the week) overlapping `span`, but `except`
/// (a booking being moved).
pub async fn tenant_usages(
    conn: &mut PgConnection,
    pool_id: Uuid,
    kind: &str,
    tenants: &[Uuid],
    (span, except): (Window, Option<Uuid>),
) -> ServiceResult<HashMap<Uuid, Vec<Usage>>> {
    let rows: Vec<(Uuid, DateTime<Utc>, DateTime<Utc>, i32)> = sqlx::query_as(
        "SELECT tenant_id, starts_at, ends_at, quantity FROM booking
         WHERE tenant_id = ANY($3) AND pool_id = $1 AND kind = $2
           AND state IN ('pending', 'approved', 'active', 'completed')
           AND ends_at > $4 AND starts_at < $5 AND ($6::uuid IS NULL OR id <> $6)",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(tenants)
    .bind(span.start)
    .bind(span.end)
    .bind(except)
    .fetch_all(conn)
    .await?;
    let mut by_tenant: HashMap<Uuid, Vec<Usage>> = HashMap::new();
    for (tenant, start, end, quantity) in rows {
        by_tenant.entry(tenant).or_default().push(Usage { start, end, quantity });
    }
    Ok(by_tenant)
}

/// The tenant's quota in one pool+kind, the kind's units per GPU and the
/// pool's zone, if it has one.
async fn quota_of(
    conn: &mut PgConnection,
    tenant: Uuid,
    pool_id: Uuid,
    kind: &str,
) -> ServiceResult<Option<(TenantQuota, i32, String)>> {
    let row: Option<(Option<i32>, Option<f64>, i32, String)> = sqlx::query_as(
        "SELECT q.max_units, q.gpu_hours_per_week, k.slices_per_gpu, p.time_zone
         FROM tenant_quota q JOIN pool p ON p.id = q.pool_id
         JOIN pool_kind k ON k.pool_id = q.pool_id AND k.kind = q.kind
         WHERE q.tenant_id = $1 AND q.pool_id = $2 AND q.kind = $3",
    )
    .bind(tenant)
    .bind(pool_id)
    .bind(kind)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(max_units, gpu_hours_per_week, slices, zone)| {
        (TenantQuota { max_units, gpu_hours_per_week }, slices, zone)
    }))
}

/// Whether `added` more of a tenant's units fit its quota, `except` one
/// booking's (the one being moved); the caller holds the kind's lock.
pub async fn check_added(
    conn: &mut PgConnection,
    tenant: Uuid,
    (pool_id, kind): (Uuid, &str),
    added: Usage,
    except: Option<Uuid>,
) -> ServiceResult<()> {
    let Some((quota, slices_per_gpu, zone_name)) = quota_of(conn, tenant, pool_id, kind).await? else {
        return Ok(());
    };
    let tz = zone(&zone_name);
    let window = Window { start: added.start, end: added.end };
    let Some(span) = weeks_span(&[window], &tz) else { return Ok(()) };
    let mut usages = tenant_usages(conn, pool_id, kind, &[tenant], (span, except)).await?;
    let held = usages.remove(&tenant).unwrap_or_default();
    check(&quota, slices_per_gpu, &held, added, &tz).map_err(ServiceError::QuotaExceeded)
}
