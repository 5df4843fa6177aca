//! `/clusters`: where pools run and how the worker reaches them (admins).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::clusters;
use app::model::{Cluster, ClusterSpec};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/clusters", get(list).post(create))
        .route("/clusters/{id}", get(show).put(update).delete(remove))
}

async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<Cluster>>> {
    Ok(Json(clusters::list(&state.db, &principal).await?))
}

async fn show(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<Cluster>> {
    Ok(Json(clusters::get(&state.db, &principal, id).await?))
}

async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(spec): ApiJson<ClusterSpec>,
) -> ApiResult<(StatusCode, Json<Cluster>)> {
    Ok((StatusCode::CREATED, Json(clusters::create(&state.db, &principal, spec).await?)))
}

async fn update(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(spec): ApiJson<ClusterSpec>,
) -> ApiResult<Json<Cluster>> {
    Ok(Json(clusters::update(&state.db, &principal, id, spec).await?))
}

async fn remove(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<StatusCode> {
    clusters::delete(&state.db, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
