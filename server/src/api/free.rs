//! `GET /api/v1/free`: time first — for a window, every kind of the pools
//! the caller may book that is free for all of it, or for its longest part
//! of at least `at_least` minutes (the portal's "What is free then").

use super::auth::Caller;
use super::error::ApiResult;
use super::input::ApiQuery;
use crate::state::AppState;
use app::backend::calendar::free_then;
use app::model::{FreeRow, FreeThenForm};
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;

pub fn router() -> Router<AppState> {
    Router::new().route("/free", get(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FreeQuery {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    at_least: Option<i64>,
    units: Option<i64>,
    memory_gb: Option<i64>,
}

async fn answer(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiQuery(query): ApiQuery<FreeQuery>,
) -> ApiResult<Json<Vec<FreeRow>>> {
    // The page's form in UTC: one set of rules and bounds for both.
    let minute = |at: DateTime<Utc>| at.format("%Y-%m-%dT%H:%M").to_string();
    let number = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
    let form = FreeThenForm {
        from: minute(query.from),
        to: minute(query.to),
        at_least: number(query.at_least),
        units: number(query.units),
        memory_gb: number(query.memory_gb),
    };
    Ok(Json(free_then::rows(&state.db, &principal, &form, "UTC").await?))
}
