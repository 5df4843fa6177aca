//! Reading pools: which a principal may see and book, and the pools with
//! their kinds.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Pool, PoolKind, Principal};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// SQL condition "pool p may be booked by someone in tenants $2, or $1 is an admin".
/// Shared with the booking queries so visibility has one definition.
pub(crate) const VISIBLE_POOL: &str = "($1 OR NOT EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id)
      OR EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id AND pt.tenant_id = ANY($2)))";

pub(crate) fn tenant_ids(principal: &Principal) -> Vec<Uuid> {
    principal.tenants.iter().map(|t| t.id).collect()
}

/// Whether the principal may book `pool`: it is open to every tenant or to
/// one of theirs (admins may book any).
pub fn may_book(principal: &Principal, pool: &Pool) -> bool {
    pool.tenants.is_empty() || principal.is_admin() || principal.tenants.iter().any(|t| pool.tenants.contains(&t.slug))
}

#[derive(sqlx::FromRow)]
struct KindRow {
    pool_id: Uuid,
    #[sqlx(flatten)]
    kind: PoolKind,
}

/// The pools `reader` may see (all, for admins), or only the one with id `only`.
pub(super) async fn load(conn: &mut PgConnection, reader: &Principal, only: Option<Uuid>) -> ServiceResult<Vec<Pool>> {
    let (sees_all, tenants) = (reader.is_admin(), tenant_ids(reader));
    let sql = format!(
        "SELECT p.id, p.name, p.description, p.gpu_model, p.requires_approval, p.granularity_minutes,
                p.max_booking_minutes, p.horizon_days, p.min_notice_minutes, p.default_booking_minutes,
                p.price_per_gpu_hour, p.images, p.node_selector, p.tolerations, p.priority_class, p.runtime_class, p.end_grace_seconds,
                p.team_cache_class, p.time_zone, p.retired_at IS NOT NULL AS retired,
                p.backfill_namespace, p.scale_ahead_minutes,
                (SELECT c.name FROM cluster c WHERE c.id = p.cluster_id) AS cluster,
                ARRAY(SELECT t.slug FROM pool_tenant pt JOIN tenant t ON t.id = pt.tenant_id
                      WHERE pt.pool_id = p.id ORDER BY t.slug) AS tenants
         FROM pool p
         WHERE {VISIBLE_POOL} AND ($3::uuid IS NULL OR p.id = $3)
         ORDER BY p.name"
    );
    let mut pools: Vec<Pool> =
        sqlx::query_as(&sql).bind(sees_all).bind(tenants).bind(only).fetch_all(&mut *conn).await?;
    let ids: Vec<Uuid> = pools.iter().map(|p| p.id).collect();
    let kinds: Vec<KindRow> = sqlx::query_as(
        "SELECT pool_id, kind, capacity, replicas_per_unit, vram_gb_per_unit, cpu_millis_per_unit, memory_mib_per_unit,
                storage_gib_per_unit, slices_per_gpu, price_per_unit_hour, lend_idle
         FROM pool_kind WHERE pool_id = ANY($1) ORDER BY kind",
    )
    .bind(&ids)
    .fetch_all(&mut *conn)
    .await?;
    for row in kinds {
        if let Some(pool) = pools.iter_mut().find(|p| p.id == row.pool_id) {
            pool.kinds.push(row.kind);
        }
    }
    Ok(pools)
}

/// The one pool `reader` may see with id `id`; any other is "not found".
pub(super) async fn load_one(conn: &mut PgConnection, reader: &Principal, id: Uuid) -> ServiceResult<Pool> {
    load(conn, reader, Some(id)).await?.pop().ok_or(ServiceError::NotFound("pool"))
}

pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<Pool>> {
    load(&mut *db.acquire().await?, principal, None).await
}

/// A pool the principal may book; any other is "not found".
pub async fn get(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Pool> {
    load_one(&mut *db.acquire().await?, principal, id).await
}
