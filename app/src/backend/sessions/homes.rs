//! Volumes that outlive the window (issue 46): the worker's records of each
//! person's kept home and model cache per storage class, which volume each
//! session was given, and when a kept volume is due to go. It is kept
//! `retention` days after its owner's last session ended (the most generous
//! of their tenants' settings for its purpose, else `SITE_RETENTION_DAYS`);
//! an approved booking still ahead keeps it until that booking's end.

use crate::backend::error::ServiceResult;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

pub use crate::model::{Kept, SITE_RETENTION_DAYS};

/// Which volume one of a session's kept-volume claims binds.
#[derive(Clone, Debug, PartialEq)]
pub enum Volume {
    /// The session's own, deleted with its namespace: a session started
    /// before volumes were kept (its claim cannot change under it), or a
    /// tenant whose model cache is per session.
    PerSession { gib: i32 },
    /// A new volume of `gib`: kept as the owner's once bound, unless they
    /// already have one (held by another session of theirs running now).
    New { gib: i32 },
    /// The owner's kept volume.
    Kept { volume: String, gib: i32 },
    /// One of the team's model cache volumes (a pool's `team_cache_class`):
    /// the cluster admin's, made for the tenant, of storage class `class`;
    /// the claim asks for `gib`.
    Team { volume: String, class: String, gib: i32 },
}

impl Volume {
    pub fn gib(&self) -> i32 {
        match self {
            Volume::PerSession { gib } | Volume::New { gib } | Volume::Kept { gib, .. } | Volume::Team { gib, .. } => {
                *gib
            }
        }
    }
}

/// The end of the retention of `owner`'s kept volume of `purpose` on
/// `cluster` (SQL expressions: the owner's id, e.g. `h.user_id`; the
/// purpose, e.g. `'home'` or `h.purpose`; the cluster's id, e.g.
/// `h.cluster_id`; `site_days` the parameter holding `SITE_RETENTION_DAYS`):
/// the end of their last session on that cluster (approved ones ahead
/// included), else now, plus the retention of that purpose. A volume is
/// one cluster's, so what its owner books elsewhere (or what that
/// cluster's worker writes) never moves it.
///
/// `session_ends`, for a booking's card: that session's end counts too,
/// and instead of now. A pending booking is not yet among the booked, and
/// its card would otherwise name the retention of a session months ago (a
/// day already past).
pub fn kept_until_sql(
    owner: &str,
    site_days: &str,
    purpose: &str,
    cluster: &str,
    session_ends: Option<&str>,
) -> String {
    // `kept_b`: the caller's own query may call its booking `b`.
    let booked = crate::model::BookingState::sql_list(&crate::model::BookingState::BOOKED);
    let last = format!(
        "(SELECT max(kept_b.ends_at) FROM booking kept_b JOIN pool kept_p ON kept_p.id = kept_b.pool_id
          WHERE kept_b.user_id = {owner} AND kept_p.cluster_id = {cluster} AND kept_b.state IN ({booked}))"
    );
    // greatest() passes over a NULL: no other session leaves this one's end.
    let since = match session_ends {
        Some(ends) => format!("greatest({last}, {ends})"),
        None => format!("coalesce({last}, now())"),
    };
    format!(
        "{since}
         + make_interval(days => coalesce(
             (SELECT max(CASE WHEN {purpose} = 'cache' THEN t.cache_retention_days ELSE t.home_retention_days END)
                FROM membership m JOIN tenant t ON t.id = m.tenant_id WHERE m.user_id = {owner}), {site_days}))"
    )
}

/// Kept volumes of the cluster `cluster` (SQL: the parameter holding the
/// driving worker's cluster; every cluster's when it is NULL, as a worker
/// driving every pool sees them).
fn on_cluster(cluster: &str) -> String {
    format!("({cluster}::uuid IS NULL OR cluster_id = {cluster})")
}

/// Whose a kept volume is: a person in one tenant (by its slug, as a
/// session names it), for one purpose.
pub type Keeper = (Uuid, String, Kept);

