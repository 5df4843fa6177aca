//! Users and tenants: created by the command line or the seed, by OIDC
//! logins (identified by issuer + subject), and managed by admins.

use crate::backend::audit::Subject;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Membership, MembershipSource, Principal, Role, UserSummary};
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

/// What a verified ID token says about a user, after group mapping.
#[derive(Clone, Debug)]
pub struct FederatedLogin {
    pub issuer: String,
    pub subject: String,
    pub email: String,
    /// Only a verified address may link the login to an account an admin
    /// created by email: otherwise anyone able to claim that address at the
    /// provider would take the account over.
    pub email_verified: bool,
    /// How the cluster names the user (the claim the API server takes
    /// usernames from); none when the token gives none, or only an
    /// unverified email. Never replaces a known name with none.
    pub cluster_username: Option<String>,
    pub name: String,
    pub role: Role,
    /// Tenants the user's groups grant; they replace last login's.
    pub tenant_slugs: Vec<String>,
}

/// Records a login: finds the user by issuer + subject (email may change),
/// or links a user an admin created by email before their first login (one
/// that has no identity yet, and only by a verified address), or creates
/// one. Role, name, email and the group-granted tenants are refreshed;
/// hand-assigned tenants stay. A disabled user is refused.
pub async fn record_login(db: &PgPool, login: &FederatedLogin) -> ServiceResult<Uuid> {
    let mut tx = db.begin().await?;
    let known: Option<(Uuid, bool, bool)> = sqlx::query_as(
        "SELECT id, oidc_issuer IS NULL AS unlinked, disabled_at IS NOT NULL AS disabled FROM app_user
         WHERE oidc_issuer = $1 AND oidc_subject = $2
         UNION ALL
         (SELECT id, true, disabled_at IS NOT NULL FROM app_user WHERE email = $3 AND oidc_issuer IS NULL)
         LIMIT 1",
    )
    .bind(&login.issuer)
    .bind(&login.subject)
    .bind(&login.email)
    .fetch_optional(&mut *tx)
    .await?;
    if known.is_some_and(|(_, unlinked, _)| unlinked) && !login.email_verified {
        return Err(ServiceError::Forbidden(
            "an account for this email address exists, and your identity provider has not verified that the \
             address is yours; verify it with your provider, or ask your Berth admin",
        ));
    }
    if known.is_some_and(|(_, _, disabled)| disabled) {
        return Err(ServiceError::Forbidden("this account has been disabled by a Berth admin"));
    }
    let known = known.map(|(id, _, _)| id);
    let updated = match known {
        Some(id) => sqlx::query_scalar(
            "UPDATE app_user SET oidc_issuer = $2, oidc_subject = $3, email = $4, name = $5, role = $6,
                    cluster_username = coalesce($7, cluster_username)
             WHERE id = $1 RETURNING id",
        )
        .bind(id),
        None => sqlx::query_scalar(
            "INSERT INTO app_user (oidc_issuer, oidc_subject, email, name, role, cluster_username)
             VALUES ($2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(None::<Uuid>),
    };
    let user_id: Uuid = updated
        .bind(&login.issuer)
        .bind(&login.subject)
        .bind(&login.email)
        .bind(&login.name)
        .bind(login.role.as_str())
        .bind(&login.cluster_username)
        .fetch_one(&mut *tx)
        .await
        .map_err(|err| match ServiceError::from(err) {
            ServiceError::Conflict { field, .. } if field.as_deref() == Some("email") => ServiceError::Conflict {
                code: "email_taken",
                field,
                reason: "another account already uses this email address; ask your admin".into(),
            },
            other => other,
        })?;
    let mut tenant_ids = Vec::with_capacity(login.tenant_slugs.len());
    for slug in &login.tenant_slugs {
        tenant_ids.push(ensure_tenant_in(&mut tx, slug).await?);
    }
    sqlx::query("DELETE FROM membership WHERE user_id = $1 AND source = 'oidc' AND NOT (tenant_id = ANY($2))")
        .bind(user_id)
        .bind(&tenant_ids)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO membership (user_id, tenant_id, source) SELECT $1, unnest($2::uuid[]), 'oidc'
         ON CONFLICT (user_id, tenant_id) DO NOTHING",
    )
    .bind(user_id)
    .bind(&tenant_ids)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(user_id)
}

async fn ensure_tenant_in(tx: &mut sqlx::PgConnection, slug: &str) -> ServiceResult<Uuid> {
    Ok(sqlx::query_scalar(
        "INSERT INTO tenant (slug, name) VALUES ($1, $1)
         ON CONFLICT ON CONSTRAINT tenant_slug_key DO UPDATE SET slug = excluded.slug
         RETURNING id",
    )
    .bind(slug)
    .fetch_one(tx)
    .await?)
}

#[derive(sqlx::FromRow)]
struct UserRow {
    id: Uuid,
    email: String,
    name: String,
    role: Role,
    federated: bool,
    slugs: Vec<String>,
    sources: Vec<String>,
    disabled: Option<String>,
}

impl From<UserRow> for UserSummary {
    fn from(row: UserRow) -> Self {
        let tenants = row
            .slugs
            .into_iter()
            .zip(row.sources)
            .map(|(slug, source)| Membership {
                slug,
                source: if source == "oidc" { MembershipSource::Oidc } else { MembershipSource::Manual },
            })
            .collect();
        UserSummary {
            id: row.id,
            email: row.email,
            name: row.name,
            role: row.role,
            federated: row.federated,
            tenants,
            disabled: row.disabled,
        }
    }
}

const USER_SUMMARY: &str = "SELECT u.id, u.email, u.name, u.role, u.oidc_issuer IS NOT NULL AS federated,
        CASE WHEN u.disabled_at IS NOT NULL THEN u.disabled_reason END AS disabled,
        ARRAY(SELECT tn.slug FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
              WHERE m.user_id = u.id ORDER BY tn.slug) AS slugs,
        ARRAY(SELECT m.source FROM membership m JOIN tenant tn ON tn.id = m.tenant_id
              WHERE m.user_id = u.id ORDER BY tn.slug) AS sources
    FROM app_user u";

/// What anyone but an admin is told here.
pub(super) const ADMINS_ONLY: &str = "only admins manage users";

/// Every user, for admins.
pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<UserSummary>> {
    principal.require_admin(ADMINS_ONLY)?;
    let rows: Vec<UserRow> =
        sqlx::query_as(&format!("{USER_SUMMARY} ORDER BY u.email LIMIT 1000")).fetch_all(db).await?;
    Ok(rows.into_iter().map(UserSummary::from).collect())
}

pub(super) async fn summary(db: &PgPool, id: Uuid) -> ServiceResult<UserSummary> {
    let row: Option<UserRow> =
        sqlx::query_as(&format!("{USER_SUMMARY} WHERE u.id = $1")).bind(id).fetch_optional(db).await?;
    row.map(UserSummary::from).ok_or(ServiceError::NotFound("user"))
}

/// An admin adds a user to an existing tenant by hand;
/// logins keep it. Adding an existing membership makes it a manual one.
pub async fn assign_tenant(
    db: &PgPool,
    principal: &Principal,
    user_id: Uuid,
    slug: &str,
) -> ServiceResult<UserSummary> {
    principal.require_admin(ADMINS_ONLY)?;
    // An existing tenant only: a mistyped slug would otherwise make a
    // tenant nobody asked for (tenants are made on their own page).
    let tenant_id = match super::tenants::tenant_id(db, slug).await {
        Err(ServiceError::NotFound(_)) => {
            Err(FieldError::new("tenant", "names no tenant: make it on the Tenants page first").into())
        }
        found => found,
    }?;
    let mut tx = db.begin().await?;
    let email: Option<String> = sqlx::query_scalar(
        "WITH added AS (
             INSERT INTO membership (user_id, tenant_id, source)
             SELECT id, $2, 'manual' FROM app_user WHERE id = $1
             ON CONFLICT (user_id, tenant_id) DO UPDATE SET source = 'manual'
             RETURNING user_id
         )
         SELECT u.email FROM app_user u JOIN added a ON a.user_id = u.id",
    )
    .bind(user_id)
    .bind(tenant_id)
    .fetch_optional(&mut *tx)
    .await?;
    let email = email.ok_or(ServiceError::NotFound("user"))?;
    let subject = Subject { target: &email, tenant: Some(tenant_id), pool: None };
    crate::backend::audit::record(&mut tx, principal, "user.add_tenant", subject, slug).await?;
    tx.commit().await?;
    summary(db, user_id).await
}

