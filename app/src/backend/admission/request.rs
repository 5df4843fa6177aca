//! A booking request as admission, its terms and its suggestions read it.

use crate::backend::provenance::Provenance;
use crate::model::{Mode, Principal, TenantRef, Window};
use uuid::Uuid;

/// A booking request that passed the database-free checks.
pub struct Request {
    pub principal: Principal,
    pub tenant: TenantRef,
    pub pool_id: Uuid,
    pub kind: String,
    pub quantity: i32,
    pub mode: Mode,
    pub image: Option<String>,
    pub note: String,
    pub window: Window,
    /// Refused for capacity or quota, join the waitlist instead.
    pub join_waitlist: bool,
    /// The waitlist entry this request promotes, if it is one.
    pub entry: Option<Uuid>,
    /// The token and client it was asked through: a batch is written by
    /// whichever request leads it, so each carries its own.
    pub provenance: Provenance,
}
