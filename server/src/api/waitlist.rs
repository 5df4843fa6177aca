use super::auth::Caller;
use super::error::ApiResult;
use super::input::PathId;
use crate::state::AppState;
use app::backend::waitlist;
use app::model::WaitlistEntry;
use axum::extract::State;
use axum::routing::{delete, get};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/waitlist", get(list)).route("/waitlist/{id}", delete(leave))
}

/// Own entries whose window has not ended; an admin sees everyone's.
async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<WaitlistEntry>>> {
    Ok(Json(waitlist::list(&state.db, &principal).await?))
}

/// Leaves the list; answers with the entry, now `left`.
async fn leave(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<WaitlistEntry>> {
    Ok(Json(waitlist::leave(&state.db, &principal, id).await?))
}
