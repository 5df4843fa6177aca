//! Users and tenants as the command line manages them (OIDC logins will
//! update the same rows).

use super::error::{ServiceError, ServiceResult};
use crate::model::Role;
use crate::rules::FieldError;
use sqlx::PgPool;
use uuid::Uuid;

/// Creates the tenant if it does not exist yet; returns its id.
pub async fn ensure_tenant(db: &PgPool, slug: &str, name: &str) -> ServiceResult<Uuid> {
    let id: Option<Uuid> = sqlx::query_scalar(
        "INSERT INTO tenant (slug, name) VALUES ($1, $2)
         ON CONFLICT ON CONSTRAINT tenant_slug_key DO UPDATE SET slug = excluded.slug
         RETURNING id",
    )
    .bind(slug)
    .bind(name)
    .fetch_optional(db)
    .await
    .map_err(|err| match err.as_database_error().and_then(|d| d.constraint()) {
        Some("tenant_slug_format") => ServiceError::Invalid(FieldError::new(
            "tenant",
            "must be lowercase letters, digits and dashes, at most 40 characters",
        )),
        _ => err.into(),
    })?;
    id.ok_or(ServiceError::NotFound("tenant"))
}

/// Creates or updates a user by email and adds them to the tenant.
pub async fn upsert_user(db: &PgPool, email: &str, name: &str, role: Role, tenant_slug: &str) -> ServiceResult<Uuid> {
    if !email.contains('@') {
        return Err(FieldError::new("email", "is not an email address").into());
    }
    let tenant_id = ensure_tenant(db, tenant_slug, tenant_slug).await?;
    let mut tx = db.begin().await?;
    let user_id: Uuid = sqlx::query_scalar(
        "INSERT INTO app_user (email, name, role) VALUES ($1, $2, $3)
         ON CONFLICT ON CONSTRAINT app_user_email_key DO UPDATE SET name = excluded.name, role = excluded.role
         RETURNING id",
    )
    .bind(email)
    .bind(name)
    .bind(role.as_str())
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("INSERT INTO membership (user_id, tenant_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(user_id)
        .bind(tenant_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(user_id)
}

pub async fn find_by_email(db: &PgPool, email: &str) -> ServiceResult<Uuid> {
    sqlx::query_scalar("SELECT id FROM app_user WHERE email = $1")
        .bind(email)
        .fetch_optional(db)
        .await?
        .ok_or(ServiceError::NotFound("user"))
}
