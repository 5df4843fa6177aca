//! Homes and model caches as people and admins see them (issue 46): one's
//! own in Settings, every one and each tenant's settings in the admin
//! console, and asking for one to go. The worker keeps the homes
//! (`sessions::homes`); here only a deletion is asked for, which it carries
//! out once no session holds the home.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::sessions::homes::{kept_until_sql, SITE_RETENTION_DAYS};
use crate::model::{FieldError, Home, HomeSettings, HomesPage, Kept, Principal};
use sqlx::PgPool;
use uuid::Uuid;

/// The principal's own homes, or with `everyone` (admins only) every home.
pub async fn list(db: &PgPool, principal: &Principal, everyone: bool) -> ServiceResult<Vec<Home>> {
    if everyone && !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins see every home"));
    }
    let query = format!(
        "SELECT h.user_id, h.purpose, u.name AS owner_name, u.email AS owner_email, h.storage_class, h.size_gib,
                (SELECT c.name FROM cluster c WHERE c.id = h.cluster_id) AS cluster,
                (SELECT max(b.ends_at) FROM booking b WHERE b.user_id = h.user_id
                   AND b.state IN ('active', 'completed') AND b.ends_at <= now()) AS last_used,
                {} AS deleted_on, h.delete_requested_at IS NOT NULL AS delete_requested
         FROM home h JOIN app_user u ON u.id = h.user_id
         WHERE h.gone_at IS NULL AND ($2 OR h.user_id = $3)
         ORDER BY deleted_on, u.email, h.purpose DESC, cluster, h.storage_class",
        kept_until_sql("h.user_id", "$1", "h.purpose", "h.cluster_id", None)
    );
    Ok(sqlx::query_as::<_, HomeRow>(&query)
        .bind(SITE_RETENTION_DAYS)
        .bind(everyone)
        .bind(principal.user_id)
        .fetch_all(db)
        .await?
        .into_iter()
        .map(Home::from)
        .collect())
}

#[derive(sqlx::FromRow)]
struct HomeRow {
    user_id: Uuid,
    purpose: String,
    owner_name: String,
    owner_email: String,
    storage_class: String,
    cluster: String,
    size_gib: i32,
    last_used: Option<chrono::DateTime<chrono::Utc>>,
    deleted_on: chrono::DateTime<chrono::Utc>,
    delete_requested: bool,
}

impl From<HomeRow> for Home {
    fn from(r: HomeRow) -> Self {
        Home {
            user_id: r.user_id,
            purpose: Kept::parse(&r.purpose).unwrap_or_default(),
            owner_name: r.owner_name,
            owner_email: r.owner_email,
            storage_class: r.storage_class,
            cluster: r.cluster,
            size_gib: r.size_gib,
            last_used: r.last_used,
            deleted_on: r.deleted_on,
            delete_requested: r.delete_requested,
        }
    }
}

#[derive(sqlx::FromRow)]
struct TenantRow {
    slug: String,
    home_gib: i32,
    home_retention_days: Option<i32>,
    cache_gib: i32,
    cache_retention_days: Option<i32>,
    cache_kept: bool,
}

/// The homes page in the reader's zone (`tz`): one's own, or with
/// `everyone` (admins only) every home and each tenant's settings.
pub async fn page(db: &PgPool, principal: &Principal, tz: &str, everyone: bool) -> ServiceResult<HomesPage> {
    let zone = crate::rules::local_time::zone(tz);
    let day = |at: chrono::DateTime<chrono::Utc>| crate::model::day_text(at.with_timezone(&zone).date_naive());
    let homes = list(db, principal, everyone)
        .await?
        .into_iter()
        .map(|h| {
            let last = h.last_used.map(day).unwrap_or_else(|| "in use".into());
            let gone = if h.delete_requested { "as soon as no session holds it".into() } else { day(h.deleted_on) };
            (h, last, gone)
        })
        .collect();
    let tenants = match everyone {
        false => Vec::new(),
        true => sqlx::query_as::<_, TenantRow>(
            "SELECT slug, home_gib, home_retention_days, cache_gib, cache_retention_days, cache_kept
             FROM tenant ORDER BY slug",
        )
        .fetch_all(db)
        .await?
        .into_iter()
        .map(|r| {
            let settings = HomeSettings {
                home_gib: r.home_gib,
                home_retention_days: r.home_retention_days,
                cache_gib: r.cache_gib,
                cache_retention_days: r.cache_retention_days,
                cache_kept: r.cache_kept,
            };
            (r.slug, settings)
        })
        .collect(),
    };
    let price_per_gib_month = match everyone {
        true => crate::backend::reports::storage::price(db).await?,
        false => 0.0,
    };
    Ok(HomesPage {
        tz: zone.name().to_string(),
        homes,
        tenants,
        site_retention_days: SITE_RETENTION_DAYS,
        price_per_gib_month,
    })
}

