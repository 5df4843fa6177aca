use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::pools::blackouts;
use app::model::{Blackout, BlackoutCreated, NewBlackout};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/pools/{id}/blackouts", get(list).post(create)).route("/blackouts/{id}", delete(remove))
}

async fn list(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<Vec<Blackout>>> {
    Ok(Json(blackouts::list(&state.db, &principal, id).await?))
}

async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(new): ApiJson<NewBlackout>,
) -> ApiResult<(StatusCode, Json<BlackoutCreated>)> {
    Ok((StatusCode::CREATED, Json(blackouts::create(&state.db, &principal, id, new).await?)))
}

async fn remove(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<StatusCode> {
    blackouts::delete(&state.db, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
