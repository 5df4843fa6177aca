//! Pages the server answers without the Leptos app (no script): sign-in
//! failures, in the portal's style with a way back.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `title` is text; `inner` is HTML the caller escaped.
pub fn page(status: StatusCode, title: &str, inner: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} — Berth</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"stylesheet\" href=\"/pkg/berth.css\"></head><body>\
         <header class=\"topbar\"><a class=\"brand\" href=\"/\">Berth</a></header>\
         <main>{inner}</main></body></html>",
        title = escape(title),
    );
    (status, Html(body)).into_response()
}
