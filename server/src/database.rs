//! The connection pool, readiness, and what clients see while PostgreSQL is
//! unreachable: a quick `503 unavailable` instead of a request that hangs
//! until the client gives up.

use crate::api::error::{retry_after, ApiError};
use crate::state::AppState;
use app::backend::ServiceError;
use app::backend::MIGRATOR;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use std::time::Duration;

/// How long a request waits for a connection. sqlx keeps retrying a refused
/// connection until this deadline, so it bounds how long a request takes
/// during an outage (plus `PROBE`).
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_millis(600);
/// How long the check after a failed request may take.
const PROBE: Duration = Duration::from_millis(300);

/// Applies pending migrations, then grants the member clusters' database
/// roles what the new release's tables need (`member_role`).
pub async fn migrate(db: &PgPool) -> anyhow::Result<()> {
    MIGRATOR.run(db).await?;
    crate::member_role::regrant(db).await?;
    Ok(())
}

pub fn pool_options(connections: u32) -> PgPoolOptions {
    PgPoolOptions::new().max_connections(connections).acquire_timeout(ACQUIRE_TIMEOUT)
}

/// Ready to serve: the database answers and every migration this binary
/// knows is applied (a replica of a newer release waits for its migration).
pub async fn is_ready(db: &PgPool) -> bool {
    let newest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
    let applied = tokio::time::timeout(
        ACQUIRE_TIMEOUT + PROBE,
        sqlx::query_scalar::<_, Option<i64>>("SELECT max(version) FROM _sqlx_migrations WHERE success").fetch_one(db),
    )
    .await;
    matches!(applied, Ok(Ok(Some(version))) if version >= newest)
}

pub async fn readyz(State(state): State<AppState>) -> Response {
    if is_ready(&state.db).await {
        (StatusCode::OK, "ready").into_response()
    } else {
        let mut response =
            (StatusCode::SERVICE_UNAVAILABLE, "not ready: the database is unreachable or not migrated").into_response();
        retry_after(&mut response);
        response
    }
}

async fn reachable(db: &PgPool) -> bool {
    matches!(tokio::time::timeout(PROBE, sqlx::query("SELECT 1").execute(db)).await, Ok(Ok(_)))
}

/// Outermost layer: a server error while the database cannot be reached
/// becomes `503 unavailable` with `Retry-After` (JSON for the API and server
/// fns, a page for browsers), whichever layer failed — the session store,
/// the identity lookup, a handler or a page. A 5xx while the database is up
/// stays what it was.
pub async fn unavailable_while_down(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let server_fn = path.starts_with("/rpc/");
    let machine = path.starts_with("/api/") || server_fn;
    let probe = path == "/readyz" || path == "/healthz";
    let mut response = next.run(request).await;
    let status = response.status();
    let unavailable = status == StatusCode::SERVICE_UNAVAILABLE;
    if probe || !status.is_server_error() || (!unavailable && reachable(&state.db).await) {
        return response;
    }
    // A 503 already in the form the client reads (the API's JSON error, a
    // server fn's encoded error, a page's own error view) keeps its body;
    // anything else gets ours.
    let wanted = if machine { "application/json" } else { "text/html" };
    let fitting = server_fn
        || response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with(wanted));
    if !(unavailable && fitting) {
        response = if machine {
            ApiError::from(ServiceError::Unavailable).into_response()
        } else {
            (StatusCode::SERVICE_UNAVAILABLE, Html(UNAVAILABLE_PAGE)).into_response()
        };
    }
    if !response.headers().contains_key(header::RETRY_AFTER) {
        retry_after(&mut response);
    }
    response
}

/// `Retry-After` on a 503 (the API's own 503s use it too).
const UNAVAILABLE_PAGE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="5"><title>Berth is briefly unavailable</title></head>
<body><main><h1>Berth is briefly unavailable</h1>
<p>Berth cannot reach its database just now. Nothing you booked is lost; this page reloads by itself in a few seconds.</p>
</main></body></html>
"#;
