//! The admin page's pool form, saved: a new pool when it has no id, else an
//! update; a capacity below what is booked is refused naming the bookings
//! in the way by user and window, so the admin knows whom to talk to.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::backend::pools::{create, update};
use crate::model::{Pool, PoolForm, Principal, Window};
use sqlx::PgPool;
use uuid::Uuid;

/// Creates (empty `id`) or updates the pool the form describes.
pub async fn save(db: &PgPool, principal: &Principal, id: &str, form: &PoolForm) -> ServiceResult<Pool> {
    match id.trim() {
        "" => create(db, principal, form.to_new()?).await,
        raw => {
            let id = raw.parse::<Uuid>().map_err(|_| ServiceError::NotFound("pool"))?;
            update(db, principal, id, form.to_patch()?).await
        }
    }
}

/// A capacity refusal with its bookings named ("ada@example.test Mon 23
/// Nov 10:00–12:00 Europe/Berlin (1 × …)", in the pool's zone, at most 20);
/// any other error unchanged.
pub async fn name_the_bookings(db: &PgPool, principal: &Principal, err: ServiceError) -> ServiceError {
    let ServiceError::CapacityBelowBooked { kind, capacity, booked, bookings } = err else { return err };
    let mut named = Vec::new();
    let mut zone: Option<String> = None;
    for id in bookings.iter().take(20) {
        if let Ok(b) = crate::backend::bookings::get(db, principal, *id).await {
            if zone.is_none() {
                zone = crate::backend::pools::get(db, principal, b.pool_id).await.ok().map(|p| p.time_zone);
            }
            let tz = zone.as_deref().unwrap_or("UTC");
            let window = crate::rules::local_time::local_window(Window { start: b.start, end: b.end }, tz);
            named.push(format!("{} {window} {tz} ({} × {})", b.user_email.unwrap_or_default(), b.quantity, b.id));
        }
    }
    ServiceError::Conflict {
        code: "capacity_below_booked",
        field: Some("kinds".into()),
        reason: format!(
            "kind {kind}: {booked} units are booked at once, more than the new capacity of {capacity}. In the way: {}",
            named.join("; ")
        ),
    }
}
