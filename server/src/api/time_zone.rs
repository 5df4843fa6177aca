//! `GET/PUT /api/v1/me/time-zone`: the zone the caller's mails, calendar
//! feed and CLI output are written in (`null` until chosen or learnt from
//! their browser).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::ApiJson;
use crate::state::AppState;
use app::backend::accounts::time_zone;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

pub fn router() -> Router<AppState> {
    Router::new().route("/me/time-zone", get(show).put(choose))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeZone {
    pub time_zone: Option<String>,
}

async fn show(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<TimeZone>> {
    Ok(Json(TimeZone { time_zone: time_zone::of(&state.db, &principal).await? }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Choice {
    time_zone: String,
}

async fn choose(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(choice): ApiJson<Choice>,
) -> ApiResult<Json<TimeZone>> {
    let chosen = time_zone::choose(&state.db, &principal, &choice.time_zone).await?;
    Ok(Json(TimeZone { time_zone: Some(chosen) }))
}
