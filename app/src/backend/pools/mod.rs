//! Pools: listing what a principal may book, admin create/update (refusing to
//! lower capacity below what is booked), and availability as a step function.

pub mod blackouts;
pub mod classes;
pub mod form;

use crate::backend::admission::locks::{live_usages, lock_kind};
use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{
    KindSpec, NewPool, Placement, Pool, PoolKind, PoolPatch, PoolRules, Principal, Scheduling, Toleration, Window,
};
use crate::rules::capacity::{free_steps, Step};
use crate::rules::window::check_in_range;
use crate::rules::{pool_spec, FieldError};
use chrono::{DateTime, Duration, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct PoolRow {
    id: Uuid,
    name: String,
    description: String,
    gpu_model: String,
    requires_approval: bool,
    #[sqlx(flatten)]
    rules: PoolRules,
    default_booking_minutes: i32,
    price_per_gpu_hour: f64,
    images: Vec<String>,
    tenants: Vec<String>,
    node_selector: sqlx::types::Json<std::collections::BTreeMap<String, String>>,
    tolerations: sqlx::types::Json<Vec<Toleration>>,
    priority_class: Option<String>,
    runtime_class: Option<String>,
    end_grace_seconds: i32,
    team_cache_class: Option<String>,
    time_zone: String,
    retired: bool,
    cluster: String,
    backfill_namespace: Option<String>,
    scale_ahead_minutes: Option<i32>,
}

#[derive(sqlx::FromRow)]
struct KindRow {
    pool_id: Uuid,
    kind: String,
    capacity: i32,
    replicas_per_unit: i32,
    vram_gb_per_unit: i32,
    cpu_millis_per_unit: i32,
    memory_mib_per_unit: i32,
    storage_gib_per_unit: i32,
    slices_per_gpu: i32,
    price_per_unit_hour: Option<f64>,
    lend_idle: bool,
}

/// SQL condition "pool p may be booked by someone in tenants $2, or $1 is an admin".
/// Shared with the booking queries so visibility has one definition.
pub(crate) const VISIBLE_POOL: &str = "($1 OR NOT EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id)
      OR EXISTS (SELECT 1 FROM pool_tenant pt WHERE pt.pool_id = p.id AND pt.tenant_id = ANY($2)))";

pub(crate) fn tenant_ids(principal: &Principal) -> Vec<Uuid> {
    principal.tenants.iter().map(|t| t.id).collect()
}

/// The pools `reader` may see (all, for admins), or only the one with id `only`.
async fn load(conn: &mut PgConnection, reader: &Principal, only: Option<Uuid>) -> ServiceResult<Vec<Pool>> {
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
    let pools: Vec<PoolRow> =
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
    Ok(pools
        .into_iter()
        .map(|p| Pool {
            kinds: kinds
                .iter()
                .filter(|k| k.pool_id == p.id)
                .map(|k| PoolKind {
                    kind: k.kind.clone(),
                    capacity: k.capacity,
                    replicas_per_unit: k.replicas_per_unit,
                    vram_gb_per_unit: k.vram_gb_per_unit,
                    cpu_millis_per_unit: k.cpu_millis_per_unit,
                    memory_mib_per_unit: k.memory_mib_per_unit,
                    storage_gib_per_unit: k.storage_gib_per_unit,
                    slices_per_gpu: k.slices_per_gpu,
                    price_per_unit_hour: k.price_per_unit_hour,
                    lend_idle: k.lend_idle,
                })
                .collect(),
            id: p.id,
            name: p.name,
            description: p.description,
            gpu_model: p.gpu_model,
            requires_approval: p.requires_approval,
            rules: p.rules,
            default_booking_minutes: p.default_booking_minutes,
            price_per_gpu_hour: p.price_per_gpu_hour,
            images: p.images,
            tenants: p.tenants,
            placement: Placement {
                node_selector: p.node_selector.0,
                tolerations: p.tolerations.0,
                priority_class: p.priority_class,
                runtime_class: p.runtime_class,
                end_grace_seconds: p.end_grace_seconds,
                team_cache_class: p.team_cache_class,
            },
            time_zone: p.time_zone,
            retired: p.retired,
            scheduling: Scheduling {
                backfill_namespace: p.backfill_namespace,
                scale_ahead_minutes: p.scale_ahead_minutes,
            },
            cluster: p.cluster,
        })
        .collect())
}

pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<Pool>> {
    load(&mut *db.acquire().await?, principal, None).await
}

/// A pool the principal may book; any other is "not found".
pub async fn get(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<Pool> {
    load(&mut *db.acquire().await?, principal, Some(id)).await?.pop().ok_or(ServiceError::NotFound("pool"))
}

fn validate_time_zone(zone: &str) -> ServiceResult<()> {
    zone.parse::<chrono_tz::Tz>()
        .map(|_| ())
        .map_err(|_| FieldError::new("time_zone", "must be an IANA time zone such as Europe/Berlin or UTC").into())
}

/// What anyone but an admin is told here.
const ADMINS_ONLY: &str = "only admins manage pools";

async fn tenant_ids_for(conn: &mut PgConnection, slugs: &[String]) -> ServiceResult<Vec<Uuid>> {
    let rows: Vec<(String, Uuid)> =
        sqlx::query_as("SELECT slug, id FROM tenant WHERE slug = ANY($1)").bind(slugs).fetch_all(&mut *conn).await?;
    slugs
        .iter()
        .enumerate()
        .map(|(i, slug)| {
            rows.iter()
                .find(|(s, _)| s == slug)
                .map(|(_, id)| *id)
                .ok_or_else(|| FieldError::new(format!("tenants[{i}]"), format!("no tenant named {slug}")).into())
        })
        .collect()
}

async fn replace_tenants(conn: &mut PgConnection, pool_id: Uuid, slugs: &[String]) -> ServiceResult<()> {
    let ids = tenant_ids_for(conn, slugs).await?;
    sqlx::query("DELETE FROM pool_tenant WHERE pool_id = $1").bind(pool_id).execute(&mut *conn).await?;
    sqlx::query("INSERT INTO pool_tenant (pool_id, tenant_id) SELECT $1, unnest($2::uuid[])")
        .bind(pool_id)
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn upsert_kind(conn: &mut PgConnection, pool_id: Uuid, spec: &KindSpec) -> ServiceResult<()> {
    let slices_per_gpu = spec.slices_per_gpu.unwrap_or_else(|| crate::model::default_slices_per_gpu(&spec.kind));
    sqlx::query(
        "INSERT INTO pool_kind (pool_id, kind, capacity, replicas_per_unit, vram_gb_per_unit,
                                cpu_millis_per_unit, memory_mib_per_unit, storage_gib_per_unit,
                                slices_per_gpu, price_per_unit_hour, lend_idle)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (pool_id, kind) DO UPDATE SET capacity = excluded.capacity,
             replicas_per_unit = excluded.replicas_per_unit, vram_gb_per_unit = excluded.vram_gb_per_unit,
             cpu_millis_per_unit = excluded.cpu_millis_per_unit, memory_mib_per_unit = excluded.memory_mib_per_unit,
             storage_gib_per_unit = excluded.storage_gib_per_unit, slices_per_gpu = excluded.slices_per_gpu,
             price_per_unit_hour = excluded.price_per_unit_hour, lend_idle = excluded.lend_idle",
    )
    .bind(pool_id)
    .bind(&spec.kind)
    .bind(spec.capacity)
    .bind(spec.replicas_per_unit)
    .bind(spec.vram_gb_per_unit)
    .bind(spec.cpu_millis_per_unit)
    .bind(spec.memory_mib_per_unit)
    .bind(spec.storage_gib_per_unit)
    .bind(slices_per_gpu)
    .bind(spec.price_per_unit_hour)
    .bind(spec.lend_idle)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub async fn create(db: &PgPool, principal: &Principal, new: NewPool) -> ServiceResult<Pool> {
    principal.require_admin(ADMINS_ONLY)?;
    let defaults = PoolRules::default();
    let rules = PoolRules {
        granularity_minutes: new.granularity_minutes.unwrap_or(defaults.granularity_minutes),
        max_booking_minutes: new.max_booking_minutes.unwrap_or(defaults.max_booking_minutes),
        horizon_days: new.horizon_days.unwrap_or(defaults.horizon_days),
        min_notice_minutes: new.min_notice_minutes.unwrap_or(defaults.min_notice_minutes),
    };
    pool_spec::validate_name(&new.name)?;
    pool_spec::validate_rules(&rules)?;
    let default_booking_minutes = new.default_booking_minutes.unwrap_or_else(|| pool_spec::default_booking(&rules));
    pool_spec::validate_default_booking(default_booking_minutes, &rules)?;
    pool_spec::validate_price("price_per_gpu_hour", new.price_per_gpu_hour)?;
    pool_spec::validate_images(&new.images)?;
    pool_spec::validate_kinds(&new.kinds, true)?;
    let mut new = new;
    if new.node_selector.is_empty() {
        new.node_selector = pool_spec::default_node_selector(&new.name);
    }
    pool_spec::validate_placement(&new.node_selector, &new.tolerations)?;
    pool_spec::validate_pod_classes(new.priority_class.as_deref(), new.runtime_class.as_deref())?;
    let end_grace_seconds = new.end_grace_seconds.unwrap_or(crate::model::MAX_END_GRACE_SECONDS);
    pool_spec::validate_end_grace(end_grace_seconds)?;
    pool_spec::validate_team_cache_class(new.team_cache_class.as_deref())?;
    validate_time_zone(&new.time_zone)?;
    let scheduling =
        Scheduling { backfill_namespace: new.backfill_namespace.clone(), scale_ahead_minutes: new.scale_ahead_minutes };
    pool_spec::validate_scheduling(&scheduling, new.kinds.iter().any(|k| k.lend_idle))?;

    let mut tx = db.begin().await?;
    classes::check(&mut tx, new.priority_class.as_deref(), new.runtime_class.as_deref()).await?;
    check_separate(&mut tx, None, &new.node_selector).await?;
    check_backfill_namespace(&mut tx, None, &scheduling).await?;
    let cluster_id = crate::backend::clusters::for_new_pool(&mut tx, new.cluster.as_deref()).await?;
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO pool (name, description, gpu_model, requires_approval, granularity_minutes,
                           max_booking_minutes, horizon_days, min_notice_minutes, price_per_gpu_hour, images,
                           node_selector, tolerations, time_zone, backfill_namespace, scale_ahead_minutes,
                           priority_class, runtime_class, end_grace_seconds, default_booking_minutes, cluster_id,
                           team_cache_class)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
         RETURNING id",
    )
    .bind(new.name.trim())
    .bind(&new.description)
    .bind(&new.gpu_model)
    .bind(new.requires_approval)
    .bind(rules.granularity_minutes)
    .bind(rules.max_booking_minutes)
    .bind(rules.horizon_days)
    .bind(rules.min_notice_minutes)
    .bind(new.price_per_gpu_hour)
    .bind(&new.images)
    .bind(sqlx::types::Json(&new.node_selector))
    .bind(sqlx::types::Json(&new.tolerations))
    .bind(&new.time_zone)
    .bind(&scheduling.backfill_namespace)
    .bind(scheduling.scale_ahead_minutes)
    .bind(&new.priority_class)
    .bind(&new.runtime_class)
    .bind(end_grace_seconds)
    .bind(default_booking_minutes)
    .bind(cluster_id)
    .bind(&new.team_cache_class)
    .fetch_one(&mut *tx)
    .await?;
    replace_tenants(&mut tx, id, &new.tenants).await?;
    for spec in &new.kinds {
        upsert_kind(&mut tx, id, spec).await?;
    }
    let pool = load(&mut tx, principal, Some(id)).await?.pop().ok_or(ServiceError::NotFound("pool"))?;
    let subject = Subject { target: &pool.name, tenant: None, pool: Some(id) };
    audit::record(&mut tx, principal, "pool.create", subject, &describe_kinds(&new.kinds)).await?;
    tx.commit().await?;
    Ok(pool)
}

/// Refuses a selector nested with another live pool's (see
/// `pool_spec::validate_separate`). Serialized by a transaction-scoped lock
/// so two admins saving at once cannot both pass.
async fn check_separate(
    tx: &mut PgConnection,
    pool_id: Option<Uuid>,
    node_selector: &std::collections::BTreeMap<String, String>,
) -> ServiceResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('berth.pool.node_selector'))").execute(&mut *tx).await?;
    let others: Vec<(String, sqlx::types::Json<std::collections::BTreeMap<String, String>>)> = sqlx::query_as(
        "SELECT name, node_selector FROM pool WHERE retired_at IS NULL AND id IS DISTINCT FROM $1 ORDER BY name",
    )
    .bind(pool_id)
    .fetch_all(&mut *tx)
    .await?;
    let others: Vec<_> = others.into_iter().map(|(name, selector)| (name, selector.0)).collect();
    Ok(pool_spec::validate_separate(node_selector, &others)?)
}

