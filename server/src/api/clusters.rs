//! `/clusters`: where pools run and how the worker reaches them (admins).

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::clusters;
use app::model::{Cluster, ClusterSpec};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/clusters", get(list).post(create))
        .route("/clusters/{id}", get(show).put(update).delete(remove))
}

async fn list(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<Vec<Cluster>>> {
    Ok(Json(clusters::list(&state.db, &principal).await?))
}

async fn show(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Json<Cluster>> {
    Ok(Json(clusters::get(&state.db, &principal, id).await?))
}

async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(spec): ApiJson<ClusterSpec>,
) -> ApiResult<(StatusCode, Json<Cluster>)> {
    portal_outside(&state, &principal, &spec)?;
    Ok((StatusCode::CREATED, Json(clusters::create(&state.db, &principal, spec).await?)))
}

/// The portal's own host is under no cluster's workspace domain (asked of
/// admins only: others learn only that they may not).
fn portal_outside(state: &AppState, principal: &app::model::Principal, spec: &ClusterSpec) -> ApiResult<()> {
    principal.require_admin("only admins manage clusters")?;
    let portal = state.auth.config.public_url.host_str().unwrap_or_default();
    match &spec.workspace_domain {
        Some(domain) => {
            Ok(app::rules::cluster_spec::portal_outside(domain, portal).map_err(app::backend::ServiceError::from)?)
        }
        None => Ok(()),
    }
}

async fn update(
    State(state): State<AppState>,
    Caller(principal): Caller,
    PathId(id): PathId,
    ApiJson(spec): ApiJson<ClusterSpec>,
) -> ApiResult<Json<Cluster>> {
    portal_outside(&state, &principal, &spec)?;
    Ok(Json(clusters::update(&state.db, &principal, id, spec).await?))
}

async fn remove(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<StatusCode> {
    clusters::delete(&state.db, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
