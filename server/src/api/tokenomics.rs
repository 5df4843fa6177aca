//! Tokenomics over REST: evaluate any inputs, and read or replace a pool's
//! stored cost model (managers and admins, as the page).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::reports::tokenomics;
use app::model::{CostModel, TokenomicsView};
use app::rules::tokenomics::{evaluate as run_model, TokenomicsInputs, TokenomicsResult};
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tokenomics/evaluate", post(evaluate))
        .route("/pools/{id}/cost-model", get(stored).put(replace))
}

async fn evaluate(
    Caller(principal): Caller,
    ApiJson(inputs): ApiJson<TokenomicsInputs>,
) -> ApiResult<Json<TokenomicsResult>> {
    tokenomics::require_reader(&principal)?;
    Ok(Json(run_model(&inputs).map_err(app::backend::ServiceError::from)?))
}

async fn stored(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<TokenomicsView>> {
    Ok(Json(tokenomics::view(&state.db, &principal, Some(id), &state.currency).await?))
}

async fn replace(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(model): ApiJson<CostModel>,
) -> ApiResult<Json<TokenomicsView>> {
    tokenomics::save(&state.db, &principal, id, model).await?;
    Ok(Json(tokenomics::view(&state.db, &principal, Some(id), &state.currency).await?))
}
