//! What Berth keeps in a browser's server-side session (tower-sessions,
//! stored in PostgreSQL's `web_session`): the signed-in user, when they
//! signed in (for the absolute lifetime), the ID token for the provider's
//! logout, and a login in progress.

use super::oidc::PendingLogin;
use chrono::Utc;
use std::time::Duration;
use tower_sessions::Session;
use uuid::Uuid;

const USER_ID: &str = "user_id";
const SIGNED_IN_AT: &str = "signed_in_at";
const ID_TOKEN: &str = "id_token";
const PENDING_LOGIN: &str = "pending_login";

pub type SessionResult<T> = Result<T, tower_sessions::session::Error>;

/// Starts a signed-in session under a new id, so an id planted before
/// login (session fixation) is worth nothing afterwards.
pub async fn sign_in(session: &Session, user_id: Uuid, id_token: Option<String>) -> SessionResult<()> {
    session.cycle_id().await?;
    session.insert(USER_ID, user_id).await?;
    session.insert(SIGNED_IN_AT, Utc::now().timestamp()).await?;
    match id_token {
        Some(token) => session.insert(ID_TOKEN, token).await?,
        None => {
            session.remove::<String>(ID_TOKEN).await?;
        }
    }
    Ok(())
}

/// The signed-in user, unless the session has outlived `absolute_lifetime`
/// since login (then it is ended here). Idle expiry is the store's job.
pub async fn signed_in_user(session: &Session, absolute_lifetime: Duration) -> SessionResult<Option<Uuid>> {
    let Some(user_id) = session.get::<Uuid>(USER_ID).await? else { return Ok(None) };
    let since = session.get::<i64>(SIGNED_IN_AT).await?.unwrap_or(0);
    let age = Utc::now().timestamp().saturating_sub(since);
    if age < 0 || age as u64 > absolute_lifetime.as_secs() {
        session.flush().await?;
        return Ok(None);
    }
    Ok(Some(user_id))
}

/// Ends the session (the row is deleted and the cookie cleared); returns the
/// ID token for the provider's end-session request.
pub async fn sign_out(session: &Session) -> SessionResult<Option<String>> {
    let id_token = session.get::<String>(ID_TOKEN).await?;
    session.flush().await?;
    Ok(id_token)
}

pub async fn remember_pending(session: &Session, pending: &PendingLogin) -> SessionResult<()> {
    session.insert(PENDING_LOGIN, pending).await
}

/// Takes the pending login out of the session, so a callback works once.
pub async fn take_pending(session: &Session) -> SessionResult<Option<PendingLogin>> {
    session.remove::<PendingLogin>(PENDING_LOGIN).await
}
