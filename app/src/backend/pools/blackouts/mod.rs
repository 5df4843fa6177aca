//! Maintenance windows. A blackout closes its pool (or one kind) to new
//! bookings and extensions over its window: admission refuses what overlaps
//! it, the calendar shows it hatched with its reason, availability reads it
//! as no free units. Bookings it overlaps when created are listed; the admin
//! keeps them or cancels them (running ones end now) with its reason, in the
//! same transaction, under the kinds' locks.

pub mod windows;

use crate::backend::admission::locks::lock_kind;
use crate::backend::audit::{self, Subject};
use crate::backend::bookings::change::{close, settle};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Blackout, BlackoutCreated, BookingFilter, NewBlackout, OnOverlap, Principal, Window};
use crate::rules::window::check_in_range;
use crate::rules::FieldError;
use sqlx::PgPool;
use uuid::Uuid;
use windows::COLUMNS;

/// The blackouts of a pool that have not ended (for anyone who sees the pool).
pub async fn list(db: &PgPool, principal: &Principal, pool_id: Uuid) -> ServiceResult<Vec<Blackout>> {
    crate::backend::pools::get(db, principal, pool_id).await?;
    Ok(sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM blackout WHERE pool_id = $1 AND ends_at > now() ORDER BY starts_at LIMIT 500"
    ))
    .bind(pool_id)
    .fetch_all(db)
    .await?)
}

fn validate(new: &NewBlackout, kinds: &[String], now: chrono::DateTime<chrono::Utc>) -> ServiceResult<()> {
    check_in_range("start", new.start)?;
    check_in_range("end", new.end)?;
    if new.end <= new.start {
        return Err(FieldError::new("end", "must be after start").into());
    }
    if new.end <= now {
        return Err(FieldError::new("end", "has passed: a maintenance window must end in the future").into());
    }
    let reason = new.reason.trim();
    if reason.is_empty() || reason.chars().count() > 500 {
        return Err(FieldError::new("reason", "must say why, in 1 to 500 characters").into());
    }
    if let Some(kind) = &new.kind {
        if !kinds.contains(kind) {
            return Err(FieldError::new("kind", format!("this pool has no kind {kind}")).into());
        }
    }
    Ok(())
}