/// The recorded kept volumes of storage class `class` on `cluster`, by keeper.
pub async fn volumes(db: &PgPool, cluster: Option<Uuid>, class: &str) -> ServiceResult<HashMap<Keeper, String>> {
    let rows: Vec<(Uuid, Option<String>, String, String)> = sqlx::query_as(&format!(
        "SELECT h.user_id, t.slug, h.purpose, h.volume FROM home h LEFT JOIN tenant t ON t.id = h.tenant_id
         WHERE h.storage_class = $1 AND h.gone_at IS NULL AND {}",
        on_cluster("$2")
    ))
    .bind(class)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(user, tenant, purpose, volume)| Some(((user, tenant?, Kept::parse(&purpose)?), volume)))
        .collect())
}

/// `user`'s kept volume in `tenant` of `purpose` and `class` on `cluster`,
/// and its size, unless someone asked for it to go. Never one of theirs in
/// another tenant: a co-owner there would read it.
pub async fn of(
    db: &PgPool,
    (cluster, user, tenant): (Option<Uuid>, Uuid, &str),
    class: &str,
    purpose: Kept,
) -> ServiceResult<Option<(String, i32)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT volume, size_gib FROM home
         WHERE user_id = $1 AND storage_class = $2 AND purpose = $3
           AND tenant_id = (SELECT id FROM tenant WHERE slug = $5)
           AND delete_requested_at IS NULL AND gone_at IS NULL AND {}
         ORDER BY created_at LIMIT 1",
        on_cluster("$4")
    ))
    .bind(user)
    .bind(class)
    .bind(purpose.as_str())
    .bind(cluster)
    .bind(tenant)
    .fetch_optional(db)
    .await?)
}

/// The volumes decided for each of `ids`, by booking, then purpose.
pub async fn decided(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, HashMap<Kept, Volume>>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        booking_id: Uuid,
        purpose: String,
        volume: Option<String>,
        size_gib: i32,
        kept: bool,
        team_class: Option<String>,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT booking_id, purpose, volume, size_gib, kept, team_class FROM session_home WHERE booking_id = ANY($1)",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    let mut by_booking: HashMap<Uuid, HashMap<Kept, Volume>> = HashMap::new();
    for Row { booking_id: id, purpose, volume, size_gib: gib, kept, team_class } in rows {
        let Some(purpose) = Kept::parse(&purpose) else { continue };
        let volume = match (kept, volume, team_class) {
            (false, _, _) => Volume::PerSession { gib },
            (true, None, _) => Volume::New { gib },
            (true, Some(volume), Some(class)) => Volume::Team { volume, class, gib },
            (true, Some(volume), None) => Volume::Kept { volume, gib },
        };
        by_booking.entry(id).or_default().insert(purpose, volume);
    }
    Ok(by_booking)
}

/// Records which volume `booking`'s claim of `purpose` binds (once: a
/// claim's volume never changes); returns what is recorded.
pub async fn decide(db: &PgPool, booking: Uuid, purpose: Kept, volume: Volume) -> ServiceResult<Volume> {
    let (name, kept, team_class) = match &volume {
        Volume::PerSession { .. } => (None, false, None),
        Volume::New { .. } => (None, true, None),
        Volume::Kept { volume, .. } => (Some(volume.as_str()), true, None),
        Volume::Team { volume, class, .. } => (Some(volume.as_str()), true, Some(class.as_str())),
    };
    sqlx::query(
        "INSERT INTO session_home (booking_id, purpose, volume, size_gib, kept, team_class) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (booking_id, purpose) DO NOTHING",
    )
    .bind(booking)
    .bind(purpose.as_str())
    .bind(name)
    .bind(volume.gib())
    .bind(kept)
    .bind(team_class)
    .execute(db)
    .await?;
    Ok(decided(db, &[booking]).await?.remove(&booking).and_then(|mut by| by.remove(&purpose)).unwrap_or(volume))
}

