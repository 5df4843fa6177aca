//! What the provisioning worker reads of a booking: who booked it for which
//! tenant, and the booked kind's per-unit grants beside the pool's other
//! kinds. System-level (the worker acts for nobody), so no principal.

use crate::backend::bookings::change::{change, settle, Change};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Mode, Placement, PoolKind, Principal, Toleration};
use crate::rules::state_machine::Action;
use sqlx::PgPool;
use uuid::Uuid;

/// Renders a booking's objects as the worker would apply them. The builders
/// live with the worker in the `server` crate, which puts one of these into
/// the pages' context.
#[derive(Clone)]
pub struct ManifestRenderer(pub std::sync::Arc<dyn Fn(BookingFacts) -> String + Send + Sync>);

/// The objects of one booking, for its owner and admins (others: 404 when
/// they may not see it, 403 when they may see it but not its details).
pub async fn preview(
    db: &PgPool,
    principal: &Principal,
    renderer: &ManifestRenderer,
    booking_id: Uuid,
) -> ServiceResult<String> {
    let booking = crate::backend::bookings::get(db, principal, booking_id).await?;
    if !booking.mine && !principal.is_admin() {
        return Err(ServiceError::Forbidden("only the booking's owner or an admin may see its manifests"));
    }
    Ok((renderer.0)(facts(db, booking_id).await?))
}

#[derive(Clone, Debug, PartialEq)]
pub struct BookingFacts {
    pub booking_id: Uuid,
    pub pool_id: Uuid,
    pub tenant: String,
    /// The owner's name on the cluster (see `users::FederatedLogin`), while
    /// they are an enabled member of the booking's tenant, like a co-owner;
    /// none otherwise, and then nobody is bound for them.
    pub owner: Option<String>,
    /// Who shares the booking (enabled members of its tenant), by their
    /// names on the cluster: bound to the session's role too.
    pub co_owners: Vec<String>,
    pub quantity: i32,
    pub mode: Mode,
    /// Resolved at booking time (the pool's first image when none was asked).
    pub image: String,
    pub kind: PoolKind,
    /// Every GPU kind any pool offers, but the booked one: the session gets none of them.
    pub other_kinds: Vec<String>,
    /// Where the pool's sessions run.
    pub placement: Placement,
    /// What the session tells its workspace (`/etc/berth`) and how its home is kept.
    pub window: WindowFacts,
}

/// The booking's window as its workspace reads it, and its owner's home.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFacts {
    pub owner_id: Uuid,
    pub pool: String,
    pub ends_at: chrono::DateTime<chrono::Utc>,
    /// The size of a new home, the owner's tenant's setting.
    pub home_gib: i32,
    /// The size of the model cache, and whether it is kept (the tenant's settings).
    pub cache_gib: i32,
    pub cache_kept: bool,
    /// Until when the owner's home and model cache are kept, as things stand.
    pub kept_until: crate::backend::worker::homes::KeptUntil,
    /// The session this booking took over from the one before it (see
    /// `continuation`): the chain's first booking, and the booking it follows.
    pub continues: Option<(Uuid, Uuid)>,
}

impl BookingFacts {
    /// The session's id: the first booking of its chain (it names the namespace).
    pub fn session_id(&self) -> Uuid {
        self.window.continues.map(|(session, _)| session).unwrap_or(self.booking_id)
    }
}

#[derive(sqlx::FromRow)]
struct FactsRow {
    booking_id: Uuid,
    pool_id: Uuid,
    tenant: String,
    owner_cluster_user: Option<String>,
    co_owner_cluster_users: Vec<String>,
    quantity: i32,
    mode: String,
    image: String,
    #[sqlx(flatten)]
    kind: PoolKind,
    other_kinds: Vec<String>,
    node_selector: sqlx::types::Json<std::collections::BTreeMap<String, String>>,
    tolerations: sqlx::types::Json<Vec<Toleration>>,
    priority_class: Option<String>,
    runtime_class: Option<String>,
    end_grace_seconds: i32,
    owner_id: Uuid,
    pool: String,
    ends_at: chrono::DateTime<chrono::Utc>,
    home_gib: i32,
    cache_gib: i32,
    cache_kept: bool,
    home_kept_until: chrono::DateTime<chrono::Utc>,
    cache_kept_until: chrono::DateTime<chrono::Utc>,
    team_cache: bool,
    team_cache_class: Option<String>,
    session_id: Option<Uuid>,
    follows: Option<Uuid>,
}

