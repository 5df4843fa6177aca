//! The outbox's statements: the timed events, the fan-out into deliveries,
//! claiming due deliveries and recording how each went. Every one is a
//! single statement, so a crash leaves either all of it or none.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// How long before a window's start and end people are told.
pub const LEAD: chrono::Duration = chrono::Duration::minutes(15);

/// How long a claimed delivery stays claimed: a worker that died while
/// sending leaves it to be sent again (with the same id) after this.
const LEASE_SECONDS: i64 = 300;

/// Attempts before a delivery is given up (about a day with the backoff).
pub const MAX_ATTEMPTS: i32 = 16;

/// "Starts in 15 min" for approved windows and "ends in 15 min" for live
/// ones; "your home is deleted on …" (or model cache: the detail) 7 days
/// and 1 day before a kept volume's retention ends (told on the owner's last booking, which sets that date).
/// The key holds the time, so a moved window or date is told again.
pub async fn schedule_timed(db: &PgPool) -> sqlx::Result<u64> {
    let done = sqlx::query(&format!(
        "INSERT INTO notification (event, booking_id, dedupe, detail)
         SELECT 'booking.starting', id, 'starting:' || id || ':' || extract(epoch FROM starts_at)::bigint, ''
         FROM booking
         WHERE state = 'approved' AND starts_at > now() AND starts_at <= now() + $1
         UNION ALL
         SELECT 'booking.ending', id, 'ending:' || id || ':' || extract(epoch FROM ends_at)::bigint, ''
         FROM booking
         WHERE state = 'active' AND ends_at > now() AND ends_at <= now() + $1 AND starts_at < now()
         UNION ALL
         SELECT 'home.expiring', last.id,
                'home:' || h.volume || ':' || d.days || ':' || extract(epoch FROM k.kept)::bigint, h.purpose
         FROM home h
         CROSS JOIN LATERAL (SELECT {} AS kept) k
         CROSS JOIN LATERAL (SELECT b.id FROM booking b
                             WHERE b.user_id = h.user_id AND b.state IN ({})
                             ORDER BY b.ends_at DESC, b.id LIMIT 1) last
         CROSS JOIN (VALUES (7, 1), (1, 0)) d(days, after)
         WHERE h.gone_at IS NULL AND h.delete_requested_at IS NULL AND k.kept <= now() + make_interval(days => d.days)
           AND k.kept > now() + make_interval(days => d.after)
         ON CONFLICT (dedupe) DO NOTHING",
        app::backend::sessions::homes::kept_until_sql("h.user_id", "$2", "h.purpose", "h.cluster_id", None),
        app::model::BookingState::sql_list(&app::model::BookingState::BOOKED)
    ))
    .bind(LEAD)
    .bind(app::backend::sessions::homes::SITE_RETENTION_DAYS)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Admins hear once per booking that its ended session's namespace is
/// stuck terminating (`namespace`): its GPUs may still be held.
pub async fn stuck(db: &PgPool, booking: Uuid, namespace: &str) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO notification (event, booking_id, dedupe, detail) VALUES ('session.stuck', $1, 'stuck:' || $1, $2)
         ON CONFLICT (dedupe) DO NOTHING",
    )
    .bind(booking)
    .bind(namespace)
    .execute(db)
    .await?;
    Ok(())
}

