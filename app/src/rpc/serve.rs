//! The server's side of the opening: the one context value, the asking
//! principal, and service errors as server fns return them.

use super::RpcError;
use crate::backend::accounts::identity::{Identity, Via};
use crate::backend::accounts::tokens::TokenCache;
use crate::backend::admission::AdmissionQueue;
use crate::backend::calendar::feed::FeedKey;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::sessions::preview::ManifestRenderer;
use crate::model::{ActionNotice, ClusterMode, Principal, SignInOptions};
use leptos::prelude::*;
use std::sync::Arc;

/// Everything the server hands the pages' server fns, provided once per
/// request as one context value.
#[derive(Clone)]
pub struct Ctx {
    pub db: sqlx::PgPool,
    pub tokens: Arc<TokenCache>,
    pub admissions: AdmissionQueue,
    pub renderer: ManifestRenderer,
    pub mode: ClusterMode,
    pub sign_in: SignInOptions,
    pub feed_key: FeedKey,
    /// The ISO 4217 code prices are in.
    pub currency: String,
    /// The portal's own host (of its public URL): no workspace domain may hold it.
    pub portal_host: String,
}

fn server() -> Result<Ctx, RpcError> {
    use_context::<Ctx>().ok_or_else(|| ServiceError::Internal("server fn called without the server's context").into())
}

/// The identity the server's identity layer resolved for this request.
fn identity() -> Option<Identity> {
    use_context::<http::request::Parts>().and_then(|parts| parts.extensions.get::<Identity>().cloned())
}

/// The signed-in principal and the server's context; 401 for a visitor.
pub fn ctx() -> Result<(Principal, Ctx), RpcError> {
    let principal = identity().and_then(|identity| identity.principal).ok_or(ServiceError::Unauthenticated)?;
    Ok((principal, server()?))
}

/// The principal, if anyone is signed in, and the server's context: for
/// what visitors may see too.
pub fn visitor() -> Result<(Option<Principal>, Ctx), RpcError> {
    Ok((identity().and_then(|identity| identity.principal), server()?))
}

/// As `ctx`, for a signed-in browser only: a request that carries an API
/// token is refused with `refusal` — what a leaked token must not do (such
/// as minting more tokens that outlive its revocation).
pub fn browser(refusal: &'static str) -> Result<(Principal, Ctx), RpcError> {
    match identity() {
        Some(Identity { principal: Some(principal), via: Via::Login, .. }) => Ok((principal, server()?)),
        Some(Identity { principal: Some(_), .. }) => Err(ServiceError::Forbidden(refusal).into()),
        _ => Err(ServiceError::Unauthenticated.into()),
    }
}

/// As `ctx`, for a signed-in browser or a token that may do all its
/// person may (`full`): what hands out a standing way in, which a narrower
/// token must not learn (`rules::scope`), is refused to the others with
/// `refusal`. Server fns a page calls while it is drawn meet no scope
/// layer of their own: this is their check.
pub fn full(refusal: &'static str) -> Result<(Principal, Ctx), RpcError> {
    let identity = identity().ok_or(ServiceError::Unauthenticated)?;
    let principal = identity.principal.ok_or(ServiceError::Unauthenticated)?;
    match identity.token {
        Some(token) if token.scope != crate::model::TokenScope::Full => Err(ServiceError::Forbidden(refusal).into()),
        _ => Ok((principal, server()?)),
    }
}

impl From<ServiceError> for RpcError {
    /// The same HTTP status as the REST API, and only text that is safe to show.
    fn from(err: ServiceError) -> Self {
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            if let Ok(status) = http::StatusCode::from_u16(err.status()) {
                response.set_status(status);
            }
        }
        RpcError::refused(err.public_message())
    }
}

impl From<crate::model::FieldError> for RpcError {
    fn from(err: crate::model::FieldError) -> Self {
        ServiceError::Invalid(err).into()
    }
}

/// An action's answer: done, or a refusal the person can act on as a
/// notice (`ServiceError::can_be_acted_on`, the one rule), else an error
/// with its HTTP status. A script-less post is sent back to its page with
/// the notice.
pub fn act<T>(result: ServiceResult<T>, done: impl FnOnce(T) -> String) -> Result<ActionNotice, RpcError> {
    act_at(None, result, done)
}

/// `act`, with the notice shown in the page's section `at` (its id), beside
/// the form, rather than at the page's top; a script-less post comes back
/// scrolled to it.
pub fn act_at<T>(
    at: Option<&str>,
    result: ServiceResult<T>,
    done: impl FnOnce(T) -> String,
) -> Result<ActionNotice, RpcError> {
    let notice = match result {
        Ok(value) => ActionNotice::said(true, done(value)),
        Err(err) if err.can_be_acted_on() => refusal(&err),
        Err(err) => return Err(err.into()),
    };
    let notice = ActionNotice { at: at.map(str::to_string), ..notice };
    no_script_notice(&notice);
    Ok(notice)
}

/// A refusal the person can act on, as its notice: the public message and
/// the field it is about (for its form to mark).
fn refusal(err: &ServiceError) -> ActionNotice {
    ActionNotice { field: err.field_error(), ..ActionNotice::said(false, err.public_message()) }
}

/// A page's answer with the refusals the person can act on kept beside
/// the form, with the field they are about (by the same rule as `act`);
/// the rest are errors.
pub fn beside<T>(result: ServiceResult<T>) -> Result<Result<T, ActionNotice>, RpcError> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(err) if err.can_be_acted_on() => Ok(Err(refusal(&err))),
        Err(err) => Err(err.into()),
    }
}

/// `beside`, for an action that makes something (a token, a webhook, a
/// user's change): a script-less post is sent back to its page with the
/// refusal, as `act` sends back its notice.
pub fn beside_posted<T>(result: ServiceResult<T>) -> Result<Result<T, ActionNotice>, RpcError> {
    let answer = beside(result)?;
    if let Err(notice) = &answer {
        no_script_notice(notice);
    }
    Ok(answer)
}

/// Sends a script-less form post back to its page with the notice in the query.
pub fn no_script_notice(notice: &ActionNotice) {
    if let Some(back) = super::no_script::referer() {
        let ok = if notice.ok { "1" } else { "0" };
        let mut query = vec![("notice", notice.message.clone()), ("notice_ok", ok.to_string())];
        if let Some(field) = &notice.field {
            query.extend([("notice_field", field.field.clone()), ("notice_reason", field.reason.clone())]);
        }
        if let Some(at) = &notice.at {
            query.push(("notice_at", at.clone()));
        }
        super::no_script::redirect_with(&back, &query, notice.at.as_deref());
    }
}
