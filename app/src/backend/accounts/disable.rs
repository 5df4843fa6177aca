//! An admin disables a user who must lose access at once: their browser
//! sessions and API tokens stop working with the next request (principals
//! of disabled users are not found), their tokens are revoked, their
//! bookings still to come are canceled and running ones end now, each with
//! the reason in the audit trail. Enabling lets them sign in again; revoked
//! tokens stay revoked.

use crate::backend::accounts::tokens::TokenCache;
use crate::backend::audit::Subject;
use crate::backend::bookings::change::{close, settle};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Principal, UserSummary};
use crate::rules::FieldError;
use sqlx::PgPool;
use uuid::Uuid;

pub async fn disable(
    db: &PgPool,
    cache: &TokenCache,
    principal: &Principal,
    user_id: Uuid,
    reason: &str,
) -> ServiceResult<UserSummary> {
    principal.require_admin(crate::backend::accounts::users::ADMINS_ONLY)?;
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > 500 {
        return Err(FieldError::new("reason", "must say why, in 1 to 500 characters").into());
    }
    if user_id == principal.user_id {
        return Err(ServiceError::Conflict {
            code: "disable_self",
            field: None,
            reason: "you cannot disable your own account".into(),
        });
    }
    let mut tx = db.begin().await?;
    let found = sqlx::query(
        "UPDATE app_user SET disabled_at = coalesce(disabled_at, now()), disabled_reason = $2 WHERE id = $1",
    )
    .bind(user_id)
    .bind(reason)
    .execute(&mut *tx)
    .await?;
    if found.rows_affected() == 0 {
        return Err(ServiceError::NotFound("user"));
    }
    let revoked: Vec<Vec<u8>> = sqlx::query_scalar(
        "UPDATE api_token SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL RETURNING token_hash",
    )
    .bind(user_id)
    .fetch_all(&mut *tx)
    .await?;
    let live: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM booking
         WHERE user_id = $1 AND state IN ('pending', 'approved', 'active') ORDER BY starts_at FOR UPDATE",
    )
    .bind(user_id)
    .fetch_all(&mut *tx)
    .await?;
    // Running windows end now; the rest never start.
    let why = format!("the user was disabled by an admin: {reason}");
    let mut changes = Vec::with_capacity(live.len());
    for id in live {
        changes.extend(close(&mut tx, id, Some(principal.user_id), &why).await?);
    }
    let email: String =
        sqlx::query_scalar("SELECT email FROM app_user WHERE id = $1").bind(user_id).fetch_one(&mut *tx).await?;
    let subject = Subject { target: &email, ..Subject::default() };
    crate::backend::audit::record(&mut tx, principal, "user.disable", subject, reason).await?;
    tx.commit().await?;
    // This server forgets the person's tokens at once, before the waitlist
    // is served (which can take a while); other replicas within the cache's
    // TTL.
    for hash in revoked {
        cache.forget(&hash);
    }
    cache.forget_user(user_id);
    settle(db, changes).await;
    crate::backend::accounts::users::summary(db, user_id).await
}

pub async fn enable(db: &PgPool, principal: &Principal, user_id: Uuid) -> ServiceResult<UserSummary> {
    principal.require_admin(crate::backend::accounts::users::ADMINS_ONLY)?;
    let mut tx = db.begin().await?;
    let email: Option<String> = sqlx::query_scalar(
        "UPDATE app_user SET disabled_at = NULL, disabled_reason = '' WHERE id = $1 RETURNING email",
    )
    .bind(user_id)
    .fetch_optional(&mut *tx)
    .await?;
    let email = email.ok_or(ServiceError::NotFound("user"))?;
    crate::backend::audit::record(
        &mut tx,
        principal,
        "user.enable",
        Subject { target: &email, ..Subject::default() },
        "",
    )
    .await?;
    tx.commit().await?;
    crate::backend::accounts::users::summary(db, user_id).await
}
