//! What the worker reads of a booking: who booked it for which tenant, the
//! booked kind's per-unit grants beside the pool's other kinds, where its
//! pool's sessions run and how its owner's home is kept. System-level (the
//! worker acts for nobody), so no principal.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Mode, Placement, PoolKind};
use sqlx::PgPool;
use uuid::Uuid;

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
    pub kept_until: crate::backend::sessions::kept_until::KeptUntil,
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
    mode: Mode,
    image: String,
    #[sqlx(flatten)]
    kind: PoolKind,
    other_kinds: Vec<String>,
    #[sqlx(flatten)]
    placement: Placement,
    owner_id: Uuid,
    pool: String,
    ends_at: chrono::DateTime<chrono::Utc>,
    home_gib: i32,
    cache_gib: i32,
    cache_kept: bool,
    home_kept_until: chrono::DateTime<chrono::Utc>,
    cache_kept_until: chrono::DateTime<chrono::Utc>,
    team_cache: bool,
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
            mode: row.mode,
            image: row.image,
            kind: row.kind,
            other_kinds: row.other_kinds,
            placement: row.placement,
            window: WindowFacts {
                owner_id: row.owner_id,
                pool: row.pool,
                ends_at: row.ends_at,
                home_gib: row.home_gib,
                cache_gib: row.cache_gib,
                cache_kept: row.cache_kept,
                kept_until: crate::backend::sessions::kept_until::KeptUntil::of(
                    (row.home_kept_until, row.cache_kept_until, row.team_cache),
                    row.cache_kept,
                ),
                continues: row.session_id.zip(row.follows),
            },
        }
    }
}

/// The facts of each of `ids` that exists, in one query.
pub(super) async fn facts_of(db: &PgPool, ids: &[Uuid]) -> ServiceResult<Vec<BookingFacts>> {
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
        crate::backend::sessions::kept_until::kept_until_columns("$2"),
        crate::backend::sessions::continuation::following(true),
    ))
    .bind(ids)
    .bind(crate::backend::sessions::homes::SITE_RETENTION_DAYS)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(BookingFacts::from).collect())
}

pub async fn facts(db: &PgPool, booking_id: Uuid) -> ServiceResult<BookingFacts> {
    facts_of(db, &[booking_id]).await?.pop().ok_or(ServiceError::NotFound("booking"))
}

/// The facts of these bookings, in the order given (one gone meanwhile is left out).
pub async fn facts_in_order(db: &PgPool, ids: &[Uuid]) -> ServiceResult<Vec<BookingFacts>> {
    let mut facts: std::collections::HashMap<Uuid, BookingFacts> =
        facts_of(db, ids).await?.into_iter().map(|f| (f.booking_id, f)).collect();
    Ok(ids.iter().filter_map(|id| facts.remove(id)).collect())
}
