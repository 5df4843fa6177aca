//! API tokens: random, shown once, stored as a SHA-256 hash, expiring,
//! revocable. Also turns a presented token into a `Principal`.

use crate::backend::accounts::identity::{TokenFacts, TokenIssuer};
use crate::backend::accounts::principals::{PrincipalRow, PRINCIPAL_COLUMNS};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{CreatedToken, Principal, TokenInfo, TokenScope, MAX_TOKEN_DAYS};
use crate::rules::FieldError;
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration as StdDuration, Instant};
use uuid::Uuid;

const PREFIX: &str = "berth_";

fn hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Remembers who a token stands for, for a few seconds, so a busy API client
/// costs one database round trip per booking instead of two. Keyed by the
/// token's hash; an entry never outlives the token's own expiry. The price:
/// a revoked token, or a changed role or tenant, takes effect within `ttl`
/// on other replicas; this one forgets at once (`forget`, `forget_user`).
pub struct TokenCache {
    ttl: StdDuration,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_hash: HashMap<Vec<u8>, (Bearer, Instant)>,
    /// Counts forgettings: a lookup that began before one (and so may have
    /// read the token or its person as they were) does not keep its answer.
    forgotten: u64,
}

/// Entries kept before the cache starts over; bounds memory against token sprays.
const CACHE_LIMIT: usize = 10_000;

impl TokenCache {
    pub fn new(ttl: StdDuration) -> Self {
        Self { ttl, entries: Mutex::default() }
    }

    pub async fn authenticate(&self, db: &PgPool, token: &str) -> ServiceResult<Option<Bearer>> {
        if !token.starts_with(PREFIX) {
            return Ok(None);
        }
        let key = hash(token);
        let now = Instant::now();
        let mut began = None;
        if let Ok(entries) = self.entries.lock() {
            if let Some((bearer, until)) = entries.by_hash.get(&key) {
                if *until > now {
                    return Ok(Some(bearer.clone()));
                }
            }
            began = Some(entries.forgotten);
        }
        let Some((bearer, valid_for)) = lookup(db, &key).await? else {
            return Ok(None);
        };
        if let Ok(mut entries) = self.entries.lock() {
            if entries.by_hash.len() >= CACHE_LIMIT {
                entries.by_hash.clear();
            }
            if began == Some(entries.forgotten) {
                entries.by_hash.insert(key, (bearer.clone(), now + self.ttl.min(valid_for)));
            }
        }
        Ok(Some(bearer))
    }

    /// Drops a token at once (after a revoke), instead of after `ttl`.
    pub fn forget(&self, token_hash: &[u8]) {
        self.forget_where(|hash, _| hash == token_hash);
    }

    /// Drops a person's tokens at once: they were disabled, or lost a
    /// tenant or a role, which their cached tokens would still carry.
    pub fn forget_user(&self, user_id: Uuid) {
        self.forget_where(|_, bearer| bearer.principal.user_id == user_id);
    }

    fn forget_where(&self, gone: impl Fn(&[u8], &Bearer) -> bool) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.by_hash.retain(|hash, (bearer, _)| !gone(hash, bearer));
            entries.forgotten += 1;
        }
    }
}

/// A live token: who it stands for, and which token it is.
#[derive(Clone, Debug)]
pub struct Bearer {
    pub principal: Principal,
    pub token: TokenFacts,
}

