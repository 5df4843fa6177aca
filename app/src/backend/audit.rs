//! The audit trail of admin actions (booking changes keep theirs in
//! `booking_event`), and reading both as one log.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::provenance::Provenance;
use crate::model::{AuditBooking, AuditEntry, AuditFilter, AuditPage, Principal};
use crate::rules::window::check_in_range;
use crate::rules::FieldError;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// What an admin action touched, for the log's filters.
#[derive(Default)]
pub struct Subject<'a> {
    pub target: &'a str,
    pub tenant: Option<Uuid>,
    pub pool: Option<Uuid>,
}

/// Records an admin action in the caller's transaction, so it is written
/// exactly when the change is, with the token and client the request came
/// through.
pub async fn record(
    conn: &mut PgConnection,
    actor: &Principal,
    action: &str,
    subject: Subject<'_>,
    detail: &str,
) -> ServiceResult<()> {
    let via = Provenance::current();
    sqlx::query(
        "INSERT INTO audit_event (actor_id, action, target, tenant_id, pool_id, detail, token_id, client)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(actor.user_id)
    .bind(action)
    .bind(subject.target)
    .bind(subject.tenant)
    .bind(subject.pool)
    .bind(detail)
    .bind(via.token)
    .bind(&via.client)
    .execute(conn)
    .await?;
    Ok(())
}

/// Rows per page of the log.
pub const PAGE_SIZE: i64 = 50;
/// Most rows one CSV export holds.
pub const EXPORT_LIMIT: i64 = 100_000;

/// Both logs as one: booking events become `booking.create`, `booking.change`
/// (same state, e.g. extended) or `booking.<new state>`.
const LOG: &str = "
    SELECT e.at, e.actor_id,
           CASE WHEN e.from_state IS NULL THEN 'booking.create'
                WHEN e.from_state = e.to_state THEN 'booking.change'
                ELSE 'booking.' || e.to_state END AS action,
           b.id::text AS target, b.tenant_id, b.pool_id, e.reason AS detail, e.token_id, e.client
    FROM booking_event e JOIN booking b ON b.id = e.booking_id
    UNION ALL
    SELECT a.at, a.actor_id, a.action, a.target, a.tenant_id, a.pool_id, a.detail, a.token_id, a.client
    FROM audit_event a";

/// The portal page of what an entry names, if it still exists: a booking's
/// own page, a pool's admin page (its blackouts and idle policy are on it),
/// its cost model, or the tenants, users or waitlist page.
const LINK: &str = "CASE
        WHEN ob.id IS NOT NULL THEN '/bookings/' || ob.id
        WHEN l.action LIKE 'tokenomics.%' AND p.id IS NOT NULL THEN '/reports/tokenomics?pool=' || p.id
        WHEN (l.action LIKE 'pool.%' OR l.action LIKE 'blackout.%') AND p.id IS NOT NULL THEN '/admin/pools/' || p.id
        WHEN l.action LIKE 'tenant.%' OR l.action LIKE 'quota.%' THEN '/admin/tenants'
        WHEN l.action LIKE 'user.%' THEN '/admin/users'
        WHEN l.action LIKE 'cluster.%' THEN '/admin/clusters'
        WHEN l.action LIKE 'waitlist.%' THEN '/admin/waitlist'
    END";

/// The booking an entry names, if it still exists. The uuid cast is inside
/// a CASE, so a target that is no uuid is never cast.
const NAMED_BOOKING: &str = "LEFT JOIN booking ob ON l.action LIKE 'booking.%' AND ob.id = CASE
        WHEN l.target ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN l.target::uuid END
    LEFT JOIN app_user ou ON ou.id = ob.user_id";

#[derive(sqlx::FromRow)]
struct Row {
    at: chrono::DateTime<chrono::Utc>,
    actor: Option<String>,
    action: String,
    target: String,
    tenant: Option<String>,
    pool: Option<String>,
    detail: String,
    link: Option<String>,
    owner: Option<String>,
    starts_at: Option<chrono::DateTime<chrono::Utc>>,
    ends_at: Option<chrono::DateTime<chrono::Utc>>,
    extension: Option<bool>,
    token: Option<String>,
    client: String,
}

impl From<Row> for AuditEntry {
    fn from(r: Row) -> Self {
        let booking = match (r.owner, r.starts_at, r.ends_at) {
            (Some(owner), Some(start), Some(end)) => {
                Some(AuditBooking { owner, start, end, extension: r.extension.unwrap_or(false) })
            }
            _ => None,
        };
        AuditEntry {
            at: r.at,
            actor: r.actor,
            action: r.action,
            target: r.target,
            tenant: r.tenant,
            pool: r.pool,
            detail: r.detail,
            link: r.link,
            booking,
            token: r.token,
            client: Some(r.client).filter(|c| !c.is_empty()),
        }
    }
}

/// The filtered log, newest first; `limit` rows from `offset`.
async fn query(db: &PgPool, filter: &AuditFilter, limit: i64, offset: i64) -> ServiceResult<Vec<AuditEntry>> {
    let sql = format!(
        "SELECT l.at, u.email AS actor, l.action, l.target, t.slug AS tenant, p.name AS pool, l.detail, {LINK} AS link,
                ou.name AS owner, ob.starts_at, ob.ends_at, ob.extends_id IS NOT NULL AS extension,
                CASE WHEN l.token_id IS NOT NULL THEN coalesce(tk.name, '') END AS token, l.client
         FROM ({LOG}) l
         {NAMED_BOOKING}
         LEFT JOIN api_token tk ON tk.id = l.token_id
         LEFT JOIN app_user u ON u.id = l.actor_id
         LEFT JOIN tenant t ON t.id = l.tenant_id
         LEFT JOIN pool p ON p.id = l.pool_id
         WHERE ($1::text IS NULL OR u.email = $1)
           AND ($2::text IS NULL OR t.slug = $2)
           AND ($3::text IS NULL OR p.name = $3)
           AND ($4::text IS NULL OR l.action = $4 OR l.action LIKE $4 || '.%')
           AND ($5::timestamptz IS NULL OR l.at >= $5)
           AND ($6::timestamptz IS NULL OR l.at < $6)
         ORDER BY l.at DESC, l.action, l.target
         LIMIT $7 OFFSET $8"
    );
    let rows: Vec<Row> = sqlx::query_as(&sql)
        .bind(nonempty(&filter.user))
        .bind(nonempty(&filter.tenant))
        .bind(nonempty(&filter.pool))
        .bind(nonempty(&filter.action))
        .bind(filter.from)
        .bind(filter.to)
        .bind(limit)
        .bind(offset)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(AuditEntry::from).collect())
}

