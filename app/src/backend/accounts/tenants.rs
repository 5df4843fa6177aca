//! Tenants and their quotas: admins create and rename tenants and set, per
//! pool+kind, the most units held at once and the unit-hours per ISO week
//! (admission enforces both, see `admission::quota`); members, managers and
//! admins read a tenant's use against its quotas.

use crate::backend::admission::quota::tenant_usages;
use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{NewTenant, Principal, QuotaEntry, QuotaUsage, Role, Tenant, TenantPatch, TenantUsage, Window};
use crate::rules::capacity::{peak_usage, Usage};
use crate::rules::local_time::zone;
use crate::rules::quota::{iso_week_of, unit_minutes};
use crate::rules::FieldError;
use chrono::Duration;
use sqlx::{PgConnection, PgExecutor, PgPool};
use uuid::Uuid;

/// Longest tenant display name.
pub const MAX_NAME: usize = 100;
/// A week's hours times the largest pool anyone runs: above this is a typo.
pub const MAX_HOURS_PER_WEEK: f64 = 1_000_000.0;

/// What anyone but an admin is told here.
const ADMINS_ONLY: &str = "only admins manage tenants";

fn check_name(name: &str) -> ServiceResult<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(FieldError::new("name", format!("must be 1 to {MAX_NAME} characters")).into());
    }
    Ok(name)
}

/// Every tenant with its members (admins only).
pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<Tenant>> {
    principal.require_admin(ADMINS_ONLY)?;
    let rows: Vec<(String, String, Vec<String>)> = sqlx::query_as(
        "SELECT t.slug, t.name, ARRAY(SELECT u.email FROM membership m JOIN app_user u ON u.id = m.user_id
                                      WHERE m.tenant_id = t.id ORDER BY u.email)
         FROM tenant t ORDER BY t.slug LIMIT 1000",
    )
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(slug, name, members)| Tenant { slug, name, members }).collect())
}

pub async fn create(db: &PgPool, principal: &Principal, new: NewTenant) -> ServiceResult<Tenant> {
    principal.require_admin(ADMINS_ONLY)?;
    let name = check_name(&new.name)?;
    let mut tx = db.begin().await?;
    let id: Uuid = sqlx::query_scalar("INSERT INTO tenant (slug, name) VALUES ($1, $2) RETURNING id")
        .bind(new.slug.trim())
        .bind(name)
        .fetch_one(&mut *tx)
        .await?;
    let subject = Subject { target: new.slug.trim(), tenant: Some(id), pool: None };
    audit::record(&mut tx, principal, "tenant.create", subject, name).await?;
    tx.commit().await?;
    Ok(Tenant { slug: new.slug.trim().into(), name: name.into(), members: vec![] })
}

pub(crate) async fn tenant_id(db: impl PgExecutor<'_>, slug: &str) -> ServiceResult<Uuid> {
    sqlx::query_scalar("SELECT id FROM tenant WHERE slug = $1")
        .bind(slug)
        .fetch_optional(db)
        .await?
        .ok_or(ServiceError::NotFound("tenant"))
}

pub async fn rename(db: &PgPool, principal: &Principal, slug: &str, patch: TenantPatch) -> ServiceResult<Tenant> {
    principal.require_admin(ADMINS_ONLY)?;
    let name = check_name(&patch.name)?;
    let mut tx = db.begin().await?;
    let id = tenant_id(&mut *tx, slug).await?;
    sqlx::query("UPDATE tenant SET name = $2 WHERE id = $1").bind(id).bind(name).execute(&mut *tx).await?;
    audit::record(&mut tx, principal, "tenant.rename", Subject { target: slug, tenant: Some(id), pool: None }, name)
        .await?;
    tx.commit().await?;
    list(db, principal).await?.into_iter().find(|t| t.slug == slug).ok_or(ServiceError::NotFound("tenant"))
}

