//! Waitlist entries: joining (the admission queue joins them, inside the
//! transaction that refused the request), listing and leaving. Promotion, which admits
//! entries again, is the parent module's.

use crate::backend::admission::request::Request;
use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Principal, WaitlistEntry, WaitlistLine, WaitlistState, Window};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use uuid::Uuid;

/// Entries as their requesters see them: an entry whose window has started
/// reads as expired even before the worker's sweep records it.
const VIEW: &str = "SELECT e.id, e.pool_id, p.name AS pool_name, e.kind, e.quantity, e.starts_at, e.ends_at,
        t.slug AS tenant, u.email AS user_email,
        CASE WHEN e.state = 'waiting' AND e.starts_at <= now() THEN 'expired' ELSE e.state END AS state,
        CASE WHEN e.state = 'waiting' AND e.starts_at > now() THEN
            (SELECT count(*) FROM waitlist_entry o WHERE o.pool_id = e.pool_id AND o.kind = e.kind
               AND o.state = 'waiting' AND o.starts_at > now() AND o.seq <= e.seq)
        END AS position,
        e.booking_id, e.reason, e.created_at
    FROM waitlist_entry e JOIN pool p ON p.id = e.pool_id JOIN tenant t ON t.id = e.tenant_id
         JOIN app_user u ON u.id = e.user_id";

#[derive(sqlx::FromRow)]
struct EntryRow {
    id: Uuid,
    pool_id: Uuid,
    pool_name: String,
    kind: String,
    quantity: i32,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    tenant: String,
    user_email: String,
    state: WaitlistState,
    position: Option<i64>,
    booking_id: Option<Uuid>,
    reason: String,
    created_at: DateTime<Utc>,
}

impl From<EntryRow> for WaitlistEntry {
    fn from(r: EntryRow) -> Self {
        WaitlistEntry {
            id: r.id,
            pool_id: r.pool_id,
            pool_name: r.pool_name,
            kind: r.kind,
            quantity: r.quantity,
            window: Window { start: r.starts_at, end: r.ends_at },
            tenant: r.tenant,
            user_email: r.user_email,
            state: r.state,
            position: r.position,
            booking_id: r.booking_id,
            reason: r.reason,
            created_at: r.created_at,
        }
    }
}

/// Puts refused requests on the list, inside the admission transaction that
/// refused them; returns the new entries by id.
pub async fn join(
    tx: &mut PgConnection,
    asking: &[(Uuid, &Request)],
) -> ServiceResult<HashMap<Uuid, ServiceResult<WaitlistEntry>>> {
    let (waiting, refused) = within_cap(tx, asking).await?;
    let mut joined: HashMap<Uuid, ServiceResult<WaitlistEntry>> =
        refused.into_iter().map(|id| (id, Err(list_full()))).collect();
    if waiting.is_empty() {
        return Ok(joined);
    }
    let ids: Vec<Uuid> = waiting.iter().map(|(id, _)| *id).collect();
    let column = |f: fn(&Request) -> String| waiting.iter().map(|(_, r)| f(r)).collect::<Vec<String>>();
    let users: Vec<Uuid> = waiting.iter().map(|(_, r)| r.principal.user_id).collect();
    let tenants: Vec<Uuid> = waiting.iter().map(|(_, r)| r.tenant.id).collect();
    let quantities: Vec<i32> = waiting.iter().map(|(_, r)| r.quantity).collect();
    let images: Vec<Option<String>> = waiting.iter().map(|(_, r)| r.image.clone()).collect();
    let starts: Vec<DateTime<Utc>> = waiting.iter().map(|(_, r)| r.window.start).collect();
    let ends: Vec<DateTime<Utc>> = waiting.iter().map(|(_, r)| r.window.end).collect();
    let tokens: Vec<Option<Uuid>> = waiting.iter().map(|(_, r)| r.provenance.token).collect();
    let (pool_id, kind) = (waiting[0].1.pool_id, waiting[0].1.kind.as_str());
    // The entries and their audit lines in one statement; unnest keeps the
    // arrival order, which `seq` records.
    sqlx::query(
        "WITH e AS (
             INSERT INTO waitlist_entry (id, pool_id, kind, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at)
             SELECT r.id, $1, $2, r.user_id, r.tenant_id, r.quantity, r.mode, r.image, r.note, r.starts_at, r.ends_at
             FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::int[], $7::text[], $8::text[], $9::text[],
                         $10::timestamptz[], $11::timestamptz[]) WITH ORDINALITY
                  AS r(id, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at, n)
             ORDER BY r.n
             RETURNING id, user_id, tenant_id, pool_id, kind, quantity, starts_at, ends_at
         )
         INSERT INTO audit_event (actor_id, action, target, tenant_id, pool_id, detail, token_id, client)
         SELECT e.user_id, 'waitlist.join', p.name, e.tenant_id, e.pool_id,
                e.kind || ' × ' || e.quantity || ', ' || e.starts_at || ' – ' || e.ends_at, v.token_id, v.client
         FROM e JOIN pool p ON p.id = e.pool_id
              JOIN unnest($3::uuid[], $12::uuid[], $13::text[]) AS v(id, token_id, client) ON v.id = e.id",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(&ids)
    .bind(&users)
    .bind(&tenants)
    .bind(&quantities)
    .bind(column(|r| r.mode.as_str().to_string()))
    .bind(&images)
    .bind(column(|r| r.note.clone()))
    .bind(&starts)
    .bind(&ends)
    .bind(&tokens)
    .bind(column(|r| r.provenance.client.clone()))
    .execute(&mut *tx)
    .await?;
    let rows: Vec<EntryRow> =
        sqlx::query_as(&format!("{VIEW} WHERE e.id = ANY($1)")).bind(&ids).fetch_all(&mut *tx).await?;
    joined.extend(rows.into_iter().map(|r| (r.id, Ok(r.into()))));
    Ok(joined)
}