/// Records `volume` as the keeper's kept volume of `class` on `cluster`
/// (the default one for a worker driving every pool); false when they
/// already have one there.
pub async fn record(
    db: &PgPool,
    (cluster, (user, tenant, purpose)): (Option<Uuid>, &Keeper),
    class: &str,
    volume: &str,
    size_gib: i32,
) -> ServiceResult<bool> {
    let inserted = sqlx::query(
        "INSERT INTO home (cluster_id, user_id, tenant_id, purpose, storage_class, volume, size_gib)
         VALUES (coalesce($6, default_cluster_id()), $1, (SELECT id FROM tenant WHERE slug = $7), $2, $3, $4, $5)
         ON CONFLICT DO NOTHING",
    )
    .bind(user)
    .bind(purpose.as_str())
    .bind(class)
    .bind(volume)
    .bind(size_gib)
    .bind(cluster)
    .bind(tenant)
    .execute(db)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// The sizes each of `bookings`' tenant sets for a member's home and
/// model cache now, GiB: a kept volume smaller than that grows (where its
/// storage class allows).
pub async fn tenant_sizes(db: &PgPool, bookings: &[Uuid]) -> ServiceResult<HashMap<Uuid, (i32, i32)>> {
    let rows: Vec<(Uuid, i32, i32)> = sqlx::query_as(
        "SELECT b.id, t.home_gib, t.cache_gib FROM booking b JOIN tenant t ON t.id = b.tenant_id WHERE b.id = ANY($1)",
    )
    .bind(bookings)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id, home, cache)| (id, (home, cache))).collect())
}

/// Waits until no other session of `tenant` is choosing a team cache
/// volume (a transaction-scoped lock, released when `tx` ends): two
/// sessions starting at once never pick the same free volume, whichever
/// worker runs them.
pub async fn lock_team_caches(tx: &mut sqlx::PgConnection, tenant: &str) -> ServiceResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('berth.team-cache.' || $1))").bind(tenant).execute(tx).await?;
    Ok(())
}

/// The team cache volumes that sessions other than `booking`'s hold on its
/// cluster: those decided for bookings not yet over (approved or active),
/// the ones whose namespace may not exist yet included. A volume is one
/// cluster's, so another cluster's sessions (and what its worker writes)
/// hold none of these.
pub async fn team_volumes_held(db: &PgPool, booking: Uuid) -> ServiceResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT sh.volume FROM session_home sh JOIN booking b ON b.id = sh.booking_id JOIN pool p ON p.id = b.pool_id
         WHERE sh.team_class IS NOT NULL AND sh.volume IS NOT NULL AND b.state IN ('approved', 'active') AND b.id <> $1
           AND p.cluster_id = (SELECT mp.cluster_id FROM booking mb JOIN pool mp ON mp.id = mb.pool_id WHERE mb.id = $1)",
    )
    .bind(booking)
    .fetch_all(db)
    .await?)
}

/// Records that `booking`'s claim of `purpose` on the kept `volume` grows
/// to `gib`: the session's next pass asks the cluster for it (quota and
/// claim), and the person's later sessions ask for that size.
pub async fn grow(db: &PgPool, booking: Uuid, purpose: Kept, volume: &str, gib: i32) -> ServiceResult<()> {
    let mut tx = db.begin().await?;
    sqlx::query("UPDATE session_home SET size_gib = $3 WHERE booking_id = $1 AND purpose = $2 AND volume = $4")
        .bind(booking)
        .bind(purpose.as_str())
        .bind(gib)
        .bind(volume)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE home SET size_gib = $2 WHERE volume = $1 AND gone_at IS NULL AND size_gib < $2")
        .bind(volume)
        .bind(gib)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Kept volumes of `class` on `cluster` that are to go: past their
/// retention, or asked to go.
pub async fn due_to_go(db: &PgPool, cluster: Option<Uuid>, class: &str) -> ServiceResult<Vec<String>> {
    let rows: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT h.volume FROM home h
         WHERE h.storage_class = $2 AND h.gone_at IS NULL AND {}
           AND (h.delete_requested_at IS NOT NULL OR {} < now())",
        on_cluster("$3"),
        kept_until_sql("h.user_id", "$1", "h.purpose", "h.cluster_id", None)
    ))
    .bind(SITE_RETENTION_DAYS)
    .bind(class)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows)
}

/// Records that the kept volume `volume` went (the worker let the cluster
/// delete it, or found it gone); it stays as history for the reports.
pub async fn forget(db: &PgPool, volume: &str) -> ServiceResult<()> {
    sqlx::query("UPDATE home SET gone_at = now() WHERE volume = $1 AND gone_at IS NULL")
        .bind(volume)
        .execute(db)
        .await?;
    Ok(())
}