/// An entry's limits, refused in plain words ("must be at most 1 000 000 GPU-hours
/// a week"); `field` names a limit where the caller's input holds it
/// (`quotas[1].max_units` in the API, `max_units` on the page).
pub fn check_entry(entry: &QuotaEntry, field: impl Fn(&str) -> String) -> Result<(), FieldError> {
    if entry.max_units.is_some_and(|units| units < 0) {
        return Err(FieldError::new(field("max_units"), "must be 0 units or more, or empty for no limit"));
    }
    if entry.gpu_hours_per_week.is_some_and(|h| !h.is_finite() || !(0.0..=MAX_HOURS_PER_WEEK).contains(&h)) {
        return Err(FieldError::new(
            field("gpu_hours_per_week"),
            format!(
                "must be at most {} GPU-hours a week (0 or more, or empty for no limit)",
                grouped(MAX_HOURS_PER_WEEK as u64)
            ),
        ));
    }
    Ok(())
}

/// "1 000 000": digits in groups of three, as people read large limits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

/// Refuses entries naming a pool+kind that does not exist, or one twice.
async fn check_targets(conn: &mut PgConnection, entries: &[QuotaEntry]) -> ServiceResult<()> {
    let pools: Vec<Uuid> = entries.iter().map(|e| e.pool_id).collect();
    let kinds: Vec<String> = entries.iter().map(|e| e.kind.clone()).collect();
    let known: Vec<bool> = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pool_kind k WHERE k.pool_id = e.pool_id AND k.kind = e.kind)
         FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS e(pool_id, kind, n) ORDER BY n",
    )
    .bind(&pools)
    .bind(&kinds)
    .fetch_all(conn)
    .await?;
    for (index, entry) in entries.iter().enumerate() {
        if !known.get(index).copied().unwrap_or(false) {
            return Err(FieldError::new(format!("quotas[{index}].kind"), "no such kind in that pool").into());
        }
        if entries[..index].iter().any(|e| e.pool_id == entry.pool_id && e.kind == entry.kind) {
            return Err(FieldError::new(format!("quotas[{index}]"), "this pool and kind are listed twice").into());
        }
    }
    Ok(())
}

fn describe(entry: &QuotaEntry) -> String {
    let units = entry.max_units.map_or("no limit".to_string(), |u| u.to_string());
    let hours = entry.gpu_hours_per_week.map_or("no limit".to_string(), |h| h.to_string());
    format!("{}: max units {units}, GPU-hours per week {hours}", entry.kind)
}

