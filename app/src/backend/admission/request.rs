//! A booking request as admission, its terms and its suggestions read it.

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
}