/// Refuses a backfill namespace another pool has: each pool's backfill
/// LocalQueue there is called `backfill` (a unique index backs this).
async fn check_backfill_namespace(
    tx: &mut PgConnection,
    pool_id: Option<Uuid>,
    scheduling: &Scheduling,
) -> ServiceResult<()> {
    let Some(namespace) = &scheduling.backfill_namespace else { return Ok(()) };
    let other: Option<String> =
        sqlx::query_scalar("SELECT name FROM pool WHERE backfill_namespace = $1 AND id IS DISTINCT FROM $2")
            .bind(namespace)
            .bind(pool_id)
            .fetch_optional(&mut *tx)
            .await?;
    match other {
        Some(pool) => {
            Err(FieldError::new("backfill_namespace", format!("is pool {pool}'s backfill namespace already")).into())
        }
        None => Ok(()),
    }
}

/// Refuses to set `capacity` below the peak of live bookings from now on,
/// naming the bookings that overlap the overbooked instants.
async fn check_capacity_change(conn: &mut PgConnection, pool_id: Uuid, spec: &KindSpec) -> ServiceResult<()> {
    let now = crate::backend::db_now(&mut *conn).await?;
    // No live booking ends later than the longest horizon from now.
    let last_possible_end = now + Duration::days(i64::from(pool_spec::MAX_HORIZON_DAYS) + 1);
    let live = live_usages(conn, pool_id, &spec.kind, now, last_possible_end).await?;
    let Some(last_end) = live.iter().map(|(_, u)| u.end).max() else {
        return Ok(());
    };
    let usages: Vec<_> = live.iter().map(|(_, u)| *u).collect();
    let window = Window { start: now, end: last_end };
    let over: Vec<Step> = free_steps(&usages, spec.capacity, window).into_iter().filter(|s| s.free < 0).collect();
    if over.is_empty() {
        return Ok(());
    }
    let booked = over.iter().map(|s| spec.capacity - s.free).max().unwrap_or(0);
    let bookings = live
        .iter()
        .filter(|(_, u)| over.iter().any(|s| u.start < s.end && s.start < u.end))
        .map(|(id, _)| *id)
        .collect();
    Err(ServiceError::CapacityBelowBooked { kind: spec.kind.clone(), capacity: spec.capacity, booked, bookings })
}