/// Replaces every quota of a tenant. Lowering a quota never touches existing
/// bookings; it applies to the next request.
pub async fn replace_quotas(
    db: &PgPool,
    principal: &Principal,
    slug: &str,
    entries: Vec<QuotaEntry>,
) -> ServiceResult<TenantUsage> {
    principal.require_admin(ADMINS_ONLY)?;
    for (index, entry) in entries.iter().enumerate() {
        check_entry(entry, |name| format!("quotas[{index}].{name}"))?;
    }
    let mut tx = db.begin().await?;
    let id = tenant_id(&mut *tx, slug).await?;
    check_targets(&mut tx, &entries).await?;
    sqlx::query("DELETE FROM tenant_quota WHERE tenant_id = $1").bind(id).execute(&mut *tx).await?;
    for entry in entries.iter().filter(|e| e.max_units.is_some() || e.gpu_hours_per_week.is_some()) {
        sqlx::query(
            "INSERT INTO tenant_quota (tenant_id, pool_id, kind, max_units, gpu_hours_per_week)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(entry.pool_id)
        .bind(&entry.kind)
        .bind(entry.max_units)
        .bind(entry.gpu_hours_per_week)
        .execute(&mut *tx)
        .await?;
        let subject = Subject { target: slug, tenant: Some(id), pool: Some(entry.pool_id) };
        audit::record(&mut tx, principal, "quota.set", subject, &describe(entry)).await?;
    }
    if entries.is_empty() {
        let subject = Subject { target: slug, tenant: Some(id), pool: None };
        audit::record(&mut tx, principal, "quota.set", subject, "every quota removed").await?;
    }
    tx.commit().await?;
    // A raised or removed limit may let waiting requests in.
    crate::backend::waitlist::after_freeing(db, crate::backend::waitlist::Freed::Tenant(id)).await;
    usage(db, principal, slug).await
}

/// Sets (or, with both limits `None`, removes) one quota of a tenant.
pub async fn set_quota(
    db: &PgPool,
    principal: &Principal,
    slug: &str,
    entry: QuotaEntry,
) -> ServiceResult<TenantUsage> {
    principal.require_admin(ADMINS_ONLY)?;
    let mut current: Vec<QuotaEntry> = usage(db, principal, slug)
        .await?
        .quotas
        .into_iter()
        .filter(|q| !(q.pool_id == entry.pool_id && q.kind == entry.kind))
        .map(|q| QuotaEntry {
            pool_id: q.pool_id,
            kind: q.kind,
            max_units: q.max_units,
            gpu_hours_per_week: q.gpu_hours_per_week,
        })
        .collect();
    current.push(entry);
    replace_quotas(db, principal, slug, current).await
}

/// Whether the principal may read the tenant's use: its members, managers and admins.
pub(crate) fn may_read(principal: &Principal, slug: &str) -> bool {
    principal.is_admin() || principal.role == Role::Manager || principal.tenants.iter().any(|t| t.slug == slug)
}

#[derive(sqlx::FromRow)]
struct QuotaRow {
    pool_id: Uuid,
    pool: String,
    kind: String,
    max_units: Option<i32>,
    gpu_hours_per_week: Option<f64>,
    slices_per_gpu: i32,
    time_zone: String,
}

/// The tenant's quotas and what it uses of each now and this week.
pub async fn usage(db: &PgPool, principal: &Principal, slug: &str) -> ServiceResult<TenantUsage> {
    if !may_read(principal, slug) {
        // Outsiders learn nothing, not even that the tenant exists.
        return Err(ServiceError::NotFound("tenant"));
    }
    let mut conn = db.acquire().await?;
    let id = tenant_id(&mut *conn, slug).await?;
    let rows: Vec<QuotaRow> = sqlx::query_as(
        "SELECT q.pool_id, p.name AS pool, q.kind, q.max_units, q.gpu_hours_per_week, k.slices_per_gpu, p.time_zone
         FROM tenant_quota q JOIN pool p ON p.id = q.pool_id JOIN pool_kind k ON k.pool_id = q.pool_id AND k.kind = q.kind
         WHERE q.tenant_id = $1 ORDER BY p.name, q.kind",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let now = crate::backend::db_now(&mut *conn).await?;
    let mut quotas = Vec::with_capacity(rows.len());
    for row in rows {
        let tz = zone(&row.time_zone);
        let week = iso_week_of(now, &tz);
        let mut held = tenant_usages(&mut conn, row.pool_id, &row.kind, &[id], (week, None)).await?;
        let held: Vec<Usage> = held.remove(&id).unwrap_or_default();
        let this_instant = Window { start: now, end: now + Duration::seconds(1) };
        quotas.push(QuotaUsage {
            pool_id: row.pool_id,
            pool: row.pool,
            kind: row.kind,
            max_units: row.max_units,
            gpu_hours_per_week: row.gpu_hours_per_week,
            units_now: peak_usage(&held, this_instant),
            // GPU-hours, as the weekly quota counts them.
            hours_this_week: crate::model::figure(
                unit_minutes(&held, week) as f64 / 60.0 / f64::from(row.slices_per_gpu.max(1)),
            ),
            week_start: week.start,
        });
    }
    Ok(TenantUsage { tenant: slug.into(), quotas })
}

/// The use of every tenant the principal belongs to (My bookings, the booking panel).
pub async fn mine(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<TenantUsage>> {
    let mut all = Vec::with_capacity(principal.tenants.len());
    for tenant in &principal.tenants {
        all.push(usage(db, principal, &tenant.slug).await?);
    }
    Ok(all)
}

/// The admin's tenants page: every tenant with this week's use, and every
/// pool+kind a quota can be set for.
pub async fn page(db: &PgPool, principal: &Principal) -> ServiceResult<crate::model::TenantsPage> {
    let list = list(db, principal).await?;
    let mut with_usage = Vec::with_capacity(list.len());
    for tenant in list {
        let usage = usage(db, principal, &tenant.slug).await?;
        with_usage.push((tenant, usage));
    }
    let targets = crate::backend::pools::list(db, principal)
        .await?
        .into_iter()
        .flat_map(|p| {
            let (pool_id, pool) = (p.id, p.name);
            p.kinds.into_iter().map(move |k| crate::model::QuotaTarget {
                pool_id,
                pool: pool.clone(),
                kind: k.kind,
                capacity: k.capacity,
            })
        })
        .collect();
    Ok(crate::model::TenantsPage { tenants: with_usage, targets })
}
