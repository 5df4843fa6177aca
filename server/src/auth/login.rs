//! A browser's login: what Berth keeps in tower-sessions' server-side
//! session (stored in PostgreSQL's `web_session`) — the signed-in user, when
//! they signed in (for the absolute lifetime), the ID token for the
//! provider's logout, and a sign-in in progress. ("Session" in Berth means
//! a booking's provisioned workspace; this is the *login*.)

use super::oidc::PendingLogin;
use chrono::Utc;
use std::time::Duration;
use tower_sessions::Session;
use uuid::Uuid;

const USER_ID: &str = "user_id";
const SIGNED_IN_AT: &str = "signed_in_at";
const ID_TOKEN: &str = "id_token";
const PENDING_LOGIN: &str = "pending_login";

pub type LoginResult<T> = Result<T, tower_sessions::session::Error>;

/// Starts a login under a new session id, so an id planted before
/// login (session fixation) is worth nothing afterwards.
pub async fn sign_in(login: &Session, user_id: Uuid, id_token: Option<String>) -> LoginResult<()> {
    login.cycle_id().await?;
    login.insert(USER_ID, user_id).await?;
    login.insert(SIGNED_IN_AT, Utc::now().timestamp()).await?;
    match id_token {
        Some(token) => login.insert(ID_TOKEN, token).await?,
        None => {
            login.remove::<String>(ID_TOKEN).await?;
        }
    }
    Ok(())
}

/// The signed-in user, unless the login has outlived `absolute_lifetime`
/// since login (then it is ended here). Idle expiry is the store's job.
pub async fn signed_in_user(login: &Session, absolute_lifetime: Duration) -> LoginResult<Option<Uuid>> {
    let Some(user_id) = login.get::<Uuid>(USER_ID).await? else { return Ok(None) };
    let since = login.get::<i64>(SIGNED_IN_AT).await?.unwrap_or(0);
    let age = Utc::now().timestamp().saturating_sub(since);
    if age < 0 || age as u64 > absolute_lifetime.as_secs() {
        login.flush().await?;
        return Ok(None);
    }
    Ok(Some(user_id))
}

/// Ends the login (the row is deleted and the cookie cleared); returns the
/// ID token for the provider's end-session request.
pub async fn sign_out(login: &Session) -> LoginResult<Option<String>> {
    let id_token = login.get::<String>(ID_TOKEN).await?;
    login.flush().await?;
    Ok(id_token)
}

pub async fn remember_pending(login: &Session, pending: &PendingLogin) -> LoginResult<()> {
    login.insert(PENDING_LOGIN, pending).await
}

/// Takes the pending sign-in out of the login, so a callback works once.
pub async fn take_pending(login: &Session) -> LoginResult<Option<PendingLogin>> {
    login.remove::<PendingLogin>(PENDING_LOGIN).await
}
