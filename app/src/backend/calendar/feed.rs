//! Calendar feeds (RFC 5545 ICS): each user's secret URL lists their
//! bookings from 30 days back on; an admin's also opens each pool's
//! occupancy. The token is an HMAC of the user and a generation under the
//! server's calendar key, so Settings can show the URL again while the
//! database keeps only its SHA-256; regenerating bumps the generation and
//! the old URL matches nothing.

use crate::backend::audit::{self, Subject};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{short_kind, CalendarFeed, PoolFeed, Principal};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use icalendar::{Calendar, CalendarDateTime, Component, EventLike, EventStatus, Property};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::sync::Arc;
use uuid::Uuid;

const PREFIX: &str = "bcal_";
/// How far back a feed reaches; forward, every booking (admission keeps them within the horizon).
const DAYS_BACK: i32 = 30;

/// The server's calendar key and the public URL feeds are served under.
#[derive(Clone)]
pub struct FeedKey {
    key: Arc<[u8]>,
    base: String,
}

impl FeedKey {
    pub fn new(key: &[u8], public_url: &str) -> Self {
        Self { key: key.into(), base: public_url.trim_end_matches('/').to_string() }
    }

    /// A key for this process only: URLs keep working after a restart (the
    /// hash is stored), but Settings can no longer show them.
    pub fn ephemeral(public_url: &str) -> Self {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        Self::new(&key, public_url)
    }

    fn token(&self, user: Uuid, generation: i32) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(user.as_bytes());
        mac.update(&generation.to_be_bytes());
        format!("{PREFIX}{}", hex::encode(mac.finalize().into_bytes()))
    }

    fn url(&self, token: &str) -> String {
        format!("{}/api/v1/calendar-feeds/{token}.ics", self.base)
    }
}

fn hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

#[derive(sqlx::FromRow)]
struct FeedRow {
    generation: i32,
    token_hash: Vec<u8>,
    created_at: DateTime<Utc>,
}

/// The caller's feed, made on first use.
pub async fn show(db: &PgPool, key: &FeedKey, principal: &Principal) -> ServiceResult<CalendarFeed> {
    let user = principal.user_id;
    sqlx::query(
        "INSERT INTO calendar_feed (user_id, token_hash, generation) VALUES ($1, $2, 1) ON CONFLICT (user_id) DO NOTHING",
    )
    .bind(user)
    .bind(hash(&key.token(user, 1)))
    .execute(db)
    .await?;
    let row: FeedRow =
        sqlx::query_as("SELECT generation, token_hash, created_at FROM calendar_feed WHERE user_id = $1")
            .bind(user)
            .fetch_one(db)
            .await?;
    described(db, key, principal, row).await
}

/// A new URL for the caller; the old one stops working at once. Audited.
pub async fn regenerate(db: &PgPool, key: &FeedKey, principal: &Principal) -> ServiceResult<CalendarFeed> {
    let user = principal.user_id;
    let mut tx = db.begin().await?;
    let current: Option<i32> = sqlx::query_scalar("SELECT generation FROM calendar_feed WHERE user_id = $1 FOR UPDATE")
        .bind(user)
        .fetch_optional(&mut *tx)
        .await?;
    let generation = current.map_or(1, |g| g + 1);
    let row: FeedRow = sqlx::query_as(
        "INSERT INTO calendar_feed (user_id, token_hash, generation) VALUES ($1, $2, $3)
         ON CONFLICT (user_id) DO UPDATE SET token_hash = excluded.token_hash, generation = excluded.generation,
                                             created_at = now()
         RETURNING generation, token_hash, created_at",
    )
    .bind(user)
    .bind(hash(&key.token(user, generation)))
    .bind(generation)
    .fetch_one(&mut *tx)
    .await?;
    let target = user.to_string();
    audit::record(
        &mut tx,
        principal,
        "calendar_feed.regenerate",
        Subject { target: &target, tenant: None, pool: None },
        "",
    )
    .await?;
    tx.commit().await?;
    described(db, key, principal, row).await
}

async fn described(db: &PgPool, key: &FeedKey, principal: &Principal, row: FeedRow) -> ServiceResult<CalendarFeed> {
    let token = key.token(principal.user_id, row.generation);
    // A different key (a restart without a configured one) derives another token.
    let url = (hash(&token) == row.token_hash).then(|| key.url(&token));
    let pools = match (&url, principal.is_admin()) {
        (Some(url), true) => {
            let pools: Vec<(Uuid, String)> =
                sqlx::query_as("SELECT id, name FROM pool ORDER BY name").fetch_all(db).await?;
            pools.into_iter().map(|(id, pool)| PoolFeed { pool, url: format!("{url}?pool={id}") }).collect()
        }
        _ => Vec::new(),
    };
    Ok(CalendarFeed { url, created_at: row.created_at, pools })
}

