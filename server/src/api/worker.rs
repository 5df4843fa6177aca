use super::auth::Caller;
use super::error::ApiResult;
use crate::state::AppState;
use app::backend::sessions::status;
use app::model::WorkerStatus;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/worker/status", get(status))
}

async fn status(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<WorkerStatus>> {
    Ok(Json(status::status(&state.db, &principal).await?))
}