/// An optional text field after a patch: `""` removes it, absent keeps `current`.
fn replaced(given: &Option<String>, current: &Option<String>) -> Option<String> {
    match given.as_deref() {
        Some("") => None,
        Some(text) => Some(text.to_string()),
        None => current.clone(),
    }
}

pub async fn update(db: &PgPool, principal: &Principal, id: Uuid, patch: PoolPatch) -> ServiceResult<Pool> {
    principal.require_admin(ADMINS_ONLY)?;
    let mut tx = db.begin().await?;
    let current = load(&mut tx, principal, Some(id)).await?.pop().ok_or(ServiceError::NotFound("pool"))?;
    let rules = PoolRules {
        granularity_minutes: patch.granularity_minutes.unwrap_or(current.rules.granularity_minutes),
        max_booking_minutes: patch.max_booking_minutes.unwrap_or(current.rules.max_booking_minutes),
        horizon_days: patch.horizon_days.unwrap_or(current.rules.horizon_days),
        min_notice_minutes: patch.min_notice_minutes.unwrap_or(current.rules.min_notice_minutes),
    };
    if let Some(name) = &patch.name {
        pool_spec::validate_name(name)?;
    }
    pool_spec::validate_rules(&rules)?;
    // A length not asked for follows a new grid or longest booking that
    // the current one no longer fits; one asked for must fit.
    let default_booking_minutes = match patch.default_booking_minutes {
        Some(minutes) => minutes,
        None if pool_spec::validate_default_booking(current.default_booking_minutes, &rules).is_ok() => {
            current.default_booking_minutes
        }
        None => pool_spec::default_booking(&rules),
    };
    pool_spec::validate_default_booking(default_booking_minutes, &rules)?;
    pool_spec::validate_price("price_per_gpu_hour", patch.price_per_gpu_hour.unwrap_or(current.price_per_gpu_hour))?;
    if let Some(images) = &patch.images {
        pool_spec::validate_images(images)?;
    }
    if let Some(zone) = &patch.time_zone {
        validate_time_zone(zone)?;
    }
    let mut kinds = patch.kinds.clone().unwrap_or_default();
    pool_spec::validate_kinds(&kinds, false)?;
    let node_selector = patch.node_selector.as_ref().unwrap_or(&current.placement.node_selector);
    pool_spec::validate_placement(node_selector, patch.tolerations.as_ref().unwrap_or(&current.placement.tolerations))?;
    let priority_class = replaced(&patch.priority_class, &current.placement.priority_class);
    let runtime_class = replaced(&patch.runtime_class, &current.placement.runtime_class);
    pool_spec::validate_pod_classes(priority_class.as_deref(), runtime_class.as_deref())?;
    let end_grace_seconds = patch.end_grace_seconds.unwrap_or(current.placement.end_grace_seconds);
    pool_spec::validate_end_grace(end_grace_seconds)?;
    let team_cache_class = replaced(&patch.team_cache_class, &current.placement.team_cache_class);
    pool_spec::validate_team_cache_class(team_cache_class.as_deref())?;
    // Only a class this change names: one the cluster has since dropped does
    // not block editing the rest of the pool.
    let priority_named = patch.priority_class.as_ref().and(priority_class.as_deref());
    let runtime_named = patch.runtime_class.as_ref().and(runtime_class.as_deref());
    classes::check(&mut tx, priority_named, runtime_named).await?;
    // A lending kind needs the backfill namespace, whichever of the two changes.
    let scheduling = Scheduling {
        backfill_namespace: replaced(&patch.backfill_namespace, &current.scheduling.backfill_namespace),
        scale_ahead_minutes: match patch.scale_ahead_minutes {
            Some(-1) => None,
            Some(minutes) => Some(minutes),
            None => current.scheduling.scale_ahead_minutes,
        },
    };
    let lending = current.kinds.iter().filter(|k| !kinds.iter().any(|s| s.kind == k.kind)).any(|k| k.lend_idle)
        || kinds.iter().any(|k| k.lend_idle);
    pool_spec::validate_scheduling(&scheduling, lending)?;
    let back_in_service = current.retired && patch.retired == Some(false);
    if patch.node_selector.is_some() || back_in_service {
        check_separate(&mut tx, Some(id), node_selector).await?;
    }
    check_backfill_namespace(&mut tx, Some(id), &scheduling).await?;

    sqlx::query(
        "UPDATE pool SET name = coalesce($2, name), description = coalesce($3, description),
             gpu_model = coalesce($4, gpu_model), requires_approval = coalesce($5, requires_approval),
             granularity_minutes = $6, max_booking_minutes = $7, horizon_days = $8, min_notice_minutes = $9,
             price_per_gpu_hour = coalesce($10, price_per_gpu_hour), images = coalesce($11, images),
             node_selector = coalesce($12, node_selector), tolerations = coalesce($13, tolerations),
             time_zone = coalesce($14, time_zone), backfill_namespace = $16, scale_ahead_minutes = $17,
             priority_class = $18, runtime_class = $19, end_grace_seconds = $20, default_booking_minutes = $21,
             team_cache_class = $22,
             retired_at = CASE WHEN $15::boolean IS NULL THEN retired_at WHEN $15::boolean THEN coalesce(retired_at, now()) END
         WHERE id = $1",
    )
    .bind(id)
    .bind(patch.name.as_deref().map(str::trim))
    .bind(&patch.description)
    .bind(&patch.gpu_model)
    .bind(patch.requires_approval)
    .bind(rules.granularity_minutes)
    .bind(rules.max_booking_minutes)
    .bind(rules.horizon_days)
    .bind(rules.min_notice_minutes)
    .bind(patch.price_per_gpu_hour)
    .bind(&patch.images)
    .bind(patch.node_selector.as_ref().map(sqlx::types::Json))
    .bind(patch.tolerations.as_ref().map(sqlx::types::Json))
    .bind(&patch.time_zone)
    .bind(patch.retired)
    .bind(&scheduling.backfill_namespace)
    .bind(scheduling.scale_ahead_minutes)
    .bind(&priority_class)
    .bind(&runtime_class)
    .bind(end_grace_seconds)
    .bind(default_booking_minutes)
    .bind(&team_cache_class)
    .execute(&mut *tx)
    .await?;
    if let Some(tenants) = &patch.tenants {
        replace_tenants(&mut tx, id, tenants).await?;
    }
    // Lock kinds in name order, the same order everywhere, so two admins never deadlock.
    kinds.sort_by(|a, b| a.kind.cmp(&b.kind));
    if let Some(cluster) = &patch.cluster {
        // Every kind, so no booking lands on the pool while it moves (the
        // loop below takes some of them again, which a session may).
        let mut all: Vec<&str> = current.kinds.iter().map(|k| k.kind.as_str()).collect();
        all.extend(kinds.iter().map(|k| k.kind.as_str()));
        all.sort_unstable();
        all.dedup();
        for kind in all {
            lock_kind(&mut tx, id, kind).await?;
        }
        crate::backend::clusters::move_pool(&mut tx, id, cluster).await?;
    }
    for spec in &kinds {
        lock_kind(&mut tx, id, &spec.kind).await?;
        let lowered = current.kinds.iter().any(|k| k.kind == spec.kind && spec.capacity < k.capacity);
        if lowered {
            check_capacity_change(&mut tx, id, spec).await?;
        }
        upsert_kind(&mut tx, id, spec).await?;
    }
    let pool = load(&mut tx, principal, Some(id)).await?.pop().ok_or(ServiceError::NotFound("pool"))?;
    let subject = Subject { target: &pool.name, tenant: None, pool: Some(id) };
    audit::record(&mut tx, principal, "pool.update", subject, &describe_patch(&patch)).await?;
    tx.commit().await?;
    // A raised capacity (or a tenant let in) may admit waiting requests.
    crate::backend::waitlist::after_freeing(db, crate::backend::waitlist::Freed::Pool(id)).await;
    Ok(pool)
}

