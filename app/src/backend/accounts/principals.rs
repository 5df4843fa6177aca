//! Turning a user id into the `Principal` every service call takes: one query
//! shared by API tokens and browser sessions, so both see the same roles and
//! tenants.

use crate::backend::error::ServiceResult;
use crate::model::{Principal, Role, TenantRef};
use sqlx::PgPool;
use uuid::Uuid;

/// Columns of a principal, for a query that joins `app_user u`.
pub(super) const PRINCIPAL_COLUMNS: &str = "u.id AS user_id, u.email, u.name, u.role,
    ARRAY(SELECT m.tenant_id FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
          WHERE m.user_id = u.id ORDER BY tn.slug) AS tenant_ids,
    ARRAY(SELECT tn.slug FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
          WHERE m.user_id = u.id ORDER BY tn.slug) AS tenant_slugs";

#[derive(sqlx::FromRow)]
pub(super) struct PrincipalRow {
    user_id: Uuid,
    email: String,
    name: String,
    role: Role,
    tenant_ids: Vec<Uuid>,
    tenant_slugs: Vec<String>,
}

impl From<PrincipalRow> for Principal {
    fn from(row: PrincipalRow) -> Self {
        Principal {
            user_id: row.user_id,
            email: row.email,
            name: row.name,
            role: row.role,
            tenants: row
                .tenant_ids
                .into_iter()
                .zip(row.tenant_slugs)
                .map(|(id, slug)| TenantRef { id, slug })
                .collect(),
        }
    }
}

/// The principal of a user id, or `None` when the user no longer exists or
/// has been disabled (so a disabled user's session is worthless at once).
pub async fn by_user_id(db: &PgPool, user_id: Uuid) -> ServiceResult<Option<Principal>> {
    let row: Option<PrincipalRow> = sqlx::query_as(&format!(
        "SELECT {PRINCIPAL_COLUMNS} FROM app_user u WHERE u.id = $1 AND u.disabled_at IS NULL"
    ))
    .bind(user_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(Principal::from))
}

/// The principal of the person an OpenID provider knows as `subject`, if
/// they have signed in to the portal before and are not disabled.
pub async fn by_provider_subject(db: &PgPool, issuer: &str, subject: &str) -> ServiceResult<Option<Principal>> {
    let row: Option<PrincipalRow> = sqlx::query_as(&format!(
        "SELECT {PRINCIPAL_COLUMNS} FROM app_user u
         WHERE u.oidc_issuer = $1 AND u.oidc_subject = $2 AND u.disabled_at IS NULL"
    ))
    .bind(issuer)
    .bind(subject)
    .fetch_optional(db)
    .await?;
    Ok(row.map(Principal::from))
}
