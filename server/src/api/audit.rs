//! `GET /api/v1/audit`: the log as JSON pages, or the whole filtered log as
//! CSV (`Accept: text/csv`, or `/api/v1/audit.csv` for a plain link).

use super::auth::Caller;
use super::csv_body;
use super::error::ApiResult;
use super::input::ApiQuery;
use crate::state::AppState;
use app::backend::audit;
use app::model::{AuditEntry, AuditFilter, AuditPage};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/audit", get(log)).route("/audit.csv", get(csv_export))
}

async fn log(
    State(state): State<AppState>,
    Caller(principal): Caller,
    headers: HeaderMap,
    ApiQuery(filter): ApiQuery<AuditFilter>,
) -> ApiResult<Response> {
    if csv_body::wanted(&headers) {
        return csv_export(State(state), Caller(principal), ApiQuery(filter)).await;
    }
    let page: AuditPage = audit::page(&state.db, &principal, &filter).await?;
    Ok(Json(page).into_response())
}

async fn csv_export(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiQuery(filter): ApiQuery<AuditFilter>,
) -> ApiResult<Response> {
    let entries = audit::export(&state.db, &principal, &filter).await?;
    let records = entries.into_iter().map(record).collect();
    csv_body::respond(
        "berth-audit.csv",
        &["at", "actor", "action", "target", "tenant", "pool", "detail", "token", "client"],
        records,
    )
}

fn record(e: AuditEntry) -> Vec<String> {
    vec![
        e.at.to_rfc3339(),
        e.actor.unwrap_or_else(|| "berth".into()),
        e.action,
        e.target,
        e.tenant.unwrap_or_default(),
        e.pool.unwrap_or_default(),
        e.detail,
        e.token.unwrap_or_default(),
        e.client.unwrap_or_default(),
    ]
}
