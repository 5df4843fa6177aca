//! `/auth/*`: start an OIDC login, take the provider's callback, log out, and
//! the development login. Failures end on an error page, never a login.

use super::login;
use super::oidc::{LoginError, PendingLogin};
use super::AuthState;
use crate::web::plain_page::escape;
use app::backend::accounts::users::{self, FederatedLogin};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::Deserialize;
use tower_sessions::Session;

pub fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    AuthState: axum::extract::FromRef<S>,
{
    Router::new()
        .route("/auth/login", get(login))
        .route("/auth/callback", get(callback))
        .route("/auth/logout", post(logout))
        .route("/auth/dev-login", post(dev_login))
}

/// `next` must be a path on this portal: `/x`, never `//host`, `/\host` or a URL.
pub fn local_path(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && !path.chars().any(|c| c.is_control()) =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

#[derive(Deserialize)]
struct LoginQuery {
    next: Option<String>,
}

async fn login(State(state): State<AuthState>, session: Session, Query(query): Query<LoginQuery>) -> Response {
    let Some(oidc) = state.auth.oidc.as_ref() else {
        return error_page(
            StatusCode::NOT_FOUND,
            "Single sign-on is not configured",
            "This portal has no identity provider set up.",
        );
    };
    match oidc.start(local_path(query.next.as_deref())).await {
        Ok((url, pending)) => match login::remember_pending(&session, &pending).await {
            Ok(()) => Redirect::to(url.as_str()).into_response(),
            Err(err) => login_store_failure(err),
        },
        Err(err) => login_failure(err),
    }
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
    /// RFC 9207: the provider names itself, so a mix-up with another provider shows.
    iss: Option<String>,
}

async fn callback(State(state): State<AuthState>, session: Session, Query(query): Query<CallbackQuery>) -> Response {
    let Some(oidc) = state.auth.oidc.as_ref() else {
        return error_page(
            StatusCode::NOT_FOUND,
            "Single sign-on is not configured",
            "This portal has no identity provider set up.",
        );
    };
    // Taken out first: whatever happens next, this login attempt is spent.
    let pending: Option<PendingLogin> = match login::take_pending(&session).await {
        Ok(pending) => pending,
        Err(err) => return login_store_failure(err),
    };
    let Some(pending) = pending else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "Sign-in failed",
            "This sign-in was not started in this browser, or it was already used. Please start again.",
        );
    };
    let state_matches =
        query.state.as_deref().is_some_and(|s| constant_time_eq(s.as_bytes(), pending.state.as_bytes()));
    if !state_matches {
        return error_page(StatusCode::BAD_REQUEST, "Sign-in failed", "The answer from the identity provider does not belong to this sign-in (state mismatch). Please start again.");
    }
    if query.iss.as_deref().is_some_and(|iss| iss != oidc.issuer()) {
        return error_page(
            StatusCode::BAD_REQUEST,
            "Sign-in failed",
            "The answer came from another identity provider than the one this sign-in went to.",
        );
    }
    if let Some(error) = query.error {
        let detail = format!("The identity provider said: {error} {}", query.error_description.unwrap_or_default());
        return error_page(StatusCode::UNAUTHORIZED, "Sign-in was refused", detail.trim());
    }
    let Some(code) = query.code else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "Sign-in failed",
            "The identity provider sent no authorization code.",
        );
    };
    let next = pending.next.clone();
    let verified = match oidc.finish(pending, code).await {
        Ok(verified) => verified,
        Err(err) => return login_failure(err),
    };
    let (role, tenant_slugs) = state.auth.config.groups.map(&verified.groups);
    let Some(email) = verified.email.filter(|e| e.contains('@')) else {
        return error_page(
            StatusCode::FORBIDDEN,
            "Sign-in failed",
            "The identity provider did not share an email address; Berth needs the `email` scope.",
        );
    };
    let login = FederatedLogin {
        issuer: verified.issuer,
        subject: verified.subject,
        name: verified.name.unwrap_or_else(|| email.clone()),
        email,
        email_verified: verified.email_verified,
        cluster_username: verified.cluster_username,
        role,
        tenant_slugs,
    };
    let user_id = match users::record_login(&state.db, &login).await {
        // The provider's groups may have taken a role or a tenant away:
        // their tokens on this server carry what they had until now.
        Ok(id) => {
            state.tokens.forget_user(id);
            id
        }
        Err(err) => {
            return error_page(
                StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                "Sign-in failed",
                &err.public_message(),
            )
        }
    };
    match login::sign_in(&session, user_id, Some(verified.id_token)).await {
        Ok(()) => {
            tracing::info!(user = %user_id, "signed in through the identity provider");
            Redirect::to(&next).into_response()
        }
        Err(err) => login_store_failure(err),
    }
}

