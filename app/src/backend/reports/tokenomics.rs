//! Each pool's cost model (managers and admins read and edit it, audited)
//! and the utilisation it defaults to: measured GPU use over the last 30
//! days, or booked hours while nothing has been measured.

use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{CostModel, MeasuredUtilization, Principal, Role, TokenomicsView};
use crate::rules::tokenomics::{evaluate, TokenomicsResult};
use sqlx::PgPool;
use uuid::Uuid;

/// Reports are for managers and admins.
pub fn require_reader(principal: &Principal) -> ServiceResult<()> {
    match principal.role {
        Role::Manager | Role::Admin => Ok(()),
        Role::User => Err(ServiceError::Forbidden("only managers and admins read reports")),
    }
}

/// Days the default utilisation looks back.
pub const LOOKBACK_DAYS: i32 = 30;

/// (capacity GPU-hours over the look-back, each kind from when it was
/// added; whole GPUs now) of a pool: the same GPU-hours the reports count.
async fn capacity(db: &PgPool, pool_id: Uuid) -> ServiceResult<(f64, f64)> {
    Ok(sqlx::query_as(
        "SELECT coalesce(sum(capacity::float8 / slices_per_gpu * extract(epoch FROM
                    now() - greatest(created_at, now() - make_interval(days => $2))) / 3600), 0)::float8,
                coalesce(sum(capacity::float8 / slices_per_gpu), 0)::float8
         FROM pool_kind WHERE pool_id = $1",
    )
    .bind(pool_id)
    .bind(LOOKBACK_DAYS)
    .fetch_one(db)
    .await?)
}

pub async fn measured_utilization(db: &PgPool, pool_id: Uuid) -> ServiceResult<(MeasuredUtilization, f64)> {
    let (capacity_gpu_hours, gpus) = capacity(db, pool_id).await?;
    let (busy, simulated): (Option<f64>, Option<bool>) = sqlx::query_as(
        "SELECT sum(busy_gpu_minutes) / 60, bool_or(simulated) FROM usage_pool_hour
         WHERE pool_id = $1 AND hour >= now() - make_interval(days => $2)",
    )
    .bind(pool_id)
    .bind(LOOKBACK_DAYS)
    .fetch_one(db)
    .await?;
    let share = |hours: f64| if capacity_gpu_hours > 0.0 { (hours / capacity_gpu_hours).clamp(0.0, 1.0) } else { 0.0 };
    if let Some(busy) = busy {
        let source = format!("measured GPU use over the last {LOOKBACK_DAYS} days");
        return Ok((MeasuredUtilization { value: share(busy), source, simulated: simulated.unwrap_or(false) }, gpus));
    }
    let booked: Option<f64> = sqlx::query_scalar(&format!(
        "SELECT sum(b.quantity::float8 / k.slices_per_gpu
                    * extract(epoch FROM least(b.ends_at, now()) - greatest(b.starts_at, now() - make_interval(days => $2))) / 3600)::float8
         FROM booking b JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         WHERE b.pool_id = $1 AND b.state IN ({})
           AND b.ends_at > now() - make_interval(days => $2) AND b.starts_at < now()",
        crate::model::BookingState::sql_list(&crate::model::BookingState::BOOKED)
    ))
    .bind(pool_id)
    .bind(LOOKBACK_DAYS)
    .fetch_one(db)
    .await?;
    let source = format!("booked hours over the last {LOOKBACK_DAYS} days (no GPU use measured yet)");
    Ok((MeasuredUtilization { value: share(booked.unwrap_or(0.0)), source, simulated: false }, gpus))
}

/// `currency`: the site's, which the cost model's amounts are in.
pub async fn view(
    db: &PgPool,
    principal: &Principal,
    pool: Option<Uuid>,
    currency: &str,
) -> ServiceResult<TokenomicsView> {
    require_reader(principal)?;
    let listed: Vec<(Uuid, String, String)> =
        sqlx::query_as("SELECT id, name, gpu_model FROM pool ORDER BY retired_at IS NOT NULL, name")
            .fetch_all(db)
            .await?;
    let (pool_id, pool_name, gpu_model) = match pool {
        Some(id) => listed.iter().find(|(p, _, _)| *p == id).cloned().ok_or(ServiceError::NotFound("pool"))?,
        None => listed.first().cloned().ok_or(ServiceError::NotFound("pool"))?,
    };
    let pools = listed.into_iter().map(|(id, name, _)| (id, name)).collect();
    let stored: Option<(sqlx::types::Json<CostModel>, chrono::DateTime<chrono::Utc>, Option<String>)> = sqlx::query_as(
        "SELECT m.model, m.updated_at, u.name FROM pool_cost_model m LEFT JOIN app_user u ON u.id = m.updated_by
         WHERE m.pool_id = $1",
    )
    .bind(pool_id)
    .fetch_optional(db)
    .await?;
    let (measured, gpus_available) = measured_utilization(db, pool_id).await?;
    let (model, updated) = match stored {
        Some((model, at, by)) => (model.0, Some((at, by.unwrap_or_else(|| "a removed user".into())))),
        // The 8B preset on the pool's own GPU, as the form's list offers it.
        None => {
            let first = &crate::model::PRESETS[0];
            let tokens = first.on(crate::model::gpu_of(&gpu_model)).tokens_per_second;
            let default = CostModel::default();
            (CostModel { tokens_per_second: tokens.unwrap_or(default.tokens_per_second), ..default }, None)
        }
    };
    let gpus_available = crate::model::figure(gpus_available);
    let currency = currency.to_string();
    let demo_history = super::demo::note(db).await?;
    Ok(TokenomicsView {
        pools,
        pool_id,
        pool_name,
        model,
        gpus_available,
        measured,
        updated,
        currency,
        gpu_model,
        demo_history,
    })
}

/// The GPU model a pool's admin wrote, for its presets (`model::gpu_of`).
pub async fn gpu_model(db: &PgPool, pool_id: Uuid) -> ServiceResult<String> {
    sqlx::query_scalar("SELECT gpu_model FROM pool WHERE id = $1")
        .bind(pool_id)
        .fetch_optional(db)
        .await?
        .ok_or(ServiceError::NotFound("pool"))
}

/// Stores a pool's model after checking it evaluates; returns the result.
pub async fn save(
    db: &PgPool,
    principal: &Principal,
    pool_id: Uuid,
    model: CostModel,
) -> ServiceResult<TokenomicsResult> {
    require_reader(principal)?;
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pool WHERE id = $1)").bind(pool_id).fetch_one(db).await?;
    if !exists {
        return Err(ServiceError::NotFound("pool"));
    }
    let (measured, gpus) = measured_utilization(db, pool_id).await?;
    let result = evaluate(&model.inputs(measured.value, gpus)).map_err(|mut err| {
        // The form types utilisation in percent.
        if err.field == "utilization" {
            err = crate::rules::FieldError::new("utilization_pct", "must be between 0 and 100 %");
        }
        err
    })?;
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO pool_cost_model (pool_id, model, updated_by) VALUES ($1, $2, $3)
         ON CONFLICT (pool_id) DO UPDATE SET model = excluded.model, updated_at = now(), updated_by = excluded.updated_by",
    )
    .bind(pool_id)
    .bind(sqlx::types::Json(&model))
    .bind(principal.user_id)
    .execute(&mut *tx)
    .await?;
    let detail = model.describe();
    let target = pool_id.to_string();
    audit::record(
        &mut tx,
        principal,
        "tokenomics.update",
        Subject { target: &target, tenant: None, pool: Some(pool_id) },
        &detail,
    )
    .await?;
    tx.commit().await?;
    Ok(result)
}
