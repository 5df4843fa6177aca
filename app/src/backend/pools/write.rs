//! Admin writes of pools: create, update (refusing to lower a capacity
//! below what is booked) and delete, each with its audit event.

use super::checks::{check_backfill_namespace, check_capacity_change, check_separate};
use super::classes;
use super::columns::{Columns, COLUMNS};
use super::read::load_one;
use crate::backend::admission::locks::lock_kind;
use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{KindSpec, NewPool, Placement, Pool, PoolPatch, PoolRules, Principal, Scheduling};
use crate::rules::{pool_spec, FieldError};
use sqlx::{PgConnection, PgPool, Row};
use uuid::Uuid;

/// What anyone but an admin is told here.
const ADMINS_ONLY: &str = "only admins manage pools";

pub async fn create(db: &PgPool, principal: &Principal, new: NewPool) -> ServiceResult<Pool> {
    principal.require_admin(ADMINS_ONLY)?;
    let defaults = PoolRules::default();
    let rules = PoolRules {
        granularity_minutes: new.granularity_minutes.unwrap_or(defaults.granularity_minutes),
        max_booking_minutes: new.max_booking_minutes.unwrap_or(defaults.max_booking_minutes),
        horizon_days: new.horizon_days.unwrap_or(defaults.horizon_days),
        min_notice_minutes: new.min_notice_minutes.unwrap_or(defaults.min_notice_minutes),
    };
    pool_spec::validate_kinds(&new.kinds, true)?;
    let node_selector = match new.node_selector.is_empty() {
        true => pool_spec::default_node_selector(&new.name),
        false => new.node_selector,
    };
    let columns = Columns {
        name: new.name.trim().to_string(),
        description: new.description,
        gpu_model: new.gpu_model,
        requires_approval: new.requires_approval,
        rules,
        default_booking_minutes: new.default_booking_minutes.unwrap_or_else(|| pool_spec::default_booking(&rules)),
        price_per_gpu_hour: new.price_per_gpu_hour,
        images: new.images,
        placement: Placement {
            node_selector,
            tolerations: new.tolerations,
            priority_class: new.priority_class,
            runtime_class: new.runtime_class,
            end_grace_seconds: new.end_grace_seconds.unwrap_or(crate::model::MAX_END_GRACE_SECONDS),
            team_cache_class: new.team_cache_class,
        },
        time_zone: new.time_zone,
        scheduling: Scheduling {
            backfill_namespace: new.backfill_namespace,
            scale_ahead_minutes: new.scale_ahead_minutes,
        },
    };
    columns.validate(new.kinds.iter().any(|k| k.lend_idle))?;

    let mut tx = db.begin().await?;
    let placement = &columns.placement;
    classes::check(&mut tx, placement.priority_class.as_deref(), placement.runtime_class.as_deref()).await?;
    check_separate(&mut tx, None, &placement.node_selector).await?;
    check_backfill_namespace(&mut tx, None, &columns.scheduling).await?;
    let cluster_id = crate::backend::clusters::for_new_pool(&mut tx, new.cluster.as_deref()).await?;
    let values: Vec<String> = (1..=COLUMNS.len() + 1).map(|i| format!("${i}")).collect();
    let sql =
        format!("INSERT INTO pool ({}, cluster_id) VALUES ({}) RETURNING id", COLUMNS.join(", "), values.join(", "));
    let id: Uuid = columns.bind(sqlx::query(&sql)).bind(cluster_id).fetch_one(&mut *tx).await?.try_get("id")?;
    replace_tenants(&mut tx, id, &new.tenants).await?;
    for spec in &new.kinds {
        upsert_kind(&mut tx, id, spec).await?;
    }
    let pool = load_one(&mut tx, principal, id).await?;
    let subject = Subject { target: &pool.name, tenant: None, pool: Some(id) };
    audit::record(&mut tx, principal, "pool.create", subject, &describe_kinds(&new.kinds)).await?;
    tx.commit().await?;
    Ok(pool)
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
    // The row as this update reads it stays so until it commits: two admins
    // changing different fields at once both keep their change. (Not FOR
    // UPDATE: a booking's insert may still take the pool row's key share.)
    sqlx::query("SELECT 1 FROM pool WHERE id = $1 FOR NO KEY UPDATE").bind(id).execute(&mut *tx).await?;
    let current = load_one(&mut tx, principal, id).await?;
    let rules = PoolRules {
        granularity_minutes: patch.granularity_minutes.unwrap_or(current.rules.granularity_minutes),
        max_booking_minutes: patch.max_booking_minutes.unwrap_or(current.rules.max_booking_minutes),
        horizon_days: patch.horizon_days.unwrap_or(current.rules.horizon_days),
        min_notice_minutes: patch.min_notice_minutes.unwrap_or(current.rules.min_notice_minutes),
    };
    // A length not asked for follows a new grid or longest booking that
    // the current one no longer fits; one asked for must fit.
    let default_booking_minutes = match patch.default_booking_minutes {
        Some(minutes) => minutes,
        None if pool_spec::validate_default_booking(current.default_booking_minutes, &rules).is_ok() => {
            current.default_booking_minutes
        }
        None => pool_spec::default_booking(&rules),
    };
    let mut kinds = patch.kinds.clone().unwrap_or_default();
    pool_spec::validate_kinds(&kinds, false)?;
    let was = &current.placement;
    let columns = Columns {
        name: patch.name.as_deref().map_or_else(|| current.name.clone(), |n| n.trim().to_string()),
        description: patch.description.clone().unwrap_or_else(|| current.description.clone()),
        gpu_model: patch.gpu_model.clone().unwrap_or_else(|| current.gpu_model.clone()),
        requires_approval: patch.requires_approval.unwrap_or(current.requires_approval),
        rules,
        default_booking_minutes,
        price_per_gpu_hour: patch.price_per_gpu_hour.unwrap_or(current.price_per_gpu_hour),
        images: patch.images.clone().unwrap_or_else(|| current.images.clone()),
        placement: Placement {
            node_selector: patch.node_selector.clone().unwrap_or_else(|| was.node_selector.clone()),
            tolerations: patch.tolerations.clone().unwrap_or_else(|| was.tolerations.clone()),
            priority_class: replaced(&patch.priority_class, &was.priority_class),
            runtime_class: replaced(&patch.runtime_class, &was.runtime_class),
            end_grace_seconds: patch.end_grace_seconds.unwrap_or(was.end_grace_seconds),
            team_cache_class: replaced(&patch.team_cache_class, &was.team_cache_class),
        },
        time_zone: patch.time_zone.clone().unwrap_or_else(|| current.time_zone.clone()),
        // A lending kind needs the backfill namespace, whichever of the two changes.
        scheduling: Scheduling {
            backfill_namespace: replaced(&patch.backfill_namespace, &current.scheduling.backfill_namespace),
            scale_ahead_minutes: match patch.scale_ahead_minutes {
                Some(-1) => None,
                Some(minutes) => Some(minutes),
                None => current.scheduling.scale_ahead_minutes,
            },
        },
    };
    let lending = current.kinds.iter().filter(|k| !kinds.iter().any(|s| s.kind == k.kind)).any(|k| k.lend_idle)
        || kinds.iter().any(|k| k.lend_idle);
    columns.validate(lending)?;
    // Only a class this change names: one the cluster has since dropped does
    // not block editing the rest of the pool.
    let placement = &columns.placement;
    let priority_named = patch.priority_class.as_ref().and(placement.priority_class.as_deref());
    let runtime_named = patch.runtime_class.as_ref().and(placement.runtime_class.as_deref());
    classes::check(&mut tx, priority_named, runtime_named).await?;
    let back_in_service = current.retired && patch.retired == Some(false);
    if patch.node_selector.is_some() || back_in_service {
        check_separate(&mut tx, Some(id), &placement.node_selector).await?;
    }
    check_backfill_namespace(&mut tx, Some(id), &columns.scheduling).await?;

    let set: Vec<String> = COLUMNS.iter().enumerate().map(|(i, column)| format!("{column} = ${}", i + 2)).collect();
    let retired = COLUMNS.len() + 2;
    let sql = format!(
        "UPDATE pool SET {},
             retired_at = CASE WHEN ${retired}::boolean IS NULL THEN retired_at
                               WHEN ${retired}::boolean THEN coalesce(retired_at, now()) END
         WHERE id = $1",
        set.join(", ")
    );
    columns.bind(sqlx::query(&sql).bind(id)).bind(patch.retired).execute(&mut *tx).await?;
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
    let pool = load_one(&mut tx, principal, id).await?;
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