/// Most entries one user may have waiting in one pool+kind. Every freed
/// unit reads the kind's whole list under its lock: a user must not be
/// able to make that slow for everyone.
pub const MAX_WAITING_PER_USER: i64 = 10;

fn list_full() -> ServiceError {
    ServiceError::Conflict {
        code: "waitlist_full",
        field: None,
        reason: format!("you already wait for {MAX_WAITING_PER_USER} windows of this kind; leave one first"),
    }
}

/// Splits the requests into those whose user stays within the cap (the
/// caller holds the kind's lock, so the count cannot change meanwhile) and
/// the ids of those over it.
async fn within_cap<'r>(
    tx: &mut PgConnection,
    asking: &[(Uuid, &'r Request)],
) -> ServiceResult<(Vec<(Uuid, &'r Request)>, Vec<Uuid>)> {
    let (pool_id, kind) = (asking[0].1.pool_id, asking[0].1.kind.as_str());
    let users: Vec<Uuid> = asking.iter().map(|(_, r)| r.principal.user_id).collect();
    let counts: Vec<(Uuid, i64)> = sqlx::query_as(
        "SELECT user_id, count(*) FROM waitlist_entry
         WHERE pool_id = $1 AND kind = $2 AND state = 'waiting' AND user_id = ANY($3) GROUP BY user_id",
    )
    .bind(pool_id)
    .bind(kind)
    .bind(&users)
    .fetch_all(&mut *tx)
    .await?;
    let mut counts: HashMap<Uuid, i64> = counts.into_iter().collect();
    let (mut within, mut over) = (Vec::new(), Vec::new());
    for &(id, request) in asking {
        let count = counts.entry(request.principal.user_id).or_default();
        if *count < MAX_WAITING_PER_USER {
            *count += 1;
            within.push((id, request));
        } else {
            over.push(id);
        }
    }
    Ok((within, over))
}

/// Entries whose window has not ended: the principal's own; an admin's, everyone's.
pub async fn list(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<WaitlistEntry>> {
    entries(db, (!principal.is_admin()).then_some(principal.user_id)).await
}

/// The principal's own entries whose window has not ended (admins too).
pub async fn mine(db: &PgPool, principal: &Principal) -> ServiceResult<Vec<WaitlistEntry>> {
    entries(db, Some(principal.user_id)).await
}

async fn entries(db: &PgPool, user: Option<Uuid>) -> ServiceResult<Vec<WaitlistEntry>> {
    let rows: Vec<EntryRow> = sqlx::query_as(&format!(
        "{VIEW} WHERE e.ends_at > now() AND ($1::uuid IS NULL OR e.user_id = $1) ORDER BY e.starts_at, e.seq LIMIT 500"
    ))
    .bind(user)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Leaves the list (the requester, or an admin for anyone).
pub async fn leave(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<WaitlistEntry> {
    let mut tx = db.begin().await?;
    let row: Option<(Uuid, Uuid, String, bool, Uuid, String)> = sqlx::query_as(
        "SELECT e.user_id, e.tenant_id, e.state, e.starts_at <= now(), e.pool_id, p.name
         FROM waitlist_entry e JOIN pool p ON p.id = e.pool_id WHERE e.id = $1 FOR UPDATE OF e",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    // Someone else's entry is as unknown as a missing one.
    let (owner, tenant, state, started, pool_id, pool) = row
        .filter(|r| r.0 == principal.user_id || principal.is_admin())
        .ok_or(ServiceError::NotFound("waitlist entry"))?;
    if state != "waiting" || started {
        let state = if started && state == "waiting" { "expired" } else { state.as_str() };
        return Err(ServiceError::Conflict {
            code: "not_waiting",
            field: None,
            reason: format!("this entry is no longer on the waitlist (it is {state})"),
        });
    }
    let reason = if owner == principal.user_id { "left the list" } else { "removed by an admin" };
    sqlx::query("UPDATE waitlist_entry SET state = 'left', reason = $2, resolved_at = clock_timestamp() WHERE id = $1")
        .bind(id)
        .bind(reason)
        .execute(&mut *tx)
        .await?;
    let subject = Subject { target: &pool, tenant: Some(tenant), pool: Some(pool_id) };
    audit::record(&mut tx, principal, "waitlist.leave", subject, reason).await?;
    let entry: EntryRow = sqlx::query_as(&format!("{VIEW} WHERE e.id = $1")).bind(id).fetch_one(&mut *tx).await?;
    tx.commit().await?;
    Ok(entry.into())
}

/// Every entry whose window has not ended, for the admins' waitlist page,
/// with its window in the viewer's zone.
pub async fn for_admins(db: &PgPool, principal: &Principal, tz: &str) -> ServiceResult<Vec<WaitlistLine>> {
    principal.require_admin("only admins see everyone's waitlist")?;
    Ok(entries(db, None)
        .await?
        .into_iter()
        .map(|entry| WaitlistLine { when: crate::rules::local_time::local_window(entry.window, tz), entry })
        .collect())
}
