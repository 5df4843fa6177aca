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

/// Runs `act` once for `(user, key)`; `request` is what was asked (any
/// serializable value), so that a key reused for another request is refused
/// rather than answered with the wrong result. Without a key, `act` runs.
///
/// The key is claimed by one insert, which PostgreSQL decides atomically:
/// of requests arriving together exactly one acts; the others wait for its
/// answer and return that, or, when it failed and so did nothing, claim the
/// key again themselves.
pub async fn once<T, R, F>(db: &PgPool, (user, key): (Uuid, Option<&str>), request: &R, act: F) -> ServiceResult<T>
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
        let first = match claim(db, user, key, &digest).await? {
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
/// carry out, else the key to wait for (another request holds it).
async fn claim(db: &PgPool, user: Uuid, key: &str, digest: &str) -> ServiceResult<Option<String>> {
    let inserted = sqlx::query(
        "INSERT INTO idempotency_key (user_id, key, request) VALUES ($1, $2, $3) ON CONFLICT (user_id, key) DO NOTHING",
    )
    .bind(user)
    .bind(key)
    .bind(digest)
    .execute(db)
    .await?
    .rows_affected();
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