/// Asks for `user`'s kept volumes of `purpose` (none: home and model
/// cache) to go: their own, or anyone's for an admin (others: not found).
/// The worker deletes each once no session holds it.
pub async fn delete(db: &PgPool, principal: &Principal, user: Uuid, purpose: Option<Kept>) -> ServiceResult<()> {
    if user != principal.user_id && !principal.is_admin() {
        return Err(ServiceError::NotFound("home"));
    }
    let mut tx = db.begin().await?;
    let owner: Vec<String> = sqlx::query_scalar(
        "UPDATE home h SET delete_requested_at = coalesce(h.delete_requested_at, now())
         FROM app_user u WHERE u.id = h.user_id AND h.user_id = $1 AND h.gone_at IS NULL
           AND ($2::text IS NULL OR h.purpose = $2) RETURNING u.email",
    )
    .bind(user)
    .bind(purpose.map(Kept::as_str))
    .fetch_all(&mut *tx)
    .await?;
    let Some(email) = owner.first() else { return Err(ServiceError::NotFound("home")) };
    let subject = crate::backend::audit::Subject { target: email, ..Default::default() };
    let detail = match purpose {
        Some(Kept::Cache) => "deletion of the model cache asked",
        Some(Kept::Home) => "deletion of the home asked",
        None => "deletion of the home and model cache asked",
    };
    crate::backend::audit::record(&mut tx, principal, "home.delete", subject, detail).await?;
    tx.commit().await?;
    Ok(())
}

/// Sets a tenant's home and model cache sizes and retentions, and whether
/// its caches are kept (admins).
pub async fn set_tenant(
    db: &PgPool,
    principal: &Principal,
    slug: &str,
    settings: HomeSettings,
) -> ServiceResult<HomeSettings> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins set a tenant's homes"));
    }
    // A home's and a cache's size and retention are checked alike.
    for (field, gib) in [("home_gib", settings.home_gib), ("cache_gib", settings.cache_gib)] {
        if !(1..=65536).contains(&gib) {
            return Err(FieldError::new(field, "must be between 1 and 65536 GiB").into());
        }
    }
    let retentions = [
        ("home_retention_days", settings.home_retention_days),
        ("cache_retention_days", settings.cache_retention_days),
    ];
    for (field, days) in retentions {
        if days.is_some_and(|d| !(1..=3650).contains(&d)) {
            let reason = "must be between 1 and 3650 days, or empty for the site's default";
            return Err(FieldError::new(field, reason).into());
        }
    }
    let mut tx = db.begin().await?;
    let tenant: Option<Uuid> = sqlx::query_scalar(
        "UPDATE tenant SET home_gib = $2, home_retention_days = $3, cache_gib = $4, cache_retention_days = $5,
                cache_kept = $6
         WHERE slug = $1 RETURNING id",
    )
    .bind(slug)
    .bind(settings.home_gib)
    .bind(settings.home_retention_days)
    .bind(settings.cache_gib)
    .bind(settings.cache_retention_days)
    .bind(settings.cache_kept)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(tenant) = tenant else { return Err(ServiceError::NotFound("tenant")) };
    let cache = match settings.cache_kept {
        true => format!(
            "model caches {} GiB, kept {} days",
            settings.cache_gib,
            settings.cache_retention_days.unwrap_or(SITE_RETENTION_DAYS)
        ),
        false => format!("model caches {} GiB, per session", settings.cache_gib),
    };
    let detail = format!(
        "homes {} GiB, kept {} days; {cache}",
        settings.home_gib,
        settings.home_retention_days.unwrap_or(SITE_RETENTION_DAYS)
    );
    let subject = crate::backend::audit::Subject { target: slug, tenant: Some(tenant), pool: None };
    crate::backend::audit::record(&mut tx, principal, "tenant.homes", subject, &detail).await?;
    tx.commit().await?;
    Ok(settings)
}

/// Sets the site's price per GiB-month of home storage (admins).
pub async fn set_price(
    db: &PgPool,
    principal: &Principal,
    price: crate::model::HomePrice,
) -> ServiceResult<crate::model::HomePrice> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins set the price of home storage"));
    }
    if !price.per_gib_month.is_finite() || !(0.0..=1_000_000.0).contains(&price.per_gib_month) {
        return Err(FieldError::new("per_gib_month", "must be a price between 0 and 1 000 000").into());
    }
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO home_price (singleton, per_gib_month) VALUES (true, $1)
         ON CONFLICT (singleton) DO UPDATE SET per_gib_month = EXCLUDED.per_gib_month",
    )
    .bind(price.per_gib_month)
    .execute(&mut *tx)
    .await?;
    let subject = crate::backend::audit::Subject { target: "home storage", ..Default::default() };
    let detail = format!("{} per GiB-month", price.per_gib_month);
    crate::backend::audit::record(&mut tx, principal, "homes.price", subject, &detail).await?;
    tx.commit().await?;
    Ok(price)
}
