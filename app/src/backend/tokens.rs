//! API tokens: random, shown once, stored as a SHA-256 hash, expiring,
//! revocable. Also turns a presented token into a `Principal`.

use super::error::ServiceResult;
use crate::model::{Principal, Role, TenantRef};
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
/// a revoked token, or a changed role or tenant, takes effect within `ttl`.
pub struct TokenCache {
    ttl: StdDuration,
    entries: Mutex<HashMap<Vec<u8>, (Principal, Instant)>>,
}

/// Entries kept before the cache starts over; bounds memory against token sprays.
const CACHE_LIMIT: usize = 10_000;

impl TokenCache {
    pub fn new(ttl: StdDuration) -> Self {
        Self { ttl, entries: Mutex::new(HashMap::new()) }
    }

    pub async fn authenticate(&self, db: &PgPool, token: &str) -> ServiceResult<Option<Principal>> {
        if !token.starts_with(PREFIX) {
            return Ok(None);
        }
        let key = hash(token);
        let now = Instant::now();
        if let Ok(entries) = self.entries.lock() {
            if let Some((principal, until)) = entries.get(&key) {
                if *until > now {
                    return Ok(Some(principal.clone()));
                }
            }
        }
        let Some((principal, valid_for)) = lookup(db, &key).await? else {
            return Ok(None);
        };
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_LIMIT {
                entries.clear();
            }
            entries.insert(key, (principal.clone(), now + self.ttl.min(valid_for)));
        }
        Ok(Some(principal))
    }
}

pub struct IssuedToken {
    pub id: Uuid,
    /// The only time the plain token exists outside the client.
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

pub async fn issue(db: &PgPool, user_id: Uuid, name: &str, lifetime: Duration) -> ServiceResult<IssuedToken> {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{PREFIX}{}", hex::encode(bytes));
    let (id, expires_at): (Uuid, DateTime<Utc>) = sqlx::query_as(
        "INSERT INTO api_token (user_id, name, token_hash, expires_at)
         VALUES ($1, $2, $3, now() + $4 * interval '1 second')
         RETURNING id, expires_at",
    )
    .bind(user_id)
    .bind(name)
    .bind(hash(&token))
    .bind(lifetime.num_seconds() as f64)
    .fetch_one(db)
    .await?;
    Ok(IssuedToken { id, token, expires_at })
}

#[derive(sqlx::FromRow)]
struct PrincipalRow {
    token_id: Uuid,
    user_id: Uuid,
    email: String,
    name: String,
    role: String,
    tenant_ids: Vec<Uuid>,
    tenant_slugs: Vec<String>,
    stale: bool,
    seconds_left: f64,
}

/// The principal a live (unexpired, unrevoked) token stands for, if any.
pub async fn authenticate(db: &PgPool, token: &str) -> ServiceResult<Option<Principal>> {
    if !token.starts_with(PREFIX) {
        return Ok(None);
    }
    Ok(lookup(db, &hash(token)).await?.map(|(principal, _)| principal))
}

/// The principal behind a token hash, and how long the token stays valid.
async fn lookup(db: &PgPool, token_hash: &[u8]) -> ServiceResult<Option<(Principal, StdDuration)>> {
    let row: Option<PrincipalRow> = sqlx::query_as(
        "SELECT t.id AS token_id, u.id AS user_id, u.email, u.name, u.role,
                ARRAY(SELECT m.tenant_id FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
                      WHERE m.user_id = u.id ORDER BY tn.slug) AS tenant_ids,
                ARRAY(SELECT tn.slug FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
                      WHERE m.user_id = u.id ORDER BY tn.slug) AS tenant_slugs,
                coalesce(t.last_used_at < now() - interval '1 minute', true) AS stale,
                extract(epoch FROM t.expires_at - now())::float8 AS seconds_left
         FROM api_token t JOIN app_user u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()",
    )
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
    let principal = Principal {
        user_id: row.user_id,
        email: row.email,
        name: row.name,
        role: Role::parse(&row.role).unwrap_or(Role::User),
        tenants: row.tenant_ids.into_iter().zip(row.tenant_slugs).map(|(id, slug)| TenantRef { id, slug }).collect(),
    };
    Ok(Some((principal, valid_for)))
}