/// Turns new notifications into deliveries: a pending booking goes to the
/// admins, everything else to the booking's owner and co-owners; by email when the
/// portal can send mail, to each of the recipient's webhooks, unless they
/// switched that event off for that channel; and to every webhook of the
/// booking's tenant. Disabled users get nothing.
pub async fn fan_out(db: &PgPool, email: bool) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "WITH batch AS (
             SELECT n.id, n.event, n.booking_id, b.user_id AS owner, b.tenant_id FROM notification n JOIN booking b ON b.id = n.booking_id
             WHERE n.fanned_out_at IS NULL ORDER BY n.created_at LIMIT 500 FOR UPDATE OF n SKIP LOCKED
         ),
         recipient AS (
             SELECT batch.id, batch.event, u.id AS user_id FROM batch JOIN app_user u ON u.role = 'admin'
             WHERE batch.event IN ('booking.pending', 'session.stuck') AND u.disabled_at IS NULL
             UNION ALL
             SELECT batch.id, batch.event, u.id FROM batch JOIN app_user u ON u.id = batch.owner
             WHERE batch.event NOT IN ('booking.pending', 'session.stuck') AND u.disabled_at IS NULL
             UNION ALL
             SELECT batch.id, batch.event, u.id FROM batch
             JOIN booking_co_owner c ON c.booking_id = batch.booking_id JOIN app_user u ON u.id = c.user_id
             JOIN membership m ON m.user_id = c.user_id AND m.tenant_id = batch.tenant_id
             WHERE batch.event NOT IN ('booking.pending', 'session.stuck', 'home.expiring') AND u.disabled_at IS NULL
         ),
         wanted AS (
             SELECT r.id, r.user_id, c.channel FROM recipient r CROSS JOIN (VALUES ('email'), ('webhook')) AS c(channel)
             WHERE (c.channel = 'webhook' OR $1)
               AND coalesce((SELECT p.enabled FROM notification_preference p
                             WHERE p.user_id = r.user_id AND p.event = r.event AND p.channel = c.channel), true)
         ),
         delivery AS (
             INSERT INTO notification_delivery (notification_id, user_id, channel, webhook_id)
             SELECT w.id, w.user_id, 'email', NULL FROM wanted w WHERE w.channel = 'email'
             UNION ALL
             SELECT w.id, w.user_id, 'webhook', h.id FROM wanted w JOIN webhook h ON h.user_id = w.user_id
             WHERE w.channel = 'webhook'
             UNION ALL
             SELECT batch.id, NULL, 'webhook', h.id FROM batch JOIN webhook h ON h.tenant_id = batch.tenant_id
             WHERE batch.event NOT IN ('session.stuck', 'home.expiring')
             ON CONFLICT ON CONSTRAINT notification_delivery_once DO NOTHING
         )
         UPDATE notification SET fanned_out_at = now() WHERE id IN (SELECT id FROM batch)",
    )
    .bind(email)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// A delivery claimed for sending, with everything its message says.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Due {
    pub id: Uuid,
    pub attempts: i32,
    pub channel: String,
    pub event: String,
    pub detail: String,
    pub booking_id: Uuid,
    pub pool: String,
    /// The recipient's zone (Settings), else the pool's (webhooks).
    pub time_zone: String,
    pub kind: String,
    pub quantity: i32,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub state: String,
    pub owner_name: String,
    pub owner_email: String,
    pub tenant: String,
    pub recipient_name: Option<String>,
    pub recipient_email: Option<String>,
    pub webhook_url: Option<String>,
    pub webhook_secret: Option<String>,
    /// Free units of the kind in the hour after the window's end (for "ending").
    pub free_after: Option<i32>,
    /// Until when the owner's home is kept, as things stand.
    pub home_kept_until: DateTime<Utc>,
    /// Until when the owner's model cache is kept, as things stand.
    pub cache_kept_until: DateTime<Utc>,
    /// Whether the session mounts its team's shared model cache (see `KeptUntil`).
    pub team_cache: bool,
    /// Whether the tenant keeps model caches (else each session has its own).
    pub cache_kept: bool,
    /// The end of the booking this one's session continues into, if any.
    pub continues_until: Option<DateTime<Utc>>,
}

/// Claims up to `limit` due deliveries (each for LEASE_SECONDS) and counts the attempt.
pub async fn claim(db: &PgPool, limit: i64) -> sqlx::Result<Vec<Due>> {
    sqlx::query_as(&format!(
        "WITH claimed AS (
             UPDATE notification_delivery d SET attempts = d.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => $2)
             WHERE d.id IN (SELECT id FROM notification_delivery
                            WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()
                            ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
             RETURNING d.*
         )
         SELECT c.id, c.attempts, c.channel, n.event, n.detail, b.id AS booking_id, p.name AS pool,
                coalesce(u.time_zone, p.time_zone) AS time_zone,
                b.kind, b.quantity, b.starts_at, b.ends_at, b.state, o.name AS owner_name, o.email AS owner_email,
                t.slug AS tenant, u.name AS recipient_name, u.email AS recipient_email,
                h.url AS webhook_url, h.secret AS webhook_secret,
                CASE WHEN n.event = 'booking.ending' THEN k.capacity - (
                    SELECT coalesce(sum(x.quantity), 0)::int FROM booking x
                    WHERE x.pool_id = b.pool_id AND x.kind = b.kind AND x.state IN ('pending', 'approved', 'active')
                      AND x.starts_at < b.ends_at + interval '1 hour' AND x.ends_at > b.ends_at) END AS free_after,
                {}, t.cache_kept, nx.ends_at AS continues_until
         FROM claimed c
         JOIN notification n ON n.id = c.notification_id
         JOIN booking b ON b.id = n.booking_id
         JOIN pool p ON p.id = b.pool_id
         JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         JOIN app_user o ON o.id = b.user_id
         JOIN tenant t ON t.id = b.tenant_id
         LEFT JOIN app_user u ON u.id = c.user_id
         LEFT JOIN webhook h ON h.id = c.webhook_id
         {}",
        app::backend::sessions::kept_until::kept_until_columns("$3"),
        app::backend::sessions::continuation::following(true),
    ))
    .bind(limit)
    .bind(LEASE_SECONDS as f64)
    .bind(app::backend::sessions::homes::SITE_RETENTION_DAYS)
    .fetch_all(db)
    .await
}

pub async fn delivered(db: &PgPool, id: Uuid) -> sqlx::Result<()> {
    sqlx::query("UPDATE notification_delivery SET delivered_at = now(), last_error = '' WHERE id = $1")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// A failed attempt: try again after a pause that doubles (5 s, 10 s,
/// 20 s, … at most 4 h), or give up after MAX_ATTEMPTS.
pub async fn failed(db: &PgPool, due: &Due, error: &str) -> sqlx::Result<()> {
    let pause = 5.0 * 2f64.powi(due.attempts.clamp(1, 13) - 1);
    sqlx::query(
        "UPDATE notification_delivery SET last_error = left($2, 500),
                next_attempt_at = now() + make_interval(secs => least($3, 14400)),
                gave_up_at = CASE WHEN attempts >= $4 THEN now() END
         WHERE id = $1",
    )
    .bind(due.id)
    .bind(error)
    .bind(pause)
    .bind(MAX_ATTEMPTS)
    .execute(db)
    .await?;
    Ok(())
}