async fn logout(State(state): State<AuthState>, session: Session) -> Response {
    let id_token = match login::sign_out(&session).await {
        Ok(token) => token,
        Err(err) => return login_store_failure(err),
    };
    if let Some(oidc) = state.auth.oidc.as_ref() {
        if let Some(url) = oidc.end_session_url(id_token.as_deref(), &state.auth.config.public_url).await {
            return Redirect::to(url.as_str()).into_response();
        }
    }
    Redirect::to("/").into_response()
}

#[derive(Deserialize)]
struct DevLogin {
    email: String,
}

async fn dev_login(State(state): State<AuthState>, session: Session, Form(form): Form<DevLogin>) -> Response {
    if !state.auth.config.dev_login {
        return error_page(
            StatusCode::NOT_FOUND,
            "Development login is off",
            "Start the portal with --dev-login to use it.",
        );
    }
    let user_id = match users::find_by_email(&state.db, &form.email).await {
        Ok(id) => id,
        Err(err) => {
            return error_page(
                StatusCode::from_u16(err.status()).unwrap_or(StatusCode::BAD_REQUEST),
                "Development login failed",
                &err.public_message(),
            )
        }
    };
    if matches!(app::backend::accounts::principals::by_user_id(&state.db, user_id).await, Ok(None)) {
        return error_page(
            StatusCode::FORBIDDEN,
            "Development login failed",
            "This account has been disabled by an admin.",
        );
    }
    match login::sign_in(&session, user_id, None).await {
        Ok(()) => Redirect::to("/").into_response(),
        Err(err) => login_store_failure(err),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn login_failure(err: LoginError) -> Response {
    tracing::warn!(error = %err, "login refused");
    let status = match err {
        LoginError::Provider(_) => StatusCode::BAD_GATEWAY,
        LoginError::Refused(_) | LoginError::Token(_) => StatusCode::UNAUTHORIZED,
    };
    error_page(status, "Sign-in failed", &err.to_string())
}

fn login_store_failure(err: tower_sessions::session::Error) -> Response {
    tracing::error!(error = %err, "session store failed");
    error_page(StatusCode::INTERNAL_SERVER_ERROR, "Sign-in failed", "internal error; it has been logged")
}

/// A plain page (no script) in the portal's style, with a way back.
pub fn error_page(status: StatusCode, title: &str, detail: &str) -> Response {
    let inner = format!(
        "<section class=\"auth-error\" role=\"alert\"><h1>{title}</h1><p>{detail}</p>\
         <p><a class=\"button\" href=\"/signin\">Back to sign-in</a></p></section>",
        title = escape(title),
        detail = escape(detail),
    );
    crate::web::plain_page::page(status, title, &inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_only_ever_a_local_path() {
        assert_eq!(local_path(Some("/tokens?x=1")), "/tokens?x=1");
        for bad in ["https://evil.test/", "//evil.test", "/\\evil.test", "evil", "", "/a\nb"] {
            assert_eq!(local_path(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(local_path(None), "/");
    }

    #[test]
    fn states_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
