//! Recurring bookings: `POST /series/preview` (what would fit, nothing
//! written), `POST /series` (book the occurrences that fit, or exactly the
//! chosen ones) and `POST /series/{id}/cancel` (the rest of the series).
//! One occurrence is canceled as any booking is.

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, IdempotencyKey, PathId};
use crate::state::AppState;
use app::backend::admission::{idempotency, series};
use app::model::{BookedSeries, Booking, NewSeries, SeriesPlan};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/series/preview", post(preview))
        .route("/series", post(book))
        .route("/series/{id}/cancel", post(cancel_rest))
}

async fn preview(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(new): ApiJson<NewSeries>,
) -> ApiResult<Json<SeriesPlan>> {
    Ok(Json(series::preview(&state.db, &principal, &new).await?))
}

/// With an `Idempotency-Key`, a repeat gets the first answer, booking nothing.
async fn book(
    State(state): State<AppState>,
    Caller(principal): Caller,
    IdempotencyKey(key): IdempotencyKey,
    ApiJson(new): ApiJson<NewSeries>,
) -> ApiResult<(StatusCode, Json<BookedSeries>)> {
    let act = series::book(&state.db, &principal, &new);
    let caller = (principal.user_id, key.as_deref());
    let booked = idempotency::once(&state.db, caller, &new, act).await?;
    Ok((StatusCode::CREATED, Json(booked)))
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct From {
    #[serde(default)]
    from: Option<DateTime<Utc>>,
}

async fn cancel_rest(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<From>,
) -> ApiResult<Json<Vec<Booking>>> {
    Ok(Json(series::cancel_rest(&state.db, &principal, id, body.from).await?))
}
