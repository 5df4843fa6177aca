//! The `berth` server as a library: `main.rs` only boots, so tests and the
//! benchmark harness build the same router with `router(state)`.

pub mod api;
pub mod cli;
pub mod seed;
pub mod state;
mod web;

pub use state::AppState;

use axum::Router;

/// The whole HTTP surface: REST under `/api/v1`, the Leptos pages and server
/// fns, static files, and health checks.
pub fn router(state: AppState) -> Router {
    web::routes(&state).nest("/api/v1", api::router()).with_state(state)
}
