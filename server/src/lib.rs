//! The `berth` server as a library: `main.rs` only boots, so tests and the
//! benchmark harness build the same router with `router(state)`.

pub mod api;
pub mod auth;
pub mod cli;
pub mod client;
pub mod database;
pub mod gate;
pub mod kube_metrics;
pub mod mcp;
pub mod member_role;
pub mod metrics;
pub mod notify;
pub mod provisioner;
pub mod seed;
pub mod seed_console;
pub mod seed_history;
pub mod state;
pub mod usage;
pub mod web;

pub use state::AppState;

use axum::extract::FromRef;
use axum::{middleware, Router};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::PostgresStore;

/// The largest request body any route reads.
pub const MAX_BODY: usize = 4 * api::BODY_LIMIT;

/// The whole HTTP surface: REST under `/api/v1`, `/auth/*`, the Leptos pages
/// and server fns, static files, and health checks. Layers, outermost first:
/// the body limit, compression, page caching, security headers, the
/// database-outage answer, CSRF, the session, identity.
pub fn router(state: AppState) -> Router {
    let logins = SessionManagerLayer::new(login_store(&state))
        .with_name(state.auth.config.login_cookie_name())
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.auth.config.secure_cookies())
        .with_expiry(Expiry::OnInactivity(idle(&state)));
    let signing_in = auth::AuthState::from_ref(&state);
    web::routes(&state)
        .merge(
            auth::routes::router()
                .route_layer(middleware::from_fn_with_state(signing_in.clone(), auth::rate_limit::limit_auth)),
        )
        .route("/bookings/{id}/open", axum::routing::get(web::open_workspace::open))
        .nest("/api/v1", api::router())
        .merge(mcp::router(&state))
        .layer(middleware::from_fn_with_state(signing_in.clone(), auth::rate_limit::limit_expensive))
        .layer(middleware::from_fn(auth::scope::enforce))
        .layer(middleware::from_fn_with_state(signing_in.clone(), auth::rate_limit::limit_tokens))
        .layer(middleware::from_fn_with_state(signing_in.clone(), auth::identity::resolve))
        .layer(middleware::from_fn(metrics::track_http))
        .layer(logins)
        .layer(middleware::from_fn_with_state(signing_in.clone(), auth::csrf::guard))
        .layer(middleware::from_fn_with_state(state.clone(), database::unavailable_while_down))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(middleware::from_fn_with_state(signing_in, auth::headers::secure))
        .layer(middleware::from_fn(web::site_files::pages_revalidate))
        // Pages and JSON compressed on the fly (brotli at quality 4, as
        // proxies do); the site's files arrive precompressed (`web::site_files`).
        .layer(tower_http::compression::CompressionLayer::new())
        // A backstop for pages, server fns and /auth/* (the API's own,
        // smaller limit answers in its JSON shape first): a body announced
        // larger is refused before a byte of it is read, a streamed one as
        // soon as it passes the limit.
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY))
        .layer(middleware::from_fn(web::server_fn_too_large_in_words))
        .with_state(state)
}

/// Every log line of a request carries its id: the caller's `x-request-id`
/// when it sent one (a proxy's, so both logs join), else a fresh UUID; the
/// response returns it either way.
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
}

/// Logins live in the migrations' `web_session` table.
pub fn login_store(state: &AppState) -> PostgresStore {
    PostgresStore::new(state.db.clone())
        .with_schema_name("public")
        .and_then(|store| store.with_table_name("web_session"))
        .expect("static, valid identifiers")
}

fn idle(state: &AppState) -> time::Duration {
    time::Duration::try_from(state.auth.config.idle_timeout).unwrap_or(time::Duration::hours(8))
}
