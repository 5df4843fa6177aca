//! Leptos pages and server fns (with the database in their context), static
//! site files, and health checks.

use crate::state::AppState;
use app::{shell, App};
use axum::{routing::get, Router};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};

pub fn routes(state: &AppState) -> Router<AppState> {
    let db = state.db.clone();
    let options = state.leptos.clone();
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .leptos_routes_with_context(
            state,
            generate_route_list(App),
            move || provide_context(db.clone()),
            move || shell(options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
}
