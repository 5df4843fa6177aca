//! `GET /api/v1/audit`: the log as JSON pages, or the whole filtered log as
//! CSV (`Accept: text/csv`, or `/api/v1/audit.csv` for a plain link).

use super::auth::Auth;
use super::error::{ApiError, ApiResult};
use super::input::ApiQuery;
use crate::state::AppState;
use app::backend::audit;
use app::model::{AuditEntry, AuditFilter, AuditPage};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/audit", get(log)).route("/audit.csv", get(csv_export))
}

async fn log(
    State(state): State<AppState>,
    Auth(principal): Auth,
    headers: HeaderMap,
    ApiQuery(filter): ApiQuery<AuditFilter>,
) -> ApiResult<Response> {
    let wants_csv = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.split(',').any(|t| t.trim().starts_with("text/csv")));
    if wants_csv {
        return csv_export(State(state), Auth(principal), ApiQuery(filter)).await;
    }
    let page: AuditPage = audit::page(&state.db, &principal, &filter).await?;
    Ok(Json(page).into_response())
}

async fn csv_export(
    State(state): State<AppState>,
    Auth(principal): Auth,
    ApiQuery(filter): ApiQuery<AuditFilter>,
) -> ApiResult<Response> {
    let entries = audit::export(&state.db, &principal, &filter).await?;
    let body = to_csv(&entries).map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "CSV"))?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::CONTENT_DISPOSITION, "attachment; filename=\"berth-audit.csv\""),
        ],
        body,
    )
        .into_response())
}

fn to_csv(entries: &[AuditEntry]) -> Result<Vec<u8>, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(["at", "actor", "action", "target", "tenant", "pool", "detail"])?;
    for e in entries {
        out.write_record([
            e.at.to_rfc3339().as_str(),
            e.actor.as_deref().unwrap_or("berth"),
            &e.action,
            &defuse(&e.target),
            e.tenant.as_deref().unwrap_or(""),
            &defuse(e.pool.as_deref().unwrap_or("")),
            // A cell starting with = + - @ would be a formula in a spreadsheet.
            &defuse(&e.detail),
        ])?;
    }
    out.into_inner().map_err(|err| err.into_error().into())
}

fn defuse(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
}
