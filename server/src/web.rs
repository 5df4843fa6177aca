//! Leptos pages and server fns (with the database, the token cache, the
//! admission queues, the manifest renderer, the sign-in options and the CSP
//! nonce in their context), static site files, and health checks.

use crate::auth::headers::CspNonce;
use crate::state::AppState;
use crate::worker::manifests::{self, Session};
use app::backend::provisioning::ManifestRenderer;
use app::pages::SignInOptions;
use app::{shell, App};
use axum::http::request::Parts;
use axum::{routing::get, Router};
use leptos::nonce::Nonce;
use leptos::prelude::{provide_context, use_context};
use leptos_axum::{generate_route_list, LeptosRoutes};

pub fn routes(state: &AppState) -> Router<AppState> {
    let db = state.db.clone();
    let tokens = state.tokens.clone();
    let admissions = state.admissions.clone();
    let cluster = state.cluster.clone();
    let mode = state.mode;
    let feed_key = state.feed_key.clone();
    let renderer =
        ManifestRenderer(std::sync::Arc::new(move |facts| manifests::preview(&Session::of(facts), &cluster)));
    let sign_in = SignInOptions { dev_login: state.auth.config.dev_login, single_sign_on: state.auth.oidc.is_some() };
    let context = move || {
        provide_context(db.clone());
        provide_context(tokens.clone());
        provide_context(admissions.clone());
        provide_context(renderer.clone());
        provide_context(mode);
        provide_context(sign_in.clone());
        provide_context(feed_key.clone());
        // The nonce the security-header layer put into this response's CSP
        // replaces the one leptos_axum made, so the hydration script runs.
        let nonce = use_context::<Parts>().and_then(|parts| parts.extensions.get::<CspNonce>().cloned());
        if let Some(CspNonce(value)) = nonce {
            provide_context(Nonce::from_value(value));
        }
    };
    let options = state.leptos.clone();
    Router::new()
        // Liveness only: the process answers. Readiness also needs the database.
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(crate::database::readyz))
        .leptos_routes_with_context(state, generate_route_list(App), context.clone(), move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(context, shell))
        .layer(axum::middleware::from_fn(unreadable_arguments_are_bad_requests))
}

/// Leptos answers a server fn whose arguments cannot be decoded (a date
/// like `10000-01-01`, a word where a number belongs) with 500 and an
/// `Args|…` body. That is the client's mistake: 400, with the same body so
/// the calling page can still decode the error.
async fn unreadable_arguments_are_bad_requests(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let server_fn = request.uri().path().starts_with("/rpc/");
    let response = next.run(request).await;
    if !server_fn || response.status() != axum::http::StatusCode::INTERNAL_SERVER_ERROR {
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
