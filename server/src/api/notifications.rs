//! Notifications: `GET/PUT /api/v1/me/notifications` (the caller's choice
//! per event and channel), `POST /api/v1/me/webhooks` (answers the signing
//! secret once), `GET/POST /api/v1/tenants/{slug}/webhooks` (admins) and
//! `DELETE /api/v1/webhooks/{id}`.

use super::auth::Caller;
use super::error::ApiResult;
use super::input::{ApiJson, PathId};
use crate::state::AppState;
use app::backend::notifications;
use app::model::{NewWebhook, NotificationSettings, Preference, Webhook};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/me/notifications", get(show).put(update))
        .route("/me/webhooks", post(add_own))
        .route("/tenants/{slug}/webhooks", get(tenant_list).post(add_tenant))
        .route("/webhooks/{id}", delete(remove))
}

async fn show(State(state): State<AppState>, Caller(principal): Caller) -> ApiResult<Json<NotificationSettings>> {
    Ok(Json(notifications::settings(&state.db, &principal).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Preferences {
    preferences: Vec<Preference>,
}

async fn update(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(body): ApiJson<Preferences>,
) -> ApiResult<Json<NotificationSettings>> {
    Ok(Json(notifications::set_preferences(&state.db, &principal, &body.preferences).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NewHook {
    url: String,
}

async fn add_own(
    State(state): State<AppState>,
    Caller(principal): Caller,
    ApiJson(body): ApiJson<NewHook>,
) -> ApiResult<(StatusCode, Json<NewWebhook>)> {
    Ok((StatusCode::CREATED, Json(notifications::add_webhook(&state.db, &principal, &body.url, None).await?)))
}

async fn tenant_list(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<Vec<Webhook>>> {
    Ok(Json(notifications::tenant_webhooks(&state.db, &principal, super::tenants::slug(&slug)?).await?))
}

async fn add_tenant(
    State(state): State<AppState>,
    Caller(principal): Caller,
    Path(slug): Path<String>,
    ApiJson(body): ApiJson<NewHook>,
) -> ApiResult<(StatusCode, Json<NewWebhook>)> {
    let slug = super::tenants::slug(&slug)?;
    let hook = notifications::add_webhook(&state.db, &principal, &body.url, Some(slug)).await?;
    Ok((StatusCode::CREATED, Json(hook)))
}

async fn remove(State(state): State<AppState>, Caller(principal): Caller, PathId(id): PathId) -> ApiResult<StatusCode> {
    notifications::remove_webhook(&state.db, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
