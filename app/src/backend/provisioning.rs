//! What the provisioning worker reads of a booking: who booked it for which
//! tenant, and the booked kind's per-unit grants beside the pool's other
//! kinds. System-level (the worker acts for nobody), so no principal.

use super::error::{ServiceError, ServiceResult};
use crate::model::{Mode, PoolKind, Principal};
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
    let booking = super::bookings::get(db, principal, booking_id).await?;
    if !booking.mine && !principal.is_admin() {
        return Err(ServiceError::Forbidden("only the booking's owner or an admin may see its manifests"));
    }
    Ok((renderer.0)(facts(db, booking_id).await?))
}

#[derive(Clone, Debug, PartialEq)]
pub struct BookingFacts {
    pub booking_id: Uuid,
    pub tenant: String,
    pub user_email: String,
    pub quantity: i32,
    pub mode: Mode,
    /// Resolved at booking time (the pool's first image when none was asked).
    pub image: String,
    pub kind: PoolKind,
    pub other_kinds: Vec<String>,
}

#[derive(sqlx::FromRow)]
struct FactsRow {
    tenant: String,
    user_email: String,
    quantity: i32,
    mode: String,
    image: String,
    #[sqlx(flatten)]
    kind: PoolKind,
    other_kinds: Vec<String>,
}

pub async fn facts(db: &PgPool, booking_id: Uuid) -> ServiceResult<BookingFacts> {
    let row: Option<FactsRow> = sqlx::query_as(
        "SELECT t.slug AS tenant, u.email AS user_email, b.quantity, b.mode, b.image, k.kind, k.capacity,
                k.replicas_per_unit, k.vram_gb_per_unit, k.cpu_millis_per_unit, k.memory_mib_per_unit,
                k.storage_gib_per_unit,
                ARRAY(SELECT o.kind FROM pool_kind o WHERE o.pool_id = b.pool_id AND o.kind <> b.kind ORDER BY o.kind)
                    AS other_kinds
         FROM booking b
         JOIN tenant t ON t.id = b.tenant_id
         JOIN app_user u ON u.id = b.user_id
         JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         WHERE b.id = $1",
    )
    .bind(booking_id)
    .fetch_optional(db)
    .await?;
    let row = row.ok_or(ServiceError::NotFound("booking"))?;
    Ok(BookingFacts {
        booking_id,
        tenant: row.tenant,
        user_email: row.user_email,
        quantity: row.quantity,
        mode: Mode::parse(&row.mode).unwrap_or(Mode::Interactive),
        image: row.image,
        kind: row.kind,
        other_kinds: row.other_kinds,
    })
}
