//! Homes that outlive the window (issue 46): the worker's records of each
//! person's home volume per storage class, which volume each session was
//! given, and when a home is due to go. A home is kept `retention` days after
//! its owner's last session ended (the most generous of their tenants'
//! settings, else `SITE_RETENTION_DAYS`); an approved booking still ahead
//! keeps it until that booking's end.

use crate::backend::error::ServiceResult;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

pub use crate::model::SITE_RETENTION_DAYS;

/// The end of the retention of `owner`'s home (an SQL expression of the
/// owner's id; `site_days` the parameter holding `SITE_RETENTION_DAYS`): the
/// end of their last session (approved ones ahead included), else now,
/// plus the retention.
pub fn kept_until_sql(owner: &str, site_days: &str) -> String {
    format!(
        "coalesce((SELECT max(b.ends_at) FROM booking b
                   WHERE b.user_id = {owner} AND b.state IN ('approved', 'active', 'completed')), now())
         + make_interval(days => coalesce(
             (SELECT max(t.home_retention_days) FROM membership m JOIN tenant t ON t.id = m.tenant_id
               WHERE m.user_id = {owner}), {site_days}))"
    )
}

/// Until when `user`'s home is kept, as things stand now.
pub async fn kept_until(db: &PgPool, user: Uuid) -> ServiceResult<DateTime<Utc>> {
    let query = format!("SELECT {}", kept_until_sql("$2", "$1"));
    Ok(sqlx::query_scalar(&query).bind(SITE_RETENTION_DAYS).bind(user).fetch_one(db).await?)
}

/// The recorded homes of storage class `class`, by owner.
pub async fn volumes(db: &PgPool, class: &str) -> ServiceResult<HashMap<Uuid, String>> {
    let rows: Vec<(Uuid, String)> =
        sqlx::query_as("SELECT user_id, volume FROM home WHERE storage_class = $1 AND gone_at IS NULL")
            .bind(class)
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().collect())
}

/// `user`'s home of `class` and its size, unless someone asked for it to go.
pub async fn of(db: &PgPool, user: Uuid, class: &str) -> ServiceResult<Option<(String, i32)>> {
    Ok(sqlx::query_as(
        "SELECT volume, size_gib FROM home
         WHERE user_id = $1 AND storage_class = $2 AND delete_requested_at IS NULL AND gone_at IS NULL",
    )
    .bind(user)
    .bind(class)
    .fetch_optional(db)
    .await?)
}

/// The volume (`None`: a new one) and size decided for each of `ids` that
/// has been decided.
pub async fn decided(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, (Option<String>, i32)>> {
    let rows: Vec<(Uuid, Option<String>, i32)> =
        sqlx::query_as("SELECT booking_id, volume, size_gib FROM session_home WHERE booking_id = ANY($1)")
            .bind(ids)
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().map(|(id, volume, gib)| (id, (volume, gib))).collect())
}

/// Records which volume `booking`'s home claim is bound to (once: a
/// claim's volume never changes); returns what is recorded.
pub async fn decide(
    db: &PgPool,
    booking: Uuid,
    volume: Option<&str>,
    gib: i32,
) -> ServiceResult<(Option<String>, i32)> {
    sqlx::query(
        "INSERT INTO session_home (booking_id, volume, size_gib) VALUES ($1, $2, $3)
         ON CONFLICT (booking_id) DO NOTHING",
    )
    .bind(booking)
    .bind(volume)
    .bind(gib)
    .execute(db)
    .await?;
    let decided = decided(db, &[booking]).await?;
    Ok(decided.get(&booking).cloned().unwrap_or((volume.map(String::from), gib)))
}

/// Records `volume` as `user`'s home of `class`; false when they already have one.
pub async fn record(db: &PgPool, user: Uuid, class: &str, volume: &str, size_gib: i32) -> ServiceResult<bool> {
    let inserted = sqlx::query(
        "INSERT INTO home (user_id, storage_class, volume, size_gib) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING",
    )
    .bind(user)
    .bind(class)
    .bind(volume)
    .bind(size_gib)
    .execute(db)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Homes of `class` that are to go: past their retention, or asked to go.
pub async fn due_to_go(db: &PgPool, class: &str) -> ServiceResult<Vec<String>> {
    let rows: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT h.volume FROM home h
         WHERE h.storage_class = $2 AND h.gone_at IS NULL
           AND (h.delete_requested_at IS NOT NULL OR {} < now())",
        kept_until_sql("h.user_id", "$1")
    ))
    .bind(SITE_RETENTION_DAYS)
    .bind(class)
    .fetch_all(db)
    .await?;
    Ok(rows)
}

/// Records that the home on `volume` went (the worker let the cluster
/// delete it, or found it gone); it stays as history for the reports.
pub async fn forget(db: &PgPool, volume: &str) -> ServiceResult<()> {
    sqlx::query("UPDATE home SET gone_at = now() WHERE volume = $1 AND gone_at IS NULL")
        .bind(volume)
        .execute(db)
        .await?;
    Ok(())
}

/// Until when the home of each of `bookings`' owners is kept, as things stand.
pub async fn kept_until_for(db: &PgPool, bookings: &[Uuid]) -> ServiceResult<HashMap<Uuid, DateTime<Utc>>> {
    let query = format!("SELECT b.id, {} FROM booking b WHERE b.id = ANY($2)", kept_until_sql("b.user_id", "$1"));
    let rows: Vec<(Uuid, DateTime<Utc>)> =
        sqlx::query_as(&query).bind(SITE_RETENTION_DAYS).bind(bookings).fetch_all(db).await?;
    Ok(rows.into_iter().collect())
}

/// Whose home a session of `booking` mounts, and until when it is kept:
/// "Your home (/home/jovyan) is kept until Sat 26 Dec" (no full stop).
pub fn home_note(booking: &crate::model::Booking, kept_until: DateTime<Utc>, zone: &chrono_tz::Tz) -> String {
    let whose = match (booking.mine, &booking.user_name) {
        (false, Some(owner)) => format!("{owner}'s home"),
        _ => "Your home".to_string(),
    };
    format!("{whose} (/home/jovyan) is kept until {}", kept_until.with_timezone(zone).format("%a %-d %b"))
}

/// What outlives `booking`'s session, as its card, page and mails say it:
/// the owner's home until `kept_until`; everything else ends with the
/// session at `ends` (the booking's end, or that of the booking it
/// continues into).
pub fn persistence_sentence(
    booking: &crate::model::Booking,
    kept_until: DateTime<Utc>,
    ends: DateTime<Utc>,
    zone: &chrono_tz::Tz,
) -> String {
    let at = ends.with_timezone(zone);
    let when = match at.date_naive() == booking.end.with_timezone(zone).date_naive() {
        true => at.format("%H:%M").to_string(),
        false => at.format("%H:%M on %a %-d %b").to_string(),
    };
    format!(
        "{}; everything else in this session, the model cache included, ends at {when}.",
        home_note(booking, kept_until, zone)
    )
}
