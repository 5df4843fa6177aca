//! The REST side of identity: the `Caller` extractor every handler takes reads
//! the `Identity` the identity layer resolved (bearer token or session).

use super::error::{ApiError, ApiResult};
use app::backend::accounts::identity::Identity;
use app::model::Principal;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::Json;

/// The signed-in principal; a request without one gets 401.
pub struct Caller(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Identity>()
            .and_then(|identity| identity.principal.clone())
            .map(Caller)
            .ok_or_else(ApiError::unauthorized)
    }
}

pub async fn me(Caller(principal): Caller) -> ApiResult<Json<Principal>> {
    Ok(Json(principal))
}