impl From<FactsRow> for BookingFacts {
    fn from(row: FactsRow) -> Self {
        BookingFacts {
            booking_id: row.booking_id,
            pool_id: row.pool_id,
            tenant: row.tenant,
            owner: row.owner_cluster_user,
            co_owners: row.co_owner_cluster_users,
            quantity: row.quantity,
            mode: Mode::parse(&row.mode).unwrap_or(Mode::Interactive),
            image: row.image,
            kind: row.kind,
            other_kinds: row.other_kinds,
            placement: Placement {
                node_selector: row.node_selector.0,
                tolerations: row.tolerations.0,
                priority_class: row.priority_class,
                runtime_class: row.runtime_class,
                end_grace_seconds: row.end_grace_seconds,
                team_cache_class: row.team_cache_class,
            },
            window: WindowFacts {
                owner_id: row.owner_id,
                pool: row.pool,
                ends_at: row.ends_at,
                home_gib: row.home_gib,
                cache_gib: row.cache_gib,
                cache_kept: row.cache_kept,
                kept_until: crate::backend::worker::homes::KeptUntil::of(
                    (row.home_kept_until, row.cache_kept_until, row.team_cache),
                    row.cache_kept,
                ),
                continues: row.session_id.zip(row.follows),
            },
        }
    }
}

/// The facts of each of `ids` that exists, in one query.
async fn facts_of(db: &PgPool, ids: &[Uuid]) -> ServiceResult<Vec<BookingFacts>> {
    let rows: Vec<FactsRow> = sqlx::query_as(&format!(
        "SELECT b.id AS booking_id, b.pool_id, t.slug AS tenant,
                (SELECT cluster_user(cu) FROM app_user cu WHERE cu.id = b.user_id AND cu.disabled_at IS NULL
                   AND EXISTS (SELECT 1 FROM membership cm WHERE cm.user_id = cu.id AND cm.tenant_id = b.tenant_id)
                ) AS owner_cluster_user,
                ARRAY(SELECT cluster_user(cu) FROM booking_co_owner c JOIN app_user cu ON cu.id = c.user_id
                      JOIN membership cm ON cm.user_id = c.user_id AND cm.tenant_id = b.tenant_id
                      WHERE c.booking_id = b.id AND cu.disabled_at IS NULL AND cluster_user(cu) IS NOT NULL
                      ORDER BY 1) AS co_owner_cluster_users,
                b.quantity, b.mode, b.image, k.kind,
                k.capacity, k.replicas_per_unit, k.vram_gb_per_unit, k.cpu_millis_per_unit, k.memory_mib_per_unit,
                k.storage_gib_per_unit, k.slices_per_gpu, k.price_per_unit_hour, k.lend_idle,
                -- Every pool's kinds, not only this pool's: a session that booked a
                -- MIG slice must not take whole GPUs another pool offers.
                ARRAY(SELECT DISTINCT o.kind FROM pool_kind o WHERE o.kind <> b.kind ORDER BY o.kind) AS other_kinds,
                p.node_selector, p.tolerations, p.priority_class, p.runtime_class, p.end_grace_seconds,
                p.team_cache_class, b.user_id AS owner_id, p.name AS pool, t.home_gib, t.cache_gib, t.cache_kept, {},
                -- The window as the workspace should read it: to the end of the
                -- booking its session continues into, if any.
                coalesce(nx.ends_at, b.ends_at) AS ends_at, c.session_id, c.follows
         FROM booking b
         JOIN pool p ON p.id = b.pool_id
         JOIN tenant t ON t.id = b.tenant_id
         JOIN app_user u ON u.id = b.user_id
         JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         LEFT JOIN session_continuation c ON c.booking_id = b.id
         {}
         WHERE b.id = ANY($1)",
        crate::backend::worker::homes::kept_until_columns("$2"),
        crate::backend::worker::continuation::following(true),
    ))
    .bind(ids)
    .bind(crate::backend::worker::homes::SITE_RETENTION_DAYS)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(BookingFacts::from).collect())
}

