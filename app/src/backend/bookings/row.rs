//! A booking row joined with its owner and tenant, and how much of it a
//! principal may see.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{Booking, BookingState, CoOwner, Mode, Principal};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Columns every booking query selects, in `BookingRow`'s shape. Co-owners
/// are few and their table is indexed by booking: one probe per row. One
/// who has left the booking's tenant holds it no longer (nor its session).
pub const BOOKING_COLUMNS: &str =
    "b.id, b.pool_id, b.kind, b.user_id, b.tenant_id, b.quantity, b.mode, b.image, b.note,
     b.starts_at, b.ends_at, b.state, b.created_at, b.extends_id, b.series_id,
     u.email AS user_email, u.name AS user_name, t.slug AS tenant_slug,
     coalesce((SELECT json_agg(json_build_object('user_id', c.user_id, 'email', cu.email, 'name', cu.name)
                               ORDER BY c.added_at, cu.email)
               FROM booking_co_owner c JOIN app_user cu ON cu.id = c.user_id
               JOIN membership cm ON cm.user_id = c.user_id AND cm.tenant_id = b.tenant_id
               WHERE c.booking_id = b.id), '[]')
         AS co_owners";
pub const BOOKING_FROM: &str =
    "booking b JOIN app_user u ON u.id = b.user_id JOIN tenant t ON t.id = b.tenant_id JOIN pool p ON p.id = b.pool_id";

#[derive(sqlx::FromRow)]
pub struct BookingRow {
    pub id: Uuid,
    pub pool_id: Uuid,
    pub kind: String,
    pub user_id: Uuid,
    pub tenant_id: Uuid,
    pub quantity: i32,
    pub mode: Mode,
    pub image: String,
    pub note: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub state: BookingState,
    pub created_at: DateTime<Utc>,
    pub extends_id: Option<Uuid>,
    pub series_id: Option<Uuid>,
    pub user_email: String,
    pub user_name: String,
    pub tenant_slug: String,
    pub co_owners: sqlx::types::Json<Vec<CoOwnerRow>>,
}

/// One co-owner of a booking, as `BOOKING_COLUMNS` reads it.
#[derive(serde::Deserialize, Clone, Debug)]
pub struct CoOwnerRow {
    pub user_id: Uuid,
    pub email: String,
    pub name: String,
}

/// What a caller needs to be allowed to act on a booking.
pub enum Need {
    /// Anything that changes the booking: cancel, move, resize, extend or
    /// end it, change who shares it. One rule for all of them: the window is
    /// the owner's; co-owners share its session (they see it in full and
    /// open its workspace), and cannot take from the owner what they could
    /// not cancel.
    OwnerOrAdmin,
    Admin,
}

impl BookingRow {
    pub fn state(&self) -> BookingState {
        self.state
    }

    /// The owner or one of its co-owners, while a member of the booking's
    /// tenant: an owner removed from it can no longer open the workspace,
    /// extend or end the booking (the worker applies the same rule to the
    /// session's users). Co-owners who left are not in `co_owners` at all.
    pub fn held_by(&self, principal: &Principal) -> bool {
        self.owned_by(principal) || self.is_co_owner(principal.user_id)
    }

    /// The owner, while a member of the booking's tenant.
    pub fn owned_by(&self, principal: &Principal) -> bool {
        self.user_id == principal.user_id && principal.in_tenant(self.tenant_id)
    }

    pub fn is_co_owner(&self, user: Uuid) -> bool {
        self.co_owners.0.iter().any(|c| c.user_id == user)
    }

    /// Admins, its holders and members of the booking's tenant may know it
    /// exists; for everyone else it is "not found".
    pub fn visible_to(&self, principal: &Principal) -> bool {
        principal.is_admin() || self.held_by(principal) || principal.in_tenant(self.tenant_id)
    }

    pub fn authorize(&self, principal: &Principal, need: Need) -> ServiceResult<()> {
        if !self.visible_to(principal) {
            return Err(ServiceError::NotFound("booking"));
        }
        match need {
            Need::OwnerOrAdmin if principal.is_admin() || self.owned_by(principal) => Ok(()),
            Need::OwnerOrAdmin => Err(ServiceError::Forbidden("only the booking's owner or an admin may do this")),
            Need::Admin if principal.is_admin() => Ok(()),
            Need::Admin => Err(ServiceError::Forbidden("only admins approve or reject bookings")),
        }
    }

    /// The owner, co-owners and admins see everything; others see occupancy only.
    pub fn view_for(self, principal: &Principal) -> Booking {
        let mine = self.held_by(principal);
        let co_owned = !self.owned_by(principal) && mine;
        let full = mine || principal.is_admin();
        self.view(mine, co_owned, full)
    }

    /// Only what occupies capacity: no one's name, tenant, image or note.
    pub fn occupancy(self) -> Booking {
        self.view(false, false, false)
    }

    fn view(self, mine: bool, co_owned: bool, full: bool) -> Booking {
        let state = self.state();
        let co_owners = match full {
            true => self.co_owners.0.into_iter().map(|c| CoOwner { email: c.email, name: c.name }).collect(),
            false => Vec::new(),
        };
        Booking {
            id: if full { self.id } else { occupancy_id(self.id) },
            pool_id: self.pool_id,
            kind: self.kind,
            quantity: self.quantity,
            mode: self.mode,
            state,
            start: self.starts_at,
            end: self.ends_at,
            mine,
            user_email: full.then_some(self.user_email),
            user_name: full.then_some(self.user_name),
            tenant: full.then_some(self.tenant_slug),
            image: full.then_some(self.image),
            note: full.then_some(self.note),
            created_at: self.created_at,
            extends: full.then_some(self.extends_id).flatten(),
            co_owners,
            co_owned,
            series: full.then_some(self.series_id).flatten(),
            warning: None,
        }
    }
}

/// The id an occupancy entry carries instead of the booking's: stable (the
/// same booking is the same entry on every poll) but one-way. A booking's id
/// names its session's namespace and so its workspace host
/// (`berth-<tenant>-<first 8 hex>.<domain>`): shown to people who do not
/// hold the booking, it told a neighbour where to aim.
pub fn occupancy_id(id: Uuid) -> Uuid {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new().chain_update(b"berth occupancy entry:").chain_update(id.as_bytes()).finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}
