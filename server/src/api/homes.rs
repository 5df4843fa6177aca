//! Homes and model caches that outlive the window (issue 46): one's own
//! (an admin: every one), asking for one to go, and a tenant's sizes and
//! retentions.

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, ApiQuery, PathId};
use crate::state::AppState;
use app::backend::homes;
use app::model::{Home, HomePrice, HomeSettings, Kept};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, put};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/homes", get(list))
        .route("/homes/price", put(set_price))
        .route("/homes/{id}", delete(remove))
        .route("/tenants/{slug}/homes", put(set_tenant))
}

async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<Home>>> {
    Ok(Json(homes::list(&state.db, &principal, principal.is_admin()).await?))
}

/// `DELETE /homes/{owner}?purpose=`: which of the owner's kept volumes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Which {
    /// `home` or `cache`; none: both.
    purpose: Option<Kept>,
}

/// `id` is the owner's id: their own, or anyone's for an admin.
async fn remove(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiQuery(which): ApiQuery<Which>,
) -> ApiResult<StatusCode> {
    homes::delete(&state.db, &principal, id, which.purpose).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_tenant(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(raw): Path<String>,
    ApiJson(settings): ApiJson<HomeSettings>,
) -> ApiResult<Json<HomeSettings>> {
    Ok(Json(homes::set_tenant(&state.db, &principal, super::tenants::slug(&raw)?, settings).await?))
}

async fn set_price(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(price): ApiJson<HomePrice>,
) -> ApiResult<Json<HomePrice>> {
    Ok(Json(homes::set_price(&state.db, &principal, price).await?))
}