pub struct IssuedToken {
    pub id: Uuid,
    /// The only time the plain token exists outside the client.
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

pub async fn issue(
    db: &PgPool,
    user_id: Uuid,
    name: &str,
    lifetime: Duration,
    scope: TokenScope,
) -> ServiceResult<IssuedToken> {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{PREFIX}{}", hex::encode(bytes));
    let (id, expires_at): (Uuid, DateTime<Utc>) = sqlx::query_as(
        "INSERT INTO api_token (user_id, name, token_hash, expires_at, scope)
         VALUES ($1, $2, $3, now() + $4 * interval '1 second', $5)
         RETURNING id, expires_at",
    )
    .bind(user_id)
    .bind(name)
    .bind(hash(&token))
    .bind(lifetime.num_seconds() as f64)
    .bind(scope.as_str())
    .fetch_one(db)
    .await?;
    Ok(IssuedToken { id, token, expires_at })
}

#[derive(sqlx::FromRow)]
struct TokenRow {
    token_id: Uuid,
    scope: TokenScope,
    #[sqlx(flatten)]
    principal: PrincipalRow,
    stale: bool,
    seconds_left: f64,
}

/// The principal a live (unexpired, unrevoked) token stands for, if any.
pub async fn authenticate(db: &PgPool, token: &str) -> ServiceResult<Option<Principal>> {
    if !token.starts_with(PREFIX) {
        return Ok(None);
    }
    Ok(lookup(db, &hash(token)).await?.map(|(bearer, _)| bearer.principal))
}

/// The principal behind a token hash, and how long the token stays valid.
async fn lookup(db: &PgPool, token_hash: &[u8]) -> ServiceResult<Option<(Bearer, StdDuration)>> {
    let row: Option<TokenRow> = sqlx::query_as(&format!(
        "SELECT t.id AS token_id, t.scope, {PRINCIPAL_COLUMNS},
                coalesce(t.last_used_at < now() - interval '1 minute', true) AS stale,
                extract(epoch FROM t.expires_at - now())::float8 AS seconds_left
         FROM api_token t JOIN app_user u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND u.disabled_at IS NULL"
    ))
    .bind(token_hash)
    .fetch_optional(db)
    .await?;
    let Some(row) = row else { return Ok(None) };
    // Last use is recorded at minute precision so that a busy client does not
    // turn every read into a write.
    if row.stale {
        sqlx::query("UPDATE api_token SET last_used_at = now() WHERE id = $1").bind(row.token_id).execute(db).await?;
    }
    let valid_for = StdDuration::from_secs_f64(row.seconds_left.max(0.0));
    let token = TokenFacts { id: row.token_id, scope: row.scope, issuer: TokenIssuer::Berth };
    Ok(Some((Bearer { principal: Principal::from(row.principal), token }, valid_for)))
}

/// The principal's own tokens, newest first, revoked ones included.
pub async fn list_for(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<TokenInfo>> {
    Ok(sqlx::query_as(
        "SELECT id, name, created_at, expires_at, last_used_at, revoked_at, scope FROM api_token
         WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT 500",
    )
    .bind(principal.user_id)
    .fetch_all(db)
    .await?)
}

/// Creates a token for the principal themself, as the Tokens page does.
pub async fn create_for(
    db: &PgPool,
    principal: &Principal,
    name: &str,
    days: i64,
    scope: &str,
) -> ServiceResult<CreatedToken> {
    let scope = TokenScope::parse(scope).ok_or_else(|| FieldError::new("scope", "must be read, book or full"))?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 60 {
        return Err(FieldError::new("name", "must be 1 to 60 characters").into());
    }
    if !(1..=MAX_TOKEN_DAYS).contains(&days) {
        return Err(FieldError::new("expires_in_days", format!("must be between 1 and {MAX_TOKEN_DAYS}")).into());
    }
    let issued = issue(db, principal.user_id, name, Duration::days(days), scope).await?;
    Ok(CreatedToken {
        id: issued.id,
        name: name.to_string(),
        token: issued.token,
        expires_at: issued.expires_at,
        scope,
    })
}

/// Revokes one of the principal's own tokens; anyone else's is "not found".
/// Revoking twice is fine and keeps the first revocation time.
pub async fn revoke(db: &PgPool, cache: &TokenCache, principal: &Principal, id: Uuid) -> ServiceResult<TokenInfo> {
    #[derive(sqlx::FromRow)]
    struct Revoked {
        token_hash: Vec<u8>,
        #[sqlx(flatten)]
        info: TokenInfo,
    }
    let revoked: Option<Revoked> = sqlx::query_as(
        "UPDATE api_token SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND user_id = $2
         RETURNING token_hash, id, name, created_at, expires_at, last_used_at, revoked_at, scope",
    )
    .bind(id)
    .bind(principal.user_id)
    .fetch_optional(db)
    .await?;
    let revoked = revoked.ok_or(ServiceError::NotFound("token"))?;
    cache.forget(&revoked.token_hash);
    Ok(revoked.info)
}
