use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, ApiQuery, PathId};
use crate::state::AppState;
use app::backend::pools;
use app::model::{FoundSlots, NewPool, Pool, PoolPatch};
use app::rules::capacity::Step;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/pools", get(list).post(create))
        .route("/pools/{id}", get(show).patch(update).delete(remove))
        .route("/pools/{id}/availability", get(availability))
        .route("/pools/{id}/slots", get(slots))
}

async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<Pool>>> {
    Ok(Json(pools::list(&state.db, &principal).await?))
}

async fn show(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<Json<Pool>> {
    Ok(Json(pools::get(&state.db, &principal, id).await?))
}

async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(new): ApiJson<NewPool>,
) -> ApiResult<(StatusCode, Json<Pool>)> {
    Ok((StatusCode::CREATED, Json(pools::create(&state.db, &principal, new).await?)))
}

async fn update(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(patch): ApiJson<PoolPatch>,
) -> ApiResult<Json<Pool>> {
    Ok(Json(pools::update(&state.db, &principal, id, patch).await?))
}

async fn remove(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<StatusCode> {
    pools::delete(&state.db, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AvailabilityQuery {
    kind: String,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
}

async fn availability(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiQuery(q): ApiQuery<AvailabilityQuery>,
) -> ApiResult<Json<Vec<Step>>> {
    Ok(Json(pools::availability(&state.db, &principal, id, &q.kind, q.from, q.to).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlotsQuery {
    kind: String,
    #[serde(default = "one")]
    quantity: i32,
    duration_minutes: i64,
    /// Defaults to now; the pool's minimum notice still applies.
    earliest: Option<DateTime<Utc>>,
    /// Defaults to a week after `earliest`; the pool's horizon still applies.
    latest: Option<DateTime<Utc>>,
    /// The zone of each window's `when` text; UTC by default.
    #[serde(default)]
    tz: Option<String>,
}

fn one() -> i32 {
    1
}

/// "Find a slot": the earliest windows that fit, each ready to be booked
/// with `POST /bookings`.
async fn slots(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiQuery(q): ApiQuery<SlotsQuery>,
) -> ApiResult<Json<FoundSlots>> {
    use app::backend::calendar::find::{default_span, slots};
    use app::backend::calendar::planning::SlotRequest;
    let tz = q.tz.unwrap_or_else(|| "UTC".into());
    if tz.parse::<chrono_tz::Tz>().is_err() {
        return Err(app::backend::ServiceError::from(app::rules::FieldError::new(
            "tz",
            "must be an IANA time zone such as Europe/Berlin",
        ))
        .into());
    }
    let (earliest, latest_end) = default_span(&state.db, q.earliest, q.latest).await?;
    let duration = app::rules::window::duration_minutes("duration_minutes", q.duration_minutes)
        .map_err(app::backend::ServiceError::from)?;
    let ask = SlotRequest { kind: &q.kind, quantity: q.quantity, duration, earliest, latest_end };
    Ok(Json(slots(&state.db, &principal, id, &ask, &tz).await?))
}
