//! What the worker would apply for a booking, shown to its owner and admins.

use super::facts::{facts, BookingFacts};
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::Principal;
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