#[derive(sqlx::FromRow)]
struct Entry {
    id: Uuid,
    pool: String,
    kind: String,
    quantity: i32,
    owner: String,
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    state: String,
    sequence: i32,
    updated: DateTime<Utc>,
}

/// The ICS text behind a token: the owner's bookings, or with `pool` (admins
/// only) every booking in that pool. An unknown token, a disabled owner or
/// a pool the owner may not see are all "not found", telling a guesser nothing.
pub async fn ics(db: &PgPool, key: &FeedKey, token: &str, pool: Option<Uuid>) -> ServiceResult<String> {
    let owner: Option<(Uuid, String, Option<String>)> = sqlx::query_as(
        "SELECT u.id, u.role, u.time_zone FROM calendar_feed c JOIN app_user u ON u.id = c.user_id
         WHERE c.token_hash = $1 AND u.disabled_at IS NULL",
    )
    .bind(hash(token))
    .fetch_optional(db)
    .await?;
    let Some((user, role, zone)) = owner else { return Err(ServiceError::NotFound("calendar feed")) };
    if pool.is_some() && role != "admin" {
        return Err(ServiceError::NotFound("calendar feed"));
    }
    let entries: Vec<Entry> = sqlx::query_as(
        "SELECT b.id, p.name AS pool, b.kind, b.quantity, u.email AS owner, b.starts_at, b.ends_at, b.state,
                b.sequence, b.updated_at AS updated
         FROM booking b JOIN pool p ON p.id = b.pool_id JOIN app_user u ON u.id = b.user_id
         WHERE (CASE WHEN $2::uuid IS NULL
                     THEN (b.user_id = $1 AND EXISTS (SELECT 1 FROM membership m
                                                       WHERE m.user_id = $1 AND m.tenant_id = b.tenant_id))
                          OR EXISTS (SELECT 1 FROM booking_co_owner c JOIN membership m ON m.user_id = c.user_id
                                     AND m.tenant_id = b.tenant_id WHERE c.booking_id = b.id AND c.user_id = $1)
                     ELSE b.pool_id = $2 END)
           AND b.ends_at > now() - make_interval(days => $3) AND b.extends_id IS NULL
         ORDER BY b.starts_at, b.id",
    )
    .bind(user)
    .bind(pool)
    .bind(DAYS_BACK)
    .fetch_all(db)
    .await?;
    let zone = zone.and_then(|z| z.parse::<chrono_tz::Tz>().ok()).filter(|tz| *tz != chrono_tz::UTC);
    Ok(render(key, &entries, pool.is_some(), zone))
}

fn status(state: &str) -> EventStatus {
    match state {
        "pending" => EventStatus::Tentative,
        "approved" | "active" | "completed" => EventStatus::Confirmed,
        _ => EventStatus::Cancelled,
    }
}

/// Times are UTC (`Z`): RFC 5545 wants a VTIMEZONE for every TZID a feed
/// names, and clients that meet a TZID without one (Google Calendar
/// imports among them) guess, an hour off. Every client shows a UTC time in
/// its reader's zone; `X-WR-TIMEZONE` names the owner's (Settings), as a
/// hint for the calendar's display.
fn render(key: &FeedKey, entries: &[Entry], occupancy: bool, zone: Option<chrono_tz::Tz>) -> String {
    let host = key.base.split("://").nth(1).unwrap_or(&key.base).split(['/', ':']).next().unwrap_or("berth");
    // Empty, so VERSION and PRODID are ours and appear once each.
    let mut calendar = Calendar::empty();
    calendar.append_property(Property::new("VERSION", "2.0"));
    calendar.append_property(Property::new("PRODID", "-//Berth//GPU bookings//EN"));
    calendar.append_property(Property::new("CALSCALE", "GREGORIAN"));
    calendar.name(if occupancy { "Berth pool occupancy" } else { "Berth GPU bookings" });
    calendar.append_property(Property::new("REFRESH-INTERVAL", "PT15M").add_parameter("VALUE", "DURATION").done());
    calendar.append_property(Property::new("X-PUBLISHED-TTL", "PT15M"));
    if let Some(zone) = zone {
        calendar.timezone(zone.name());
    }
    let at = CalendarDateTime::Utc;
    for e in entries {
        let mut summary = format!("GPU: {} {} ×{}", e.pool, short_kind(&e.kind), e.quantity);
        if occupancy {
            summary.push_str(&format!(" ({})", e.owner));
        }
        let event = icalendar::Event::new()
            .uid(&format!("{}@{host}", e.id))
            .summary(&summary)
            .description(&format!("{}/bookings#booking-{}", key.base, e.id))
            .starts(at(e.starts_at))
            .ends(at(e.ends_at))
            .status(status(&e.state))
            .sequence(e.sequence.max(0) as u32)
            .timestamp(e.updated)
            .done();
        calendar.push(event);
    }
    calendar.done().to_string()
}
