//! REST API v1: JSON in and out, bearer-token auth, errors as
//! `{"error", "message", "field"}`. One module per resource.

mod audit;
pub(crate) mod auth;
mod blackouts;
mod bookings;
mod calendar_feed;
mod clusters;
mod csv_body;
pub(crate) mod error;
mod fit;
mod free;
mod homes;
mod idle_policy;
pub(crate) mod input;
mod notifications;
pub(crate) mod openapi;
mod pools;
mod reports;
mod series;
mod tenants;
mod time_zone;
mod tokenomics;
mod waitlist;
mod worker;

pub use error::ApiError;

use crate::state::AppState;
use axum::{extract::DefaultBodyLimit, routing::get, Json, Router};

/// Request bodies above this are refused with 413; the largest legitimate
/// body (a pool with many kinds) is a few kilobytes.
pub const BODY_LIMIT: usize = 64 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(|| async { Json(openapi::document()) }))
        .route("/me", get(auth::me))
        .merge(pools::router())
        .merge(clusters::router())
        .merge(bookings::router())
        .merge(tenants::router())
        .merge(homes::router())
        .merge(audit::router())
        .merge(worker::router())
        .merge(blackouts::router())
        .merge(waitlist::router())
        .merge(tokenomics::router())
        .merge(reports::router())
        .merge(idle_policy::router())
        .merge(calendar_feed::router())
        .merge(notifications::router())
        .merge(series::router())
        .merge(time_zone::router())
        .merge(fit::router())
        .merge(free::router())
        .fallback(|| async { ApiError::not_found("route") })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
}