fn describe_kinds(kinds: &[KindSpec]) -> String {
    kinds.iter().map(|k| format!("{} × {}", k.kind, k.capacity)).collect::<Vec<_>>().join(", ")
}

/// Which fields a patch set, and the kinds' new capacities.
fn describe_patch(patch: &PoolPatch) -> String {
    let json = changed_fields(patch);
    match &patch.kinds {
        Some(kinds) => format!("{json}; kinds: {}", describe_kinds(kinds)),
        None => json,
    }
}

fn changed_fields(patch: &PoolPatch) -> String {
    let set = [
        ("name", patch.name.is_some()),
        ("description", patch.description.is_some()),
        ("gpu_model", patch.gpu_model.is_some()),
        ("requires_approval", patch.requires_approval.is_some()),
        ("granularity_minutes", patch.granularity_minutes.is_some()),
        ("max_booking_minutes", patch.max_booking_minutes.is_some()),
        ("horizon_days", patch.horizon_days.is_some()),
        ("min_notice_minutes", patch.min_notice_minutes.is_some()),
        ("default_booking_minutes", patch.default_booking_minutes.is_some()),
        ("price_per_gpu_hour", patch.price_per_gpu_hour.is_some()),
        ("images", patch.images.is_some()),
        ("tenants", patch.tenants.is_some()),
        ("node_selector", patch.node_selector.is_some()),
        ("tolerations", patch.tolerations.is_some()),
        ("priority_class", patch.priority_class.is_some()),
        ("runtime_class", patch.runtime_class.is_some()),
        ("end_grace_seconds", patch.end_grace_seconds.is_some()),
        ("team_cache_class", patch.team_cache_class.is_some()),
        ("time_zone", patch.time_zone.is_some()),
        ("retired", patch.retired.is_some()),
        ("backfill_namespace", patch.backfill_namespace.is_some()),
        ("scale_ahead_minutes", patch.scale_ahead_minutes.is_some()),
        ("cluster", patch.cluster.is_some()),
    ];
    let names: Vec<&str> = set.iter().filter(|(_, present)| *present).map(|(name, _)| *name).collect();
    format!("changed: {}", if names.is_empty() { "nothing".to_string() } else { names.join(", ") })
}

