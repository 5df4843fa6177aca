//! `GET /api/v1/reports/utilization`: the managers' report as JSON, or its
//! table as CSV (`Accept: text/csv`, or `/reports/utilization.csv` for a link).

use super::auth::Caller;
use super::csv_body;
use super::error::ApiResult;
use super::input::ApiQuery;
use crate::state::AppState;
use app::backend::reports;
use app::model::{ReportQuery, ReportRow, REPORT_CSV_COLUMNS};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reports/utilization", get(utilization))
        .route("/reports/utilization.csv", get(utilization_csv))
}

async fn utilization(
    State(state): State<AppState>,
    Caller(principal): Caller,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<ReportQuery>,
) -> ApiResult<Response> {
    if csv_body::wanted(&headers) {
        return utilization_csv(State(state), Caller(principal), ApiQuery(query)).await;
    }
    Ok(Json(reports::for_query(&state.db, &principal, &query, &state.currency).await?).into_response())
}

async fn utilization_csv(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiQuery(query): ApiQuery<ReportQuery>,
) -> ApiResult<Response> {
    let report = reports::for_query(&state.db, &principal, &query, &state.currency).await?;
    let records = report.rows.iter().chain([&report.total]).map(|row| record(row, &report.currency)).collect();
    let name = format!("berth-utilization-{}-{}.csv", report.group.as_str(), report.from.format("%Y%m%d"));
    csv_body::respond(&name, &REPORT_CSV_COLUMNS, records)
}

/// One row in `REPORT_CSV_COLUMNS` order; numbers as JSON writes them, empty for none.
fn record(row: &ReportRow, currency: &str) -> Vec<String> {
    let number = |v: f64| v.to_string();
    let maybe = |v: Option<f64>| v.map(number).unwrap_or_default();
    vec![
        row.id.map(|id| id.to_string()).unwrap_or_default(),
        row.name.clone(),
        maybe(row.capacity_gpu_hours),
        number(row.booked_gpu_hours),
        maybe(row.booking_utilization_pct),
        number(row.occupied_gpu_hours),
        number(row.active_gpu_hours),
        maybe(row.active_utilization_pct),
        number(row.busy_gpu_hours),
        maybe(row.busy_utilization_pct),
        number(row.idle_booked_gpu_hours),
        row.device_level_only.to_string(),
        maybe(row.lent_gpu_hours),
        row.no_shows.to_string(),
        number(row.returned_gpu_hours),
        number(row.refused_gpu_hours),
        number(row.waitlisted_gpu_hours),
        number(row.showback_cost),
        currency.to_string(),
        row.simulated.to_string(),
    ]
}
