//! `GET/PUT /api/v1/pools/{id}/idle-policy`: a pool's idle reclaim (anyone
//! signed in reads it, since it decides when their bookings end; admins set it).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::sessions::idle_reclaim;
use app::model::IdlePolicy;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/pools/{id}/idle-policy", get(read).put(replace))
}

async fn read(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<IdlePolicy>> {
    // A pool the caller may not book is not theirs to read about (404).
    app::backend::pools::get(&state.db, &principal, id).await?;
    Ok(Json(idle_reclaim::policy(&state.db, id).await?))
}

async fn replace(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(policy): ApiJson<IdlePolicy>,
) -> ApiResult<Json<IdlePolicy>> {
    Ok(Json(idle_reclaim::set_policy(&state.db, &principal, id, policy).await?))
}
