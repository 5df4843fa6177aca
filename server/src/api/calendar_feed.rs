//! Calendar feeds: `GET/POST /api/v1/me/calendar-feed` (the caller's secret
//! feed URL; POST makes a new one and kills the old), and the feed itself,
//! `GET /api/v1/calendar-feeds/{token}.ics`, whose secret is its only
//! credential (calendar apps send no other).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::ApiQuery;
use crate::state::AppState;
use app::backend::calendar::feed;
use app::model::CalendarFeed;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new().route("/me/calendar-feed", get(show).post(regenerate)).route("/calendar-feeds/{file}", get(feed))
}

async fn show(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<CalendarFeed>> {
    Ok(Json(feed::show(&state.db, &state.feed_key, &principal).await?))
}

async fn regenerate(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<CalendarFeed>> {
    Ok(Json(feed::regenerate(&state.db, &state.feed_key, &principal).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FeedQuery {
    /// Admins: the pool whose occupancy to list instead of their own bookings.
    #[serde(default)]
    pool: Option<Uuid>,
}

async fn feed(
    State(state): State<AppState>,
    Path(file): Path<String>,
    ApiQuery(query): ApiQuery<FeedQuery>,
) -> ApiResult<impl IntoResponse> {
    let token = file.strip_suffix(".ics").unwrap_or(&file);
    let ics = feed::ics(&state.db, &state.feed_key, token, query.pool).await?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/calendar; charset=utf-8"),
            // The URL is a secret: no shared cache may keep the answer.
            (header::CACHE_CONTROL, "private, max-age=300"),
        ],
        ics,
    ))
}