pub async fn create(
    db: &PgPool,
    principal: &Principal,
    pool_id: Uuid,
    new: NewBlackout,
) -> ServiceResult<BlackoutCreated> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins schedule maintenance"));
    }
    let pool = crate::backend::pools::get(db, principal, pool_id).await?;
    let mut kinds: Vec<String> = pool.kinds.iter().map(|k| k.kind.clone()).collect();
    validate(&new, &kinds, crate::backend::db_now(db).await?)?;
    if let Some(kind) = &new.kind {
        kinds = vec![kind.clone()];
    }
    kinds.sort();
    let mut tx = db.begin().await?;
    // The same lock order as every capacity decision, so none slips in between.
    for kind in &kinds {
        lock_kind(&mut tx, pool_id, kind).await?;
    }
    let window = Window { start: new.start, end: new.end };
    let filter = BookingFilter { pool_id: Some(pool_id), from: Some(window.start), to: Some(window.end), mine: false };
    let overlapping: Vec<_> = crate::backend::bookings::list(db, principal, &filter)
        .await?
        .into_iter()
        .filter(|b| b.state.holds_capacity() && kinds.contains(&b.kind))
        .collect();
    let choice = match (new.overlapping, overlapping.is_empty()) {
        (Some(choice), _) => choice,
        (None, true) => OnOverlap::Keep,
        (None, false) => {
            let listed: Vec<String> = overlapping
                .iter()
                .map(|b| {
                    // In the pool's zone, as its maintenance form is.
                    let zone = &pool.time_zone;
                    let when = crate::rules::local_time::local_window(Window { start: b.start, end: b.end }, zone);
                    let who = b.user_email.clone().unwrap_or_default();
                    format!("{who}'s {} × {}, {when} {zone}", crate::model::short_kind(&b.kind), b.quantity)
                })
                .collect();
            return Err(ServiceError::Conflict {
                code: "blackout_overlaps",
                field: Some("overlapping".into()),
                reason: format!(
                    "{} bookings overlap this window: {}. Say whether to keep or cancel them",
                    overlapping.len(),
                    listed.join("; ")
                ),
            });
        }
    };
    let reason = new.reason.trim();
    let id: Uuid = sqlx::query_scalar(
        "INSERT INTO blackout (pool_id, kind, starts_at, ends_at, reason, created_by)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(pool_id)
    .bind(&new.kind)
    .bind(new.start)
    .bind(new.end)
    .bind(reason)
    .bind(principal.user_id)
    .fetch_one(&mut *tx)
    .await?;
    let mut changes = Vec::new();
    if choice == OnOverlap::Keep && !overlapping.is_empty() {
        // Their owners hear of it (`booking.maintenance`); the detail holds
        // the window for the mail to write in each reader's zone.
        let ids: Vec<Uuid> = overlapping.iter().map(|b| b.id).collect();
        sqlx::query(
            "INSERT INTO notification (event, booking_id, dedupe, detail)
             SELECT 'booking.maintenance', b, 'maintenance:' || $1::text || ':' || b::text, $3 FROM unnest($2::uuid[]) b
             ON CONFLICT (dedupe) DO NOTHING",
        )
        .bind(id)
        .bind(&ids)
        .bind(format!("{}|{}|{reason}", new.start.to_rfc3339(), new.end.to_rfc3339()))
        .execute(&mut *tx)
        .await?;
    }
    if choice == OnOverlap::Cancel {
        let why = format!("maintenance: {reason}");
        for booking in &overlapping {
            changes.extend(close(&mut tx, booking.id, Some(principal.user_id), &why).await?);
        }
    }
    let what = format!(
        "{} from {} to {}: {reason}; {} overlapping bookings {}",
        new.kind.as_deref().unwrap_or("every kind"),
        new.start.to_rfc3339(),
        new.end.to_rfc3339(),
        overlapping.len(),
        if choice == OnOverlap::Cancel { "canceled" } else { "kept" }
    );
    let subject = Subject { target: &pool.name, tenant: None, pool: Some(pool_id) };
    audit::record(&mut tx, principal, "blackout.create", subject, &what).await?;
    tx.commit().await?;
    settle(db, changes).await;
    let blackout = Blackout { id, pool_id, kind: new.kind, start: new.start, end: new.end, reason: reason.into() };
    Ok(BlackoutCreated { blackout, overlapping, canceled: choice == OnOverlap::Cancel })
}

pub async fn delete(db: &PgPool, principal: &Principal, id: Uuid) -> ServiceResult<()> {
    if !principal.is_admin() {
        return Err(ServiceError::Forbidden("only admins schedule maintenance"));
    }
    let mut tx = db.begin().await?;
    let gone: Option<(Uuid, String, String)> = sqlx::query_as(
        "DELETE FROM blackout b USING pool p WHERE b.id = $1 AND p.id = b.pool_id RETURNING b.pool_id, p.name, b.reason",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let (pool_id, pool, reason) = gone.ok_or(ServiceError::NotFound("blackout"))?;
    let subject = Subject { target: &pool, tenant: None, pool: Some(pool_id) };
    audit::record(&mut tx, principal, "blackout.delete", subject, &reason).await?;
    tx.commit().await?;
    crate::backend::waitlist::after_freeing(db, crate::backend::waitlist::Freed::Pool(pool_id)).await;
    Ok(())
}

/// The admin page's form: `start`/`end` as `2026-11-23T08:00` in the
/// pool's zone `tz`, `kind` empty for every kind, `overlapping` empty (ask),
/// `keep` or `cancel`.
pub fn from_form(
    (kind, start, end): (&str, &str, &str),
    reason: String,
    overlapping: &str,
    tz: &str,
) -> Result<crate::model::NewBlackout, crate::rules::FieldError> {
    use crate::model::OnOverlap;
    use crate::rules::local_time::parse_local;
    Ok(crate::model::NewBlackout {
        kind: Some(kind.trim().to_string()).filter(|k| !k.is_empty()),
        start: parse_local("start", start, tz)?,
        end: parse_local("end", end, tz)?,
        reason,
        overlapping: match overlapping {
            "keep" => Some(OnOverlap::Keep),
            "cancel" => Some(OnOverlap::Cancel),
            _ => None,
        },
    })
}
