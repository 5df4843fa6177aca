use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, ApiQuery, IdempotencyKey, PathId};
use crate::state::AppState;
use app::backend::admission::{self, Admission};
use app::backend::bookings;
use app::model::{Booking, BookingFilter, NewBooking, NewCoOwner};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/bookings", get(list).post(create))
        .route("/bookings/{id}", get(show))
        .route("/bookings/{id}/cancel", post(cancel))
        .route("/bookings/{id}/extend", post(extend))
        .route("/bookings/{id}/move", post(move_window))
        .route("/bookings/{id}/end", post(end))
        .route("/bookings/{id}/approve", post(approve))
        .route("/bookings/{id}/reject", post(reject))
        .route("/bookings/{id}/co-owners", post(add_co_owner))
        .route("/bookings/{id}/co-owners/{email}", delete(remove_co_owner))
}

/// `201` with the booking; with `"waitlist": true` and no room, `202` with
/// the waitlist entry. With an `Idempotency-Key`, a repeat gets the first answer.
async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    IdempotencyKey(key): IdempotencyKey,
    ApiJson(new): ApiJson<NewBooking>,
) -> ApiResult<Response> {
    let act = async {
        Ok(match admission::create(&state.admissions, &principal, new.clone()).await? {
            // `warning` says so while the pool's cluster is unreachable (admission reads it).
            Admission::Booked(booking) => (201, serde_json::to_value(booking).unwrap_or_default()),
            Admission::Waitlisted(entry) => (202, serde_json::to_value(entry).unwrap_or_default()),
        })
    };
    let (status, body): (u16, serde_json::Value) =
        admission::idempotency::once(&state.db, (principal.user_id, key.as_deref()), &new, act).await?;
    Ok((StatusCode::from_u16(status).unwrap_or(StatusCode::CREATED), Json(body)).into_response())
}

async fn list(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiQuery(filter): ApiQuery<BookingFilter>,
) -> ApiResult<Json<Vec<Booking>>> {
    Ok(Json(bookings::list(&state.db, &principal, &filter).await?))
}

async fn show(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<Booking>> {
    Ok(Json(bookings::get(&state.db, &principal, id).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Reason {
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Comment {
    #[serde(default)]
    comment: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Approval {
    #[serde(default)]
    comment: String,
    #[serde(default)]
    start: Option<DateTime<Utc>>,
    #[serde(default)]
    end: Option<DateTime<Utc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewEnd {
    end: DateTime<Utc>,
}

async fn cancel(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<Reason>,
) -> ApiResult<Json<Booking>> {
    Ok(Json(bookings::cancel(&state.db, &principal, id, &body.reason).await?))
}

async fn extend(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<NewEnd>,
) -> ApiResult<(StatusCode, Json<Booking>)> {
    let booking = bookings::extend(&state.db, &principal, id, body.end).await?;
    // A request awaiting approval (the pending booking that holds the extra time).
    let status = if booking.extends.is_some() { StatusCode::ACCEPTED } else { StatusCode::OK };
    Ok((status, Json(booking)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewWindow {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

async fn move_window(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<NewWindow>,
) -> ApiResult<Json<Booking>> {
    let window = app::model::Window { start: body.start, end: body.end };
    Ok(Json(bookings::reschedule(&state.db, &principal, id, window).await?))
}

async fn end(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<Json<Booking>> {
    Ok(Json(bookings::end_early(&state.db, &principal, id).await?))
}

/// With `start` and `end` (the window the caller was shown), nothing is
/// approved if the booking has moved since (409 `moved_since_shown`).
async fn approve(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<Approval>,
) -> ApiResult<Json<Booking>> {
    let shown = match (body.start, body.end) {
        (Some(start), Some(end)) => Some(app::model::Window { start, end }),
        (None, None) => None,
        (None, Some(_)) => {
            return Err(app::backend::ServiceError::from(app::model::FieldError::new(
                "start",
                "give start and end together",
            ))
            .into())
        }
        (Some(_), None) => {
            return Err(app::backend::ServiceError::from(app::model::FieldError::new(
                "end",
                "give start and end together",
            ))
            .into())
        }
    };
    Ok(Json(bookings::approve(&state.db, &principal, id, &body.comment, shown).await?))
}

async fn reject(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<Comment>,
) -> ApiResult<Json<Booking>> {
    Ok(Json(bookings::reject(&state.db, &principal, id, &body.comment).await?))
}

/// Shares the booking with a member of its tenant; the booking as the owner sees it.
async fn add_co_owner(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(body): ApiJson<NewCoOwner>,
) -> ApiResult<Json<Booking>> {
    Ok(Json(bookings::co_owners::add(&state.db, &principal, id, &body.email).await?))
}

/// Stops sharing: the owner and admins remove anyone, a co-owner themselves.
async fn remove_co_owner(
    State(state): State<AppState>,
    Caller(principal): Caller,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> ApiResult<StatusCode> {
    let not_found = || super::error::ApiError::not_found("co-owner");
    let Path((id, email)) = path.map_err(|_| not_found())?;
    let id = id.parse().map_err(|_| not_found())?;
    bookings::co_owners::remove(&state.db, &principal, id, &email).await?;
    Ok(StatusCode::NO_CONTENT)
}
