//! Idempotent submits: a request that carries a key (the `Idempotency-Key`
//! header, or the hidden field of every booking form) is carried out once
//! per user and key; a repeat — a double click, a resent form, a script's
//! retry — gets the first answer back instead of booking again. Keys live a
//! day (`sessions::maintenance` deletes older ones).

use crate::backend::error::{ServiceError, ServiceResult};
use serde::{de::DeserializeOwned, Serialize};
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::future::Future;
use uuid::Uuid;

/// How long a key is remembered.
pub const KEEP_HOURS: i32 = 24;

/// How long a repeat waits for the first request with its key to finish
/// before it answers "still being carried out" (a booking takes
/// milliseconds; three clicks in the same instant should all see it).
const WAIT_FOR_FIRST: std::time::Duration = std::time::Duration::from_secs(10);

/// What counts as a repeat of a request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// The same key (the REST API: a client sending two keys asks for two).
    SameKey,
    /// The same key, or the same request from the same person within
    /// `SAME_INTENT_SECONDS` under any key (the portal's forms).
    SameKeyOrIntent,
}

/// How long the same request from the same person is the same intent,
/// whatever its key: a page renders a new key once its booking is made, and
/// the second of three quick clicks then carried it (two bookings). Short:
/// booking, canceling and booking the same window again takes a person
/// longer, and that second booking is meant.
const SAME_INTENT_SECONDS: f64 = 2.0;

/// Runs `act` once for `(user, key)`; `request` is what was asked (any
/// serializable value), so that a key reused for another request is refused
/// rather than answered with the wrong result. Without a key, `act` runs.
///
/// The key is claimed by one insert, which PostgreSQL decides atomically:
/// of requests arriving together exactly one acts; the others wait for its
/// answer and return that, or, when it failed and so did nothing, claim the
/// key again themselves.
pub async fn once<T, R, F>(
    db: &PgPool,
    (user, key): (Uuid, Option<&str>),
    request: &R,
    repeat: Repeat,
    act: F,
) -> ServiceResult<T>
where
    T: Serialize + DeserializeOwned,
    R: Serialize,
    F: Future<Output = ServiceResult<T>>,
{
    let Some(key) = key.map(str::trim).filter(|k| !k.is_empty()) else { return act.await };
    if key.len() > 255 {
        return Err(crate::rules::FieldError::new("idempotency_key", "must be at most 255 characters").into());
    }
    let digest = hex::encode(Sha256::digest(serde_json::to_vec(request).unwrap_or_default()));
    let deadline = tokio::time::Instant::now() + WAIT_FOR_FIRST;
    loop {
        let first = match claim(db, user, key, &digest, repeat == Repeat::SameKeyOrIntent).await? {
            None => return carry_out(db, user, key, act).await,
            Some(first) => first,
        };
        match earlier(db, user, &first, &digest).await? {
            Some(answer) => {
                return serde_json::from_value(answer)
                    .map_err(|_| ServiceError::Internal("a stored answer that no longer reads"))
            }
            None if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(25)).await
            }
            None => {
                return Err(ServiceError::Conflict {
                    code: "idempotency_in_progress",
                    field: Some("idempotency_key".into()),
                    reason: "the first request with this key is still being carried out".into(),
                })
            }
        }
    }
}

/// Claims `key` for this request: `None` when it is this request's to
/// carry out, else the key of the first request to wait for: this key's
/// holder, or with `per_intent` (`Repeat::SameKeyOrIntent`) a recent
/// identical request under another key, looked for under a lock of the
/// person and request so that two arriving together never both act.
async fn claim(db: &PgPool, user: Uuid, key: &str, digest: &str, per_intent: bool) -> ServiceResult<Option<String>> {
    let mut tx = db.begin().await?;
    if per_intent {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1::text || $2, 0))")
            .bind(user)
            .bind(digest)
            .execute(&mut *tx)
            .await?;
        let recent: Option<String> = sqlx::query_scalar(
            "SELECT key FROM idempotency_key
             WHERE user_id = $1 AND request = $2 AND key <> $3 AND created_at > now() - make_interval(secs => $4)
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(user)
        .bind(digest)
        .bind(key)
        .bind(SAME_INTENT_SECONDS)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(recent) = recent {
            tx.commit().await?;
            return Ok(Some(recent));
        }
    }
    let inserted = sqlx::query(
        "INSERT INTO idempotency_key (user_id, key, request) VALUES ($1, $2, $3) ON CONFLICT (user_id, key) DO NOTHING",
    )
    .bind(user)
    .bind(key)
    .bind(digest)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok((inserted == 0).then(|| key.to_string()))
}

/// Runs `act` for the claimed key and keeps its answer; on failure (nothing
/// was done) lets the key go, so the same key may try again.
async fn carry_out<T, F>(db: &PgPool, user: Uuid, key: &str, act: F) -> ServiceResult<T>
where
    T: Serialize,
    F: Future<Output = ServiceResult<T>>,
{
    let result = act.await;
    match &result {
        Ok(answer) => {
            let answer =
                serde_json::to_value(answer).map_err(|_| ServiceError::Internal("an answer that is not JSON"))?;
            sqlx::query("UPDATE idempotency_key SET answer = $3 WHERE user_id = $1 AND key = $2")
                .bind(user)
                .bind(key)
                .bind(answer)
                .execute(db)
                .await?;
        }
        Err(_) => {
            sqlx::query("DELETE FROM idempotency_key WHERE user_id = $1 AND key = $2")
                .bind(user)
                .bind(key)
                .execute(db)
                .await?;
        }
    }
    result
}

/// The first answer to this key: `None` while the first request still runs
/// or after it failed (the caller claims the key again); a conflict when the
/// key was used for another request.
async fn earlier(db: &PgPool, user: Uuid, key: &str, digest: &str) -> ServiceResult<Option<serde_json::Value>> {
    let row: Option<(String, Option<serde_json::Value>)> =
        sqlx::query_as("SELECT request, answer FROM idempotency_key WHERE user_id = $1 AND key = $2")
            .bind(user)
            .bind(key)
            .fetch_optional(db)
            .await?;
    match row {
        Some((request, _)) if request != digest => Err(ServiceError::Conflict {
            code: "idempotency_key_reused",
            field: Some("idempotency_key".into()),
            reason: "this key was used for a different request; use a new key for a new request".into(),
        }),
        Some((_, answer)) => Ok(answer),
        None => Ok(None),
    }
}
