//! CSV answers: the content type, a file name to save as, and cells that a
//! spreadsheet will not run as formulas.

use super::error::{ApiError, ApiResult};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// The client asked for CSV (`Accept: text/csv`).
pub fn wanted(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.split(',').any(|t| t.trim().starts_with("text/csv")))
}

/// Writes the header and the records as an attachment named `file_name`.
pub fn respond(file_name: &str, header_row: &[&str], records: Vec<Vec<String>>) -> ApiResult<Response> {
    let write = || -> Result<Vec<u8>, csv::Error> {
        let mut out = csv::Writer::from_writer(Vec::new());
        out.write_record(header_row)?;
        for record in &records {
            out.write_record(record.iter().map(|cell| defuse(cell)))?;
        }
        out.into_inner().map_err(|err| err.into_error().into())
    };
    let body = write().map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "CSV"))?;
    let disposition = format!("attachment; filename=\"{file_name}\"");
    Ok((
        [(header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, disposition)],
        body,
    )
        .into_response())
}

/// A cell starting with = + - @ would be a formula in a spreadsheet.
fn defuse(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
}
