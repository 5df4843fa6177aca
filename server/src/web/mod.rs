//! What serves the web: Leptos pages and server fns (with the database, the
//! token cache, the admission queues, the manifest renderer, the sign-in
//! options and the CSP nonce in their context), static site files
//! (`site_files`), health checks, the plain pages of errors and sign-in
//! (`plain_page`), opening a workspace (`open_workspace`) and the HTTP
//! server itself (`http_server`).

pub mod http_server;
pub mod open_workspace;
pub mod plain_page;
pub mod render_owner;
pub mod site_files;

use crate::api::input::form_argument_with_nul;
use crate::auth::headers::CspNonce;
use crate::provisioner::manifests::{self, Session};
use crate::state::AppState;
use app::backend::sessions::preview::ManifestRenderer;
use app::model::SignInOptions;
use app::{shell, App};
use axum::http::request::Parts;
use axum::response::IntoResponse;
use axum::{routing::get, Router};
use leptos::nonce::Nonce;
use leptos::prelude::{provide_context, use_context};
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use render_owner::RenderOwner;
use std::sync::OnceLock;

pub fn routes(state: &AppState) -> Router<AppState> {
    let cluster = state.cluster.clone();
    let server = app::rpc::Ctx {
        db: state.db.clone(),
        tokens: state.tokens.clone(),
        admissions: state.admissions.clone(),
        renderer: ManifestRenderer(std::sync::Arc::new(move |facts| manifests::preview(&Session::of(facts), &cluster))),
        mode: state.mode,
        sign_in: SignInOptions { dev_login: state.auth.config.dev_login, single_sign_on: state.auth.oidc.is_some() },
        feed_key: state.feed_key.clone(),
        currency: state.currency.clone(),
        portal_host: state.auth.config.public_url.host_str().unwrap_or_default().to_string(),
    };
    let site = state.site.clone();
    let context = move || {
        provide_context(server.clone());
        provide_context(site.urls());
        // The nonce the security-header layer put into this response's CSP
        // replaces the one leptos_axum made, so the hydration script runs.
        let nonce = use_context::<Parts>().and_then(|parts| parts.extensions.get::<CspNonce>().cloned());
        if let Some(CspNonce(value)) = nonce {
            provide_context(Nonce::from_value(value));
        }
        if let Some(owner) = use_context::<Parts>().and_then(|parts| parts.extensions.get::<RenderOwner>().cloned()) {
            owner.record();
        }
    };
    let options = state.leptos.clone();
    Router::new()
        // Liveness only: the process answers. Readiness also needs the database.
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(crate::database::readyz))
        .nest_service("/pkg", get(site_files::serve).with_state(state.site.clone()))
        .route_service("/favicon.svg", get(site_files::favicon).with_state(state.site.clone()))
        .leptos_routes_with_context(state, route_list(), context.clone(), move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(context, shell))
        .layer(axum::middleware::from_fn(unreadable_arguments_are_bad_requests))
        .layer(axum::middleware::from_fn(render_owner::keep_current))
}

/// The app's routes, listed once per process. Listing renders the app with
/// resource loading switched off process-wide (leptos' `SuppressResourceLoad`
/// is one global flag), so a listing made while another router serves pages
/// leaves the resources those pages start then waiting forever: tests, which
/// build a router each beside others rendering, hung that way.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// Leptos answers a server fn whose arguments cannot be decoded (a date
/// like `10000-01-01`, a word where a number belongs) with 500 and an
/// `Args|…` body. That is the client's mistake: 400, with the same body so
/// the calling page can still decode the error. An argument holding U+0000,
/// which PostgreSQL's text cannot store, is refused before the server fn
/// runs: 422 naming it, as the REST API does.
async fn unreadable_arguments_are_bad_requests(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let server_fn = request.uri().path().starts_with("/rpc/");
    if !server_fn {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The outer body limit caps what is read here.
    let Some(bytes) = read_within(body).await else {
        return too_large(&parts.headers);
    };
    // Berth's server fns take their arguments as a query or a form body.
    let query = parts.uri.query().unwrap_or_default().as_bytes();
    let nul = form_argument_with_nul(query).or_else(|| form_argument_with_nul(&bytes));
    if let Some(name) = nul {
        let error = app::backend::ServiceError::Invalid(app::rules::FieldError::new(
            name,
            "must not contain the NUL character",
        ));
        let body =
            leptos::server_fn::error::FromServerFnError::ser(&app::rpc::RpcError::refused(error.public_message()));
        return (axum::http::StatusCode::UNPROCESSABLE_ENTITY, body).into_response();
    }
    let response = next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await;
    if response.status() != axum::http::StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Error bodies are short; a larger one is not an argument error.
    let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    if bytes.starts_with(b"Args|") {
        parts.status = axum::http::StatusCode::BAD_REQUEST;
    }
    axum::response::Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// A page's call refused for its size says so in words the page shows (the
/// server fn's own error format, or plain text to a browser posting a form
/// without JavaScript), not an empty 413 the page cannot read.
fn too_large(request: &axum::http::HeaderMap) -> axum::response::Response {
    let message = format!(
        "Too much to send: a page may send at most {} KB at once. Shorten the note or other long text and try again.",
        crate::MAX_BODY / 1024
    );
    let browser_form = request
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    // As text (a String body is `text/plain; charset=utf-8`): bytes would be
    // `application/octet-stream`, which a browser downloads instead of showing.
    let body = match browser_form {
        true => message,
        false => String::from_utf8_lossy(&leptos::server_fn::error::FromServerFnError::ser(
            &app::rpc::RpcError::refused(message),
        ))
        .into_owned(),
    };
    (axum::http::StatusCode::PAYLOAD_TOO_LARGE, body).into_response()
}

/// Past `MAX_BODY`, what a browser still sends of a too-large form is read
/// and dropped up to this much, so it gets to see the answer: closing the
/// connection on a browser mid-upload shows it a network error, not `too_large`.
const DRAINED_AT_MOST: usize = 4 * 1024 * 1024;

/// The body when it is at most `MAX_BODY`; `None` when it is larger (read
/// on, and dropped, up to `DRAINED_AT_MOST`) or cannot be read.
async fn read_within(mut body: axum::body::Body) -> Option<bytes::Bytes> {
    use http_body_util::BodyExt;
    let (mut kept, mut seen) = (bytes::BytesMut::new(), 0usize);
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.ok()?.into_data() else { continue };
        seen += data.len();
        if seen <= crate::MAX_BODY {
            kept.extend_from_slice(&data);
        } else if seen > DRAINED_AT_MOST {
            return None;
        }
    }
    (seen <= crate::MAX_BODY).then(|| kept.freeze())
}

/// A server fn's body announced larger than `MAX_BODY` (the outer limit
/// would refuse it unread) is answered by `too_large` after `read_within`
/// has read what it may; larger than that, or any other path, passes on.
pub async fn server_fn_too_large_in_words(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let announced = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let server_fn = request.uri().path().starts_with("/rpc/");
    match announced {
        Some(length) if server_fn && length > crate::MAX_BODY && length <= DRAINED_AT_MOST => {
            let (parts, body) = request.into_parts();
            let _ = read_within(body).await;
            too_large(&parts.headers)
        }
        _ => next.run(request).await,
    }
}