/// An admin removes a user from a tenant. A group-granted membership comes
/// back at the user's next login unless the group changes too.
pub async fn remove_tenant(
    db: &PgPool,
    principal: &Principal,
    user_id: Uuid,
    slug: &str,
) -> ServiceResult<UserSummary> {
    principal.require_admin(ADMINS_ONLY)?;
    let user = summary(db, user_id).await?;
    if !user.tenants.iter().any(|m| m.slug == slug) {
        return Err(ServiceError::NotFound("membership"));
    }
    let mut tx = db.begin().await?;
    let tenant: Option<Uuid> = sqlx::query_scalar(
        "DELETE FROM membership m USING tenant t WHERE m.tenant_id = t.id AND m.user_id = $1 AND t.slug = $2
         RETURNING t.id",
    )
    .bind(user_id)
    .bind(slug)
    .fetch_optional(&mut *tx)
    .await?;
    let subject = Subject { target: &user.email, tenant, pool: None };
    crate::backend::audit::record(&mut tx, principal, "user.remove_tenant", subject, slug).await?;
    tx.commit().await?;
    summary(db, user_id).await
}

/// Who the development login offers: every local user (it is only ever
/// enabled on a loopback address).
pub async fn dev_login_candidates(db: &PgPool) -> ServiceResult<Vec<UserSummary>> {
    let rows: Vec<UserRow> =
        sqlx::query_as(&format!("{USER_SUMMARY} ORDER BY u.role, u.email LIMIT 100")).fetch_all(db).await?;
    Ok(rows.into_iter().map(UserSummary::from).collect())
}
