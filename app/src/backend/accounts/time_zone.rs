//! The zone a person reads times in (Settings): mails, the calendar feed
//! and the CLI write times in it, with the zone named. Until chosen it is
//! the zone the person's browser reported first.

use crate::backend::error::ServiceResult;
use crate::model::{FieldError, Principal};
use sqlx::PgPool;

/// An IANA zone name as chrono-tz knows it, or a refusal naming `field`.
pub fn checked(field: &str, zone: &str) -> Result<String, FieldError> {
    let zone = zone.trim();
    match zone.parse::<chrono_tz::Tz>() {
        Ok(tz) => Ok(tz.name().to_string()),
        Err(_) => Err(FieldError::new(field, format!("`{zone}` is not an IANA time zone (e.g. Europe/Berlin)"))),
    }
}

/// The principal's zone, `None` when never chosen nor learnt.
pub async fn of(db: &PgPool, principal: &Principal) -> ServiceResult<Option<String>> {
    Ok(sqlx::query_scalar("SELECT time_zone FROM app_user WHERE id = $1")
        .bind(principal.user_id)
        .fetch_optional(db)
        .await?
        .flatten())
}

/// The principal's zone when they chose it in Settings (pages then use it
/// whatever the browser's); `None` when never chosen, only learnt.
pub async fn chosen(db: &PgPool, principal: &Principal) -> ServiceResult<Option<String>> {
    Ok(sqlx::query_scalar("SELECT time_zone FROM app_user WHERE id = $1 AND time_zone_chosen")
        .bind(principal.user_id)
        .fetch_optional(db)
        .await?
        .flatten())
}

/// Chooses the principal's zone.
pub async fn choose(db: &PgPool, principal: &Principal, zone: &str) -> ServiceResult<String> {
    let zone = checked("time_zone", zone)?;
    sqlx::query("UPDATE app_user SET time_zone = $2, time_zone_chosen = true WHERE id = $1")
        .bind(principal.user_id)
        .bind(&zone)
        .execute(db)
        .await?;
    Ok(zone)
}

/// Keeps the zone a browser reported, unless one is set already: a
/// person who never opens Settings still gets mails in their own zone.
pub async fn learn(db: &PgPool, principal: &Principal, reported: &str) -> ServiceResult<()> {
    let Ok(zone) = checked("time_zone", reported) else { return Ok(()) };
    sqlx::query("UPDATE app_user SET time_zone = $2 WHERE id = $1 AND time_zone IS NULL")
        .bind(principal.user_id)
        .bind(zone)
        .execute(db)
        .await?;
    Ok(())
}