fn nonempty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn authorize(principal: &Principal, filter: &AuditFilter) -> ServiceResult<()> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins read the audit log"));
    }
    if let Some(from) = filter.from {
        check_in_range("from", from)?;
    }
    if let Some(to) = filter.to {
        check_in_range("to", to)?;
    }
    if filter.page == Some(0) || filter.page.is_some_and(|p| p > 100_000) {
        return Err(FieldError::new("page", "must be between 1 and 100000").into());
    }
    Ok(())
}

/// One page of the filtered log (admins only).
pub async fn page(db: &PgPool, principal: &Principal, filter: &AuditFilter) -> ServiceResult<AuditPage> {
    authorize(principal, filter)?;
    let page = filter.page.unwrap_or(1);
    // One row more than a page says whether there is a next one.
    let mut entries = query(db, filter, PAGE_SIZE + 1, (i64::from(page) - 1) * PAGE_SIZE).await?;
    let more = entries.len() as i64 > PAGE_SIZE;
    entries.truncate(PAGE_SIZE as usize);
    Ok(AuditPage { entries, page, more })
}

/// The whole filtered log (up to `EXPORT_LIMIT` rows), for CSV.
pub async fn export(db: &PgPool, principal: &Principal, filter: &AuditFilter) -> ServiceResult<Vec<AuditEntry>> {
    authorize(principal, filter)?;
    query(db, filter, EXPORT_LIMIT, 0).await
}
