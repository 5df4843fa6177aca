//! The approval queue as admins read it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    pub id: Uuid,
    /// Set for an extension request: the booking it would lengthen.
    pub extends: Option<Uuid>,
    pub user_name: String,
    pub user_email: String,
    pub tenant: String,
    pub pool: String,
    pub kind: String,
    pub quantity: i32,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub requested_at: DateTime<Utc>,
    pub capacity: i32,
    /// The kind's busiest moment in the window, without and with this request.
    pub peak_without: i32,
    pub peak_with: i32,
    pub note: String,
}

/// What happened to one booking of a batch decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub id: Uuid,
    pub ok: bool,
    pub message: String,
}
