//! Bearer-token authentication: the `Auth` extractor every handler takes.

use super::error::{ApiError, ApiResult};
use crate::state::AppState;
use app::model::Principal;
use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts};
use axum::Json;

/// The signed-in principal; a request without a live token gets 401.
pub struct Auth(pub Principal);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(ApiError::unauthorized)?;
        state.tokens.authenticate(&state.db, token.trim()).await?.map(Auth).ok_or_else(ApiError::unauthorized)
    }
}

pub async fn me(Auth(principal): Auth) -> ApiResult<Json<Principal>> {
    Ok(Json(principal))
}
