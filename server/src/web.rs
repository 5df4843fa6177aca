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
        // The nonce the security-header layer put into this response's CSP
        // replaces the one leptos_axum made, so the hydration script runs.
        let nonce = use_context::<Parts>().and_then(|parts| parts.extensions.get::<CspNonce>().cloned());
        if let Some(CspNonce(value)) = nonce {
            provide_context(Nonce::from_value(value));
        }
    };
    let options = state.leptos.clone();
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .leptos_routes_with_context(state, generate_route_list(App), context.clone(), move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(context, shell))
}