pub async fn facts(db: &PgPool, booking_id: Uuid) -> ServiceResult<BookingFacts> {
    facts_of(db, &[booking_id]).await?.pop().ok_or(ServiceError::NotFound("booking"))
}

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
fn on_cluster() -> String {
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

/// The facts of these bookings, in the order given (one gone meanwhile is left out).
pub async fn facts_in_order(db: &PgPool, ids: &[Uuid]) -> ServiceResult<Vec<BookingFacts>> {
    let mut facts: std::collections::HashMap<Uuid, BookingFacts> =
        facts_of(db, ids).await?.into_iter().map(|f| (f.booking_id, f)).collect();
    Ok(ids.iter().filter_map(|id| facts.remove(id)).collect())
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
        crate::backend::worker::continuation::TAKES_OVER
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
#[derive(Clone, Debug, PartialEq)]
pub struct Backfill {
    pub pool_id: Uuid,
    pub namespace: String,
    pub kinds: Vec<String>,
    pub placement: Placement,
}

/// Every pool in service on `cluster` with a backfill namespace and a lending kind.
pub async fn backfills(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<Vec<Backfill>> {
    type Row = (
        Uuid,
        String,
        Vec<String>,
        sqlx::types::Json<std::collections::BTreeMap<String, String>>,
        sqlx::types::Json<Vec<Toleration>>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT p.id, p.backfill_namespace,
                ARRAY(SELECT k.kind FROM pool_kind k WHERE k.pool_id = p.id AND k.lend_idle ORDER BY k.kind),
                p.node_selector, p.tolerations, p.priority_class, p.runtime_class
         FROM pool p
         WHERE p.retired_at IS NULL AND p.backfill_namespace IS NOT NULL
           AND ($1::uuid IS NULL OR p.cluster_id = $1)
           AND EXISTS (SELECT 1 FROM pool_kind k WHERE k.pool_id = p.id AND k.lend_idle)
         ORDER BY p.id",
    )
    .bind(cluster)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(pool_id, namespace, kinds, node_selector, tolerations, priority_class, runtime_class)| Backfill {
            pool_id,
            namespace,
            kinds,
            placement: Placement {
                node_selector: node_selector.0,
                tolerations: tolerations.0,
                priority_class,
                runtime_class,
                // Backfill Jobs are Kueue's to stop, not a window's end.
                ..Placement::default()
            },
        })
        .collect())
}

/// The worker moves a booking (activate, complete, fail) as the system: the
/// state machine decides, and the audit event has no actor.
pub async fn system_transition(
    db: &PgPool,
    id: Uuid,
    action: crate::rules::state_machine::Action,
    reason: &str,
) -> ServiceResult<crate::model::BookingState> {
    let mut tx = db.begin().await?;
    let changed = change(&mut tx, id, Change::new(action, None, reason)).await?;
    tx.commit().await?;
    let to = changed.to;
    changed.settle(db).await;
    Ok(to)
}

/// Why the worker rejects a pending booking whose window opened unapproved.
pub const NOT_APPROVED_IN_TIME: &str = "not approved before its window started";

/// Rejects every pending booking (or extension request) of `cluster`'s
/// pools whose window has opened, as the system, with its audit event;
/// returns how many. A pass that finds none costs one query.
pub async fn reject_unapproved(db: &PgPool, cluster: Option<Uuid>) -> ServiceResult<u64> {
    let expired: Vec<Uuid> = sqlx::query_scalar(&format!(
        "SELECT id FROM booking WHERE state = 'pending' AND starts_at <= now() AND {}",
        on_cluster()
    ))
    .bind(cluster)
    .fetch_all(db)
    .await?;
    if expired.is_empty() {
        return Ok(0);
    }
    let mut tx = db.begin().await?;
    // Still pending once locked (an admin may have decided meanwhile).
    let locked: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM booking WHERE id = ANY($1) AND state = 'pending' AND starts_at <= now()
         ORDER BY id FOR UPDATE SKIP LOCKED",
    )
    .bind(&expired)
    .fetch_all(&mut *tx)
    .await?;
    let mut changes = Vec::with_capacity(locked.len());
    for id in locked {
        changes.push(change(&mut tx, id, Change::new(Action::Reject, None, NOT_APPROVED_IN_TIME)).await?);
    }
    tx.commit().await?;
    let rejected = changes.len() as u64;
    settle(db, changes).await;
    Ok(rejected)
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

/// The lease of a cluster's worker: a session-level advisory lock on the
/// cluster's own key, held as long as `conn` lives, so exactly one worker
/// drives a cluster at a time whichever shape it runs in. `None` (a worker
/// over every pool, as before clusters were data) takes the default
/// cluster's key, the one every worker took then: an older worker and a
/// newer one never drive the same cluster during an upgrade.
pub async fn try_lead(conn: &mut sqlx::PgConnection, cluster: Option<Uuid>) -> ServiceResult<bool> {
    Ok(sqlx::query_scalar(
        "SELECT pg_try_advisory_lock(coalesce((SELECT lease_key FROM cluster WHERE id = $1), 7243815062))",
    )
    .bind(cluster)
    .fetch_one(conn)
    .await?)
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

/// The booking whose workspace `principal` wants to open: only its owner
/// and co-owners (not other teammates, not admins: the workspace is the
/// holders' session), only while it is active. Not visible: 404.
pub async fn openable(db: &PgPool, principal: &Principal, booking_id: Uuid) -> ServiceResult<BookingFacts> {
    let booking = crate::backend::bookings::get(db, principal, booking_id).await?;
    if !booking.mine {
        return Err(ServiceError::Forbidden("only the booking's owner and co-owners may open its workspace"));
    }
    if booking.state != crate::model::BookingState::Active {
        return Err(ServiceError::Conflict {
            code: "workspace_not_running",
            field: None,
            reason: format!("the workspace is not running: the booking is {}", booking.state.as_str()),
        });
    }
    facts(db, booking_id).await
}

/// Whether the booking is still active inside its window, checked by a
/// repair right before it writes.
pub async fn still_active(db: &PgPool, booking_id: Uuid) -> ServiceResult<bool> {
    Ok(sqlx::query_scalar("SELECT state = 'active' AND now() < ends_at FROM booking WHERE id = $1")
        .bind(booking_id)
        .fetch_optional(db)
        .await?
        .unwrap_or(false))
}
