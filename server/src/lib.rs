//! The `berth` server as a library: `main.rs` only boots, so tests and the
//! benchmark harness build the same router with `router(state)`.

pub mod api;
pub mod auth;
pub mod cli;
mod open_workspace;
pub mod seed;
pub mod seed_console;
pub mod state;
mod web;
pub mod worker;

pub use state::AppState;

use axum::{middleware, Router};
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::PostgresStore;

/// The whole HTTP surface: REST under `/api/v1`, `/auth/*`, the Leptos pages
/// and server fns, static files, and health checks. Layers, outermost first:
/// security headers, CSRF, the session, identity.
pub fn router(state: AppState) -> Router {
    let sessions = SessionManagerLayer::new(session_store(&state))
        .with_name(state.auth.config.session_cookie_name())
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.auth.config.secure_cookies())
        .with_expiry(Expiry::OnInactivity(idle(&state)));
    web::routes(&state)
        .merge(auth::routes::router())
        .route("/bookings/{id}/open", axum::routing::get(open_workspace::open))
        .nest("/api/v1", api::router())
        .layer(middleware::from_fn_with_state(state.clone(), auth::identity::resolve))
        .layer(sessions)
        .layer(middleware::from_fn_with_state(state.clone(), auth::csrf::guard))
        .layer(middleware::from_fn_with_state(state.clone(), auth::headers::secure))
        .with_state(state)
}

/// Sessions live in the migrations' `web_session` table.
pub fn session_store(state: &AppState) -> PostgresStore {
    PostgresStore::new(state.db.clone())
        .with_schema_name("public")
        .and_then(|store| store.with_table_name("web_session"))
        .expect("static, valid identifiers")
}

fn idle(state: &AppState) -> time::Duration {
    time::Duration::try_from(state.auth.config.idle_timeout).unwrap_or(time::Duration::hours(8))
}
