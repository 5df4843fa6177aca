//! What a pass of the worker on a cluster must converge, read from the
//! bookings: the windows open and closed, the room held ahead of windows,
//! the pools that lend idle units, their images, and the next instant a
//! window opens or closes.

use super::facts::{facts_of, BookingFacts};
use crate::backend::error::ServiceResult;
use crate::model::Placement;
use sqlx::PgPool;
use uuid::Uuid;

/// What the worker must converge: sessions whose window is open, and
/// bookings whose window has closed while they still hold capacity. Ids
/// only: a start pass needs the facts of the sessions it starts, not of the
/// thousand already running (`facts_in_order`).
#[derive(Clone, Debug, Default)]
pub struct Due {
    /// Approved or active bookings inside their window, with their state,
    /// the earliest window first.
    pub running: Vec<(Uuid, crate::model::BookingState)>,
    /// Approved or active bookings whose window has ended.
    pub ended: Vec<Uuid>,
}

impl Due {
    /// The running bookings in `state`, in the order of `running`.
    pub fn in_state(&self, state: crate::model::BookingState) -> Vec<Uuid> {
        self.running.iter().filter(|(_, s)| *s == state).map(|(id, _)| *id).collect()
    }
}

/// Bookings of pools on `cluster` (every pool's when `None`), as a
/// condition on `booking.pool_id` with the cluster's id bound as `$1`.
pub(super) fn on_cluster() -> String {
    crate::backend::clusters::pool_on_cluster("", "$1")
}

pub async fn due(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<Due> {
    let rows: Vec<(Uuid, crate::model::BookingState, bool)> = sqlx::query_as(&format!(
        "SELECT id, state, ends_at <= now() AS ended FROM booking
         WHERE state IN ('approved', 'active') AND starts_at <= now() AND {}
         ORDER BY starts_at, id",
        on_cluster()
    ))
    .bind(cluster)
    .fetch_all(db)
    .await?;
    let mut due = Due::default();
    for (id, state, ended) in rows {
        if ended {
            due.ended.push(id);
        } else {
            due.running.push((id, state));
        }
    }
    Ok(due)
}

/// How long after a window opens the room held ahead of it stays, if its
/// session is still not running by then (the autoscaler had its chance).
pub const AHEAD_GRACE_MINUTES: i32 = 5;

/// Approved bookings whose window opens within the lead time — the pool's
/// own (`scale_ahead_minutes`; 0 holds none) or else `lead` — or opened
/// less than `AHEAD_GRACE_MINUTES` ago, and whose session does not run yet:
/// the ones room is held for (`--scale-ahead`). Pending ones are not: an
/// admin may still say no.
pub async fn ahead(db: &PgPool, cluster: Option<Uuid>, lead: chrono::Duration) -> ServiceResult<Vec<BookingFacts>> {
    let ids: Vec<Uuid> = sqlx::query_scalar(&format!(
        "SELECT b.id FROM booking b JOIN pool p ON p.id = b.pool_id
         WHERE b.state = 'approved' AND b.extends_id IS NULL
           AND ($3::uuid IS NULL OR p.cluster_id = $3)
           AND coalesce(p.scale_ahead_minutes * 60.0, $1) > 0
           -- A booking that will take over its owner's running session
           -- needs no room: that session holds it.
           AND NOT {}
           AND b.starts_at <= now() + make_interval(secs => coalesce(p.scale_ahead_minutes * 60.0, $1))
           AND b.starts_at + make_interval(mins => $2) > now() AND b.ends_at > now()
         ORDER BY b.starts_at, b.id",
        crate::backend::sessions::continuation::TAKES_OVER
    ))
    .bind(lead.num_seconds() as f64)
    .bind(AHEAD_GRACE_MINUTES)
    .bind(cluster)
    .fetch_all(db)
    .await?;
    facts_of(db, &ids).await
}

/// A pool whose kinds lend idle booked units (`--kueue`): its backfill queue
/// admits Jobs from `namespace` onto `kinds`, on the pool's nodes.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct Backfill {
    pub pool_id: Uuid,
    pub namespace: String,
    pub kinds: Vec<String>,
    #[sqlx(flatten)]
    pub placement: Placement,
}

/// Every pool in service on `cluster` with a backfill namespace and a lending kind.
pub async fn backfills(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<Vec<Backfill>> {
    let pools: Vec<Backfill> = sqlx::query_as(
        "SELECT p.id AS pool_id, p.backfill_namespace AS namespace,
                ARRAY(SELECT k.kind FROM pool_kind k WHERE k.pool_id = p.id AND k.lend_idle ORDER BY k.kind) AS kinds,
                p.node_selector, p.tolerations, p.priority_class, p.runtime_class, p.end_grace_seconds,
                p.team_cache_class
         FROM pool p
         WHERE p.retired_at IS NULL AND p.backfill_namespace IS NOT NULL
           AND ($1::uuid IS NULL OR p.cluster_id = $1)
           AND EXISTS (SELECT 1 FROM pool_kind k WHERE k.pool_id = p.id AND k.lend_idle)
         ORDER BY p.id",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(pools
        .into_iter()
        .map(|pool| Backfill {
            // Backfill Jobs are Kueue's to stop, not a window's end, and
            // mount no session's cache.
            placement: Placement {
                end_grace_seconds: Placement::default().end_grace_seconds,
                team_cache_class: None,
                ..pool.placement
            },
            ..pool
        })
        .collect())
}

/// Every workspace image a pool on `cluster` offers, for its image cache.
pub async fn pool_images(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT unnest(images) AS image FROM pool WHERE $1::uuid IS NULL OR cluster_id = $1 ORDER BY image",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?)
}

/// The next instant a window of `cluster`'s pools opens or closes, for the
/// worker's timer.
pub async fn next_boundary(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<Option<chrono::DateTime<chrono::Utc>>> {
    // Separate minimums, so that each is the first entry of an index
    // (booking_running_by_start, booking_by_window) instead of a min over a
    // union of every matching row.
    let on_cluster = on_cluster();
    Ok(sqlx::query_scalar(&format!(
        "SELECT least(
             (SELECT min(starts_at) FROM booking WHERE state = 'approved' AND starts_at > now() AND {on_cluster}),
             (SELECT min(ends_at) FROM booking WHERE state IN ('approved', 'active') AND ends_at > now() AND {on_cluster}),
             (SELECT min(starts_at) FROM booking WHERE state = 'pending' AND starts_at > now() AND {on_cluster})
         )"
    ))
    .bind(cluster)
    .fetch_one(db)
    .await?)
}
