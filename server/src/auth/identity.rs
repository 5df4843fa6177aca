//! The one place a request's principal is decided: a bearer token (API
//! clients) or the browser session (pages, server fns, and the REST API used
//! from the portal). The result goes into the request's extensions as an
//! `Identity`; everything downstream reads that.

use super::login;
use super::oauth;
use super::AuthState;
use app::backend::accounts::identity::{Identity, Via};
use app::backend::provenance::{self, Provenance};
use app::backend::{accounts::principals, ServiceError};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_sessions::Session;

/// The bearer token of a request, if it sends one.
pub fn bearer(request: &Request) -> Option<&str> {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

pub async fn resolve(State(state): State<AuthState>, mut request: Request, next: Next) -> Response {
    let token = bearer(&request).map(str::to_owned);
    // An address whose tokens kept failing gets no answer about its next one.
    let limits = &state.auth.limits;
    let address = token.as_ref().and_then(|_| limits.client(&request));
    if let Some(wait) = address.and_then(|a| limits.token_failures.exceeded(a, std::time::Instant::now())) {
        return super::rate_limit::too_many(wait, "failed token");
    }
    let session = request.extensions().get::<Session>().cloned();
    let for_mcp = request.uri().path() == super::scope::MCP_PATH;
    let identity = match identify(&state, token, session, for_mcp).await {
        Ok(identity) => identity,
        // The database is down: the outage layer answers for it.
        Err(Failure::Service(ServiceError::Unavailable)) => {
            return (StatusCode::SERVICE_UNAVAILABLE, ServiceError::Unavailable.to_string()).into_response();
        }
        Err(failure) => {
            tracing::error!(error = %failure, "could not resolve the request's identity");
            return (StatusCode::INTERNAL_SERVER_ERROR, "internal error; it has been logged").into_response();
        }
    };
    if identity.via == Via::Token && identity.principal.is_none() {
        if let Some(address) = address {
            limits.token_failures.hit(address, std::time::Instant::now());
        }
    }
    // What the request changes is recorded as made with its token.
    let provenance = Provenance { token: identity.token.and_then(|token| token.api_token()), client: String::new() };
    request.extensions_mut().insert(identity);
    provenance::scoped(provenance, next.run(request)).await
}

#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Session(#[from] tower_sessions::session::Error),
}

async fn identify(
    state: &AuthState,
    token: Option<String>,
    session: Option<Session>,
    for_mcp: bool,
) -> Result<Identity, Failure> {
    if let Some(token) = token {
        let bearer = state.tokens.authenticate(&state.db, &token).await?;
        let mut signed_in = bearer.map(|bearer| (bearer.principal, bearer.token));
        // `/mcp` also takes the provider's access tokens for it (`oauth`).
        if let (None, true, Some(oidc)) = (&signed_in, for_mcp && oauth::looks_like_jwt(&token), &state.auth.oidc) {
            let audience = state.auth.config.public_url.join(&super::scope::MCP_PATH[1..]).map(String::from);
            if let Ok(audience) = audience {
                signed_in = oauth::identify(&state.db, oidc, &token, &audience).await?;
            }
        }
        let (principal, token) = signed_in.unzip();
        return Ok(Identity { principal, via: Via::Token, token });
    }
    let Some(session) = session else { return Ok(Identity::anonymous()) };
    let user_id = login::signed_in_user(&session, state.auth.config.absolute_lifetime).await?;
    let Some(user_id) = user_id else { return Ok(Identity::anonymous()) };
    let principal = principals::by_user_id(&state.db, user_id).await?;
    Ok(Identity { via: if principal.is_some() { Via::Login } else { Via::Anonymous }, principal, token: None })
}