/// Deletes a pool that has never had a booking (retire one that has).
pub async fn delete(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<()> {
    principal.require_admin(ADMINS_ONLY)?;
    let mut tx = db.begin().await?;
    let name: Option<String> =
        sqlx::query_scalar("SELECT name FROM pool WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(&mut *tx).await?;
    let name = name.ok_or(ServiceError::NotFound("pool"))?;
    let booked: i64 =
        sqlx::query_scalar("SELECT count(*) FROM booking WHERE pool_id = $1").bind(id).fetch_one(&mut *tx).await?;
    if booked > 0 {
        return Err(ServiceError::Conflict {
            code: "pool_has_bookings",
            field: None,
            reason: format!(
                "{name} has {} in its history; retire it instead",
                crate::model::counted(booked, "booking", "bookings")
            ),
        });
    }
    sqlx::query("DELETE FROM pool WHERE id = $1").bind(id).execute(&mut *tx).await?;
    audit::record(&mut tx, principal, "pool.delete", Subject { target: &name, tenant: None, pool: None }, "").await?;
    tx.commit().await?;
    Ok(())
}

/// Whether the principal may book `pool`: it is open to every tenant or to
/// one of theirs (admins may book any).
pub fn may_book(principal: &Principal, pool: &crate::model::Pool) -> bool {
    pool.tenants.is_empty() || principal.is_admin() || principal.tenants.iter().any(|t| pool.tenants.contains(&t.slug))
}

/// Free units of `kind` over `[from, to)`; by default the coming week from the current slot.
pub async fn availability(
    db: &PgPool,
    principal: &Principal,
    id: Uuid,
    kind: &str,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) -> ServiceResult<Vec<Step>> {
    let pool = get(db, principal, id).await?;
    let capacity = pool.capacity_of(kind)?;
    let mut conn = db.acquire().await?;
    let now = crate::backend::db_now(&mut *conn).await?;
    let from = from.unwrap_or(now);
    check_in_range("from", from)?;
    let to = to.unwrap_or(from + Duration::days(7));
    check_in_range("to", to)?;
    if to <= from {
        return Err(FieldError::new("to", "must be after from").into());
    }
    if to - from > Duration::days(92) {
        return Err(FieldError::new("to", "a range may span at most 92 days").into());
    }
    let window = Window { start: from, end: to };
    let mut usages: Vec<_> = live_usages(&mut conn, id, kind, from, to).await?.into_iter().map(|(_, u)| u).collect();
    // A maintenance window leaves nothing free, whatever was kept in it.
    for blackout in crate::backend::pools::blackouts::windows::overlapping(&mut conn, id, kind, window).await? {
        usages.push(crate::rules::capacity::Usage { start: blackout.start, end: blackout.end, quantity: capacity });
    }
    Ok(free_steps(&usages, capacity, window).into_iter().map(|s| Step { free: s.free.max(0), ..s }).collect())
}
