use super::auth::Caller;
use super::error::{ApiError, ApiResult};
use super::input::{ApiJson, ApiQuery};
use crate::state::AppState;
use app::backend::accounts::tenants;
use app::model::{NewTenant, QuotaEntry, Tenant, TenantPatch, TenantUsage};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch, put};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tenants", get(list).post(create))
        .route("/tenants/{slug}", patch(rename))
        .route("/tenants/{slug}/quotas", put(replace_quotas))
        .route("/tenants/{slug}/usage", get(usage))
        .route("/tenants/{slug}/dashboard", get(dashboard))
}

/// A tenant slug from the path; anything a slug cannot be (too long, other
/// characters — a NUL would even make PostgreSQL refuse the text) is no tenant.
pub(super) fn slug(raw: &str) -> ApiResult<&str> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if raw.is_empty() || raw.len() > 40 || !raw.chars().all(allowed) {
        return Err(ApiError::not_found("tenant"));
    }
    Ok(raw)
}

async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<Tenant>>> {
    Ok(Json(tenants::list(&state.db, &principal).await?))
}

async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(new): ApiJson<NewTenant>,
) -> ApiResult<(StatusCode, Json<Tenant>)> {
    Ok((StatusCode::CREATED, Json(tenants::create(&state.db, &principal, new).await?)))
}

async fn rename(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(raw): Path<String>,
    ApiJson(patch): ApiJson<TenantPatch>,
) -> ApiResult<Json<Tenant>> {
    Ok(Json(tenants::rename(&state.db, &principal, slug(&raw)?, patch).await?))
}

async fn replace_quotas(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(raw): Path<String>,
    ApiJson(entries): ApiJson<Vec<QuotaEntry>>,
) -> ApiResult<Json<TenantUsage>> {
    if entries.len() > 1000 {
        return Err(ApiError::invalid("quotas", "at most 1000 entries"));
    }
    Ok(Json(tenants::replace_quotas(&state.db, &principal, slug(&raw)?, entries).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DashboardQuery {
    /// The zone the windows are written in; UTC by default.
    #[serde(default)]
    tz: Option<String>,
    /// The device charts' range: 1h (default), 6h, 24h or 7d.
    #[serde(default)]
    range: Option<String>,
    /// Only the pools of this cluster.
    #[serde(default)]
    cluster: Option<String>,
}

async fn dashboard(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(raw): Path<String>,
    ApiQuery(query): ApiQuery<DashboardQuery>,
) -> ApiResult<Json<app::model::Dashboard>> {
    let tz =
        app::rules::local_time::checked_zone("tz", query.tz.as_deref()).map_err(app::backend::ServiceError::from)?;
    let range = match query.range.as_deref() {
        None => app::model::ChartRange::default(),
        Some(text) => app::model::ChartRange::ALL.into_iter().find(|r| r.as_str() == text).ok_or_else(|| {
            app::backend::ServiceError::from(app::rules::FieldError::new("range", "must be 1h, 6h, 24h or 7d"))
        })?,
    };
    let asked = (Some(slug(&raw)?), range, query.cluster.as_deref());
    Ok(Json(app::backend::reports::dashboard::load(&state.db, &principal, asked, tz.name()).await?))
}

async fn usage(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(raw): Path<String>,
) -> ApiResult<Json<TenantUsage>> {
    Ok(Json(tenants::usage(&state.db, &principal, slug(&raw)?).await?))
}
