//! A user's notification choices and webhooks, and admins' tenant-wide
//! webhooks. The worker reads the same tables when it fans events out
//! (server/src/notify/). Webhook changes are audited.

use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{NewWebhook, NotificationSettings, Preference, Principal, Webhook, EVENTS};
use crate::rules::FieldError;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sqlx::PgPool;
use uuid::Uuid;

/// Most webhooks one user (or one tenant) has: each costs a call per event.
const MAX_WEBHOOKS: i64 = 10;

pub async fn settings(db: &PgPool, principal: &Principal) -> ServiceResult<NotificationSettings> {
    let off: Vec<(String, String)> =
        sqlx::query_as("SELECT event, channel FROM notification_preference WHERE user_id = $1 AND NOT enabled")
            .bind(principal.user_id)
            .fetch_all(db)
            .await?;
    let on = |event: &str, channel: &str| !off.iter().any(|(e, c)| e == event && c == channel);
    let preferences = crate::model::events_for(principal.role)
        .map(|(event, _)| Preference {
            event: event.to_string(),
            email: on(event, "email"),
            webhook: on(event, "webhook"),
        })
        .collect();
    let webhooks = list(db, "h.user_id = $1", principal.user_id).await?;
    Ok(NotificationSettings { preferences, webhooks })
}

async fn list(db: &PgPool, owner: &str, id: Uuid) -> ServiceResult<Vec<Webhook>> {
    let rows: Vec<(Uuid, String, Option<String>, DateTime<Utc>)> = sqlx::query_as(&format!(
        "SELECT h.id, h.url, t.slug, h.created_at FROM webhook h LEFT JOIN tenant t ON t.id = h.tenant_id
         WHERE {owner} ORDER BY h.created_at"
    ))
    .bind(id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id, url, tenant, created_at)| Webhook { id, url, tenant, created_at }).collect())
}

/// Replaces the caller's choices; events left out keep theirs.
pub async fn set_preferences(
    db: &PgPool,
    principal: &Principal,
    preferences: &[Preference],
) -> ServiceResult<NotificationSettings> {
    for (i, p) in preferences.iter().enumerate() {
        if !EVENTS.iter().any(|(event, _)| *event == p.event) {
            return Err(FieldError::new(format!("preferences[{i}].event"), "is not an event Berth notifies").into());
        }
    }
    let mut tx = db.begin().await?;
    for p in preferences {
        for (channel, enabled) in [("email", p.email), ("webhook", p.webhook)] {
            sqlx::query(
                "INSERT INTO notification_preference (user_id, event, channel, enabled) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (user_id, event, channel) DO UPDATE SET enabled = excluded.enabled",
            )
            .bind(principal.user_id)
            .bind(&p.event)
            .bind(channel)
            .bind(enabled)
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    settings(db, principal).await
}

/// An http(s) URL with a host, no credentials in it, at most 2000 characters.
pub fn check_url(text: &str) -> Result<url::Url, FieldError> {
    let bad = |reason: &str| FieldError::new("url", reason);
    if text.len() > 2000 {
        return Err(bad("is longer than 2000 characters"));
    }
    let url = url::Url::parse(text.trim()).map_err(|_| bad("is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad("must be an http:// or https:// address"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not hold a user name or password (the body is signed instead)"));
    }
    Ok(url)
}

/// A new webhook of the caller, or (admins) of `tenant`; its secret is
/// returned this once.
pub async fn add_webhook(
    db: &PgPool,
    principal: &Principal,
    url: &str,
    tenant: Option<&str>,
) -> ServiceResult<NewWebhook> {
    let url = check_url(url)?;
    let mut tx = db.begin().await?;
    let (user_id, tenant_id) = match tenant {
        None => (Some(principal.user_id), None),
        Some(slug) => {
            if !principal.is_admin() {
                return Err(ServiceError::Forbidden("only admins set up a tenant's webhooks"));
            }
            (None, Some(crate::backend::accounts::tenants::tenant_id(&mut *tx, slug).await?))
        }
    };
    // Serialises a user's (or tenant's) additions, so the cap holds.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('webhook:' || $1::text))")
        .bind(user_id.or(tenant_id))
        .execute(&mut *tx)
        .await?;
    let count: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM webhook WHERE user_id IS NOT DISTINCT FROM $1 AND tenant_id IS NOT DISTINCT FROM $2",
    )
    .bind(user_id)
    .bind(tenant_id)
    .fetch_one(&mut *tx)
    .await?;
    if count >= MAX_WEBHOOKS {
        return Err(ServiceError::Conflict {
            code: "webhook_limit",
            field: Some("url".into()),
            reason: format!("at most {MAX_WEBHOOKS} webhooks each; remove one first"),
        });
    }
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    let secret = format!("bwh_{}", hex::encode(bytes));
    let (id, created_at): (Uuid, DateTime<Utc>) = sqlx::query_as(
        "INSERT INTO webhook (user_id, tenant_id, url, secret) VALUES ($1, $2, $3, $4) RETURNING id, created_at",
    )
    .bind(user_id)
    .bind(tenant_id)
    .bind(url.as_str())
    .bind(&secret)
    .fetch_one(&mut *tx)
    .await?;
    let target = id.to_string();
    let subject = Subject { target: &target, tenant: tenant_id, pool: None };
    audit::record(&mut tx, principal, "webhook.create", subject, url.as_str()).await?;
    tx.commit().await?;
    let webhook = Webhook { id, url: url.to_string(), tenant: tenant.map(str::to_string), created_at };
    Ok(NewWebhook { webhook, secret })
}

/// Removes one of the caller's webhooks (admins: a tenant's too). Anyone
/// else's is "not found".
pub async fn remove_webhook(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<()> {
    let mut tx = db.begin().await?;
    let removed: Option<(String, Option<Uuid>)> = sqlx::query_as(
        "DELETE FROM webhook WHERE id = $1 AND (user_id = $2 OR (tenant_id IS NOT NULL AND $3))
         RETURNING url, tenant_id",
    )
    .bind(id)
    .bind(principal.user_id)
    .bind(principal.is_admin())
    .fetch_optional(&mut *tx)
    .await?;
    let (url, tenant) = removed.ok_or(ServiceError::NotFound("webhook"))?;
    let target = id.to_string();
    audit::record(&mut tx, principal, "webhook.delete", Subject { target: &target, tenant, pool: None }, &url).await?;
    tx.commit().await?;
    Ok(())
}

/// A tenant's webhooks (admins).
pub async fn tenant_webhooks(db: &PgPool, principal: &Principal, slug: &str) -> ServiceResult<Vec<Webhook>> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins see a tenant's webhooks"));
    }
    let id = crate::backend::accounts::tenants::tenant_id(db, slug).await?;
    list(db, "h.tenant_id = $1", id).await
}
