//! Who is asking, as the server's identity layer resolved it once per request
//! (from a bearer token or the browser session) and left in the request's
//! extensions. Pages and server fns read it here; the REST API reads the same
//! value through its extractor, so there is one answer for every transport.

use super::error::ServiceError;
use crate::model::Principal;
use leptos::prelude::*;

/// How the request proved who it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Anonymous,
    Session,
    Token,
}

#[derive(Clone, Debug)]
pub struct Identity {
    pub principal: Option<Principal>,
    pub via: Via,
}

impl Identity {
    pub fn anonymous() -> Self {
        Self { principal: None, via: Via::Anonymous }
    }
}

/// The identity of the request a page or server fn is serving.
fn identity() -> Option<Identity> {
    use_context::<http::request::Parts>().and_then(|parts| parts.extensions.get::<Identity>().cloned())
}

/// The principal of the request a page or server fn is serving, if any.
pub fn current() -> Option<Principal> {
    identity().and_then(|identity| identity.principal)
}

/// The signed-in principal, or `Unauthenticated`.
pub fn signed_in() -> Result<Principal, ServiceError> {
    current().ok_or(ServiceError::Unauthenticated)
}

/// The principal of a signed-in browser session. Requests that carry an API
/// token are refused with `refusal`: what a leaked token must not do (such
/// as minting more tokens that outlive its revocation).
pub fn signed_in_browser(refusal: &'static str) -> Result<Principal, ServiceError> {
    match identity() {
        Some(Identity { principal: Some(principal), via: Via::Session }) => Ok(principal),
        Some(Identity { principal: Some(_), .. }) => Err(ServiceError::Forbidden(refusal)),
        _ => Err(ServiceError::Unauthenticated),
    }
}

/// A service error as a server fn returns it: the same HTTP status as the
/// REST API, and only text that is safe to show.
pub fn to_server_error(err: ServiceError) -> ServerFnError {
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        if let Ok(status) = http::StatusCode::from_u16(err.status()) {
            response.set_status(status);
        }
    }
    ServerFnError::new(err.public_message())
}
