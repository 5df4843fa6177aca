//! `GET /api/v1/fit`: which kind holds a model — the memory the run needs,
//! with its arithmetic, and each kind the caller may book, smallest first.

use super::auth::Caller;
use super::error::ApiResult;
use super::input::ApiQuery;
use crate::state::AppState;
use app::rules::fit::{FitAnswer, FitQuery};
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/fit", get(answer))
}

async fn answer(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiQuery(query): ApiQuery<FitQuery>,
) -> ApiResult<Json<FitAnswer>> {
    Ok(Json(app::backend::fit::answer(&state.db, &principal, &query).await?))
}
