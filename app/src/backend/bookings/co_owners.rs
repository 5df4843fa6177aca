//! Shared bookings: the owner (or an admin) adds co-owners from the
//! booking's tenant and removes them; a co-owner may also leave. Co-owners
//! see the booking in full and open its workspace; only the owner changes
//! it (`Need::OwnerOrAdmin`); the worker binds them to the session's role.
//! Every change is audited, and reaches the booking's waiting extension
//! request too, so that whoever shares the booking sees the request.

use crate::backend::audit::{self, Subject};
use crate::backend::bookings::query::fetch_row;
use crate::backend::bookings::row::{BookingRow, Need};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, Principal};
use crate::rules::FieldError;
use sqlx::PgPool;
use uuid::Uuid;

/// Most co-owners one booking has: a team, not an audience.
pub const MAX_CO_OWNERS: usize = 20;

/// A session already working in its owner's kept home or model cache is
/// not shared: a co-owner could write there what the owner's later
/// sessions run. Shared before it starts, a session works in a folder of
/// its own (the worker's `homes::choose`).
async fn works_in_no_kept_volume(conn: &mut sqlx::PgConnection, booking: Uuid) -> ServiceResult<()> {
    // The booking's own decision, or its session's (a booking that took a
    // session over works in the volumes its first booking was given).
    let kept: bool = sqlx::query_scalar(
        "WITH session AS (
             SELECT coalesce((SELECT session_id FROM session_continuation WHERE booking_id = $1), $1) AS id
         )
         SELECT EXISTS (
             SELECT 1 FROM session_home h, session s
             WHERE h.kept AND h.team_class IS NULL
               AND (h.booking_id IN ($1, s.id)
                    OR h.booking_id IN (SELECT c.booking_id FROM session_continuation c WHERE c.session_id = s.id)))",
    )
    .bind(booking)
    .fetch_one(conn)
    .await?;
    match kept {
        false => Ok(()),
        true => Err(ServiceError::Conflict {
            code: "home_in_use",
            field: None,
            reason: "this session works in the owner's kept home and model cache, which only the owner may write: \
                     share a booking before its session starts (a shared session works in a folder of its own)"
                .into(),
        }),
    }
}

/// Only a booking that still holds its window can be shared; an extension
/// request is shared through the booking it extends.
fn check_shareable(row: &BookingRow) -> ServiceResult<()> {
    let state = row.state();
    if row.extends_id.is_some() {
        return Err(ServiceError::Conflict {
            code: "not_shareable",
            field: None,
            reason: "this is an extension request: share the booking it extends".into(),
        });
    }
    if !state.holds_capacity() {
        return Err(ServiceError::Conflict {
            code: "not_shareable",
            field: None,
            reason: format!("a {} booking can no longer be shared", state.as_str()),
        });
    }
    Ok(())
}

fn subject<'a>(row: &BookingRow, target: &'a str) -> Subject<'a> {
    Subject { target, tenant: Some(row.tenant_id), pool: Some(row.pool_id) }
}

/// Shares booking `id` with the member of its tenant whose address is
/// `email`; returns the booking as the caller sees it. Adding someone who
/// already shares it changes nothing.
pub async fn add(db: &PgPool, principal: &Principal, id: Uuid, email: &str) -> ServiceResult<Booking> {
    let email = email.trim();
    if email.is_empty() {
        return Err(FieldError::new("email", "must not be empty").into());
    }
    if email.chars().count() > 320 {
        return Err(FieldError::new("email", "must be at most 320 characters").into());
    }
    let mut tx = db.begin().await?;
    let row = fetch_row(&mut *tx, id, true).await?.ok_or(ServiceError::NotFound("booking"))?;
    row.authorize(principal, Need::OwnerOrAdmin)?;
    check_shareable(&row)?;
    works_in_no_kept_volume(&mut tx, row.id).await?;
    // Case-insensitive, the exact spelling first; the same answer whether
    // the address is unknown or belongs to another tenant's member.
    let user: Option<Uuid> = sqlx::query_scalar(
        "SELECT u.id FROM app_user u JOIN membership m ON m.user_id = u.id AND m.tenant_id = $2
         WHERE lower(u.email) = lower($1) AND u.disabled_at IS NULL
         ORDER BY u.email = $1 DESC LIMIT 1",
    )
    .bind(email)
    .bind(row.tenant_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(user) = user else {
        let reason = format!("names no active member of tenant {}", row.tenant_slug);
        return Err(FieldError::new("email", reason).into());
    };
    if user == row.user_id {
        return Err(FieldError::new("email", "is the booking owner's own").into());
    }
    if row.is_co_owner(user) {
        return Ok(row.view_for(principal));
    }
    if row.co_owners.0.len() >= MAX_CO_OWNERS {
        return Err(ServiceError::Conflict {
            code: "co_owner_limit",
            field: Some("email".into()),
            reason: format!("a booking has at most {MAX_CO_OWNERS} co-owners; remove one first"),
        });
    }
    sqlx::query(
        "INSERT INTO booking_co_owner (booking_id, user_id, added_by)
         SELECT b.id, $2, $3 FROM booking b WHERE b.id = $1 OR (b.extends_id = $1 AND b.state = 'pending')
         ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(user)
    .bind(principal.user_id)
    .execute(&mut *tx)
    .await?;
    let target = id.to_string();
    audit::record(&mut tx, principal, "booking.co_owner_add", subject(&row, &target), email).await?;
    let shared = fetch_row(&mut *tx, id, false).await?.ok_or(ServiceError::Internal("shared booking vanished"))?;
    tx.commit().await?;
    Ok(shared.view_for(principal))
}

/// Stops sharing booking `id` with `email`: the owner and admins remove
/// anyone, a co-owner only themselves.
pub async fn remove(db: &PgPool, principal: &Principal, id: Uuid, email: &str) -> ServiceResult<()> {
    let mut tx = db.begin().await?;
    let row = fetch_row(&mut *tx, id, true).await?.ok_or(ServiceError::NotFound("booking"))?;
    if !row.visible_to(principal) {
        return Err(ServiceError::NotFound("booking"));
    }
    let email = email.trim();
    let Some(co_owner) = row.co_owners.0.iter().find(|c| c.email.eq_ignore_ascii_case(email)) else {
        return Err(ServiceError::NotFound("co-owner"));
    };
    let leaving = co_owner.user_id == principal.user_id;
    if !leaving {
        row.authorize(principal, Need::OwnerOrAdmin)?;
    }
    sqlx::query(
        "DELETE FROM booking_co_owner
         WHERE user_id = $2 AND booking_id IN (SELECT b.id FROM booking b WHERE b.id = $1 OR b.extends_id = $1)",
    )
    .bind(id)
    .bind(co_owner.user_id)
    .execute(&mut *tx)
    .await?;
    let (target, detail) = (id.to_string(), co_owner.email.clone());
    audit::record(&mut tx, principal, "booking.co_owner_remove", subject(&row, &target), &detail).await?;
    tx.commit().await?;
    Ok(())
}
